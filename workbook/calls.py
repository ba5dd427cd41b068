"""What one call cost: the one way the workbench measures a call, for every lesson and tool.

:func:`measure_call` runs a call once and returns its :class:`Work`: round trips, reply bytes and
documents returned (pymongo command monitoring, :mod:`workbook.monitor`), its latency (a monotonic
clock around the call), and, given the database, the keys and documents its reads examined
(explain of every command it sent, run after the call and outside its counts and its latency).
Counts other than latency do not depend on the engine's speed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pymongo.database import Database

from workbook.explaining.work import work_examined
from workbook.monitor import capture


@dataclass
class Work:
    """The work behind one call, and what it returned.

    Its repr shows the round trips, the commands and the result (what a notebook prints beside a
    claim); :meth:`row` has every engine-independent count.
    """

    round_trips: int
    bytes_returned: int = field(repr=False)
    docs_returned: int = field(repr=False)
    keys_examined: float = field(repr=False)
    """From explain; NaN when the call was not explained (no database given) or a read could not be."""
    docs_examined: float = field(repr=False)
    """From explain; NaN when the call was not explained (no database given) or a read could not be."""
    latency_ms: float = field(repr=False)
    """The call's wall time, less what the workbench's own command listener spent inside it (counting replies)."""
    commands: list[str] = field(default_factory=list)
    """The names of the commands the call sent, in order (``find``, ``commitTransaction``...)."""
    sent: list[dict[str, Any]] = field(default_factory=list, repr=False)
    """The commands themselves, as :class:`workbook.monitor.Captured` records them (for explaining later)."""
    result: Any = None
    document_bytes: int = field(default=0, repr=False)
    """The BSON size of the documents returned, without the replies around them."""

    @property
    def transactions(self) -> int:
        """How many transactions the call committed."""
        return self.commands.count("commitTransaction")

    def labelled(self) -> dict[str, Any]:
        """What a notebook shows of a call, by label: its round trips, its commands and its result."""
        return {"round trips": self.round_trips, "commands": ", ".join(self.commands), "result": self.result}

    def record(self) -> Any:
        """The call shown as a :class:`workbook.display.Record` (a labelled table, not a dataclass repr)."""
        from workbook.display import record

        return record(self.labelled(), caption="What one experiment sent to the server and got back")

    def __repr__(self) -> str:
        return repr(self.record())

    def _repr_html_(self) -> str:
        return str(self.record()._repr_html_())

    def row(self) -> dict[str, Any]:
        """The engine-independent counts as a dict (no result, no latency): one row of a comparison table."""
        return {
            "round_trips": self.round_trips,
            "docs_examined": self.docs_examined,
            "keys_examined": self.keys_examined,
            "docs_returned": self.docs_returned,
            "bytes_returned": self.bytes_returned,
        }


def measure_call(db: Database | None, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Work:
    """Run ``call(*args, **kwargs)`` once and count its work; with ``db``, explain its reads there too.

    ``db=None`` skips explain (keys and documents examined stay NaN): for calls whose reads do not
    matter (writes, transactions) or that are explained later from :attr:`Work.sent`. The latency is the
    call's less the time the workbench's own command listener spent inside it (:attr:`Captured.listener_ns`).
    """
    with capture() as captured:
        started = time.perf_counter_ns()
        result = call(*args, **kwargs)
        elapsed = time.perf_counter_ns() - started
    examined = (
        work_examined(db, captured.commands)
        if db is not None
        else {"keys_examined": math.nan, "docs_examined": math.nan}
    )
    return Work(
        round_trips=captured.round_trips,
        bytes_returned=captured.bytes_returned,
        docs_returned=captured.docs_returned,
        keys_examined=examined["keys_examined"],
        docs_examined=examined["docs_examined"],
        latency_ms=(elapsed - captured.listener_ns) / 1e6,  # the call, less the instrument counting its replies
        commands=[command["name"] for command in captured.commands],
        sent=captured.commands,
        result=result,
        document_bytes=captured.document_bytes,
    )

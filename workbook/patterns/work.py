"""What one call cost: round trips, bytes and documents returned (command monitoring), and keys and
documents examined (explain of every read the call sent). Engine-independent, unlike latency."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from pymongo.database import Database

from workbook.explaining import explain
from workbook.explaining.work import work_examined
from workbook.monitor import capture


@dataclass
class Work:
    """The work behind one call, and what it returned."""

    round_trips: int
    bytes_returned: int
    docs_returned: int
    keys_examined: float
    docs_examined: float
    commands: list[str] = field(default_factory=list)
    result: Any = None
    document_bytes: int = 0
    """The BSON size of the documents returned, without the replies around them."""

    def row(self) -> dict[str, Any]:
        """The counts as a dict (no result): one row of a comparison table."""
        return {
            "round_trips": self.round_trips,
            "docs_examined": self.docs_examined,
            "keys_examined": self.keys_examined,
            "docs_returned": self.docs_returned,
            "bytes_returned": self.bytes_returned,
        }


def measure_call(db: Database, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Work:
    """Run ``call(*args, **kwargs)`` once and count its work (explain runs after it, outside the count)."""
    with capture() as sent:
        result = call(*args, **kwargs)
    examined = work_examined(db, sent.commands)
    return Work(
        sent.round_trips,
        sent.bytes_returned,
        sent.docs_returned,
        examined["keys_examined"],
        examined["docs_examined"],
        [c["name"] for c in sent.commands],
        result,
        sent.document_bytes,
    )


def work_table(rows: dict[str, Work], index_name: str = "shape") -> pd.DataFrame:
    """One row per label (a shape, a layout, a query): the counts of each :class:`Work`."""
    frame = pd.DataFrame([{index_name: label, **work.row()} for label, work in rows.items()])
    return frame.set_index(index_name).convert_dtypes()


def load_steps(description: str, steps: int, progress: bool = True) -> Any:
    """A progress bar over a pattern's load steps (connect, each index, each collection), shown only
    past a second, as ``workbook.load``'s is."""
    from tqdm.auto import tqdm

    return tqdm(total=steps, desc=description, unit="step", delay=1.0, disable=not progress)


def explain_row(collection: Any, query: dict[str, Any]) -> dict[str, Any]:
    """One row of a pattern's explain table: the index its plan used and the work it did, beside the filter."""
    summary = explain(collection, query).summary()
    return {
        "index": summary["index"] or "none (COLLSCAN)",
        "keys_examined": summary["keysExamined"],
        "docs_examined": summary["docsExamined"],
        "returned": summary["nReturned"],
        "filter": str(query),
    }

"""Work counts from the driver's side: round trips, reply bytes and documents returned.

pymongo's command monitoring sees every command a client sends, on real servers and on the
offline default alike (both are reached over the wire protocol). ``COMMANDS`` is registered on
every client :func:`workbook.connect` makes; :func:`capture` records what one block of code sent.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import bson
from pymongo import monitoring

_IGNORED = {"hello", "isMaster", "ismaster", "endSessions", "buildInfo", "buildinfo", "ping"}


@dataclass
class Captured:
    """The commands one block sent, and what came back."""

    commands: list[dict[str, Any]] = field(default_factory=list)
    round_trips: int = 0
    bytes_returned: int = 0
    docs_returned: int = 0
    document_bytes: int = 0
    """The BSON size of the documents the replies carried, without the reply around them (cursor id, namespace)."""
    listener_ns: int = 0
    """Nanoseconds the listener itself spent inside the block (copying commands, sizing replies): the
    instrument's cost, not the server's or the driver's, which :func:`workbook.calls.measure_call` takes out
    of the latency it records (encoding a product page's reply to count its bytes took 30-40 us of a 0.85 ms
    call offline; more, as a share, against a real server's)."""

    def add_reply(self, reply: dict[str, Any]) -> None:
        """Count one reply: its BSON size and the documents it carried (counted as it arrives: the caller may
        change the documents afterwards)."""
        size, docs, document_bytes = reply_sizes(reply)
        self.round_trips += 1
        self.bytes_returned += size
        self.docs_returned += docs
        self.document_bytes += document_bytes
        if self.commands:  # a thread's commands and replies alternate: this reply answers the last command
            self.commands[-1].update(reply_bytes=size, reply_docs=docs)


def reply_sizes(reply: dict[str, Any]) -> tuple[int, int, int]:
    """(the reply's BSON size, the documents it carried, their BSON size), each document encoded once.

    The listener runs inside the calls ``run_workload`` times; encoding the whole reply and then each document
    again took 15 of its 39 microseconds a product page. Here each document is encoded alone and the reply
    around them without them, and the sizes are added as BSON lays them out: in an array, a type byte, the
    index as a C string, then the document; in place of a null, the document less the null's nothing.
    """
    cursor = reply.get("cursor")
    if isinstance(cursor, dict):
        name = "firstBatch" if "firstBatch" in cursor else "nextBatch"
        batch = cursor.get(name)
        if isinstance(batch, list) and all(isinstance(d, dict) for d in batch):
            sizes = [len(bson.encode(d)) for d in batch]
            envelope = len(bson.encode({**reply, "cursor": {**cursor, name: []}}))
            laid_out = sum(1 + len(str(i)) + 1 + size for i, size in enumerate(sizes))
            return envelope + laid_out, len(batch), sum(sizes)
        carried = [d for d in batch or [] if isinstance(d, dict)] if isinstance(batch, list) else []
        return len(bson.encode(reply)), len(batch or []), sum(len(bson.encode(d)) for d in carried)
    value = reply.get("value")
    if isinstance(value, dict):  # findAndModify: the document in place of a null
        size = len(bson.encode(value))
        return len(bson.encode({**reply, "value": None})) + size, 1, size
    return len(bson.encode(reply)), 0, 0


class CommandLog(monitoring.CommandListener):
    """Records commands and replies for threads inside :func:`capture`."""

    def __init__(self) -> None:
        self._local = threading.local()

    def current(self) -> Captured | None:
        """What this thread's innermost :meth:`capture` block has recorded so far (None outside one)."""
        return getattr(self._local, "captured", None)

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        captured = self.current()
        if captured is not None and event.command_name not in _IGNORED:
            began = time.perf_counter_ns()
            command = {
                k: v
                for k, v in event.command.items()
                if k not in ("lsid", "$clusterTime", "$readPreference", "txnNumber")
            }
            captured.commands.append({"database": event.database_name, "name": event.command_name, "command": command})
            captured.listener_ns += time.perf_counter_ns() - began

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        captured = self.current()
        if captured is not None and event.command_name not in _IGNORED:
            began = time.perf_counter_ns()
            captured.add_reply(dict(event.reply))
            captured.listener_ns += time.perf_counter_ns() - began

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        captured = self.current()
        if captured is not None and event.command_name not in _IGNORED:
            captured.round_trips += 1

    @contextmanager
    def capture(self) -> Iterator[Captured]:
        """Record what this thread sends inside the block (a block inside another records its own commands; its
        listener time counts in the outer block's too, as it passed inside the outer block's calls)."""
        previous = self.current()
        self._local.captured = captured = Captured()
        try:
            yield captured
        finally:
            self._local.captured = previous
            if previous is not None:
                previous.listener_ns += captured.listener_ns


COMMANDS = CommandLog()
"""The one listener every workbench client carries."""


def capture() -> Any:
    """``with capture() as work:`` records round trips, reply bytes and commands of the block."""
    return COMMANDS.capture()

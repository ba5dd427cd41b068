"""Work counts from the driver's side: round trips, reply bytes and documents returned.

pymongo's command monitoring sees every command a client sends, on real servers and on the
offline default alike (both are reached over the wire protocol). ``COMMANDS`` is registered on
every client :func:`workbook.connect` makes; :func:`capture` records what one block of code sent.
"""

from __future__ import annotations

import threading
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

    def add_reply(self, reply: dict[str, Any]) -> None:
        """Count one reply: its BSON size and the documents it carried."""
        self.round_trips += 1
        self.bytes_returned += len(bson.encode(reply))
        cursor = reply.get("cursor")
        if isinstance(cursor, dict):
            self.docs_returned += len(cursor.get("firstBatch", cursor.get("nextBatch")) or [])
        elif isinstance(reply.get("value"), dict):  # findAndModify
            self.docs_returned += 1


_WRITES = {
    "insert",
    "update",
    "delete",
    "findAndModify",
    "create",
    "drop",
    "createIndexes",
    "dropIndexes",
    "collMod",
    "renameCollection",
}
_EVERYTHING = {"commitTransaction", "abortTransaction", "dropDatabase", "bulkWrite", "applyOps"}


class Generations:
    """A counter per collection that moves whenever a workbench client writes to it.

    Caches of a collection's contents (the planner model's) compare counters to know they are stale.
    Commands that may change anything (a commit, dropDatabase) move a global epoch instead.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._epoch = 0
        self._counts: dict[tuple[str, str], int] = {}

    def bump(self, database: str, collection: str | None = None) -> None:
        """Record a write to ``database.collection`` (to everything when ``collection`` is None)."""
        with self._lock:
            if collection is None:
                self._epoch += 1
            else:
                key = (database, collection)
                self._counts[key] = self._counts.get(key, 0) + 1

    def stamp(self, database: str, collection: str) -> tuple[int, int]:
        """The current (epoch, counter) of a collection."""
        with self._lock:
            return self._epoch, self._counts.get((database, collection), 0)

    def note(self, database: str, name: str, command: Any) -> None:
        """Bump whatever ``command`` may write."""
        if name in _EVERYTHING:
            self.bump(database)
        elif name in _WRITES:
            self.bump(database, str(command.get(name, "")))
        elif name == "aggregate":
            last = (command.get("pipeline") or [{}])[-1]
            target = last.get("$merge", last.get("$out"))
            if target is not None:
                self.bump(database)  # the target may be named in several forms: treat as anything


GENERATIONS = Generations()


class CommandLog(monitoring.CommandListener):
    """Records commands and replies for threads inside :func:`capture`; tracks writes for everyone."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._pending: dict[int, tuple[str, str, Any]] = {}

    def _current(self) -> Captured | None:
        return getattr(self._local, "captured", None)

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        if event.command_name in _WRITES or event.command_name in _EVERYTHING or event.command_name == "aggregate":
            GENERATIONS.note(event.database_name, event.command_name, event.command)
            self._pending[event.request_id] = (event.database_name, event.command_name, event.command)
        captured = self._current()
        if captured is not None and event.command_name not in _IGNORED:
            command = {
                k: v
                for k, v in event.command.items()
                if k not in ("lsid", "$clusterTime", "$readPreference", "txnNumber")
            }
            captured.commands.append({"database": event.database_name, "name": event.command_name, "command": command})

    def _finished(self, request_id: int) -> None:
        pending = self._pending.pop(request_id, None)
        if pending is not None:  # again at the end: a snapshot taken mid-command must not outlive it
            GENERATIONS.note(*pending)

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        self._finished(event.request_id)
        captured = self._current()
        if captured is not None and event.command_name not in _IGNORED:
            captured.add_reply(dict(event.reply))

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        self._finished(event.request_id)
        captured = self._current()
        if captured is not None and event.command_name not in _IGNORED:
            captured.round_trips += 1

    @contextmanager
    def capture(self) -> Iterator[Captured]:
        """Record what this thread sends inside the block."""
        previous = self._current()
        self._local.captured = captured = Captured()
        try:
            yield captured
        finally:
            self._local.captured = previous


COMMANDS = CommandLog()
"""The one listener every workbench client carries."""


def capture() -> Any:
    """``with capture() as work:`` records round trips, reply bytes and commands of the block."""
    return COMMANDS.capture()

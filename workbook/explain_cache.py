"""The planner model's cache: one model per collection, kept until anything may have changed it.

The offline server counts every write it executes, whichever client sent it (:class:`WriteCounter`);
a cached model is stamped with the counter, the index list and the collection options it was built
from, and is rebuilt as soon as any of them moves (:class:`ModelCache`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import Any

READS = frozenset(
    {
        "find",
        "getMore",
        "count",
        "distinct",
        "listIndexes",
        "listCollections",
        "listDatabases",
        "explain",
        "killCursors",
        "hello",
        "isMaster",
        "ismaster",
        "ping",
        "buildInfo",
        "buildinfo",
        "endSessions",
        "startSession",
        "serverStatus",
        "dbStats",
        "collStats",
        "connectionStatus",
        "getParameter",
        "getCmdLineOpts",
        "hostInfo",
        "whatsmyuri",
        "saslStart",
        "saslContinue",
        "getLog",
        "currentOp",
        "refreshSessions",
    }
)
"""Commands that change no data (an aggregate is a read unless it ends in $out or $merge)."""

COLLECTION_WRITES = frozenset(
    {"insert", "update", "delete", "findAndModify", "create", "drop", "createIndexes", "dropIndexes", "collMod"}
)
"""Writes whose command value names the one collection they change."""


class WriteCounter:
    """A counter per collection that moves with every write, and an epoch for writes that may touch
    anything (a commit, dropDatabase, renameCollection, an unknown command). Thread-safe."""

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
        """The current (epoch, count) of a collection."""
        with self._lock:
            return self._epoch, self._counts.get((database, collection), 0)

    def note(self, database: str, command: Mapping[str, Any]) -> None:
        """Bump whatever ``command`` (a command document, its name first) may write.

        Called before and after the command runs, so a model read while it runs is never kept.
        """
        name = next(iter(command), None)
        if name is None or name in READS:
            return
        if name == "aggregate":
            last = (command.get("pipeline") or [{}])[-1]
            if isinstance(last, Mapping) and ("$out" in last or "$merge" in last):
                self.bump(database)
            return
        target = command.get(name)
        if name in COLLECTION_WRITES and isinstance(target, str):
            self.bump(database, target)
        else:
            self.bump(database)


class ModelCache[Value]:
    """The most recently used models, each valid while its stamp is unchanged. Thread-safe."""

    def __init__(self, size: int = 16) -> None:
        self._lock = threading.Lock()
        self._size = size
        self._entries: OrderedDict[Hashable, tuple[Hashable, Value]] = OrderedDict()

    def get(self, key: Hashable, stamp: Hashable) -> Value | None:
        """The model cached under ``key`` if it was built at ``stamp``, else None."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] != stamp:
                return None
            self._entries.move_to_end(key)
            return entry[1]

    def latest(self, key: Hashable) -> Value | None:
        """The model last cached under ``key`` whatever its stamp (a base for an incremental rebuild)."""
        with self._lock:
            entry = self._entries.get(key)
            return None if entry is None else entry[1]

    def put(self, key: Hashable, stamp: Hashable, value: Value) -> None:
        """Keep ``value`` as the model of ``key`` at ``stamp`` (the oldest entry goes when full)."""
        with self._lock:
            self._entries[key] = (stamp, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)

    def forget(self, keep: Callable[[Hashable], bool]) -> None:
        """Drop every entry whose key ``keep`` says False for (a dropped collection's models)."""
        with self._lock:
            for key in [key for key in self._entries if not keep(key)]:
                del self._entries[key]

    def __len__(self) -> int:
        return len(self._entries)

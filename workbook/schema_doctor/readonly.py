"""The only way the doctor touches a database: a handle that can read and cannot write.

Everything the doctor sends, its own checks and the workload's operations alike, goes through
:class:`ReadOnlyDatabase`. It forwards reads (``find``, ``aggregate`` without ``$out``/``$merge``,
counts, index listings, and an allow-list of read-only commands) and raises on anything else,
before a byte reaches the server. A :class:`Budget` bounds the whole run in time.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from pymongo.collection import Collection
from pymongo.command_cursor import CommandCursor
from pymongo.cursor import Cursor
from pymongo.database import Database

from workbook.errors import DoctorOutOfTime as OutOfTime
from workbook.errors import ReadOnlyViolation, WorkbookError

__all__ = ["READ_COMMANDS", "Budget", "OutOfTime", "ReadOnlyCollection", "ReadOnlyDatabase", "ReadOnlyViolation"]

READ_COMMANDS = frozenset({"collStats", "dbStats", "listCollections", "listIndexes", "buildInfo", "hello", "ping"})
"""Database commands the doctor may send: each only reads (MongoDB docs, "Database Commands")."""

_WRITING_STAGES = ("$out", "$merge")


class Budget:
    """A deadline for the whole run."""

    def __init__(self, seconds: float) -> None:
        if not seconds > 0:
            raise WorkbookError(f"time_limit must be a positive number of seconds (got {seconds!r}).", fix="e.g. 60")
        self.seconds = seconds
        self.started = time.monotonic()
        self.deadline = self.started + seconds

    def remaining(self) -> float:
        """Seconds left (never negative)."""
        return max(0.0, self.deadline - time.monotonic())

    def elapsed(self) -> float:
        """Seconds since the run started."""
        return time.monotonic() - self.started

    def check(self) -> None:
        """Raise :class:`OutOfTime` once the deadline has passed."""
        if self.remaining() <= 0:
            raise OutOfTime

    def max_time_ms(self) -> int:
        """The server-side limit for the next command: what is left of the budget."""
        self.check()
        return max(1, int(self.remaining() * 1000))


def _refuse(what: str) -> ReadOnlyViolation:
    return ReadOnlyViolation(
        f"The schema doctor is read-only: {what} would write, so it was not sent.",
        fix="Run only read operations under the doctor (a workload's writes are skipped).",
    )


class ReadOnlyCollection:
    """The read methods of a pymongo ``Collection``, each bounded by the budget."""

    def __init__(self, collection: Collection[Any], budget: Budget) -> None:
        self._collection = collection
        self._budget = budget

    @property
    def name(self) -> str:
        """The collection's name."""
        return self._collection.name

    @property
    def full_name(self) -> str:
        """``database.collection``."""
        return self._collection.full_name

    def find(self, *args: Any, **kwargs: Any) -> Cursor[Any]:
        """``Collection.find`` with the budget as ``max_time_ms``."""
        kwargs.setdefault("max_time_ms", self._budget.max_time_ms())
        return self._collection.find(*args, **kwargs)

    def find_one(self, *args: Any, **kwargs: Any) -> Any:
        """``Collection.find_one`` with the budget as ``max_time_ms``."""
        kwargs.setdefault("max_time_ms", self._budget.max_time_ms())
        return self._collection.find_one(*args, **kwargs)

    def aggregate(self, pipeline: Iterable[Mapping[str, Any]], *args: Any, **kwargs: Any) -> CommandCursor[Any]:
        """``Collection.aggregate``, refusing ``$out`` and ``$merge``."""
        stages = list(pipeline)
        for stage in stages:
            for writing in _WRITING_STAGES:
                if writing in stage:
                    raise _refuse(f"an aggregation with {writing} on {self.full_name}")
        kwargs.setdefault("maxTimeMS", self._budget.max_time_ms())
        return self._collection.aggregate(stages, *args, **kwargs)

    def count_documents(self, *args: Any, **kwargs: Any) -> int:
        """``Collection.count_documents`` with the budget as ``maxTimeMS``."""
        kwargs.setdefault("maxTimeMS", self._budget.max_time_ms())
        return self._collection.count_documents(*args, **kwargs)

    def estimated_document_count(self) -> int:
        """``Collection.estimated_document_count`` (metadata, no scan)."""
        return self._collection.estimated_document_count(maxTimeMS=self._budget.max_time_ms())

    def list_indexes(self) -> list[dict[str, Any]]:
        """The collection's index specifications."""
        self._budget.check()
        return [dict(spec) for spec in self._collection.list_indexes()]

    def index_information(self) -> dict[str, Any]:
        """``Collection.index_information``."""
        self._budget.check()
        return dict(self._collection.index_information())

    def __getattr__(self, name: str) -> Any:
        raise _refuse(f"{self.full_name}.{name}()")

    def __getitem__(self, name: str) -> Any:
        raise _refuse(f"a sub-collection {self.full_name}.{name}")


class ReadOnlyDatabase:
    """The read side of a pymongo ``Database``: collections, listings and read-only commands."""

    writes_refused = True
    """Every write is refused here, so code that writes (the operations) may read any database through it."""

    def __init__(self, db: Database[Any], budget: Budget) -> None:
        self._db = db
        self._budget = budget

    @property
    def name(self) -> str:
        """The database's name."""
        return self._db.name

    def __getitem__(self, name: str) -> ReadOnlyCollection:
        return ReadOnlyCollection(self._db[name], self._budget)

    def __getattr__(self, name: str) -> ReadOnlyCollection:
        if name.startswith("_"):
            raise AttributeError(name)
        return self[name]

    def get_collection(self, name: str) -> ReadOnlyCollection:
        """The collection called ``name``."""
        return self[name]

    def list_collection_names(self) -> list[str]:
        """Names of the database's collections and views."""
        self._budget.check()
        return self._db.list_collection_names(maxTimeMS=self._budget.max_time_ms())

    def list_collections(self) -> list[dict[str, Any]]:
        """The database's collection descriptions (type, options such as validators)."""
        self._budget.check()
        return [dict(c) for c in self._db.list_collections(maxTimeMS=self._budget.max_time_ms())]

    def command(self, name: str, value: Any = 1, **kwargs: Any) -> dict[str, Any]:
        """Run one of :data:`READ_COMMANDS`; anything else is refused."""
        if name not in READ_COMMANDS:
            raise _refuse(f"the {name!r} command")
        kwargs.setdefault("maxTimeMS", self._budget.max_time_ms())
        return dict(self._db.command(name, value, **kwargs))

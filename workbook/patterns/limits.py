"""MongoDB's hard limits (lesson 05), each hit live: the last write that fits, then the one that fails.

Every demo works in a scratch collection of the database it is given (one of the learner's own),
drops it afterwards, and returns the server's own error: its code and message. On the offline
default the same codes and messages come from :mod:`workbook.offline_limits` (mongoeco 4.11.0 does
not enforce these limits itself).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd
from bson import Binary
from pymongo.database import Database
from pymongo.errors import OperationFailure

from workbook.errors import UnknownChoiceError, WorkbookError
from workbook.facts import (
    MAX_BSON_SIZE,
    MAX_COMPOUND_INDEX_FIELDS,
    MAX_INDEXES_PER_COLLECTION,
    MAX_NESTING_DEPTH,
    TIMESERIES_MEASUREMENT_MB,
)
from workbook.namespace import require_own_database

MIB = 1024 * 1024


@dataclass(frozen=True)
class LimitHit:
    """One limit, what still fitted, what failed, and the server's error."""

    limit: str
    value: str
    fitted: str
    failed: str
    code: int | None
    message: str


def nested(depth: int) -> dict[str, Any]:
    """A document ``depth`` levels deep (the document itself is level 1): ``{"a": {"a": ...}}``.

    >>> nested(3)
    {'a': {'a': {}}}
    """
    document: dict[str, Any] = {}
    for _ in range(depth - 1):
        document = {"a": document}
    return document


def _failure(action: Callable[[], Any]) -> OperationFailure:
    try:
        action()
    except OperationFailure as error:
        return error
    raise WorkbookError("The server accepted a write over a hard limit.", fix="Report this: the engine misses a limit.")


def _message(error: OperationFailure) -> str:
    details = error.details or {}
    return str(details.get("errmsg") or error).split(", full error")[0]


def document_size(db: Database) -> LimitHit:
    """Grow one document by 1 MiB per ``$push`` until an update would take it past 16 MiB."""
    scratch = db["limit_document_size"]
    scratch.drop()
    scratch.insert_one({"_id": "grows", "chunks": []})
    chunk = Binary(b"\0" * MIB)
    pushes = 0
    while pushes < 20:
        try:
            scratch.update_one({"_id": "grows"}, {"$push": {"chunks": chunk}})
        except OperationFailure as error:
            size = next(scratch.aggregate([{"$project": {"b": {"$bsonSize": "$$ROOT"}}}]))["b"]
            scratch.drop()
            return LimitHit(
                "document size",
                f"{MAX_BSON_SIZE:,} bytes (16 MiB)",
                f"{pushes} pushes of 1 MiB: {size:,} bytes",
                f"push number {pushes + 1}",
                error.code,
                _message(error),
            )
        pushes += 1
    scratch.drop()
    raise WorkbookError("A document grew past 16 MiB without an error.", fix="Report this: the engine misses a limit.")


def nesting_depth(db: Database) -> LimitHit:
    """Insert a document 100 levels deep, then one 101 levels deep."""
    scratch = db["limit_nesting"]
    scratch.drop()
    scratch.insert_one(nested(MAX_NESTING_DEPTH))
    error = _failure(lambda: scratch.insert_one(nested(MAX_NESTING_DEPTH + 1)))
    scratch.drop()
    return LimitHit(
        "nesting depth",
        f"{MAX_NESTING_DEPTH} levels",
        f"{MAX_NESTING_DEPTH} levels",
        f"{MAX_NESTING_DEPTH + 1} levels",
        error.code,
        _message(error),
    )


def indexes_per_collection(db: Database) -> LimitHit:
    """Create indexes until the collection has 64 (``_id`` included), then one more."""
    scratch = db["limit_indexes"]
    scratch.drop()
    scratch.insert_one({"_id": 1})
    for number in range(MAX_INDEXES_PER_COLLECTION - 1):
        scratch.create_index([(f"field{number}", 1)])
    count = len(list(scratch.list_indexes()))
    error = _failure(lambda: scratch.create_index([("onemore", 1)]))
    scratch.drop()
    return LimitHit(
        "indexes per collection",
        f"{MAX_INDEXES_PER_COLLECTION} (_id included)",
        f"{count} indexes",
        f"index number {count + 1}",
        error.code,
        _message(error).replace(db.name, "<your database>"),  # the same table for every learner
    )


def compound_index_fields(db: Database) -> LimitHit:
    """Create a compound index on 32 fields, then one on 33."""
    scratch = db["limit_compound"]
    scratch.drop()
    scratch.create_index([(f"a{n}", 1) for n in range(MAX_COMPOUND_INDEX_FIELDS)])
    error = _failure(lambda: scratch.create_index([(f"b{n}", 1) for n in range(MAX_COMPOUND_INDEX_FIELDS + 1)]))
    scratch.drop()
    return LimitHit(
        "fields in a compound index",
        f"{MAX_COMPOUND_INDEX_FIELDS}",
        f"{MAX_COMPOUND_INDEX_FIELDS} fields",
        f"{MAX_COMPOUND_INDEX_FIELDS + 1} fields",
        error.code,
        _message(error),
    )


def parallel_arrays(db: Database) -> LimitHit:
    """Index two array fields of one document together (``{tags: 1, sizes: 1}``)."""
    scratch = db["limit_parallel"]
    scratch.drop()
    scratch.insert_one({"_id": 1, "tags": ["red", "blue"], "sizes": ["S", "M"]})
    scratch.create_index([("tags", 1)])  # one array per index is fine: a multikey index
    error = _failure(lambda: scratch.create_index([("tags", 1), ("sizes", 1)]))
    scratch.drop()
    return LimitHit(
        "arrays in one compound index",
        "1 per document",
        "{tags: 1} (multikey)",
        "{tags: 1, sizes: 1}",
        error.code,
        _message(error),
    )


LIMITS: dict[str, Callable[[Database], LimitHit]] = {
    "document size": document_size,
    "nesting depth": nesting_depth,
    "indexes per collection": indexes_per_collection,
    "fields in a compound index": compound_index_fields,
    "arrays in one compound index": parallel_arrays,
}


def hit(db: Database, limit: str) -> LimitHit:
    """Hit one limit (a key of :data:`LIMITS`) in ``db`` and return what the server said."""
    require_own_database(db.name)
    if limit not in LIMITS:
        raise UnknownChoiceError("limit", limit, LIMITS)
    return LIMITS[limit](db)


def limit_table(db: Database) -> pd.DataFrame:
    """Every limit hit in turn: what fitted, what failed, and the server's error code and message."""
    return pd.DataFrame([asdict(hit(db, name)) for name in LIMITS]).set_index("limit")


@dataclass(frozen=True)
class TimeSeriesCheck:
    """A time-series collection made on this engine, and what it did with a measurement over 4 MB."""

    listed_type: str
    small_stored: bool
    big_megabytes: float
    big_code: int | None
    big_stored: bool

    @property
    def enforced(self) -> bool:
        """True when the engine refused the measurement over the limit, as MongoDB does."""
        return not self.big_stored

    def record(self) -> Any:
        """The check as labelled values."""
        from workbook.display import record

        refused = f"refused (code {self.big_code})" if self.big_code is not None else "refused"
        big = refused if self.enforced else "stored (not enforced here)"
        return record(
            {
                "listCollections type": self.listed_type,
                "a 1 MB measurement": "stored" if self.small_stored else "refused",
                f"a {self.big_megabytes:.1f} MB measurement": big,
                "MongoDB's limit per measurement": f"{TIMESERIES_MEASUREMENT_MB} MB",
            },
            caption="a time-series collection of sensor readings",
        )

    def __repr__(self) -> str:
        return repr(self.record())

    def _repr_html_(self) -> str:
        return str(self.record()._repr_html_())


def timeseries_measurement(db: Database, *, name: str = "readings") -> TimeSeriesCheck:
    """Create a time-series collection ``name`` (timeField ``at``, metaField ``sensor``) and insert a 1 MB
    measurement and one over :data:`TIMESERIES_MEASUREMENT_MB`; report what the engine listed and kept.

    MongoDB stores measurements in compressed buckets and refuses a measurement over 4 MB; an engine
    without time-series collections lists an ordinary collection and stores both. Dropped afterwards.
    """
    from datetime import UTC, datetime

    require_own_database(db.name)
    db.drop_collection(name)
    db.create_collection(name, timeseries={"timeField": "at", "metaField": "sensor", "granularity": "seconds"})
    try:
        listed = db.command("listCollections", filter={"name": name})["cursor"]["firstBatch"]
        kind = str(listed[0].get("type", "collection")) if listed else "missing"
        at = datetime(2025, 1, 1, tzinfo=UTC)
        db[name].insert_one({"at": at, "sensor": "s1", "trace": Binary(b"\0" * MIB)})
        big = int((TIMESERIES_MEASUREMENT_MB + 0.5) * 1_000_000)
        code: int | None = None
        try:
            db[name].insert_one({"at": at, "sensor": "s1", "trace": Binary(b"\0" * big)})
        except OperationFailure as error:
            code = error.code
        sizes = sorted(len(d["trace"]) for d in db[name].find({}, {"trace": 1}))
        return TimeSeriesCheck(kind, MIB in sizes, big / 1_000_000, code, big in sizes)
    finally:
        db.drop_collection(name)

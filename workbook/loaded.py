"""A dataset in one shape, living in one database: what ``load()`` returns and every later step takes.

``load()`` returns a :class:`LoadedShape`; ``run_workload``, ``size_table``, ``ops``, the explorer
and the quiz take it (or a list of them, one per shape), so each step uses what the previous one
returned and nobody rebuilds a database name from a convention.

Loads are atomic from the reader's side. Each shape database holds a record of its load in the
``_workbench_load`` collection: written as *loading* (with a lease that the loader renews) before the
first collection is touched, and as *complete* (dataset, scale, seed, shape, per-collection counts
and bytes, package and generator versions) after the last index is built. Readers accept only a
complete record that matches what they were given; a second load into a database that is being
loaded is refused while the first one's lease is alive.
"""

from __future__ import annotations

import math
import os
import socket
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Any

import pandas as pd
from pymongo import ReturnDocument
from pymongo.collection import Collection
from pymongo.database import Database
from pymongo.errors import DuplicateKeyError

from workbook.errors import (
    ArgumentTypeError,
    LoadInProgressError,
    LoadInterruptedError,
    NotLoadedError,
    UnknownChoiceError,
    WorkbookError,
)
from workbook.namespace import learner_database, shape_database_name

if TYPE_CHECKING:
    from workbook.operations.base import Operations
    from workbook.shapes.spec import ShapeSpec
    from workbook.workloads import Workload

MARKER_COLLECTION = "_workbench_load"
"""The collection in every shape database that records its load (one document, ``_id: "load"``)."""

LEASE_SECONDS = 120
"""A load renews its lease at least this often; a lease older than this is an interrupted load.

A lease held by a process on this host that is no longer running is taken over at once (the
record names the holder's host, pid and the pid's start time, so a reused pid is not mistaken
for it); only a holder on another host, whose process cannot be checked, waits out this clock.
"""

_RENEW_EVERY = 10.0
_MARKER_ID = "load"


@dataclass(frozen=True)
class CollectionLoad:
    """What one collection received."""

    collection: str
    documents: int
    bytes: int
    max_bytes: int
    indexes: int

    @property
    def avg_bytes(self) -> float:
        """Average BSON size of a document, in bytes."""
        return self.bytes / self.documents if self.documents else 0.0


@dataclass(frozen=True)
class Rejected:
    """A document that could not be stored, and why."""

    collection: str
    document_id: Any
    bytes: int
    reason: str


@dataclass
class LoadReport:
    """Documents and bytes per collection after :func:`~workbook.load`, and anything that was rejected."""

    dataset: str
    scale: str
    seed: int
    shape: str
    database: str
    engine: str
    seconds: float
    collections: list[CollectionLoad] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    replaced: str | None = None
    """What the database held before, when it was another dataset or shape (``"store/referenced"``)."""

    def to_frame(self) -> pd.DataFrame:
        """One row per collection: documents, total/average/max BSON bytes, indexes."""
        rows = [
            {
                "collection": c.collection,
                "documents": c.documents,
                "bytes": c.bytes,
                "avg_bytes": round(c.avg_bytes, 1),
                "max_bytes": c.max_bytes,
                "indexes": c.indexes,
            }
            for c in self.collections
        ]
        return pd.DataFrame(rows).set_index("collection")

    @property
    def documents(self) -> int:
        """Documents loaded in all collections."""
        return sum(c.documents for c in self.collections)

    def summary(self) -> str:
        """One line: what was loaded where, how much, how fast."""
        megabytes = sum(c.bytes for c in self.collections) / 1e6
        took = "loaded earlier" if math.isnan(self.seconds) else f"in {self.seconds:.1f} s"
        text = (
            f"{self.dataset} ({self.scale}, seed {self.seed}) as {self.shape} into {self.database} on {self.engine}: "
            f"{self.documents:,} documents, {megabytes:.1f} MB of BSON {took}"
        )
        if self.replaced:
            text += f"; replaced {self.replaced}"
        if self.rejected:
            text += f"; {len(self.rejected)} document(s) rejected (over 16 MiB)"
        return text

    def marker(self) -> dict[str, Any]:
        """The completion record written last by a load (no timings: the same load writes the same record)."""
        from workbook import __version__
        from workbook.datasets.registry import GENERATOR_VERSION

        return {
            "_id": _MARKER_ID,
            "state": "complete",
            "dataset": self.dataset,
            "scale": self.scale,
            "seed": self.seed,
            "shape": self.shape,
            "collections": [asdict(c) for c in self.collections],
            "rejected": [asdict(r) for r in self.rejected],
            "workbook": __version__,
            "generator": GENERATOR_VERSION,
            "engine": self.engine,
        }

    @classmethod
    def from_marker(cls, marker: Mapping[str, Any], database: str) -> LoadReport:
        """The report of a finished load, read back from its completion record."""
        return cls(
            marker["dataset"],
            marker["scale"],
            marker["seed"],
            marker["shape"],
            database,
            marker.get("engine", "?"),
            math.nan,
            [CollectionLoad(**c) for c in marker.get("collections", [])],
            [Rejected(**r) for r in marker.get("rejected", [])],
        )

    def __repr__(self) -> str:
        return self.summary() + "\n" + self.to_frame().to_string()

    def _repr_html_(self) -> str:
        rejected = "".join(f"<li>{r.collection} {r.document_id!r}: {r.reason}</li>" for r in self.rejected)
        return f"<p>{self.summary()}</p>{self.to_frame().to_html()}" + (f"<ul>{rejected}</ul>" if rejected else "")


class LoadedShape:
    """A dataset in one shape, living in one database: what ``load()`` returns and the next steps take.

    ``loaded["products"]`` is that collection (a pymongo ``Collection``), ``loaded.ops`` the
    dataset's operations in this shape, ``loaded.db`` the database, ``loaded.report`` the load report.
    """

    def __init__(self, db: Database, report: LoadReport) -> None:
        self.db = db
        self.report = report

    @classmethod
    def open(cls, db: Database, *, expected: tuple[str, str] | None = None) -> LoadedShape:
        """The dataset and shape a finished ``load()`` left in ``db`` (refused if it did not finish).

        ``expected`` (dataset, shape) only makes the error's fix name the right load.
        """
        if not isinstance(db, Database):
            raise ArgumentTypeError("db", db, "a pymongo Database")
        marker = read_marker(db)
        if marker is None:
            dataset, shape = expected or ("store", "hybrid")
            raise NotLoadedError(
                f"Nothing is loaded in {db.name}: it has no record of a finished workbook.load().",
                fix=f"Load it and pass on what load returns: {shape} = workbook.load({dataset!r}, {shape!r}).",
            )
        if marker.get("state") != "complete":
            raise NotLoadedError(_unfinished(db.name, marker), fix=reload_fix(db.name, marker))
        return cls(db, LoadReport.from_marker(marker, db.name))

    @property
    def dataset(self) -> str:
        """The dataset's name: ``"store"``, ``"followers"`` or ``"parts"``."""
        return self.report.dataset

    @property
    def shape(self) -> str:
        """The shape's name: ``"embedded"``, ``"referenced"`` or ``"hybrid"``."""
        return self.report.shape

    @property
    def spec(self) -> ShapeSpec:
        """The shape as declared: collections, indexes, validators."""
        from workbook.dataset_parts import shape_spec

        return shape_spec(self.dataset, self.shape)

    @property
    def collection_names(self) -> list[str]:
        """The shape's collections, in declaration order."""
        return self.spec.collection_names

    def __getitem__(self, collection: str) -> Collection:
        """One of the shape's collections: ``loaded["products"]``."""
        if collection not in self.collection_names:
            raise UnknownChoiceError(
                f"collection of the {self.dataset} {self.shape} shape", collection, self.collection_names
            )
        return self.db[collection]

    @cached_property
    def ops(self) -> Operations:
        """The dataset's operations in this shape, on this database."""
        from workbook.dataset_parts import operations

        return operations(self.dataset, self.shape, self.db)

    @property
    def workload(self) -> Workload:
        """The dataset's workload table."""
        from workbook.dataset_parts import workload

        return workload(self.dataset)

    def check(self) -> LoadedShape:
        """This, after checking the database still holds this finished load; raises NotLoadedError if not."""
        marker = read_marker(self.db)
        expected = (self.dataset, self.shape, self.report.scale, self.report.seed)
        if marker is not None and marker.get("state") == "complete":
            found = (marker["dataset"], marker["shape"], marker["scale"], marker["seed"])
            if found == expected:
                return self
            raise NotLoadedError(
                f"{self.db.name} no longer holds {_what(*expected)}: a later load replaced it with {_what(*found)}.",
                fix=f"Use what that later load returned, or load this again: {_load_call(self.db.name, *expected)}",
            )
        if marker is None:
            what = f"{self.db.name} no longer holds {_what(*expected)}: the database was dropped or reset."
        else:
            what = _unfinished(self.db.name, marker)
        asked = dict(zip(("dataset", "shape", "scale", "seed"), expected, strict=True))
        raise NotLoadedError(what, fix=reload_fix(self.db.name, marker or asked))

    def to_frame(self) -> pd.DataFrame:
        """The load report: one row per collection."""
        return self.report.to_frame()

    def summary(self) -> str:
        """One line: what was loaded where."""
        return self.report.summary()

    def __repr__(self) -> str:
        return repr(self.report)

    def _repr_html_(self) -> str:
        return self.report._repr_html_()


Loadable = LoadedShape | Database | Iterable[LoadedShape | Database] | Mapping[Any, LoadedShape | Database]
"""What steps after ``load()`` accept: one loaded shape, several (a list or a dict), or databases holding them."""

_EXPECTED = "what workbook.load() returned (one loaded shape, or a list or dict of them)"


def loaded_shapes(target: Loadable, *, argument: str = "shapes", one_dataset: bool = True) -> list[LoadedShape]:
    """``target`` as a list of loaded shapes, each checked to still hold a finished load."""
    if isinstance(target, LoadedShape | Database):
        items: list[Any] = [target]
    elif isinstance(target, Mapping):
        items = list(target.values())
    elif isinstance(target, Iterable) and not isinstance(target, str | bytes):
        items = list(target)
    else:
        raise ArgumentTypeError(
            argument,
            target,
            _EXPECTED,
            fix='loaded = [workbook.load(store, shape) for shape in ("embedded", "referenced", "hybrid")], '
            "then pass loaded.",
        )
    shapes = []
    for item in items:
        if isinstance(item, LoadedShape):
            shapes.append(item.check())
        elif isinstance(item, Database):
            shapes.append(LoadedShape.open(item))
        else:
            raise ArgumentTypeError(f"each of {argument}", item, _EXPECTED)
    if not shapes:
        raise WorkbookError(f"{argument} is empty: nothing to measure.", fix="Pass what workbook.load() returned.")
    if one_dataset and len({s.dataset for s in shapes}) > 1:
        raise WorkbookError(
            f"{argument} mixes datasets ({', '.join(sorted({s.dataset for s in shapes}))}); a workload runs on one.",
            fix="Pass the loaded shapes of one dataset.",
        )
    seen: dict[tuple[str, str], str] = {}
    for s in shapes:
        key = (s.dataset, s.shape)
        if key in seen:
            raise WorkbookError(
                f"{argument} holds the {s.dataset} {s.shape} shape twice ({seen[key]} and {s.db.name}).",
                fix="Pass each shape once.",
            )
        seen[key] = s.db.name
    return shapes


def ops(target: LoadedShape | Database) -> Operations:
    """The operations of the dataset and shape in ``target`` (what ``load()`` returned, or its database)."""
    (loaded,) = loaded_shapes(target, argument="target")
    return loaded.ops


def find_loaded(dataset: str, shapes: Iterable[str] | None = None, *, uri: str | None = None) -> list[LoadedShape]:
    """The loaded shapes of ``dataset`` in their default databases (say, loaded in an earlier session)."""
    from workbook.connection import client_for
    from workbook.datasets.registry import check_name
    from workbook.shapes import SHAPE_NAMES, check_shape

    client = client_for(uri)
    names = SHAPE_NAMES if shapes is None else [check_shape(s) for s in shapes]
    return [
        LoadedShape.open(client[shape_database_name(check_name(dataset), shape)], expected=(dataset, shape))
        for shape in names
    ]


# --- the completion record, written by load()


def read_marker(db: Database) -> dict[str, Any] | None:
    """The database's load record, or None if nothing was ever loaded into it."""
    return db[MARKER_COLLECTION].find_one({"_id": _MARKER_ID})


def _process_start(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, from /proc), or None where that is unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[19].decode() if len(fields) > 19 else None


def _process_alive(pid: int, started: str | None) -> bool:
    """Whether process ``pid`` on this host still runs and is the one that started at ``started``."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it runs, as another user
    except OSError:
        return True  # cannot tell: treat it as alive
    now = _process_start(pid)
    return started is None or now is None or now == started  # a different start time: the pid was reused


def _holder_is_dead(holder: Mapping[str, Any]) -> bool:
    """Whether the lease in ``holder`` belongs to a process on this host that no longer runs."""
    pid = holder.get("pid")
    if holder.get("host") != socket.gethostname() or not isinstance(pid, int):
        return False
    return not _process_alive(pid, holder.get("pid_start"))


def _lease_ends(holder: Mapping[str, Any]) -> str:
    """When a lease ends if its holder stops renewing: the last heartbeat plus LEASE_SECONDS, in UTC."""
    heartbeat = holder.get("heartbeat")
    if not isinstance(heartbeat, datetime):
        return f"{LEASE_SECONDS} s after its last renewal"
    if heartbeat.tzinfo is None:
        heartbeat = heartbeat.replace(tzinfo=UTC)
    ends = heartbeat + timedelta(seconds=LEASE_SECONDS)
    left = max(0, math.ceil((ends - datetime.now(UTC)).total_seconds()))
    return f"at {ends:%H:%M:%S} UTC (in {left} s: {LEASE_SECONDS} s after its last renewal, {heartbeat:%H:%M:%S} UTC)"


def begin_load(db: Database, dataset: str, shape: str, scale: str, seed: int) -> tuple[str, dict[str, Any] | None]:
    """Take the database's load lease; returns a token for the later steps and the previous record.

    Refused with LoadInProgressError while another load holds a live lease on the same database;
    a lease whose holder was a process on this host that has died (kill -9) is taken over at once.
    """
    token = uuid.uuid4().hex
    now = datetime.now(UTC)
    host, pid = socket.gethostname(), os.getpid()
    loading = {
        "_id": _MARKER_ID,
        "state": "loading",
        "dataset": dataset,
        "scale": scale,
        "seed": seed,
        "shape": shape,
        "token": token,
        "by": f"{host} pid {pid}",
        "host": host,
        "pid": pid,
        "pid_start": _process_start(pid),
        "heartbeat": now,
    }
    free = {"$or": [{"state": {"$ne": "loading"}}, {"heartbeat": {"$lt": now - timedelta(seconds=LEASE_SECONDS)}}]}
    try:
        previous = db[MARKER_COLLECTION].find_one_and_replace(
            {"_id": _MARKER_ID, **free}, loading, upsert=True, return_document=ReturnDocument.BEFORE
        )
    except DuplicateKeyError:  # the record exists and is not free: another load holds the lease
        holder = read_marker(db) or {}
        if holder.get("token") and _holder_is_dead(holder):  # its process is gone: take the lease over now
            previous = db[MARKER_COLLECTION].find_one_and_replace(
                {"_id": _MARKER_ID, "token": holder["token"]}, loading, return_document=ReturnDocument.BEFORE
            )
            if previous is not None:
                return token, previous
            holder = read_marker(db) or {}  # another load took it over first
        here = holder.get("host") == host
        if here:
            wait = "It runs on this machine; if you stopped it, it gives the lease up as it ends."
        else:
            wait = (
                f"It runs on another machine ({holder.get('host', '?')}), which this one cannot check; if it was "
                f"interrupted, its lease ends {_lease_ends(holder)} and a load may start then."
            )
        raise LoadInProgressError(
            f"Another load is writing {_what(holder.get('dataset'), holder.get('shape'))} into {db.name} "
            f"right now (started by {holder.get('by', '?')}); two loads at once would leave a mix.",
            fix=f"Wait for it to finish and use what it returns. {wait}",
        ) from None
    return token, previous


class Lease:
    """The loader's side of the record: renewed while loading, then completed or given up."""

    def __init__(self, db: Database, token: str) -> None:
        self.db = db
        self.token = token
        self._renewed = time.monotonic()

    def renew(self, *, force: bool = False) -> None:
        """Keep the lease alive (at most every few seconds); raises if another load has taken it over."""
        if not force and time.monotonic() - self._renewed < _RENEW_EVERY:
            return
        result = self.db[MARKER_COLLECTION].update_one(
            {"_id": _MARKER_ID, "token": self.token}, {"$set": {"heartbeat": datetime.now(UTC)}}
        )
        self._renewed = time.monotonic()
        if result.matched_count == 0:
            self._lost()

    def _lost(self) -> None:
        """Raise why the lease is gone: the database was reset or dropped, or another load took it over."""
        holder = read_marker(self.db)
        if holder is None:
            raise LoadInterruptedError(
                f"The database {self.db.name} was dropped while this load was writing it (by workbook.reset() "
                "or a drop_database); the load stopped, and nothing of it stands.",
                fix="If the reset was meant, load again when you need the data: call workbook.load(...) again.",
            )
        raise LoadInProgressError(
            f"This load into {self.db.name} lost its lease to another load ({holder.get('by', '?')}, after this "
            f"one paused for over {LEASE_SECONDS} s or was taken for dead); the other load's data stands.",
            fix="Use what the other load returns, or load again when it has finished.",
        )

    def complete(self, report: LoadReport) -> None:
        """Write the completion record: the last write of a load."""
        result = self.db[MARKER_COLLECTION].replace_one({"_id": _MARKER_ID, "token": self.token}, report.marker())
        if result.matched_count == 0:
            self._lost()

    def give_up(self) -> None:
        """Mark the load as interrupted, so readers refuse it and the next load may start at once."""
        self.db[MARKER_COLLECTION].update_one(
            {"_id": _MARKER_ID, "token": self.token}, {"$set": {"state": "interrupted"}, "$unset": {"heartbeat": ""}}
        )


# --- messages


def _what(dataset: Any, shape: Any, scale: Any = None, seed: Any = None) -> str:
    extra = f" ({scale}, seed {seed})" if scale is not None else ""
    return f"the {dataset} dataset in the {shape} shape{extra}"


def _unfinished(database: str, marker: Mapping[str, Any]) -> str:
    what = _what(marker.get("dataset"), marker.get("shape"))
    if marker.get("state") == "loading":
        return (
            f"The load of {what} into {database} has not finished (it is running, or was interrupted); "
            "its collections may be half built."
        )
    return f"The load of {what} into {database} was interrupted; its collections may be half built."


def _load_call(database: str, dataset: Any, shape: Any, scale: Any, seed: Any) -> str:
    where = ""
    if database != shape_database_name(str(dataset), str(shape)):
        base = learner_database()
        short = database[len(base) + 1 :] if database.startswith(base + "_") else database
        where = f", workbook.connect(database={short!r})"
    return f"workbook.load({dataset!r}, {shape!r}{where}, scale={scale!r}, seed={seed!r})"


def reload_fix(database: str, marker: Mapping[str, Any]) -> str:
    """How to load again what ``marker`` says was (being) loaded into ``database``."""
    call = _load_call(database, marker.get("dataset"), marker.get("shape"), marker.get("scale"), marker.get("seed"))
    return f"Load it again and use what load returns: {call}"

"""What every check shares: the read-only database, the budget, thresholds, and cached reads.

Each collection is read at most once per run (a bounded ``$sample`` unless ``full_scan``), and
every read is announced in the report's notes; a read of a whole collection is announced
through ``say`` before it starts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pymongo.database import Database

from workbook.loaded import MARKER_COLLECTION
from workbook.schema_doctor.families import name_pattern
from workbook.schema_doctor.readonly import Budget, ReadOnlyDatabase
from workbook.schema_doctor.stats import DocumentStat, FieldStat
from workbook.schema_doctor.thresholds import Thresholds

if TYPE_CHECKING:
    from workbook.schema_doctor.memory import MemoryRead


def _field(var: str) -> dict[str, Any]:
    """Name, BSON type, array length and bytes of the ``{k, v}`` pair in ``$$var`` (computed on the server)."""
    return {
        "k": f"$${var}.k",
        "t": {"$type": f"$${var}.v"},
        "n": {"$cond": [{"$isArray": f"$${var}.v"}, {"$size": f"$${var}.v"}, None]},
        "s": {"$bsonSize": {"$arrayToObject": [[f"$${var}"]]}},
    }


FIELD_SUMMARY = {
    "$map": {
        "input": {"$objectToArray": "$$ROOT"},
        "as": "f",
        "in": {
            **_field("f"),
            "sub": {
                "$cond": [
                    {"$eq": [{"$type": "$$f.v"}, "object"]},
                    {"$map": {"input": {"$objectToArray": "$$f.v"}, "as": "g", "in": _field("g")}},
                    None,
                ]
            },
        },
    }
}
"""Per top-level field, and per field of a top-level subdocument: name, type, array length, bytes."""


@dataclass(frozen=True)
class Sample:
    """The documents read from one collection, and how they were chosen."""

    collection: str
    estimated_count: int
    documents: tuple[DocumentStat, ...]
    whole_collection: bool


@dataclass
class Context:
    """Shared state of one doctor run."""

    db: ReadOnlyDatabase
    budget: Budget
    thresholds: Thresholds
    sample_size: int
    full_scan: bool
    say: Callable[[str], None]
    notes: list[str] = field(default_factory=list)
    source: Database[Any] | None = None
    """The database itself, for reading the offline engine's memory (:mod:`~workbook.schema_doctor.memory`)."""
    _collections: list[str] | None = None
    _examined: list[str] | None = None
    _samples: dict[str, Sample] = field(default_factory=dict)
    _stats: dict[str, dict[str, Any]] = field(default_factory=dict)
    _indexes: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    _memory_reads: dict[str, MemoryRead | None] = field(default_factory=dict)

    def collections(self) -> list[str]:
        """The database's collections (not views, ``system.*`` or the workbench's load record), sorted."""
        if self._collections is None:
            self._collections = sorted(
                c["name"]
                for c in self.db.list_collections()
                if c.get("type", "collection") == "collection"
                and not str(c["name"]).startswith("system.")
                and c["name"] != MARKER_COLLECTION
            )
        return self._collections

    def examined(self) -> list[str]:
        """The collections the per-collection checks read: all, but only a few of each big family named alike.

        Of a family (``events_<date>``) with more than ``FAMILY_EXAMINED`` members, that many are read,
        spread evenly by name (``full_scan``: all of them); the notes say how many of each family.
        """
        if self._examined is None:
            from workbook.schema_doctor import thresholds

            names = self.collections()
            families: dict[str, list[str]] = {}
            for name in names:
                pattern = name_pattern(name)
                if pattern is not None:
                    families.setdefault(pattern, []).append(name)
            skipped: set[str] = set()
            limit = thresholds.FAMILY_EXAMINED
            for pattern, members in sorted(families.items()):
                if self.full_scan or len(members) <= limit:
                    continue
                step = (len(members) - 1) / (limit - 1) if limit > 1 else 0
                kept = {members[round(i * step)] for i in range(limit)} if limit else set()
                skipped.update(m for m in members if m not in kept)
                self.notes.append(
                    f"{pattern}: indexes, arrays and documents checked in {len(kept)} of {len(members):,} collections "
                    "named alike, spread from first to last (full_scan=True checks every one)"
                )
            self._examined = [name for name in names if name not in skipped]
        return self._examined

    def stats(self, collection: str) -> dict[str, Any]:
        """A collection's count, size and avgObjSize (``$collStats`` storage statistics: metadata, no scan)."""
        if collection not in self._stats:
            remembered = self._memory(collection)
            if remembered is not None and remembered.whole_collection:  # the same sums, already known
                count, size = remembered.count, remembered.total_bytes
                self._stats[collection] = {"count": count, "size": size, "avgObjSize": size / count if count else 0.0}
                return self._stats[collection]
            # $collStats: the collStats command is deprecated since MongoDB 6.2. One row per shard: add them up.
            rows = [
                r.get("storageStats", {}) for r in self.db[collection].aggregate([{"$collStats": {"storageStats": {}}}])
            ]
            count = sum(int(r.get("count", 0) or 0) for r in rows)
            size = sum(int(r.get("size", 0) or 0) for r in rows)
            self._stats[collection] = {"count": count, "size": size, "avgObjSize": size / count if count else 0.0}
        return self._stats[collection]

    def indexes(self, collection: str) -> list[dict[str, Any]]:
        """The collection's index specifications."""
        if collection not in self._indexes:
            self._indexes[collection] = self.db[collection].list_indexes()
        return self._indexes[collection]

    def sample(self, collection: str) -> Sample:
        """Up to ``sample_size`` documents, summarised per field on the server (``full_scan``: all of them)."""
        if collection in self._samples:
            return self._samples[collection]
        remembered = self._memory(collection)
        if remembered is not None:
            read = len(remembered.documents)
            if remembered.whole_collection:
                self.notes.append(f"{collection}: all {read:,} documents read (from the offline engine's memory)")
            else:
                self.notes.append(
                    f"{collection}: a seeded sample of {read:,} of {remembered.count:,} documents "
                    "(from the offline engine's memory)"
                )
            sample = Sample(collection, remembered.count, remembered.documents, remembered.whole_collection)
            self._samples[collection] = sample
            return sample
        count = self.db[collection].estimated_document_count()
        whole = self.full_scan or count <= self.sample_size
        if whole:
            self.say(f"schema doctor: reading all {count:,} documents of {self.db.name}.{collection}")
            self.notes.append(f"{collection}: all {count:,} documents read")
            pipeline: list[dict[str, Any]] = []
        else:
            self.notes.append(f"{collection}: $sample of {self.sample_size:,} of about {count:,} documents")
            pipeline = [{"$sample": {"size": self.sample_size}}]
        pipeline.append({"$project": {"_id": 1, "size": {"$bsonSize": "$$ROOT"}, "fields": FIELD_SUMMARY}})
        documents = tuple(
            DocumentStat(
                row["_id"],
                int(row["size"]),
                tuple(FieldStat(f["k"], str(f["t"]), f.get("n"), int(f["s"])) for f in row["fields"]),
                tuple(
                    FieldStat(f"{f['k']}.{g['k']}", str(g["t"]), g.get("n"), int(g["s"]))
                    for f in row["fields"]
                    for g in f.get("sub") or []
                ),
            )
            for row in self.db[collection].aggregate(pipeline, allowDiskUse=False)
        )
        self._samples[collection] = sample = Sample(collection, count, documents, whole)
        return sample

    def _memory(self, collection: str) -> MemoryRead | None:
        """The collection read from the offline engine's memory (once per run), or None on a server."""
        if self.source is None:
            return None
        if collection not in self._memory_reads:
            from workbook.schema_doctor import memory

            self._memory_reads[collection] = memory.read_collection(
                self.source, collection, self.sample_size, self.full_scan, self.budget, self.say
            )
        return self._memory_reads[collection]

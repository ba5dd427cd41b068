"""Document sizes per collection and loaded shape, the documents nearest 16 MiB, and how fast they get there."""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
from bson import ObjectId
from pymongo.collection import Collection
from pymongo.database import Database

from workbook.engine_reads import is_offline, local_storage, public_records
from workbook.facts import MAX_BSON_SIZE, bson_size
from workbook.loaded import Loadable, loaded_shapes
from workbook.offline_commands import DROP_LISTENERS, dropped


def document_sizes(collection: Collection) -> pd.Series:
    """BSON size in bytes of every document, indexed by ``_id`` (measured by the server: ``$bsonSize``).

    On the offline default the sizes are read from the engine's storage (the same bytes
    ``$bsonSize`` counts, far faster), measured once per version of the collection's contents.
    """
    stored = _offline_sizes(collection.database, collection.name)
    if stored is not None:
        return pd.Series(dict(zip(stored.ids, stored.bytes, strict=True)), name="bytes", dtype="int64")
    rows = collection.aggregate([{"$project": {"bytes": {"$bsonSize": "$$ROOT"}}}])
    sizes = {row["_id"]: row["bytes"] for row in rows}
    return pd.Series(sizes, name="bytes", dtype="int64")


@dataclass(frozen=True)
class _StoredSizes:
    """Sizes of one offline collection at one version of its contents."""

    version: object
    ids: list[Any]
    bytes: np.ndarray
    index_bytes: dict[tuple[str, ...], int]
    documents: Sequence[Any] | None = None
    """The documents measured, in natural order (read, never changed): the next version's sizes re-measure only
    the documents that are not these very objects (:func:`_remeasured`). None: measure the next version whole."""


_SIZE_CACHE: dict[tuple[str, str], _StoredSizes] = {}

REMEASURE_SHARE = 8
"""A new version is measured from the previous one when at most one document in this many changed (or 64,
whichever is more); more (a middle delete shifts every later document), and it is measured whole."""


def _offline_sizes(db: Database, collection: str, indexes: Iterable[Iterable[str]] = ()) -> _StoredSizes | None:
    """Every document's BSON size (and the entry bytes of ``indexes``) from the offline engine, or None on a server.

    mongoeco keeps a collection as a persistent map: any write replaces its root object, so the
    root identifies a version of the contents exactly and a cached result is reused until then.
    One pass over the documents measures them and the requested indexes' entries together; after a
    few writes, only the documents they replaced are measured again (:func:`_remeasured`).
    """
    found = local_storage(db, collection)
    if found is None:
        return None
    engine, frozen = found
    wanted = [tuple(fields) for fields in indexes]
    if not hasattr(frozen, "_values"):  # no such collection
        return _StoredSizes(None, [], np.zeros(0, dtype="int64"), dict.fromkeys(wanted, 0))
    cached = _SIZE_CACHE.get((db.name, collection))
    if cached is not None and cached.version is frozen._values and all(k in cached.index_bytes for k in wanted):
        return cached
    # the documents as a find replies with them (same BSON bytes), kept per storage chunk from read to read
    public, records = public_records(engine, db.name, collection)
    documents: list[Any] = public
    if len(records) != len(frozen) or not all(map(operator.is_, records, frozen.values())):
        documents = [engine._borrow_storage_document(stored) for stored in frozen.values()]  # written meanwhile
    sizes = None
    if cached is not None and cached.documents is not None and all(k in cached.index_bytes for k in wanted):
        sizes = _remeasured(cached, frozen._values, documents)
    if sizes is None:
        known = cached.index_bytes if cached is not None and cached.version is frozen._values else {}
        sizes = _measured(frozen._values, documents, sorted(set(wanted) | set(known)))
    _SIZE_CACHE[(db.name, collection)] = sizes
    return sizes


def _measured(version: object, documents: Sequence[Any], indexes: list[tuple[str, ...]]) -> _StoredSizes:
    """Every document's BSON size and the entry bytes of ``indexes``, in one pass."""
    ids: list[Any] = []
    measured: list[int] = []
    entries = dict.fromkeys(indexes, 0)
    for document in documents:
        ids.append(document["_id"])
        measured.append(bson_size(document))
        for fields in indexes:
            entries[fields] += _entry_bytes(document, fields)
    return _StoredSizes(version, ids, np.asarray(measured, dtype="int64"), entries, documents)


def _remeasured(previous: _StoredSizes, version: object, documents: Sequence[Any]) -> _StoredSizes | None:
    """``previous`` brought to ``documents`` (a later version), measuring only the documents that are not the
    very objects measured at the same place before, and those past either end; None when too many changed.

    The engine never changes a stored document in place (a write stores a new one), and ``previous`` holds
    the documents it measured, so none of them can be freed and its address reused: an unchanged place is
    the same object. Index entry bytes are kept as sums: a replaced document's entries are subtracted.
    """
    before = previous.documents
    assert before is not None
    common = min(len(before), len(documents))
    same = np.fromiter(map(operator.is_, documents[:common], before[:common]), dtype=bool, count=common)
    changed = np.flatnonzero(~same).tolist()
    added, removed = range(common, len(documents)), range(common, len(before))
    if len(changed) + len(added) + len(removed) > max(64, len(documents) // REMEASURE_SHARE):
        return None
    ids = previous.ids[:common] + [None] * len(added)
    measured = np.empty(len(documents), dtype="int64")
    measured[:common] = previous.bytes[:common]
    entries = dict(previous.index_bytes)

    def count(document: Any, sign: int) -> None:
        for fields in entries:
            entries[fields] += sign * _entry_bytes(document, fields)

    for position in removed:
        count(before[position], -1)
    for position in changed:
        count(before[position], -1)
    for position in [*changed, *added]:
        document = documents[position]
        ids[position], measured[position] = document["_id"], bson_size(document)
        count(document, 1)
    return _StoredSizes(version, ids, measured, entries, documents)


def offline_size_state(db: Database, collection: str) -> tuple[object, list[Any], np.ndarray, dict[Any, int]] | None:
    """Sizes of a just-loaded offline collection and its indexes' entries, to keep with its snapshot.

    Returns (version, ids, bytes, index entry bytes); :func:`seed_offline_sizes` puts them back.
    """
    indexes = [tuple(index["key"]) for index in db[collection].list_indexes()]
    stored = _offline_sizes(db, collection, indexes)
    if stored is None:
        return None
    return stored.version, stored.ids, stored.bytes, stored.index_bytes


def _forget_offline_sizes(engine: Any, db_name: str, collection: str | None) -> None:
    """Let go of the sizes kept for a dropped collection (a :data:`DROP_LISTENERS` listener)."""
    for key in [k for k in _SIZE_CACHE if dropped(db_name, collection, k)]:
        _SIZE_CACHE.pop(key, None)


DROP_LISTENERS.append(_forget_offline_sizes)


def seed_offline_sizes(
    db_name: str, collection: str, version: object, state: tuple[Any, ...], documents: Sequence[Any] | None = None
) -> None:
    """Remember sizes measured at load time (ids, bytes, index entry bytes) for contents ``version``, and the
    ``documents`` they measure (the reads' own, in natural order) when known: later versions re-measure only
    what a write replaced."""
    ids, measured, index_bytes = state
    kept = documents if documents is not None and len(documents) == len(ids) else None
    _SIZE_CACHE[(db_name, collection)] = _StoredSizes(version, ids, measured, dict(index_bytes), kept)


def seed_sizes_from_documents(
    db_name: str,
    collection: str,
    version: object,
    documents: list[dict[str, Any]],
    sizes: list[int],
    indexes: Iterable[tuple[str, ...]],
) -> None:
    """Sizes of documents just bulk-loaded, from the documents themselves (their stored form has the same bytes).

    ``sizes`` are their BSON sizes, measured by the loader; the index entries are measured here
    with the same rule as :func:`_entry_bytes`, by arithmetic for plain scalars.
    """
    entries = {fields: sum(_entry_bytes_fast(document, fields) for document in documents) for fields in indexes}
    ids = [document["_id"] for document in documents]
    measured = np.asarray(sizes, dtype="int64")
    _SIZE_CACHE[(db_name, collection)] = _StoredSizes(version, ids, measured, entries, documents)


def _scalar_bytes(value: Any) -> int | None:
    """A BSON value's bytes for the plain scalar types, else None (then BSON encoding measures it)."""
    kind = type(value)
    if kind is str:
        return 4 + len(value.encode("utf-8")) + 1
    if kind is bool:
        return 1
    if kind is int:
        return 4 if -(2**31) <= value < 2**31 else 8
    if kind is float or kind is datetime:
        return 8
    if kind is ObjectId:
        return 12
    if value is None:
        return 0
    return None


def _array_bytes(values: list[Any]) -> int | None:
    """A BSON array of plain scalars: a document keyed "0", "1"...; None if an element is not a plain scalar."""
    total = 4 + 1
    for position, value in enumerate(values):
        size = _scalar_bytes(value)
        if size is None:
            return None
        total += 1 + len(str(position)) + 1 + size
    return total


def _entry_bytes_fast(document: dict[str, Any], fields: Iterable[str]) -> int:
    """:func:`_entry_bytes` by arithmetic when every indexed value is a plain scalar (``{k0: v, ...}``)."""
    total = 4 + 1 + 8  # document length, terminator, record id
    for position, field in enumerate(fields):
        value = _field_path(document, field.split("."))
        if value is _MISSING:
            continue
        size = _array_bytes(value) if type(value) is list else _scalar_bytes(value)
        if size is None or position > 9:
            return _entry_bytes(document, fields)
        total += 1 + 3 + size  # type byte, "kN" and its terminator, the value
    return total


def size_table(shapes: Loadable) -> pd.DataFrame:
    """Per loaded shape and collection: documents, p50/p95/max BSON size, average, data and index sizes.

    ``shapes`` is what ``load()`` returned: one loaded shape, or a list or dict of them.

    ``data_bytes`` and ``avg_obj_bytes`` come from ``collStats`` (exact BSON sums on the offline
    default; uncompressed sizes on MongoDB). ``index_bytes`` is ``totalIndexSize`` on a server (on
    disk, compressed); the offline default keeps no index files, so there it is the workbench's
    estimate: the BSON size of each document's indexed values plus an 8-byte record id, per index.
    """
    from workbook.connection import engine_info

    rows: list[dict[str, Any]] = []
    for loaded in loaded_shapes(shapes):
        shape, shape_db = loaded.shape, loaded.db
        offline = engine_info(shape_db).kind == "offline"
        for spec in loaded.spec.collections:
            index_bytes = index_size_estimate(shape_db, spec.name) if offline else None  # one pass, then sizes
            sizes = document_sizes(shape_db[spec.name]).to_numpy()
            if offline:  # collStats re-encodes every document there; these are the same sums, already known
                total = int(sizes.sum())
                stats = {"size": total, "avgObjSize": total / len(sizes) if len(sizes) else 0}
            else:
                stats = shape_db.command("collStats", spec.name)
            p50, p95 = np.percentile(sizes, [50, 95]) if len(sizes) else (np.nan, np.nan)
            rows.append(
                {
                    "shape": shape,
                    "collection": spec.name,
                    "documents": len(sizes),
                    "p50_bytes": p50,
                    "p95_bytes": p95,
                    "max_bytes": sizes.max() if len(sizes) else np.nan,
                    "avg_obj_bytes": stats.get("avgObjSize", np.nan),
                    "data_bytes": stats.get("size", np.nan),
                    "index_bytes": index_bytes if offline else stats.get("totalIndexSize", np.nan),
                    "pct_of_16mib_max": 100 * (sizes.max() if len(sizes) else 0) / MAX_BSON_SIZE,
                }
            )
    return pd.DataFrame(rows).set_index(["shape", "collection"])


def index_size_estimate(db: Database, collection: str) -> int:
    """Bytes of index entries: per index and document, the indexed values' BSON size plus 8 (record id)."""
    indexes = [tuple(index["key"]) for index in db[collection].list_indexes()]
    stored = _offline_sizes(db, collection, indexes)
    if stored is not None:  # the same sum as the pipeline below, from the engine's documents
        return sum(stored.index_bytes[fields] for fields in indexes)
    total = 0
    for fields in indexes:
        values = {f"k{i}": f"${field}" for i, field in enumerate(fields)}
        pipeline = [{"$group": {"_id": None, "bytes": {"$sum": {"$add": [{"$bsonSize": values}, 8]}}}}]
        total += next(db[collection].aggregate(pipeline), {"bytes": 0})["bytes"]
    return int(total)


_MISSING = object()


def _field_path(value: Any, parts: list[str]) -> Any:
    """``$a.b`` as an aggregation expression reads it: arrays map over their documents, missing drops out."""
    if not parts:
        return value
    if isinstance(value, dict):
        return _field_path(value[parts[0]], parts[1:]) if parts[0] in value else _MISSING
    if isinstance(value, list):
        found = [_field_path(item, parts) for item in value if isinstance(item, (dict, list))]
        return [item for item in found if item is not _MISSING]
    return _MISSING


def _entry_bytes(document: dict[str, Any], fields: Iterable[str]) -> int:
    """One index entry's estimate: ``$bsonSize`` of ``{k0: $field0, ...}`` plus an 8-byte record id."""
    values = {f"k{i}": _field_path(document, field.split(".")) for i, field in enumerate(fields)}
    return bson_size({key: value for key, value in values.items() if value is not _MISSING}) + 8


def largest_documents(collection: Collection, n: int = 5) -> pd.DataFrame:
    """The ``n`` documents nearest the 16 MiB limit: bytes and percent of the limit."""
    rows = collection.aggregate(
        [
            {"$project": {"bytes": {"$bsonSize": "$$ROOT"}}},
            {"$sort": {"bytes": -1, "_id": 1}},
            {"$limit": n},
        ]
    )
    frame = pd.DataFrame(list(rows), columns=["_id", "bytes"]).set_index("_id")
    frame["pct_of_16mib"] = 100 * frame["bytes"] / MAX_BSON_SIZE
    return frame


def growth_projection(
    collection: Collection, array: str, *, new_per_day: float, top: int = 5, limit: int = MAX_BSON_SIZE
) -> pd.DataFrame:
    """When the documents with the biggest ``array`` reach ``limit`` bytes, at ``new_per_day`` new entries.

    New entries are shared out as the existing ones are (a document holding 5% of all entries gets
    5% of the new ones: the dataset's skew), each the size of that document's average entry.
    Returns, per document: entries now, bytes now, bytes added a day, and days until the limit.
    """
    rows = list(
        collection.aggregate(
            [
                {
                    "$project": {
                        "entries": {"$size": {"$ifNull": [f"${array}", []]}},
                        "bytes": {"$bsonSize": "$$ROOT"},
                        "array_bytes": {"$bsonSize": {"$ifNull": [{"list": f"${array}"}, {}]}},
                    }
                },
                {"$match": {"entries": {"$gt": 0}}},
            ]
        )
    )
    total_entries = sum(row["entries"] for row in rows)
    projected = []
    for row in rows:
        share = row["entries"] / total_entries
        entry_bytes = row["array_bytes"] / row["entries"]
        per_day = share * new_per_day * entry_bytes
        projected.append(
            {
                "_id": row["_id"],
                "entries": row["entries"],
                "bytes": row["bytes"],
                "share_of_new": share,
                "bytes_per_day": per_day,
                "days_to_limit": max(0.0, (limit - row["bytes"]) / per_day),
            }
        )
    frame = pd.DataFrame(
        projected, columns=["_id", "entries", "bytes", "share_of_new", "bytes_per_day", "days_to_limit"]
    )
    return frame.sort_values(["days_to_limit", "_id"]).head(top).set_index("_id")


def growth_sentence(projection: pd.DataFrame, collection: str, array: str, new_per_day: float) -> str:
    """The first row as a sentence: 'at N new reviews a day, product X reaches 16 MiB in D days'."""
    first = projection.iloc[0]
    return (
        f"At {new_per_day:,.0f} new {array} a day, {collection} {projection.index[0]!r} "
        f"({first['bytes'] / 1024:,.0f} KiB now, +{first['bytes_per_day'] / 1024:,.1f} KiB a day) "
        f"reaches 16 MiB in {first['days_to_limit']:,.0f} days."
    )


def document_size_frame(shapes: Loadable) -> pd.DataFrame:
    """Every document's BSON size, long form: shape, collection, _id, bytes (for distribution charts)."""
    frames = []
    for loaded in loaded_shapes(shapes):
        for spec in loaded.spec.collections:
            sizes = document_sizes(loaded[spec.name])
            columns = {"shape": loaded.shape, "collection": spec.name, "_id": sizes.index, "bytes": sizes.to_numpy()}
            frames.append(pd.DataFrame(columns))
    return pd.concat(frames, ignore_index=True)


def largest_document_bytes(collection: Collection) -> int:
    """The BSON size of the collection's largest document (``$bsonSize``), 0 when it is empty.

    A server answers one ``$group``; the offline default reads the sizes it keeps per version of
    the contents (:func:`document_sizes`).
    """
    if is_offline(collection.database):
        sizes = document_sizes(collection)
        return int(sizes.max()) if len(sizes) else 0
    rows = list(collection.aggregate([{"$group": {"_id": None, "largest": {"$max": {"$bsonSize": "$$ROOT"}}}}]))
    return int(rows[0]["largest"]) if rows else 0

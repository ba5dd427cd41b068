"""Reading a collection straight from the offline engine's storage, for the workbench's own bookkeeping.

The workbench sometimes needs every document of a collection for itself, not for the learner:
the ids to draw workload arguments from, the review counts that weight popular products. Asking
the offline server for them runs a query through the wire and decodes every document again;
reading the engine's storage hands back the documents it already decoded, in natural order, in
milliseconds. What the learner measures (operations, explain, latency) always goes through the
wire like any client's command. On a real server :func:`stored_documents` returns None and the
caller asks the server.
"""

from __future__ import annotations

import bisect
import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from typing import Any, overload

import numpy as np
from pymongo.database import Database

from workbook import engine_compat, offline_commands


def local_engine(db: Database) -> Any | None:
    """The offline engine serving ``db`` when it runs in this process; None on a server, or on an
    offline default of another process (reached through ``MONGODB_URI``), which is read through the wire."""
    server = offline_commands.RUNNING[0] if offline_commands.RUNNING else None
    if server is None or (server.host, server.port) not in set(db.client.nodes):
        return None
    return server.engine


def is_offline(db: Database) -> bool:
    """Whether ``db`` is served by this process's offline default (whose storage can be read directly)."""
    return local_engine(db) is not None


def local_storage(db: Database, collection: str) -> tuple[Any, Any] | None:
    """(the engine, a frozen view of ``collection``'s stored documents) on this process's offline
    default, None anywhere else. The view is an O(1) copy: later writes do not change it; a
    collection that does not exist is an empty mapping."""
    engine = local_engine(db)
    if engine is None:
        return None
    storage = engine._storage.get(db.name, {}).get(collection)
    return engine, {} if storage is None else storage.copy()


_CHUNKS_KEPT = 32
"""Collections whose decoded chunks :func:`public_records` keeps, the least recently read going first: twice
the explain models cached (``ModelCache``), since chunks help only a model rebuilt from a cached one, and
a dropped collection's documents must not stay alive for long."""
_Chunk = tuple[Any, list[Mapping[str, Any]], list[Any], np.ndarray]
_chunk_cache: OrderedDict[tuple[int, str, str], dict[int, _Chunk]] = OrderedDict()
_chunk_lock = threading.Lock()


class Joined(Sequence[Any]):
    """The items of several lists, one after another, as one read-only sequence, without copying them into one
    list: the explain model's documents and records, kept per storage chunk. Joining 100,000 documents' chunks
    into two lists took 2.4 of the 5 ms a model's rebuild after one write spent reading the collection (each
    item's reference counted again); here an item is found by bisecting the chunks' starts."""

    __slots__ = ("_length", "_parts", "_starts")

    def __init__(self, parts: list[list[Any]]) -> None:
        self._parts = parts
        self._starts = list(itertools.accumulate((len(part) for part in parts), initial=0))
        self._length = self._starts[-1]

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._length))]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("Joined index out of range")
        part = bisect.bisect_right(self._starts, index) - 1
        return self._parts[part][index - self._starts[part]]

    def __iter__(self) -> Iterator[Any]:
        return itertools.chain.from_iterable(self._parts)

    def __reversed__(self) -> Iterator[Any]:
        return itertools.chain.from_iterable(map(reversed, reversed(self._parts)))


def public_records(engine: Any, database: str, collection: str) -> tuple[list[Mapping[str, Any]], list[Any]]:
    """(the committed documents as the engine's find replies with them, the stored records they come
    from), both in natural order: the planner model reads the first (pymongo's BSON types, such as
    ``Int64``, not the engine's internal wrappers) and the offline read layer replies with them; a
    record gives the engine's internal form again (``engine._borrow_storage_document``). Read, never change.

    A write replaces only the storage chunk (128 documents at most) it touches, so the documents of
    every other chunk are taken from the previous call: reading a collection again after one write
    costs one pass over its chunks, not a decode of its documents.
    """
    documents, records, _ = public_records_and_ids(engine, database, collection)
    return list(documents), list(records)


def public_records_and_ids(engine: Any, database: str, collection: str) -> tuple[Joined, Joined, np.ndarray]:
    """:func:`public_records` joined chunk by chunk (:class:`Joined`), and the ``id()`` of each document as an
    int64 array (what the planner model compares versions by), kept per chunk with its documents: after one
    write, only the written chunk's are made again.

    Each unchanged chunk is taken as it is, without reading its slots: making every chunk's list of stored values
    and every document's id again took 14 ms of the 19 a model's rebuild cost at 100,000 documents."""
    storage = engine._storage.get(database, {}).get(collection)
    key = (id(engine), database, collection)
    if storage is None:
        with _chunk_lock:
            _chunk_cache.pop(key, None)
        return Joined([]), Joined([]), np.zeros(0, dtype=np.int64)
    with _chunk_lock:
        earlier = _chunk_cache.get(key, {})
    borrow = engine._borrow_public_storage_document
    public = engine_compat.with_pymongo_scalars
    current: dict[int, _Chunk] = {}
    documents: list[list[Mapping[str, Any]]] = []
    records: list[list[Any]] = []
    ids: list[np.ndarray] = []
    for chunk in engine_compat.storage_chunks(storage.copy()):  # copy(): O(1), a consistent version
        known = earlier.get(id(chunk))
        if known is None or known[0] is not chunk:
            stored = engine_compat.chunk_values(chunk)
            known = _chunk(chunk, [public(borrow(value)) for value in stored], stored)
        current[id(chunk)] = known
        if known[2]:  # a chunk of deleted slots only adds nothing to bisect past
            documents.append(known[1])
            records.append(known[2])
            ids.append(known[3])
    joined = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)
    at = 0
    for place, (chunk, part, stored, _) in current.items():  # each chunk's ids a view of the joined: one copy kept
        current[place] = (chunk, part, stored, joined[at : at + len(part)])
        at += len(part)
    _keep_chunks(key, current)
    return Joined(documents), Joined(records), joined


def _chunk(chunk: Any, documents: list[Mapping[str, Any]], stored: list[Any]) -> _Chunk:
    """What the chunk cache keeps of one chunk: the chunk, its documents, their stored records, the documents' ids."""
    return chunk, documents, stored, np.fromiter(map(id, documents), dtype=np.int64, count=len(documents))


def stored_at(engine: Any, database: str, collection: str, key: Any) -> list[Mapping[str, Any]]:
    """The committed document stored under the storage key ``key``, as :func:`public_records` gives it (a list of
    one, or empty): what a find of that ``_id`` returns where the key is exact
    (:func:`workbook.offline_writes.exact_id_key`) and the collection has no collation."""
    storage = engine._storage.get(database, {}).get(collection)
    stored = None if storage is None else storage.get(key)
    if stored is None:
        return []
    return [engine_compat.with_pymongo_scalars(engine._borrow_public_storage_document(stored))]


def _keep_chunks(key: tuple[int, str, str], chunks: dict[int, _Chunk]) -> None:
    """Keep ``chunks`` as the collection's most recently read, dropping the least recent past :data:`_CHUNKS_KEPT`."""
    with _chunk_lock:
        _chunk_cache[key] = chunks
        _chunk_cache.move_to_end(key)
        while len(_chunk_cache) > _CHUNKS_KEPT:
            _chunk_cache.popitem(last=False)


def _forget_dropped(engine: Any, database: str, collection: str | None) -> None:
    """Let go of the decoded documents kept for a dropped collection: they must not stay alive."""
    with _chunk_lock:
        for key in [
            k for k in _chunk_cache if k[0] == id(engine) and offline_commands.dropped(database, collection, k[1:])
        ]:
            del _chunk_cache[key]


offline_commands.DROP_LISTENERS.append(_forget_dropped)


def seed_public_records(engine: Any, database: str, collection: str, documents: Sequence[Mapping[str, Any]]) -> bool:
    """Give :func:`public_records` the documents of ``database.collection`` as pymongo decodes them, in
    natural order, so its next call decodes nothing; False (nothing seeded) if their count is not the
    collection's.

    A snapshot restore has them already: the file holds each document's BSON too, and decoding that
    (C) costs a fraction of decoding the engine's own stored form three times over in Python (the
    40,800 parts documents: 1.9 s). They must be exactly what :func:`public_records` would make:
    tests/test_snapshot.py compares the two forms byte for byte after every dataset's restore.
    """
    storage = engine._storage.get(database, {}).get(collection)
    if storage is None:
        return False
    current: dict[int, _Chunk] = {}
    at = 0
    for chunk in engine_compat.storage_chunks(storage.copy()):
        stored = engine_compat.chunk_values(chunk)
        part = list(documents[at : at + len(stored)])
        at += len(stored)
        current[id(chunk)] = _chunk(chunk, part, stored)
    if at != len(documents):
        return False
    _keep_chunks((id(engine), database, collection), current)
    return True


def stored_documents(db: Database, collection: str) -> list[Mapping[str, Any]] | None:
    """The committed documents of ``db[collection]`` from this process's offline engine, in natural order
    and as a find replies with them (None elsewhere).

    They are :func:`public_records`' documents, which a load or a snapshot restore seeds, so reading a
    collection just loaded decodes nothing: read them, never change them.
    """
    engine = local_engine(db)
    return None if engine is None else public_records(engine, db.name, collection)[0]


_DERIVED: dict[tuple[str, tuple[str, ...], Hashable], tuple[tuple[object, ...], Any]] = {}
_DERIVED_LOCK = threading.Lock()


def _versions(db: Database, collections: tuple[str, ...]) -> tuple[object, ...] | None:
    """The offline engine's current version of each collection (None on a real server).

    mongoeco keeps a collection in a persistent map whose root object is replaced by every write,
    so the root identifies one version of the contents exactly.
    """
    engine = local_engine(db)
    if engine is None:
        return None
    tables = engine._storage.get(db.name, {})
    return tuple(getattr(tables.get(name), "_values", None) for name in collections)


def derived[T](db: Database, collections: tuple[str, ...], what: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``, remembered on the offline default until any of ``collections`` is written.

    On a real server it is computed every time. The value is shared between callers: treat it as read-only.
    """
    versions = _versions(db, collections)
    if versions is None:
        return compute()
    key = (db.name, collections, what)
    with _DERIVED_LOCK:
        known = _DERIVED.get(key)
    if known is not None and all(a is b for a, b in zip(known[0], versions, strict=True)):
        return known[1]
    value = compute()
    with _DERIVED_LOCK:
        _DERIVED[key] = (versions, value)
    return value


_MISSING = object()


def field_values(document: Mapping[str, Any], path: str) -> list[Any]:
    """What ``{$project: {v: "$<path>"}}, {$unwind: "$v"}`` yields for one document, as a list.

    A path through an array of subdocuments collects the field of each element (as ``$a.b``
    does); the array that results is unwound one level. Missing fields yield nothing.
    """
    value: Any = document
    for part in path.split("."):
        if isinstance(value, Mapping):
            value = value.get(part, _MISSING)
        elif isinstance(value, list):
            value = [element[part] for element in value if isinstance(element, Mapping) and part in element]
        else:
            value = _MISSING
        if value is _MISSING:
            return []
    return list(value) if isinstance(value, list) else [value]

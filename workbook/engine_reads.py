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
import dataclasses
import itertools
import operator
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass
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
_chunk_cache: OrderedDict[tuple[int, str, str], _Read] = OrderedDict()
_chunk_lock = threading.Lock()


class Joined(Sequence[Any]):
    """The items of several lists, one after another, as one read-only sequence, without copying them into one
    list: the explain model's documents and records, kept per storage chunk. Joining 100,000 documents' chunks
    into two lists took 2.4 of the 5 ms a model's rebuild after one write spent reading the collection (each
    item's reference counted again); here an item is found by bisecting the chunks' starts. A sequence read
    by position often enough to pay for one list (a scan fetching thousands of documents) makes that list once
    and reads it: bisecting each of 20,000 fetched documents (three reads each) added a fifth to the find."""

    __slots__ = ("_flat", "_length", "_parts", "_reads", "_starts")

    def __init__(self, parts: list[list[Any]], starts: list[int] | None = None) -> None:
        """``parts`` in order; ``starts``, where each begins (and the total last), when the caller has them."""
        self._parts = parts
        self._starts = _starts(parts) if starts is None else starts
        self._length = self._starts[-1]
        self._flat: list[Any] | None = None
        self._reads = 0

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        flat = self._flat
        if flat is not None:
            return flat[index]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._length))]
        self._reads += 1
        if self._reads > 64 + (self._length >> 5):  # reads enough to pay for the list (racing threads make equal ones)
            self._flat = flat = list(itertools.chain.from_iterable(self._parts))
            return flat[index]
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

    When the collection's chain of chunks is the one read last time (:func:`engine_compat.same_chunk_chain`), the
    chunks are looked up by id, not walked, and only a replaced chunk's parts are made; else the chain is walked
    and each unchanged chunk taken as it is, without reading its slots. At 100,000 documents, after an update:
    the walk and its bookkeeping took 1.5 ms of a 1.6 ms read (before that, 14 of 19 ms went to making every
    chunk's stored values and every document's id again)."""
    storage = engine._storage.get(database, {}).get(collection)
    key = (id(engine), database, collection)
    if storage is None:
        with _chunk_lock:
            _chunk_cache.pop(key, None)
        return Joined([]), Joined([]), np.zeros(0, dtype=np.int64)
    with _chunk_lock:
        earlier = _chunk_cache.get(key)
    snapshot = storage.copy()  # O(1), a consistent version
    if earlier is not None and earlier.version is snapshot._values:  # no write since: the same documents
        return _joined(earlier)
    chunks = None if earlier is None else _replaced(earlier, storage, snapshot)
    if earlier is not None and chunks is None:
        chunks = engine_compat.same_chunk_chain(snapshot, earlier.order, earlier.chunks)
    if earlier is not None and chunks is not None:
        read = _reread(engine, earlier, chunks, snapshot)
    else:
        read = _walk(engine, snapshot, earlier)
    _keep_chunks(key, read)
    return _joined(read)


@dataclass
class _Read:
    """What the chunk cache keeps of a collection's last read: the version read (its ``_values`` map), its chain of
    chunks (ids and objects), each chunk's documents and stored records, and every document's ``id()`` (joined,
    with where each chunk's start)."""

    version: Any
    chunk_map: Any
    """The collection's map of chunks when read (``_chunks``), where :func:`engine_compat.chunks_replaced_since`
    starts."""
    order: list[int]
    chunks: list[Any]
    documents: list[list[Mapping[str, Any]]]
    records: list[list[Any]]
    ids: np.ndarray
    starts: list[int]
    place: dict[int, int] = dataclasses.field(default_factory=dict)
    """Where each chunk id of :attr:`order` stands in it."""

    def __post_init__(self) -> None:
        if len(self.place) != len(self.order):
            self.place = {chunk_id: at for at, chunk_id in enumerate(self.order)}


def _joined(read: _Read) -> tuple[Joined, Joined, np.ndarray]:
    """A read's documents and records, each joined over its chunks (both begin where the chunks do), and its ids."""
    return Joined(read.documents, read.starts), Joined(read.records, read.starts), read.ids


def _parts(engine: Any, chunk: Any) -> tuple[list[Mapping[str, Any]], list[Any]]:
    """One chunk's documents as a find replies with them, and its stored records."""
    borrow, public = engine._borrow_public_storage_document, engine_compat.with_pymongo_scalars
    stored = engine_compat.chunk_values(chunk)
    return [public(borrow(value)) for value in stored], stored


def _ids_of(documents: list[Mapping[str, Any]]) -> np.ndarray:
    return np.fromiter(map(id, documents), dtype=np.int64, count=len(documents))


def _starts(parts: Sequence[Sized]) -> list[int]:
    """Where each of ``parts`` begins in them joined, and their total length last."""
    return list(itertools.accumulate(map(len, parts), initial=0))


def _replaced(earlier: _Read, storage: Any, snapshot: Any) -> list[Any] | None:
    """``earlier``'s chunks with those the writes since replaced looked up again, when the last writes recorded say
    which (:func:`engine_compat.chunks_replaced_since`); else None."""
    replaced = engine_compat.chunks_replaced_since(earlier.chunk_map, storage, snapshot._chunks)
    if replaced is None:
        return None
    chunks, place, get = list(earlier.chunks), earlier.place, snapshot._chunks.get
    for chunk_id in replaced:
        at, chunk = place.get(chunk_id), get(chunk_id)
        if at is None or chunk is None:
            return None
        chunks[at] = chunk
    return chunks


def _reread(engine: Any, earlier: _Read, chunks: list[Any], snapshot: Any) -> _Read:
    """The read of an unchanged chain of ``chunks``: ``earlier``'s parts, those of each replaced chunk made again."""
    changed = list(itertools.compress(range(len(chunks)), map(operator.is_not, chunks, earlier.chunks)))
    if not changed:
        return dataclasses.replace(earlier, version=snapshot._values, chunk_map=snapshot._chunks)
    documents, records = list(earlier.documents), list(earlier.records)
    pieces, done = [], 0
    for place in changed:
        documents[place], records[place] = _parts(engine, chunks[place])
        pieces += [earlier.ids[done : earlier.starts[place]], _ids_of(documents[place])]
        done = earlier.starts[place + 1]
    pieces.append(earlier.ids[done:])
    return _Read(
        snapshot._values,
        snapshot._chunks,
        earlier.order,
        chunks,
        documents,
        records,
        np.concatenate(pieces),
        _starts(documents),
        earlier.place,
    )


def _walk(engine: Any, snapshot: Any, earlier: _Read | None) -> _Read:
    """The read of ``snapshot`` by walking its chain, each chunk ``earlier`` read (the same object) taken as it is."""
    known = {} if earlier is None else {id(chunk): place for place, chunk in enumerate(earlier.chunks)}
    order, chunks, documents, records, ids = [], [], [], [], []
    for chunk_id, chunk in engine_compat.storage_chunks(snapshot):
        place = known.get(id(chunk))
        if earlier is not None and place is not None and earlier.chunks[place] is chunk:
            part, stored = earlier.documents[place], earlier.records[place]
            ids.append(earlier.ids[earlier.starts[place] : earlier.starts[place + 1]])
        else:
            part, stored = _parts(engine, chunk)
            ids.append(_ids_of(part))
        order.append(chunk_id)
        chunks.append(chunk)
        documents.append(part)
        records.append(stored)
    joined = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)
    return _Read(snapshot._values, snapshot._chunks, order, chunks, documents, records, joined, _starts(documents))


def stored_at(engine: Any, database: str, collection: str, key: Any) -> list[Mapping[str, Any]]:
    """The committed document stored under the storage key ``key``, as :func:`public_records` gives it (a list of
    one, or empty): what a find of that ``_id`` returns where the key is exact
    (:func:`workbook.offline_writes.exact_id_key`) and the collection has no collation."""
    storage = engine._storage.get(database, {}).get(collection)
    stored = None if storage is None else storage.get(key)
    if stored is None:
        return []
    return [engine_compat.with_pymongo_scalars(engine._borrow_public_storage_document(stored))]


def _keep_chunks(key: tuple[int, str, str], chunks: _Read) -> None:
    """Keep ``chunks`` as the collection's most recently read, dropping the least recent past :data:`_CHUNKS_KEPT`."""
    with _chunk_lock:
        _chunk_cache[key] = chunks
        _chunk_cache.move_to_end(key)
        while len(_chunk_cache) > _CHUNKS_KEPT:
            _chunk_cache.popitem(last=False)


def _forget_dropped(engine: Any, database: str, collection: str | None) -> None:
    """Let go of the decoded documents and derived values kept for a dropped collection: they must not stay alive."""
    with _chunk_lock:
        for key in [
            k for k in _chunk_cache if k[0] == id(engine) and offline_commands.dropped(database, collection, k[1:])
        ]:
            del _chunk_cache[key]
    with _DERIVED_LOCK:
        _forget_stale(engine._storage)


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
    order, chunks, parts, records = [], [], [], []
    at = 0
    snapshot = storage.copy()
    for chunk_id, chunk in engine_compat.storage_chunks(snapshot):
        stored = engine_compat.chunk_values(chunk)
        order.append(chunk_id)
        chunks.append(chunk)
        parts.append(list(documents[at : at + len(stored)]))
        records.append(stored)
        at += len(stored)
    if at != len(documents):
        return False
    ids = _ids_of([document for part in parts for document in part])
    read = _Read(snapshot._values, snapshot._chunks, order, chunks, parts, records, ids, _starts(parts))
    _keep_chunks((id(engine), database, collection), read)
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
    tables = local_engine(db)._storage  # type: ignore[union-attr]  # versions were found: the engine is local
    with _DERIVED_LOCK:
        _forget_stale(tables)
        _DERIVED[key] = (versions, value)
    return value


def _forget_stale(tables: Mapping[str, Mapping[str, Any]]) -> None:
    """Drop the remembered values whose collections have been written, dropped or replaced since (under the
    lock): none can be asked for again, and each holds its version's documents (a dropped database's whole
    data) alive. Run on every miss, which computes anyway: the entries are a few per collection read."""
    for key, (versions, _) in list(_DERIVED.items()):
        held = tables.get(key[0], {})
        current = (getattr(held.get(name), "_values", None) for name in key[1])
        if not all(now is version for now, version in zip(current, versions, strict=True)):
            del _DERIVED[key]


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

"""Snapshots of loaded shapes on the offline default: load once, restore in well under a second.

The datasets are deterministic, so the engine state a :func:`workbook.load` leaves behind depends
only on (dataset, scale, seed, shape) and the code that generated, shaped and stored it. After a
load on the offline default this module keeps that state:

- in this process, as O(1) copies of mongoeco's persistent (HAMT) collections and index maps, so a
  repeated load costs a few dictionary assignments;
- on this machine, as a BSON file (data only: nothing in it is run) in the workbench's cache
  folder (``WORKBOOK_CACHE_DIR``, else ``$XDG_CACHE_HOME/workbook``, else ``~/.cache/workbook``;
  never inside the repository), named by a key that hashes the package's source and the
  engine's version and verified by a SHA-256 of its bytes, so a stale or damaged file is
  ignored and rebuilt by the next load. A folder another user could write to is refused
  (:class:`CacheFolderError`), and ``.tmp-*`` files left by a kill or a full disk are removed
  the next time the folder is used. Writing a file removes those of older code versions
  (:func:`remove_outdated`), so upgrades do not pile up sets nothing will read again.

Set ``WORKBOOK_SNAPSHOTS=0`` to switch both off. Real MongoDB servers are never snapshotted.
The engine's internals are read here, not patched: ``mongoeco`` is pinned exactly in
pyproject.toml, and tests/test_snapshot.py fails loudly if its storage layout changes.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import itertools
import operator
import os
import stat
import struct
import tempfile
import threading
import time
import weakref
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import bson
import bson.errors
import numpy as np
from bson.binary import Binary
from bson.codec_options import CodecOptions, TypeRegistry
from bson.decimal128 import Decimal128
from bson.objectid import ObjectId

from workbook import gc_pause
from workbook.datasets.dataset import EncodedDocuments
from workbook.errors import CacheFolderError
from workbook.key_positions import GONE, NOT_HELD, HashOrder, KeyPositions, KeyValues, MapView, Positions
from workbook.offline_commands import DROP_LISTENERS
from workbook.sizes import offline_size_state, seed_offline_sizes

if TYPE_CHECKING:
    from workbook.datasets import Dataset
    from workbook.loaded import LoadReport

BUILT: dict[int, tuple[object, list[tuple[Any, Any]], dict[str, tuple[PendingIndex, Any]], Sequence[Any]]] = {}
"""The plain forms (rows, index buckets) of collections just built, and the documents each row's payload
was encoded from, by their contents' identity: the snapshot file is written from these instead of
walking the persistent maps again (speed). Emptied by :func:`workbook.loading.load` once its snapshot
is taken."""


FORMAT = 8
"""Bump when the snapshot file layout changes."""

_STATE_TABLES = ("_storage", "_indexes", "_index_data", "_collection_options")
"""Engine dictionaries keyed by database, then collection, that hold a collection's state."""

_SOURCES = ("datasets", "shapes", "loading.py", "loaded.py", "offline.py", "facts.py", "sizes.py", "snapshot.py")
"""Package sources whose change can change a loaded state (hashed into every key)."""


def enabled() -> bool:
    """Whether snapshots are on (``WORKBOOK_SNAPSHOTS=0`` switches them off)."""
    return os.environ.get("WORKBOOK_SNAPSHOTS", "1").strip().lower() not in ("0", "false", "no", "off")


def cache_dir() -> Path:
    """Where snapshot files live: ``WORKBOOK_CACHE_DIR``, else the user's cache folder (never the repo)."""
    configured = os.environ.get("WORKBOOK_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "workbook"


@cache
def code_version() -> str:
    """A hash of the sources that shape a loaded state, the workbench's and the engine's versions."""
    from importlib.metadata import PackageNotFoundError, version

    import workbook
    from workbook.datasets.registry import GENERATOR_VERSION

    root = Path(workbook.__file__).parent
    digest = hashlib.sha256(f"format {FORMAT} generator {GENERATOR_VERSION}".encode())
    for package in ("mongoeco", "workbook"):
        try:
            digest.update(f"{package} {version(package)}".encode())
        except PackageNotFoundError:
            digest.update(f"{package} not installed".encode())
    for source in _SOURCES:
        path = root / source
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for file in files:
            digest.update(str(file.relative_to(root)).encode() + b"\x00" + file.read_bytes())
    return digest.hexdigest()[:16]


def fingerprint(dataset: Dataset) -> str:
    """A quick content hash of a generated dataset: its documents' BSON as they are now (the ones read, edits and
    all, encoded again: :meth:`EncodedDocuments.encoded`), with a type-tagged fallback for an edit BSON cannot
    hold."""
    digest = hashlib.blake2b(digest_size=16)
    for name, documents in dataset.collections.items():
        digest.update(name.encode() + b"\x00")
        try:
            digest.update(cast(EncodedDocuments, documents).encoded())  # a Dataset holds each collection so
        except (TypeError, ValueError, OverflowError, ArithmeticError, bson.errors.BSONError):
            digest.update(repr(list(documents)).encode())  # a value BSON cannot hold: its repr still changes with it
    return digest.hexdigest()


def snapshot_key(dataset: str, scale: str, seed: int, shape: str) -> str:
    """The name a snapshot is stored under: the load's arguments and the code that served it."""
    return f"{dataset}-{scale}-{seed}-{shape}-{code_version()}"


def family(key: str) -> str:
    """The dataset a :func:`snapshot_key` is of, whatever its shape: its dataset, scale and seed.

    >>> family("store-small-7-hybrid-8c31d9be09245add")
    'store-small-7'
    """
    return key.rsplit("-", 2)[0]


def _sibling_values(key: str) -> dict[Any, Any]:
    """One object per distinct string and date (:data:`_SHARED`) in a shape of ``key``'s dataset held in this
    process (:func:`family`), to share a read of ``key`` with (and added to by it): empty if none is held.

    The shapes of a dataset hold the same text and dates (a review in the embedded product and in the reviews
    collection, every id and field name); read with a table of their own, the store's three shapes held
    294,040 strings, 196,022 of them copies. A notebook reads a dataset's shapes one after another, so the
    table of the dataset read last is kept (:data:`_last_read`) and handed to the next read of that dataset:
    no walk. Otherwise the table is made from a held shape's documents: every held shape was shared with the
    others when it was read, so one of them holds every value they have, and the one with the fewest BSON bytes
    is walked (parts/referenced, 12 MiB, in 0.42 s on a slow day; parts/embedded, 29 MiB, 0.82 s). One table
    at most is kept, about 40 bytes a distinct value (5 MiB for followers): a read of another dataset, or the
    last of its shapes let go, lets it go.
    """
    name = family(key)
    with _memory_lock:
        siblings = [found for other, found in _memory.items() if family(other) == name]
        if siblings and _last_read and _last_read[0][0] == name:
            return _last_read[0][1]
    held = min(siblings, key=_bson_bytes, default=None)  # the smallest is the quickest walk
    values: dict[Any, Any] = {}
    if held is not None:
        note = values.setdefault
        for state in held.collections.values():
            for document in state.get("public") or ():
                _note_values(document.values(), note)
    with _memory_lock:
        _last_read[:] = [(name, values)]  # the previous dataset's table is let go
    return values


def _bson_bytes(found: Snapshot) -> int:
    """The BSON bytes of a snapshot's documents, from its load report."""
    return sum(int(each.get("bytes", 0)) for each in found.report.get("collections", ()))


def _note_values(values: Iterable[Any], note: Callable[[Any, Any], Any]) -> None:
    for value in values:
        kind = type(value)
        if kind in _SHARED:
            note(value, value)
        elif kind is dict:
            _note_values(value.values(), note)
        elif kind is list:
            _note_values(value, note)


@dataclass
class Snapshot:
    """One loaded shape: the engine state of its collections, its load report and its data's hash."""

    key: str
    data_hash: str
    report: dict[str, Any]
    collections: dict[str, dict[str, Any]]


_memory: dict[str, Snapshot] = {}
_memory_lock = threading.Lock()
_holders: dict[str, list[tuple[str, str, weakref.ref[Any]]]] = {}
"""Per snapshot kept in :data:`_memory`, the engine collections made from it: (database, collection, the
engine's collection object, weakly). A snapshot is kept in this process only while one of them is still
in the engine (:func:`_release_unheld`): a restore from the process is then almost free, because the
engine's persistent maps and the snapshot's share their nodes; once every database made from it is
dropped or replaced, the snapshot alone would hold the data, so it is let go (the file stays)."""


_last_read: list[tuple[str, dict[Any, Any]]] = []
"""The dataset (:func:`family`) whose snapshot file was read last and its table of shared values
(:func:`_sibling_values`), while a shape of it is held: one at most."""


def _hold(key: str, db_name: str, storages: dict[str, Any]) -> None:
    """Note that ``db_name`` holds the collections ``storages`` (name: the engine's object) made from ``key``."""
    with _memory_lock:
        if key in _memory:
            held = _holders.setdefault(key, [])
            held.extend((db_name, name, weakref.ref(storage)) for name, storage in storages.items())


def _release_dropped(engine: Any, database: str, collection: str | None) -> None:
    """After a drop (a :data:`~workbook.offline_commands.DROP_LISTENERS` listener): let go of the snapshots
    only the dropped collections held, at once rather than at the next load."""
    _release_unheld()


def _release_unheld() -> int:
    """Let go of the snapshots no database in the engine still holds (see :data:`_holders`); how many."""
    from workbook.offline import offline_server

    tables = offline_server().engine._storage
    released = 0
    with _memory_lock:
        for key in list(_memory):
            held = [
                (db_name, name, ref)
                for db_name, name, ref in _holders.get(key, [])
                if (storage := ref()) is not None and tables.get(db_name, {}).get(name) is storage
            ]
            if held:
                _holders[key] = held
            else:
                del _memory[key]
                _holders.pop(key, None)
                released += 1
        if _last_read and not any(family(key) == _last_read[0][0] for key in _memory):
            _last_read.clear()  # the last shape of that dataset is let go: its table goes with it
    return released


DROP_LISTENERS.append(_release_dropped)


def _memory_copy(state: dict[str, Any]) -> dict[str, Any]:
    """An independent copy of one collection's state: O(1) for the persistent maps."""
    return {
        "_storage": state["_storage"].copy(),
        "_index_data": {name: index.copy() for name, index in state["_index_data"].items()},
        "_indexes": list(state["_indexes"]),
        "_collection_options": copy.deepcopy(state["_collection_options"]),
        "sizes": state.get("sizes"),  # measured at load time (workbook.sizes); read-only
        "public": state.get("public"),  # the documents as pymongo decodes them (engine_reads); read-only
    }


def capture_state(db_name: str, collections: list[str]) -> dict[str, dict[str, Any]] | None:
    """The engine state of ``collections`` in ``db_name`` (None if some state cannot be snapshotted)."""
    from workbook.engine_reads import public_records
    from workbook.offline import offline_server

    engine = offline_server().engine

    async def grab() -> dict[str, dict[str, Any]] | None:
        states = {}
        for name in collections:
            if engine._search_indexes.get(db_name, {}).get(name):
                return None  # search indexes keep caches outside these tables
            for index in engine._index_data.get(db_name, {}).get(name, {}).values():
                if index._expiry_root is not None:
                    return None  # TTL schedules are not captured
            states[name] = _memory_copy(
                {
                    "_storage": engine._storage[db_name][name],
                    "_index_data": engine._index_data.get(db_name, {}).get(name, {}),
                    "_indexes": engine._indexes.get(db_name, {}).get(name, []),
                    "_collection_options": engine._collection_options.get(db_name, {}).get(name, {}),
                }
            )
            # the same version (no await between): decoded once here, or taken from the reads' cache
            states[name]["public"] = public_records(engine, db_name, name)[0]
        return states

    return offline_server().run(grab())


def install_collections(db_name: str, found: Snapshot) -> None:
    """Replace the collections of ``found`` in ``db_name`` with its states (on the engine's own thread)."""
    from workbook.engine_reads import seed_public_records
    from workbook.offline import offline_server
    from workbook.offline_explain import hook_for

    engine = offline_server().engine

    collections = found.collections
    storages: dict[str, Any] = {}

    async def put() -> dict[str, object]:
        versions: dict[str, object] = {}
        for name, state in collections.items():
            fresh = _memory_copy(state)
            versions[name], storages[name] = fresh["_storage"]._values, fresh["_storage"]
            async with engine._get_lock(db_name, name):
                with engine._meta_lock:
                    for table in _STATE_TABLES:
                        getattr(engine, table).setdefault(db_name, {})[name] = fresh[table]
                    engine._collections.setdefault(db_name, set()).add(name)
                if state.get("public") is not None:  # the explain model and the reads decode nothing
                    seed_public_records(engine, db_name, name, state["public"])
        return versions

    installed = offline_server().run(put())
    _hold(found.key, db_name, storages)
    for name, state in collections.items():
        hook_for(engine).writes.bump(db_name, name)  # straight into the engine: no command for the model caches
        if state.get("sizes") is not None:  # these contents have the sizes measured when they were loaded
            seed_offline_sizes(db_name, name, installed[name], state["sizes"], state.get("public"))


# --- files: plain lists and dicts, rebuilt into the engine's persistent maps on read ---------------


def _plain_collection(storage: Any) -> list[tuple[Any, Any]]:
    """A collection's documents in insertion order, as (storage key, encoded payload) pairs."""
    return [(key, getattr(value, "payload", value)) for key, value in storage.items()]


def _plain_index(index: Any) -> tuple[int, list[tuple[Any, list[tuple[int, Any]]]]]:
    """An index map as its next ordinal and, per key, its (ordinal, storage key) members."""
    return index._next_membership_ordinal, [
        (key, sorted((ordinal, member) for member, ordinal in index._bucket_ordinals[key].items()))
        for key in index._buckets
    ]


def _rebuild_collection(items: list[tuple[Any, Any]], sources: Sequence[Any] | None = None) -> Any:
    """A MemoryCollection holding ``items`` (key, payload or stored document) in order, built in one pass
    (as appends would lay it out). With ``sources`` (each payload's document, in order), a payload's
    stored document reads as that document where it decodes to itself (``engine_compat.lazy_stored_class``)."""
    from workbook.engine_compat import memory_storage_internals

    internals = memory_storage_internals()
    _NO_CHUNK = internals._NO_CHUNK
    _ORDER_CHUNK_SIZE = internals._ORDER_CHUNK_SIZE
    MemoryCollection = internals.MemoryCollection
    _OrderChunk = internals._OrderChunk
    from mongoeco.engines.memory import _StoredDocument
    from rpds import HashTrieMap

    if sources is None:
        rows = [(key, item if isinstance(item, _StoredDocument) else _StoredDocument(item)) for key, item in items]
    else:
        from workbook.engine_compat import lazy_stored_class

        lazy = lazy_stored_class()
        rows = [(key, lazy.made(source, payload)) for (key, payload), source in zip(items, sources, strict=True)]
    count = len(rows)
    chunk_count = -(-count // _ORDER_CHUNK_SIZE)
    collection: Any = MemoryCollection()
    positions = Positions(rows)  # the three maps read each key's row: a dict of positions made when first asked
    collection._values = KeyValues(positions)
    collection._ordinals = KeyPositions(positions, None)
    collection._locations = KeyPositions(positions, _ORDER_CHUNK_SIZE)
    chunks: dict[int, Any] = {}
    for chunk in range(chunk_count):
        part = tuple(rows[chunk * _ORDER_CHUNK_SIZE : (chunk + 1) * _ORDER_CHUNK_SIZE])
        previous = chunk - 1 if chunk else _NO_CHUNK
        following = chunk + 1 if chunk + 1 < chunk_count else _NO_CHUNK
        chunks[chunk] = _OrderChunk(previous, following, part, len(part))
    collection._chunks = HashTrieMap(chunks)
    collection._head_chunk = 0 if count else _NO_CHUNK
    collection._tail_chunk = chunk_count - 1 if count else _NO_CHUNK
    collection._next_chunk = chunk_count
    collection._next_ordinal = count
    return collection


@cache
def _node_maker() -> Any:
    """A fast constructor for mongoeco's frozen, slotted treap nodes: the slots set directly (1.7x faster)."""
    from workbook.engine_compat import memory_storage_internals

    node_class = memory_storage_internals()._MembershipNode
    fields = [node_class.__dict__[name].__set__ for name in ("ordinal", "storage_key", "priority", "left", "right")]
    if [f.name for f in dataclasses.fields(node_class)] != ["ordinal", "storage_key", "priority", "left", "right"]:
        return node_class  # the layout moved: use its own constructor
    set_ordinal, set_member, set_priority, set_left, set_right = fields
    new = object.__new__

    def make(ordinal: int, member: Any, priority: int, left: Any, right: Any) -> Any:
        node = new(node_class)
        set_ordinal(node, ordinal)
        set_member(node, member)
        set_priority(node, priority)
        set_left(node, left)
        set_right(node, right)
        return node

    return make


def _treap(members: list[tuple[int, Any]]) -> Any:
    """The membership treap of one index bucket, from members sorted by ordinal (a Cartesian tree).

    One left-to-right pass with a stack holding the tree's right spine (smallest priority at the
    root, as mongoeco's inserts leave it): a node is built, immutable, when it leaves the stack, its
    left child fixed when it entered and its right child the node above it.
    """
    from workbook.engine_compat import memory_storage_internals

    internals = memory_storage_internals()
    _expiry_priority = internals._expiry_priority
    _MembershipNode = _node_maker()

    stack: list[tuple[int, Any, int, Any]] = []  # (priority, ordinal, member, left child)
    for ordinal, member in members:
        priority = _expiry_priority(ordinal)
        last = None
        while stack and stack[-1][0] > priority:
            top_priority, top_ordinal, top_member, top_left = stack.pop()
            last = _MembershipNode(top_ordinal, top_member, top_priority, top_left, last)
        stack.append((priority, ordinal, member, last))
    last = None
    while stack:
        top_priority, top_ordinal, top_member, top_left = stack.pop()
        last = _MembershipNode(top_ordinal, top_member, top_priority, top_left, last)
    return last


@cache
def _bucket_maker() -> Callable[[list[tuple[int, Any]]], tuple[Any, Any, Any]]:
    """A function giving one key's entries in an index map's three tables (its members, their ordinals, their
    membership treap) from its (ordinal, member) list, sorted by ordinal."""
    from rpds import HashTrieMap, HashTrieSet

    from workbook.engine_compat import memory_storage_internals

    _expiry_priority = memory_storage_internals()._expiry_priority
    make_node = _node_maker()
    empty_set: Any = HashTrieSet()
    empty_map: Any = HashTrieMap()

    def values(members: list[tuple[int, Any]]) -> tuple[Any, Any, Any]:
        if len(members) == 1:  # most buckets of a selective index: no treap to arrange
            ordinal, member = members[0]
            return (  # insert: 3x faster than the constructors
                empty_set.insert(member),
                empty_map.insert(member, ordinal),
                make_node(ordinal, member, _expiry_priority(ordinal), None, None),
            )
        return (
            HashTrieSet(member for _, member in members),
            HashTrieMap((member, ordinal) for ordinal, member in members),
            _treap(members),
        )

    return values


def _index_tables(buckets: Any) -> tuple[Any, Any, Any]:
    """An index map's three tables (members, ordinals, membership treaps per key), in one pass over the
    (key, members) buckets."""
    from rpds import HashTrieMap

    values = _bucket_maker()
    members_of, ordinals_of, roots_of = [], [], []
    for key, members in buckets:
        members_set, ordinals, root = values(members)
        members_of.append((key, members_set))
        ordinals_of.append((key, ordinals))
        roots_of.append((key, root))
    return HashTrieMap(members_of), HashTrieMap(ordinals_of), HashTrieMap(roots_of)


_TABLES = ("_buckets", "_bucket_ordinals", "_bucket_order_roots")
"""The index map's tables a lazy map builds on first use (its other fields are set at once)."""


class PendingIndex:
    """One index's buckets from a snapshot or a bulk load, built into the map's tables on first use.

    Shared by a lazy map and its copies, so the tables are built once whichever asks first (they are
    persistent maps: sharing them is what ``MemoryIndexMap.copy`` does anyway). Until something reads
    a table whole, the map holds :class:`LazyTable` views, which answer a write's questions about a few
    keys from the buckets themselves (:meth:`value`).
    """

    __slots__ = ("buckets", "by_key", "lock", "made", "tables")

    def __init__(self, buckets: Any) -> None:
        self.buckets: Any = buckets  # the list of (key, members), or a function making it (:func:`_made`)
        self.tables: tuple[Any, Any, Any] | None = None
        self.by_key: dict[Any, list[tuple[int, Any]]] | None = None  # the buckets given, by key, for a few keys
        self.made: tuple[dict[Any, Any], dict[Any, Any], dict[Any, Any]] = ({}, {}, {})
        self.lock = threading.Lock()

    def views(self) -> tuple[LazyTable, LazyTable, LazyTable]:
        """A map's three tables as views of these buckets with nothing written yet.

        Made for each map that reads them, never kept here: a view holds its ``PendingIndex``, so views
        kept here made a reference cycle, and a load's objects are frozen (:mod:`workbook.gc_pause`),
        where the collector never looks: every index of a dropped database stayed, with its keys.
        """
        from rpds import HashTrieMap

        empty: Any = HashTrieMap()
        return LazyTable(self, 0, empty), LazyTable(self, 1, empty), LazyTable(self, 2, empty)

    def pristine(self, view: Any) -> bool:
        """Whether ``view`` is one of this index's tables with nothing written."""
        return type(view) is LazyTable and view.pending is self and not view.changes

    def build(self) -> tuple[Any, Any, Any]:
        """The three tables (built now if no copy has asked before)."""
        with self.lock:
            if self.tables is None:
                assert self.buckets is not None
                # half a million acyclic nodes and maps that all stay: no collections meanwhile (gc_pause)
                with gc_pause.paused():
                    self.tables = _index_tables(_made(self.buckets))
                self.buckets = self.by_key = None  # not needed again
                self.made = ({}, {}, {})
            return self.tables

    def value(self, table: int, key: Any, default: Any) -> Any:
        """What table number ``table`` holds for ``key`` (``default`` if nothing), made from its bucket alone."""
        tables = self.tables
        if tables is not None:
            return tables[table].get(key, default)
        found = self.made[table].get(key, NOT_HELD)
        if found is not NOT_HELD:
            return found
        with self.lock:
            if self.tables is not None:
                return self.tables[table].get(key, default)
            members = self._members(key)
            if members is None:
                return default
            values = _bucket_maker()(members)
            for made_of, value in zip(self.made, values, strict=True):
                made_of[key] = value
            return values[table]

    def _members(self, key: Any) -> list[tuple[int, Any]] | None:
        """``key``'s (ordinal, member) list, made alone from a file's columns, or found in the buckets given."""
        buckets = self.buckets
        if isinstance(buckets, FileBuckets):
            return buckets.members(key)
        if self.by_key is None:
            self.by_key = dict(_made(buckets))
            self.buckets = self.by_key.items  # what build() needs, without a second copy
        return self.by_key.get(key)

    def untouched(self, index: Any) -> bool:
        """Whether ``index`` still holds exactly these buckets: a lazy map of them, built or not, never written."""
        held = vars(index)
        if held.get("pending") is not self:
            return False
        if not any(table in held for table in _TABLES):
            return True
        return all(self.pristine(held.get(name)) for name in _TABLES) or (
            self.tables is not None
            and all(held.get(name) is built for name, built in zip(_TABLES, self.tables, strict=True))
        )


class LazyTable(MapView):
    """One of a lazy index map's tables, as the ``rpds.HashTrieMap`` it stands for: a write's lookups,
    inserts and removals of a key cost that key's bucket, not the whole table.

    The first write into a restored or bulk-loaded index used to build all three tables whole (0.16-0.19 s
    per index of the 45,000 follows) to change one key. The view answers ``get``, ``[key]`` and ``in``
    from the index's buckets (:meth:`PendingIndex.value`) and a persistent map of the keys written since;
    ``insert`` and ``remove`` return a new view, as the persistent map does. Anything that reads the table
    whole (iterating, ``len``, comparing, copying deeply) gets the table built, with the changes applied,
    once per view. ``MemoryIndexMap`` touches its tables only through these (mongoeco 4.11).
    """

    __slots__ = ("_built", "changes", "pending", "table")

    def __init__(self, pending: PendingIndex, table: int, changes: Any) -> None:
        self.pending, self.table, self.changes = pending, table, changes
        self._built: Any = None

    def _base(self, key: Any) -> Any:
        return self.pending.value(self.table, key, NOT_HELD)

    def insert(self, key: Any, value: Any) -> LazyTable:
        return LazyTable(self.pending, self.table, self.changes.insert(key, value))

    def remove(self, key: Any) -> LazyTable:
        if key not in self:
            raise KeyError(key)
        return LazyTable(self.pending, self.table, self.changes.insert(key, GONE))

    def whole(self) -> Any:
        """The ``HashTrieMap`` this view stands for (built once, with the changes applied)."""
        if self._built is None:
            table = self.pending.build()[self.table]
            for key, value in self.changes.items():
                table = table.discard(key) if value is GONE else table.insert(key, value)
            self._built = table
        return self._built

    def __iter__(self) -> Any:
        return iter(self.whole())

    def __len__(self) -> int:
        return len(self.whole())

    def __eq__(self, other: object) -> bool:
        return self.whole() == (other.whole() if isinstance(other, LazyTable) else other)

    __hash__ = None  # type: ignore[assignment]

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return copy.deepcopy(self.whole(), memo)

    def __getattr__(self, name: str) -> Any:  # keys(), items(), values(), discard()...: the whole table's
        return getattr(self.whole(), name)

    def __repr__(self) -> str:
        return f"LazyTable({self.whole()!r})"


@cache
def _lazy_index_class() -> type[Any]:
    """mongoeco's ``MemoryIndexMap`` whose tables are built from a :class:`PendingIndex` when first read."""
    from workbook.engine_compat import memory_storage_internals

    class LazyIndexMap(memory_storage_internals().MemoryIndexMap):  # type: ignore[misc]
        """An index map restored or bulk-built: its tables wait until the engine first reads them.

        A restored shape's indexes are read by nothing but the engine's own writes and the few
        reads the planner model leaves to it (the model keeps its own keys), so a reload that
        builds them all at once (0.5-0.6 s of parts/embedded's) mostly builds for nobody. mongod
        is lazy the same way: WiredTiger reads an index's pages from disk when a query needs them.
        """

        def __getattr__(self, name: str) -> Any:
            pending = vars(self).get("pending")
            if name not in _TABLES or pending is None:
                raise AttributeError(name)
            for table, view in zip(_TABLES, pending.views(), strict=True):
                self.__dict__.setdefault(table, view)  # a table written meanwhile keeps its new value
            return vars(self)[name]

        def copy(self) -> Any:
            held = vars(self)
            if "pending" in held and not any(table in held for table in _TABLES):
                return lazy_index(held["pending"], self._next_membership_ordinal)  # still O(1), still lazy
            return super().copy()

    return LazyIndexMap


def lazy_index(pending: PendingIndex, next_ordinal: int) -> Any:
    """A ``MemoryIndexMap`` over ``pending``'s buckets, its tables built when first read."""
    index = _lazy_index_class()()
    for table in _TABLES:
        delattr(index, table)  # read through __getattr__ from now on
    index._next_membership_ordinal = next_ordinal
    index.pending = pending
    return index


def _rebuild_index(plain: tuple[int, list[tuple[Any, list[tuple[int, Any]]]]]) -> Any:
    """A MemoryIndexMap with the given buckets and membership order, its tables built on first use."""
    next_ordinal, buckets = plain
    return lazy_index(PendingIndex(buckets), next_ordinal)


def _to_plain(collections: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    def built(storage: Any) -> Any:
        found = BUILT.get(id(storage._values))
        return found if found is not None and found[0] is storage._values else None

    def collection(storage: Any) -> list[tuple[Any, Any]]:
        found = built(storage)
        return found[1] if found is not None else _plain_collection(storage)

    def index(storage: Any, name: str, data: Any) -> Any:
        found = built(storage)
        if found is not None and name in found[2] and found[2][name][0].untouched(data):
            return found[2][name][1]  # the bulk loader's own plain form of these very buckets
        return _plain_index(data)

    def derived(state: dict[str, Any]) -> bool:
        """Whether every payload is the bulk loader's encoding of the very document the reads hold."""
        found, public = built(state["_storage"]), state.get("public")
        return (
            found is not None
            and public is not None
            and len(public) == len(found[3])
            and all(map(operator.is_, public, found[3]))
        )

    return {
        name: {
            "derived": derived(state),
            "_storage": collection(state["_storage"]),
            "_index_data": {i: index(state["_storage"], i, data) for i, data in state["_index_data"].items()},
            "_indexes": state["_indexes"],
            "_collection_options": state["_collection_options"],
            "sizes": state.get("sizes"),
            "public": state.get("public"),
        }
        for name, state in collections.items()
    }


def _from_plain(collections: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    if any(state.get("derived") for state in collections.values()):
        from workbook.engine_compat import lazy_stored_class, payload_encoder, stores_with_document_codec
        from workbook.offline import offline_server

        engine = offline_server().engine
        encode, lazy, shared = payload_encoder(engine), lazy_stored_class(), stores_with_document_codec(engine)
        for state in collections.values():
            if state.get("derived"):  # each payload encoded from its document when the engine first asks for it
                keys = [key for key, _ in state["_storage"]]
                stored = [lazy(document, encode, shared) for document in state["public"]]
                state["_storage"] = list(zip(keys, stored, strict=True))
    return {
        name: {
            "_storage": _rebuild_collection(state["_storage"]),
            "_index_data": {index: _rebuild_index(data) for index, data in state["_index_data"].items()},
            "_indexes": state["_indexes"],
            "_collection_options": state["_collection_options"],
            "sizes": state.get("sizes"),
            "public": state.get("public"),
        }
        for name, state in collections.items()
    }


def _path(key: str) -> Path:
    return cache_dir() / f"snapshot-{key}.bson"


HEADER = b"workbook-snapshot bson"
"""A snapshot file's first line: this, the :data:`FORMAT`, and the SHA-256 of the rest."""

_CHUNK = 5_000
"""Documents, index buckets or ids per BSON document of a snapshot file: columns, so few objects to decode, and
rows small enough that one row's unshared strings (:func:`_decode`) add little to a restore's peak."""

_SCALARS = frozenset({str, int, float, bool, bytes, datetime, ObjectId, type(None)})
"""Types an engine key holds as a plain value (no nested tuples): stored flat, rebuilt without recursion."""


def _encode_fallback(value: Any) -> Any:
    """BSON for the one non-BSON type the engine's keys hold: ``Decimal`` (numbers in index keys)."""
    if isinstance(value, Decimal):
        return Decimal128(value)  # exact or Inexact raised: the round-trip check then keeps no file
    raise TypeError(f"{type(value).__name__} is not stored in a snapshot file")


_CODEC: CodecOptions[dict[str, Any]] = CodecOptions(type_registry=TypeRegistry(fallback_encoder=_encode_fallback))


def _frozen(value: Any) -> Any:
    """An engine key back from BSON: arrays were tuples (keys hold no lists), Decimal128 was Decimal."""
    kind = type(value)
    if kind is list:
        return tuple([_frozen(item) for item in value])
    if kind is Decimal128:
        return value.to_decimal()
    return value


def _index_record(fields: dict[str, Any]) -> Any:
    """mongoeco's index record from its fields, its key pairs tuples again."""
    from mongoeco.types import EngineIndexRecord

    fields = dict(fields)
    fields["key"] = [tuple(pair) for pair in fields["key"]]
    return EngineIndexRecord(**fields)


def _flat_storage(keys: list[Any]) -> bool:
    """Whether every storage key is a (tag, plain value) pair: then stored as two columns."""
    return all(type(k) is tuple and len(k) == 2 and type(k[0]) is str and type(k[1]) in _SCALARS for k in keys)


def _flat_index(keys: list[Any]) -> tuple[int, bool] | None:
    """(width, whether parts need fixing) if every index key is ``width`` (tag, plain value) pairs or None."""
    width = len(keys[0]) if keys else 0
    fix = False
    for key in keys:
        if type(key) is not tuple or len(key) != width:
            return None
        for part in key:
            if part is None:
                fix = True
            elif type(part) is not tuple or len(part) != 2 or type(part[0]) is not str:
                return None
            elif type(part[1]) is Decimal:
                fix = True
            elif type(part[1]) not in _SCALARS:
                return None
    return width, fix


def _sections(plain: dict[str, dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A snapshot's plain form as a table of contents and the BSON documents (columns) it counts, in order."""
    contents: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    publics = {name: state["public"] for name, state in plain.items() if state.get("public") is not None}
    factored = _factored(list(publics.values()))
    if factored is not None:
        table, documents = factored
        publics = dict(zip(publics, documents, strict=True))
        rows.extend({"s": table[start : start + _CHUNK]} for start in range(0, len(table), _CHUNK))
    shared = None if factored is None else len(rows)  # the table's rows come first
    for name, state in plain.items():
        storage = state["_storage"]
        keys = [key for key, _ in storage]
        position = {key: at for at, key in enumerate(keys)}
        flat = _flat_storage(keys)
        chunks = range(0, len(storage), _CHUNK)
        for start in chunks:
            part = storage[start : start + _CHUNK]
            column: dict[str, Any] = (
                {"t": [k[0] for k, _ in part], "i": [k[1] for k, _ in part]} if flat else {"k": [k for k, _ in part]}
            )
            rows.append(column if state.get("derived") else {**column, "v": [payload for _, payload in part]})
        entry: dict[str, Any] = {
            "name": name,
            "chunks": len(chunks),
            "records": [dataclasses.asdict(record) for record in state["_indexes"]],
            "options": state["_collection_options"],
            "indexes": [],
            "sizes": None,
            "public": None,
            "derived": bool(state.get("derived")),
        }
        for index, (next_ordinal, buckets) in state["_index_data"].items():
            layout = _flat_index([key for key, _ in buckets])
            parts = range(0, len(buckets), _CHUNK)
            for start in parts:
                part = buckets[start : start + _CHUNK]
                members = [
                    value for _, group in part for ordinal, member in group for value in (ordinal, position[member])
                ]
                counts = [len(group) for _, group in part]
                row: dict[str, Any] = {"m": _packed(members), "n": None if all(c == 1 for c in counts) else counts}
                if layout is None:
                    row["k"] = [key for key, _ in part]
                else:
                    row["f"] = [
                        value for key, _ in part for p in key for value in (p if p is not None else (None, None))
                    ]
                rows.append(row)
            entry["indexes"].append(
                {
                    "name": index,
                    "next": next_ordinal,
                    "chunks": len(parts),
                    "width": None if layout is None else layout[0],
                    "fix": layout is not None and layout[1],
                }
            )
        sizes = state.get("sizes")
        if sizes is not None:
            ids, measured, index_bytes = sizes
            id_chunks = [ids[i : i + _CHUNK] for i in range(0, len(ids), _CHUNK)]
            entry["sizes"] = {
                "chunks": len(id_chunks),
                "bytes": Binary(np.asarray(measured, dtype="<i8").tobytes()),
                "index_bytes": [[list(fields), count] for fields, count in index_bytes.items()],
            }
            rows.extend({"ids": chunk} for chunk in id_chunks)
        public = publics.get(name)
        if public is not None:
            parts = range(0, len(public), _CHUNK)
            entry["public"] = len(parts)
            rows.extend(_document_row(public[start : start + _CHUNK]) for start in parts)
        contents.append(entry)
    return {"collections": contents, "shared": shared}, rows


def _document_row(documents: list[dict[str, Any]]) -> dict[str, Any]:
    """A chunk of documents as a file row: as columns (``fields``, the field names once, and ``columns``, one list
    of values per field) when every document has the same field names in the same order, else as they are
    (``p``).

    Read back, a column of strings and dates is shared in one ``map`` over it and a column of numbers is not
    walked at all (:func:`_shared_column`), and the documents are zipped together from the columns, where a
    document row walks every field name and value of every document in Python: a generated collection's
    documents mostly have one layout (every chunk of store/embedded, store/referenced, followers/referenced and
    parts/embedded at ``small``).
    """
    fields = list(documents[0]) if documents else []
    if not fields or any(list(document) != fields for document in documents):
        return {"p": documents}
    return {"fields": fields, "columns": [[document[field] for document in documents] for field in fields]}


def _packed(numbers: list[int]) -> bytes:
    """Index members' (ordinal, row) numbers as little-endian int32, or int64 if one is beyond int32: kept as one
    bytes object until the engine first reads the index (:func:`_buckets`), where a list of ints held four
    objects of 28 bytes per member (14 MiB of a restored followers/referenced)."""
    array = np.asarray(numbers, dtype="<i8")
    narrow = array.astype("<i4")
    return bytes([4]) + narrow.tobytes() if np.array_equal(narrow, array) else bytes([8]) + array.tobytes()


def _unpacked(packed: bytes) -> list[int]:
    """The numbers :func:`_packed` packed."""
    return np.frombuffer(packed, dtype="<i4" if packed[0] == 4 else "<i8", offset=1).tolist()


def _fixed_part(tag: Any, value: Any) -> Any:
    """One part of a flat index key back: None where the field was missing, Decimal where it was one."""
    if tag is None:
        return None
    return (tag, value.to_decimal() if type(value) is Decimal128 else value)


def _index_keys(row: dict[str, Any], width: int | None, fix: bool) -> list[Any]:
    """The index keys of one bucket chunk, from its flat column or (unusual keys) one by one."""
    if width is None:
        return [_frozen(key) for key in row["k"]]
    parts = _key_parts(row["f"], fix)
    return list(zip(*[iter(parts)] * width, strict=True)) if width else [() for _ in _unpacked(row["m"])[::2]]


def _key_parts(flat: list[Any], fix: bool) -> list[Any]:
    """The (tag, value) parts of index keys from their flat column (tag, value, tag, value...)."""
    pairs = iter(flat)
    if fix:
        return [_fixed_part(t, v) for t, v in zip(pairs, pairs, strict=True)]
    return list(zip(pairs, pairs, strict=True))


_STRING_COLUMNS = ("t", "i", "f", "ids")
"""A file's columns of type tags, storage key values, flat index key parts and measured ids."""

_PLACE = struct.Struct("<I")
"""A place in a file's table of repeated subdocuments (:func:`_factored`), written where the subdocument was as a
BSON binary of subtype 0: four bytes, little-endian. pymongo decodes that subtype to ``bytes`` in C (a binary of
any other subtype is a ``Binary`` made in Python: a fifth of a parts/embedded restore went into making them)."""


def _factored(publics: list[list[dict[str, Any]]]) -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]] | None:
    """(table, documents): every subdocument that occurs more than once among ``publics`` (each collection's
    documents) put in a table once, and the documents with each occurrence replaced by its place in the
    table (:data:`_PLACE` bytes); None if the data itself holds ``bytes`` (binaries of subtype 0).

    The parts' products embed the same parts: 208,619 subdocuments at ``small``, 26,153 of them distinct,
    and 1.1 of the 1.4 million field names of parts/embedded are in repeats. Decoded from the table, each
    is one object that every document holding it shares (:func:`_share_strings`), so a restore decodes
    and walks a fifth of the field names and holds each distinct subdocument once. The documents are
    only read (mongoeco copies a document before it changes it), as the shared strings are. Equal
    subdocuments are told by their BSON bytes, so only exact equals (types, order) are shared. A table
    entry is written after the subdocuments inside it (their places are smaller), so it decodes whole.
    """
    encode = bson.encode
    counts: dict[bytes, int] = {}
    encoded: dict[int, bytes] = {}
    clash = False

    def visit(value: Any) -> None:
        nonlocal clash
        kind = type(value)
        if kind is dict:
            raw = encoded[id(value)] = encode(value, codec_options=_CODEC)
            counts[raw] = counts.get(raw, 0) + 1
            for item in value.values():
                if type(item) in _FACTORED:
                    visit(item)
        elif kind is list:
            for item in value:
                if type(item) in _FACTORED:
                    visit(item)
        else:  # bytes in the data: they would read as places
            clash = True

    for documents in publics:
        for document in documents:
            for item in document.values():
                if type(item) in _FACTORED:
                    visit(item)
    if clash:
        return None
    table: list[dict[str, Any]] = []
    places: dict[bytes, bytes] = {}

    def rebuilt(value: Any) -> Any:
        kind = type(value)
        if kind is dict:
            raw = encoded[id(value)]
            if counts[raw] > 1:
                place = places.get(raw)
                if place is None:
                    table.append(children(value))
                    place = places[raw] = _PLACE.pack(len(table) - 1)
                return place
            return children(value)
        if kind is list:
            return [rebuilt(item) if type(item) in _FACTORED else item for item in value]
        return value

    def children(document: dict[str, Any]) -> dict[str, Any]:
        return {key: rebuilt(item) if type(item) in _FACTORED else item for key, item in document.items()}

    return table, [[children(document) for document in documents] for documents in publics]


_FACTORED = frozenset({dict, list, bytes})
"""What :func:`_factored` looks into: containers, and ``bytes`` (data it cannot tell from a place)."""


def _share_strings(
    row: dict[str, Any], share: Callable[[Any, Any], Any], table: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """``row`` (one BSON document of a file) with one object per distinct string, taken from ``share``
    (``dict.setdefault`` of a table kept across the file's rows), in its columns and its documents' field
    names and values, and each place in ``table`` (the file's repeated subdocuments, :func:`_factored`)
    replaced by that subdocument; a row of that table (``s``) has its entries appended to ``table``, and a row
    of documents by field (:func:`_document_row`) gets them back as documents (``p``).

    BSON decodes every occurrence as a new string: the type tag of each index key part, an ``_id``
    once in the storage keys, once per index and once in the documents, a user id once per follow,
    every field name of every document, an embedded part's name in every product that uses it.
    Held, they were a third of a restored followers/referenced (50,000 documents) and over half of
    the decoded parts/embedded (178 MiB decoded, 79 MiB shared); equal strings are interchangeable,
    so each is kept once (the columns' lists in place; the documents rebuilt, in the same order, at
    every depth).
    """
    for column in _STRING_COLUMNS:
        values = row.get(column)
        if type(values) is list:
            # never places (table None): bytes in these columns are data
            if column == "f":  # (tag, value) pairs, flat: the tags are strings, the values of any scalar type
                tags, keys = values[0::2], values[1::2]
                values[0::2], values[1::2] = _shared_column(tags, share, None), _shared_column(keys, share, None)
            else:
                row[column] = _shared_column(values, share, None)
    documents = row.get("p")
    if type(documents) is list:
        row["p"] = _shared_list(documents, share, table)
    columns = row.get("columns")
    if type(columns) is list:  # documents of one layout, by field (_document_row)
        fields = [share(field, field) for field in row["fields"]]
        values = [_shared_column(column, share, table) for column in columns]
        row["p"] = [dict(zip(fields, each, strict=True)) for each in zip(*values, strict=True)]
        row["fields"] = row["columns"] = None
    entries = row.get("s")
    if type(entries) is list and table is not None:
        for entry in entries:  # one at a time: an entry refers to those before it
            table.append(_shared_document(entry, share, table))
        row["s"] = None
    return row


_SHARED = frozenset({str, datetime})
"""The values a document's walk takes from the table of one object per distinct value: strings and (naive, as
the file's codec decodes them) dates, immutable and equal only to their own kind. Floats are not: ``0.0`` equals
``-0.0``, and sharing would lose the sign."""

_SHAREABLE = _SHARED | {type(None)}
"""A column of only these is shared in one ``map`` over it (``None`` is equal only to itself)."""


def _shared_column(
    values: list[Any], share: Callable[[Any, Any], Any], table: list[dict[str, Any]] | None
) -> list[Any]:
    """One field's values across a row's documents (or one of a file's columns), shared as :func:`_shared_list`
    shares them: a column of strings and dates in one ``map``, and one with nothing to share or walk into (numbers,
    bools: never shared, as ``1 == 1.0 == True`` and ``0.0 == -0.0``) kept as it was decoded."""
    kinds = set(map(type, values))
    if kinds <= _SHAREABLE:
        return list(map(share, values, values))
    if not kinds & _WALKED:
        return values
    return _shared_list(values, share, table)


_CONTAINERS = (dict, list, bytes)
"""What the sharing walks into (``bytes`` may be a place in the table of repeated subdocuments). Both
comprehensions below test a value inline (a string, a container, or kept) rather than calling one helper per
value: a call per value made the parts/embedded walk about 30% slower."""

_WALKED = _SHARED | frozenset(_CONTAINERS)
"""A column holding none of these has nothing to share or walk into (:func:`_shared_column`)."""


def _shared_document(
    document: dict[str, Any], share: Callable[[Any, Any], Any], table: list[dict[str, Any]] | None
) -> dict[str, Any]:
    """``document`` rebuilt (same order) with its keys and its strings and dates, at every depth, taken from
    ``share``."""
    return {
        share(key, key): share(value, value)
        if type(value) in _SHARED
        else (_shared_container(value, share, table) if type(value) in _CONTAINERS else value)
        for key, value in document.items()
    }


def _shared_list(values: list[Any], share: Callable[[Any, Any], Any], table: list[dict[str, Any]] | None) -> list[Any]:
    return [
        share(value, value)
        if type(value) in _SHARED
        else (_shared_container(value, share, table) if type(value) in _CONTAINERS else value)
        for value in values
    ]


def _shared_container(value: Any, share: Callable[[Any, Any], Any], table: list[dict[str, Any]] | None) -> Any:
    kind = type(value)
    if kind is dict:
        return _shared_document(value, share, table)
    if kind is list:
        return _shared_list(value, share, table)
    if table is not None:  # bytes: a place (a file with bytes in its data has no table)
        return table[_PLACE.unpack(value)[0]]
    return value


def _buckets(
    rows: list[dict[str, Any]], width: int | None, fix: bool, storage_keys: list[Any]
) -> list[tuple[Any, list[tuple[int, Any]]]]:
    """One index's (key, members) buckets from its chunks of a file, each member (ordinal, storage key).

    Made when the engine first reads the index (:class:`PendingIndex`), not at restore: most restored
    indexes are never read by the engine (the planner model keeps its own keys), and their buckets,
    seven objects a key, were the largest part of a restored followers/referenced (50,000 follows).
    """
    buckets: list[tuple[Any, list[tuple[int, Any]]]] = []
    for row in rows:
        keys = _index_keys(row, width, fix)
        numbers = iter(_unpacked(row["m"]))
        members = list(zip(numbers, map(storage_keys.__getitem__, numbers), strict=True))
        if row["n"] is None:
            buckets.extend(zip(keys, ([member] for member in members), strict=True))
        else:
            start = 0
            for key, count in zip(keys, row["n"], strict=True):
                buckets.append((key, members[start : start + count]))
                start += count
    return buckets


class FileBuckets:
    """One restored index's buckets, still in the file's columns: all of them made when the engine builds
    the index's tables (calling it: :func:`_buckets`), or one key's alone (:meth:`members`).

    A write or an equality lookup asks a restored index about a few keys (:meth:`PendingIndex.value`).
    Making every bucket for that held two objects per member: 46 MiB for the 417,000 part lines of
    parts/embedded, to find the products using one part. A dict from each key to its place still held
    35 MiB for the store's 137,000 review keys after one ``run_workload``. What is kept is the keys' hash
    order (:class:`workbook.key_positions.HashOrder`) and four columns of machine integers: each key's row,
    its place in the row, its first member and its member count (28 bytes a key in all). A lookup makes the
    key of each place with its hash from the row and compares, and reads the members from the row's packed
    numbers.
    """

    __slots__ = ("fix", "places", "rows", "storage_keys", "width")

    def __init__(self, rows: list[dict[str, Any]], width: int | None, fix: bool, storage_keys: list[Any]) -> None:
        self.rows, self.width, self.fix, self.storage_keys = rows, width, fix, storage_keys
        self.places: tuple[HashOrder, array, array, array, array] | None = None

    def __call__(self) -> list[tuple[Any, list[tuple[int, Any]]]]:
        return _buckets(self.rows, self.width, self.fix, self.storage_keys)

    def _places(self) -> tuple[HashOrder, array, array, array, array]:
        """The keys' hash order (:class:`workbook.key_positions.HashOrder`), and in file order each key's row, its
        number in the row, its first member in the row and its member count."""
        if self.places is None:
            hashes = array("q")  # machine integers as they are made, not an int object each (5 of them a key)
            rows, numbers, starts, counts = array("i"), array("i"), array("i"), array("i")
            for at, row in enumerate(self.rows):
                keys = _index_keys(row, self.width, self.fix)
                hashes.extend(map(hash, keys))
                rows.extend(itertools.repeat(at, len(keys)))
                numbers.extend(range(len(keys)))
                sizes = [1] * len(keys) if row["n"] is None else row["n"]
                counts.extend(sizes)
                starts.extend(itertools.accumulate(sizes, initial=0))
                starts.pop()  # accumulate gives one start past the last bucket
            self.places = (HashOrder(hashes), rows, numbers, starts, counts)
        return self.places

    def _key(self, row: dict[str, Any], number: int) -> Any:
        """Key number ``number`` of ``row``, as :func:`_index_keys` makes it."""
        width = self.width
        if width is None:
            return _frozen(row["k"][number])
        if not width:
            return ()
        return tuple(_key_parts(row["f"][2 * width * number : 2 * width * (number + 1)], self.fix))

    def members(self, key: Any) -> list[tuple[int, Any]] | None:
        """``key``'s (ordinal, storage key) members, or None if the index holds no such key."""
        order, rows, numbers, starts, counts = self._places()
        for place in reversed(order.places(hash(key))):  # a later bucket of the same key wins, as in a dict
            row = self.rows[rows[place]]
            if self._key(row, numbers[place]) == key:
                packed = row["m"]
                start, count = starts[place], counts[place]
                values = np.frombuffer(packed, dtype="<i4" if packed[0] == 4 else "<i8", offset=1)
                pairs = iter(values[2 * start : 2 * (start + count)].tolist())
                return list(zip(pairs, map(self.storage_keys.__getitem__, pairs), strict=True))
        return None


def _made(buckets: Any) -> list[tuple[Any, list[tuple[int, Any]]]]:
    """An index's buckets: a list as given, or made now from a file's chunks (:func:`_buckets`)."""
    return buckets() if callable(buckets) else buckets


def _from_sections(contents: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The plain form back from a table of contents and its documents (the inverse of :func:`_sections`)."""
    plain: dict[str, dict[str, Any]] = {}
    at = contents["shared"] or 0  # the table of repeated subdocuments, put in the documents as they were decoded
    for entry in contents["collections"]:
        storage: list[tuple[Any, Any]] = []
        for row in rows[at : at + entry["chunks"]]:
            keys = list(zip(row["t"], row["i"], strict=True)) if "t" in row else [_frozen(key) for key in row["k"]]
            storage.extend(zip(keys, row["v"] if "v" in row else [None] * len(keys), strict=True))
        at += entry["chunks"]
        storage_keys = [key for key, _ in storage]
        index_data = {}
        for index in entry["indexes"]:
            part = rows[at : at + index["chunks"]]  # made into buckets when the engine first reads the index
            at += index["chunks"]
            buckets = FileBuckets(part, index["width"], index["fix"], storage_keys)
            index_data[index["name"]] = (index["next"], buckets)
        sizes = None
        if entry["sizes"] is not None:
            chunks = rows[at : at + entry["sizes"]["chunks"]]
            at += entry["sizes"]["chunks"]
            sizes = (
                [value for chunk in chunks for value in chunk["ids"]],
                np.frombuffer(entry["sizes"]["bytes"], dtype="<i8").astype("int64"),
                {tuple(fields): count for fields, count in entry["sizes"]["index_bytes"]},
            )
        public = None
        if entry.get("public") is not None:
            public = [document for row in rows[at : at + entry["public"]] for document in row["p"]]
            at += entry["public"]
        plain[entry["name"]] = {
            "derived": bool(entry.get("derived")) and public is not None,
            "public": public,
            "_storage": storage,
            "_index_data": index_data,
            "_indexes": [_index_record(record) for record in entry["records"]],
            "_collection_options": entry["options"],
            "sizes": sizes,
        }
    if at != len(rows):
        raise ValueError("the file holds more documents than its contents list")
    return plain


def _same_plain(left: dict[str, dict[str, Any]], right: dict[str, dict[str, Any]]) -> bool:
    """Whether two plain forms are equal (sizes' arrays compared by value)."""
    for name in left.keys() | right.keys():
        if name not in left or name not in right:
            return False
        one, other = left[name], right[name]
        if bool(one.get("derived")) != bool(other.get("derived")):
            return False
        if one.get("derived"):  # payloads derived from the documents compared below: compare their keys
            if [key for key, _ in one["_storage"]] != [key for key, _ in other["_storage"]]:
                return False
        elif one["_storage"] != other["_storage"]:
            return False
        if {i: (n, _made(b)) for i, (n, b) in one["_index_data"].items()} != {
            i: (n, _made(b)) for i, (n, b) in other["_index_data"].items()
        }:
            return False
        for table in ("_indexes", "_collection_options"):
            if one[table] != other[table]:
                return False
        if (one["sizes"] is None) != (other["sizes"] is None):
            return False
        if one.get("public") != other.get("public"):
            return False
        if one["sizes"] is not None:
            (ids, measured, entries), (ids2, measured2, entries2) = one["sizes"], other["sizes"]
            if ids != ids2 or dict(entries) != entries2 or not np.array_equal(measured, measured2):
                return False
    return True


def _encode(snapshot: Snapshot, plain: dict[str, dict[str, Any]]) -> bytes:
    """A snapshot file's body: one BSON document of metadata and contents, then the rows it counts."""
    contents, rows = _sections(plain)
    meta = {"format": FORMAT, "key": snapshot.key, "data_hash": snapshot.data_hash, "report": snapshot.report}
    encode = bson.encode
    return b"".join(
        [encode({**meta, **contents}, codec_options=_CODEC), *(encode(r, codec_options=_CODEC) for r in rows)]
    )


def _decode(
    body: bytes | memoryview, values: dict[Any, Any] | None = None
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """(metadata, plain form) from a file's body: data only, nothing in it is run. Its strings and dates are
    taken from ``values`` (one object per distinct value, added to as it reads: :func:`_sibling_values`), else
    from a table of the file's own.

    The rows are decoded one at a time and each has its strings shared (:func:`_share_strings`) before
    the next is decoded: decoded all at once, every row's unshared strings were alive together beside
    their shared copies, the peak of a restore (parts/embedded at ``small``: 178 MiB of decoded rows).
    """
    documents = bson.decode_iter(body)
    meta = next(documents, None)
    if meta is None:
        raise ValueError("empty snapshot file")
    shared: dict[Any, Any] = {} if values is None else values
    table: list[dict[str, Any]] | None = None if meta.get("shared") is None else []  # None: bytes are only data
    return meta, _from_sections(meta, [_share_strings(row, shared.setdefault, table) for row in documents])


def check_cache_folder(folder: Path) -> None:
    """Refuse a cache folder owned by another user or writable by group or others (their files would be loaded)."""
    try:
        status = folder.stat()
    except FileNotFoundError:
        return
    owner = getattr(os, "getuid", lambda: status.st_uid)()
    loose = status.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    if status.st_uid != owner or loose:
        problem = "is owned by another user" if status.st_uid != owner else "can be written by other users"
        raise CacheFolderError(
            f"The snapshot cache folder {folder} {problem}, so a snapshot in it could have been put there by "
            "someone else; the workbench does not load it.",
            fix=f"run `chmod go-w {folder}` (if it is yours), or set WORKBOOK_CACHE_DIR to a folder only you "
            "can write, or WORKBOOK_SNAPSHOTS=0 to load without the cache.",
        )


def remove_leftovers(folder: Path | None = None) -> int:
    """Remove ``.tmp-*`` files that a kill or a full disk left mid-write; how many were removed.

    Only files older than a minute go, so another kernel's write in progress is not cut short.
    """
    folder = cache_dir() if folder is None else folder
    removed = 0
    now = time.time()
    try:
        leftovers = list(folder.glob(".tmp-*"))
    except OSError:
        return 0
    for path in leftovers:
        try:
            if now - path.stat().st_mtime > _LEFTOVER_AGE:
                path.unlink()
                removed += 1
        except OSError:
            continue
    return removed


_LEFTOVER_AGE = 60.0
"""Seconds after which a ``.tmp-*`` file is a leftover, not another kernel's write in progress."""

OTHER_VERSIONS_KEPT = 1
"""Besides the running code's own files, how many other code versions' snapshots stay in the folder:
the most recently written one (a second checkout or the version before an upgrade), not every one."""


def remove_outdated(folder: Path | None = None, current: str | None = None) -> int:
    """Remove snapshot files of code versions other than ``current`` (this code's) and the
    :data:`OTHER_VERSIONS_KEPT` most recently written others; how many were removed.

    A file's key ends with the code version it was made by (:func:`snapshot_key`), and no other
    code reads it: without this, every upgrade of the workbench or the engine left a whole set
    (about 60 MB for the store's three shapes at ``small``) that nothing would open again. Only
    ``snapshot-*.bson`` files go; anything else in the folder is left alone.
    """
    folder = cache_dir() if folder is None else folder
    current = code_version() if current is None else current
    newest: dict[str, float] = {}
    files: dict[str, list[Path]] = {}
    try:
        for path in folder.glob("snapshot-*.bson"):
            version = path.stem.rpartition("-")[2]
            if version != current:
                files.setdefault(version, []).append(path)
                newest[version] = max(newest.get(version, 0.0), path.stat().st_mtime)
    except OSError:
        return 0
    removed = 0
    for version in sorted(newest, key=newest.__getitem__, reverse=True)[OTHER_VERSIONS_KEPT:]:
        for path in files[version]:
            try:
                path.unlink()
                removed += 1
            except OSError:
                continue
    return removed


_cleaned: set[Path] = set()


def _prepare_folder(folder: Path) -> None:
    """Once per folder per process: refuse it if others can write it, then remove leftovers."""
    check_cache_folder(folder)
    if folder not in _cleaned:
        remove_leftovers(folder)
        _cleaned.add(folder)


def write_soon(snapshot: Snapshot) -> threading.Thread | None:
    """Write ``snapshot``'s file on a thread of its own; :func:`read` of its key, and exit, wait for it.

    A load's file serves only the next process (this one keeps the snapshot in memory), so the
    learner need not wait for it: encoding, the round-trip check and the write were 0.9-1.3 s of
    the store's and the parts' first loads at ``small``. The plain form is taken now, while
    :data:`BUILT` still holds this load's; the rest reads only that. The thread is not a daemon:
    the interpreter joins it before exiting, so a kernel that is shut down still leaves the file.
    None if the cache folder cannot be made.
    """
    path = _path(snapshot.key)  # the cache folder as it is now
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:  # a read-only home still loads, only without the cache
        return None
    _prepare_folder(path.parent)  # a folder others can write is refused here, in the learner's cell
    plain = _to_plain(snapshot.collections)
    thread = threading.Thread(
        target=_write_plain, args=(snapshot, plain, path), name=f"workbook-snapshot-{snapshot.key[:12]}"
    )
    with _writers_lock:
        earlier = _writers.get(snapshot.key)
        _writers[snapshot.key] = thread
    if earlier is not None:
        earlier.join()  # the same key again: one writer at a time, the newest last
    thread.start()
    return thread


def flush() -> None:
    """Wait until every snapshot file this process started writing is written (or given up)."""
    with _writers_lock:
        pending = list(_writers.values())
    for thread in pending:
        thread.join()


def _wait_for_writer(key: str) -> None:
    with _writers_lock:
        thread = _writers.get(key)
    if thread is not None and thread is not threading.current_thread():
        thread.join()


_writers: dict[str, threading.Thread] = {}
"""The latest file writer started per snapshot key (finished ones stay; joining them is instant)."""
_writers_lock = threading.Lock()


def _write_plain(snapshot: Snapshot, plain: dict[str, dict[str, Any]], path: Path) -> Path | None:
    """Write ``plain`` (``snapshot``'s plain form) to ``path`` atomically, header and SHA-256 first; None
    if it cannot. The file is written only if decoding it gives back exactly what was captured (a value
    BSON would change, such as a microsecond in an index key, keeps the snapshot in memory only)."""
    try:
        body = _encode(snapshot, plain)
        if not _same_plain(_decode(body)[1], plain):
            return None
    except (TypeError, ValueError, KeyError, OverflowError, ArithmeticError, bson.errors.BSONError):
        return None
    handle = None
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _prepare_folder(path.parent)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".tmp-", delete=False) as handle:
            handle.write(HEADER + b" %d " % FORMAT + hashlib.sha256(body).hexdigest().encode() + b"\n")
            handle.write(body)
        os.replace(handle.name, path)
    except OSError:  # a read-only home or a full disk still loads, only without the cache
        if handle is not None:
            Path(handle.name).unlink(missing_ok=True)
        return None
    remove_outdated(path.parent)  # on this writer's thread: the learner does not wait for it
    return path


def file_exists(key: str) -> bool:
    """Whether the cache folder holds a file for ``key`` (not read: :func:`read` checks it when a load asks)."""
    _wait_for_writer(key)
    return _path(key).is_file()


def read(key: str) -> Snapshot | None:
    """The snapshot stored under ``key``, or None if there is none or it is damaged or stale (then removed).

    The file's bytes are read once and its body is a view of them, not a copy; they are let go as soon as
    the rows are decoded, before the engine's structures are built from them: a restore of
    followers/hybrid (a 23 MB file) held the file twice over until it returned.
    """
    _wait_for_writer(key)  # this process's own write of it, if one is under way
    path = _path(key)
    _prepare_folder(path.parent)
    try:
        raw = [path.read_bytes()]  # in a list, so the decode below can let go of the only reference
    except OSError:
        return None
    with gc_pause.paused():  # a million new objects would set off full collections over the whole heap
        try:
            meta, plain = _checked(key, raw)
            return Snapshot(key, meta["data_hash"], meta["report"], _from_plain(plain))
        except Exception:  # damaged, stale or from another engine version: rebuild by loading
            path.unlink(missing_ok=True)
            return None


def _checked(key: str, raw: list[bytes]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """(metadata, plain form) of a file's bytes (``raw``'s one item, taken out and let go once decoded), or
    ValueError if they are damaged or stale; once they are checked, its strings and dates are shared with the
    shapes of its dataset held (:func:`_sibling_values`)."""
    data = raw.pop()
    newline = data.index(b"\n")
    body = memoryview(data)[newline + 1 :]
    expected = HEADER + b" %d " % FORMAT + hashlib.sha256(body).hexdigest().encode()
    if data[:newline] != expected:
        raise ValueError("another format, or damaged")
    meta, plain = _decode(body, _sibling_values(key))  # BSON: data only
    if meta.get("format") != FORMAT or meta.get("key") != key:
        raise ValueError("stale format")
    return meta, plain


# --- what load() calls ------------------------------------------------------------------------------


def _report_fields(report: LoadReport) -> dict[str, Any]:
    return {
        **{field: getattr(report, field) for field in ("dataset", "scale", "seed", "shape")},
        "collections": [vars(c).copy() for c in report.collections],
        "rejected": [vars(r).copy() for r in report.rejected],
        "seconds": report.seconds,
    }


def data_hash(dataset: Dataset | str) -> str | None:
    """The :func:`fingerprint` a load of ``dataset`` is checked against (None for a name, or with snapshots off).

    A load takes it once and hands it to :func:`find` and :func:`remember`: it walks every document.
    """
    return None if isinstance(dataset, str) or not enabled() else fingerprint(dataset)


def find(dataset: Dataset | str, shape: str, *, scale: str, seed: int, hashed: str | None = None) -> Snapshot | None:
    """The snapshot of this load, from this process or the cache folder, else None.

    ``dataset`` given by name is generated by a deterministic generator, so the key alone decides;
    a :class:`Dataset` object must also hash to the data the snapshot was taken from (``hashed``, its
    :func:`data_hash` if the caller has taken it already).
    """
    if not enabled():
        return None
    expected = None
    if isinstance(dataset, str):
        name = dataset
    else:
        name, scale, seed = dataset.name, dataset.scale, dataset.seed
        expected = hashed if hashed is not None else fingerprint(dataset)
    key = snapshot_key(name, scale, seed, shape)
    _release_unheld()  # before a load: what a dropped database's snapshot held is free for this one
    with _memory_lock:
        found = _memory.get(key)
    if found is None:
        found = read(key)
        if found is None:
            return None
        with _memory_lock:
            _memory[key] = found
    if expected is not None and expected != found.data_hash:
        return None  # the learner changed the documents: load them for real
    return found


def remember(dataset: Dataset, shape: str, report: LoadReport, hashed: str | None = None) -> None:
    """After a real load: keep its state in this process and write it to the cache folder (``hashed``:
    the dataset's :func:`data_hash`, when the load has taken it already)."""
    if report.rejected:
        return
    collections = [c.collection for c in report.collections]
    remember_collections(dataset, shape, report.database, collections, _report_fields(report), hashed)


def remember_collections(
    dataset: Dataset,
    shape: str,
    database: str,
    collections: list[str],
    report: dict[str, Any],
    hashed: str | None = None,
) -> None:
    """Keep ``collections`` of ``database``, as ``dataset`` stored in ``shape`` left them, in this process and
    in the cache folder, so that :func:`find` gives them back (``report``: what the restore will report)."""
    if not enabled():
        return
    from workbook.connection import client_for
    from workbook.offline import offline_server

    db = client_for(None)[database]
    measured = {name: offline_size_state(db, name) for name in collections}
    states = capture_state(database, collections)
    if states is None:
        return
    for name, state in states.items():
        sizes = measured[name]
        if sizes is not None and sizes[0] is state["_storage"]._values:  # unchanged since they were measured
            state["sizes"] = sizes[1:]  # ids, bytes, index entry bytes: plain data, kept with the snapshot
    key = snapshot_key(dataset.name, dataset.scale, dataset.seed, shape)
    data = hashed if hashed is not None else fingerprint(dataset)
    snapshot = Snapshot(key, data, report, states)
    with _memory_lock:
        _memory[key] = snapshot
    tables = offline_server().engine._storage.get(database, {})
    _hold(key, database, {name: tables[name] for name in collections if name in tables})
    write_soon(snapshot)


def forget() -> None:
    """Drop this process's snapshots (files stay; delete the cache folder to remove them)."""
    with _memory_lock:
        _memory.clear()
        _holders.clear()
        _last_read.clear()

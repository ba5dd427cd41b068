"""Snapshots of loaded shapes on the offline default: load once, restore in well under a second.

The datasets are deterministic, so the engine state a :func:`workbook.load` leaves behind depends
only on (dataset, scale, seed, shape) and the code that generated, shaped and stored it. After a
load on the offline default this module keeps that state:

- in this process, as O(1) copies of mongoeco's persistent (HAMT) collections and index maps, so a
  repeated load costs a few dictionary assignments;
- on this machine, as a pickle in the workbench's cache folder (``WORKBOOK_CACHE_DIR``, else
  ``$XDG_CACHE_HOME/workbook``, else ``~/.cache/workbook``; never inside the repository), named
  by a key that hashes the package's source and the engine's version and verified by a SHA-256
  of its bytes, so a stale or damaged file is ignored and rebuilt by the next load.

Set ``WORKBOOK_SNAPSHOTS=0`` to switch both off. Real MongoDB servers are never snapshotted.
The engine's internals are read here, not patched: ``mongoeco`` is pinned exactly in
pyproject.toml, and tests/test_snapshot.py fails loudly if its storage layout changes.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import os
import pickle
import tempfile
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbook import gc_pause
from workbook.sizes import offline_size_state, seed_offline_sizes

if TYPE_CHECKING:
    from workbook.datasets import Dataset
    from workbook.loaded import LoadReport

FORMAT = 1
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
    """A quick content hash of a generated dataset (pickled documents; same process or machine only)."""
    return hashlib.blake2b(pickle.dumps(dataset.collections, protocol=5), digest_size=16).hexdigest()


def snapshot_key(dataset: str, scale: str, seed: int, shape: str) -> str:
    """The name a snapshot is stored under: the load's arguments and the code that served it."""
    return f"{dataset}-{scale}-{seed}-{shape}-{code_version()}"


@dataclass
class Snapshot:
    """One loaded shape: the engine state of its collections, its load report and its data's hash."""

    key: str
    data_hash: str
    report: dict[str, Any]
    collections: dict[str, dict[str, Any]]


_memory: dict[str, Snapshot] = {}
_memory_lock = threading.Lock()


def _memory_copy(state: dict[str, Any]) -> dict[str, Any]:
    """An independent copy of one collection's state: O(1) for the persistent maps."""
    return {
        "_storage": state["_storage"].copy(),
        "_index_data": {name: index.copy() for name, index in state["_index_data"].items()},
        "_indexes": list(state["_indexes"]),
        "_collection_options": copy.deepcopy(state["_collection_options"]),
        "sizes": state.get("sizes"),  # measured at load time (workbook.sizes); read-only
    }


def capture(db_name: str, collections: list[str]) -> dict[str, dict[str, Any]] | None:
    """The engine state of ``collections`` in ``db_name`` (None if some state cannot be snapshotted)."""
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
        return states

    return offline_server().run(grab())


def install(db_name: str, collections: dict[str, dict[str, Any]]) -> None:
    """Replace ``collections`` in ``db_name`` with snapshot states (on the engine's own thread)."""
    from workbook.explaining.native import hook_for
    from workbook.offline import offline_server

    engine = offline_server().engine

    async def put() -> dict[str, object]:
        versions: dict[str, object] = {}
        for name, state in collections.items():
            fresh = _memory_copy(state)
            versions[name] = fresh["_storage"]._values
            async with engine._get_lock(db_name, name):
                with engine._meta_lock:
                    for table in _STATE_TABLES:
                        getattr(engine, table).setdefault(db_name, {})[name] = fresh[table]
                    engine._collections.setdefault(db_name, set()).add(name)
        return versions

    installed = offline_server().run(put())
    for name, state in collections.items():
        hook_for(engine).writes.bump(db_name, name)  # straight into the engine: no command for the model caches
        if state.get("sizes") is not None:  # these contents have the sizes measured when they were loaded
            seed_offline_sizes(db_name, name, installed[name], state["sizes"])


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


def _rebuild_collection(items: list[tuple[Any, Any]]) -> Any:
    """A MemoryCollection holding ``items`` in order, built in one pass (as appends would lay it out)."""
    from workbook.engine_compat import memory_storage_internals

    internals = memory_storage_internals()
    _NO_CHUNK = internals._NO_CHUNK
    _ORDER_CHUNK_SIZE = internals._ORDER_CHUNK_SIZE
    MemoryCollection = internals.MemoryCollection
    _OrderChunk = internals._OrderChunk
    from mongoeco.engines.memory import _StoredDocument
    from rpds import HashTrieMap

    rows = [(key, _StoredDocument(payload)) for key, payload in items]
    count = len(rows)
    chunk_count = -(-count // _ORDER_CHUNK_SIZE)
    collection: Any = MemoryCollection()
    collection._values = HashTrieMap(rows)
    collection._ordinals = HashTrieMap((key, position) for position, (key, _) in enumerate(rows))
    collection._locations = HashTrieMap(
        (key, (position // _ORDER_CHUNK_SIZE, position % _ORDER_CHUNK_SIZE)) for position, (key, _) in enumerate(rows)
    )
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


def _rebuild_index(plain: tuple[int, list[tuple[Any, list[tuple[int, Any]]]]]) -> Any:
    """A MemoryIndexMap with the given buckets and membership order (one pass over the buckets)."""
    from workbook.engine_compat import memory_storage_internals

    internals = memory_storage_internals()
    MemoryIndexMap = internals.MemoryIndexMap
    _expiry_priority = internals._expiry_priority
    make_node = _node_maker()
    from rpds import HashTrieMap, HashTrieSet

    next_ordinal, buckets = plain
    members_of, ordinals_of, roots_of = [], [], []
    empty_set: Any = HashTrieSet()
    empty_map: Any = HashTrieMap()
    for key, members in buckets:
        if len(members) == 1:  # most buckets of a selective index: no treap to arrange
            ordinal, member = members[0]
            members_of.append((key, empty_set.insert(member)))  # insert: 3x faster than constructors
            ordinals_of.append((key, empty_map.insert(member, ordinal)))
            roots_of.append((key, make_node(ordinal, member, _expiry_priority(ordinal), None, None)))
            continue
        members_of.append((key, HashTrieSet(member for _, member in members)))
        ordinals_of.append((key, HashTrieMap((member, ordinal) for ordinal, member in members)))
        roots_of.append((key, _treap(members)))
    index: Any = MemoryIndexMap()
    index._buckets = HashTrieMap(members_of)
    index._bucket_ordinals = HashTrieMap(ordinals_of)
    index._bucket_order_roots = HashTrieMap(roots_of)
    index._next_membership_ordinal = next_ordinal
    return index


def _to_plain(collections: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    from workbook.bulkload import BUILT

    def built(storage: Any) -> Any:
        found = BUILT.get(id(storage._values))
        return found if found is not None and found[0] is storage._values else None

    def collection(storage: Any) -> list[tuple[Any, Any]]:
        found = built(storage)
        return found[1] if found is not None else _plain_collection(storage)

    def index(storage: Any, name: str, data: Any) -> Any:
        found = built(storage)
        if found is not None and name in found[2] and found[2][name][0] is data._buckets:
            return found[2][name][1]  # the bulk loader's own plain form of these very buckets
        return _plain_index(data)

    return {
        name: {
            "_storage": collection(state["_storage"]),
            "_index_data": {i: index(state["_storage"], i, data) for i, data in state["_index_data"].items()},
            "_indexes": state["_indexes"],
            "_collection_options": state["_collection_options"],
            "sizes": state.get("sizes"),
        }
        for name, state in collections.items()
    }


def _from_plain(collections: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        name: {
            "_storage": _rebuild_collection(state["_storage"]),
            "_index_data": {index: _rebuild_index(data) for index, data in state["_index_data"].items()},
            "_indexes": state["_indexes"],
            "_collection_options": state["_collection_options"],
            "sizes": state.get("sizes"),
        }
        for name, state in collections.items()
    }


def _path(key: str) -> Path:
    return cache_dir() / f"snapshot-{key}.pickle"


def write(snapshot: Snapshot) -> Path | None:
    """Write ``snapshot`` to the cache folder atomically, with its SHA-256 first; None if it cannot."""
    body = pickle.dumps(
        (FORMAT, snapshot.key, snapshot.data_hash, snapshot.report, _to_plain(snapshot.collections)), protocol=5
    )
    path = _path(snapshot.key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".tmp-", delete=False) as handle:
            handle.write(hashlib.sha256(body).hexdigest().encode() + b"\n")
            handle.write(body)
        os.replace(handle.name, path)
    except OSError:
        return None  # a read-only home still loads, only without the cache
    return path


def read(key: str) -> Snapshot | None:
    """The snapshot stored under ``key``, or None if there is none or it is damaged or stale (then removed)."""
    path = _path(key)
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    digest, _, body = raw.partition(b"\n")
    with gc_pause.paused():  # a million new objects would set off full collections over the whole heap
        return _parse(key, path, digest, body)


def _parse(key: str, path: Path, digest: bytes, body: bytes) -> Snapshot | None:
    """The snapshot in a file's bytes, or None (and the file removed) if damaged or stale."""
    try:
        if hashlib.sha256(body).hexdigest().encode() != digest:
            raise ValueError("checksum mismatch")
        file_format, stored_key, data_hash, report, collections = pickle.loads(body)  # our own file, hash-checked
        if file_format != FORMAT or stored_key != key:
            raise ValueError("stale format")
        return Snapshot(key, data_hash, report, _from_plain(collections))
    except Exception:  # damaged, stale or from another engine version: rebuild by loading
        path.unlink(missing_ok=True)
        return None


# --- what load() calls ------------------------------------------------------------------------------


def _report_fields(report: LoadReport) -> dict[str, Any]:
    return {
        **{field: getattr(report, field) for field in ("dataset", "scale", "seed", "shape")},
        "collections": [vars(c).copy() for c in report.collections],
        "rejected": [vars(r).copy() for r in report.rejected],
        "seconds": report.seconds,
    }


def find(dataset: Dataset | str, shape: str, *, scale: str, seed: int) -> Snapshot | None:
    """The snapshot of this load, from this process or the cache folder, else None.

    ``dataset`` given by name is generated by a deterministic generator, so the key alone decides;
    a :class:`Dataset` object must also hash to the data the snapshot was taken from.
    """
    if not enabled():
        return None
    data_hash = None
    if isinstance(dataset, str):
        name = dataset
    else:
        name, scale, seed, data_hash = dataset.name, dataset.scale, dataset.seed, fingerprint(dataset)
    key = snapshot_key(name, scale, seed, shape)
    with _memory_lock:
        found = _memory.get(key)
    if found is None:
        found = read(key)
        if found is None:
            return None
        with _memory_lock:
            _memory[key] = found
    if data_hash is not None and data_hash != found.data_hash:
        return None  # the learner changed the documents: load them for real
    return found


def remember(dataset: Dataset, shape: str, report: LoadReport) -> None:
    """After a real load: keep its state in this process and write it to the cache folder."""
    if not enabled() or report.rejected:
        return
    from workbook.connection import client_for

    db = client_for(None)[report.database]
    measured = {c.collection: offline_size_state(db, c.collection) for c in report.collections}
    collections = capture(report.database, [c.collection for c in report.collections])
    if collections is None:
        return
    for name, state in collections.items():
        sizes = measured[name]
        if sizes is not None and sizes[0] is state["_storage"]._values:  # unchanged since they were measured
            state["sizes"] = sizes[1:]  # ids, bytes, index entry bytes: plain data, kept with the snapshot
    key = snapshot_key(dataset.name, dataset.scale, dataset.seed, shape)
    snapshot = Snapshot(key, fingerprint(dataset), _report_fields(report), collections)
    with _memory_lock:
        _memory[key] = snapshot
    write(snapshot)


def forget() -> None:
    """Drop this process's snapshots (files stay; delete the cache folder to remove them)."""
    with _memory_lock:
        _memory.clear()

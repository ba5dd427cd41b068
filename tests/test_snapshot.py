"""Snapshots of loaded shapes: a restored load is the same data, indexes and plans as a real one."""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import bson
import pandas as pd
import pytest
from pymongo.database import Database

import workbook
from tests.conftest import fingerprint as database_fingerprint
from workbook import snapshot
from workbook.errors import CacheFolderError
from workbook.offline import offline_server


def fingerprint(client: object, name: str) -> str:
    """The database's fingerprint without the load record (its token and heartbeat differ per load)."""
    from pymongo import MongoClient

    from workbook.loaded import MARKER_COLLECTION

    assert isinstance(client, MongoClient)
    scratch = f"{name}_cmp"
    client.drop_database(scratch)
    for collection in client[name].list_collection_names():
        if collection != MARKER_COLLECTION:
            documents = list(client[name][collection].find({}, sort=[("_id", 1)]))
            if documents:
                client[scratch][collection].insert_many(documents)
            for index in client[name][collection].list_indexes():
                if index["name"] != "_id_":
                    keys = list(index["key"].items())
                    options = {k: v for k, v in index.items() if k not in ("key", "v", "ns")}
                    client[scratch][collection].create_index(keys, **options)
    digest = database_fingerprint(client, scratch)
    client.drop_database(scratch)
    return digest


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty cache folder and no snapshots in memory."""
    monkeypatch.setenv("WORKBOOK_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("WORKBOOK_SNAPSHOTS", raising=False)
    snapshot.forget()
    yield tmp_path
    snapshot.flush()  # no writer of this test's files left running into the next test
    snapshot.forget()


def _db(tag: str) -> Database:
    return workbook.connect(database=f"snap{tag}{uuid.uuid4().hex[:6]}", quiet=True)


@pytest.mark.parametrize("dataset", ["store", "followers", "parts"])
def test_restored_load_has_the_same_documents_and_indexes(cache: Path, dataset: str) -> None:
    data = workbook.generate(dataset, "tiny", 7)
    first, second, third = _db("a"), _db("b"), _db("c")
    try:
        loaded = workbook.load(data, "hybrid", first, progress=False)
        snapshot.flush()  # the file is written on a thread of its own
        assert list(cache.glob("snapshot-*.bson")), "a real load writes its snapshot"
        from_memory = workbook.load(data, "hybrid", second, progress=False)
        snapshot.forget()
        from_disk = workbook.load(dataset, "hybrid", third, scale="tiny", progress=False)
        expected = fingerprint(first.client, first.name)
        assert fingerprint(second.client, second.name) == expected
        assert fingerprint(third.client, third.name) == expected
        assert from_memory.to_frame().equals(loaded.to_frame())
        assert from_disk.to_frame().equals(loaded.to_frame())
    finally:
        for db in (first, second, third):
            db.client.drop_database(db.name)


def _same_form(left: object, right: object) -> bool:
    """Equal values of the same types all the way down (``Int64(5) == 5`` and an aware datetime's BSON
    hide a difference that ``==`` and the bytes alone would miss), keys in the same order."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        assert isinstance(right, dict)
        return list(left) == list(right) and all(_same_form(left[k], right[k]) for k in left)
    if isinstance(left, list):
        assert isinstance(right, list)
        return len(left) == len(right) and all(_same_form(a, b) for a, b in zip(left, right, strict=True))
    if hasattr(left, "tzinfo") and getattr(left, "tzinfo", None) != getattr(right, "tzinfo", None):
        return False
    return bool(left == right) or left != left  # NaN is its own form


@pytest.mark.parametrize("shape", ["embedded", "referenced", "hybrid"])
@pytest.mark.parametrize("dataset", ["store", "followers", "parts"])
def test_a_load_gives_the_reads_exactly_the_documents_they_would_decode(
    cache: Path, dataset: str, shape: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first load's documents, and a restore's from the file, seed the reads' cache, so the shape's
    first model decodes nothing; they are, type for type, what decoding the engine's stored form gives."""
    from workbook import engine_reads

    first, second = _db("p"), _db("q")
    engine = offline_server().engine
    try:
        seeded = {}
        for db in (first, second):  # loaded for real, then restored from the file
            snapshot.forget()
            with monkeypatch.context() as patched:  # a load that decoded a stored document would fail here
                patched.setattr(engine, "_borrow_public_storage_document", None)
                loaded = workbook.load(dataset, shape, db, scale="tiny", progress=False)
                for name in loaded.collection_names:
                    seeded[db.name, name] = engine_reads.public_records(engine, db.name, name)[0]
        engine_reads._chunk_cache.clear()
        for (database, name), documents in seeded.items():
            decoded = engine_reads.public_records(engine, database, name)[0]
            assert documents and len(documents) == len(decoded), name
            assert all(_same_form(a, b) for a, b in zip(documents, decoded, strict=True)), name
    finally:
        for db in (first, second):
            db.client.drop_database(db.name)


def test_file_round_trip_rebuilds_the_engine_structures_exactly(cache: Path) -> None:
    """The persistent maps rebuilt from a file equal the ones a load built (mongoeco's layout unchanged)."""
    db = _db("r")
    try:
        workbook.load(workbook.generate("parts", "tiny", 7), "embedded", db, progress=False)
        engine = offline_server().engine
        key = snapshot.snapshot_key("parts", "tiny", 7, "embedded")
        stored = snapshot.read(key)
        assert stored is not None
        for name, state in stored.collections.items():
            live = engine._storage[db.name][name]
            rebuilt = state["_storage"]
            for attribute in ("_ordinals", "_locations", "_head_chunk", "_tail_chunk", "_next_chunk", "_next_ordinal"):
                assert getattr(rebuilt, attribute) == getattr(live, attribute), attribute
            assert list(rebuilt.keys()) == list(live.keys())
            assert [v.payload for v in rebuilt.values()] == [v.payload for v in live.values()]
            for index_name, index in state["_index_data"].items():
                original = engine._index_data[db.name][name][index_name]
                for attribute in ("_buckets", "_bucket_ordinals", "_bucket_order_roots", "_next_membership_ordinal"):
                    assert getattr(index, attribute) == getattr(original, attribute), (index_name, attribute)
    finally:
        db.client.drop_database(db.name)


def test_restored_indexes_are_built_when_first_read_and_then_as_an_eager_build(cache: Path) -> None:
    """A restore leaves each index's tables unbuilt (the reload's saving); the engine's first write
    builds them, exactly as the one-pass build would, once for a map and its copies."""
    data = workbook.generate("followers", "tiny", 7)
    first, second = _db("l"), _db("e")
    engine = offline_server().engine
    try:
        workbook.load(data, "referenced", first, progress=False)
        snapshot.forget()  # from the file, as a new kernel
        workbook.load("followers", "referenced", second, scale="tiny", progress=False)
        indexes = engine._index_data[second.name]["follows"]
        secondary = [name for name in indexes if name != "_id_"]
        assert secondary, "the referenced shape indexes its follows"
        for name in secondary:
            assert not any(table in vars(indexes[name]) for table in snapshot._TABLES), f"{name} built at restore"
            pending = indexes[name].pending
            assert callable(pending.buckets), f"{name}: its buckets were made at restore (they wait for a read)"
            made = snapshot._made(pending.buckets)
            original = snapshot._plain_index(engine._index_data[first.name]["follows"][name])
            assert indexes[name]._next_membership_ordinal == original[0]
            assert dict(made) == dict(original[1]) and len(made) == len(original[1]), f"{name}: other buckets"
        assert second.follows.count_documents({"followedId": data.collections["follows"][0]["followedId"]}) > 0
        name = secondary[0]
        assert not any(t in vars(indexes[name]) for t in snapshot._TABLES), "the planner's reads need no tables"
        lazy = indexes[name]
        twin = lazy.copy()  # as a capture or a transaction copies it
        assert twin is not lazy and twin.pending is lazy.pending
        eager = snapshot._index_tables(snapshot._plain_index(lazy)[1])  # reading it builds it
        assert all(vars(lazy)[t] == built for t, built in zip(snapshot._TABLES, eager, strict=True))
        assert all(getattr(twin, t).whole() is vars(lazy)[t].whole() for t in snapshot._TABLES), (
            "the copy reuses the build"
        )
        assert lazy.pending.untouched(lazy)
        follow = {
            "followerId": "new-follower",
            "followedId": "new-followed",
            "createdAt": data.collections["follows"][0]["createdAt"],
        }
        second.follows.insert_one(follow)
        written = engine._index_data[second.name]["follows"][name]
        assert "pending" not in vars(written) or not written.pending.untouched(written)
        assert second.follows.count_documents({"followedId": "new-followed"}) == 1
        assert written is not twin and len(written) >= len(twin)  # the write did not reach the copy
    finally:
        for db in (first, second):
            db.client.drop_database(db.name)


@pytest.mark.parametrize(
    ("dataset", "shape", "collection"), [("followers", "referenced", "follows"), ("parts", "embedded", "products")]
)
def test_a_restored_index_answers_a_few_keys_from_the_file_without_making_every_bucket(
    cache: Path, monkeypatch: pytest.MonkeyPatch, dataset: str, shape: str, collection: str
) -> None:
    """An equality lookup or a write asks a restored index about one key: its members are read from the
    file's columns alone (making every bucket held 46 MiB for parts/embedded's part lines), and they are
    the members the index was saved with, for every key, multikey and unique alike."""
    data = workbook.generate(dataset, "tiny", 7)
    first, second = _db("l"), _db("e")
    engine = offline_server().engine
    try:
        workbook.load(data, shape, first, progress=False)
        snapshot.forget()  # from the file, as a new kernel
        workbook.load(dataset, shape, second, scale="tiny", progress=False)
        indexes = engine._index_data[second.name][collection]
        lazy = {name: index for name, index in indexes.items() if "pending" in vars(index)}
        assert lazy, f"{dataset}/{shape} restores its {collection}' indexes lazily"
        for name, index in lazy.items():
            original = dict(snapshot._plain_index(engine._index_data[first.name][collection][name])[1])
            eager = snapshot._index_tables(list(original.items()))
            buckets = index.pending.buckets
            assert isinstance(buckets, snapshot.FileBuckets), f"{name}: not restored from the file's columns"
            with monkeypatch.context() as patched:
                patched.setattr(snapshot, "_buckets", lambda *args: pytest.fail("every bucket was made"))
                for key, members in original.items():
                    assert buckets.members(key) == members, f"{name}: other members for {key!r}"
                assert buckets.members(("not", "a", "key")) is None
                patched.setattr(snapshot, "hash", lambda key: len(str(key)) % 3, raising=False)  # keys collide
                colliding = snapshot.FileBuckets(buckets.rows, buckets.width, buckets.fix, buckets.storage_keys)
                assert all(colliding.members(key) == members for key, members in original.items())
                assert colliding.members(("not", "a", "key")) is None
                patched.undo()
                patched.setattr(snapshot, "_buckets", lambda *args: pytest.fail("every bucket was made"))
                key = next(iter(original))
                assert index.get(key) == eager[0][key], f"{name}: the engine's lookup differs from an eager map's"
            assert index.pending.tables is None and index.pending.by_key is None, f"{name}: built whole"
        several = [name for name in lazy if any(len(m) > 1 for _, m in snapshot._made(lazy[name].pending.buckets))]
        assert several or dataset != "parts", "parts' part lines index has keys with several members"
    finally:
        for db in (first, second):
            db.client.drop_database(db.name)


def test_a_pending_index_is_built_with_the_collector_paused_and_restarted_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Building an index's tables makes a node per member, all kept (435,638 for the products of
    parts/embedded at small): with the collector running, its collections doubled the build (1.85 s
    against 0.93 s), so the build pauses it, and it runs again afterwards."""
    import gc

    seen: list[bool] = []
    original = snapshot._index_tables

    def recording(buckets: list[tuple[object, list[tuple[int, object]]]]) -> object:
        seen.append(gc.isenabled())
        return original(buckets)

    monkeypatch.setattr(snapshot, "_index_tables", recording)
    assert gc.isenabled()
    pending = snapshot.PendingIndex([(("a",), [(0, "k0"), (1, "k1")]), (("b",), [(2, "k2")])])
    tables = pending.build()
    assert seen == [False], "the tables were built with the collector running"
    assert gc.isenabled(), "the collector was left off"
    assert tables == original([(("a",), [(0, "k0"), (1, "k1")]), (("b",), [(2, "k2")])])
    assert pending.build() is tables and seen == [False], "built once"


@pytest.mark.parametrize("seed", range(6))
def test_writes_into_a_lazy_index_touch_only_their_keys_and_end_as_an_eager_map(seed: int) -> None:
    """The engine's writes ask a lazy index map about a few keys (get, add, discard, ordinals, order):
    those are answered from the buckets of those keys alone, nothing builds a table whole, and the map
    ends exactly as an eagerly built map given the same writes."""
    import random

    from workbook.engine_compat import memory_storage_internals

    eager_class = memory_storage_internals().MemoryIndexMap
    rng = random.Random(seed)
    buckets = []
    ordinal = 0
    for number in range(60):
        members = []
        for _ in range(rng.choice([1, 1, 2, 5])):
            members.append((ordinal, f"k{ordinal}"))
            ordinal += 1
        buckets.append(((number,), members))
    pending = snapshot.PendingIndex(list(buckets))
    lazy = snapshot.lazy_index(pending, ordinal)
    eager = eager_class()
    for key, members in buckets:
        for at, member in members:
            eager.add(key, member, ordinal=at)
    for step in range(300):
        key = (rng.randrange(70),)  # some keys the index does not hold yet
        member = f"k{rng.randrange(ordinal + 40)}"
        action = rng.choice(["add", "discard", "pop", "ask"])
        if action == "add":
            for index in (lazy, eager):
                index.add(key, member)
        elif action == "discard":
            for index in (lazy, eager):
                index.discard(key, member)
        elif action == "pop":
            assert lazy.pop(key, None) == eager.pop(key, None), step
        assert (key in lazy) == (key in eager) and lazy.get(key) == eager.get(key), step
        assert lazy.ordinal_for(key, member) == eager.ordinal_for(key, member), step
        assert lazy.ordered_storage_keys(key) == eager.ordered_storage_keys(key), step
    assert pending.tables is None, "a write built the tables whole"
    twin = lazy.copy()
    for table in snapshot._TABLES:
        assert getattr(lazy, table) == getattr(eager, table), table  # compared whole: built now
    assert pending.tables is not None and dict(twin.items()) == dict(eager.items()) and len(twin) == len(eager)
    assert not pending.untouched(lazy) and pending.untouched(snapshot.lazy_index(pending, ordinal))


def test_writes_after_a_restore_do_not_reach_the_snapshot(cache: Path) -> None:
    data = workbook.generate("store", "tiny", 7)
    first, second = _db("w"), _db("x")
    try:
        workbook.load(data, "referenced", first, progress=False)
        first.products.update_many({}, {"$set": {"price": 0}})
        first.reviews.delete_many({})
        workbook.load(data, "referenced", second, progress=False)
        assert second.reviews.count_documents({}) == len(data.collections["reviews"])
        assert second.products.count_documents({"price": 0}) == 0
        summary = workbook.explain(second.products, {"category._id": "cat-01"}, sort=[("price", 1)]).summary()
        assert summary["index"] == "category_price", "the restored index answers queries"
        assert second.products.count_documents({"category._id": "cat-01"}) == sum(
            1 for p in data.collections["products"] if p["category"]["_id"] == "cat-01"
        )
    finally:
        for db in (first, second):
            db.client.drop_database(db.name)


def test_changed_documents_are_loaded_for_real(cache: Path) -> None:
    data = workbook.generate("followers", "tiny", 7)
    db = _db("m")
    try:
        workbook.load(data, "referenced", db, progress=False)
        data.collections["users"][0]["name"] = "changed by the learner"
        assert snapshot.find(data, "referenced", scale="tiny", seed=7) is None
        workbook.load(data, "referenced", db, progress=False)
        assert db.users.find_one({"name": "changed by the learner"}) is not None
    finally:
        db.client.drop_database(db.name)


def test_a_load_of_a_generated_dataset_hashes_its_documents_once(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hash walks every document: a first load took it twice (to look for a snapshot, then to store one)."""
    data = workbook.generate("followers", "tiny", 7)
    hashed: list[object] = []
    real = snapshot.fingerprint
    monkeypatch.setattr(snapshot, "fingerprint", lambda dataset: hashed.append(dataset) or real(dataset))
    db = _db("h")
    try:
        workbook.load(data, "referenced", db, progress=False)  # a real load
        assert hashed == [data]
        workbook.load(data, "referenced", db, progress=False)  # restored
        assert hashed == [data, data]
        workbook.load("followers", "embedded", db, scale="tiny", progress=False)  # by name: hashed when stored
        assert len(hashed) == 3 and hashed[2] is not data
    finally:
        db.client.drop_database(db.name)
    assert snapshot.find(data, "referenced", scale="tiny", seed=7) is not None, "stored under the same hash"


def test_loads_by_name_generate_the_dataset_once_and_keep_none_of_it_decoded(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dataset's three shapes loaded by name, no snapshot yet (notebook 01's explorer, prepare): generated once;
    only the last dataset generated is kept, and as its BSON (none of its documents read into the dataset)."""
    import workbook.datasets

    monkeypatch.setenv("WORKBOOK_SNAPSHOTS", "0")  # every load a real one, as before its first snapshot
    made: list[Any] = []
    real = workbook.datasets.generate
    monkeypatch.setattr(workbook.datasets, "generate", lambda *a, **k: made.append(real(*a, **k)) or made[-1])
    db = _db("g")
    try:
        for shape in workbook.SHAPE_NAMES:
            workbook.load("followers", shape, db, scale="tiny", seed=11, progress=False)
        assert len(made) == 1
        workbook.load("followers", "embedded", db, scale="tiny", seed=12, progress=False)
        workbook.load("followers", "embedded", db, scale="tiny", seed=11, progress=False)  # 12 replaced it
        assert [dataset.seed for dataset in made] == [11, 12, 11]
        assert all(documents.read() == 0 for dataset in made for documents in dataset.collections.values())
        from workbook import loading

        monkeypatch.setattr(loading, "_KEPT_AT_MOST", 1_000)  # a dataset over it is not kept (tiny followers: 40 kB)
        workbook.load("followers", "embedded", db, scale="tiny", seed=13, progress=False)
        workbook.load("followers", "referenced", db, scale="tiny", seed=13, progress=False)
        assert [dataset.seed for dataset in made] == [11, 12, 11, 13, 13]
    finally:
        db.client.drop_database(db.name)


def test_a_damaged_file_is_ignored_and_removed(cache: Path) -> None:
    db = _db("d")
    try:
        workbook.load("followers", "embedded", db, scale="tiny", progress=False)
        snapshot.flush()
        (path,) = cache.glob("snapshot-*.bson")
        path.write_bytes(path.read_bytes()[:-10] + b"0123456789")
        snapshot.forget()
        assert snapshot.find("followers", "embedded", scale="tiny", seed=7) is None
        assert not path.exists()
        assert snapshot._last_read == [], "a damaged file is refused before its dataset's table is made or kept"
    finally:
        db.client.drop_database(db.name)


def test_switched_off_by_the_environment(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBOOK_SNAPSHOTS", "0")
    db = _db("o")
    try:
        workbook.load("followers", "embedded", db, scale="tiny", progress=False)
        snapshot.flush()
        assert not list(cache.glob("snapshot-*"))
        assert snapshot.find("followers", "embedded", scale="tiny", seed=7) is None
    finally:
        db.client.drop_database(db.name)


def test_the_cache_folder_is_outside_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WORKBOOK_CACHE_DIR", raising=False)
    repository = Path(workbook.__file__).resolve().parent.parent
    assert repository not in snapshot.cache_dir().resolve().parents


def test_sizes_measured_at_load_time_come_back_with_the_snapshot(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from workbook import sizes

    db = _db("s")
    try:
        workbook.load("store", "hybrid", db, scale="tiny", progress=False)
        expected = {name: sizes.document_sizes(db[name]) for name in db.list_collection_names() if name[0] != "_"}
        expected_index = {name: sizes.index_size_estimate(db, name) for name in expected}
        snapshot.forget()
        sizes._SIZE_CACHE.clear()
        workbook.load("store", "hybrid", db, scale="tiny", progress=False)  # from the file

        def never(*args: object) -> int:
            raise AssertionError("measured again instead of using the sizes kept with the snapshot")

        monkeypatch.setattr(sizes, "_entry_bytes", never)
        monkeypatch.setattr(sizes, "bson_size", never)
        for name, series in expected.items():
            pd.testing.assert_series_equal(sizes.document_sizes(db[name]), series)
            assert sizes.index_size_estimate(db, name) == expected_index[name]
        monkeypatch.undo()
        db.products.update_one({}, {"$set": {"note": "changed"}})  # a write: measured again, not stale
        assert sizes.document_sizes(db["products"]).sum() > expected["products"].sum()
    finally:
        db.client.drop_database(db.name)


# --- the file is data only, in a folder only its owner can write (issue 24) --------------------------


def test_no_module_of_the_package_imports_pickle() -> None:
    """The snapshot cache cannot run code: nothing in the package reads (or writes) pickles."""
    import ast

    root = Path(workbook.__file__).parent
    found = []
    for source in root.rglob("*.py"):
        tree = ast.parse(source.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            if any(name.split(".")[0] in ("pickle", "cPickle", "dill", "cloudpickle", "marshal") for name in names):
                found.append(str(source.relative_to(root)))
    assert found == []


def test_the_file_is_bson_behind_a_version_header(cache: Path) -> None:
    import bson

    db = _db("f")
    try:
        workbook.load("followers", "embedded", db, scale="tiny", progress=False)
        snapshot.flush()
        (path,) = cache.glob("snapshot-*.bson")
        header, _, body = path.read_bytes().partition(b"\n")
        assert header.startswith(snapshot.HEADER + b" %d " % snapshot.FORMAT)
        documents = bson.decode_all(body)  # all of it decodes as plain BSON documents
        assert documents[0]["key"] == snapshot.snapshot_key("followers", "tiny", 7, "embedded")
        assert documents[0]["format"] == snapshot.FORMAT
    finally:
        db.client.drop_database(db.name)


def test_a_pickle_in_the_cache_folder_is_never_run(cache: Path) -> None:
    """A file planted under a snapshot's name, with a matching checksum line, is refused and removed, not run."""
    import hashlib

    marker = cache / "ran"
    # The bytes of pickle.dumps of an object whose __reduce__ creates `marker` (built by hand: no pickle import).
    body = (
        b"\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00\x8c\x08builtins\x94\x8c\x04exec\x94\x93\x94"
        + b"\x8c"
        + bytes([len(f"open({str(marker)!r}, 'w')")])
        + f"open({str(marker)!r}, 'w')".encode()
        + b"\x94\x85\x94R\x94."
    )
    key = snapshot.snapshot_key("followers", "tiny", 7, "embedded")
    path = cache / f"snapshot-{key}.bson"
    for header in (
        hashlib.sha256(body).hexdigest().encode(),
        snapshot.HEADER + b" 1 " + hashlib.sha256(body).hexdigest().encode(),
    ):
        path.write_bytes(header + b"\n" + body)
        assert snapshot.read(key) is None
        assert not path.exists(), "a file that is not our BSON is removed"
    assert not marker.exists()


def test_leftover_temp_files_are_removed_on_the_next_use(cache: Path) -> None:
    import os
    import time

    old = cache / ".tmp-killed-mid-write"
    old.write_bytes(b"\0" * 1000)
    past = time.time() - 3600
    os.utime(old, (past, past))
    fresh = cache / ".tmp-another-kernel-writing-now"
    fresh.write_bytes(b"\0" * 10)
    snapshot._cleaned.discard(cache)
    assert snapshot.read("no-such-key") is None  # the first use of the folder in this process
    assert not old.exists()
    assert fresh.exists(), "a write in progress elsewhere is left alone"


def _planted(folder: Path, version: str, age_s: float, shapes: tuple[str, ...] = ("embedded", "hybrid")) -> list[Path]:
    """Snapshot files as another code ``version`` would have left them, written ``age_s`` seconds ago."""
    import os
    import time

    made = []
    for shape in shapes:
        path = folder / f"snapshot-store-small-7-{shape}-{version}.bson"
        path.write_bytes(b"not read here")
        os.utime(path, (time.time() - age_s, time.time() - age_s))
        made.append(path)
    return made


def test_files_of_older_code_versions_are_removed_but_the_latest_other_one_stays(cache: Path) -> None:
    current = snapshot.code_version()
    oldest = _planted(cache, "0123456789abcdef", age_s=86_400 * 30)
    older = _planted(cache, "fedcba9876543210", age_s=86_400 * 2)
    latest_other = _planted(cache, "00000000aaaaaaaa", age_s=3600)
    mine = _planted(cache, current, age_s=86_400 * 60)  # the running code's: kept however old
    others = [cache / "load-seconds.json", cache / "notes.txt", cache / ".tmp-another-kernel"]
    for path in others:
        path.write_text("{}")
    assert snapshot.remove_outdated(cache) == len(oldest) + len(older)
    assert not any(path.exists() for path in [*oldest, *older])
    assert all(path.exists() for path in [*latest_other, *mine, *others])
    assert snapshot.remove_outdated(cache) == 0, "nothing more to remove"


def test_a_written_snapshot_removes_the_files_of_code_versions_before_it(cache: Path) -> None:
    stale = _planted(cache, "0123456789abcdef", age_s=86_400 * 30)
    previous = _planted(cache, "fedcba9876543210", age_s=86_400)
    db = _db("v")
    try:
        workbook.load("followers", "embedded", db, scale="tiny", progress=False)
        snapshot.flush()  # its writer has written the file and tidied the folder
    finally:
        db.client.drop_database(db.name)
    assert not any(path.exists() for path in stale)
    assert all(path.exists() for path in previous), "the version before this one is kept"
    (written,) = cache.glob(f"snapshot-followers-*-{snapshot.code_version()}.bson")
    assert snapshot.read(written.stem.removeprefix("snapshot-")) is not None


def test_a_failed_write_leaves_no_temp_file(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    db = _db("t")
    real_replace = os.replace

    def full_disk(*args: object) -> None:
        raise OSError(28, "No space left on device")

    try:
        monkeypatch.setattr(os, "replace", full_disk)
        workbook.load("followers", "embedded", db, scale="tiny", progress=False)
        snapshot.flush()  # its writer has met the full disk
        monkeypatch.setattr(os, "replace", real_replace)
        assert list(cache.iterdir()) == []
    finally:
        db.client.drop_database(db.name)


def test_the_file_is_written_after_the_load_returns_and_a_read_waits_for_it(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The learner does not wait for the file (this process holds the snapshot in memory); a read of
    its key in this process waits for the writer, so it never meets a file half made or missing."""
    import threading

    release = threading.Event()
    real_encode = snapshot._encode

    def slow_encode(*args: Any) -> bytes:
        assert release.wait(30), "the test never let the writer go on"
        return real_encode(*args)

    monkeypatch.setattr(snapshot, "_encode", slow_encode)
    db = _db("w")
    try:
        workbook.load("followers", "embedded", db, scale="tiny", progress=False)  # returns: its writer waits
        assert not list(cache.glob("snapshot-*.bson")), "the load waited for its file"
        snapshot.forget()
        key = snapshot.snapshot_key("followers", "tiny", 7, "embedded")
        threading.Timer(0.2, release.set).start()
        assert snapshot.read(key) is not None, "the read waited for this process's writer and found the file"
        assert release.is_set()
    finally:
        release.set()
        db.client.drop_database(db.name)


def test_a_process_that_exits_at_once_after_a_load_leaves_its_file(cache: Path) -> None:
    import os
    import subprocess
    import sys

    code = "import workbook; workbook.load('followers', 'embedded', scale='tiny', progress=False)"
    env = {**os.environ, "WORKBOOK_CACHE_DIR": str(cache)}
    env.pop("MONGODB_URI", None)
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=120)
    (path,) = cache.glob("snapshot-*.bson")
    snapshot.forget()
    assert snapshot.read(path.stem.removeprefix("snapshot-")) is not None, "a whole, valid file"


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757])
def test_a_folder_others_can_write_is_refused_with_the_fix(cache: Path, mode: int) -> None:
    shared = cache / "shared"
    shared.mkdir()
    shared.chmod(mode)
    try:
        with pytest.raises(CacheFolderError) as refused:
            snapshot.check_cache_folder(shared)
        assert f"chmod go-w {shared}" in str(refused.value)
        assert "WORKBOOK_CACHE_DIR" in str(refused.value)
    finally:
        shared.chmod(0o700)
    snapshot.check_cache_folder(shared)  # once only its owner can write it, it is used


def test_a_load_with_a_shared_cache_folder_says_so(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = cache / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("WORKBOOK_CACHE_DIR", str(shared))
    db = _db("p")
    try:
        with pytest.raises(CacheFolderError, match="can be written by other users"):
            workbook.load("followers", "embedded", db, scale="tiny", progress=False)
    finally:
        shared.chmod(0o700)
        db.client.drop_database(db.name)


def test_a_folder_owned_by_another_user_is_refused(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.setattr(os, "getuid", lambda: os.stat(cache).st_uid + 1)
    with pytest.raises(CacheFolderError, match="owned by another user"):
        snapshot.check_cache_folder(cache)


def test_a_restore_shows_a_progress_bar_that_goes_away(monkeypatch: pytest.MonkeyPatch) -> None:
    import workbook.loading as loading

    bars: list[dict[str, object]] = []

    class Recording:
        def __init__(self, items: object = (), **kwargs: object) -> None:
            self.n, self.items = 0, list(items)  # type: ignore[call-overload]
            bars.append({**kwargs, "bar": self})

        def __iter__(self) -> Iterator[object]:
            for item in self.items:
                yield item
                self.n += 1

        def __enter__(self) -> Recording:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def update(self, count: int = 1) -> None:
            self.n += count

        def set_postfix_str(self, text: str) -> None:  # the first, real load names each collection
            return None

        def close(self) -> None:
            return None

    recording = Recording
    monkeypatch.setattr(loading, "wait_bar", recording)  # wait_bar: always leave=False
    first = workbook.load("followers", "referenced", scale="tiny")
    try:
        bars.clear()
        workbook.load("followers", "referenced", scale="tiny")  # the same load again: restored
        restores = [b for b in bars if str(b.get("desc", "")).startswith("restore followers/referenced")]
        assert len(restores) == 1 and "delay" not in restores[0]  # wait_bar's own: shown past 1 s
        assert restores[0]["bar"].n == 2  # type: ignore[attr-defined]  # found, then installed
        bars.clear()
        workbook.load("followers", "referenced", scale="tiny", progress=False)
        assert all(b["progress"] is False for b in bars if str(b.get("desc", "")).startswith("restore"))
        models = [
            b for b in bars if str(b.get("desc", "")).startswith("model ")
        ]  # built by the load, not the first read
        assert models and models[-1]["bar"].n == len(first.collection_names)  # type: ignore[attr-defined]
    finally:
        first.db.client.drop_database(first.db.name)


def test_a_load_leaves_every_collection_modelled_for_the_first_read() -> None:
    from workbook.offline_explain import hook_for

    loaded = workbook.load("parts", "hybrid", scale="tiny", progress=False)
    try:
        hook = hook_for(offline_server().engine)
        for name in loaded.collection_names:
            assert hook.models.latest((loaded.db.name, name)) is not None, name
    finally:
        loaded.db.client.drop_database(loaded.db.name)


def test_a_restored_load_holds_each_distinct_string_once(cache: Path) -> None:
    """BSON decodes each occurrence as a new string; a restore keeps one object per distinct string
    (type tags of index keys, ids in storage keys, indexes and documents, repeated values)."""
    from workbook.engine_reads import public_records

    db = _db("s")
    try:
        workbook.load("followers", "referenced", db, scale="tiny", progress=False)
        snapshot.flush()
        snapshot.forget()
        db.client.drop_database(db.name)
        workbook.load("followers", "referenced", db, scale="tiny", progress=False)  # from the file
        engine = offline_server().engine
        follows = public_records(engine, db.name, "follows")[0]
        by_value: dict[str, set[int]] = {}
        for document in follows:
            by_value.setdefault(document["followerId"], set()).add(id(document["followerId"]))
        assert len(by_value) < len(follows), "followers follow more than one user here"
        assert all(len(ids) == 1 for ids in by_value.values()), "a follower's id is one object"
        storage = engine._storage[db.name]["follows"]
        tags = {id(key[0]) for key in list(storage._values.keys())}
        assert len(tags) == 1, "every storage key's type tag is one object"
        for index in engine._index_data[db.name]["follows"].values():
            parts = {id(part[0]) for key in index._buckets for part in key if part is not None}
            assert len(parts) <= 2, f"{index}: a type tag per kind of value"
    finally:
        db.client.drop_database(db.name)


def _restored(db: Database, dataset: str, shape: str) -> dict[str, list[dict[str, Any]]]:
    """Load ``dataset``/``shape`` at ``tiny`` into ``db``, then again from its snapshot file only; the documents
    (checked the same both times)."""
    loaded = workbook.load(dataset, shape, db, scale="tiny", progress=False)
    snapshot.flush()
    before = {each.collection: list(db[each.collection].find()) for each in loaded.report.collections}
    snapshot.forget()
    db.client.drop_database(db.name)
    workbook.load(dataset, shape, db, scale="tiny", progress=False)  # from the file
    assert {name: list(db[name].find()) for name in before} == before
    return before


def test_a_restored_embedded_shape_holds_each_field_name_and_nested_string_once(cache: Path) -> None:
    """The sharing reaches every depth: an embedded product's parts repeat field names and values (a part's
    name in every product that uses it); after a restore each is one object, the documents unchanged."""
    from workbook.engine_reads import public_records

    db = _db("e")
    try:
        before = _restored(db, "parts", "embedded")
        engine = offline_server().engine
        objects: dict[str, set[int]] = {}
        nested = 0

        def walk(value: object, depth: int) -> None:
            nonlocal nested
            if isinstance(value, dict):
                for key, item in value.items():
                    objects.setdefault(key, set()).add(id(key))
                    walk(item, depth + 1)
            elif isinstance(value, list):
                for item in value:
                    walk(item, depth)
            elif isinstance(value, str):
                objects.setdefault(value, set()).add(id(value))
                nested += depth > 1

        for name in before:
            for document in public_records(engine, db.name, name)[0]:
                walk(document, 0)
        assert nested > 0, "the shape has strings inside embedded documents"
        assert all(len(ids) == 1 for ids in objects.values()), [k for k, ids in objects.items() if len(ids) > 1][:5]
    finally:
        db.client.drop_database(db.name)


def test_the_shapes_of_a_dataset_restored_from_files_share_their_strings_and_dates(cache: Path) -> None:
    """A review's text and date are in the embedded product and in the referenced reviews collection: restored
    from their files, the two shapes hold one object for each."""
    import datetime

    from workbook.engine_reads import public_records

    embedded_db, referenced_db = _db("se"), _db("sr")
    try:
        for shape, db in (("embedded", embedded_db), ("referenced", referenced_db)):
            workbook.load("store", shape, db, scale="tiny", progress=False)
        snapshot.flush()
        snapshot.forget()
        for shape, db in (("embedded", embedded_db), ("referenced", referenced_db)):
            db.client.drop_database(db.name)
            workbook.load("store", shape, db, scale="tiny", progress=False)  # from its file
        engine = offline_server().engine
        reviews = public_records(engine, referenced_db.name, "reviews")[0]
        embedded = [
            review
            for product in public_records(engine, embedded_db.name, "products")[0]
            for review in product.get("reviews", [])
        ]
        assert embedded, "the embedded products carry reviews"
        texts = {review["text"]: review["text"] for review in reviews}
        dates = {review["createdAt"]: review["createdAt"] for review in reviews}
        assert type(next(iter(dates))) is datetime.datetime
        for review in embedded:
            assert review["text"] is texts[review["text"]], "one object for the text in both shapes"
            assert review["createdAt"] is dates[review["createdAt"]], "one object for the date in both shapes"
    finally:
        for db in (embedded_db, referenced_db):
            db.client.drop_database(db.name)


def test_a_read_takes_its_values_from_the_smallest_held_shape_of_its_dataset(cache: Path) -> None:
    """Any held shape of the dataset has its values; the one with the fewest BSON bytes is the quickest to walk.
    A shape of another dataset is never used."""

    def held(key: str, size: int, text: str) -> snapshot.Snapshot:
        found = snapshot.Snapshot(key, "", {"collections": [{"bytes": size}]}, {"c": {"public": [{"t": text}]}})
        snapshot._memory[key] = found
        return found

    big = held("store-tiny-7-embedded-v", 900, "".join(["re", "view"]))
    small = held("store-tiny-7-referenced-v", 300, "".join(["rev", "iew"]))
    held("parts-tiny-7-embedded-v", 10, "".join(["revi", "ew"]))
    values = snapshot._sibling_values("store-tiny-7-hybrid-v")
    assert values["review"] is small.collections["c"]["public"][0]["t"]
    assert values["review"] is not big.collections["c"]["public"][0]["t"]
    assert snapshot._sibling_values("followers-tiny-7-hybrid-v") == {}


def test_a_datasets_later_shapes_share_the_table_of_its_last_read_without_a_walk(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Shapes read one after another take the table the last read of their dataset kept, and walk nothing;
    a read of another dataset lets that table go, so a shape read later walks a held shape instead."""
    from workbook.engine_reads import public_records

    dbs = {shape: _db(shape[:3]) for shape in ("embedded", "referenced", "hybrid")}
    other = _db("fol")
    try:
        for shape, db in dbs.items():
            workbook.load("store", shape, db, scale="tiny", progress=False)
        workbook.load("followers", "embedded", other, scale="tiny", progress=False)
        snapshot.flush()
        snapshot.forget()
        for db in (*dbs.values(), other):
            db.client.drop_database(db.name)
        walks: list[int] = []
        original = snapshot._note_values
        monkeypatch.setattr(snapshot, "_note_values", lambda values, note: (walks.append(1), original(values, note)))

        workbook.load("store", "embedded", dbs["embedded"], scale="tiny", progress=False)  # from the files
        workbook.load("store", "referenced", dbs["referenced"], scale="tiny", progress=False)
        assert walks == [] and snapshot._last_read[0][0] == "store-tiny-7", "the later shape used the kept table"
        workbook.load("followers", "embedded", other, scale="tiny", progress=False)
        assert [name for name, _ in snapshot._last_read] == ["followers-tiny-7"], "one table kept: the last dataset's"
        workbook.load("store", "hybrid", dbs["hybrid"], scale="tiny", progress=False)
        assert walks, "with the store's table gone, the read walked a held store shape"
        engine = offline_server().engine
        texts = {
            review["text"]: review["text"] for review in public_records(engine, dbs["referenced"].name, "reviews")[0]
        }
        hybrid = public_records(engine, dbs["hybrid"].name, "reviews")[0]
        assert hybrid and all(review["text"] is texts[review["text"]] for review in hybrid)
        other.client.drop_database(other.name)
        dbs["embedded"].client.drop_database(dbs["embedded"].name)
        assert [name for name, _ in snapshot._last_read] == ["store-tiny-7"]
        for db in dbs.values():
            db.client.drop_database(db.name)
        assert snapshot._last_read == [], "let go with the dataset's last shape"
    finally:
        for db in (*dbs.values(), other):
            db.client.drop_database(db.name)


def test_a_file_read_shares_strings_and_dates_but_not_floats() -> None:
    """Equal strings and dates are one object after a read; ``0.0`` and ``-0.0`` are equal but not the same
    value, so floats are kept as they were decoded."""
    import datetime

    at = datetime.datetime(2024, 5, 1, 12, 0)
    row = {"p": [{"a": "x" * 3, "z": 0.0, "at": at}, {"a": "".join(["x"] * 3), "z": -0.0, "at": at.replace()}]}
    row = bson.decode(bson.encode(row))
    shared = snapshot._share_strings(row, {}.setdefault)
    one, two = shared["p"]
    assert one["a"] is two["a"] and one["at"] is two["at"]
    assert math.copysign(1, one["z"]) == 1 and math.copysign(1, two["z"]) == -1


def test_a_restore_encodes_a_payload_only_when_the_engine_reads_it(cache: Path) -> None:
    """A restored document's stored form is made from the document on the engine's first read of it
    (engine_compat.lazy_stored_class), not for every document at restore time; the engine's own
    answers (an update, a $group it runs itself) are those of a fresh load."""
    from workbook.engine_compat import lazy_stored_class
    from workbook.engine_reads import public_records

    data = workbook.generate("store", "tiny", 7)
    fresh, restored = _db("f"), _db("g")
    try:
        workbook.load(data, "embedded", fresh, progress=False)
        snapshot.flush()
        snapshot.forget()
        workbook.load(data, "embedded", restored, progress=False)  # from the file
        engine = offline_server().engine
        stored = list(engine._storage[restored.name]["orders"].values())
        assert stored and all(type(item) is lazy_stored_class() and not item.encoded() for item in stored)
        seeded = public_records(engine, restored.name, "orders")[0]  # the documents the restore decoded
        pipeline = [{"$unwind": "$items"}, {"$group": {"_id": "$items.productId", "n": {"$sum": "$items.quantity"}}}]
        for db in (fresh, restored):
            db.orders.update_one({}, {"$set": {"status": "checked"}})
        answers = [sorted(db.orders.aggregate(pipeline), key=lambda row: row["_id"]) for db in (fresh, restored)]
        assert answers[0] == answers[1] and answers[0]
        assert list(fresh.orders.find()) == list(restored.orders.find())
        # the engine read every order through its decoded caches, which are the restored documents
        # themselves: no payload made, no decoded copy held
        assert all(item.shares() and not item.encoded() for item in stored)
        assert all(item.decoded_wrapped is document for item, document in zip(stored, seeded, strict=True))
    finally:
        for db in (fresh, restored):
            db.client.drop_database(db.name)


def test_a_file_is_decoded_one_row_at_a_time_each_shared_before_the_next(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A restore's peak holds one row's unshared strings, not the whole file's: each row is shared as soon as it
    is decoded (parts/embedded at ``small``: 220 MiB at the peak decoded whole, 94 MiB row by row)."""
    db = _db("r")
    try:
        workbook.load("parts", "embedded", db, scale="tiny", progress=False)
        snapshot.flush()
        (path,) = cache.glob("snapshot-*.bson")
        body = path.read_bytes().partition(b"\n")[2]
        decoded, shared_when = [0], []
        real_iter, real_share = snapshot.bson.decode_iter, snapshot._share_strings

        def counting_iter(data: bytes) -> Any:
            for document in real_iter(data):
                decoded[0] += 1
                yield document

        def recording_share(row: dict[str, Any], share: Any, table: Any) -> dict[str, Any]:
            shared_when.append(decoded[0])
            return real_share(row, share, table)

        monkeypatch.setattr(snapshot.bson, "decode_iter", counting_iter)
        monkeypatch.setattr(snapshot, "_share_strings", recording_share)
        meta, plain = snapshot._decode(body)
        assert len(shared_when) >= 3, "several rows: documents, index buckets, sizes"
        assert shared_when == list(range(2, len(shared_when) + 2)), "row k shared right after it (and the meta) decoded"
        assert meta["format"] == snapshot.FORMAT and plain
    finally:
        db.client.drop_database(db.name)


# --- repeated subdocuments are written once and shared on restore (issue 23) -------------------------


def _round_trip(publics: list[list[dict[str, Any]]]) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]] | None]:
    """``publics`` through :func:`snapshot._factored`, BSON and the restore's walk: (documents, the table or None)."""
    import bson

    factored = snapshot._factored(publics)
    table_rows, documents = ([], publics) if factored is None else ([{"s": factored[0]}], factored[1])
    rows = [*table_rows, *({"p": each} for each in documents)]
    decoded = [bson.decode(bson.encode(row)) for row in rows]
    shared: dict[str, str] = {}
    table: list[dict[str, Any]] | None = None if factored is None else []
    walked = [snapshot._share_strings(row, shared.setdefault, table) for row in decoded]
    return [row["p"] for row in walked[len(table_rows) :]], table


def _by_row(documents: list[dict[str, Any]], table: list[dict[str, Any]] | None = None) -> tuple[dict, list]:
    """``documents`` written as one file row (:func:`snapshot._document_row`), through BSON and read back: (the row
    as written, the documents read)."""
    row = snapshot._document_row(documents)
    read = snapshot._share_strings(bson.decode(bson.encode(row)), {}.setdefault, table)
    return row, read["p"]


def test_documents_of_one_layout_are_written_by_field_and_read_back_equal_and_shared() -> None:
    """A chunk whose documents have the same field names in the same order is written as columns, and read back as
    the same documents in the same field order: strings and dates shared across documents, a string column with
    nulls shared, numbers kept as decoded (``1``, ``1.0`` and ``True`` in one column stay themselves, ``-0.0``
    keeps its sign), nested values and a place in the table of repeated subdocuments resolved as a document row
    resolves them."""
    import datetime

    at = datetime.datetime(2024, 5, 1, 12, 0)
    part = {"partId": "p1", "name": "bolt"}
    place = snapshot._PLACE.pack(0)
    documents = [
        {
            "_id": "a" * 3,
            "n": 1,
            "z": 0.0,
            "at": at,
            "tag": "x" * 4,
            "part": place,
            "items": [{"q": 1, "sku": "s" * 2}],
        },
        {"_id": "b" * 3, "n": 1.0, "z": -0.0, "at": at.replace(), "tag": None, "part": {"k": "v"}, "items": []},
        {"_id": "c" * 3, "n": True, "z": 2.5, "at": None, "tag": "".join(["x"] * 4), "part": place, "items": [1]},
    ]
    row, read = _by_row(documents, table=[part])
    assert set(row) == {"fields", "columns"} and row["fields"] == list(documents[0])
    expected = [{**document, "part": part if document["part"] == place else document["part"]} for document in documents]
    assert read == expected and [list(document) for document in read] == [list(document) for document in documents]
    first, second, third = read
    assert first["tag"] is third["tag"] and first["at"] is second["at"], "strings and dates are one object each"
    assert first["part"] is third["part"] is part, "a place is the table's subdocument"
    assert [type(document["n"]) for document in read] == [int, float, bool], "numbers are never taken from the table"
    assert math.copysign(1, second["z"]) == -1
    assert list(read[0]) is not list(read[1]) and all(list(document)[0] == "_id" for document in read)


def test_documents_of_several_layouts_are_written_as_they_are() -> None:
    """Another field order, a missing field or an empty document keeps a chunk as documents (``p``)."""
    for documents in (
        [{"a": 1, "b": 2}, {"b": 2, "a": 1}],
        [{"a": 1, "b": 2}, {"a": 1}],
        [{}, {}],
    ):
        row, read = _by_row(documents)
        assert set(row) == {"p"} and read == documents
        assert [list(document) for document in read] == [list(document) for document in documents]


def test_index_key_columns_share_their_tags_strings_and_dates() -> None:
    """A flat index column (tag, value, tag, value...) keeps its pairs in order, its tags and string values
    shared, its numbers as decoded."""
    import datetime

    at = datetime.datetime(2024, 5, 1)
    flat = [
        "str",
        "u" * 2,
        "int",
        1,
        "str",
        "".join(["u"] * 2),
        "date",
        at,
        "bool",
        True,
        None,
        None,
        "date",
        at.replace(),
    ]
    row = snapshot._share_strings(bson.decode(bson.encode({"f": list(flat), "m": b""})), {}.setdefault)
    assert row["f"] == flat and [type(value) for value in row["f"]] == [type(value) for value in flat]
    assert row["f"][1] is row["f"][5] and row["f"][0] is row["f"][4] and row["f"][7] is row["f"][13]


def test_repeated_subdocuments_at_any_depth_come_back_equal_and_shared() -> None:
    """A subdocument repeated across documents and collections (with one repeated inside it) is written once and
    restored as one object that every holder shares; one that occurs once, and a near twin, are their own."""
    part = {"partId": "p1", "supplier": {"name": "Acme", "country": "NL"}}
    products = [
        {"_id": 1, "parts": [dict(part), {"partId": "p2", "supplier": {"name": "Acme", "country": "NL"}}]},
        {"_id": 2, "parts": [dict(part)], "main": dict(part)},
        {"_id": 3, "parts": [{"partId": "p1", "supplier": {"country": "NL", "name": "Acme"}}]},  # another order
    ]
    orders = [{"_id": 9, "line": dict(part), "note": {"once": True}}]
    publics = [products, orders]
    (back_products, back_orders), table = _round_trip(publics)
    assert [back_products, back_orders] == publics
    assert table is not None and part in table and {"name": "Acme", "country": "NL"} in table
    first = back_products[0]["parts"][0]
    assert first is back_products[1]["parts"][0] is back_products[1]["main"] is back_orders[0]["line"]
    assert first["supplier"] is back_products[0]["parts"][1]["supplier"], "the nested repeat is shared too"
    assert back_products[2]["parts"][0] is not first, "another field order is another document"
    assert list(back_products[2]["parts"][0]["supplier"]) == ["country", "name"]
    assert back_orders[0]["note"] not in table, "a subdocument that occurs once stays in its document"


def test_data_holding_bytes_is_written_without_a_table() -> None:
    """A place in the table is four bytes (a binary of subtype 0): data holding ``bytes`` of its own turns the
    table off for that file, and its bytes come back as themselves, never read as places. A binary of another
    subtype is data the table leaves alone."""
    from bson.binary import Binary

    other = Binary(b"\x01\x02", 0x80)
    publics = [[{"_id": 1, "a": {"x": 1}, "b": {"x": 1}, "m": b"\x00\x00\x00\x00"}, {"_id": 2, "a": {"x": 1}}]]
    assert snapshot._factored(publics) is None
    back, table = _round_trip(publics)
    assert back == publics and table is None and back[0][0]["m"] == b"\x00\x00\x00\x00"
    fine = [[{"_id": 1, "a": {"x": 1}, "o": other}, {"_id": 2, "a": {"x": 1}}]]
    back, table = _round_trip(fine)
    assert back == fine and table == [{"x": 1}] and back[0][0]["o"] == other


@pytest.mark.parametrize("numbers", [[], [0, 1, 2], [5, 2**31 - 1], [3, 2**31, 7], [2**40, -(2**33)]])
def test_index_members_are_packed_exactly(numbers: list[int]) -> None:
    packed = snapshot._packed(numbers)
    assert isinstance(packed, bytes) and snapshot._unpacked(packed) == numbers
    assert len(packed) == 1 + (
        4 if max(numbers, default=0) < 2**31 and min(numbers, default=0) >= -(2**31) else 8
    ) * len(numbers)


def test_a_restored_parts_embedded_holds_each_distinct_part_once(cache: Path) -> None:
    """The parts' products embed the same parts: after a restore, equal embedded parts are one object."""
    import collections

    import bson

    from workbook.engine_reads import public_records

    db = _db("p")
    try:
        before = _restored(db, "parts", "embedded")
        engine = offline_server().engine
        objects: dict[bytes, set[int]] = {}
        occurrences: collections.Counter[bytes] = collections.Counter()

        def walk(value: object, depth: int) -> None:
            if isinstance(value, dict):
                if depth:
                    raw = bson.encode(value)
                    objects.setdefault(raw, set()).add(id(value))
                    occurrences[raw] += 1
                for item in value.values():
                    walk(item, depth + 1)
            elif isinstance(value, list):
                for item in value:
                    walk(item, depth)

        for name in before:
            for document in public_records(engine, db.name, name)[0]:
                walk(document, 0)
        assert all(len(ids) == 1 for ids in objects.values()), "one object per distinct subdocument"
        assert occurrences.total() > 2 * len(occurrences), "the parts repeat across products"
    finally:
        db.client.drop_database(db.name)


def test_a_write_to_a_shared_subdocument_changes_only_its_own_document(cache: Path) -> None:
    """Restored products share one object per repeated part: updates (paths, positional, array filters, an
    increment, a refused write) and pipelines that set fields inside it change the written product alone."""
    import collections

    from pymongo.errors import WriteError

    from workbook.engine_reads import public_records

    db = _db("w")
    try:
        _restored(db, "parts", "embedded")
        holders: dict[int, list[tuple[str, int]]] = collections.defaultdict(list)
        for product in public_records(offline_server().engine, db.name, "products")[0]:
            for at, line in enumerate(product["parts"]):
                holders[id(line)].append((product["_id"], at))
        (written, at), (other, _) = next(places for places in holders.values() if len(places) > 1)[:2]
        part_id = db.products.find_one({"_id": written})["parts"][at]["partId"]
        untouched = db.products.find_one({"_id": other})
        db.products.update_one({"_id": written}, {"$set": {f"parts.{at}.name": "changed", f"parts.{at}.x": 1}})
        db.products.update_many({"_id": written}, {"$inc": {f"parts.{at}.quantity": 1}})
        db.products.update_one({"_id": written, "parts.partId": part_id}, {"$set": {"parts.$.y": 1}})
        db.products.update_one({"_id": written}, {"$set": {"parts.$[l].z": 1}}, array_filters=[{"l.partId": part_id}])
        with pytest.raises(WriteError):  # the validator refuses a line without its fields: rolled back
            db.products.update_one({"_id": written}, {"$push": {"parts": {"partId": "x"}}})
        list(db.products.aggregate([{"$unwind": "$parts"}, {"$set": {"parts.name": "piped"}}]))
        list(db.products.aggregate([{"$project": {"parts": 1}}, {"$addFields": {"parts.cost": 0}}]))
        assert db.products.find_one({"_id": other}) == untouched
        changed = db.products.find_one({"_id": written})["parts"][at]
        assert changed["name"] == "changed" and changed["x"] == changed["y"] == changed["z"] == 1
    finally:
        db.client.drop_database(db.name)


def test_both_applications_are_restored_from_the_cache_as_they_were_stored(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Notebook 01 stores the store's orders in two applications' shapes: the second time (a new kernel,
    the file only), they come back from the snapshot with the same documents, indexes and measurements,
    without storing a document; other orders are stored for real."""
    from workbook import applications, loading

    store = workbook.generate("store", "tiny", 7)
    first, second, third = _db("a"), _db("b"), _db("c")
    try:
        stored = applications.load_applications(store, first, progress=False)
        snapshot.flush()
        snapshot.forget()  # from the file, as a new kernel

        def refused(*_: Any, **__: Any) -> Any:
            raise AssertionError("stored again instead of restored")

        kept_twice: dict[str, bool] = {}
        from_plain = snapshot._from_plain

        def spied(collections: dict[str, dict[str, Any]]) -> Any:
            kept_twice.update({name: not state.get("derived") for name, state in collections.items()})
            return from_plain(collections)

        with monkeypatch.context() as patched:
            patched.setattr(loading, "fill", refused)
            patched.setattr(snapshot, "_from_plain", spied)
            restored = applications.load_applications(store, second, progress=False)
        # each document held once: the file has the documents, and the engine's payloads are made from them
        assert kept_twice == {"orders": False, "pick_lines": False}
        assert fingerprint(second.client, second.name) == fingerprint(first.client, first.name)
        assert sorted(second.list_collection_names()) == ["orders", "pick_lines"]
        columns = ["round_trips", "docs_examined", "results"]
        assert restored.measure()[columns].equals(stored.measure()[columns])

        changed = workbook.generate("store", "tiny", 7)
        changed.collections["orders"][0]["status"] = "changed"  # other data: not what the snapshot holds
        applications.load_applications(changed, third, progress=False)
        assert third.orders.count_documents({"status": "changed"}) == 1
    finally:
        for db in (first, second, third):
            db.client.drop_database(db.name)


def test_a_snapshot_is_kept_in_the_process_only_while_a_database_holds_it(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kept while one database made from it is in the engine (written or not); let go at the next load
    once every such database is dropped or replaced, and then read from its file again."""
    data = workbook.generate("followers", "tiny", 7)
    first, second, third = _db("h"), _db("i"), _db("j")
    reads: list[str] = []
    original = snapshot.read

    def counting(key: str) -> snapshot.Snapshot | None:
        found = original(key)
        if found is not None:
            reads.append(key)
        return found

    monkeypatch.setattr(snapshot, "read", counting)
    key = snapshot.snapshot_key("followers", "tiny", 7, "hybrid")
    try:
        workbook.load(data, "hybrid", first, progress=False)  # a real load: remembered from the engine
        workbook.load(data, "hybrid", second, progress=False)  # restored from the process
        assert key in snapshot._memory and reads == []
        first.client.drop_database(first.name)
        second.users.update_one({}, {"$set": {"name": "changed"}})  # written, still the database made from it
        workbook.load(data, "embedded", third, progress=False)
        assert key in snapshot._memory, "let go while the second database still holds it"
        workbook.load(data, "referenced", second, progress=False)  # the hybrid collections replaced
        workbook.load(data, "embedded", third, progress=False)
        assert key not in snapshot._memory, "kept after every database made from it was dropped or replaced"
        assert snapshot._release_unheld() == 0
        workbook.load(data, "hybrid", first, progress=False)
        assert reads == [key] and key in snapshot._memory  # from its file, and held again
        assert first.users.count_documents({}) == len(data.collections["users"])
        first.client.drop_database(first.name)
        assert key not in snapshot._memory, "a drop lets go of what only the dropped database held, at once"
    finally:
        for db in (first, second, third):
            db.client.drop_database(db.name)


def test_a_pending_index_and_its_views_are_freed_without_the_collector() -> None:
    """A load's objects are frozen (workbook.gc_pause), out of the collector's reach: a reference cycle
    between an index's buckets and the views of its tables kept every index of a dropped database."""
    import gc
    import weakref

    class Tracked(snapshot.PendingIndex):  # one that can be referenced weakly
        __slots__ = ("__weakref__",)

    pending = Tracked([(("a",), [(0, "k0"), (1, "k1")]), (("b",), [(2, "k2")])])
    gone = weakref.ref(pending)
    index = snapshot.lazy_index(pending, 3)
    del pending
    copied = index.copy()  # before any table is read: lazy, the same buckets
    assert copied.pending is index.pending and index.pending.untouched(index) and copied.pending.untouched(copied)
    assert index._bucket_ordinals.get(("a",)) is not None  # the views made and read
    assert index.pending.untouched(index) and copied._buckets is not index._buckets  # views of their own
    later = index.copy()  # after: the engine's copy, holding the views
    written = index._buckets.insert(("c",), "members")
    assert not index.pending.pristine(written) and index.pending.pristine(index._buckets)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        del index, copied, later, written
        assert gone() is None, "the pending index outlived every map of it: a reference cycle"
    finally:
        if was_enabled:
            gc.enable()


def test_a_read_holds_the_file_once_and_lets_go_of_it_before_building(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The body is a view of the file's bytes (no copy), and the bytes are freed once the rows are
    decoded, before the engine's structures are built from them (followers/hybrid at small: a read
    added 111 MiB to a fresh process's peak with the file held twice until it returned, 67 now)."""
    data = workbook.generate("followers", "tiny", 7)
    db = _db("r")
    freed: list[int] = []
    built_after: list[int] = []

    class FileBytes(bytes):
        def __del__(self) -> None:
            freed.append(len(self))

    original_read, original_build = Path.read_bytes, snapshot._from_plain

    def building(plain: Any) -> Any:
        built_after.append(len(freed))
        return original_build(plain)

    try:
        workbook.load(data, "hybrid", db, progress=False)
        snapshot.flush()
        key = snapshot.snapshot_key("followers", "tiny", 7, "hybrid")
        monkeypatch.setattr(Path, "read_bytes", lambda path: FileBytes(original_read(path)))
        monkeypatch.setattr(snapshot, "_from_plain", building)
        found = snapshot.read(key)
        assert found is not None and found.report == snapshot.find(data, "hybrid", scale="tiny", seed=7).report
        assert built_after == [1], "the file's bytes were still held while the engine's structures were built"
    finally:
        db.client.drop_database(db.name)

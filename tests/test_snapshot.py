"""Snapshots of loaded shapes: a restored load is the same data, indexes and plans as a real one."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from pymongo.database import Database

import workbook
from tests.conftest import fingerprint as database_fingerprint
from workbook import snapshot
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
    snapshot.forget()


def _db(tag: str) -> Database:
    return workbook.connect(database=f"snap{tag}{uuid.uuid4().hex[:6]}", quiet=True)


@pytest.mark.parametrize("dataset", ["store", "followers", "parts"])
def test_restored_load_has_the_same_documents_and_indexes(cache: Path, dataset: str) -> None:
    data = workbook.generate(dataset, "tiny", 7)
    first, second, third = _db("a"), _db("b"), _db("c")
    try:
        loaded = workbook.load(data, "hybrid", first, progress=False)
        assert list(cache.glob("snapshot-*.pickle")), "a real load writes its snapshot"
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


def test_a_damaged_file_is_ignored_and_removed(cache: Path) -> None:
    db = _db("d")
    try:
        workbook.load("followers", "embedded", db, scale="tiny", progress=False)
        (path,) = cache.glob("snapshot-*.pickle")
        path.write_bytes(path.read_bytes()[:-10] + b"0123456789")
        snapshot.forget()
        assert snapshot.find("followers", "embedded", scale="tiny", seed=7) is None
        assert not path.exists()
    finally:
        db.client.drop_database(db.name)


def test_switched_off_by_the_environment(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBOOK_SNAPSHOTS", "0")
    db = _db("o")
    try:
        workbook.load("followers", "embedded", db, scale="tiny", progress=False)
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

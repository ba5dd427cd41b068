"""The explain-model cache: reused while nothing changed, rebuilt after a write by any client."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from pymongo import MongoClient
from pymongo.database import Database

import workbook
from workbook.explaining import native
from workbook.explaining.cache import ModelCache, WriteCounter
from workbook.offline import offline_server

# --- pure -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "moves"),
    [
        ({"insert": "c", "documents": [{}]}, "c"),
        ({"update": "c", "updates": []}, "c"),
        ({"delete": "c", "deletes": []}, "c"),
        ({"findAndModify": "c", "query": {}}, "c"),
        ({"createIndexes": "c", "indexes": []}, "c"),
        ({"collMod": "c", "index": {"name": "a_1", "hidden": True}}, "c"),
        ({"drop": "c"}, "c"),
        ({"find": "c", "filter": {}}, None),
        ({"aggregate": "c", "pipeline": [{"$match": {}}]}, None),
        ({"aggregate": "c", "pipeline": [{"$out": "d"}]}, "everything"),
        ({"commitTransaction": 1}, "everything"),
        ({"dropDatabase": 1}, "everything"),
        ({"someFutureCommand": "c"}, "everything"),
    ],
)
def test_write_counter_moves_for_writes_only(command: dict[str, Any], moves: str | None) -> None:
    counter = WriteCounter()
    before = {name: counter.stamp("db", name) for name in ("c", "other")}
    counter.note("db", command)
    after = {name: counter.stamp("db", name) for name in ("c", "other")}
    changed = {name for name in before if before[name] != after[name]}
    expected = {None: set(), "c": {"c"}, "everything": {"c", "other"}}[moves]
    assert changed == expected


def test_model_cache_keeps_a_model_while_its_stamp_holds() -> None:
    cache: ModelCache[str] = ModelCache(size=2)
    cache.put("a", (0, 1), "model a")
    assert cache.get("a", (0, 1)) == "model a"
    assert cache.get("a", (0, 2)) is None  # written since
    cache.put("b", 1, "model b")
    cache.get("a", (0, 1))  # a is now the most recently used
    cache.put("c", 1, "model c")
    assert cache.get("b", 1) is None and cache.get("a", (0, 1)) == "model a" and len(cache) == 2


# --- on the offline server --------------------------------------------------------------------


@pytest.fixture
def db(monkeypatch: pytest.MonkeyPatch) -> Iterator[Database]:
    monkeypatch.delenv("MONGODB_URI", raising=False)
    database = workbook.connect(database=f"t{uuid.uuid4().hex[:10]}", quiet=True)
    database.items.insert_many([{"_id": i, "a": i} for i in range(5)])
    database.items.create_index("a")
    yield database
    database.client.drop_database(database.name)


@pytest.fixture
def other_client() -> Iterator[MongoClient]:
    """A second pymongo client of the offline server: no workbench listener, no shared state."""
    client: MongoClient = MongoClient(offline_server().uri)
    yield client
    client.close()


def test_writes_from_another_client_are_seen(db: Database, other_client: MongoClient) -> None:
    assert workbook.explain(db.items, {}).summary()["nReturned"] == 5
    other_client[db.name].items.insert_many([{"_id": 100 + i, "a": i} for i in range(7)])
    assert workbook.explain(db.items, {}).summary()["nReturned"] == 12 == len(list(db.items.find()))
    other_client[db.name].items.delete_many({"a": {"$lt": 3}})
    assert db.items.find({}).explain()["executionStats"]["nReturned"] == 6


def test_index_changes_from_another_client_are_seen(db: Database, other_client: MongoClient) -> None:
    assert workbook.explain(db.items, {"a": 2}).summary()["index"] == "a_1"
    other_client[db.name].command("collMod", "items", index={"name": "a_1", "hidden": True})
    assert workbook.explain(db.items, {"a": 2}).summary()["plan"] == "COLLSCAN"


def test_bulk_loads_straight_into_the_engine_are_seen(db: Database) -> None:
    assert workbook.explain(db.items, {}).summary()["nReturned"] == 5
    offline_server().bulk_insert(db.name, "items", [{"_id": 50 + i, "a": i} for i in range(3)])
    assert workbook.explain(db.items, {}).summary()["nReturned"] == 8


def test_the_model_is_reused_while_nothing_changes(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    builds: list[int] = []
    real = native.planner.Collection

    def counting(*args: Any, **kwargs: Any) -> Any:
        builds.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(native.planner, "Collection", counting)
    for _ in range(3):
        workbook.explain(db.items, {"a": {"$gt": 1}})
    assert len(builds) == 1
    db.items.insert_one({"_id": 99, "a": 99})
    workbook.explain(db.items, {"a": {"$gt": 1}})
    assert len(builds) == 2

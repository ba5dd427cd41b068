"""The explain-model cache: reused while nothing changed, rebuilt after a write by any client."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from pymongo import MongoClient
from pymongo.database import Database

import workbook
from workbook import offline_explain as native
from workbook.explain_cache import ModelCache, WriteCounter
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
    real = native.planner.CollectionModel

    def counting(*args: Any, **kwargs: Any) -> Any:
        builds.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(native.planner, "CollectionModel", counting)
    for _ in range(3):
        workbook.explain(db.items, {"a": {"$gt": 1}})
    assert len(builds) == 1
    db.items.insert_one({"_id": 99, "a": 99})
    workbook.explain(db.items, {"a": {"$gt": 1}})
    assert len(builds) == 2


def test_the_collection_is_listed_again_only_after_a_write(
    db: Database, other_client: MongoClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its existence, indexes and options are read from the engine once per write stamp, not for every find."""
    listed: list[str] = []
    real = native.ExplainHook._collection

    def counting(self: Any, database: str, name: str) -> Any:
        listed.append(name)
        return real(self, database, name)

    monkeypatch.setattr(native.ExplainHook, "_collection", counting)
    for _ in range(3):
        assert [d["_id"] for d in db.items.find({"a": 2})] == [2]
        assert workbook.explain(db.items, {"a": 2}).summary()["index"] == "a_1"
    assert listed == ["items"]
    other_client[db.name].items.create_index("b")  # another client's index: the next find lists again
    assert workbook.explain(db.items, {"b": 1}).summary()["index"] == "b_1"
    other_client[db.name].items.drop_index("a_1")
    assert workbook.explain(db.items, {"a": 2}).summary()["plan"] == "COLLSCAN"
    assert listed == ["items"] * 3


# --- incremental rebuilds ---------------------------------------------------------------------

QUERIES: list[dict[str, Any]] = [
    {"filter": {}},
    {"filter": {"a": {"$gte": 2}}},
    {"filter": {"a": {"$in": [1, 3, 50]}}, "sort": {"a": -1}},
    {"filter": {"tags": "x"}},
    {"filter": {"a": {"$lt": 40}}, "projection": {"_id": 0, "a": 1}},
]


def _fresh_summary(database: Database, query: dict[str, Any]) -> dict[str, Any]:
    """What a model built from nothing (a client's find) says about ``query``."""
    model = workbook.planner.CollectionModel(list(database.items.find()), list(database.items.list_indexes()))
    args = workbook.planner.FindArgs.of(**query)
    explain = workbook.planner.explain_find_args(model, f"{database.name}.items", args)
    stats = explain["executionStats"]
    return {k: stats[k] for k in ("nReturned", "totalKeysExamined", "totalDocsExamined")}


def test_a_model_rebuilt_after_writes_counts_like_one_built_from_nothing(db: Database) -> None:
    db.items.create_index("tags")
    db.items.update_many({}, {"$set": {"tags": ["x", "y"]}})
    writes = [
        lambda: db.items.insert_many(
            [{"_id": 10 + i, "a": 10 + i, "tags": ["x"] if i % 2 else "z"} for i in range(30)]
        ),
        lambda: db.items.update_one({"_id": 3}, {"$set": {"a": 33, "tags": []}}),
        lambda: db.items.delete_many({"a": {"$in": [0, 12, 13]}}),
        lambda: db.items.replace_one({"_id": 20}, {"a": -1}),
        lambda: db.items.update_many({"a": {"$gt": 30}}, {"$inc": {"a": 100}}),
    ]
    for write in writes:
        for query in QUERIES:  # builds (and so memoises) every index before the next write
            db.items.find(**query).explain()
        write()
        for query in QUERIES:
            stats = db.items.find(**query).explain()["executionStats"]
            got = {k: stats[k] for k in ("nReturned", "totalKeysExamined", "totalDocsExamined")}
            assert got == _fresh_summary(db, query), query


def test_a_rebuild_reuses_the_keys_of_unchanged_documents(monkeypatch: pytest.MonkeyPatch) -> None:
    from workbook.planner import keys
    from workbook.planner.keys import IndexDefinition, build_index

    documents = [{"_id": i, "a": [i, i + 1]} for i in range(100)]
    spec = IndexDefinition.from_info({"name": "a_1", "key": {"a": 1}, "v": 2}, None)
    first = build_index(spec, documents)
    changed = [*documents[:50], {"_id": 50, "a": 7}, *documents[51:], {"_id": 100, "a": 0}]
    walked: list[Any] = []
    walk, scalar_walk = keys._document_keys, keys._ScalarKeys.keys
    monkeypatch.setattr(
        keys, "_document_keys", lambda spec, document, collate: walked.append(document) or walk(spec, document, collate)
    )
    monkeypatch.setattr(
        keys._ScalarKeys, "keys", lambda self, document: walked.append(document) or scalar_walk(self, document)
    )
    second = build_index(spec, changed, first.memo())
    assert walked and all(document is changed[50] or document is changed[-1] for document in walked)  # the others not
    # walked again
    monkeypatch.undo()
    scratch = build_index(spec, changed)
    assert [(e.keys, e.rid) for e in second.entries] == [(e.keys, e.rid) for e in scratch.entries]
    assert second.multikey_paths == scratch.multikey_paths == {"a": ["a"]}
    assert id(documents[50]) not in second.memo()  # only the current documents are given


def test_the_model_reads_the_documents_in_natural_order(db: Database) -> None:
    db.items.delete_one({"_id": 2})
    db.items.insert_one({"_id": 2, "a": 2})
    from workbook.engine_reads import public_records

    async def read() -> list[Any]:  # on the server's loop, as the explain hook reads them
        return public_records(offline_server().engine, db.name, "items")[0]

    assert [d["_id"] for d in offline_server().run(read())] == [d["_id"] for d in db.items.find()] == [0, 1, 3, 4, 2]

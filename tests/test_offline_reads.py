"""The offline default's finds are run by the planner model's plan: results and explain come from one place.

Each test is written the way MongoDB behaves (so its ``mongodb`` variant checks the claim on a real
server); on the offline default it checks that :mod:`workbook.offline_reads` answers the find and
that what it answers agrees with the explain of the same find.
"""

from __future__ import annotations

import random
import re

import pytest
from bson import Int64, ObjectId
from pymongo import ASCENDING
from pymongo.database import Database

from workbook import offline_reads

MIXED = [1, 2.5, -3, "s", "ab", None, {}, {"x": 2}, [1, 2], [[1]], [], True, ObjectId("0" * 24), Int64(7)]


def _fill(db: Database, seed: int = 3, count: int = 300) -> None:
    rng = random.Random(seed)
    db.c.insert_many(
        [
            {"_id": i, **({"a": rng.choice(MIXED)} if rng.random() < 0.9 else {}), "b": rng.randrange(5)}
            for i in range(count)
        ]
    )


FILTERS = [
    {},
    {"a": 1},
    {"a": {"$gt": 0}},
    {"a": {"$lte": 2.5}},
    {"a": None},
    {"a": {"$ne": None}},
    {"a": {"$in": [1, "s", None]}},
    {"a": {"$exists": False}},
    {"a": {"$type": "array"}},
    {"a": {"$size": 2}},
    {"a": {"$elemMatch": {"$gte": 1}}},
    {"a": {"$regex": "^a"}},
    {"a": re.compile("^A", re.IGNORECASE)},
    {"a": {"$in": [re.compile("^a"), 1]}},
    {"a": float("nan")},
    {"a": {"$lt": 0}},
    {"a": {"$gte": None}},
    {"a": {"$type": "long"}},
    {"$or": [{"a": 1}, {"b": 2}]},
    {"a": {"$gt": 0}, "b": {"$lt": 3}},
]


@pytest.mark.parametrize("indexed", [False, True], ids=["no index", "index on a, b"])
def test_find_returns_what_its_explain_counts(db: Database, indexed: bool) -> None:
    _fill(db)
    if indexed:
        db.c.create_index([("a", ASCENDING), ("b", ASCENDING)])
    for query in FILTERS:
        found = list(db.c.find(query))
        explained = db.c.find(query).explain()["executionStats"]["nReturned"]
        assert len(found) == explained, query
        assert len({d["_id"] for d in found}) == len(found), f"{query}: a document returned twice"


def test_a_sort_on_mixed_types_follows_the_bson_order(db: Database) -> None:
    db.c.insert_many(
        [{"_id": i, "a": v} for i, v in enumerate([{"x": 1}, "b", 3, None, [], True, 1.5, ObjectId("1" * 24)])]
    )
    db.c.insert_one({"_id": 99})
    order = [d["_id"] for d in db.c.find({}, sort=[("a", 1), ("_id", 1)])]
    # MongoDB: an empty array sorts below null (missing and null are equal), then numbers, strings,
    # objects, ObjectId, booleans (sort.js, "Comparison/Sort Order" in the manual).
    assert order == [4, 3, 99, 6, 2, 1, 0, 7, 5]


def test_a_hinted_sparse_index_returns_what_the_index_holds(db: Database) -> None:
    # jstests/core/index/sparse/sparse_index_supports_ne_null.js, existsa.js: a hinted sparse index
    # answers from its own keys, so documents without the field are not returned.
    db.c.insert_many([{"_id": 1, "a": 1}, {"_id": 2}, {"_id": 3, "a": None}])
    db.c.create_index("a", sparse=True)
    assert [d["_id"] for d in db.c.find({}).hint("a_1").sort("_id", 1)] == [1, 3]
    assert [d["_id"] for d in db.c.find({}).sort("_id", 1)] == [1, 2, 3]


def test_more_than_one_batch_comes_back_through_get_more(db: Database) -> None:
    db.c.insert_many([{"_id": i, "a": i % 10} for i in range(450)])
    cursor = db.c.find({"a": {"$gte": 0}}).sort("_id", -1)
    assert [d["_id"] for d in cursor] == list(range(449, -1, -1))
    assert len(list(db.c.find({}).batch_size(7).limit(30))) == 30
    assert len(list(db.c.find({}).limit(-5))) == 5


def test_projection_forms_are_the_engine_s(db: Database) -> None:
    db.c.insert_one({"_id": 1, "a": [{"k": 1, "v": "x"}, {"k": 2, "v": "y"}], "b": {"c": 1, "d": 2}, "e": 5})
    assert db.c.find_one({}, {"b.c": 1, "_id": 0}) == {"b": {"c": 1}}
    assert db.c.find_one({}, {"e": 0, "a": 0}) == {"_id": 1, "b": {"c": 1, "d": 2}}
    assert db.c.find_one({}, {"a": {"$slice": 1}, "e": 1}) == {"_id": 1, "a": [{"k": 1, "v": "x"}], "e": 5}
    assert db.c.find_one({}, {"a": {"$elemMatch": {"k": 2}}}) == {"_id": 1, "a": [{"k": 2, "v": "y"}]}
    assert db.c.find_one({"a.k": 2}, {"a.$": 1}) == {"_id": 1, "a": [{"k": 2, "v": "y"}]}
    by_pattern = {"a": {"$elemMatch": {"v": re.compile("^y")}}}  # a regex inside: the engine's own form of it
    assert db.c.find_one({"e": 5}, by_pattern) == {"_id": 1, "a": [{"k": 2, "v": "y"}]}
    assert db.c.find_one({"a.v": re.compile("^y")}, {"a.$": 1}) == {"_id": 1, "a": [{"k": 2, "v": "y"}]}


def test_a_transaction_reads_its_own_writes(db: Database) -> None:
    db.c.insert_one({"_id": 1, "n": 1})
    with db.client.start_session() as session, session.start_transaction():
        db.c.update_one({"_id": 1}, {"$set": {"n": 2}}, session=session)
        assert db.c.find_one({"_id": 1}, session=session)["n"] == 2
        assert db.c.find_one({"_id": 1})["n"] == 1  # outside: the committed version


def test_filters_the_model_does_not_cover_are_still_answered(db: Database) -> None:
    db.c.insert_many([{"_id": i, "a": i, "b": 10 - i} for i in range(10)])
    assert [d["_id"] for d in db.c.find({"$expr": {"$gt": ["$a", "$b"]}}).sort("_id", 1)] == [6, 7, 8, 9]
    assert [d["_id"] for d in db.c.find({"a": {"$mod": [3, 0]}}).sort("_id", 1)] == [0, 3, 6, 9]


def test_index_stats_count_the_plans_that_used_each_index(db: Database) -> None:
    # jstests/core/index/index_stats.js: accesses.ops moves by one per query whose winning plan uses
    # the index, and a recreated index starts again at 0.
    db.c.insert_many([{"_id": i, "a": i, "b": i % 3} for i in range(50)])
    db.c.create_index("a")
    db.c.create_index("b")

    def ops() -> dict[str, int]:
        return {s["name"]: int(s["accesses"]["ops"]) for s in db.c.aggregate([{"$indexStats": {}}])}

    before = ops()
    for i in range(4):
        db.c.find_one({"a": i})
    list(db.c.find({"b": 1}))
    db.c.find_one({"_id": 7})  # IDHACK walks _id_: MongoDB's plan summary lists it, so $indexStats counts it
    after = ops()
    assert after["a_1"] - before["a_1"] == 4
    assert after["b_1"] - before["b_1"] == 1
    assert after["_id_"] - before["_id_"] == 1
    db.c.drop_index("a_1")
    db.c.create_index("a")
    assert ops()["a_1"] == 0


@pytest.mark.parametrize("engine", ["offline"], indirect=True)
def test_the_offline_find_is_the_model_s(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """On the offline default, a find the model covers never reaches the engine's own find."""
    db.c.insert_many([{"_id": i, "a": i} for i in range(20)])
    answered: list[bool] = []
    original = offline_reads.ReadLayer.find

    async def spy(self, context, cursors):  # type: ignore[no-untyped-def]
        reply = await original(self, context, cursors)
        answered.append(reply is not None)
        return reply

    monkeypatch.setattr(offline_reads.ReadLayer, "find", spy)
    assert len(list(db.c.find({"a": {"$gte": 5}}))) == 15
    assert len(list(db.c.find({"$where": "this.a > 5"}))) == 14
    assert answered == [True, False]  # the model ran the first; the engine answered $where


def test_model_answers_only_plain_finds() -> None:
    assert offline_reads.model_answers({"find": "c", "filter": {"a": 1}})
    assert not offline_reads.model_answers({"find": "system.profile"})
    assert not offline_reads.model_answers({"find": "c", "tailable": True})
    assert not offline_reads.model_answers({"find": "c", "txnNumber": 3})
    assert not offline_reads.model_answers({"find": 5})


def test_an_aggregate_s_leading_stages_select_what_find_selects(db: Database) -> None:
    _fill(db)
    db.c.create_index([("a", ASCENDING), ("b", ASCENDING)])
    for query in FILTERS:
        found = [d["_id"] for d in db.c.find(query).sort([("b", 1), ("_id", 1)])]
        matched = [d["_id"] for d in db.c.aggregate([{"$match": query}, {"$sort": {"b": 1, "_id": 1}}])]
        assert matched == found, query
        assert db.c.count_documents(query) == len(found), query


def test_an_aggregate_counts_as_a_use_of_the_index_its_match_scans(db: Database) -> None:
    db.c.insert_many([{"_id": i, "a": i} for i in range(30)])
    db.c.create_index("a")

    def ops() -> int:
        return next(int(s["accesses"]["ops"]) for s in db.c.aggregate([{"$indexStats": {}}]) if s["name"] == "a_1")

    before = ops()
    assert [d["n"] for d in db.c.aggregate([{"$match": {"a": {"$lt": 5}}}, {"$count": "n"}])] == [5]
    assert ops() == before + 1


@pytest.mark.parametrize("engine", ["offline"], indirect=True)
def test_the_offline_aggregate_s_pushdown_is_the_model_s(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    db.c.insert_many([{"_id": i, "a": i, "b": 10 - i} for i in range(20)])
    answered: list[bool] = []
    original = offline_reads.ReadLayer.pushdown

    async def spy(self, collection, operation, session):  # type: ignore[no-untyped-def]
        documents = await original(self, collection, operation, session)
        answered.append(documents is not None)
        return documents

    monkeypatch.setattr(offline_reads.ReadLayer, "pushdown", spy)
    assert len(list(db.c.aggregate([{"$match": {"a": {"$gte": 5}}}, {"$group": {"_id": None}}]))) == 1
    assert [d["_id"] for d in db.c.aggregate([{"$match": {"a": {"$bitsAllSet": 5}}}])] == [5, 7, 13, 15]
    assert answered == [True]  # the model selected the first; the engine ran $bitsAllSet (not modelled) itself


def test_a_whole_collection_read_needs_no_model() -> None:
    # every document in natural order is any plan's answer: the engine gives it without a model build
    assert not offline_reads.model_answers({"find": "c", "filter": {}})
    assert not offline_reads.model_answers({"find": "c", "filter": {}, "limit": 5})
    assert offline_reads.model_answers({"find": "c", "filter": {}, "sort": {"a": 1}})
    assert offline_reads.model_answers({"find": "c", "filter": {}, "hint": "a_1"})


@pytest.mark.parametrize("engine", ["offline"], indirect=True)
def test_stored_records_are_kept_only_for_cached_models(db: Database) -> None:
    from workbook.offline import offline_server
    from workbook.offline_explain import hook_for

    hook = hook_for(offline_server().engine)
    for i in range(40):  # more collections than the model cache holds (16)
        db[f"c{i}"].insert_one({"_id": 1, "a": 1})
        assert db[f"c{i}"].find_one({"a": 1}) == {"_id": 1, "a": 1}
    assert len(hook._records) <= len(hook.models) + 1


WHOLE_COLLECTION_READS = [
    {},
    {"skip": 5},
    {"limit": 7},
    {"skip": 290, "limit": 20},
    {"limit": -4},
    {"batch_size": 3, "limit": 10},
    {"projection": {"a": 1}},
    {"projection": {"a": 0, "_id": 0}},
    {"projection": {"n.x": 1, "_id": 0}},
    {"projection": {"l": {"$slice": 1}}},
    {"projection": {"l": {"$elemMatch": {"k": 2}}}},
    {"filter": {}, "sort": {}, "skip": 1},
]


@pytest.mark.parametrize("engine", ["offline"], indirect=True)
def test_a_whole_collection_find_is_the_engine_s_answer(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """A find of every document in natural order is answered from the stored documents, and gives the
    bytes the engine's own find gives, in the same order, after writes as before them."""
    import datetime

    import bson
    from bson.raw_bson import RawBSONDocument

    _fill(db)
    db.c.update_many({"b": 1}, {"$set": {"n": {"x": Int64(3), "y": [1, {"x": 2}]}, "l": [{"k": 1}, {"k": 2}]}})
    db.c.update_many({"b": 2}, {"$set": {"at": datetime.datetime(2024, 5, 6, 7, 8, 9, 123000)}})
    deleted = db.c.delete_many({"b": 3}).deleted_count
    db.c.insert_one({"_id": "last", "a": [1, 2]})
    raw = db.with_options(codec_options=bson.CodecOptions(document_class=RawBSONDocument))

    def read(options: dict) -> list[bytes]:
        options = dict(options)
        cursor = raw.c.find(options.pop("filter", None), options.pop("projection", None), **options)
        return [document.raw for document in cursor]

    stored: list[bool] = []
    original = offline_reads.ReadLayer._stored

    async def spy(self, *args):  # type: ignore[no-untyped-def]
        reply = await original(self, *args)
        stored.append(reply is not None)
        return reply

    monkeypatch.setattr(offline_reads.ReadLayer, "_stored", spy)
    answers = [read(options) for options in WHOLE_COLLECTION_READS]
    assert stored == [True] * len(WHOLE_COLLECTION_READS)
    monkeypatch.setattr(offline_reads, "reads_stored", lambda body: False)  # the engine's own find
    for options, answer in zip(WHOLE_COLLECTION_READS, answers, strict=True):
        assert answer == read(options), options
    assert deleted > 0 and len(answers[0]) == 301 - deleted


@pytest.mark.parametrize("engine", ["offline"], indirect=True)
def test_a_whole_collection_find_leaves_the_rest_to_the_engine(db: Database) -> None:
    """A view, a missing collection, a transaction's own writes and malformed commands keep the
    engine's answers and errors."""
    from pymongo.errors import OperationFailure

    db.c.insert_many([{"_id": i, "a": i} for i in range(5)])
    db.create_collection("v", viewOn="c", pipeline=[{"$match": {"a": {"$gte": 3}}}])
    assert [d["_id"] for d in db.v.find()] == [3, 4]
    assert list(db.missing.find()) == []
    with db.client.start_session() as session, session.start_transaction():
        db.c.insert_one({"_id": 9, "a": 9}, session=session)
        assert [d["_id"] for d in db.c.find({}, session=session)] == [0, 1, 2, 3, 4, 9]
        assert len(list(db.c.find())) == 5  # outside: the committed version
    with pytest.raises(OperationFailure):
        db.command({"find": "c", "skip": -1})
    with pytest.raises(OperationFailure):
        db.command({"find": "c", "filter": []})
    assert offline_reads.reads_stored({"find": "c", "filter": {}, "limit": 3})
    assert not offline_reads.reads_stored({"find": "c", "skip": -1})
    assert not offline_reads.reads_stored({"find": "c", "projection": {"s": {"$meta": "textScore"}}})
    assert not offline_reads.reads_stored({"find": "c", "tailable": True})
    assert not offline_reads.reads_stored({"find": "system.profile"})


def test_min_and_max_inside_a_transaction_are_refused_by_name(db: Database, engine: str | None) -> None:
    """Inside a transaction the engine answers finds (they must see the transaction's writes), and it would
    ignore the bounds: refused by name there (jstests/core/query/minmax.js holds the answers outside one)."""
    from pymongo.errors import OperationFailure

    if engine is not None:
        pytest.skip("a real server answers min()/max() inside a transaction")
    db.c.create_index("a")
    db.c.insert_many([{"a": 3}, {"a": 4}, {"a": 5}])
    with db.client.start_session() as session, session.start_transaction():
        with pytest.raises(OperationFailure, match=r"find option\(s\) min") as refused:
            list(db.c.find({}, session=session).hint([("a", 1)]).min([("a", 4)]))
        assert refused.value.code == 115
        session.abort_transaction()
    assert [d["a"] for d in db.c.find().hint([("a", 1)]).min([("a", 4)])] == [4, 5], "outside: answered"


def test_show_record_id_is_answered_or_refused_by_name(db: Database, engine: str | None) -> None:
    """mongoeco accepts showRecordId and ignores it (no ``$recordId`` came back); the model has no record ids
    of MongoDB's, so the offline default refuses it by name."""
    from pymongo.errors import OperationFailure

    db.c.create_index([("a", 1)])
    db.c.insert_many([{"a": 3}, {"a": 4}, {"a": 5}])
    cursor = db.c.find({"a": {"$gte": 0}}, show_record_id=True).hint([("a", 1)])
    if engine is not None:
        assert all("$recordId" in document for document in cursor)
        return
    with pytest.raises(OperationFailure, match=r"find option\(s\) showRecordId"):
        list(cursor)
    assert [d["a"] for d in db.c.find({}, show_record_id=False).sort("a", 1)] == [3, 4, 5]


def test_the_profiler_files_each_operation_once_under_its_collection_with_its_comment(db: Database) -> None:
    """pymongo's test_comment: a find and a distinct tagged with a comment are found in system.profile by
    the collection's namespace, the op and the comment, once each. mongoeco filed every entry under
    ``<db>.system.profile``; the finds the model answers kept no comment (its counts and distincts no
    entry); and a command the engine answered was recorded twice (as the operation without its comment,
    then as a command)."""
    ns = f"{db.name}.coll"
    profile = db["system.profile"]
    db.command("profile", 2)
    try:
        db.coll.find().comment("empty").to_list()  # no collection yet: the engine answers it
        db.coll.insert_many([{"type": "a"}, {"type": "b"}])
        db.coll.find({"type": "a"}).comment("tagged").to_list()
        db.coll.find().comment("foo").distinct("type")
        db.coll.count_documents({"type": "a"}, comment="counted")
        list(db.coll.aggregate([{"$match": {"type": "b"}}], comment="piped"))
        db.coll.update_one({"type": "a"}, {"$set": {"x": 1}}, comment="changed")
        assert profile.count_documents({"ns": ns, "op": "query", "command.comment": "empty"}) == 1
        assert profile.count_documents({"ns": ns, "op": "query", "command.comment": "tagged"}) == 1
        distinct = {"ns": ns, "op": "command", "command.distinct": "coll", "command.comment": "foo"}
        assert profile.count_documents(distinct) == 1
        assert profile.count_documents({"ns": ns, "command.comment": "counted"}) == 1
        assert profile.count_documents({"ns": ns, "op": "command", "command.comment": "piped"}) == 1
        assert profile.count_documents({"ns": ns, "op": "update", "command.comment": "changed"}) == 1
        assert profile.count_documents({"ns": ns, "op": "insert"}) == 1
        for entry in profile.find():  # the reads of system.profile itself are filed under it, as on MongoDB
            assert entry["ns"] == f"{db.name}.{next(iter(entry['command'].values()))}", entry
        before = list(profile.find({"ns": ns}))
        db.command("profile", 1, slowms=100_000)  # now only slow operations: these leave no entry
        list(db.coll.aggregate([{"$match": {"type": "b"}}], comment="fast"))
        assert list(profile.find({"ns": ns})) == before, "none added, none completed by the fast one"
    finally:
        db.command("profile", 0)
        db["system.profile"].drop()


def test_a_find_by_id_runs_its_plan_on_the_servers_loop_and_others_off_it(
    db: Database, engine: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A find of one plain ``_id`` reads one document at most (IDHACK), so it does not cross to a worker thread
    and back; every other find still runs off the loop, and each answers as before."""
    import threading

    if engine is not None:
        pytest.skip("the offline default's read layer")
    ran: list[str] = []
    real = offline_reads.planner.find_records

    def recording(*args, **kwargs):  # type: ignore[no-untyped-def]
        ran.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(offline_reads.planner, "find_records", recording)
    db.c.insert_many([{"_id": i, "a": i % 3} for i in range(20)] + [{"_id": "x", "a": 9}, {"_id": {"k": 5}, "a": 8}])
    on_loop = [{"_id": 7}, {"_id": 7.0}, {"_id": 99}]
    off_loop = [{"_id": {"$eq": 7}}, {"_id": 7, "a": 1}, {"a": 1}, {"_id": {"k": 5}}, {"_id": {"$in": [1, 2]}}]
    answers = {repr(f): sorted(map(repr, (d["_id"] for d in db.c.find(f)))) for f in on_loop + off_loop}
    assert ran[: len(on_loop)] == ["workbook-engine"] * len(on_loop)
    assert "workbook-engine" not in ran[len(on_loop) :] and len(ran) == len(on_loop + off_loop)
    assert answers["{'_id': 7}"] == ["7"] == answers["{'_id': 7.0}"] and answers["{'_id': 99}"] == []
    assert answers["{'_id': 7, 'a': 1}"] == ["7"] and answers["{'_id': {'k': 5}}"] == ["{'k': 5}"]
    assert answers["{'_id': {'$in': [1, 2]}}"] == ["1", "2"]


def test_a_find_of_one_string_or_objectid_id_reads_it_by_its_key_with_the_models_answer(
    db: Database, engine: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a write the model rebuilds from every document; a find of one exact ``_id`` does not need it. Its
    answers (projection, limit, batches, a missing id, after updates and deletes) equal the model's, it counts
    as a use of ``_id_``, and no model is built for it."""
    from workbook import offline_explain

    ids = [f"k{i}" for i in range(30)] + [ObjectId() for _ in range(5)]
    db.c.insert_many([{"_id": i, "a": n % 4, "b": {"c": n}} for n, i in enumerate(ids)])
    db.c.update_one({"_id": "k3"}, {"$set": {"a": 99}})
    db.c.delete_one({"_id": "k4"})
    finds = [
        ({"_id": "k3"}, None, 0),
        ({"_id": "k4"}, None, 0),
        ({"_id": "nothere"}, None, 0),
        ({"_id": ids[32]}, {"b.c": 1, "_id": 0}, 0),
        ({"_id": "k5"}, {"a": 1}, -1),
        ({"_id": "k6"}, None, 1),
    ]
    for filter_, projection, limit in finds:  # the model's answer: the same find through {$in: [...]}
        model_answer = list(db.c.find({"_id": {"$in": [filter_["_id"]]}}, projection, limit=limit))
        assert list(db.c.find(filter_, projection, limit=limit)) == model_answer
    if engine is not None:
        return
    builds: list[int] = []
    real = offline_explain.planner.CollectionModel
    monkeypatch.setattr(offline_explain.planner, "CollectionModel", lambda *a, **k: builds.append(1) or real(*a, **k))
    before = {s["name"]: s["accesses"]["ops"] for s in db.c.aggregate([{"$indexStats": {}}])}["_id_"]
    for n in range(20):
        db.c.update_one({"_id": "k7"}, {"$inc": {"a": 1}})
        assert db.c.find_one({"_id": "k7"})["a"] == 4 + n  # 7 % 4 == 3, then one more per update
    after = {s["name"]: s["accesses"]["ops"] for s in db.c.aggregate([{"$indexStats": {}}])}["_id_"]
    assert builds == [] and after - before == 20

"""Engine gaps of mongoeco 4.11.0 that lessons or learners' code hit, closed by the offline default.

Each test failed before the fix in workbook/offline.py or workbook/engine_compat.py (see patches/).
"""

from __future__ import annotations

import datetime
import re
import uuid

import pytest
from bson import Binary, Code, DBRef, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp
from bson.binary import UuidRepresentation
from bson.codec_options import CodecOptions
from pymongo.errors import BulkWriteError, OperationFailure, WriteError

from workbook import facts, offline
from workbook.offline import MAX_BSON_SIZE, WORK_COUNTERS, engine_bson_size

EVERY_BSON_TYPE = {
    "double": 1.5,
    "string": "é ünïcode",
    "object": {"nested": {"deep": 1}},
    "array": [1, "two", {"three": 3}],
    "binary": Binary(b"\x00\x01\x02", 128),
    "uuid": uuid.UUID("12345678-1234-5678-1234-567812345678"),
    "objectId": ObjectId("0123456789ab0123456789ab"),
    "bool": True,
    "date": datetime.datetime(2026, 12, 1, 9, 30, 15, 123000),
    "null": None,
    "regex": Regex("^ab", "i"),
    "code": Code("function () { return 1; }"),
    "int32": 7,
    "timestamp": Timestamp(1_700_000_000, 3),
    "int64": Int64(2**40),
    "bigint": 2**31,
    "decimal128": Decimal128("19.99"),
    "dbref": DBRef("products", ObjectId("0123456789ab0123456789ab")),
    "minKey": MinKey(),
    "maxKey": MaxKey(),
}


@pytest.fixture
def odb(monkeypatch):
    """A fresh database on the offline default only, with UUIDs encoded the standard way."""
    import workbook

    monkeypatch.delenv("MONGODB_URI", raising=False)
    database = workbook.connect(database=f"gaps{uuid.uuid4().hex[:8]}", quiet=True)
    yield database.with_options(codec_options=CodecOptions(uuid_representation=UuidRepresentation.STANDARD))
    database.client.drop_database(database.name)


def test_every_bson_type_round_trips_over_the_wire(odb):
    odb.docs.insert_one({"_id": "all", **EVERY_BSON_TYPE})
    back = odb.docs.find_one({"_id": "all"})
    for name, value in EVERY_BSON_TYPE.items():
        assert back[name] == value, name
    assert isinstance(back["int64"], Int64) and isinstance(back["decimal128"], Decimal128)


@pytest.mark.parametrize("name", ["int64", "bigint", "decimal128", "dbref", "uuid"])
def test_each_once_failing_type_passes_the_16_mib_guard(odb, name):
    """These failed with '$bsonSize cannot encode value of type BsonInt64' (the workbench's own guard)."""
    odb.money.insert_one({"_id": name, "v": EVERY_BSON_TYPE[name]})
    odb.money.update_one({"_id": name}, {"$set": {"w": EVERY_BSON_TYPE[name]}})
    assert odb.money.find_one({"_id": name})["w"] == EVERY_BSON_TYPE[name]


def test_bson_size_of_engine_values_matches_bsonsize(odb):
    document = {"_id": 1, "price": Decimal128("9.99"), "n": Int64(2**40), "ref": DBRef("c", 1), "lo": MinKey()}
    odb.d.insert_one(document)
    reported = next(odb.d.aggregate([{"$project": {"s": {"$bsonSize": "$$ROOT"}}}]))["s"]
    assert engine_bson_size(document) == reported


def test_small_int64_keeps_its_type(odb):
    # mongoeco 4.11.0 alone narrows a small Int64 to int32; the offline read layer reads the engine's
    # own stored forms (its find returns the public form, its aggregate the internal one), which keep it.
    odb.d.insert_one({"_id": 1, "n": Int64(5)})
    assert next(odb.d.aggregate([{"$project": {"t": {"$type": "$n"}}}]))["t"] == "long"
    assert type(odb.d.find_one({"_id": 1})["n"]) is Int64
    assert odb.d.count_documents({"n": {"$type": "long"}}) == 1


def test_comparisons_respect_type_brackets(odb):
    odb.b.insert_many(
        [
            {"a": 1},
            {"a": 2},
            {"a": 3.5},
            {"a": "x"},
            {"a": datetime.datetime(2020, 1, 1)},
            {"a": True},
            {"a": [0, "z"]},
            {"s": {"a": 5}},
            {"s": {"a": "q"}},
        ]
    )
    assert sorted(d["a"] for d in odb.b.find({"a": {"$gt": 1}})) == [2, 3.5]
    assert odb.b.count_documents({"a": {"$gt": 1}}) == 2
    assert [d["a"] for d in odb.b.find({"a": {"$lt": "zz"}}, sort=[("_id", 1)])] == ["x", [0, "z"]]
    assert [d["s"]["a"] for d in odb.b.find({"s.a": {"$gte": 0}})] == [5]
    assert len(list(odb.b.aggregate([{"$match": {"a": {"$lte": 100}}}]))) == 4  # 1, 2, 3.5 and [0, "z"]


def test_write_errors_always_carry_a_code():
    reply = {"writeErrors": [{"index": 0, "errmsg": "no code"}, {"index": 1, "code": 11000, "errmsg": "dup"}]}
    from workbook.offline_executor import fill_write_error_codes

    fill_write_error_codes(reply)
    assert [e["code"] for e in reply["writeErrors"]] == [facts.BAD_VALUE, 11000]


def test_bulk_write_error_reports_codes(odb):
    odb.w.create_index("u", unique=True)
    with pytest.raises(BulkWriteError) as caught:
        odb.w.insert_many([{"u": 1}, {"u": 1}, {"u": 2}], ordered=False)
    assert [e["code"] for e in caught.value.details["writeErrors"]] == [11000]
    assert caught.value.details["nInserted"] == 2


def test_replace_with_an_empty_document_keeps_only_id(odb):
    odb.r.insert_one({"_id": 1, "a": 1, "b": 2})
    assert odb.r.replace_one({"_id": 1}, {}).modified_count == 1
    assert odb.r.find_one({"_id": 1}) == {"_id": 1}


@pytest.mark.parametrize("locale", ["en_US", "fr", "de", "es"])
@pytest.mark.parametrize("strength", [1, 2, 3])
def test_collation_locales_beyond_en(odb, locale, strength):
    odb.c.insert_many([{"w": "resume"}, {"w": "Résumé"}, {"w": "RESUME"}])
    found = odb.c.count_documents({"w": "resume"}, collation={"locale": locale, "strength": strength})
    assert found == {1: 3, 2: 2, 3: 1}[strength]


def test_out_replaces_the_target_collection(odb):
    odb.src.insert_many([{"k": i % 3} for i in range(9)])
    odb.dst.insert_one({"old": True})
    assert list(odb.src.aggregate([{"$group": {"_id": "$k", "n": {"$sum": 1}}}, {"$out": "dst"}])) == []
    assert sorted((d["_id"], d["n"]) for d in odb.dst.find()) == [(0, 3), (1, 3), (2, 3)]


def test_capped_collection_accepts_a_double_size(odb):
    odb.create_collection("log", capped=True, size=4096.0)
    assert odb.log.options()["capped"] is True


def test_growing_update_past_16_mib_fails_with_17419_and_insert_with_2(odb):
    odb.g.insert_one({"_id": 1, "s": "x" * (10 * 1024 * 1024)})
    with pytest.raises(WriteError) as caught:
        odb.g.update_one({"_id": 1}, {"$set": {"t": "y" * (10 * 1024 * 1024)}})
    assert caught.value.code == 17419
    assert "t" not in odb.g.find_one({"_id": 1}, {"s": 0})
    with pytest.raises(WriteError) as inserted:  # pymongo refuses > 16 MiB itself: the loader's path
        offline.offline_server().bulk_insert(odb.name, "g", [{"a": "x" * MAX_BSON_SIZE}])
    assert inserted.value.code == 2  # BadValue, "object to insert too large" (jstests core/max_doc_size.js)
    with pytest.raises(WriteError) as too_big:
        odb.g.update_one({"_id": 1}, {"$push": {"more": "z" * (7 * 1024 * 1024)}})
    assert too_big.value.code == 17419


@pytest.mark.parametrize(
    ("option", "value", "code"),
    [("validationLevel", "banana", 2), ("validationAction", "shout", 2), ("validator", 5, 14)],
)
def test_coll_mod_validates_its_arguments(odb, option, value, code):
    odb.create_collection("v")
    with pytest.raises(OperationFailure) as caught:
        odb.command("collMod", "v", **{option: value})
    assert caught.value.code == code and re.search(option, str(caught.value))
    odb.v.insert_one({"still": "works"})  # a refused collMod changed nothing


def test_insert_many_with_numeric_ids_is_linear(odb):
    """Guard for the speed patch: work per inserted document stays constant (mongoeco: one scan each)."""
    WORK_COUNTERS.update({"insert_calls": 0, "id_documents_examined": 0})
    odb.n.insert_many([{"_id": i} for i in range(2000)])
    assert odb.n.count_documents({}) == 2000
    # 2,000 documents in one wire batch: one engine call per piece of BULK_INSERT_CHUNK (the loop
    # answers other clients between pieces), no per-document scan (quadratic would be ~2e6).
    from workbook.offline_writes import BULK_INSERT_CHUNK

    assert WORK_COUNTERS["insert_calls"] <= 2000 // BULK_INSERT_CHUNK + 1
    assert WORK_COUNTERS["id_documents_examined"] <= 2000
    with pytest.raises(BulkWriteError):
        odb.n.insert_many([{"_id": 2001}, {"_id": 5.0}])  # 5.0 == 5: MongoDB's numeric _id equality holds
    assert odb.n.count_documents({}) == 2001


def test_views_read_through_their_pipeline_and_refuse_writes(odb):
    odb.items.insert_many([{"a": 1}, {"a": "x"}, {"a": 3}])
    odb.command({"create": "numbers", "viewOn": "items", "pipeline": [{"$match": {"a": {"$type": "number"}}}]})
    odb.create_collection("top", viewOn="numbers", pipeline=[{"$sort": {"a": -1}}, {"$limit": 1}])
    assert sorted(d["a"] for d in odb.numbers.find()) == [1, 3]
    assert odb.numbers.count_documents({"a": {"$gt": 1}}) == 1
    assert [d["a"] for d in odb.top.find({}, {"_id": 0})] == [3]
    assert next(odb.numbers.aggregate([{"$group": {"_id": None, "s": {"$sum": "$a"}}}]))["s"] == 4
    assert {c["name"]: c["type"] for c in odb.list_collections()} == {
        "items": "collection",
        "numbers": "view",
        "top": "view",
    }
    with pytest.raises(OperationFailure) as caught:
        odb.numbers.insert_one({"a": 5})
    assert caught.value.code == 166


def test_find_and_modify_with_an_empty_replacement(odb):
    odb.r.insert_one({"_id": 1, "a": 1})
    assert odb.r.find_one_and_replace({"_id": 1}, {}) == {"_id": 1, "a": 1}
    assert odb.r.find_one({"_id": 1}) == {"_id": 1}


def test_a_too_large_document_in_an_insert_batch_is_that_documents_write_error(odb):
    with pytest.raises(BulkWriteError) as caught:
        odb.big.insert_many([{"a": 1}, {"big": "x" * MAX_BSON_SIZE}, {"a": 2}], ordered=False)
    assert [(e["index"], e["code"]) for e in caught.value.details["writeErrors"]] == [(1, 2)]
    assert odb.big.count_documents({}) == 2


def test_a_group_result_over_16_mib_fails_as_on_a_server(odb):
    odb.gg.insert_many([{"k": 1, "s": "x" * (1024 * 1024)} for _ in range(17)])
    with pytest.raises(OperationFailure) as caught:
        list(odb.gg.aggregate([{"$group": {"_id": "$k", "all": {"$push": "$s"}}}]))
    assert caught.value.code == 10334
    assert len(next(odb.gg.aggregate([{"$group": {"_id": "$k", "n": {"$sum": 1}}}]))) == 2


def test_database_level_aggregate(odb):
    sessions = list(odb.client.admin.aggregate([{"$listLocalSessions": {}}, {"$limit": 1}, {"$project": {"_id": 1}}]))
    assert len(sessions) == 1
    assert [d["a"] for d in odb.aggregate([{"$documents": [{"a": 1}, {"a": 2}]}, {"$match": {"a": 2}}])] == [2]


def test_a_hinted_find_returns_documents_in_index_order(odb):
    odb.coll.insert_many([{"num": i} for i in range(20)])
    odb.coll.create_index([("num", -1)])
    assert next(odb.coll.find().hint([("num", -1)]))["num"] == 19
    assert next(odb.coll.find().hint("num_-1"))["num"] == 19
    assert next(odb.coll.find())["num"] == 0


def test_rename_a_collection_to_another_database(odb):
    other = odb.client[odb.name + "_b"]
    odb.a.insert_many([{"k": i} for i in range(5)])
    odb.a.create_index("k", unique=True)
    odb.client.admin.command("renameCollection", f"{odb.name}.a", to=f"{other.name}.b")
    try:
        assert "a" not in odb.list_collection_names()
        assert other.b.count_documents({}) == 5
        assert "k_1" in [i["name"] for i in other.b.list_indexes()]
    finally:
        odb.client.drop_database(other.name)


def test_rename_within_a_database_and_count_on_a_view(odb):
    odb.a.insert_many([{"k": i} for i in range(5)])
    odb.a.rename("b")
    assert odb.list_collection_names() == ["b"]
    odb.create_collection("big_k", viewOn="b", pipeline=[{"$match": {"k": {"$gt": 1}}}])
    assert odb.big_k.estimated_document_count() == 3


def test_a_write_concern_no_standalone_can_satisfy_is_refused(odb):
    from pymongo.write_concern import WriteConcern

    with pytest.raises(OperationFailure) as caught:
        odb.create_collection("x", write_concern=WriteConcern(w=50))
    assert caught.value.code == 2


def test_a_dollar_prefixed_field_in_id_is_refused_by_the_server(odb):
    with pytest.raises(BulkWriteError) as caught:
        odb.c.insert_many([{"_id": 1}, {"_id": 1}, {"_id": {"$a": 1}}, {"_id": 2}], ordered=False)
    assert [(e["index"], e["code"]) for e in caught.value.details["writeErrors"]] == [(1, 11000), (2, 52)]
    assert sorted(d["_id"] for d in odb.c.find()) == [1, 2]


def test_let_values_are_evaluated_expressions(odb):
    odb.l.insert_many([{"_id": 1}, {"_id": 2}])
    pipeline = [{"$match": {"$expr": {"$eq": ["$_id", "$$id"]}}}, {"$project": {"_id": 0, "y": "$$y", "r": "$$r"}}]
    [row] = odb.l.aggregate(pipeline, let={"id": 1, "y": {"$literal": "$bar"}, "r": {"$rand": {}}})
    assert row["y"] == "$bar" and isinstance(row["r"], float)
    odb.l.aggregate([{"$match": {"$expr": {"$eq": ["$_id", "$$id"]}}}, {"$out": "l_out"}], let={"id": 2})
    assert [d["_id"] for d in odb.l_out.find()] == [2]

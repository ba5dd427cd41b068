"""What the course needs from a database, checked the same way on every engine.

Each test runs on the offline default and, when MONGODB_URI is set, on real MongoDB: a
learner's pymongo code must not need to know which engine it runs on.
"""

from __future__ import annotations

import pytest
from pymongo import ASCENDING, DESCENDING
from pymongo.collation import Collation
from pymongo.errors import DocumentTooLarge, DuplicateKeyError, OperationFailure, WriteError

import workbook

MIB = 1024 * 1024


def test_handle_is_plain_pymongo(db):
    assert db.client.__class__.__module__.startswith("pymongo")
    assert db.client.server_info()["version"]  # pymongo sends lowercase buildinfo
    with db.client.start_session() as session:
        assert session.client is db.client


def test_push_each_sort_slice_keeps_newest(db):
    db.products.insert_one({"_id": "p1", "recent": []})
    for day in range(1, 9):
        db.products.update_one(
            {"_id": "p1"},
            {"$push": {"recent": {"$each": [{"day": day}], "$sort": {"day": -1}, "$slice": 5}}},
        )
    assert [r["day"] for r in db.products.find_one({"_id": "p1"})["recent"]] == [8, 7, 6, 5, 4]


def test_unique_compound_index_rejects_duplicate_pair(db):
    db.follows.create_index([("followedId", ASCENDING), ("followerId", ASCENDING)], unique=True)
    db.follows.insert_one({"followedId": "u1", "followerId": "u2"})
    db.follows.insert_one({"followedId": "u2", "followerId": "u1"})
    with pytest.raises(DuplicateKeyError):
        db.follows.insert_one({"followedId": "u1", "followerId": "u2"})
    assert db.follows.count_documents({}) == 2


def test_multikey_index_finds_array_elements(db):
    db.posts.create_index("tags")
    db.posts.insert_many([{"_id": "a", "tags": ["x", "y"]}, {"_id": "b", "tags": ["y"]}])
    assert sorted(d["_id"] for d in db.posts.find({"tags": "y"})) == ["a", "b"]


def test_collation_on_cursor_and_index(db):
    db.customers.create_index("name", collation={"locale": "en", "strength": 2})
    db.customers.insert_many([{"_id": 1, "name": "Ada"}, {"_id": 2, "name": "ada"}, {"_id": 3, "name": "Bob"}])
    found = db.customers.find({"name": "ADA"}).collation(Collation(locale="en", strength=2))
    assert sorted(d["_id"] for d in found) == [1, 2]
    assert db.customers.count_documents({"name": "ADA"}) == 0  # simple binary comparison


def test_aggregation_lookup_group_facet_bsonsize_merge(db):
    db.products.insert_many([{"_id": "p1", "price": 10}, {"_id": "p2", "price": 20}])
    db.reviews.insert_many([{"productId": "p1", "rating": r} for r in (5, 3)] + [{"productId": "p2", "rating": 4}])
    joined = list(
        db.products.aggregate(
            [
                {"$lookup": {"from": "reviews", "localField": "_id", "foreignField": "productId", "as": "reviews"}},
                {"$project": {"n": {"$size": "$reviews"}, "bytes": {"$bsonSize": "$$ROOT"}}},
                {"$sort": {"_id": 1}},
            ]
        )
    )
    assert [d["n"] for d in joined] == [2, 1] and all(d["bytes"] > 20 for d in joined)
    facets = next(
        db.reviews.aggregate(
            [{"$facet": {"count": [{"$count": "n"}], "avg": [{"$group": {"_id": None, "a": {"$avg": "$rating"}}}]}}]
        )
    )
    assert facets["count"][0]["n"] == 3 and facets["avg"][0]["a"] == 4
    db.reviews.aggregate([{"$group": {"_id": "$productId", "n": {"$sum": 1}}}, {"$merge": {"into": "summary"}}])
    assert {d["_id"]: d["n"] for d in db.summary.find()} == {"p1": 2, "p2": 1}


def test_json_schema_validator_rejects_bad_writes(db):
    db.create_collection("orders", validator={"$jsonSchema": {"bsonType": "object", "required": ["customerId"]}})
    db.orders.insert_one({"customerId": "c1"})
    with pytest.raises(WriteError) as caught:
        db.orders.insert_one({"total": 3})
    assert caught.value.code == 121
    db.command("collMod", "orders", validator={"$jsonSchema": {"required": ["customerId", "total"]}})
    with pytest.raises(WriteError):
        db.orders.insert_one({"customerId": "c2"})
    assert db.orders.count_documents({}) == 1


def test_hide_index_with_collmod(db):
    db.products.create_index("price", name="price_1")
    reply = db.command("collMod", "products", index={"name": "price_1", "hidden": True})
    assert reply["hidden_new"] is True
    assert next(i for i in db.products.list_indexes() if i["name"] == "price_1").get("hidden") is True
    db.command("collMod", "products", index={"keyPattern": {"price": 1}, "hidden": False})
    assert not next(i for i in db.products.list_indexes() if i["name"] == "price_1").get("hidden", False)
    with pytest.raises(OperationFailure):
        db.command("collMod", "products", index={"name": "nope", "hidden": True})


def test_collection_sizes(db):
    db.items.insert_many([{"_id": i, "pad": "x" * 100} for i in range(10)])
    stats = db.command("collStats", "items")
    assert stats["count"] == 10
    assert 10 * 100 < stats["size"] < 10 * 200
    assert stats["avgObjSize"] == pytest.approx(stats["size"] / 10, rel=0.01)


def test_transaction_commits_and_aborts(db):
    db.stock.insert_one({"_id": "p1", "qty": 5})
    with db.client.start_session() as session, session.start_transaction():
        db.stock.update_one({"_id": "p1"}, {"$inc": {"qty": -1}}, session=session)
        db.orders.insert_one({"_id": "o1"}, session=session)
    with db.client.start_session() as session:
        session.start_transaction()
        db.stock.update_one({"_id": "p1"}, {"$inc": {"qty": -1}}, session=session)
        db.orders.insert_one({"_id": "o2"}, session=session)
        session.abort_transaction()
    assert db.stock.find_one({"_id": "p1"})["qty"] == 4
    assert [d["_id"] for d in db.orders.find()] == ["o1"]


def test_insert_over_16_mib_is_rejected(db):
    with pytest.raises((DocumentTooLarge, WriteError)):
        db.big.insert_one({"_id": "big", "blob": "x" * (17 * MIB)})
    assert db.big.count_documents({}) == 0


def test_update_growing_past_16_mib_is_rejected_and_document_kept(db):
    db.big.insert_one({"_id": "p", "reviews": []})
    db.big.create_index("reviews")
    chunk = "r" * MIB
    with pytest.raises(WriteError) as caught:
        for i in range(20):
            db.big.update_one({"_id": "p"}, {"$push": {"reviews": f"{i}{chunk}"}})
    assert caught.value.code in (17419, 8375908)  # as jstests core/max_doc_size.js allows
    kept = db.big.find_one({"_id": "p"})
    assert len(kept["reviews"]) == i  # every update before the failing one, nothing after
    assert db.big.count_documents({"reviews": f"{i - 1}{chunk}"}) == 1
    assert db.big.count_documents({"reviews": f"{i}{chunk}"}) == 0


def test_duplicate_ids_still_detected_after_the_fast_insert_fix(db):
    db.things.insert_many([{"_id": "a"}, {"_id": 1}])
    with pytest.raises(DuplicateKeyError):
        db.things.insert_one({"_id": "a"})
    with pytest.raises(DuplicateKeyError):
        db.things.insert_one({"_id": 1.0})  # 1 == 1.0 in BSON comparison
    assert db.things.count_documents({}) == 2


def test_transactions_reported_available(db):
    info = workbook.engine_info(db)
    if info.kind == "offline":
        assert info.transactions is True
    else:  # a replica set or a sharded cluster runs transactions; a standalone server does not
        hello = db.client.admin.command("hello")
        assert info.transactions is bool(hello.get("setName") or hello.get("msg") == "isdbgrid")


def test_sort_descending_and_limit(db):
    db.orders.create_index([("customerId", ASCENDING), ("createdAt", DESCENDING)])
    db.orders.insert_many([{"customerId": "c1", "createdAt": day} for day in range(10)])
    newest = db.orders.find({"customerId": "c1"}).sort("createdAt", DESCENDING).limit(3)
    assert [d["createdAt"] for d in newest] == [9, 8, 7]


def test_round_trips_and_reply_bytes_are_counted_alike(db):
    from workbook.monitor import capture

    db.items.insert_many([{"_id": i, "pad": "x" * 100} for i in range(300)])
    with capture() as everything:
        assert len(list(db.items.find())) == 300
    assert [c["name"] for c in everything.commands] == ["find", "getMore"]  # 101 documents, then the rest
    assert everything.round_trips == 2 and everything.docs_returned == 300
    assert 300 * 100 < everything.bytes_returned < 300 * 200
    with capture() as one:
        db.items.find_one({"_id": 7})
    assert (one.round_trips, one.docs_returned) == (1, 1)
    assert one.commands[0]["command"]["filter"] == {"_id": 7}

"""The offline default's insert path after issue 23's profile: each shortcut gives what mongoeco's own code gives."""

from __future__ import annotations

import asyncio
import datetime
from typing import Any

import pytest
from bson import Decimal128, Int64, ObjectId

import workbook
from workbook import engine_compat, offline_ids
from workbook.offline import offline_server

IDS: list[Any] = [
    0, 7, -(2**40), 2**62, 5.0, 5.5, Int64(9), Decimal128("3"), Decimal128("3.50"), "7", "", ObjectId(),
    {"a": 1}, {"a": "x"}, datetime.datetime(2024, 1, 2), True, None, {"$mongoeco": 1},
]  # fmt: skip
"""``_id`` values of each kind the stored-form shortcut reads itself or decodes."""


def test_the_numeric_id_count_reads_the_stored_id_as_decoding_it_would() -> None:
    engine = offline_server().engine
    collection = engine_compat.memory_collection_class()()
    ids = offline_ids.numeric_ids(engine, collection)
    assert ids is not None
    encode = engine_compat.document_codec().encode
    for identifier in IDS:
        stored = engine._encode_storage_document({"_id": identifier, "pad": "x"})
        expected = offline_ids.id_key(engine._borrow_storage_document(stored)["_id"])
        fresh = engine._encode_storage_document({"_id": identifier, "pad": "x"})  # nothing decoded yet
        assert ids.key_of(fresh) == expected, identifier
        assert ids.key_of(fresh.payload) == expected, identifier  # a bare payload, as snapshots store
        kept = engine_compat.lazy_stored_class()({"_id": identifier, "pad": "x"}, encode, shared=True)
        assert ids.key_of(kept) == expected, identifier  # kept as sent or restored: read before its payload
        if type(identifier) in (int, str, ObjectId):
            assert not kept.encoded(), identifier


def test_id_numeric_shortcuts_agree_with_mongoeco() -> None:
    from mongoeco.core.identity import id_contains_numeric_value as mongoecos

    for identifier in [*IDS, 2**63 - 1, -(2**63)]:
        assert engine_compat.id_contains_numeric_value(identifier) == bool(mongoecos(identifier)), identifier
    for too_wide in (2**63, -(2**63) - 1):
        with pytest.raises(Exception) as expected:
            mongoecos(too_wide)
        with pytest.raises(type(expected.value)):
            engine_compat.id_contains_numeric_value(too_wide)


def test_change_streams_still_see_every_insert_after_the_cheap_delivery() -> None:
    """Inserts before anyone watches are gaps; a stream opened after sees the later inserts, in order.

    On an engine of its own: in the suite's shared server a stream opened after tests d-h
    (``pytest tests/test_[d-h]*.py`` then this test) waits forever for its first event, on the code
    before the cheap delivery too: a change-stream bug of long sessions, noted, not this test's subject.
    """
    from mongoeco.api import AsyncMongoClient

    from workbook.offline_engine import WorkbenchEngine

    offline_server()  # the patches installed, as on the server
    client = AsyncMongoClient(WorkbenchEngine(aggregation_materialization_limit=None))

    async def watch_and_insert() -> list[Any]:
        collection = client.get_database("test_insert_delivery").get_collection("c")
        await collection.insert_many([{"_id": i} for i in range(250)])  # gaps: nobody watches
        stream = collection.watch()
        await collection.insert_many([{"_id": 1000 + i} for i in range(3)])
        await collection.insert_one({"_id": 2000, "n": 1})
        await collection.update_one({"_id": 2000}, {"$set": {"n": 2}})
        await collection.delete_one({"_id": 1001})
        events: list[Any] = [await asyncio.wait_for(stream.try_next(), 10) for _ in range(6)]
        assert events[3]["fullDocument"] == {"_id": 2000, "n": 1}  # as inserted, not as updated after
        return [(event["operationType"], event["documentKey"]["_id"]) for event in events]

    assert asyncio.run(watch_and_insert()) == [
        ("insert", 1000),
        ("insert", 1001),
        ("insert", 1002),
        ("insert", 2000),
        ("update", 2000),
        ("delete", 1001),
    ]


def test_a_wire_insert_without_ids_and_with_odd_values_stores_what_mongoeco_would() -> None:
    """The executor hands mongoeco documents already at its command boundary; one without _id gets one."""
    db = workbook.connect(database="test_insert_forms", quiet=True)
    db.client.drop_database(db.name)
    when = datetime.datetime(2024, 5, 6, 7, 8, 9, 123000)
    documents: list[dict[str, Any]] = [
        {"_id": 1, "n": Int64(5), "d": Decimal128("1.50"), "when": when, "list": [1, {"a": [2.5, None]}]},
        {"_id": ObjectId("65a1b2c3d4e5f60718293a4b"), "nested": {"$mongoeco": 1}},
    ]
    try:
        db.c.insert_many(documents)
        db.client[db.name].command("insert", "c", documents=[{"no_id": True}])  # no _id: the engine adds one
        stored = list(db.c.find({}, sort=[("$natural", 1)]))
        assert stored[:2] == documents
        assert isinstance(stored[0]["n"], Int64) and isinstance(stored[2]["_id"], ObjectId)
        assert stored[2]["no_id"] is True and len(stored) == 3
    finally:
        db.client.drop_database(db.name)


def test_an_unwatched_insert_many_is_one_gap_range_to_a_change_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inserts while no change stream is open reach the hub as one gap per engine call (it was one per
    document), and the hub records the same range: a stream opened after them sees the next event with
    the sequence number that follows them. (Resuming across a gap is refused, as before: mongoeco's.)"""
    from mongoeco.api import AsyncMongoClient
    from mongoeco.change_streams import ChangeStreamHub

    from workbook.offline_engine import WorkbenchEngine

    offline_server()
    client = AsyncMongoClient(WorkbenchEngine(aggregation_materialization_limit=None))
    marked: list[int] = []
    mark_gap = ChangeStreamHub.mark_gap
    monkeypatch.setattr(ChangeStreamHub, "mark_gap", lambda hub: marked.append(1) or mark_gap(hub))

    async def watch_around_inserts() -> tuple[Any, Any]:
        collection = client.get_database("test_gap_ranges").get_collection("c")
        stream = collection.watch()
        await collection.insert_one({"_id": "before"})
        first = await asyncio.wait_for(stream.try_next(), 10)
        stream.close()
        await collection.insert_many([{"_id": i} for i in range(500)])  # nobody watches: gaps
        resumed = collection.watch()
        await collection.insert_one({"_id": "after"})
        return first, await asyncio.wait_for(resumed.try_next(), 10)

    first, after = asyncio.run(watch_around_inserts())
    assert len(marked) == 1
    assert client._change_hub._gaps == [(2, 501)]  # the 500 inserts' sequence numbers, as one range
    assert (first["clusterTime"], after["clusterTime"]) == (1, 502)
    assert after["documentKey"] == {"_id": "after"}


def test_a_new_document_with_only_the_id_index_is_checked_by_its_storage_key_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With no index but ``_id``'s, an insert's unique check is one lookup: of its storage key for an ``_id`` that
    equals only itself (a string, an ObjectId), of the count of numeric ids for a number. The layers below are not
    asked. A collection with another index still goes through every layer; duplicates are still refused."""
    from pymongo.errors import BulkWriteError, DuplicateKeyError

    from workbook import offline_unique

    asked: list[Any] = []
    below = offline_unique.UniqueKeysByIndex._ensure_unique_indexes

    def counted(self: Any, db_name: str, coll_name: str, candidate: Any, **kw: Any) -> None:
        asked.append(candidate.get("_id"))
        below(self, db_name, coll_name, candidate, **kw)

    monkeypatch.setattr(offline_unique.UniqueKeysByIndex, "_ensure_unique_indexes", counted)
    db = workbook.connect(database="test_id_only_checks", quiet=True)
    db.client.drop_database(db.name)
    try:
        db.c.insert_many([{"_id": "a"}, {"_id": ObjectId()}, {"_id": "b"}])
        db.c.insert_one({"_id": "c"})
        assert asked == []
        with pytest.raises(DuplicateKeyError) as duplicate:
            db.c.insert_one({"_id": "a"})
        assert 'dup key: { _id: "a" }' in str(duplicate.value)  # (the engine's loop finds it first)
        with pytest.raises(BulkWriteError) as in_batch:
            db.c.insert_many([{"_id": "d"}, {"_id": "d"}])
        assert [e["index"] for e in in_batch.value.details["writeErrors"]] == [1]
        db.c.insert_many([{"_id": 7}, {"_id": 8.5}])  # numbers: answered by the count of numeric ids
        assert asked == []
        with pytest.raises(DuplicateKeyError) as numeric:
            db.c.insert_one({"_id": 7.0})  # equal to 7 under another storage key
        assert "dup key" in str(numeric.value) and numeric.value.code == 11000
        db.c.create_index("x")
        db.c.insert_one({"_id": 9})
        assert 9 in asked  # another index: every layer
        db.c.insert_one({"_id": "e", "x": 1})
        assert "e" in asked
        assert sorted(d["_id"] for d in db.c.find({"_id": {"$type": "string"}})) == ["a", "b", "c", "d", "e"]
        db.u.create_index("x", unique=True)
        db.u.insert_one({"_id": "f", "x": 1})
        with pytest.raises(DuplicateKeyError):
            db.u.insert_one({"_id": "g", "x": 1})
        assert "g" in asked and db.u.count_documents({}) == 1
    finally:
        db.client.drop_database(db.name)


def test_a_wire_insert_is_sized_by_its_request_not_encoded_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each document of an insert arrives with its BSON length in front: under 16 MiB by that (plus an
    ``_id`` the engine may add), it is not encoded again to be sized. Over the limit by that bound, each
    is sized exactly, and refused as MongoDB refuses it."""
    import uuid

    from pymongo.errors import BulkWriteError

    from workbook import offline_engine
    from workbook.facts import TOO_LARGE_ON_INSERT

    db = workbook.connect(database=f"sized{uuid.uuid4().hex[:6]}", quiet=True)
    sized: list[int] = []
    exact = offline_engine.engine_bson_size

    def counting(document: Any) -> int:
        sized.append(1)
        return exact(document)

    monkeypatch.setattr(offline_engine, "engine_bson_size", counting)
    try:
        db.c.insert_many([{"_id": i, "pad": "x" * 200} for i in range(50)])
        db.c.insert_one({"pad": "an _id added by the client"})
        assert db.c.count_documents({}) == 51 and sized == [], "a wire insert encoded its documents again"
        db.c.update_one({"_id": 1}, {"$set": {"more": "y" * 10}})
        assert sized, "an update's result is not sized by its request: it is encoded"

        sized.clear()
        monkeypatch.setattr(offline_engine, "MAX_BSON_SIZE", 200)  # the bound (about 230 bytes) is over it
        with pytest.raises(BulkWriteError) as refused:
            db.d.insert_many([{"_id": "small", "pad": "x"}, {"_id": "big", "pad": "x" * 200}], ordered=False)
        details = refused.value.details
        assert [error["code"] for error in details["writeErrors"]] == [TOO_LARGE_ON_INSERT]
        assert details["nInserted"] == 1 and len(sized) >= 2, "sized exactly, each"
        assert [d["_id"] for d in db.d.find()] == ["small"]
    finally:
        db.client.drop_database(db.name)


def test_a_wire_insert_keeps_a_plain_document_as_sent_and_encodes_it_for_nothing() -> None:
    """A document the codec would give back as itself (strings, numbers, naive dates in whole milliseconds,
    nested) is stored as the wire decoded it: neither the insert nor the engine's reads (a find, a filter, a
    $group) encode its payload, and they answer as for a document stored the usual way. One the codec would
    change (an ObjectId, a Decimal128) is stored the usual way, payload made at once."""
    lazy = engine_compat.lazy_stored_class()
    db = workbook.connect(database="test_insert_as_sent", quiet=True)
    db.client.drop_database(db.name)
    at = datetime.datetime(2024, 1, 2, 3, 4, 5, 678000)
    plain = [{"_id": f"k{i}", "n": i, "at": at, "tags": ["a", {"b": 1.5, "c": None}]} for i in range(30)]
    odd = [{"_id": "oid", "x": ObjectId("65a1b2c3d4e5f60718293a4b")}, {"_id": "dec", "d": Decimal128("1.50")}]
    try:
        db.c.insert_many([dict(document) for document in plain + odd])
        *kept, oid, dec = offline_server().engine._storage[db.name]["c"].values()  # in insertion order
        assert all(type(item) is lazy and not item.encoded() for item in kept)
        assert type(oid) is not lazy and type(dec) is not lazy, "stored the usual way"
        assert list(db.c.find({"_id": {"$regex": "^k"}}, sort=[("n", 1)])) == plain
        assert db.c.count_documents({"tags.b": 1.5, "n": {"$gte": 10}}) == 20
        groups = list(db.c.aggregate([{"$unwind": "$tags"}, {"$group": {"_id": {"$type": "$tags"}, "n": {"$sum": 1}}}]))
        assert sorted((group["_id"], group["n"]) for group in groups) == [("object", 30), ("string", 30)]
        assert all(not item.encoded() and item.shares() for item in kept), "the reads read the documents themselves"
        db.c.update_one({"_id": "k3"}, {"$set": {"tags.1.b": 9}})
        assert db.c.find_one({"_id": "k3"})["tags"][1]["b"] == 9 and db.c.find_one({"_id": "k4"}) == plain[4]
        assert db.c.find_one({"_id": "dec"}) == odd[1] and db.c.find_one({"_id": "oid"}) == odd[0]
    finally:
        db.client.drop_database(db.name)


def test_a_document_the_engine_changes_before_storing_it_is_stored_as_changed() -> None:
    """An insert without an ``_id``, sent as a command (no driver adds one): the engine adds it, so the decoded
    document is no longer the one stored, and the stored one, with its ``_id``, is what a find returns."""
    db = workbook.connect(database="test_insert_changed", quiet=True)
    db.client.drop_database(db.name)
    try:
        db.command("insert", "c", documents=[{"x": 1, "name": "no id"}])
        (found,) = db.c.find()
        assert isinstance(found["_id"], ObjectId) and found["name"] == "no id" and set(found) == {"_id", "x", "name"}
    finally:
        db.client.drop_database(db.name)


def test_a_sent_document_the_engine_changed_is_stored_from_the_engine_s_form() -> None:
    """The storage guard keeps the decoded document only while it equals the engine's form: if the engine
    changed its form (an ``_id`` added, a value normalised), the engine's form is what is stored."""
    from workbook.offline_engine import SENT_DOCUMENTS

    engine = offline_server().engine
    lazy = engine_compat.lazy_stored_class()
    for decoded, document in (({"x": 1}, {"x": 1, "_id": "added"}), ({"x": 1}, {"x": 2}), ({"x": 1}, {"x": 1})):
        token = SENT_DOCUMENTS.set({id(document): (document, decoded)})
        try:
            stored = engine._encode_storage_document(document)
        finally:
            SENT_DOCUMENTS.reset(token)
        assert (type(stored) is lazy) == (decoded == document)
        assert engine._borrow_storage_document(stored) == document

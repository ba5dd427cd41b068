"""Writes on the offline default cost the same at any collection size, and the server keeps answering."""

from __future__ import annotations

import pytest
from bson import ObjectId

from workbook.offline import offline_server
from workbook.offline_writes import BULK_CHUNK, BULK_INSERT_CHUNK, WRITE_WORK


@pytest.fixture
def offline_db(monkeypatch):
    """A fresh database on the offline default only."""
    import workbook

    monkeypatch.delenv("MONGODB_URI", raising=False)
    database = workbook.connect(database="offline_writes_test", quiet=True)
    yield database
    database.client.drop_database(database.name)


def _change_log_work_per_delete(db, size: int) -> float:
    """Change-log entries walked per single-document delete in a ``size``-document collection."""
    db.c.drop()
    offline_server().bulk_insert(db.name, "c", ({"_id": f"k{i}", "n": i} for i in range(size)))
    WRITE_WORK.update({"writes": 0, "change_log_entries_walked": 0})
    for i in range(50):
        db.c.delete_one({"_id": f"k{i}"})
    return WRITE_WORK["change_log_entries_walked"] / 50


def test_a_single_delete_walks_the_same_change_log_at_1k_and_10k_documents(offline_db):
    small, large = _change_log_work_per_delete(offline_db, 1_000), _change_log_work_per_delete(offline_db, 10_000)
    assert 0 < large <= 2 * small, (small, large)


def test_delete_many_walks_the_change_log_once_per_document(offline_db):
    """mongoeco rebuilt its change log (one entry per deleted document so far) on every delete: O(n^2)."""
    walked = {}
    for size in (1_000, 4_000):
        offline_db.c.drop()
        offline_server().bulk_insert(offline_db.name, "c", ({"_id": i} for i in range(size)))
        WRITE_WORK.update({"writes": 0, "change_log_entries_walked": 0})
        assert offline_db.c.delete_many({"_id": {"$gte": 0}}).deleted_count == size  # ({} empties in one step)
        walked[size] = WRITE_WORK["change_log_entries_walked"]
        # the changes reached the log: one per document, or (nobody watching) one gap per chunk
        assert WRITE_WORK["writes"] >= size // BULK_CHUNK
    assert walked[4_000] <= 4 * walked[1_000] * 1.2 and walked[4_000] <= 2 * 4_000, walked


@pytest.mark.parametrize("make_id", [lambda i: f"u{i}", lambda i: ObjectId()], ids=["str", "ObjectId"])
def test_an_inserting_upsert_examines_no_documents_at_1k_or_10k(offline_db, make_id):
    """mongoeco scanned every document when the upserted _id was not stored (31 ms at 1k, 219 ms at 10k)."""
    examined = {}
    for size in (1_000, 10_000):
        offline_db.c.drop()
        offline_server().bulk_insert(offline_db.name, "c", ({"_id": f"k{i}", "n": i} for i in range(size)))
        WRITE_WORK["candidates"] = 0
        for i in range(20):
            offline_db.c.update_one({"_id": make_id(i)}, {"$set": {"n": i}}, upsert=True)
        examined[size] = WRITE_WORK["candidates"]
        assert offline_db.c.count_documents({}) == size + 20
    assert examined[10_000] <= 2 * max(examined[1_000], 20), examined
    offline_db.c.update_one({"_id": "k5"}, {"$set": {"hit": True}}, upsert=True)  # a stored _id still matches
    assert offline_db.c.find_one({"_id": "k5"})["hit"] is True and offline_db.c.count_documents({}) == 10_020


def _numeric_id_work(db, size: int) -> tuple[int, int]:
    """Documents examined for numeric ``_id`` equality, and candidates, by 80 single-document writes."""
    from workbook.offline import WORK_COUNTERS

    db.c.drop()
    offline_server().bulk_insert(db.name, "c", ({"_id": i, "n": i} for i in range(size)))
    db.c.insert_one({"_id": -1})  # the first numeric insert counts the collection's _ids once
    WORK_COUNTERS["id_documents_examined"], WRITE_WORK["candidates"] = 0, 0
    for k in range(20):
        db.c.insert_one({"_id": size + k})
        db.c.update_one({"_id": size + 100 + k}, {"$set": {"u": 1}}, upsert=True)
        db.c.replace_one({"_id": k}, {"r": 1})
        db.c.delete_one({"_id": 10**9 + k})  # not stored: no candidates
    assert db.c.count_documents({}) == size + 41
    return WORK_COUNTERS["id_documents_examined"], WRITE_WORK["candidates"]


def test_numeric_id_writes_examine_the_same_documents_at_1k_and_10k(offline_db):
    """mongoeco walked every stored _id per numeric insert or upsert: 20 inserts into 10,000 = 200,000."""
    small, large = _numeric_id_work(offline_db, 1_000), _numeric_id_work(offline_db, 10_000)
    assert small == large and large[0] == 0 and large[1] <= 20, (small, large)


def test_numeric_ids_stay_equal_across_types_with_the_count(offline_db):
    from bson import Decimal128, Int64
    from pymongo.errors import BulkWriteError, DuplicateKeyError

    offline_server().bulk_insert(offline_db.name, "c", ({"_id": i} for i in range(100)))
    offline_db.c.insert_one({"_id": 1000})
    for same in (5, 5.0, Int64(5), Decimal128("5"), Decimal128("5.00"), 1000.0):
        with pytest.raises(DuplicateKeyError):
            offline_db.c.insert_one({"_id": same})
    with pytest.raises(BulkWriteError) as caught:  # a repeat inside one batch
        offline_db.c.insert_many([{"_id": 2000}, {"_id": 2000.0}])
    assert caught.value.details["nInserted"] == 1
    offline_db.c.update_one({"_id": 7.0}, {"$set": {"x": 1}}, upsert=True)  # matches the stored 7
    assert offline_db.c.find_one({"_id": 7}) == {"_id": 7, "x": 1}
    offline_db.c.delete_one({"_id": 4.0})
    offline_db.c.insert_one({"_id": 4.0})  # deleted: the count let it go
    assert offline_db.c.find_one({"_id": 4}) == {"_id": 4.0} and offline_db.c.count_documents({}) == 102
    # an aborted transaction leaves no trace in the count
    with offline_db.client.start_session() as session, session.start_transaction():
        offline_db.c.insert_one({"_id": 3000}, session=session)
        session.abort_transaction()
    offline_db.c.insert_one({"_id": 3000.0})
    with pytest.raises(DuplicateKeyError):
        offline_db.c.insert_one({"_id": Int64(3000)})


def test_pings_keep_answering_while_a_50000_document_delete_many_runs(offline_db):
    """The delete runs in chunks of BULK_CHUNK documents with a turn of the engine loop between them.

    Counted, not timed: the most documents deleted without yielding, and the pings answered before
    the delete returned (mongoeco's delete_many held the server for minutes at this size; a blocked
    server answers none, and at the default GIL switch interval a ping waited up to 0.5 s, so 9
    pings were all one run on a busy machine got). The slowest ping is held to a bound far above
    an idle machine's (25 ms, the bench's ping row), far below what a blocked server took, so it
    holds on a busy machine.
    """
    import sys
    import threading
    import time

    from pymongo import MongoClient

    from workbook.offline import SWITCH_INTERVAL

    server = offline_server()
    assert sys.getswitchinterval() <= SWITCH_INTERVAL  # set by the server's start
    server.bulk_insert(offline_db.name, "big", ({"_id": i, "pad": "x" * 40} for i in range(50_000)))
    pings: list[tuple[float, float]] = []
    started, done = threading.Event(), threading.Event()

    def ping_meanwhile() -> None:
        with MongoClient(server.uri, serverSelectionTimeoutMS=10_000) as other:
            other.admin.command("ping")
            started.set()
            while not done.is_set():
                began = time.perf_counter()
                other.admin.command("ping")
                pings.append((time.perf_counter(), time.perf_counter() - began))

    pinger = threading.Thread(target=ping_meanwhile)
    pinger.start()
    started.wait(30)
    WRITE_WORK["largest_step"] = 0
    try:  # a filter, so the chunked path runs ({} empties the collection in one step)
        began = time.perf_counter()
        deleted = offline_db.big.delete_many({"_id": {"$gte": 0}}).deleted_count
        ended = time.perf_counter()
    finally:
        done.set()
        pinger.join()
    assert deleted == 50_000 and offline_db.big.count_documents({}) == 0
    assert 0 < WRITE_WORK["largest_step"] <= BULK_CHUNK, WRITE_WORK
    meanwhile = [took for answered, took in pings if began < answered < ended]
    assert len(meanwhile) >= 3, pings
    assert max(took for _, took in pings) < 0.5, pings


def test_bulk_delete_keeps_indexes_and_unique_keys_right(offline_db):
    offline_db.c.create_index("k", unique=True)
    offline_db.c.create_index("g")
    offline_server().bulk_insert(offline_db.name, "c", ({"_id": i, "k": f"k{i}", "g": i % 3} for i in range(1_000)))
    assert offline_db.c.delete_many({"g": 1}).deleted_count == 333
    assert offline_db.c.count_documents({}) == 667 and offline_db.c.count_documents({"g": 1}) == 0
    assert offline_db.c.find_one({"k": "k1"}) is None and offline_db.c.find_one({"k": "k3"})["_id"] == 3
    offline_db.c.insert_one({"_id": 1, "k": "k1", "g": 1})  # its unique key and _id were let go
    with pytest.raises(Exception, match="E11000|uplicate"):
        offline_db.c.insert_one({"_id": 5000, "k": "k3"})
    assert offline_db.c.delete_many({"_id": {"$gte": 990}}).deleted_count == 7  # 991, 994, 997 went
    assert offline_db.c.delete_one({"g": 0}).deleted_count == 1  # limit 1 keeps mongoeco's own path
    with offline_db.client.start_session() as session, session.start_transaction():  # in a transaction too
        assert offline_db.c.delete_many({"g": 2}, session=session).deleted_count == 330
        session.abort_transaction()
    assert offline_db.c.count_documents({"g": 2}) == 330 and offline_db.c.count_documents({}) == 660


def test_delete_many_examines_each_document_once(offline_db):
    examined = {}
    for size in (1_000, 4_000):
        offline_db.c.drop()
        offline_server().bulk_insert(offline_db.name, "c", ({"_id": i} for i in range(size)))
        WRITE_WORK["candidates"] = 0
        assert offline_db.c.delete_many({"_id": {"$gte": 0}}).deleted_count == size  # {} examines none
        examined[size] = WRITE_WORK["candidates"]
    assert examined == {1_000: 1_000, 4_000: 4_000}, examined


@pytest.mark.parametrize("ordered", [True, False])
def test_insert_many_in_pieces_reports_errors_at_their_index(offline_db, ordered):
    from pymongo.errors import BulkWriteError

    offline_db.c.insert_one({"_id": 450})
    WRITE_WORK["largest_step"] = 0
    with pytest.raises(BulkWriteError) as caught:
        offline_db.c.insert_many([{"_id": i} for i in range(1_000)], ordered=ordered)
    details = caught.value.details
    assert [e["index"] for e in details["writeErrors"]] == [450] and details["writeErrors"][0]["code"] == 11000
    assert details["nInserted"] == (450 if ordered else 999)
    assert offline_db.c.count_documents({}) == details["nInserted"] + 1
    assert 0 < WRITE_WORK["largest_step"] <= BULK_INSERT_CHUNK


def test_update_many_work_grows_with_the_documents_it_updates(offline_db):
    """update_many updates one document per engine call: each examines its one candidate and walks the
    change log once; the whole command is linear (the rebuilt change log made it quadratic)."""
    work = {}
    for size in (1_000, 4_000):
        offline_db.c.drop()
        offline_server().bulk_insert(offline_db.name, "c", ({"_id": i, "n": i} for i in range(size)))
        WRITE_WORK.update({"candidates": 0, "change_log_entries_walked": 0})
        assert offline_db.c.update_many({}, {"$inc": {"n": 1}}).modified_count == size
        work[size] = (WRITE_WORK["candidates"], WRITE_WORK["change_log_entries_walked"])
    assert work[4_000][0] <= 4 * work[1_000][0] * 1.05 and work[4_000][1] <= 2 * 4_000, work
    assert offline_db.c.find_one({"_id": 7})["n"] == 8


def test_delete_many_of_everything_is_one_step_and_earlier_copies_keep_their_documents(offline_db):
    from workbook.engine_reads import local_storage

    offline_db.c.create_index("k", unique=True)
    offline_server().bulk_insert(offline_db.name, "c", ({"_id": i, "k": i} for i in range(50_000)))
    _engine, before = local_storage(offline_db, "c")  # a frozen copy (what a transaction's snapshot holds)
    WRITE_WORK["largest_step"], WRITE_WORK["writes"], WRITE_WORK["candidates"] = 0, 0, 0
    assert offline_db.c.delete_many({}).deleted_count == 50_000
    assert WRITE_WORK["largest_step"] == 1 and WRITE_WORK["writes"] == 1  # one step, one gap in the change log
    assert WRITE_WORK["candidates"] == 0  # nothing listed: {} matches everything
    assert offline_db.c.count_documents({}) == 0 and offline_db.c.find_one({"k": 7}) is None
    assert len(before) == 50_000  # the copy still holds every document
    offline_db.c.insert_many([{"_id": 7, "k": 7}, {"_id": 8, "k": 8}])  # _id and unique keys were let go
    assert offline_db.c.find_one({"k": 7}) == {"_id": 7, "k": 7}
    with pytest.raises(Exception, match="E11000|uplicate"):
        offline_db.c.insert_one({"_id": 9, "k": 8})


def _documents_compared_by_merge(db, monkeypatch, size: int, make_id) -> int:
    """Stored documents whose ``_id`` mongoeco's ``merge_document`` compares by value while a ``$merge``
    writes ``size`` new documents into a collection that ends with ``2 * size``."""
    from mongoeco.engines import memory

    original = memory.document_matches_root_id_lookup
    compared = [0]

    def counting(*args, **kwargs):
        compared[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(memory, "document_matches_root_id_lookup", counting)
    db.source.drop()
    db.target.drop()
    db.target.insert_many([{"_id": make_id(i), "old": True} for i in range(size)])
    db.source.insert_many([{"_id": make_id(size + i), "n": i} for i in range(size)])
    list(db.source.aggregate([{"$merge": {"into": "target"}}]))
    assert db.target.count_documents({}) == 2 * size and db.target.count_documents({"n": {"$exists": True}}) == size
    monkeypatch.setattr(memory, "document_matches_root_id_lookup", original)
    return compared[0]


@pytest.mark.parametrize("make_id", [str, lambda i: {"day": f"d{i}", "id": ObjectId()}, int], ids=["str", "doc", "int"])
def test_a_merge_of_new_documents_compares_no_stored_id(offline_db, monkeypatch, make_id):
    """mongoeco looked for an equal ``_id`` by walking every stored document for each new one: a $merge of
    4,000 new documents took 34 s (1,000: 2 s). No stored ``_id`` can equal a new non-numeric one under
    another storage key, and the numeric count says none equals a new number."""
    assert _documents_compared_by_merge(offline_db, monkeypatch, 300, make_id) == 0


def test_a_merge_still_matches_a_number_stored_as_another_type(offline_db):
    """1.0 is the _id 1 (MongoDB compares numbers by value): the $merge finds that document and keeps it,
    and inserts only the _ids no document holds."""
    from bson import Int64

    offline_db.target.insert_many([{"_id": 1, "a": "stored"}, {"_id": "x", "a": "stored"}])
    offline_db.source.insert_many([{"_id": 1.0, "b": "merged"}, {"_id": Int64(2), "b": "new"}, {"_id": "x", "b": "m"}])
    list(offline_db.source.aggregate([{"$merge": {"into": "target", "whenMatched": "keepExisting"}}]))
    assert list(offline_db.target.find().sort("_id", 1)) == [
        {"_id": 1, "a": "stored"},
        {"_id": 2, "b": "new"},
        {"_id": "x", "a": "stored"},
    ]

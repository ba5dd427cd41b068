"""The doctor reads the offline engine's memory: the same per-field summary the server pipeline makes,
every document (or a seeded sample past the limit), said in the notes, cached until a write."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import bson
import pytest
from bson import Binary, Code, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp
from pymongo.database import Database

import workbook
from workbook.schema_doctor import Thresholds, memory
from workbook.schema_doctor.context import Context
from workbook.schema_doctor.readonly import Budget, ReadOnlyDatabase
from workbook.schema_doctor.thresholds import DEFAULT_THRESHOLDS


def server_summaries(db: Database, collection: str) -> dict[Any, Any]:
    """Every document's summary computed by the server-side pipeline (the path a real server takes)."""
    budget = Budget(60)
    context = Context(ReadOnlyDatabase(db, budget), budget, DEFAULT_THRESHOLDS, 1000, True, lambda _: None)
    return {repr(d.id): d for d in context.sample(collection).documents}


def memory_summaries(db: Database, collection: str) -> dict[Any, Any]:
    """The same, read from the offline engine's memory."""
    memory.forget_reads()
    read = memory.read_collection(db, collection, 1000, False, Budget(60), lambda _: None)
    assert read is not None and read.whole_collection
    return {repr(d.id): d for d in read.documents}


@pytest.fixture
def offline_db() -> Any:
    database = workbook.connect(database=f"t{uuid.uuid4().hex[:10]}", quiet=True)
    yield database
    database.client.drop_database(database.name)


def test_every_bson_type_is_summarised_as_the_server_pipeline_does(offline_db: Database) -> None:
    offline_db.kinds.insert_many(
        [
            {
                "_id": ObjectId("65a000000000000000000001"),
                "s": "héllo ✓",
                "i": 7,
                "big": 2**40,
                "l": Int64(2**33),
                "f": 1.5,
                "b": True,
                "n": None,
                "d": datetime(2025, 1, 2, tzinfo=UTC),
                "dec": Decimal128(Decimal("1.10")),
                "bin": Binary(b"\x00\x01" * 50),
                "re": Regex("^a", "i"),
                "ts": Timestamp(1, 2),
                "arr": [1, "two", {"three": 3}, [4]],
                "sub": {"a": [1, 2, 3], "b": {"deep": "x"}, "c": 1.0, "e": datetime(2025, 1, 1)},
            },
            {"_id": 2, "sub": {}, "arr": [], "empty": "", "ключ": "значение", "sub2": {"clé": "é"}},
            {"_id": "three", "neg": -(2**31), "edge": 2**31 - 1, "over": 2**31},
        ]
    )
    assert memory_summaries(offline_db, "kinds") == server_summaries(offline_db, "kinds")


@pytest.mark.parametrize("dataset", ["store", "followers"])
def test_course_data_is_summarised_as_the_server_pipeline_does(offline_db: Database, dataset: str) -> None:
    workbook.load(dataset, "embedded", offline_db, scale="tiny", progress=False)
    for collection in offline_db.list_collection_names():
        if collection.startswith("_"):
            continue
        assert memory_summaries(offline_db, collection) == server_summaries(offline_db, collection), collection


def test_the_offline_default_reads_every_document_from_memory_and_says_so(offline_db: Database) -> None:
    offline_db.posts.insert_many([{"_id": i, "tags": ["t"] * (300 if i == 7 else 1)} for i in range(1500)])
    said: list[str] = []
    report = workbook.doctor(offline_db, sample_size=100, say=said.append)
    (finding,) = report.of("unbounded_arrays")
    assert finding.evidence["documents_read"] == 1500 and finding.evidence["whole_collection"]
    assert "posts: all 1,500 documents read (from the offline engine's memory)" in report.notes
    assert said == []  # a quick read from memory is not announced


def test_past_the_limit_a_seeded_sample_is_read_the_same_every_time(
    offline_db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory, "READ_ALL_LIMIT", 100)
    offline_db.events.insert_many([{"_id": i, "n": i} for i in range(400)])
    first = memory.read_collection(offline_db, "events", 50, False, Budget(60), lambda _: None)
    again = memory.read_collection(offline_db, "events", 50, False, Budget(60), lambda _: None)
    assert first is not None and again is not None and not first.whole_collection
    assert first.count == 400 and len(first.documents) == 50
    assert [d.id for d in first.documents] == [d.id for d in again.documents]
    report = workbook.doctor(offline_db, sample_size=50, say=lambda _: None)
    assert "events: a seeded sample of 50 of 400 documents (from the offline engine's memory)" in report.notes

    said: list[str] = []
    whole = workbook.doctor(offline_db, sample_size=50, full_scan=True, say=said.append)
    assert said == [f"schema doctor: reading all 400 documents of {offline_db.name}.events from memory"]
    assert "events: all 400 documents read (from the offline engine's memory)" in whole.notes


def test_a_write_is_seen_by_the_next_run(offline_db: Database) -> None:
    offline_db.users.insert_many([{"_id": i, "followers": list(range(300 if i == 0 else 2))} for i in range(20)])
    assert workbook.doctor(offline_db, say=lambda _: None).of("unbounded_arrays")
    offline_db.users.update_one({"_id": 0}, {"$set": {"followers": [1]}})
    assert workbook.doctor(offline_db, say=lambda _: None).of("unbounded_arrays") == []


def test_stats_come_from_the_read_and_match_coll_stats(offline_db: Database) -> None:
    offline_db.items.insert_many([{"_id": i, "name": "x" * i} for i in range(30)])
    budget = Budget(60)
    context = Context(
        ReadOnlyDatabase(offline_db, budget), budget, Thresholds(), 1000, False, lambda _: None, source=offline_db
    )
    stats = offline_db.command("collStats", "items")
    assert context.stats("items") == {
        "count": stats["count"],
        "size": stats["size"],
        "avgObjSize": pytest.approx(stats["avgObjSize"]),
    }


def test_a_server_is_not_read_from_memory(monkeypatch: pytest.MonkeyPatch, offline_db: Database) -> None:
    from workbook import offline, offline_commands

    offline_db.anything.insert_one({"_id": 1})
    assert memory.read_collection(offline_db, "anything", 10, False, Budget(60)) is not None
    server = offline.offline_server()
    elsewhere = type("Elsewhere", (), {"host": server.host, "port": server.port + 1, "engine": server.engine})()
    monkeypatch.setattr(offline_commands, "RUNNING", [elsewhere])  # the client talks to a server not run here
    assert memory.read_collection(offline_db, "anything", 10, False, Budget(60)) is None


def test_the_time_budget_stops_a_long_read(offline_db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    from workbook.schema_doctor.readonly import OutOfTime

    monkeypatch.setattr(memory, "_CHECK_EVERY", 1)
    offline_db.big.insert_many([{"_id": i} for i in range(10)])
    memory.forget_reads()
    spent = Budget(1e-9)
    with pytest.raises(OutOfTime):
        memory.read_collection(offline_db, "big", 5, False, spent)


def test_where_the_offline_pipeline_differs_the_memory_read_says_what_mongodb_says(offline_db: Database) -> None:
    # mongoeco's $type/$bsonSize call a small NumberLong "int" (4 bytes), Code "string", MinKey "MinKey";
    # MongoDB's $type table says "long" (8 bytes), "javascript", "minKey": the memory read follows MongoDB,
    # and its sizes are those of the documents as the wire returns them.
    offline_db.odd.insert_one({"_id": 1, "l": Int64(3), "code": Code("x"), "lo": MinKey(), "hi": MaxKey()})
    (stat,) = memory_summaries(offline_db, "odd").values()
    kinds = {f.name: (f.type, f.bytes) for f in stat.fields}
    assert kinds["l"] == ("long", 16) and kinds["code"][0] == "javascript"
    assert kinds["lo"][0] == "minKey" and kinds["hi"][0] == "maxKey"
    assert stat.bytes == len(bson.encode(offline_db.odd.find_one()))


def test_value_layout_of_plain_values() -> None:
    assert memory.value_layout("abc") == ("string", None, 8)
    assert memory.value_layout(2**31) == ("long", None, 8)
    assert memory.value_layout([1, 2]) == ("array", 2, 19)
    assert memory.value_layout(re.compile("x"))[0] == "regex"

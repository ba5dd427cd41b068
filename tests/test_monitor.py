"""Command monitoring counts what a block sent and got back."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import bson
import pytest
from pymongo.database import Database

import workbook
from workbook import monitor


@pytest.fixture
def db(monkeypatch: pytest.MonkeyPatch) -> Iterator[Database]:
    monkeypatch.delenv("MONGODB_URI", raising=False)
    database = workbook.connect(database=f"t{uuid.uuid4().hex[:10]}", quiet=True)
    database.items.insert_many([{"_id": i, "text": "x" * (10 * i)} for i in range(5)])
    yield database
    database.client.drop_database(database.name)


def test_capture_counts_round_trips_documents_and_reply_bytes(db: Database) -> None:
    with monitor.capture() as work:
        found = list(db.items.find({"_id": {"$gte": 2}}))
        db.items.find_one_and_update({"_id": 0}, {"$set": {"seen": True}})
        db.items.count_documents({})
    assert len(found) == 3
    assert work.round_trips == 3 and work.docs_returned == 3 + 1 + 1
    assert [c["name"] for c in work.commands] == ["find", "findAndModify", "aggregate"]
    assert [c["reply_docs"] for c in work.commands] == [3, 1, 1]
    assert work.bytes_returned == sum(c["reply_bytes"] for c in work.commands)
    assert work.commands[0]["reply_bytes"] > sum(len(bson.encode(d)) for d in found)  # plus the cursor envelope


def test_reply_bytes_are_what_arrived_even_if_the_caller_changes_the_documents(db: Database) -> None:
    with monitor.capture() as before:
        list(db.items.find())
    with monitor.capture() as after:
        for document in db.items.find():  # the application trims what it got, in place
            document.clear()
    assert after.bytes_returned == before.bytes_returned > 5 * 20


def test_reply_sizes_are_the_whole_replys_encoding_with_each_document_encoded_once() -> None:
    """The sizes added up as BSON lays out a batch (or a findAndModify value) equal encoding the whole reply."""
    import datetime
    import random

    from bson import Decimal128, Int64, ObjectId
    from bson.son import SON

    rng = random.Random(5)
    values = [1, 2.5, "x" * 40, None, True, ObjectId(), Int64(7), Decimal128("1.5"), datetime.datetime(2025, 1, 2)]

    def document(depth: int = 0) -> dict:
        made = {f"f{i}": rng.choice(values) for i in range(rng.randrange(1, 6))}
        if depth < 2 and rng.random() < 0.5:
            made["sub"] = [document(depth + 1) for _ in range(rng.randrange(0, 3))]
        return made

    replies: list[dict] = [{"ok": 1.0}, {"n": 3, "ok": 1.0}, {"value": None, "ok": 1.0}]
    for count in (0, 1, 9, 10, 11, 120):  # index keys of one, two and three digits
        for name in ("firstBatch", "nextBatch"):
            batch = [document() for _ in range(count)]
            replies.append({"cursor": {name: batch, "id": Int64(count), "ns": "db.c"}, "ok": 1.0})
    replies.append({"cursor": {"firstBatch": [SON([("b", 1), ("a", 2)]), {"_id": 3, "a": 1}], "id": 0, "ns": "d.c"}})
    replies.append({"cursor": {"firstBatch": [1, {"a": 1}, "s"], "id": 0, "ns": "d.c"}, "ok": 1.0})  # not all documents
    replies.append({"lastErrorObject": {"n": 1}, "value": document(), "ok": 1.0})
    for reply in replies:
        batch = reply.get("cursor", {}).get("firstBatch", reply.get("cursor", {}).get("nextBatch"))
        carried = batch if batch is not None else ([reply["value"]] if isinstance(reply.get("value"), dict) else [])
        expected = (
            len(bson.encode(reply)),
            len(carried),
            sum(len(bson.encode(d)) for d in carried if isinstance(d, dict)),
        )
        assert monitor.reply_sizes(reply) == expected, reply


def test_the_latency_a_call_records_leaves_out_the_listeners_own_time(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """measure_call records the call less what the workbench's listener spent inside it (sizing replies)."""
    import time

    from workbook.calls import measure_call

    sizes = monitor.reply_sizes

    def slow_sizes(reply: dict) -> tuple[int, int, int]:
        time.sleep(0.4)  # an instrument far slower than the call it measures
        return sizes(reply)

    monkeypatch.setattr(monitor, "reply_sizes", slow_sizes)
    work = measure_call(None, lambda: list(db.items.find()))
    assert work.round_trips == 1 and work.docs_returned == 5 and len(work.result) == 5
    assert 0 < work.latency_ms < 400  # with the listener's 400 ms left in, it could not be below
    with monitor.capture() as captured:
        db.items.find_one({"_id": 1})
        db.items.count_documents({})
    assert captured.listener_ns >= 2 * 400_000_000  # both replies, each sized once
    outer = measure_call(None, lambda: measure_call(None, db.items.find_one, {"_id": 2}))
    assert outer.round_trips == 0 and outer.result.round_trips == 1  # the inner block records its own command
    assert 0 < outer.latency_ms < 400 and 0 < outer.result.latency_ms < 400  # and neither counts the listener

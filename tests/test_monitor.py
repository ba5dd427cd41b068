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

"""Command monitoring counts what a block sent and got back, measuring reply bytes outside the block."""

from __future__ import annotations

import types
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


def test_capture_counts_round_trips_documents_and_reply_bytes(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    encodes: list[int] = []
    real = bson.encode

    def counting(document: object, *args: object, **kwargs: object) -> bytes:
        encodes.append(1)
        return real(document, *args, **kwargs)

    with monitor.capture() as work:
        found = list(db.items.find({"_id": {"$gte": 2}}))
        db.items.find_one_and_update({"_id": 0}, {"$set": {"seen": True}})
        # The monitor's own encoder from here on: a reply must not be encoded inside the timed block.
        monkeypatch.setattr(monitor, "bson", types.SimpleNamespace(encode=counting))
        db.items.count_documents({})
        assert encodes == []
    assert len(found) == 3
    assert work.round_trips == 3 and work.docs_returned == 3 + 1 + 1
    names = [c["name"] for c in work.commands]
    assert names == ["find", "findAndModify", "aggregate"]
    assert all(c["reply_bytes"] > 0 for c in work.commands)
    assert len(encodes) == 3  # measured when first asked for
    assert work.bytes_returned == sum(c["reply_bytes"] for c in work.commands)
    first_reply_floor = sum(len(real(d)) for d in found)
    assert work.commands[0]["reply_bytes"] > first_reply_floor  # the documents plus the cursor envelope
    assert [c["reply_docs"] for c in work.commands] == [3, 1, 1]

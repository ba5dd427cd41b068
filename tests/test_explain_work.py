"""Work counts from explain: the reads inside each command a measured call sent."""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator

import pytest
from pymongo.database import Database

import workbook
from workbook.explaining.work import explained_reads, reads_of, work_examined
from workbook.monitor import capture


def test_reads_of_writes_are_the_finds_of_their_targets() -> None:
    assert reads_of("update", {"update": "c", "updates": [{"q": {"a": 1}, "multi": True}, {"q": {"b": 2}}]}) == [
        {"find": "c", "filter": {"a": 1}},
        {"find": "c", "filter": {"b": 2}, "limit": 1},
    ]
    assert reads_of("delete", {"delete": "c", "deletes": [{"q": {"a": 1}, "limit": 1}]}) == [
        {"find": "c", "filter": {"a": 1}, "limit": 1}
    ]
    assert reads_of("findAndModify", {"findAndModify": "c", "query": {"a": 1}, "sort": {"b": -1}}) == [
        {"find": "c", "filter": {"a": 1}, "sort": {"b": -1}, "limit": 1}
    ]
    assert reads_of("count", {"count": "c", "query": {"a": 1}}) == [{"find": "c", "filter": {"a": 1}}]
    assert reads_of("insert", {"insert": "c", "documents": [{}]}) == []
    aggregate = reads_of("aggregate", {"aggregate": "c", "pipeline": [{"$match": {"a": 1}}]})
    assert aggregate == [{"aggregate": "c", "pipeline": [{"$match": {"a": 1}}], "cursor": {}}]


@pytest.fixture
def db(monkeypatch: pytest.MonkeyPatch) -> Iterator[Database]:
    monkeypatch.delenv("MONGODB_URI", raising=False)
    database = workbook.connect(database=f"t{uuid.uuid4().hex[:10]}", quiet=True)
    database.c.insert_many([{"_id": i, "a": i % 4} for i in range(40)])
    database.c.create_index("a")
    yield database
    database.client.drop_database(database.name)


def test_work_examined_sums_every_read_a_call_sent(db: Database) -> None:
    with capture() as work:
        list(db.c.find({"a": 1}))
        db.c.update_many({"a": 2}, {"$set": {"b": 1}})
    counts = work_examined(db, work.commands)
    assert counts == {"keys_examined": 10 + 10, "docs_examined": 10 + 10}
    with capture() as refused:
        list(db.c.find({"a": {"$bitsAllSet": 1}}))  # not modelled
    ((name, error),) = list(explained_reads(db, refused.commands))
    assert name == "c" and isinstance(error, Exception)
    assert all(math.isnan(v) for v in work_examined(db, refused.commands).values())

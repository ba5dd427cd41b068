"""Cursor batches as MongoDB cuts them: 101 documents first (unless asked otherwise), then what fits in
16 MiB, always at least one document. Each test holds on real MongoDB too (its ``mongodb`` variant)."""

from __future__ import annotations

from typing import Any

import bson
import pytest
from pymongo import monitoring
from pymongo.database import Database

from workbook.facts import MAX_BSON_SIZE
from workbook.offline_cursors import batch_of


class Batches(monitoring.CommandListener):
    """The documents each find, aggregate and getMore reply carried, and their BSON bytes."""

    def __init__(self) -> None:
        self.replies: list[tuple[str, int, int]] = []

    def started(self, event: Any) -> None:
        pass

    def succeeded(self, event: Any) -> None:
        if event.command_name in ("find", "aggregate", "getMore"):
            cursor = event.reply["cursor"]
            batch = cursor.get("firstBatch", cursor.get("nextBatch", []))
            self.replies.append((event.command_name, len(batch), sum(len(bson.encode(d)) for d in batch)))

    def failed(self, event: Any) -> None:
        pass


def _watched(db: Database) -> tuple[Database, Batches, Any]:
    from pymongo import MongoClient

    listener = Batches()
    host, port = db.client.address
    options = db.client.options.pool_options
    kwargs: dict[str, Any] = {}
    if options._credentials is not None:  # the offline default's server asks for its learner's password
        credentials = options._credentials
        kwargs = {"username": credentials.username, "password": credentials.password, "authSource": credentials.source}
    client: Any = MongoClient(host, port, event_listeners=[listener], directConnection=True, **kwargs)
    return client[db.name], listener, client


@pytest.mark.parametrize("how", ["find", "aggregate"])
def test_a_read_larger_than_a_wire_message_comes_back_in_16_mib_batches(db: Database, how: str) -> None:
    """500 documents of 100 KB (50 MB, more than pymongo's 48 MB message limit) are read whole, each later
    batch as many documents as fit in 16 MiB: a getMore that sent all that was left failed in pymongo."""
    pad = "x" * 100_000
    db.big.insert_many([{"_id": n, "pad": pad} for n in range(500)])
    watched, listener, client = _watched(db)
    try:
        read = watched.big.find({}) if how == "find" else watched.big.aggregate([{"$match": {}}])
        assert [document["_id"] for document in read] == list(range(500))
    finally:
        client.close()
    size = len(bson.encode({"_id": 0, "pad": pad}))
    per_batch = MAX_BSON_SIZE // size
    counts = [count for _, count, _ in listener.replies]
    assert counts[0] == 101 and sum(counts) == 500, counts
    assert all(count == per_batch for count in counts[1:-1]) and 0 < counts[-1] <= per_batch, counts
    assert all(size <= MAX_BSON_SIZE for _, _, size in listener.replies)


def test_a_batch_holds_one_document_when_two_would_pass_16_mib(db: Database) -> None:
    """Documents of 9 MiB: every batch carries exactly one, the first too."""
    pad = "y" * (9 * 1024 * 1024)
    db.huge.insert_many([{"_id": n, "pad": pad} for n in range(3)])
    watched, listener, client = _watched(db)
    try:
        assert [document["_id"] for document in watched.huge.find({}, batch_size=2)] == [0, 1, 2]
    finally:
        client.close()
    assert [count for _, count, _ in listener.replies] == [1, 1, 1]


def test_a_smaller_batch_size_is_kept(db: Database) -> None:
    """A batch size that fits in 16 MiB is what each batch holds, the last one the rest."""
    db.small.insert_many([{"_id": n} for n in range(250)])
    watched, listener, client = _watched(db)
    try:
        assert len(list(watched.small.find({}, batch_size=60))) == 250
    finally:
        client.close()
    assert [count for _, count, _ in listener.replies] == [60, 60, 60, 60, 10]


def test_a_batch_counts_projected_documents_to_16_mib_and_at_least_one() -> None:
    documents = [{"_id": n, "pad": "z" * 1000} for n in range(50)]
    size = len(bson.encode(documents[0]))
    assert batch_of(documents, None, limit=10 * size) == documents[:10]
    assert batch_of(documents, 4, limit=10 * size) == documents[:4]
    assert batch_of(documents, None, limit=10 * size - 1) == documents[:9]
    assert batch_of(documents, None, limit=1) == documents[:1]
    assert batch_of([], None) == [] and len(batch_of(documents, None)) == 50
    assert batch_of(documents, None, lambda d: {"_id": d["_id"]}, limit=size) == [{"_id": n} for n in range(50)]


def test_a_cursor_projects_each_batch_as_it_is_sent_and_forgets_the_projection_at_its_end() -> None:
    """The documents wait unprojected: the first batch projects 101, each getMore its own, and a cursor
    exhausted or killed keeps no projection."""
    from workbook.offline_cursors import SizedCursors

    made: list[int] = []

    def project(document: dict[str, Any]) -> dict[str, Any]:
        made.append(document["_id"])
        return {"_id": document["_id"]}

    cursors = SizedCursors()
    stored = [{"_id": n, "pad": "p" * 100} for n in range(300)]
    find = {"find": "c", "batchSize": 101}
    reply = cursors.materialize_command_result(
        find, {"cursor": {"firstBatch": list(stored), "ns": "d.c", "id": 0}}, project=project
    )
    cursor_id = reply["cursor"]["id"]
    assert reply["cursor"]["firstBatch"] == [{"_id": n} for n in range(101)] and made == list(range(101))
    more = cursors.get_more({"getMore": cursor_id, "collection": "c", "batchSize": 50}, db_name="d")
    assert more["cursor"]["nextBatch"] == [{"_id": n} for n in range(101, 151)] and made == list(range(151))
    rest = cursors.get_more({"getMore": cursor_id, "collection": "c"}, db_name="d")
    assert rest["cursor"]["nextBatch"] == [{"_id": n} for n in range(151, 300)] and rest["cursor"]["id"] == 0
    assert made == list(range(300)) and not cursors._projections and len(cursors) == 0
    again = cursors.materialize_command_result(
        find, {"cursor": {"firstBatch": list(stored), "ns": "d.c", "id": 0}}, project=project
    )
    cursors.kill_cursors({"killCursors": "c", "cursors": [again["cursor"]["id"]]}, db_name="d")
    assert not cursors._projections and len(cursors) == 0


def test_find_getmore_bsonsize(db: Database) -> None:
    """Ported from MongoDB's jstests/core/query/find/find_getmore_bsonsize.js: documents near 16 MiB come one
    per batch, ``batchSize: 0`` opens a cursor with an empty first batch, and a document of exactly 16 MiB
    comes back alone in a closed cursor."""
    one_kb, one_mb = 1024, 1024 * 1024
    db.c.insert_one({"_id": 0, "padding": "x" * (one_mb - one_kb)})
    db.c.insert_one({"_id": 1, "padding": "y" * (16 * one_mb - one_kb)})
    reply = db.command("find", "c")
    assert reply["cursor"]["id"] > 0 and reply["cursor"]["ns"] == f"{db.name}.c"
    assert len(reply["cursor"]["firstBatch"]) == 1  # the second would make an invalid reply
    more = db.command("getMore", reply["cursor"]["id"], collection="c")
    assert more["cursor"]["id"] == 0 and len(more["cursor"]["nextBatch"]) == 1
    reply = db.command("find", "c", batchSize=0)
    assert reply["cursor"]["id"] > 0 and reply["cursor"]["firstBatch"] == []
    more = db.command("getMore", reply["cursor"]["id"], collection="c")
    assert more["cursor"]["id"] > 0 and [d["_id"] for d in more["cursor"]["nextBatch"]] == [0]
    more = db.command("getMore", reply["cursor"]["id"], collection="c")
    assert more["cursor"]["id"] == 0 and [d["_id"] for d in more["cursor"]["nextBatch"]] == [1]
    db.c.drop()
    biggest = {"_id": 0, "padding": "y" * (16 * one_mb - 28)}  # the jstest's _id is a double: 4 bytes more
    assert len(bson.encode(biggest)) == 16 * one_mb
    db.c.insert_one(biggest)
    reply = db.command("find", "c")
    assert reply["cursor"]["id"] == 0 and len(reply["cursor"]["firstBatch"]) == 1


def test_a_projected_find_with_batch_size_zero_projects_every_batch(db: Database) -> None:
    """``batchSize: 0`` with a projection: the first batch is empty, and what the cursor sends is projected."""
    db.c.insert_many([{"_id": n, "a": n, "b": "drop me"} for n in range(5)])
    reply = db.command("find", "c", projection={"a": 1}, batchSize=0)
    assert reply["cursor"]["firstBatch"] == [] and reply["cursor"]["id"] > 0
    more = db.command("getMore", reply["cursor"]["id"], collection="c")
    assert more["cursor"]["nextBatch"] == [{"_id": n, "a": n} for n in range(5)] and more["cursor"]["id"] == 0

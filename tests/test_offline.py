"""The offline default's own machinery: the fast bulk path and the engine patches it relies on."""

from __future__ import annotations

import inspect

import pytest
from mongoeco.engines.memory import MemoryEngine
from mongoeco.errors import WriteError
from pymongo.errors import DuplicateKeyError

from workbook.offline import MAX_BSON_SIZE, engine_bson_size, offline_server


def test_patched_engine_methods_still_exist_with_expected_parameters():
    """If a mongoeco upgrade renames these, the fixes silently stop: fail here instead."""
    unique = inspect.signature(MemoryEngine._ensure_unique_indexes).parameters
    assert {"candidate", "scan_payload_id", "check_id_storage"} <= set(unique)
    assert list(inspect.signature(MemoryEngine._encode_storage_document).parameters) == ["self", "document"]


@pytest.fixture
def offline_db(monkeypatch):
    """A fresh database on the offline default only."""
    import workbook

    monkeypatch.delenv("MONGODB_URI", raising=False)
    database = workbook.connect(database="offline_test", quiet=True)
    yield database
    database.client.drop_database(database.name)


def test_bulk_insert_goes_through_the_engine_and_is_visible_to_pymongo(offline_db):
    db, server = offline_db, offline_server()
    count = server.bulk_insert(db.name, "items", ({"_id": f"i{i}", "n": i} for i in range(1000)))
    assert count == 1000
    assert db.items.count_documents({"n": {"$gte": 500}}) == 500


def test_bulk_insert_enforces_16_mib(offline_db):
    db = offline_db
    with pytest.raises(WriteError, match="16 MiB"):
        offline_server().bulk_insert(db.name, "items", [{"_id": "big", "blob": "x" * MAX_BSON_SIZE}])
    assert db.items.count_documents({}) == 0


def test_bson_size_matches_bsonsize_operator(db):
    document = {"_id": "d", "name": "Ada", "tags": ["a", "b"], "n": 1.5}
    db.docs.insert_one(document)
    reported = next(db.docs.aggregate([{"$project": {"s": {"$bsonSize": "$$ROOT"}}}]))["s"]
    assert engine_bson_size(document) == reported


def test_unique_index_build_detects_duplicates_and_keeps_enforcing(offline_db):
    db = offline_db
    db.people.insert_many([{"_id": f"p{i}", "email": f"e{i}@x", "team": i % 3} for i in range(300)])
    db.people.create_index("email", unique=True)
    assert next(i for i in db.people.list_indexes() if i["name"] == "email_1")["unique"] is True
    with pytest.raises(DuplicateKeyError):
        db.people.insert_one({"email": "e7@x"})
    with pytest.raises(DuplicateKeyError) as caught:
        db.people.create_index("team", unique=True)
    assert caught.value.code == 11000 and "team_1" in str(caught.value)
    assert [i["name"] for i in db.people.list_indexes()] == ["_id_", "email_1"]
    db.people.create_index("email", unique=True)  # same index again: a no-op, as on MongoDB


def test_unique_index_in_a_missing_field_counts_as_null(offline_db):
    offline_db.people.insert_many([{"_id": "a"}, {"_id": "b"}])
    with pytest.raises(DuplicateKeyError):
        offline_db.people.create_index("email", unique=True)


def test_bulk_insert_applies_validators_and_unique_keys(offline_db):
    db, server = offline_db, offline_server()
    db.create_collection("checked", validator={"$jsonSchema": {"required": ["a"]}})
    with pytest.raises(WriteError):
        server.bulk_insert(db.name, "checked", [{"_id": "ok", "a": 1}, {"_id": "bad"}])
    assert server.bulk_insert(db.name, "checked", [{"_id": "x", "a": 1}]) == 1
    with pytest.raises(WriteError, match="repeats a unique key"):
        server.bulk_insert(db.name, "checked", [{"_id": "y", "a": 2}, {"_id": "x", "a": 3}])
    assert sorted(d["_id"] for d in db.checked.find()) == ["x", "y"]


def test_the_wire_answers_handshakes_while_the_engine_is_busy(offline_db):
    """A long engine command (a big $lookup) must not stall heartbeats and new connections."""
    import threading
    import time

    from pymongo import MongoClient

    from workbook import offline

    async def slow_ping(server, db_name, command):
        if command.get("workbookSleep"):
            time.sleep(float(command["workbookSleep"]))  # blocks the engine loop, as a CPU-bound command does
            return {"ok": 1.0}
        return None

    offline.register_command("ping", slow_ping)
    try:
        busy = threading.Thread(target=lambda: offline_db.command({"ping": 1, "workbookSleep": 3}))
        busy.start()
        time.sleep(0.5)
        started = time.monotonic()
        with MongoClient(offline_server().uri, serverSelectionTimeoutMS=5000) as other:
            other.admin.command("hello")  # a new connection: handshake and authentication
            answered = time.monotonic() - started  # (closing sends endSessions, which waits its turn)
        busy.join()
    finally:
        offline.COMMAND_HOOKS.pop("ping", None)
    assert answered < 1.5, f"the handshake waited {answered:.1f} s for the busy engine"


def _from_the_network_loop(awaitable_of):
    """Run ``awaitable_of(server)`` on the offline server's network loop, as a command's handler does."""
    import asyncio

    server = offline_server()

    async def main():
        return await awaitable_of(server)

    return asyncio.run_coroutine_threadsafe(main(), server._network_loop).result(timeout=10)


def test_a_command_crosses_to_the_engine_loop_and_back_with_its_result_or_its_error():
    import asyncio
    import threading

    from pymongo.errors import OperationFailure

    seen = []

    async def answer(value):
        seen.append(threading.current_thread().name)
        await asyncio.sleep(0.01)  # one that waits: it goes on, on the engine loop, after the wait
        seen.append(threading.current_thread().name)
        return value

    async def refuse():
        seen.append(threading.current_thread().name)  # one that ends without waiting
        raise OperationFailure("refused", code=2)

    assert _from_the_network_loop(lambda server: server.on_engine(answer({"ok": 1.0}))) == {"ok": 1.0}
    with pytest.raises(OperationFailure, match="refused") as raised:
        _from_the_network_loop(lambda server: server.on_engine(refuse()))
    assert raised.value.code == 2
    assert seen == ["workbook-engine"] * 3


def test_a_command_whose_client_stops_waiting_is_cancelled_on_the_engine_loop():
    import asyncio
    import threading

    cancelled, started = threading.Event(), threading.Event()

    async def long_command():
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def give_up(server):
        waiting = asyncio.ensure_future(server.on_engine(long_command()))
        while not started.is_set():
            await asyncio.sleep(0.01)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        return True

    assert _from_the_network_loop(give_up)
    assert cancelled.wait(5), "the engine's task went on after its client stopped waiting"


def test_a_duplicate_inserted_while_a_unique_index_builds_fails_the_build(offline_db, monkeypatch):
    """The fast unique build checks and marks in one locked step: a write during the build cannot slip in."""
    from workbook import engine_compat

    db, server = offline_db, offline_server()
    db.people.insert_many([{"_id": f"p{i}", "email": f"e{i}@x"} for i in range(50)])
    memory_engine = engine_compat.memory_engine_class()
    build = memory_engine.create_index

    async def build_while_someone_inserts(self, db_name, coll_name, keys, **options):
        await self.insert_documents(db_name, coll_name, [{"_id": "late", "email": "e7@x"}])
        return await build(self, db_name, coll_name, keys, **options)

    monkeypatch.setattr(memory_engine, "create_index", build_while_someone_inserts)
    with pytest.raises(DuplicateKeyError):
        db.people.create_index("email", unique=True)
    monkeypatch.setattr(memory_engine, "create_index", build)
    assert [i["name"] for i in db.people.list_indexes()] == ["_id_"]
    assert server.bulk_insert(db.name, "people", [{"_id": "again", "email": "e7@x"}]) == 1

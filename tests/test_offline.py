"""The offline default's own machinery: the fast bulk path and the engine patches it relies on."""

from __future__ import annotations

import inspect

import pytest
from mongoeco.engines.memory import MemoryEngine
from mongoeco.errors import WriteError

from workbook.offline import MAX_BSON_SIZE, bson_size, offline_server


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
    assert bson_size(document) == reported

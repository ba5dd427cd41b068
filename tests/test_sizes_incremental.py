"""Offline sizes after writes: only the documents a write replaced are measured again (workbook.sizes._remeasured),
and the result is always what measuring every document gives."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from pymongo.database import Database

import workbook
from workbook import sizes
from workbook.engine_reads import local_storage, public_records
from workbook.sizes import document_sizes, index_size_estimate

INDEXES = [("_id",), ("group",), ("tags",), ("group", "n")]


@pytest.fixture
def db() -> Iterator[Database[Any]]:
    database = workbook.connect(database=f"sizes{uuid.uuid4().hex[:8]}", quiet=True)
    yield database
    database.client.drop_database(database.name)


def _fill(db: Database[Any], count: int = 600) -> None:
    rng = random.Random(3)
    db.things.insert_many(
        [
            {"_id": i, "group": rng.choice("abc"), "n": rng.randrange(100), "tags": ["t"] * rng.randrange(4)}
            for i in range(count)
        ]
    )
    db.things.create_index("group")
    db.things.create_index("tags")
    db.things.create_index([("group", 1), ("n", 1)])


def _measured_whole(db: Database[Any]) -> sizes._StoredSizes:
    """What measuring every document of the current version gives (the reference)."""
    found = local_storage(db, "things")
    assert found is not None
    engine, frozen = found
    documents = public_records(engine, db.name, "things")[0]
    return sizes._measured(frozen._values, documents, sorted(INDEXES))


def _assert_current(db: Database[Any]) -> None:
    kept = sizes._offline_sizes(db, "things", INDEXES)
    whole = _measured_whole(db)
    assert kept is not None and kept.version is whole.version
    assert kept.ids == whole.ids
    assert np.array_equal(kept.bytes, whole.bytes)
    assert {k: kept.index_bytes[k] for k in INDEXES} == whole.index_bytes


def test_sizes_after_every_kind_of_write_equal_measuring_every_document(db: Database[Any]) -> None:
    _fill(db)
    _assert_current(db)
    rng = random.Random(11)
    writes = [
        lambda: db.things.update_one({"_id": rng.randrange(600)}, {"$push": {"tags": "longer-tag"}}),
        lambda: db.things.update_one({"_id": rng.randrange(600)}, {"$set": {"group": "d" * rng.randrange(1, 30)}}),
        lambda: db.things.replace_one({"_id": rng.randrange(600)}, {"group": "z", "n": -1}),
        lambda: db.things.insert_one({"_id": 10_000 + rng.randrange(10**6), "group": "new", "tags": ["a", "b"]}),
        lambda: db.things.update_many({"n": rng.randrange(100)}, {"$inc": {"n": 1000}}),
        lambda: db.things.delete_one({"_id": {"$gte": 10_000}}),  # at the end: the sums lose its entries
        lambda: db.things.delete_one({"_id": rng.randrange(600)}),  # in the middle: every later place shifts
    ]
    for step in range(40):
        writes[step % len(writes)]()
        _assert_current(db)
    assert document_sizes(db.things).sum() == _measured_whole(db).bytes.sum()
    assert index_size_estimate(db, "things") == sum(_measured_whole(db).index_bytes.values())


def test_one_write_measures_one_document_again(db: Database[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    _fill(db, 2_000)
    sizes._offline_sizes(db, "things", INDEXES)  # the whole collection, once
    measured: list[Any] = []
    real = sizes.bson_size

    def counted(document: Any) -> int:
        if "_id" in document:  # a document, not one of its index entries ({k0: ...})
            measured.append(document["_id"])
        return real(document)

    monkeypatch.setattr(sizes, "bson_size", counted)
    db.things.update_one({"_id": 1234}, {"$set": {"group": "grown" * 10}})
    db.things.insert_one({"_id": 5000, "group": "a"})
    _assert_current(db)
    assert measured[:2] == [1234, 5000], "the replaced document and the new one, nothing else"
    assert len(measured) == 2 + 2_001, "then the reference measures every document (in _assert_current)"


def test_a_restored_shape_re_measures_only_what_a_write_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    """A restore seeds its sizes with the reads' own documents, so the first write after it costs one document."""
    db = workbook.connect(database=f"sizesr{uuid.uuid4().hex[:8]}", quiet=True)
    try:
        workbook.load("followers", "referenced", db, scale="tiny", progress=False)
        workbook.load("followers", "referenced", db, scale="tiny", progress=False)  # restored from its snapshot
        measured: list[Any] = []
        real = sizes.bson_size
        monkeypatch.setattr(
            sizes, "bson_size", lambda document: ("_id" in document and measured.append(document)) or real(document)
        )
        user = db.users.find_one({}, sort=[("_id", 1)])
        assert user is not None
        db.users.update_one({"_id": user["_id"]}, {"$set": {"bio": "x" * 300}})
        after = document_sizes(db.users)
        assert len(measured) == 1 and after[user["_id"]] == real(db.users.find_one({"_id": user["_id"]}))
    finally:
        db.client.drop_database(db.name)


def test_many_changes_are_measured_whole(db: Database[Any]) -> None:
    _fill(db, 1_000)
    before = sizes._offline_sizes(db, "things", INDEXES)
    assert before is not None
    db.things.update_many({"n": {"$lt": 50}}, {"$set": {"touched": True}})  # about half the documents
    found = local_storage(db, "things")
    assert found is not None
    documents = public_records(found[0], db.name, "things")[0]
    assert sizes._remeasured(before, found[1]._values, documents) is None, "too many changed: measured whole"
    _assert_current(db)

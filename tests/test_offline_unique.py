"""Unique indexes checked by key on the offline default (workbook.offline_unique) against mongoeco's own scan.

Each write sequence runs twice on the offline default: with the keyed check, and with it switched
off (every unique index checked by mongoeco's scan, as mongoeco 4.11.0 does). Both must accept and
refuse the same writes with the same errors and leave the same documents.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import pytest
from pymongo.database import Database
from pymongo.errors import DuplicateKeyError, OperationFailure

from workbook import offline_unique
from workbook.offline import offline_server
from workbook.offline_limits import WORK_COUNTERS

pytestmark = pytest.mark.parametrize("engine", ["offline"], indirect=True)

INDEXES: list[tuple[list[tuple[str, int]], dict[str, Any]]] = [
    ([("a", 1), ("b", 1)], {}),
    ([("a", 1), ("b", -1)], {"partialFilterExpression": {"c": {"$gt": 0}}, "name": "partial"}),
    ([("b", 1), ("t", 1)], {"sparse": True, "name": "sparse"}),
]

VALUES: list[Any] = [0, 1, 2, 1.0, "1", None, [1, 2], [2], [], {"x": 1}]


def _document(rng: random.Random, identifier: int) -> dict[str, Any]:
    document: dict[str, Any] = {"_id": identifier}
    for field in ("a", "b", "c"):
        if rng.random() < 0.85:
            document[field] = rng.choice(VALUES[:6]) if field != "a" else rng.choice(VALUES)
    if rng.random() < 0.3:
        document["t"] = rng.choice(["x", "y"])
    return document


def _outcome(call: Callable[[], Any]) -> str:
    try:
        result = call()
    except DuplicateKeyError as error:
        return f"duplicate: {error.details if error.details else error}"  # message, index and key, word for word
    except OperationFailure as error:
        return f"{error.code}: {error}"
    return repr(getattr(result, "raw_result", result))


def _script(db: Database, seed: int) -> Iterator[Callable[[], Any]]:
    """A random sequence of single and bulk writes, upserts, replacements, deletes and transactions."""
    rng = random.Random(seed)
    for _ in range(140):
        identifier = rng.randrange(60)
        roll = rng.random()
        if roll < 0.35:
            yield partial(db.u.insert_one, _document(rng, identifier))
        elif roll < 0.5:
            change = {"$set": {"b": rng.choice(VALUES[:6]), "a": rng.choice(VALUES[:6])}}
            yield partial(db.u.update_one, {"_id": identifier}, change)
        elif roll < 0.6:
            yield partial(db.u.replace_one, {"_id": identifier}, _document(rng, identifier), upsert=True)
        elif roll < 0.7:
            change = {"$set": {"a": rng.choice(VALUES[:6]), "b": 0}}
            yield partial(db.u.update_one, {"_id": identifier + 100}, change, upsert=True)
        elif roll < 0.8:
            yield partial(db.u.delete_one, {"_id": identifier})
        elif roll < 0.9:
            yield partial(db.u.insert_many, [_document(rng, identifier + k) for k in range(4)], ordered=False)
        else:
            batch = [_document(rng, identifier + 200 + k) for k in range(2)]
            yield partial(_transaction, db, batch, commit=rng.random() < 0.6)


def _transaction(db: Database, batch: list[dict[str, Any]], *, commit: bool) -> bool:
    """Insert ``batch`` in one transaction, then commit or abort it (abort on a failed insert)."""
    with db.client.start_session() as session:
        session.start_transaction()
        try:
            for document in batch:
                db.u.insert_one(document, session=session)
        except Exception:
            session.abort_transaction()
            raise
        if commit:
            session.commit_transaction()
        else:
            session.abort_transaction()
    return commit


def _run(db: Database, seed: int) -> tuple[list[str], list[Any]]:
    db.u.drop()
    for keys, options in INDEXES:
        db.u.create_index(keys, unique=True, **options)
    outcomes = [_outcome(write) for write in _script(db, seed)]
    return outcomes, list(db.u.find({}).sort("_id", 1))


@pytest.mark.parametrize("seed", range(6))
def test_keyed_checks_accept_and_refuse_what_the_scan_does(db: Database, seed: int, monkeypatch: pytest.MonkeyPatch):
    keyed = _run(db, seed)
    with monkeypatch.context() as switched_off:
        switched_off.setattr(offline_unique, "signature", lambda index: None)
        scanned = _run(db, seed)
    assert keyed[0] == scanned[0]
    assert keyed[1] == scanned[1]
    assert any(outcome.startswith("duplicate") for outcome in keyed[0]), "the sequence never collided"


def test_a_write_that_collides_with_nothing_reads_no_other_document(db: Database, monkeypatch: pytest.MonkeyPatch):
    """Writes into a collection with a compound unique index compare with no stored document: the keys
    are built once, with one pass, and followed write by write."""
    engine = offline_server().engine
    compared: list[int] = []
    original = type(engine)._unique_index_conflict

    def counted(self: Any, *args: Any) -> Any:
        compared.append(1)
        return original(self, *args)

    offline_server().bulk_insert(db.name, "u", ({"_id": i, "a": i % 50, "b": i // 50} for i in range(2_000)))
    db.u.create_index([("a", 1), ("b", 1)], unique=True)
    monkeypatch.setattr(type(engine), "_unique_index_conflict", counted)
    before = WORK_COUNTERS["unique_documents_examined"]
    for i in range(100):
        db.u.insert_one({"_id": -i - 1, "a": -i - 1, "b": 0})
        db.u.update_one({"_id": i}, {"$set": {"b": -1 - i}})
    assert compared == []
    assert WORK_COUNTERS["unique_documents_examined"] - before == 2_000  # one pass, at the first write
    with pytest.raises(DuplicateKeyError):
        db.u.insert_one({"a": -1, "b": 0})  # held by -1: mongoeco's scan finds it and words the error
    assert len(compared) == 1, "a collision is reported by mongoeco's own scan, over the one document holding the key"
    with pytest.raises(DuplicateKeyError, match="a_1_b_1"):
        db.u.update_one({"_id": 5}, {"$set": {"a": 0, "b": 3}})  # _id 150 holds {a: 0, b: 3}
    assert len(compared) == 2


def test_changes_it_did_not_see_rebuild_the_keys(db: Database) -> None:
    """A collection replaced by a bulk load, a dropped and recreated index, an aborted transaction:
    the next check reads the documents again instead of trusting old keys."""
    db.u.create_index([("a", 1), ("b", 1)], unique=True)
    db.u.insert_one({"_id": 1, "a": 1, "b": 1})
    db.u.drop()
    offline_server().bulk_insert(db.name, "u", [{"_id": 2, "a": 2, "b": 2}])
    db.u.create_index([("a", 1), ("b", 1)], unique=True)
    db.u.insert_one({"_id": 3, "a": 1, "b": 1})  # the dropped collection's key is gone
    with pytest.raises(DuplicateKeyError):
        db.u.insert_one({"_id": 4, "a": 2, "b": 2})  # the bulk-loaded one holds it
    db.u.drop_index("a_1_b_1")
    db.u.insert_one({"_id": 5, "a": 2, "b": 2})
    with pytest.raises(OperationFailure):
        db.u.create_index([("a", 1), ("b", 1)], unique=True)
    db.u.delete_one({"_id": 5})
    db.u.create_index([("a", 1), ("b", 1)], unique=True, partialFilterExpression={"a": {"$gte": 2}})
    db.u.insert_one({"_id": 6, "a": 1, "b": 1})  # outside the partial index: allowed twice
    with db.client.start_session() as session:
        session.start_transaction()
        db.u.insert_one({"_id": 7, "a": 9, "b": 9}, session=session)
        with pytest.raises(DuplicateKeyError):
            db.u.insert_one({"_id": 8, "a": 9, "b": 9}, session=session)  # its own write holds the key
        session.abort_transaction()
    db.u.insert_one({"_id": 9, "a": 9, "b": 9})  # aborted: the key is free
    assert [d["_id"] for d in db.u.find({}).sort("_id", 1)] == [2, 3, 6, 9]


def test_a_rollback_it_did_not_see_is_read_again(db: Database) -> None:
    """A document put back by restoring the collection's earlier state (as mongoeco's rollback of a
    failed write does, without a set or delete) holds its key again."""
    db.u.create_index([("a", 1), ("b", 1)], unique=True)
    db.u.insert_many([{"_id": i, "a": i, "b": 0} for i in range(5)])
    stored = offline_server().engine._storage[db.name]["u"]
    state = stored._snapshot_state()  # with {a: 3, b: 0}
    db.u.delete_one({"_id": 3})
    stored._restore_state(state)
    with pytest.raises(DuplicateKeyError):
        db.u.insert_one({"_id": 9, "a": 3, "b": 0})


def test_documents_outside_a_partial_index_are_never_read(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """Thirty documents outside a partial unique index share one key: a write inside it reads none of them."""
    engine = offline_server().engine
    read: list[int] = []
    original = type(engine)._borrow_storage_document

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        read.append(1)
        return original(self, *args, **kwargs)

    db.u.create_index([("a", 1), ("b", 1)], unique=True, partialFilterExpression={"live": True})
    db.u.insert_one({"_id": -1, "a": 0, "b": 0, "live": True})  # the index's keys are read from here on
    for i in range(30):
        db.u.insert_one({"_id": i, "a": 1, "b": 1, "live": False})
    monkeypatch.setattr(type(engine), "_borrow_storage_document", counted)
    db.u.insert_one({"_id": 100, "a": 1, "b": 1, "live": True})
    assert len(read) < 30, f"the write read {len(read)} stored documents"
    with pytest.raises(DuplicateKeyError):
        db.u.insert_one({"_id": 101, "a": 1, "b": 1, "live": True})


@pytest.mark.parametrize("seed", range(4))
def test_the_tracker_holds_each_key_by_its_holders_through_adds_and_discards(engine: Any, seed: int) -> None:
    """A key's one holder is held as itself and several as a set, collapsing back: colliders, copies and a rebuild
    agree with a plain map of sets at every step (keys shared on purpose: the paths a unique index rarely takes)."""
    rng = random.Random(seed)
    tracker = offline_unique.UniqueKeys(lambda data: data)  # a "document" is its tuple of keys here
    model: dict[int, tuple[Any, ...]] = {}
    copies: list[tuple[offline_unique.UniqueKeys, dict[int, tuple[Any, ...]]]] = []
    for _ in range(400):
        member = rng.randrange(12)
        if rng.random() < 0.6:
            keys = tuple({(rng.randrange(5),) for _ in range(rng.randrange(3))})
            tracker.discard(member)
            model.pop(member, None)
            tracker.add(member, keys)
            if keys:
                model[member] = keys
        else:
            tracker.discard(member)
            model.pop(member, None)
        if rng.random() < 0.1:
            copies.append((tracker.copy(), dict(model)))
        for key in [(k,) for k in range(5)]:
            expected = {m for m, held in model.items() if key in held}
            assert tracker.colliders((key,), None) == expected
            assert tracker.colliders((key,), 3) == expected - {3}
    for twin, then in copies:  # a copy keeps what it held when taken
        for key in [(k,) for k in range(5)]:
            assert twin.colliders((key,), None) == {m for m, held in then.items() if key in held}

    class Stored(dict):
        _values = None

    rebuilt = offline_unique.UniqueKeys(lambda data: data)
    rebuilt.rebuild(Stored(model))
    for key in [(k,) for k in range(5)]:
        assert rebuilt.colliders((key,), None) == tracker.colliders((key,), None)

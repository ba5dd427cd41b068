"""Batched appends (workbook/offline_appends.py): a collection reads exactly as one-at-a-time appends leave it."""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest

import workbook.offline_engine  # noqa: F401  (installs the batching before the followers)
from workbook import engine_compat, offline_appends
from workbook.connection import connect


def _state(collection: Any) -> tuple[Any, ...]:
    """Everything the engine can read of a collection: its items in order and every order map."""
    chunks = {chunk_id: (c.previous, c.following, c.items, c.live_count) for chunk_id, c in collection._chunks.items()}
    return (
        list(collection.items()),
        dict(collection._values.items()),
        dict(collection._ordinals.items()),
        dict(collection._locations.items()),
        chunks,
        collection._head_chunk,
        collection._tail_chunk,
        collection._next_chunk,
        collection._next_ordinal,
    )


def _unbatched() -> Any:
    """A collection whose every append goes through mongoeco's own ``__setitem__`` at once."""
    collection = engine_compat.memory_collection_class()()
    original = offline_appends._INSTALLED[0]
    collection.set_now = lambda key, value: original(collection, key, value)  # type: ignore[attr-defined]
    return collection


@pytest.mark.parametrize("seed", range(8))
def test_random_writes_leave_every_map_as_one_at_a_time_appends(seed: int) -> None:
    rng = random.Random(seed)
    batched, reference = engine_compat.memory_collection_class()(), _unbatched()
    saved: list[tuple[Any, Any]] = []
    for step in range(250):
        action = rng.random()
        keys = list(reference._values.keys())
        if action < 0.6 or not keys:  # appends in runs, so queues cross chunk boundaries
            for _ in range(rng.randint(1, 150)):
                key = rng.randint(0, 10**9)
                if key not in reference:
                    batched[key] = reference_value = ("doc", key, step)
                    reference.set_now(key, reference_value)
        elif action < 0.7:
            key = rng.choice(keys)
            batched[key] = reference[key] = ("replaced", key, step)
        elif action < 0.85:
            for key in rng.sample(keys, min(len(keys), rng.randint(1, 200))):
                del batched[key]
                del reference[key]
        elif action < 0.9:
            saved = [(batched._snapshot_state(), reference._snapshot_state())]
        elif action < 0.95 and saved:  # a rollback: appends queued since the snapshot are gone
            for _ in range(rng.randint(1, 50)):
                key = rng.randint(0, 10**9)
                if key not in reference:
                    batched[key] = ("doomed", key)
                    reference.set_now(key, ("doomed", key))
            (mine, theirs), *_ = saved
            batched._restore_state(mine)
            reference._restore_state(theirs)
        else:
            copied = batched.copy()
            assert _state(copied) == _state(reference)
        if rng.random() < 0.15:
            assert _state(batched) == _state(reference), step
    assert _state(batched) == _state(reference)


def test_appends_are_queued_until_the_order_is_read() -> None:
    collection = engine_compat.memory_collection_class()()
    for key in range(1000):
        collection[key] = {"_id": key}
    assert offline_appends.queued(collection) == 1000
    assert 999 in collection and collection[999] == {"_id": 999} and len(collection) == 1000  # seen at once
    assert list(collection)[:3] == [0, 1, 2]  # reading the order applies the queue
    assert offline_appends.queued(collection) == 0
    assert collection._ordinals[999] == 999 and collection._locations[999] == (7, 103)


def test_a_reader_thread_never_races_the_writer() -> None:
    collection = engine_compat.memory_collection_class()()
    stop, seen = threading.Event(), []

    def read() -> None:
        while not stop.is_set():
            seen.append(len(collection._ordinals))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for key in range(20_000):
            collection[key] = key
    finally:
        stop.set()
        reader.join()
    assert list(collection) == list(range(20_000)) and len(collection._ordinals) == 20_000
    assert seen == sorted(seen)  # the order maps only grew, never lost a flushed append


def test_installing_after_a_follower_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(offline_appends, "_INSTALLED", [])
    with pytest.raises(RuntimeError, match="before follow_collection_changes"):
        offline_appends.batch_appends()


def test_inserts_then_an_aborted_transaction_read_back_in_order() -> None:
    db = connect(database="appends_check", quiet=True)
    try:
        db.client.drop_database(db.name)
        db.things.insert_many([{"_id": n} for n in range(500)])
        with db.client.start_session() as session:
            session.start_transaction()
            db.things.insert_many([{"_id": n} for n in range(500, 800)], session=session)
            session.abort_transaction()
        db.things.insert_many([{"_id": n} for n in range(800, 900)])
        db.things.delete_many({"_id": {"$lt": 100}})
        assert [d["_id"] for d in db.things.find()] == [*range(100, 500), *range(800, 900)]
    finally:
        db.client.drop_database(db.name)


def test_a_rollback_restores_the_queue_as_it_was_even_after_a_flush() -> None:
    collection = engine_compat.memory_collection_class()()
    for key in range(200):
        collection[key] = key
    collection_state = collection._snapshot_state()
    assert offline_appends.queued(collection) == 200  # the snapshot left the queue alone
    for key in range(200, 300):
        collection[key] = key
    assert len(collection._ordinals) == 300  # a read applies the queue (taken away from the snapshot's list)
    collection[300] = 300
    collection._restore_state(collection_state)
    assert offline_appends.queued(collection) == 200 and list(collection) == list(range(200))
    assert 250 not in collection and len(collection._ordinals) == 200


def test_the_queue_is_applied_once_it_reaches_its_limit() -> None:
    collection = engine_compat.memory_collection_class()()
    for key in range(3 * offline_appends.QUEUE_LIMIT + 5):
        collection[key] = key
        assert offline_appends.queued(collection) < offline_appends.QUEUE_LIMIT
    assert len(collection._ordinals) == 3 * offline_appends.QUEUE_LIMIT + 5


def test_an_insert_many_over_the_wire_flushes_its_appends_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """The followers' set and delete wrappers journal a write in place only: a new key stays queued (reading the
    order maps for every append flushed the queue at each one: insert_many fell from about 20,000 documents a
    second to 2,000). Each flush journals itself once."""
    flushes: list[bool] = []
    original = engine_compat.journal

    def counted(held: Any, before: Any, after: Any, chunk_id: int, same_chain: bool) -> None:
        flushes.append(same_chain)
        original(held, before, after, chunk_id, same_chain)

    monkeypatch.setattr(engine_compat, "journal", counted)
    db = connect(database="appends_batches", quiet=True)
    try:
        db.client.drop_database(db.name)
        db.things.insert_many([{"_id": n} for n in range(5_000)])
        assert 1 <= len(flushes) <= 5_000 // offline_appends.QUEUE_LIMIT + 2, len(flushes)
        assert db.things.count_documents({}) == 5_000
    finally:
        db.client.drop_database(db.name)

"""Transactions on the offline default behave as MongoDB's do where a learner's code can tell."""

from __future__ import annotations

import threading
import uuid

import pytest
from pymongo.errors import OperationFailure, PyMongoError


@pytest.fixture
def tdb(monkeypatch):
    """A fresh database on the offline default."""
    import workbook

    monkeypatch.delenv("MONGODB_URI", raising=False)
    database = workbook.connect(database=f"tx{uuid.uuid4().hex[:8]}", quiet=True)
    yield database
    database.client.drop_database(database.name)


def test_a_write_conflict_carries_code_112_and_the_transient_label(tdb):
    tdb.acc.insert_one({"_id": 0, "bal": 100})
    with tdb.client.start_session() as first, tdb.client.start_session() as second:
        first.start_transaction()
        second.start_transaction()
        tdb.acc.update_one({"_id": 0}, {"$inc": {"bal": -10}}, session=first)
        tdb.acc.update_one({"_id": 0}, {"$inc": {"bal": -20}}, session=second)
        first.commit_transaction()
        with pytest.raises(OperationFailure) as caught:
            second.commit_transaction()
    assert caught.value.code == 112 and caught.value.has_error_label("TransientTransactionError")
    assert tdb.acc.find_one({"_id": 0})["bal"] == 90  # the commit reported failed was not applied


def test_with_transaction_retries_conflicts_under_threads(tdb):
    tdb.acc.insert_one({"_id": 0, "n": 0})
    errors: list[str] = []

    def worker() -> None:
        with tdb.client.start_session() as session:
            for _ in range(15):
                try:
                    session.with_transaction(
                        lambda s: tdb.acc.update_one({"_id": 0}, {"$inc": {"n": 1}}, session=s))
                except PyMongoError as error:
                    errors.append(repr(error))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    tdb.acc.update_one({"_id": 0}, {"$set": {"outside": True}})  # committed outside every transaction
    for thread in threads:
        thread.join()
    final = tdb.acc.find_one({"_id": 0})
    assert errors == []
    assert final["n"] == 60, "every transaction committed exactly once"
    assert final["outside"] is True, "no transaction overwrote the write committed outside it"


def test_a_failed_operation_aborts_its_transaction(tdb):
    tdb.acc.insert_one({"_id": 1})
    with tdb.client.start_session() as session:
        session.start_transaction()
        tdb.acc.update_one({"_id": 1}, {"$set": {"x": 1}}, session=session)
        with pytest.raises(OperationFailure):
            tdb.acc.insert_one({"_id": 1}, session=session)  # duplicate key
        with pytest.raises(OperationFailure) as later:
            tdb.acc.update_one({"_id": 1}, {"$set": {"y": 1}}, session=session)
        assert later.value.code == 251 and later.value.has_error_label("TransientTransactionError")
        with pytest.raises(OperationFailure):
            session.commit_transaction()
    assert tdb.acc.find_one({"_id": 1}) == {"_id": 1}

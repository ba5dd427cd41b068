"""Transactions on the offline default behave as MongoDB's do where a learner's code can tell."""

from __future__ import annotations

import threading
import time
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
        with pytest.raises(OperationFailure) as caught:  # as on MongoDB: at the write, not at the commit
            tdb.acc.update_one({"_id": 0}, {"$inc": {"bal": -20}}, session=second)
        first.commit_transaction()
        with pytest.raises(OperationFailure) as later:
            second.commit_transaction()
    assert caught.value.code == 112 and caught.value.has_error_label("TransientTransactionError")
    assert caught.value.details["codeName"] == "WriteConflict"
    assert "_id 0" in str(caught.value) and "full error" not in caught.value.details["errmsg"]
    assert later.value.code == 251, "the conflicting transaction was aborted"
    assert tdb.acc.find_one({"_id": 0})["bal"] == 90  # the transaction reported failed was not applied


def test_with_transaction_retries_conflicts_under_threads(tdb):
    tdb.acc.insert_one({"_id": 0, "n": 0})
    errors: list[str] = []

    def worker() -> None:
        with tdb.client.start_session() as session:
            for _ in range(15):
                try:
                    session.with_transaction(lambda s: tdb.acc.update_one({"_id": 0}, {"$inc": {"n": 1}}, session=s))
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


# --- Ported from MongoDB's jstests/core/txns/transactions_write_conflicts.js ------------------------------
# Two transactions T1 and T2 run one operation each (the helpers of jstests/core/txns/libs/write_conflicts.js):
# "T1 starts first and wins": T1 writes, T2's conflicting write fails with WriteConflict, T1 commits, T2's
# commit answers NoSuchTransaction; "T2 starts second and wins": T1 starts (a read), T2 writes and commits,
# then T1's write fails with WriteConflict and its commit answers NoSuchTransaction.

CONFLICTS = {  # name: (initial documents, T1's command, T2's command, final if T1 wins, final if T2 wins)
    "insert-insert": ([], {"insert": "c", "documents": [{"_id": 1, "t1": 1}]},
                      {"insert": "c", "documents": [{"_id": 1, "t2": 1}]},
                      [{"_id": 1, "t1": 1}], [{"_id": 1, "t2": 1}]),
    "update-update": ([{"_id": 1}], {"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"t1": 1}}}]},
                      {"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"t2": 1}}}]},
                      [{"_id": 1, "t1": 1}], [{"_id": 1, "t2": 1}]),
    "upsert-upsert": ([{"_id": 1}],
                      {"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"t1": 1}}, "upsert": True}]},
                      {"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"t2": 1}}, "upsert": True}]},
                      [{"_id": 1, "t1": 1}], [{"_id": 1, "t2": 1}]),
    "delete-delete": ([{"_id": 1}], {"delete": "c", "deletes": [{"q": {"_id": 1}, "limit": 1}]},
                      {"delete": "c", "deletes": [{"q": {"_id": 1}, "limit": 1}]}, [], []),
    "update-delete": ([{"_id": 1}], {"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"t1": 1}}}]},
                      {"delete": "c", "deletes": [{"q": {"_id": 1}, "limit": 1}]}, [{"_id": 1, "t1": 1}], []),
    "delete-update": ([{"_id": 1}], {"delete": "c", "deletes": [{"q": {"_id": 1}, "limit": 1}]},
                      {"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"t2": 1}}}]},
                      [], [{"_id": 1, "t2": 1}]),
    "batch insert-batch insert": ([], {"insert": "c", "documents": [{"_id": 1}, {"_id": 2}, {"_id": 3}]},
                                  {"insert": "c", "documents": [{"_id": 2}, {"_id": 3}, {"_id": 4}]},
                                  [{"_id": 1}, {"_id": 2}, {"_id": 3}], [{"_id": 2}, {"_id": 3}, {"_id": 4}]),
    "multiupdate-multiupdate": (
        [{"_id": i} for i in range(1, 5)],
        {"update": "c", "updates": [{"q": {"_id": {"$lte": 3}}, "u": {"$set": {"t1": 1}}, "multi": True}]},
        {"update": "c", "updates": [{"q": {"_id": {"$gte": 2}}, "u": {"$set": {"t2": 1}}, "multi": True}]},
        [{"_id": 1, "t1": 1}, {"_id": 2, "t1": 1}, {"_id": 3, "t1": 1}, {"_id": 4}],
        [{"_id": 1}, {"_id": 2, "t2": 1}, {"_id": 3, "t2": 1}, {"_id": 4, "t2": 1}]),
    "multiupdate-multidelete": (
        [{"_id": i} for i in range(1, 5)],
        {"update": "c", "updates": [{"q": {"_id": {"$lte": 3}}, "u": {"$set": {"t1": 1}}, "multi": True}]},
        {"delete": "c", "deletes": [{"q": {"_id": {"$gte": 2}}, "limit": 0}]},
        [{"_id": 1, "t1": 1}, {"_id": 2, "t1": 1}, {"_id": 3, "t1": 1}, {"_id": 4}], [{"_id": 1}]),
    "multidelete-multiupdate": (
        [{"_id": i} for i in range(1, 5)],
        {"delete": "c", "deletes": [{"q": {"_id": {"$lte": 3}}, "limit": 0}]},
        {"update": "c", "updates": [{"q": {"_id": {"$gte": 2}}, "u": {"$set": {"t2": 1}}, "multi": True}]},
        [{"_id": 4}], [{"_id": 1}, {"_id": 2, "t2": 1}, {"_id": 3, "t2": 1}, {"_id": 4, "t2": 1}]),
    "multidelete-multidelete": (
        [{"_id": i} for i in range(1, 5)],
        {"delete": "c", "deletes": [{"q": {"_id": {"$lte": 3}}, "limit": 0}]},
        {"delete": "c", "deletes": [{"q": {"_id": {"$gte": 2}}, "limit": 0}]}, [{"_id": 4}], [{"_id": 1}]),
}  # fmt: skip


def _fails_with(code: int, call) -> OperationFailure:
    with pytest.raises(OperationFailure) as caught:
        call()
    assert caught.value.code == code, caught.value
    if code in (112, 251):
        assert caught.value.has_error_label("TransientTransactionError")
    return caught.value


@pytest.mark.parametrize("case", CONFLICTS)
@pytest.mark.parametrize("winner", ["T1StartsFirstAndWins", "T2StartsSecondAndWins"])
def test_transactions_write_conflicts_js(tdb, case, winner):
    initial, t1_op, t2_op, t1_wins, t2_wins = CONFLICTS[case]
    if initial:
        tdb.c.insert_many(initial)
    with tdb.client.start_session() as session1, tdb.client.start_session() as session2:
        session1.start_transaction()
        session2.start_transaction()
        if winner == "T1StartsFirstAndWins":
            tdb.command(t1_op, session=session1)
            _fails_with(112, lambda: tdb.command(t2_op, session=session2))
            session1.commit_transaction()
            _fails_with(251, session2.commit_transaction)
            expected = t1_wins
        else:
            tdb.command({"find": "c"}, session=session1)  # start T1 with a no-op
            tdb.command(t2_op, session=session2)
            session2.commit_transaction()
            _fails_with(112, lambda: tdb.command(t1_op, session=session1))
            _fails_with(251, session1.commit_transaction)
            expected = t2_wins
    assert list(tdb.c.find().sort("_id", 1)) == expected


# --- Ported from MongoDB's jstests/core/txns/write_conflicts_with_non_txns.js -------------------------------


def _in_thread(call):
    """Run ``call`` in a thread; returns the thread and a dict that gets its result or error."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["result"] = call()
        except PyMongoError as error:
            outcome["error"] = error

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def _waits(thread, outcome, engine_table, waits_before: int) -> None:
    """The write outside the transaction is waiting on it (not applied, not failed)."""
    deadline = time.monotonic() + 10
    while engine_table.counters["waits"] == waits_before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert engine_table.counters["waits"] > waits_before, "the write did not wait for the transaction"
    thread.join(0.2)
    assert thread.is_alive() and outcome == {}, "it must wait until the transaction ends"


@pytest.fixture
def table(tdb):
    from workbook import offline, offline_transactions

    found = offline_transactions.table_of(offline.offline_server().engine)
    assert found is not None
    return found


def test_write_conflicts_with_non_txns_js_a_plain_insert_waits_for_the_commit_then_is_a_duplicate(tdb, table):
    with tdb.client.start_session() as session:
        session.start_transaction()
        tdb.c.insert_one({"_id": 1}, session=session)
        before = table.counters["waits"]
        thread, outcome = _in_thread(lambda: tdb.c.insert_one({"_id": 1, "nonTxn": True}))
        _waits(thread, outcome, table, before)
        session.commit_transaction()
        thread.join(10)
    assert getattr(outcome.get("error"), "code", None) == 11000, outcome  # serialized after the transaction
    assert list(tdb.c.find()) == [{"_id": 1}]


def test_write_conflicts_with_non_txns_js_a_waiting_insert_with_max_time_ms_times_out(tdb, table):
    with tdb.client.start_session() as session:
        session.start_transaction()
        tdb.c.insert_one({"_id": 1}, session=session)
        _fails_with(
            50, lambda: tdb.command({"insert": "c", "documents": [{"_id": 1, "nonTxn": True}], "maxTimeMS": 100})
        )
        session.commit_transaction()
    assert list(tdb.c.find()) == [{"_id": 1}]
    tdb.c.insert_one({"_id": 2}, session=None)  # the next command on the connection has no time limit left over


def test_write_conflicts_with_non_txns_js_a_plain_insert_waits_for_the_abort_then_succeeds(tdb, table):
    with tdb.client.start_session() as session:
        session.start_transaction()
        tdb.c.insert_one({"_id": 1}, session=session)
        before = table.counters["waits"]
        thread, outcome = _in_thread(lambda: tdb.c.insert_one({"_id": 1, "nonTxn": True}))
        _waits(thread, outcome, table, before)
        session.abort_transaction()
        thread.join(10)
    assert "error" not in outcome, outcome
    assert list(tdb.c.find()) == [{"_id": 1, "nonTxn": True}]


def test_write_conflicts_with_non_txns_js_a_transaction_conflicts_with_a_later_plain_write(tdb):
    with tdb.client.start_session() as session:
        session.start_transaction()
        tdb.command({"find": "c"}, session=session)
        tdb.c.insert_one({"_id": 1, "nonTxn": True})
        _fails_with(112, lambda: tdb.c.insert_one({"_id": 1}, session=session))
        _fails_with(251, session.commit_transaction)
    assert list(tdb.c.find()) == [{"_id": 1, "nonTxn": True}]


def test_a_plain_update_waits_then_applies_on_top_of_the_commit(tdb, table):
    tdb.c.insert_one({"_id": 1, "n": 0})
    with tdb.client.start_session() as session:
        session.start_transaction()
        tdb.c.update_one({"_id": 1}, {"$inc": {"n": 1}}, session=session)
        before = table.counters["waits"]
        thread, outcome = _in_thread(lambda: tdb.c.update_one({"_id": 1}, {"$inc": {"n": 10}}))
        _waits(thread, outcome, table, before)
        session.commit_transaction()
        thread.join(10)
    assert "error" not in outcome and tdb.c.find_one({"_id": 1})["n"] == 11, "no update lost"


# --- Ported from MongoDB's jstests/core/txns/abort_expired_transaction.js ---------------------------------


def test_abort_expired_transaction_js_a_waited_on_transaction_expires_and_answers_no_such_transaction(
    tdb, table, monkeypatch
):
    from workbook import offline_transactions

    monkeypatch.setattr(offline_transactions, "TRANSACTION_LIFETIME_LIMIT_SECONDS", 0.3)
    tdb.c.insert_one({"_id": 1})
    with tdb.client.start_session() as session:
        session.start_transaction()
        tdb.c.update_one({"_id": 1}, {"$set": {"txn": True}}, session=session)
        tdb.c.update_one({"_id": 1}, {"$set": {"plain": True}})  # waits for the lifetime, then the abort
        error = _fails_with(251, lambda: tdb.c.insert_one({"_id": 2}, session=session))
        assert "transactionLifetimeLimitSeconds" in str(error)
        _fails_with(251, session.commit_transaction)
    assert list(tdb.c.find()) == [{"_id": 1, "plain": True}]


def test_abort_expired_transaction_js_set_parameter_lowers_the_lifetime_of_transactions_started_after_it(tdb, table):
    admin = tdb.client.admin
    assert admin.command("getParameter", 1, transactionLifetimeLimitSeconds=1)["transactionLifetimeLimitSeconds"] == 60
    tdb.c.insert_one({"_id": 1})
    with tdb.client.start_session() as early:
        early.start_transaction()  # started under 60 s: keeps them (MongoDB fixes the deadline at the start)
        tdb.c.insert_one({"_id": 2}, session=early)
        assert admin.command("setParameter", 1, transactionLifetimeLimitSeconds=1) == {"was": 60, "ok": 1.0}
        try:
            with tdb.client.start_session() as late:
                late.start_transaction()
                tdb.c.update_one({"_id": 1}, {"$set": {"late": True}}, session=late)
                time.sleep(1.1)  # nothing waits on it: its own next command finds it expired
                error = _fails_with(251, lambda: tdb.c.insert_one({"_id": 3}, session=late))
                assert "transactionLifetimeLimitSeconds (1 s)" in str(error)
                _fails_with(251, late.commit_transaction)
            early.commit_transaction()
        finally:
            assert admin.command("setParameter", 1, transactionLifetimeLimitSeconds=60)["was"] == 1
    assert list(tdb.c.find().sort("_id", 1)) == [{"_id": 1}, {"_id": 2}]
    assert table.lifetime_limit == 60


@pytest.mark.parametrize(
    ("database", "parameters", "code"),
    [
        ("admin", {"transactionLifetimeLimitSeconds": 0}, 2),
        ("admin", {"transactionLifetimeLimitSeconds": 1.5}, 2),
        ("admin", {"notAParameter": 1}, 72),
        ("course", {"transactionLifetimeLimitSeconds": 5}, 13),
    ],
)
def test_set_parameter_refuses_what_mongodb_refuses_and_changes_nothing(tdb, table, database, parameters, code):
    _fails_with(code, lambda: tdb.client[database].command("setParameter", 1, **parameters))
    assert table.limit() == 60


# --- Ported from MongoDB's jstests/core/txns/multi_update_in_transaction.js (and multi_delete_in_transaction.js)


def test_multi_update_and_delete_in_transaction_js_commit_next_to_other_writers(tdb):
    """Multi-document writes in a transaction commit beside writes to other documents, databases and collections."""
    tdb.c.insert_many([{"_id": i, "a": 0} for i in range(6)])
    other = tdb.client[tdb.name + "x"]
    try:
        with tdb.client.start_session() as session:
            session.start_transaction()
            assert tdb.c.update_many({"_id": {"$lt": 3}}, {"$set": {"a": 1}}, session=session).modified_count == 3
            assert tdb.c.delete_many({"_id": {"$gte": 4}}, session=session).deleted_count == 2
            tdb.c.update_one({"_id": 3}, {"$set": {"outside": True}})  # another document of the collection
            other.c.insert_one({"_id": 1})  # another database entirely
            tdb.d.insert_one({"_id": 1})  # another collection
            session.commit_transaction()
        assert list(tdb.c.find().sort("_id", 1)) == [
            {"_id": 0, "a": 1},
            {"_id": 1, "a": 1},
            {"_id": 2, "a": 1},
            {"_id": 3, "a": 0, "outside": True},
        ]
        assert tdb.c.count_documents({"a": 1}) == 3 and tdb.c.find_one({"outside": True})["_id"] == 3
        assert other.c.count_documents({}) == 1 and tdb.d.count_documents({}) == 1
    finally:
        tdb.client.drop_database(other.name)


def test_an_indexed_field_committed_by_a_transaction_is_found_through_its_index(tdb):
    tdb.c.create_index("a")
    tdb.c.insert_many([{"_id": i, "a": i} for i in range(5)])
    with tdb.client.start_session() as session:
        session.start_transaction()
        tdb.c.update_one({"_id": 1}, {"$set": {"a": 100}}, session=session)
        tdb.c.insert_one({"_id": 9, "a": 200}, session=session)
        tdb.c.update_one({"_id": 2}, {"$set": {"b": 1}})  # a plain write to another document meanwhile
        session.commit_transaction()
    assert [d["_id"] for d in tdb.c.find({"a": 100}).hint("a_1")] == [1]
    assert [d["_id"] for d in tdb.c.find({"a": 1}).hint("a_1")] == []
    assert [d["_id"] for d in tdb.c.find({"a": {"$gte": 100}}).hint("a_1")] == [1, 9]


def test_transactions_in_different_databases_never_conflict(tdb):
    """The workshop-day failure: any commit anywhere used to fail every open transaction with 112."""
    other = tdb.client[tdb.name + "y"]
    try:
        tdb.c.insert_one({"_id": 1, "n": 0})
        other.c.insert_one({"_id": 1, "n": 0})
        with tdb.client.start_session() as mine, tdb.client.start_session() as theirs:
            mine.start_transaction()
            theirs.start_transaction()
            tdb.c.update_one({"_id": 1}, {"$inc": {"n": 1}}, session=mine)
            other.c.update_one({"_id": 1}, {"$inc": {"n": 1}}, session=theirs)
            theirs.commit_transaction()
            mine.commit_transaction()
        assert tdb.c.find_one()["n"] == 1 and other.c.find_one()["n"] == 1
    finally:
        tdb.client.drop_database(other.name)


def test_two_transactions_inserting_one_unique_value_do_not_both_commit(tdb):
    tdb.c.create_index("email", unique=True)
    with tdb.client.start_session() as first, tdb.client.start_session() as second:
        first.start_transaction()
        second.start_transaction()
        tdb.c.insert_one({"_id": 1, "email": "a@x"}, session=first)
        tdb.c.insert_one({"_id": 2, "email": "a@x"}, session=second)
        first.commit_transaction()
        _fails_with(112, second.commit_transaction)
    assert list(tdb.c.find()) == [{"_id": 1, "email": "a@x"}]


def test_every_private_mongoeco_name_the_module_uses_is_listed():
    """offline_transactions.py overrides and reads engine internals: each is in engine_compat.PRIVATE_NAMES."""
    import re
    from pathlib import Path

    from workbook import engine_compat, offline_transactions

    source = Path(offline_transactions.__file__).read_text()
    used = set(re.findall(r"(?:self|super\(\))\.(_[a-z]\w+)", source))
    used |= set(re.findall(r"def (_[a-z]\w+_locked)", source))
    used |= {name for name in re.findall(r"def (_\w+)\(self", source) if name.endswith("_transaction")}
    own = {
        "_transactions",
        "_forget_old_versions",
        "_note_write",
        "_waiting",
        "_wait_for",
        "_expire_old_transactions",
        "_check_unique_at_commit",
        "_check_whole_namespaces",
        "_document_writes",
        "_whole_namespaces",
        "_commit_document",
    }
    listed = {name.attribute.split(".")[-1] for name in engine_compat.PRIVATE_NAMES}
    assert sorted(used - own - listed) == []
    assert engine_compat.problems() == []

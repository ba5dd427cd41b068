"""Notebook 08's experiments: one-document atomicity, update_many's partial failure, retried conflicts."""

from __future__ import annotations

import pytest

from workbook import atomicity, facts
from workbook.errors import OperationRejectedError, WorkbookError


def test_an_order_in_one_document_takes_stock_and_records_it_in_one_round_trip(db):
    sale = atomicity.flash_sale(db, {"_id": "p1", "name": "Lamp", "price": 20.0, "stock": 2})
    work = atomicity.measured(lambda: atomicity.order_in_one_document(sale, "p1", "c1", 2))
    assert work.result is True and work.round_trips == 1 and work.commands == ["update"] and work.transactions == 0
    table = atomicity.compare_work({"one document": work})
    assert table.loc["one document", "round trips"] == 1 and table.loc["one document", "commands"] == "update"
    document = sale.find_one({"_id": "p1"})
    assert document["stock"] == 0 and document["orders"] == [{"customerId": "c1", "quantity": 2}]


def test_short_stock_changes_nothing(db):
    sale = atomicity.flash_sale(db, {"_id": "p1", "name": "Lamp", "price": 20.0, "stock": 1})
    assert atomicity.order_in_one_document(sale, "p1", "c1", 2) is False
    assert sale.find_one({"_id": "p1"}) == {"_id": "p1", "name": "Lamp", "price": 20.0, "stock": 1, "orders": []}
    with pytest.raises(OperationRejectedError, match="at least 1"):
        atomicity.order_in_one_document(sale, "p1", "c1", 0)


def test_update_many_keeps_the_documents_it_changed_before_the_failure(db):
    partial = atomicity.update_many_midway_failure(db, count=6, empty=4)
    assert partial.error_code == 121 and partial.failing_id == 4
    assert partial.changed == [1, 2, 3] and partial.unchanged == [4, 5, 6]


def test_update_many_needs_an_empty_shelf_in_range(db):
    with pytest.raises(WorkbookError, match="between 1 and 6"):
        atomicity.update_many_midway_failure(db, count=6, empty=9)


def test_with_transaction_retries_a_write_conflict_and_loses_no_update(db):
    report = atomicity.increment_with_conflict(db.counters)
    assert report.attempts == 2 and report.retries == 1
    assert report.errors == [(facts.WRITE_CONFLICT, ["TransientTransactionError"])]
    assert report.counter == 2  # the outside write and the transaction's both count


def test_the_transaction_lifetime_is_reported_60_s_by_default(db, engine):
    value = atomicity.transaction_lifetime(db)
    reply = db.client.admin.command("getParameter", 1, transactionLifetimeLimitSeconds=1)
    assert value == reply["transactionLifetimeLimitSeconds"] > 0
    if engine is None:  # the offline default models MongoDB's default
        assert value == atomicity.TRANSACTION_LIFETIME_SECONDS == 60


def test_a_transaction_left_open_past_its_lifetime_is_aborted_and_the_waiting_write_goes_through(db):
    before = atomicity.transaction_lifetime(db)
    outlived = atomicity.outlive_transaction(db, limit_seconds=1)
    assert outlived.limit_seconds == 1 and outlived.restored_seconds == before
    assert atomicity.transaction_lifetime(db) == before, "the limit is set back"
    assert outlived.aborted and outlived.commit_code == 251 and "TransientTransactionError" in outlived.commit_labels
    assert outlived.waited_seconds >= 0.9, "the restock waited for the transaction until it expired"
    assert outlived.document == {"_id": "lamp", "stock": 15}, "the restock applied, the expired decrement did not"
    assert "1 → " in repr(outlived) and "code 251" in repr(outlived)


def test_a_lifetime_below_one_second_is_refused_before_anything_runs(db):
    with pytest.raises(OperationRejectedError, match="at least 1"):
        atomicity.outlive_transaction(db, limit_seconds=0)

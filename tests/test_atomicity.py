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


def test_the_transaction_lifetime_is_the_servers_or_unknown(db, engine):
    value = atomicity.transaction_lifetime(db)
    if engine is None:  # the offline default has no such parameter and says so
        assert value is None
    else:  # a real server reports its own (60 s unless changed), read back independently
        reply = db.client.admin.command("getParameter", 1, transactionLifetimeLimitSeconds=1)
        assert value == reply["transactionLifetimeLimitSeconds"] > 0

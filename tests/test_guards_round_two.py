"""Workshop day, round two (issue 24): every case that was silent or raw now says what is wrong and the fix.

Each test failed before its fix with a raw traceback (AttributeError, KeyError, OverflowError,
plotly's ValueError), ran for hours, or silently did the wrong thing.
"""

from __future__ import annotations

import uuid

import pandas as pd
import pytest

import workbook
from workbook import charts, namespace
from workbook.errors import (
    ArgumentOutOfRangeError,
    ArgumentTypeError,
    ExplainError,
    NamespaceError,
    NamespaceWarning,
    OperationRejectedError,
    WorkbookError,
)


@pytest.fixture(scope="module")
def store():
    db = workbook.connect(database=f"g2{uuid.uuid4().hex[:6]}", quiet=True)
    loaded = workbook.load("store", "hybrid", db, scale="tiny", progress=False)
    yield loaded
    db.client.drop_database(db.name)


# --- learner names


def test_a_blank_learner_name_is_refused_not_replaced_by_the_os_user():
    for blank in ("", "   ", "\t"):
        with pytest.raises(NamespaceError, match="is blank") as refused:
            namespace.learner_name(blank)
        assert "learner='ada'" in (refused.value.fix or "")


def test_a_blank_workbook_learner_is_explained_once(monkeypatch):
    monkeypatch.setenv("WORKBOOK_LEARNER", " ")
    monkeypatch.setattr(namespace, "_warned_blank", False)
    with pytest.warns(NamespaceWarning, match="WORKBOOK_LEARNER is set but blank"):
        key = namespace.learner_name()
    assert key == namespace.learner_key(namespace._os_user())


def test_names_of_separators_only_do_not_share_one_namespace():
    names = ["-", "_", "..", "--", "."]
    keys = [namespace.learner_key(name) for name in names]
    assert len(set(keys)) == len(names), keys
    assert len({namespace.learner_database(name) for name in names}) == len(names)


def test_names_with_a_letter_still_get_distinct_keys():
    assert len({namespace.learner_key(n) for n in ("a", "a-", "日本", "Zoë", "Zoé")}) == 4  # a and a- are one


def test_connect_and_reset_refuse_arguments_of_the_wrong_type():
    with pytest.raises(ArgumentTypeError, match="uri must be a MongoDB URI string"):
        workbook.connect(uri=5)
    with pytest.raises(ArgumentTypeError, match="learner must be a learner's name"):
        workbook.reset(learner=5)


# --- the banner names whose offline server it is


def test_another_process_offline_server_is_not_described_as_in_this_process(store, monkeypatch):
    from pymongo import MongoClient

    from workbook import offline, offline_commands
    from workbook.connection import _describe

    other = MongoClient(offline.offline_server().uri)
    try:
        assert _describe(other).topology == "in this Python process"
        monkeypatch.setattr(offline_commands, "RUNNING", [])  # as seen from a process that did not start it
        info = _describe(other)
        assert "another Python process" in info.topology and "in this Python process" not in info.topology
        assert info.uri != "(in-process)"
    finally:
        other.close()


# --- charts


@pytest.mark.parametrize("chart", ["latency_chart", "work_chart", "size_chart", "growth_chart"])
@pytest.mark.parametrize("frame", [None, pd.DataFrame()])
def test_charts_given_none_or_an_empty_frame_say_what_to_pass(chart, frame):
    with pytest.raises(WorkbookError, match="Pass what workbook"):
        getattr(charts, chart)(frame)


def test_workload_cost_chart_given_none_says_what_to_pass(store):
    with pytest.raises(WorkbookError, match="run_workload"):
        charts.workload_cost_chart(None, store.workload)


# --- counts that would run for hours, and numbers beyond any real count


@pytest.mark.parametrize("calls", [-1, 0, 10**9])
def test_capstone_grade_bounds_its_calls(calls):
    from workbook.capstone.grading import grade

    with pytest.raises(ArgumentOutOfRangeError) as refused:
        grade(object(), calls=calls)
    if calls > 0:
        assert "10,000" in str(refused.value) and "hours" in str(refused.value)


def test_run_workload_refuses_a_repeat_that_would_run_for_hours(store):
    with pytest.raises(ArgumentOutOfRangeError, match="over the bound of 10,000"):
        workbook.run_workload(store, repeat=10**9, progress=False)


def test_the_doctor_refuses_calls_that_would_run_for_hours(store):
    from workbook.schema_doctor.examine import doctor

    with pytest.raises(ArgumentOutOfRangeError, match="calls=1,000,000,000"):
        doctor(store, calls=10**9)


def test_an_order_quantity_beyond_any_stock_is_refused(store):
    product = store["products"].find_one()["_id"]
    customer = store["customers"].find_one()["_id"]
    with pytest.raises(ArgumentOutOfRangeError, match="2,147,483,647"):
        store.ops.place_order(customer, [(product, 10**30)])


def test_place_order_refuses_a_customer_that_does_not_exist(store):
    product = store["products"].find_one()["_id"]
    before = store["orders"].count_documents({})
    with pytest.raises(OperationRejectedError, match="no such customer"):
        store.ops.place_order("cust-nobody", [(product, 1)])
    assert store["orders"].count_documents({}) == before


@pytest.mark.parametrize("argument", ["skip", "limit"])
def test_explain_refuses_skip_or_limit_beyond_2_31(store, argument):
    with pytest.raises(ExplainError, match="2,147,483,64"):
        workbook.explain(store["products"], {}, **{argument: 2**31})
    assert workbook.explain(store["products"], {}, **{argument: 2**31 - 1}).summary()


def test_an_operation_limit_beyond_2_31_is_refused(store):
    customer = store["customers"].find_one()["_id"]
    with pytest.raises(ArgumentOutOfRangeError):
        store.ops.my_orders(customer, limit=2**31)


@pytest.mark.parametrize("direction", [2, 0, "up", True])
def test_explain_refuses_a_sort_direction_mongodb_refuses(store, direction):
    with pytest.raises(ExplainError, match="must be 1 .ascending. or -1"):
        workbook.explain(store["products"], {}, sort=[("price", direction)])
    assert workbook.explain(store["products"], {}, sort=[("price", -1)]).summary()


# --- validators: an unknown BSON type name is refused as MongoDB refuses it


@pytest.mark.parametrize(
    "validator",
    [
        {"$jsonSchema": {"bsonType": "object", "properties": {"name": {"bsonType": "sting"}}}},
        {"$jsonSchema": {"properties": {"tags": {"bsonType": "array", "items": {"bsonType": ["int", "lng"]}}}}},
        {"name": {"$type": "sting"}},
    ],
)
def test_create_and_collmod_refuse_an_unknown_bson_type(store, validator):
    from pymongo.errors import OperationFailure

    db = store.db
    name = f"v{uuid.uuid4().hex[:6]}"
    try:
        with pytest.raises(OperationFailure) as refused:
            db.create_collection(name, validator=validator)
        assert refused.value.code == 2 and "Unknown type name alias" in str(refused.value)
        assert "string" in str(refused.value), "the valid type names are listed"
        db.create_collection(name)
        with pytest.raises(OperationFailure) as refused:
            db.command("collMod", name, validator=validator)
        assert refused.value.code == 2
        db[name].insert_one({"name": "still accepted"})  # the bad validator was not stored
        assert db[name].count_documents({}) == 1
    finally:
        db.drop_collection(name)


def test_a_valid_validator_is_still_accepted(store):
    db = store.db
    name = f"v{uuid.uuid4().hex[:6]}"
    try:
        db.create_collection(name, validator={"$jsonSchema": {"properties": {"n": {"bsonType": ["int", "long"]}}}})
        db.command("collMod", name, validator={"n": {"$type": "number"}})
        with pytest.raises(Exception, match="validation"):
            db[name].insert_one({"n": "text"})
    finally:
        db.drop_collection(name)

"""The differential check: generated cases, the comparison, and a run against a real server."""

from __future__ import annotations

import copy
import uuid

import pytest

import workbook
from workbook.__main__ import main as cli
from workbook.dev.differential import (
    Case,
    DiffcheckNeedsServerError,
    DiffReport,
    diffcheck,
    explain_differences,
    generate_cases,
    run_case,
)
from workbook.explain_model import model_find
from workbook.planner import explain_find

from .conftest import real_uri

ID_INDEX = {"v": 2, "key": {"_id": 1}, "name": "_id_"}


def explain_of(case: Case) -> dict:
    """The model's explain of a case, on its documents and indexes, without any database."""
    indexes = [ID_INDEX] + [{"v": 2, **{**i, "key": dict(i["key"])}} for i in case.indexes]
    return explain_find(case.documents, indexes, namespace="diffcheck.case", **case.query)


def test_cases_are_the_same_for_the_same_seed() -> None:
    assert generate_cases(5, 20) == generate_cases(5, 20)
    assert generate_cases(5, 20) != generate_cases(6, 20)
    assert [c.number for c in generate_cases(1, 7)] == list(range(7))


def test_cases_mix_arrays_strings_indexes_and_query_forms() -> None:
    cases = generate_cases(0, 200)
    documents = [d for c in cases for d in c.documents]
    assert any(isinstance(d.get("b"), list) for d in documents)
    assert any(isinstance(d.get("b"), int) for d in documents)
    names = {d["s"] for d in documents if "s" in d}
    assert {"apple", "Apple", "APPLE"} <= names
    assert any(isinstance(d["n"], float) for d in documents)
    assert any(len(c.indexes) >= 2 for c in cases) and any(not c.indexes for c in cases)
    filters = [c.query["filter"] for c in cases]
    operators = {op for f in filters for v in f.values() if isinstance(v, dict) for op in v}
    assert {"$in", "$gt", "$gte", "$lt", "$lte"} <= operators
    assert any(any(not isinstance(v, dict) for v in f.values()) for f in filters)  # plain equality
    for part in ("sort", "projection", "limit", "skip", "collation"):
        assert any(part in c.query for c in cases), part


def test_every_generated_case_is_within_the_model() -> None:
    for case in generate_cases(0, 150):
        explain_of(case)  # raises UnsupportedByModelError if the generator strays


def test_identical_explains_have_no_differences() -> None:
    explain = explain_of(generate_cases(0, 1)[0])
    assert explain_differences(explain, copy.deepcopy(explain)) == []


def test_differences_are_reported_by_name() -> None:
    case = Case(
        0, [{"_id": i, "a": i % 3} for i in range(9)], [{"key": [("a", 1)], "name": "a_1"}], {"filter": {"a": 1}}
    )
    model = explain_of(case)
    server = copy.deepcopy(model)
    server["executionStats"]["totalKeysExamined"] += 1
    scan = server["queryPlanner"]["winningPlan"]["inputStage"]
    scan["indexName"] = "a_other"
    differences = {d.what: (d.server, d.model) for d in explain_differences(server, model)}
    assert differences == {"index": ("a_other", "a_1"), "totalKeysExamined": (4, 3)}


def test_stage_shape_difference_is_reported() -> None:
    case = Case(0, [{"_id": i} for i in range(5)], [], {"filter": {"x": 1}})
    model = explain_of(case)
    server = copy.deepcopy(model)
    server["queryPlanner"]["winningPlan"] = {"stage": "LIMIT", "inputStage": server["queryPlanner"]["winningPlan"]}
    (difference,) = explain_differences(server, model)
    assert (difference.what, difference.server, difference.model) == ("stages", "LIMIT > COLLSCAN", "COLLSCAN")


def test_express_stage_of_mongodb_8_counts_as_idhack() -> None:
    case = Case(0, [{"_id": i} for i in range(5)], [], {"filter": {"_id": 3}})
    model = explain_of(case)
    assert model["queryPlanner"]["winningPlan"]["stage"] == "IDHACK"
    server = copy.deepcopy(model)
    server["queryPlanner"]["winningPlan"] = {"stage": "EXPRESS_IXSCAN", "indexName": "_id_", "keyPattern": "{ _id: 1 }"}
    assert explain_differences(server, model) == []


def test_run_case_loads_compares_and_drops(monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole loop on the offline default, with the model on both sides: no differences."""
    monkeypatch.delenv("MONGODB_URI", raising=False)
    db = workbook.connect(database=f"t{uuid.uuid4().hex[:10]}", quiet=True)
    try:
        results = [run_case(db, case, model_find, model_find) for case in generate_cases(2, 15)]
        assert all(r.differences == [] and r.server and r.server == r.model for r in results)
        assert db.list_collection_names() == []
        report = DiffReport("offline default", 2, results)
        assert report.table().endswith("0 of 15 cases differ: the model agrees with the server on every case")
    finally:
        db.client.drop_database(db.name)


def test_report_table_lists_each_difference() -> None:
    case = generate_cases(0, 1)[0]
    model = explain_of(case)
    server = copy.deepcopy(model)
    server["executionStats"]["totalDocsExamined"] = 999
    from workbook.dev.differential import CaseResult

    result = CaseResult(case, differences=explain_differences(server, model))
    table = DiffReport("MongoDB 8.0.4", 0, [result]).table()
    assert "totalDocsExamined" in table and "999" in table and "1 of 1 cases differ" in table


def test_without_a_server_it_says_how_to_get_one(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.delenv("MONGODB_URI", raising=False)
    with pytest.raises(DiffcheckNeedsServerError) as raised:
        diffcheck(seed=0, cases=1)
    assert "MONGODB_URI" in (raised.value.fix or "")
    assert cli(["diffcheck", "--cases", "1"]) == 2
    assert "MONGODB_URI" in capsys.readouterr().err


@pytest.mark.mongodb
@pytest.mark.skipif(real_uri() is None, reason="needs a real MongoDB server: set MONGODB_URI")
def test_diffcheck_against_the_server() -> None:
    report = diffcheck(real_uri(), seed=1, cases=25)
    print(report.table())
    assert len(report.results) == 25
    assert not [r for r in report.results if any(d.what == "error" for d in r.differences)], report.table()
    client = workbook.client_for(real_uri())
    assert workbook.connect(real_uri(), database="diffcheck", quiet=True).name not in client.list_database_names()


def test_extended_cases_use_the_newer_operators_and_stay_within_the_model() -> None:
    cases = generate_cases(0, 120, extended=True)
    assert generate_cases(0, 120) != cases and generate_cases(0, 120, extended=True) == cases
    text = " ".join(repr(c.query.get("filter")) for c in cases)
    for operator in ("$or", "$elemMatch", "$all", "$size", "$type", "$not", "$ne", "$nin", "$exists"):
        assert operator in text, operator
    for case in cases:
        explain_of(case)  # raises UnsupportedByModelError if the generator strays


def test_extended_cases_return_what_the_engines_find_returns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Until a server runs them (``diffcheck --extended``), the offline engine's find() checks the counts."""
    monkeypatch.delenv("MONGODB_URI", raising=False)
    db = workbook.connect(database=f"t{uuid.uuid4().hex[:10]}", quiet=True)
    try:
        for case in generate_cases(3, 40, extended=True):
            collection = db[f"case{case.number}"]
            collection.insert_many([dict(d) for d in case.documents])
            query = case.query
            if query.get("collation"):  # the engine's collations are not the model's: counts may differ
                continue
            found = collection.find(
                query["filter"], sort=query.get("sort"), limit=query.get("limit", 0), skip=query.get("skip", 0)
            )
            assert explain_of(case)["executionStats"]["nReturned"] == len(list(found)), case.describe()
    finally:
        db.client.drop_database(db.name)


@pytest.mark.mongodb
@pytest.mark.skipif(real_uri() is None, reason="needs a real MongoDB server: set MONGODB_URI")
def test_extended_diffcheck_against_the_server() -> None:
    report = diffcheck(real_uri(), seed=1, cases=25, extended=True)
    print(report.table())
    assert not [r for r in report.results if any(d.what == "error" for d in r.differences)], report.table()

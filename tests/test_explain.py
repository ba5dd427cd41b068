"""explain(): the server's explain on real MongoDB, the planner model on the offline default.

Tests parametrized over ``engine`` assert what holds on both (plan shape, index chosen, documents
returned); exact key and document counts are asserted where the explain is modelled.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from pymongo import ASCENDING, DESCENDING
from pymongo.collation import Collation
from pymongo.database import Database

import workbook
from workbook.errors import WorkbookError
from workbook.explain_draw import plan_layout
from workbook.explaining import (
    Explain,
    ExplainError,
    draw_plan,
    explain,
    explain_aggregate,
    normalise_server_explain,
    summarize,
)
from workbook.planner import MODELLED_LABEL

DOCS = [
    {
        "_id": i,
        "sku": f"s{i:03}",
        "qty": i % 10,
        "tags": ["red", "blue"][: i % 3],
        "name": ["ant", "Ant", "ANT", "bee"][i % 4],
    }
    for i in range(60)
]


@pytest.fixture
def offline_db(monkeypatch: pytest.MonkeyPatch) -> Iterator[Database]:
    """A fresh database on the offline default, dropped afterwards."""
    monkeypatch.delenv("MONGODB_URI", raising=False)
    database = workbook.connect(database=f"t{uuid.uuid4().hex[:10]}", quiet=True)
    yield database
    database.client.drop_database(database.name)


@pytest.fixture
def items(db: Database) -> Database:
    """The items collection on each engine: 60 documents, an index on qty, one on name."""
    db.items.insert_many([dict(d) for d in DOCS])
    db.items.create_index([("qty", ASCENDING)], name="qty_1")
    db.items.create_index([("qty", ASCENDING), ("sku", ASCENDING)], name="qty_sku")
    return db


def stage_names(e: Explain) -> list[str]:
    return e.summary()["stages"]


def test_index_scan_with_the_real_counts(items: Database) -> None:
    e = explain(items.items, {"qty": 3}, hint="qty_1")
    matching = sum(1 for d in DOCS if d["qty"] == 3)
    s = e.summary()
    assert s["plan"] == "IXSCAN" and s["index"] == "qty_1"
    assert s["nReturned"] == matching
    assert e["executionStats"]["nReturned"] == matching  # dict-like access to the raw explain
    if e.modelled:
        assert (s["keysExamined"], s["docsExamined"]) == (matching, matching)


def test_collection_scan_without_an_index(items: Database) -> None:
    e = explain(items.items, {"sku": "s007"})
    s = e.summary()
    assert s["plan"] == "COLLSCAN" and s["index"] is None
    assert s["nReturned"] == 1
    assert s["docsExamined"] == len(DOCS)  # a collection scan reads every document, on any engine


def test_covered_query_examines_no_documents(items: Database) -> None:
    e = explain(items.items, {"qty": {"$gte": 8}}, projection={"qty": 1, "sku": 1, "_id": 0}, hint="qty_sku")
    s = e.summary()
    assert s["covered"] and s["docsExamined"] == 0
    assert s["nReturned"] == sum(1 for d in DOCS if d["qty"] >= 8)


def test_blocking_sort_is_reported(items: Database) -> None:
    e = explain(items.items, {"qty": 2}, sort=[("sku", DESCENDING)], hint="qty_1")
    assert e.summary()["inMemorySort"]
    assert "SORT" in stage_names(e)


@pytest.mark.parametrize(
    "sort",
    [[("qty", 1), ("sku", 1)], {"qty": 1, "sku": 1}, [("qty", ASCENDING), ("sku", ASCENDING)]],
    ids=["key-list", "dict", "pymongo-constants"],
)
def test_sort_forms_are_accepted(items: Database, sort: object) -> None:
    e = explain(items.items, {"qty": {"$lt": 3}}, sort=sort)
    s = e.summary()
    assert s["index"] == "qty_sku" and not s["inMemorySort"]


@pytest.mark.parametrize(
    "hint", ["qty_sku", [("qty", 1), ("sku", 1)], {"qty": 1, "sku": 1}], ids=["name", "key-list", "dict"]
)
def test_hint_forms_are_accepted(items: Database, hint: object) -> None:
    assert explain(items.items, {"qty": 4}, hint=hint).summary()["index"] == "qty_sku"


@pytest.mark.parametrize("projection", [{"sku": 1, "_id": 0}, ["sku"]], ids=["dict", "list"])
def test_projection_forms_are_accepted(items: Database, projection: object) -> None:
    e = explain(items.items, {"qty": 4}, projection=projection, hint="qty_sku")
    assert any(str(n).startswith("PROJECTION") for n in stage_names(e))


@pytest.mark.parametrize(
    "collation", [{"locale": "en", "strength": 2}, Collation("en", strength=2)], ids=["dict", "pymongo"]
)
def test_collation_forms_are_accepted(items: Database, collation: object) -> None:
    items.items.create_index([("name", 1)], name="name_ci", collation={"locale": "en", "strength": 2})
    e = explain(items.items, {"name": "ant"}, collation=collation)
    s = e.summary()
    assert s["index"] == "name_ci"
    assert s["nReturned"] == sum(1 for d in DOCS if d["name"].lower() == "ant")


def test_hidden_index_is_not_used(items: Database) -> None:
    items.command("collMod", "items", index={"name": "qty_1", "hidden": True})
    items.command("collMod", "items", index={"name": "qty_sku", "hidden": True})
    assert explain(items.items, {"qty": 3}).summary()["plan"] == "COLLSCAN"


def test_unknown_hint_names_the_indexes(items: Database) -> None:
    with pytest.raises(ExplainError) as raised:
        explain(items.items, {"qty": 3}, hint="no_such_index")
    assert isinstance(raised.value, WorkbookError)
    assert "qty_sku" in (raised.value.fix or "")


def test_bad_sort_form_is_a_workbook_error(items: Database) -> None:
    with pytest.raises(ExplainError, match="pairs") as raised:
        explain(items.items, {}, sort=[1, 2])
    assert raised.value.fix


def test_aggregate_match_sort_limit(items: Database) -> None:
    e = explain_aggregate(items.items, [{"$match": {"qty": 5}}, {"$sort": {"sku": 1}}, {"$limit": 2}])
    s = e.summary()
    assert s["nReturned"] == 2
    assert s["index"] in ("qty_1", "qty_sku")


def test_aggregate_lookup(items: Database) -> None:
    items.orders.insert_many([{"_id": n, "itemId": n * 7} for n in range(5)])
    e = explain_aggregate(
        items.orders,
        [
            {"$match": {"_id": {"$lt": 3}}},
            {"$lookup": {"from": "items", "localField": "itemId", "foreignField": "_id", "as": "item"}},
        ],
    )
    s = e.summary()
    assert s["nReturned"] == 3
    assert [lk["from"] for lk in s["lookups"]] == ["items"]
    if e.modelled:
        assert s["lookups"][0]["indexesUsed"] == ["_id_"]


def test_engine_label_in_text_and_html(items: Database) -> None:
    e = explain(items.items, {"qty": 3})
    info = workbook.engine_info(items)
    assert e.engine == info.label
    assert e.modelled == (info.kind == "offline")
    label = MODELLED_LABEL if e.modelled else f"reported by MongoDB {info.server_version}"
    assert label in repr(e) and label in e._repr_html_()
    assert "<svg" in e._repr_html_()


def test_figure_has_one_box_per_stage_with_counts(items: Database) -> None:
    e = explain(items.items, {"qty": 3}, sort=[("sku", 1)], hint="qty_1")
    figure = draw_plan(e)
    boxes = [s for s in figure.layout.shapes if s.type == "rect"]
    edges = [s for s in figure.layout.shapes if s.type == "line"]
    layout = plan_layout(e)
    assert len(boxes) == len(layout.stages) == len(e.summary()["stages"])
    assert len(edges) == len(boxes) - 1
    texts = [a.text for a in figure.layout.annotations]
    returned = e.summary()["nReturned"]
    assert any("<b>IXSCAN</b>" in t and "qty_1" in t and "keysExamined" in t for t in texts)
    assert any(f"nReturned {returned}" in t for t in texts)
    assert e.engine in figure.layout.title.text
    assert ("modelled" in figure.layout.title.text) == e.modelled
    # leaves at the bottom: the scan is drawn lowest
    scan = next(s for s in layout.stages if s.name == "IXSCAN")
    assert scan.level == max(s.level for s in layout.stages)


# Offline only: what the planner model itself does.


def test_offline_explain_is_modelled_on_the_actual_data(offline_db: Database) -> None:
    offline_db.items.insert_many([dict(d) for d in DOCS])
    offline_db.items.create_index([("tags", 1)], name="tags_1")
    e = explain(offline_db.items, {"tags": "blue"})
    s = e.summary()
    assert e.modelled and e.original is not None and e.original["modelledBy"] == e["modelledBy"]
    assert s["multikey"] and s["index"] == "tags_1"
    assert s["nReturned"] == sum(1 for d in DOCS if "blue" in d["tags"])
    assert e["modelledBy"] and "modelled by the workbench" in e._repr_html_()


@pytest.mark.parametrize(
    "query",
    [{"qty": {"$bitsAnySet": 6}}, {"qty": {"$bitsAllSet": 1}}, {"$where": "true"}],
    ids=["bitsAnySet", "bitsAllSet", "where"],
)
def test_unsupported_operators_say_how_to_fix(offline_db: Database, query: dict) -> None:
    offline_db.items.insert_many([dict(d) for d in DOCS[:5]])
    with pytest.raises(ExplainError) as raised:
        explain(offline_db.items, query)
    error = raised.value
    assert isinstance(error, WorkbookError) and isinstance(error, ValueError)
    assert "supports" in error.message
    assert "MONGODB_URI" in (error.fix or "")


def test_unsupported_pipeline_stage_is_a_workbook_error(offline_db: Database) -> None:
    offline_db.items.insert_many([dict(d) for d in DOCS[:5]])
    lookup_with_pipeline = {"$lookup": {"from": "items", "pipeline": [{"$match": {"qty": 1}}], "as": "same"}}
    with pytest.raises(ExplainError, match="does not cover") as raised:
        explain_aggregate(offline_db.items, [lookup_with_pipeline])
    assert "MONGODB_URI" in (raised.value.fix or "")


def test_stages_after_the_find_layer_are_drawn_as_listed(offline_db: Database) -> None:
    offline_db.items.insert_many([dict(d) for d in DOCS])
    e = explain_aggregate(offline_db.items, [{"$match": {"qty": {"$lt": 3}}}, {"$group": {"_id": "$qty"}}])
    texts = [a.text for a in draw_plan(e).layout.annotations]
    assert "<b>$group</b>" in texts[0] and "not counted by the model" in texts[0]
    assert "&quot;" not in texts[0] and '"$qty"' in texts[0]


def test_workbook_explain_is_the_function_when_used_first() -> None:
    """``import workbook; workbook.explain(...)``, as a notebook does it."""
    code = "import workbook, workbook.connection; print(callable(workbook.explain), type(workbook.explain).__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "function"]


def test_exported_functions_stay_functions_after_their_modules_are_imported() -> None:
    code = (
        "import workbook.explaining, workbook.loading, workbook.measure, workbook; "
        "print(type(workbook.explain).__name__, type(workbook.load).__name__, type(workbook.quiz).__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["function", "function", "module"]


# Pure: what explain does with a server's output.

SBE_EXPLAIN = {
    "explainVersion": "2",
    "queryPlanner": {
        "winningPlan": {
            "queryPlan": {
                "stage": "FETCH",
                "planNodeId": 2,
                "inputStage": {"stage": "IXSCAN", "planNodeId": 1, "indexName": "qty_1", "keyPattern": {"qty": 1}},
            },
            "slotBasedPlan": {"slots": "...", "stages": "[2] nlj ..."},
        },
        "rejectedPlans": [{"queryPlan": {"stage": "COLLSCAN"}, "slotBasedPlan": {"stages": "[1] scan"}}],
    },
    "executionStats": {
        "nReturned": 6,
        "totalKeysExamined": 6,
        "totalDocsExamined": 6,
        "executionStages": {"stage": "nlj", "opens": 1, "innerStage": {"stage": "seek"}},
    },
    "serverInfo": {"version": "7.0.14"},
    "$clusterTime": {"clusterTime": 1},
    "operationTime": 1,
    "ok": 1.0,
}


def test_sbe_query_plan_nesting_is_lifted() -> None:
    out = normalise_server_explain(SBE_EXPLAIN)
    assert out["queryPlanner"]["winningPlan"]["stage"] == "FETCH"
    assert out["queryPlanner"]["rejectedPlans"] == [{"stage": "COLLSCAN"}]
    assert out["queryPlanner"]["slotBasedPlans"]["winningPlan"]["stages"].startswith("[2]")
    assert "$clusterTime" not in out and "operationTime" not in out
    assert out["executionStats"] == SBE_EXPLAIN["executionStats"]
    assert "queryPlan" in SBE_EXPLAIN["queryPlanner"]["winningPlan"]  # the original is not changed


def test_sbe_plan_is_drawn_from_the_query_plan_with_totals() -> None:
    e = Explain(normalise_server_explain(SBE_EXPLAIN), engine="MongoDB 7.0.14", modelled=False, original=SBE_EXPLAIN)
    figure = draw_plan(e)
    texts = [a.text for a in figure.layout.annotations]
    assert len([s for s in figure.layout.shapes if s.type == "rect"]) == 2
    assert "nReturned 6 (total)" in texts[0]
    assert "reported by" in figure.layout.title.text and "MongoDB 7.0.14" in figure.layout.title.text
    assert summarize(e)["index"] == "qty_1"


class _ServerStub:
    """Just enough of a pymongo Collection on a MongoDB server for explain(): records the command."""

    def __init__(self, reply: dict | Exception) -> None:
        self.name = "items"
        self.full_name = "workbench_pytest.items"
        self.database = self
        self.reply = reply
        self.sent: list = []

    def command(self, name: str, body: dict, **options: object) -> dict:
        self.sent.append((name, body, options))
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply

    def list_indexes(self) -> list[dict]:
        return [{"name": "_id_", "key": {"_id": 1}}, {"name": "qty_1", "key": {"qty": 1}}]


@pytest.fixture
def on_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make explain() believe it talks to MongoDB 7.0.14."""
    info = workbook.EngineInfo("mongodb", "7.0.14", "standalone", False, "mongodb://localhost:27017")
    monkeypatch.setattr(sys.modules["workbook.explaining.view"], "engine_info", lambda db: info)


def test_server_command_is_built_from_find_arguments(on_server: None) -> None:
    stub = _ServerStub(SBE_EXPLAIN)
    e = explain(
        stub,  # type: ignore[arg-type]
        {"qty": 3},
        projection=["qty"],
        sort=[("qty", -1)],
        limit=-4,
        hint=[("qty", 1)],
        collation=Collation("en", strength=2),
    )
    ((name, body, options),) = stub.sent
    assert (name, options) == ("explain", {"verbosity": "executionStats"})
    assert body == {
        "find": "items",
        "filter": {"qty": 3},
        "projection": {"qty": 1},
        "sort": {"qty": -1},
        "limit": 4,
        "hint": {"qty": 1},
        "collation": {"locale": "en", "strength": 2},
    }
    assert not e.modelled and e.original == SBE_EXPLAIN
    assert e["queryPlanner"]["winningPlan"]["stage"] == "FETCH"
    assert "reported by MongoDB 7.0.14" in repr(e)


def test_server_aggregate_command(on_server: None) -> None:
    stub = _ServerStub(SBE_EXPLAIN)
    explain_aggregate(stub, [{"$match": {"qty": 3}}])  # type: ignore[arg-type]
    ((_, body, _),) = stub.sent
    assert body == {"aggregate": "items", "pipeline": [{"$match": {"qty": 3}}], "cursor": {}}


def test_server_hint_error_becomes_a_workbook_error(on_server: None) -> None:
    from pymongo.errors import OperationFailure

    failure = OperationFailure("hint provided does not correspond to an existing index", 2, {"errmsg": "hint provided"})
    with pytest.raises(ExplainError) as raised:
        explain(_ServerStub(failure), {"qty": 3}, hint="nope")  # type: ignore[arg-type]
    assert "qty_1" in (raised.value.fix or "")


@pytest.mark.parametrize(
    ("call", "names"),
    [
        (lambda db: explain(None, {"qty": 1}), "pymongo collection"),  # type: ignore[arg-type]
        (lambda db: explain(db.items, {"qty": 1}, limit="x"), "whole number"),
        (lambda db: explain(db.items, "qty"), "dict"),  # type: ignore[arg-type]
        (lambda db: explain_aggregate(db.items, {"$match": {}}), "list of stage dicts"),  # type: ignore[arg-type]
    ],
    ids=["no-collection", "limit-not-a-number", "filter-not-a-dict", "pipeline-not-a-list"],
)
def test_wrong_argument_types_are_workbook_errors(offline_db: Database, call: Any, names: str) -> None:
    with pytest.raises(ExplainError, match=names) as raised:
        call(offline_db)
    assert raised.value.fix


def test_or_plans_are_drawn_with_one_box_per_branch(offline_db: Database) -> None:
    offline_db.items.insert_many([dict(d) for d in DOCS])
    offline_db.items.create_index([("qty", ASCENDING)], name="qty_1")
    offline_db.items.create_index([("sku", ASCENDING)], name="sku_1")
    e = explain(offline_db.items, {"$or": [{"qty": 3}, {"sku": "s001"}]})
    layout = plan_layout(e)
    assert [s.name for s in layout.stages] == ["FETCH", "OR", "IXSCAN", "IXSCAN"]
    assert layout.slots == 2 and e.summary()["indexes"] == ["qty_1", "sku_1"]

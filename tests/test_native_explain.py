"""Native explain on the offline default: plain pymongo gets MongoDB's explain shape from the model.

``cursor.explain()``, ``db.command("explain", ..., verbosity=...)`` and ``aggregate`` with
``explain: true`` all go over the wire to the offline server, which answers with the planner model.
Shapes follow https://www.mongodb.com/docs/manual/reference/explain-results/.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from pymongo import ASCENDING
from pymongo.database import Database
from pymongo.errors import OperationFailure

import workbook
from workbook.errors import UnsupportedByModelError
from workbook.planner import MODELLED_FIELD

DOCS = [{"_id": i, "a": i % 10, "b": i % 7, "tags": ["x", "y"][: i % 3]} for i in range(80)]

# Top-level fields of MongoDB's explain output (8.0), none of which the model's label may reuse.
MONGODB_FIELDS = {
    "explainVersion",
    "queryPlanner",
    "executionStats",
    "command",
    "serverInfo",
    "serverParameters",
    "stages",
    "ok",
    "queryShapeHash",
}


@pytest.fixture
def db(monkeypatch: pytest.MonkeyPatch) -> Iterator[Database]:
    """80 documents on the offline default, an index on a and one on b."""
    monkeypatch.delenv("MONGODB_URI", raising=False)
    database = workbook.connect(database=f"t{uuid.uuid4().hex[:10]}", quiet=True)
    database.items.insert_many([dict(d) for d in DOCS])
    database.items.create_index([("a", ASCENDING)], name="a_1")
    database.items.create_index([("b", ASCENDING)], name="b_1")
    yield database
    database.client.drop_database(database.name)


def test_cursor_explain_has_mongodb_shape_and_the_real_counts(db: Database) -> None:
    query = {"a": 3, "b": {"$gte": 2}}
    e = db.items.find(query).explain()
    planner = e["queryPlanner"]
    assert planner["namespace"] == f"{db.name}.items"
    assert planner["winningPlan"]["stage"] == "FETCH" and planner["winningPlan"]["inputStage"]["stage"] == "IXSCAN"
    assert [p["inputStage"]["indexName"] for p in planner["rejectedPlans"]] != []
    stats = e["executionStats"]
    assert stats["nReturned"] == len(list(db.items.find(query)))
    assert stats["totalDocsExamined"] >= stats["nReturned"] > 0
    # pymongo's Cursor.explain() sends no verbosity: MongoDB's default is allPlansExecution
    raced = stats["allPlansExecution"]
    assert len(raced) == 1 + len(planner["rejectedPlans"])
    assert all({"nReturned", "totalKeysExamined", "totalDocsExamined", "executionStages"} <= set(p) for p in raced)
    assert e[MODELLED_FIELD] and MODELLED_FIELD not in MONGODB_FIELDS
    assert e["ok"] == 1.0 and e["command"]["find"] == "items"


def test_collection_find_explain_with_sort_limit_projection(db: Database) -> None:
    e = db.items.find({"a": {"$gt": 6}}, {"a": 1, "_id": 0}).sort("a", -1).limit(4).explain()
    plan = e["queryPlanner"]["winningPlan"]
    assert plan["stage"] == "LIMIT" and plan["limitAmount"] == 4
    assert plan["inputStage"]["stage"] == "PROJECTION_COVERED"
    assert plan["inputStage"]["inputStage"]["direction"] == "backward"
    assert e["executionStats"]["nReturned"] == 4 and e["executionStats"]["totalDocsExamined"] == 0


@pytest.mark.parametrize(
    ("verbosity", "has_stats", "has_all_plans"),
    [("queryPlanner", False, False), ("executionStats", True, False), ("allPlansExecution", True, True)],
)
def test_explain_command_verbosity(db: Database, verbosity: str, has_stats: bool, has_all_plans: bool) -> None:
    e = db.command("explain", {"find": "items", "filter": {"a": 3, "b": 2}}, verbosity=verbosity)
    assert "winningPlan" in e["queryPlanner"] and "rejectedPlans" in e["queryPlanner"]
    assert ("executionStats" in e) == has_stats
    assert ("allPlansExecution" in e.get("executionStats", {})) == has_all_plans


def test_unknown_verbosity_is_refused_with_the_choices(db: Database) -> None:
    with pytest.raises(OperationFailure, match="allPlansExecution"):
        db.command("explain", {"find": "items", "filter": {}}, verbosity="everything")


def test_aggregate_with_explain_true(db: Database) -> None:
    pipeline = [{"$match": {"a": 2}}, {"$lookup": {"from": "items", "localField": "b", "foreignField": "a", "as": "m"}}]
    e = db.command("aggregate", "items", pipeline=pipeline, explain=True)
    assert e[MODELLED_FIELD]
    cursor, lookup = e["stages"]
    assert cursor["$cursor"]["queryPlanner"]["winningPlan"]["inputStage"]["indexName"] == "a_1"
    assert "executionStats" not in cursor["$cursor"]  # aggregate's explain flag answers at queryPlanner
    assert lookup["$lookup"]["from"] == "items" and "totalDocsExamined" not in lookup
    full = db.command("explain", {"aggregate": "items", "pipeline": pipeline, "cursor": {}}, verbosity="executionStats")
    assert full["stages"][1]["nReturned"] == db.items.count_documents({"a": 2})
    assert full["stages"][1]["indexesUsed"] == ["a_1"]


def test_workbook_explain_is_a_view_of_the_native_answer(db: Database) -> None:
    query = {"a": {"$in": [1, 4]}, "b": {"$lt": 5}}
    native = db.command("explain", {"find": "items", "filter": query}, verbosity="executionStats")
    view = workbook.explain(db.items, query)
    assert view.modelled and view.original is not None
    assert view["queryPlanner"] == native["queryPlanner"]
    for figure in ("nReturned", "totalKeysExamined", "totalDocsExamined", "executionStages"):
        assert view["executionStats"][figure] == native["executionStats"][figure]
    assert view.summary()["nReturned"] == len(list(db.items.find(query)))


def test_a_query_the_model_does_not_cover_is_refused_over_the_wire(db: Database) -> None:
    with pytest.raises(OperationFailure) as raised:
        db.items.find({"$where": "true"}).explain()
    assert raised.value.code == 115 and "does not cover the top-level operator $where" in str(raised.value)
    with pytest.raises(UnsupportedByModelError) as view:
        workbook.explain(db.items, {"$where": "true"})
    assert "MONGODB_URI" in (view.value.fix or "")


def test_a_hint_naming_no_index_is_mongodbs_error(db: Database) -> None:
    with pytest.raises(OperationFailure) as raised:
        db.items.find({"a": 1}).hint("nope").explain()
    assert raised.value.code == 2 and "hint provided does not correspond to an existing index" in str(raised.value)


def test_explain_of_a_missing_collection_returns_nothing(db: Database) -> None:
    e = db.missing.find({"a": 1}).explain()
    assert e["executionStats"]["nReturned"] == 0 and e["queryPlanner"]["winningPlan"]["stage"] == "COLLSCAN"


def test_find_options_the_model_does_not_follow_are_refused(db: Database) -> None:
    with pytest.raises(OperationFailure, match="does not cover the find option"):
        db.items.find({"a": 1}).hint("a_1").min([("a", 0)]).explain()
    with pytest.raises(OperationFailure, match="returnKey"):
        db.command("explain", {"find": "items", "filter": {}, "returnKey": True})


def test_explain_of_a_delete_counts_without_deleting(db: Database) -> None:
    e = db.command("explain", {"delete": "items", "deletes": [{"q": {"a": 3}, "limit": 0}]}, verbosity="executionStats")
    plan = e["queryPlanner"]["winningPlan"]
    assert plan["stage"] == "DELETE" and plan["inputStage"]["inputStage"]["indexName"] == "a_1"
    stages = e["executionStats"]["executionStages"]
    assert stages["nWouldDelete"] == db.items.count_documents({"a": 3}) == 8
    assert e["executionStats"]["nReturned"] == 0 and db.items.count_documents({}) == 80


def test_explain_of_an_update_says_what_it_would_modify(db: Database) -> None:
    statement = {"q": {"a": 3}, "u": {"$set": {"b": 2}}, "multi": True}
    e = db.command("explain", {"update": "items", "updates": [statement]}, verbosity="executionStats")
    stages = e["executionStats"]["executionStages"]
    assert e["queryPlanner"]["winningPlan"]["stage"] == "UPDATE"
    assert stages["nMatched"] == db.items.count_documents({"a": 3})
    assert stages["nWouldModify"] == db.items.count_documents({"a": 3, "b": {"$ne": 2}}) > 0
    single = db.command(
        "explain",
        {"update": "items", "updates": [{"q": {"a": 3}, "u": {"$inc": {"b": 0}}}]},
        verbosity="executionStats",
    )
    assert (
        single["executionStats"]["executionStages"]["nMatched"],
        single["executionStats"]["executionStages"]["nWouldModify"],
    ) == (1, 0)
    assert db.items.count_documents({"b": 2, "a": 3}) < 8  # nothing was written


def test_explain_of_several_write_statements_is_refused(db: Database) -> None:
    with pytest.raises(OperationFailure, match="exactly one"):
        db.command("explain", {"delete": "items", "deletes": [{"q": {}, "limit": 1}, {"q": {}, "limit": 1}]})


@pytest.mark.parametrize(
    ("document", "update", "modifies"),
    [
        ({"_id": 1, "a": 1}, {"$set": {"a": 1}}, False),
        ({"_id": 1, "a": 1}, {"$set": {"a": 1.0}}, True),  # another BSON type is a change
        ({"_id": 1, "a": 1}, {"$inc": {"a": 0}}, False),
        ({"_id": 1, "a": 1}, {"$unset": {"b": ""}}, False),
        ({"_id": 1, "t": [1, 2]}, {"$addToSet": {"t": 2}}, False),
        ({"_id": 1, "t": [1, 2]}, {"$addToSet": {"t": {"$each": [2, 3]}}}, True),
        ({"_id": 1, "a": 5}, {"$max": {"a": 3}}, False),
        ({"_id": 1, "a": {"b": 1}}, {"$set": {"a.b": 2}}, True),
        ({"_id": 1, "a": 1}, {"a": 1}, False),  # a replacement that changes nothing
        ({"_id": 1, "a": 1}, {"$push": {"t": 1}}, True),
    ],
)
def test_would_modify(document: dict, update: dict, modifies: bool) -> None:
    from workbook.planner.writes import would_modify

    assert would_modify(document, update) is modifies

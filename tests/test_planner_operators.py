"""The operators real applications write: $or (OR / index-union plans), $elemMatch, $in over arrays,
$exists, $ne/$nin, $all, $size, $type, and the ``sortKey`` $meta projection.

Plan shapes follow MongoDB's query planner (query_planner.cpp, planner_access.cpp buildIndexedOr,
index_bounds_builder.cpp); every count the model reports is checked against what the offline
engine's own ``find()`` returns for the same filter (an independent matcher).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from pymongo import ASCENDING
from pymongo.database import Database

import workbook
from workbook.errors import ExplainError
from workbook.planner import explain_find, summarize

ID = {"v": 2, "key": {"_id": 1}, "name": "_id_"}
DOCS = [
    {"_id": i, "a": i % 10, "b": i % 7, "c": i % 3, "tags": [f"t{i % 4}", f"t{i % 5}"], "pts": [i % 6, i % 4 + 10]}
    for i in range(120)
]


def index(*fields: str) -> dict[str, Any]:
    return {"v": 2, "key": {f: 1 for f in fields}, "name": "_".join(f"{f}_1" for f in fields)}


INDEXES = [ID, index("a"), index("b"), index("tags"), index("pts")]


def explained(filter: dict[str, Any], **query: Any) -> dict[str, Any]:
    return explain_find(DOCS, INDEXES, namespace="t.c", filter=filter, **query)


@pytest.fixture(scope="module")
def engine_db() -> Iterator[Database]:
    """The same documents and indexes on the offline default, for find() as the oracle."""
    database = workbook.connect(database=f"t{uuid.uuid4().hex[:10]}", quiet=True)
    database.c.insert_many([dict(d) for d in DOCS])
    for spec in INDEXES[1:]:
        database.c.create_index([(f, ASCENDING) for f in spec["key"]], name=spec["name"])
    yield database
    database.client.drop_database(database.name)


FILTERS = {
    "rooted-or": {"$or": [{"a": 1}, {"b": 2}]},
    "or-three-branches": {"$or": [{"a": 1}, {"b": {"$gt": 5}}, {"tags": "t3"}]},
    "contained-or": {"$or": [{"a": 1}, {"b": 2}], "c": 1},
    "or-unindexed-branch": {"$or": [{"a": 1}, {"c": 2}]},
    "elemMatch-values": {"pts": {"$elemMatch": {"$gt": 2, "$lt": 4}}},
    "in-over-arrays": {"pts": {"$in": [[1, 11], [3, 13]]}},
    "exists": {"a": {"$exists": True}},
    "ne": {"a": {"$ne": 3}},
    "nin": {"b": {"$nin": [1, 2, 3]}},
    "all": {"tags": {"$all": ["t1", "t2"]}},
    "size": {"pts": {"$size": 2}},
    "type-number": {"a": {"$type": "number"}},
    "type-string-array-elements": {"tags": {"$type": "string"}},
    "nor": {"$nor": [{"a": 1}, {"b": 2}]},
    "not-range": {"a": {"$not": {"$gt": 2, "$lt": 7}}},
    "not-in-on-arrays": {"pts": {"$not": {"$in": [1, 11]}}},
    "not-regex": {"tags": {"$not": {"$regex": "^t1"}}},
}


@pytest.mark.parametrize("name", list(FILTERS))
def test_counts_agree_with_the_engines_find(name: str, engine_db: Database) -> None:
    e = explained(FILTERS[name])
    assert e["executionStats"]["nReturned"] == engine_db.c.count_documents(FILTERS[name])
    assert e["executionStats"]["totalDocsExamined"] >= e["executionStats"]["nReturned"]


def test_rooted_or_is_an_index_union() -> None:
    e = explained(FILTERS["rooted-or"])
    plan = e["queryPlanner"]["winningPlan"]
    assert plan["stage"] == "FETCH" and plan["inputStage"]["stage"] == "OR"
    assert [s["indexName"] for s in plan["inputStage"]["inputStages"]] == ["a_1", "b_1"]
    assert e["queryPlanner"]["rejectedPlans"] == []  # the subplanner plans each branch, not the whole
    stats = e["executionStats"]["executionStages"]["inputStage"]
    overlap = sum(1 for d in DOCS if d["a"] == 1 and d["b"] == 2)
    assert (stats["dupsTested"], stats["dupsDropped"]) == (stats["nReturned"] + overlap, overlap)
    # keys: one per matching index entry; documents: each record once (the OR drops duplicates first)
    assert e["executionStats"]["totalDocsExamined"] == e["executionStats"]["nReturned"]


def test_or_with_an_unindexed_branch_scans_the_collection() -> None:
    assert summarize(explained(FILTERS["or-unindexed-branch"]))["plan"] == "COLLSCAN"


def test_contained_or_filters_the_other_predicates_above_the_union() -> None:
    plan = explained(FILTERS["contained-or"])["queryPlanner"]["winningPlan"]
    assert plan["stage"] == "FETCH" and plan["filter"] == {"c": {"$eq": 1}}
    assert plan["inputStage"]["stage"] == "OR"


def test_or_branch_needing_a_filter_fetches_inside_the_branch() -> None:
    e = explained({"$or": [{"a": 1, "c": 2}, {"b": 3}]})
    union = e["queryPlanner"]["winningPlan"]["inputStage"]
    assert union["stage"] == "OR"
    assert union["inputStages"][0]["stage"] == "FETCH" and union["inputStages"][0]["filter"] == {"c": {"$eq": 2}}
    assert e["executionStats"]["executionStages"]["alreadyHasObj"] > 0


def test_elem_match_on_values_intersects_bounds_on_one_multikey_field() -> None:
    scan = explained(FILTERS["elemMatch-values"])["queryPlanner"]["winningPlan"]["inputStage"]
    assert scan["indexBounds"] == {"pts": ["(2, 4)"]}


def test_elem_match_on_objects_uses_a_dotted_index() -> None:
    docs = [{"_id": i, "items": [{"sku": f"s{i % 5}", "qty": i % 7}, {"sku": "x", "qty": 0}]} for i in range(40)]
    e = explain_find(
        docs,
        [ID, index("items.sku", "items.qty")],
        namespace="t.c",
        filter={"items": {"$elemMatch": {"sku": "s1", "qty": {"$gte": 3}}}},
    )
    plan = e["queryPlanner"]["winningPlan"]
    assert plan["stage"] == "FETCH" and "$elemMatch" in str(plan["filter"])
    # both bounds come from one element, so they compound on the multikey index
    assert plan["inputStage"]["indexBounds"] == {"items.sku": ['["s1", "s1"]'], "items.qty": ["[3, inf.0]"]}
    expected = sum(1 for d in docs if any(it["sku"] == "s1" and it["qty"] >= 3 for it in d["items"]))
    assert e["executionStats"]["nReturned"] == expected


def test_equality_to_an_array_looks_up_its_first_element_and_itself() -> None:
    scan = explained({"pts": [1, 11]})["queryPlanner"]["winningPlan"]["inputStage"]
    assert scan["indexBounds"] == {"pts": ["[1, 1]", "[[ 1, 11 ], [ 1, 11 ]]"]}


def test_all_is_an_and_of_equalities_bounded_by_the_first() -> None:
    e = explained(FILTERS["all"])
    assert e["queryPlanner"]["parsedQuery"] == {"$and": [{"tags": {"$eq": "t1"}}, {"tags": {"$eq": "t2"}}]}
    assert e["queryPlanner"]["winningPlan"]["inputStage"]["indexBounds"] == {"tags": ['["t1", "t1"]']}


def test_not_complements_the_bounds_and_fetches() -> None:
    plan = explained({"a": {"$not": {"$gt": 5}}})["queryPlanner"]["winningPlan"]
    assert plan["stage"] == "FETCH" and plan["filter"] == {"a": {"$not": {"$gt": 5}}}
    assert plan["inputStage"]["indexBounds"] == {"a": ["[MinKey, 5]", "(inf.0, MaxKey]"]}
    assert summarize(explained({"tags": {"$not": {"$regex": "^t1"}}}))["plan"] == "COLLSCAN"


def test_size_cannot_use_an_index() -> None:
    assert summarize(explained(FILTERS["size"]))["plan"] == "COLLSCAN"


def test_type_uses_the_types_bracket() -> None:
    scan = explained({"a": {"$type": "number"}})["queryPlanner"]["winningPlan"]["inputStage"]
    assert scan["indexBounds"] == {"a": ["[nan.0, inf.0]"]}


def test_sort_key_meta_projection_returns_the_sort_values(engine_db: Database) -> None:
    e = explained({"a": {"$lt": 2}}, sort={"b": -1, "a": 1}, projection={"k": {"$meta": "sortKey"}, "a": 1}, limit=3)
    plan = e["queryPlanner"]["winningPlan"]
    assert "PROJECTION_DEFAULT" in summarize(e)["stages"]
    assert plan["stage"] == "PROJECTION_DEFAULT" or plan["inputStage"]["stage"] == "PROJECTION_DEFAULT"
    with pytest.raises(ExplainError, match="needs a sort"):
        explained({}, projection={"k": {"$meta": "sortKey"}})


def test_sort_key_values_are_what_the_sort_used() -> None:
    from workbook.planner.plans import CollectionModel, choose_and_run
    from workbook.planner.query import FindArgs, make_query

    query = make_query(FindArgs({"a": {"$lt": 2}}, {"k": {"$meta": "sortKey"}, "a": 1}, {"pts": -1, "_id": 1}, 4))
    outcome = choose_and_run(CollectionModel(DOCS, INDEXES), query)
    keys = [m.doc["k"] for m in outcome.results if m.doc is not None]
    assert keys == sorted(keys, key=lambda k: (-k[0], k[1]))
    assert all(k[0] == max(DOCS[k[1]]["pts"]) for k in keys)  # descending: an array sorts by its largest


# --- sorted unions and exploded scans: SORT_MERGE instead of a blocking SORT ---------------------

MERGE_DOCS = [{"_id": i, "a": i % 10, "b": i % 7, "c": (i * 37) % 101} for i in range(200)]
MERGE_INDEXES = [ID, index("a", "c"), index("b", "c")]


def _run(filter: dict[str, Any], sort: dict[str, int], limit: int | None = None) -> tuple[dict[str, Any], list[Any]]:
    from workbook.planner.plans import CollectionModel, choose_and_run
    from workbook.planner.query import FindArgs, make_query

    e = explain_find(MERGE_DOCS, MERGE_INDEXES, namespace="t.c", filter=filter, sort=sort, limit=limit)
    outcome = choose_and_run(
        CollectionModel(MERGE_DOCS, MERGE_INDEXES), make_query(FindArgs(filter, sort=sort, limit=limit))
    )
    return e, [m.doc for m in outcome.results]


@pytest.mark.parametrize("direction", [1, -1])
def test_in_before_the_sort_field_is_exploded_into_merged_scans(direction: int) -> None:
    """QueryPlannerAnalysis::explodeForSort: one IXSCAN per $in value, merged on c."""
    e, docs = _run({"a": {"$in": [1, 2, 3]}}, {"c": direction})
    s = summarize(e)
    assert s["stages"] == ["FETCH", "SORT_MERGE", "IXSCAN", "IXSCAN", "IXSCAN"] and not s["inMemorySort"]
    expected = sorted((d for d in MERGE_DOCS if d["a"] in (1, 2, 3)), key=lambda d: d["c"] * direction)
    assert [d["c"] for d in docs] == [d["c"] for d in expected]


def test_or_whose_branches_each_provide_the_sort_is_merged() -> None:
    e, docs = _run({"$or": [{"a": 1}, {"b": 2}]}, {"c": -1}, limit=5)
    plan = e["queryPlanner"]["winningPlan"]
    assert [plan["stage"], plan["inputStage"]["stage"], plan["inputStage"]["inputStage"]["stage"]] == [
        "LIMIT",
        "FETCH",
        "SORT_MERGE",
    ]
    expected = sorted((d for d in MERGE_DOCS if d["a"] == 1 or d["b"] == 2), key=lambda d: -d["c"])[:5]
    assert [d["c"] for d in docs] == [d["c"] for d in expected]  # ties may come in any order, as on MongoDB
    assert e["executionStats"]["totalDocsExamined"] == 5  # the merge stops early: no blocking sort


def test_or_whose_branches_cannot_provide_the_sort_sorts_in_memory() -> None:
    e, _ = _run({"$or": [{"a": 1}, {"b": 2}]}, {"_id": 1})
    assert summarize(e)["stages"][:3] == ["SORT", "FETCH", "OR"]

"""Aggregation semantics ported from MongoDB's jstests (mongodb/mongo, jstests/aggregation and jstests/core).

Run over pymongo against the ``db`` fixture: the offline default (mongoeco served in-process, its
aggregate's leading stages run by the planner model's plan, its explain answered by the model) and,
when ``MONGODB_URI`` is set, a real server. One section per jstest file; each names the assertions
ported. The expected answers are the jstest's own asserts (MongoDB 7.0/8.0 standalone).

Ported: 77 jstest files (70 as result tables, ``CASES``; agg_hint.js, use_query_projection.js,
split_match_and_swap_with_sort.js, lookup_query_stats.js, groupMissing.js, collation_match.js and
facet/use_cases.js as explain and result tests), 941 assertions on the offline default. 898 pass
(95.4%); 70 of the 77 files agree in every assertion (90.9%). The 43 that do not are strict
xfails naming the gap (README gap table), so they fail the suite once fixed: 33 are refusals by
name with the fix ($graphLookup, a $let or $map rebinding CURRENT), 1 the engine's refusal of
$bucketAuto's granularity, 8 are errors raised with another code than MongoDB's, and 1 is
a known wrong answer (SERVER-23229's covered $group). (The DBRef sort order and ``$type`` of a
small NumberLong after a $project, 10 more, were fixed when find's read layer began to model every
BSON type.)

Issue 19's held-out check: 10 of the 77 (is_number.js, any_element_true.js, cmp_literal.js,
indexof_array_dup.js, divide.js, dotted_and_nested_proj_are_equal.js, remove_id.js,
lookup_unknown_field.js, bucketauto/granularity_near_zero.js, facet/use_cases.js; 97 assertions)
were ported from the jstest alone and run once before any fix: 6 of 10 files and 84 of 97
assertions agreed. The 13 that did not: $divide gave a long for an
integral quotient of a long, a double where a decimal was due, a decimal with its zeros dropped,
overflowed on NumberLong(2^63-1) / 1 and divided by a decimal zero without a code (9);
$anyElementTrue answered false for a missing argument and refused a scalar with 28689 (2); an
unknown $lookup field is refused without a code (1); $bucketAuto refused buckets: NumberLong(8),
then its granularity (1). The first 11 and the NumberLong are fixed in the engine
(patches/aggregation-semantics.md); the $lookup code and the granularity are strict xfails with
README gap rows: 8 of the 10 files now pass every assertion.
Run against a real server
(``MONGODB_URI``), every case is the plain assertion.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pytest
from bson import SON, Binary, Code, DBRef, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp
from pymongo.collation import Collation
from pymongo.database import Database
from pymongo.errors import OperationFailure

# --- helpers: explain over the wire, and MongoDB's analyze_plan.js readers ------------------------


def explain(
    db: Database, name: str, pipeline: list[dict[str, Any]], verbosity: str = "queryPlanner", **options: Any
) -> dict[str, Any]:
    """``db.coll.explain(verbosity).aggregate(pipeline, options)`` as the shell sends it."""
    command = SON([("aggregate", name), ("pipeline", pipeline), ("cursor", {}), *options.items()])
    return dict(db.command("explain", command, verbosity=verbosity))


def plan_nodes(node: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every stage of a query plan tree (analyze_plan.js getPlanStages)."""
    yield node
    if isinstance(node.get("inputStage"), Mapping):
        yield from plan_nodes(node["inputStage"])
    for child in node.get("inputStages", []):
        yield from plan_nodes(child)


def query_planners(explained: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The queryPlanner sections: at the top when the pipeline was optimized away, else in $cursor."""
    if "queryPlanner" in explained:
        return [explained["queryPlanner"]]
    return [stage["$cursor"]["queryPlanner"] for stage in explained.get("stages", []) if "$cursor" in stage]


def plan_stages(explained: Mapping[str, Any], stage: str) -> list[Mapping[str, Any]]:
    """getAggPlanStages / getPlanStages: the winning plan's stages named ``stage``."""
    return [n for qp in query_planners(explained) for n in plan_nodes(qp["winningPlan"]) if n["stage"] == stage]


def has_rejected_plans(explained: Mapping[str, Any]) -> bool:
    return any(qp["rejectedPlans"] for qp in query_planners(explained))


def agg_stages(explained: Mapping[str, Any], name: str) -> list[Mapping[str, Any]]:
    """getAggPlanStages for a pipeline stage ($lookup, $group...): the entries of ``stages`` named so."""
    return [stage for stage in explained.get("stages", []) if name in stage]


def is_query_plan(explained: Mapping[str, Any]) -> bool:
    """isQueryPlan: the whole pipeline was absorbed by the query layer (no ``stages``)."""
    return "queryPlanner" in explained and "stages" not in explained


def without_order(documents: Sequence[Any]) -> list[str]:
    """assertArrayEq / resultsEq: the same documents in any order."""
    return sorted(repr(sorted(d.items()) if isinstance(d, dict) else d) for d in documents)


# --- jstests/core/agg_hint.js -------------------------------------------------------------------
# Ported: every confirmAggUsesIndex on the collection (hint by name; no hint / {x: 1} / {_id: 1} for
# {$match: {x: 3}}; the blocking-sort and covered-projection choices overridden by a hint). The view,
# find-on-view and count-on-view parts are left out (views are their own module's).


def agg_index(db: Database, pipeline: list[dict[str, Any]], hint: Any = None) -> dict[str, Any]:
    explained = explain(db, "test", pipeline, **({"hint": hint} if hint is not None else {}))
    (ixscan,) = plan_stages(explained, "IXSCAN")
    return dict(ixscan["keyPattern"])


def test_agg_hint_by_name(db: Database) -> None:
    db.test.create_index("x")
    db.test.insert_many([{"x": i} for i in range(5)])
    assert agg_index(db, [{"$match": {"x": 3}}], "x_1") == {"x": 1}


@pytest.mark.parametrize("hint, expected", [(None, {"x": 1}), ({"x": 1}, {"x": 1}), ({"_id": 1}, {"_id": 1})])
def test_agg_hint_overrides_a_better_index(db: Database, hint: Any, expected: dict[str, int]) -> None:
    db.test.create_index("x")
    db.test.insert_many([{"x": i} for i in range(5)])
    assert agg_index(db, [{"$match": {"x": 3}}], hint) == expected


@pytest.mark.parametrize("hint, expected", [(None, {"y": 1}), ({"y": 1}, {"y": 1}), ({"x": 1}, {"x": 1})])
def test_agg_hint_allows_a_blocking_sort(db: Database, hint: Any, expected: dict[str, int]) -> None:
    db.test.create_index("x")
    db.test.create_index("y")
    db.test.insert_many([{"x": i, "y": i} for i in range(5)])
    assert agg_index(db, [{"$match": {"x": {"$gte": 0}}}, {"$sort": {"y": 1}}], hint) == expected


@pytest.mark.parametrize(
    "hint, expected", [(None, {"x": 1, "y": 1}), ({"x": 1, "y": 1}, {"x": 1, "y": 1}), ({"x": 1}, {"x": 1})]
)
def test_agg_hint_allows_a_fetch(db: Database, hint: Any, expected: dict[str, int]) -> None:
    db.test.create_index("x")
    db.test.create_index([("x", 1), ("y", 1)])
    db.test.insert_many([{"x": i, "y": i} for i in range(5)])
    assert agg_index(db, [{"$match": {"x": {"$gte": 0}}}, {"$project": {"x": 1, "y": 1, "_id": 0}}], hint) == expected


def test_agg_hint_from_pymongo_changes_the_results(db: Database) -> None:
    """pymongo's ``aggregate(pipeline, hint=...)``: a hinted sparse index returns what it holds (as find does)."""
    db.test.insert_many([{"_id": 1, "a": 1}, {"_id": 2}, {"_id": 3, "a": 3}])
    db.test.create_index("a", sparse=True)
    assert [d["_id"] for d in db.test.aggregate([{"$match": {}}, {"$sort": {"_id": 1}}], hint="a_1")] == [1, 3]
    assert [d["_id"] for d in db.test.aggregate([{"$sort": {"_id": 1}}])] == [1, 2, 3]
    counted = list(db.test.aggregate([{"$group": {"_id": None, "n": {"$sum": 1}}}], hint={"a": 1}))
    assert counted == [{"_id": None, "n": 2}]


# --- jstests/aggregation/use_query_projection.js --------------------------------------------------
# Ported: every assertQueryCoversProjection / assertQueryDoesNotCoverProjection (IXSCAN without FETCH,
# no rejected plans; the hinted ones; the multikey index that prevents covering).


def covers(db: Database, pipeline: list[dict[str, Any]], **options: Any) -> bool:
    explained = explain(db, "use_query_projection", pipeline, **options)
    assert not has_rejected_plans(explained), explained
    return bool(plan_stages(explained, "IXSCAN")) and not plan_stages(explained, "FETCH")


def test_use_query_projection(db: Database) -> None:
    coll = db.use_query_projection
    coll.insert_many([{"_id": i, "x": "string", "a": -i, "y": i % 2} for i in range(100)])
    coll.create_index([("x", 1), ("a", -1), ("_id", 1)])
    assert covers(db, [{"$match": {"x": "string"}}, {"$project": {"_id": 1, "x": 1}}])
    assert covers(db, [{"$match": {"x": "string"}}, {"$project": {"_id": 0, "x": 1}}])
    assert covers(db, [{"$match": {"x": "string"}}, {"$project": {"_id": 0, "x": 1, "a": 1}}])
    assert covers(db, [{"$match": {"x": "string"}}, {"$project": {"_id": 1, "x": 1, "a": 1}}])
    hint = {"x": 1, "a": -1, "_id": 1}
    assert covers(db, [{"$match": {"_id": 0, "x": "string"}}, {"$project": {"_id": 1, "x": 1, "a": 1}}], hint=hint)
    assert not covers(db, [{"$match": {"x": "string"}}, {"$project": {"notThere": 1}}])
    coll.create_index("x")
    sorted_pipeline: list[dict[str, Any]] = [
        {"$match": {"_id": 0, "x": "string"}},
        {"$sort": {"x": 1, "a": 1}},
        {"$project": {"_id": 1, "x": 1, "a": 1}},
    ]
    assert covers(db, sorted_pipeline, hint=hint)
    coll.drop_index("x_1")
    coll.insert_one({"x": ["an", "array!"]})
    assert not covers(db, [{"$match": {"x": "string"}}, {"$project": {"_id": 1, "x": 1}}])
    assert not covers(db, [{"$match": {"x": "string"}}, {"$project": {"_id": 1, "x": 1, "a": 1}}])


# --- jstests/aggregation/split_match_and_swap_with_sort.js ----------------------------------------
# Ported: all three blocks (the results, and the COLLSCAN filter {a: {$not: {$eq: 2}}} in explain once
# the $match, or its non-$expr part, moved ahead of the $sort; the one-branch $or eliminated first).

SWAP_PIPELINES = [
    [{"$sort": {"b": 1}}, {"$match": {"a": {"$ne": 2}}}],
    [{"$sort": {"b": 1}}, {"$match": {"$and": [{"a": {"$ne": 2}}, {"$expr": {"$ne": ["$a", "$b"]}}]}}],
    [{"$sort": {"b": 1}}, {"$match": {"$or": [{"$and": [{"a": {"$ne": 2}}, {"$expr": {"$ne": ["$a", "$b"]}}]}]}}],
]


@pytest.mark.parametrize("pipeline", SWAP_PIPELINES, ids=["match", "match with $expr", "one-branch $or"])
def test_split_match_and_swap_with_sort(db: Database, pipeline: list[dict[str, Any]]) -> None:
    db.test.insert_many([{"_id": 1, "a": 1, "b": 3}, {"_id": 2, "a": 2, "b": 2}, {"_id": 3, "a": 3, "b": 1}])
    assert list(db.test.aggregate(pipeline)) == [{"_id": 3, "a": 3, "b": 1}, {"_id": 1, "a": 1, "b": 3}]
    (collscan,) = plan_stages(explain(db, "test", pipeline), "COLLSCAN")
    assert collscan["filter"] == {"a": {"$not": {"$eq": 2}}}


# --- jstests/aggregation/sources/lookup/lookup_query_stats.js -------------------------------------
# Ported (classic engine branch: the $lookup stage in ``stages``): the results with and without the
# $unwind for the three data sets; ``unwinding`` present exactly when the $unwind follows; at
# executionStats totalDocsExamined, totalKeysExamined, collectionScans and indexesUsed with no index,
# with {foreignField: 1}, and with the index under {locale: "fr"} (DynamicIndexedLoopJoin); none of
# them at queryPlanner. (serverStatus scannedObjects and the SBE/HashJoin branches: not modelled.)

CITIES = ["New York", "Sydney", "Dublin", "London", "Palo Alto", "San Francisco"]


def lookup_pipeline(unwind: bool) -> list[dict[str, Any]]:
    lookup = {
        "$lookup": {"from": "foreign", "localField": "localField", "foreignField": "foreignField", "as": "output"}
    }
    return (
        [lookup, {"$unwind": {"path": "$output"}}, {"$sort": {"localField": 1}}]
        if unwind
        else [lookup, {"$sort": {"localField": 1}}]
    )


def fill_lookup(db: Database, kind: str) -> None:
    def value(i: int) -> Any:
        return i if kind == "compatible" or (kind == "mixed" and i % 2 == 0) else CITIES[i % len(CITIES)]

    db.foreign.insert_many([{"_id": i, "foreignField": value(i)} for i in range(10)])
    db.local.insert_many([{"_id": i, "localField": value(i)} for i in range(3)])


LOOKUP_RESULTS: dict[str, list[tuple[int, Any, list[int]]]] = {
    "compatible": [(0, 0, [0]), (1, 1, [1]), (2, 2, [2])],
    "mixed": [(0, 0, [0]), (2, 2, [2]), (1, "Sydney", [1, 7])],
    "incompatible": [(2, "Dublin", [2, 8]), (0, "New York", [0, 6]), (1, "Sydney", [1, 7])],
}
# (foreignMatchIndex with the index; localNoIndex, localWithIndex, foreignMatchIndex under "fr")
LOOKUP_COUNTS = {"compatible": (3, 0, 3, 3), "mixed": (4, 1, 2, 2), "incompatible": (6, 3, 0, 0)}


def expected_lookup(kind: str, unwind: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for _id, local, matches in LOOKUP_RESULTS[kind]:
        joined = [{"_id": m, "foreignField": local} for m in matches]
        if unwind:
            out.extend({"_id": _id, "localField": local, "output": j} for j in joined)
        else:
            out.append({"_id": _id, "localField": local, "output": joined})
    return out


def lookup_stage(db: Database, unwind: bool, verbosity: str, **options: Any) -> Mapping[str, Any]:
    (stage,) = agg_stages(explain(db, "local", lookup_pipeline(unwind), verbosity, **options), "$lookup")
    assert ("unwinding" in stage["$lookup"]) is unwind, stage
    if verbosity == "queryPlanner":
        assert not {"totalDocsExamined", "totalKeysExamined", "collectionScans", "indexesUsed"} & set(stage)
    return stage


def lookup_counts(stage: Mapping[str, Any]) -> tuple[int, int, int, list[str]]:
    return stage["totalDocsExamined"], stage["totalKeysExamined"], stage["collectionScans"], list(stage["indexesUsed"])


@pytest.mark.parametrize("unwind", [False, True], ids=["lookup", "lookup+unwind"])
@pytest.mark.parametrize("kind", list(LOOKUP_RESULTS))
def test_lookup_query_stats(db: Database, kind: str, unwind: bool, engine: str | None) -> None:
    fill_lookup(db, kind)
    expected = expected_lookup(kind, unwind)
    pipeline = lookup_pipeline(unwind)
    assert list(db.local.aggregate(pipeline)) == expected
    if engine is not None:  # a server may push $lookup into SBE (EQ_LOOKUP): the jstest's other branch
        assert list(db.local.aggregate(pipeline, collation=Collation("fr"))) == expected
        return
    for verbosity in ("queryPlanner", "executionStats", "allPlansExecution"):
        stage = lookup_stage(db, unwind, verbosity)
        if verbosity != "queryPlanner":
            assert lookup_counts(stage) == (3 * 10, 0, 3, [])
    matched, no_index, with_index, matched_fr = LOOKUP_COUNTS[kind]
    db.foreign.create_index("foreignField")
    assert list(db.local.aggregate(pipeline)) == expected
    assert lookup_counts(lookup_stage(db, unwind, "executionStats")) == (matched, matched, 0, ["foreignField_1"])
    fr = {"collation": {"locale": "fr"}}
    assert list(db.local.aggregate(pipeline, collation=Collation("fr"))) == expected
    stage = lookup_stage(db, unwind, "executionStats", **fr)
    used = ["foreignField_1"] if with_index else []
    assert lookup_counts(stage) == (no_index * 10 + with_index, with_index, no_index, used)
    assert matched_fr == with_index  # the jstest's foreignMatchIndex: one key per indexed lookup


# --- jstests/aggregation/sources/group/groupMissing.js (and bugs/groupMissing.js) ------------------
# Ported: every assertion; the SERVER-23229 one (the $sort on an index {a: 1, b: 1} that makes
# MongoDB's $group read covered index keys, where a missing a is null) is a known gap of the offline
# default (README), xfailed strictly; the last part's checkActualMatchesAnExpected accepts either of
# MongoDB's answers, with and without hint.


def test_group_missing_single_key(db: Database) -> None:
    coll = db.groupMissing
    coll.insert_many([{"a": None}, {}])
    assert [d["_id"] for d in coll.aggregate([{"$group": {"_id": "$a"}}])] == [None]
    coll.create_index("a")
    assert [d["_id"] for d in coll.aggregate([{"$sort": {"a": 1}}, {"$group": {"_id": "$a"}}])] == [None]


@pytest.mark.parametrize("indexed", [False, True])
def test_group_missing_one_field_object_is_null(db: Database, indexed: bool) -> None:
    coll = db.groupMissing
    coll.insert_many([{"a": None}, {}])
    if indexed:
        coll.create_index("a")
    assert list(coll.aggregate([{"$group": {"_id": {"a": "$a"}}}])) == [{"_id": {"a": None}}]


def test_group_missing_two_field_object_keeps_missing_apart(db: Database) -> None:
    coll = db.groupMissing
    coll.insert_many([{"a": None, "b": 1}, {"b": 1}, {"a": None, "b": 1}])
    expected = without_order([{"_id": {"b": 1}}, {"_id": {"a": None, "b": 1}}])
    assert without_order(list(coll.aggregate([{"$group": {"_id": {"a": "$a", "b": "$b"}}}]))) == expected
    sorted_first: list[dict[str, Any]] = [{"$sort": {"a": 1, "b": 1}}, {"$group": {"_id": {"a": "$a", "b": "$b"}}}]
    assert without_order(list(coll.aggregate(sorted_first))) == expected


def test_group_missing_covered_sort_reads_index_keys(
    db: Database, engine: str | None, request: pytest.FixtureRequest
) -> None:
    """SERVER-23229 as MongoDB 7.0/8.0 answers it: the $sort on {a: 1, b: 1} makes the $group read the
    covered index keys, where a missing a is null, so the two groups become one."""
    if engine is None:
        request.node.add_marker(
            pytest.mark.xfail(reason="the offline default groups missing apart (README gaps)", strict=True)
        )
    coll = db.groupMissing
    coll.insert_many([{"a": None, "b": 1}, {"b": 1}, {"a": None, "b": 1}])
    coll.create_index([("a", 1), ("b", 1)])
    pipeline: list[dict[str, Any]] = [{"$sort": {"a": 1, "b": 1}}, {"$group": {"_id": {"a": "$a", "b": "$b"}}}]
    assert list(coll.aggregate(pipeline)) == [{"_id": {"a": None, "b": 1}}]


def test_group_missing_projection_with_and_without_hint(db: Database) -> None:
    coll = db.groupMissing
    coll.insert_many([{"a": 1, "b": None}, {"a": None, "b": 1}, {"b": 1}, {"a": 1}])
    pipeline = [{"$match": {"a": 1}}, {"$project": {"_id": 0, "a": 1, "b": 1}}]
    collscan = [{"a": 1, "b": None}, {"a": 1}]
    assert without_order(list(coll.aggregate(pipeline))) == without_order(collscan)
    coll.create_index([("a", 1), ("b", 1)])
    possible = (without_order(collscan), without_order([{"a": 1, "b": None}, {"a": 1, "b": None}]))
    assert without_order(list(coll.aggregate(pipeline))) in possible
    assert without_order(list(coll.aggregate(pipeline, hint={"a": 1, "b": 1}))) in possible


def test_object_expressions_omit_missing_fields(db: Database) -> None:
    """The engine-level rule behind groupMissing.js: an object expression leaves a missing field out."""
    db.c.insert_many([{"_id": 1, "a": None, "b": 1}, {"_id": 2, "b": 1}])
    projected = list(db.c.aggregate([{"$project": {"x": {"a": "$a", "b": "$b", "r": "$$REMOVE"}}}]))
    assert projected == [{"_id": 1, "x": {"a": None, "b": 1}}, {"_id": 2, "x": {"b": 1}}]
    pushed = list(db.c.aggregate([{"$group": {"_id": None, "p": {"$push": {"a": "$a", "b": "$b"}}}}]))
    assert pushed == [{"_id": None, "p": [{"a": None, "b": 1}, {"b": 1}]}]
    nested = list(db.c.aggregate([{"$group": {"_id": {"x": {"a": "$a"}}}}, {"$sort": {"_id": 1}}]))
    assert nested == [{"_id": {"x": {}}}, {"_id": {"x": {"a": None}}}]


# --- jstests/aggregation/sources/match/collation_match.js -----------------------------------------
# Ported: every assertion (an explicit case-insensitive collation pushed down or not, inside $facet,
# across a split $match after $unwind; a collection default collation pushed down or not).

CASE_INSENSITIVE = Collation("en_US", strength=2)


def test_collation_match_explicit(db: Database) -> None:
    coll = db.collation_match
    coll.insert_one({"a": "a"})
    assert len(list(coll.aggregate([{"$match": {"a": "A"}}], collation=CASE_INSENSITIVE))) == 1
    assert (
        len(list(coll.aggregate([{"$project": {"b": "B"}}, {"$match": {"b": "b"}}], collation=CASE_INSENSITIVE))) == 1
    )
    faceted = list(coll.aggregate([{"$facet": {"fct": [{"$match": {"a": "A"}}]}}], collation=CASE_INSENSITIVE))
    assert len(faceted[0]["fct"]) == 1
    coll.drop()
    coll.insert_one({"a": "foo", "b": ["bar"]})
    split: list[dict[str, Any]] = [{"$limit": 1}, {"$unwind": "$b"}, {"$match": {"a": "FOO", "b": "BAR"}}]
    assert len(list(coll.aggregate(split, collation=CASE_INSENSITIVE))) == 1


def test_collation_match_inherited(db: Database) -> None:
    coll = db.create_collection("collation_match", collation=CASE_INSENSITIVE)
    coll.insert_one({"a": "a"})
    assert len(list(coll.aggregate([{"$match": {"a": "A"}}]))) == 1
    assert len(list(coll.aggregate([{"$project": {"b": "B"}}, {"$match": {"b": "b"}}]))) == 1
    explained = explain(db, "collation_match", [{"$match": {"a": "A"}}], "executionStats")
    assert explained["executionStats"]["nReturned"] == 1


# --- results-only files: one table of cases per jstest file ---------------------------------------
# Each case is one assertion of the file: the documents it inserts, the pipeline, and MongoDB's answer
# as the jstest asserts it (``count`` for itcount, ``any_order`` for assertArrayEq / resultsEq).


@dataclass(frozen=True)
class Case:
    """One ported assertion: documents, pipeline, options, and the jstest's expected answer."""

    file: str
    docs: list[Any]
    pipeline: list[dict[str, Any]]
    expected: Any
    any_order: bool = False
    count: bool = False
    collation: dict[str, Any] | None = None  # the aggregate's collation option
    create: dict[str, Any] | None = None  # createCollection options (a default collation)
    indexes: tuple[Any, ...] = ()
    hint: Any = None  # the aggregate's hint option
    foreign: tuple[dict[str, Any], ...] = ()  # documents of the collection "f" ($lookup's from)
    foreign_indexes: tuple[Any, ...] = ()
    error: int | tuple[int, ...] | None = None  # the server error code(s) the jstest accepts (assertErrorCode)
    field_order: bool = True  # False where the jstest compares with documentEq (fields in any order)
    pick: str | None = None  # compare only this field of each result (the jstest's .map(z => z.x))
    gap: str | None = None  # a known divergence of the offline default (README gap table): xfail, strict


def ordered(value: Any) -> Any:
    """A value with its documents' field order made visible, as the shell's assert.eq compares."""
    if isinstance(value, Mapping):
        return [(k, ordered(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [ordered(v) for v in value]
    if isinstance(value, Int64):
        return ("NumberLong", int(value))  # tojson tells NumberLong apart inside documents
    if isinstance(value, float) and value != value:
        return "NaN"  # the shell's assert.eq takes NaN as equal to NaN
    return value  # 1 == 1.0, as the shell's numbers compare


def run_case(db: Database, case: Case) -> Any:
    if case.create is not None:
        create: dict[str, Any] = {k: Collation(**v) if k == "collation" else v for k, v in case.create.items()}
        db.create_collection("c", **create)
    if case.docs:
        db.c.insert_many([dict(d) for d in case.docs])
    for key in case.indexes:
        db.c.create_index(key)
    if case.foreign:
        db.f.insert_many([dict(d) for d in case.foreign])
    for key in case.foreign_indexes:
        db.f.create_index(key)
    options: dict[str, Any] = {"collation": Collation(**case.collation)} if case.collation else {}
    if case.hint is not None:
        options["hint"] = case.hint
    return list(db.c.aggregate(case.pipeline, **options))


ANY_ERROR = -1
"""assert.throws: any server error."""

FIND = "the documents find() returns for the pipeline's last $match, in any order"


def check_case(db: Database, case: Case) -> None:
    if case.error is not None:
        with pytest.raises(OperationFailure) as raised:
            run_case(db, case)
        codes = case.error if isinstance(case.error, tuple) else (case.error,)
        assert case.error == ANY_ERROR or raised.value.code in codes, raised.value
        return
    got = run_case(db, case)
    if case.expected is FIND:  # assertResults(null, ...): the aggregate agrees with find
        found = list(db.c.find(case.pipeline[-1]["$match"]))
        assert sorted(map(repr, ordered(got))) == sorted(map(repr, ordered(found))), got
        return
    if case.pick is not None:
        got = [d.get(case.pick) for d in got]
        if case.any_order:
            assert sorted(map(repr, got)) == sorted(map(repr, case.expected)), got
            return
    if case.count:
        assert len(got) == case.expected, got
    elif case.any_order:
        assert sorted(map(repr, ordered(got))) == sorted(map(repr, ordered(case.expected))), got
    elif not case.field_order:
        assert got == case.expected, got
    else:
        assert ordered(got) == ordered(case.expected), got


CASES: list[Case] = []


def cases(file: str, docs: list[Any], *items: tuple[Any, ...], **shared: Any) -> None:
    """Add one file's assertions: each item is (pipeline, expected) or (pipeline, expected, {options})."""
    for item in items:
        pipeline, expected, *more = item
        CASES.append(Case(file, docs, pipeline, expected, **{**shared, **(more[0] if more else {})}))


# jstests/aggregation/sources/group/collation_group.js
# Ported: every assertion (group, $sortByCount, $facet, $addToSet, $push subexpression, $min/$max
# under the inherited case-insensitive / numericOrdering collation and an explicit one).
_ACCENTS = [
    {"_id": 0, "str": "A", "str2": "á"},
    {"_id": 1, "str": "a", "str2": "a"},
    {"_id": 2, "str": "B", "str2": "é"},
    {"_id": 3, "str": "b", "str2": "e"},
]
_CI = {"collation": {"locale": "en_US", "strength": 2}}
_DI = {"collation": {"locale": "en_US", "strength": 1, "caseLevel": True}}
cases(
    "sources/group/collation_group.js",
    _ACCENTS,
    ([{"$group": {"_id": "$str"}}], 2, {"count": True}),
    ([{"$group": {"_id": "$str2"}}], 2, {"count": True, **_DI}),
    ([{"$sortByCount": "$str"}], 2, {"count": True}),
    ([{"$sortByCount": "$str2"}], 4, {"count": True}),
    ([{"$sortByCount": "$str"}], 4, {"count": True, **_DI}),
    ([{"$sortByCount": "$str2"}], 2, {"count": True, **_DI}),
    ([{"$facet": {"s": [{"$group": {"_id": "$str"}}]}}, {"$project": {"n": {"$size": "$s"}}}], [{"n": 2}]),
    ([{"$facet": {"s": [{"$group": {"_id": "$str2"}}]}}, {"$project": {"n": {"$size": "$s"}}}], [{"n": 4}]),
    (
        [{"$group": {"_id": None, "set": {"$addToSet": "$str"}}}, {"$project": {"n": {"$size": "$set"}}}],
        [{"_id": None, "n": 2}],
    ),
    (
        [{"$group": {"_id": None, "set": {"$addToSet": "$str2"}}}, {"$project": {"n": {"$size": "$set"}}}],
        [{"_id": None, "n": 2}],
        _DI,
    ),
    (
        [{"$match": {"_id": 0}}, {"$group": {"_id": None, "areEqual": {"$push": {"$eq": ["$str", "$str2"]}}}}],
        [{"_id": None, "areEqual": [True]}],
        {"collation": {"locale": "en_US", "strength": 1}},
    ),
    create=_CI,
)
cases(
    "sources/group/collation_group.js",
    [{"num": "100"}, {"num": "2"}],
    ([{"$group": {"_id": None, "min": {"$min": "$num"}}}], [{"_id": None, "min": "2"}]),
    ([{"$group": {"_id": None, "max": {"$max": "$num"}}}], [{"_id": None, "max": "100"}]),
    create={"collation": {"locale": "en_US", "numericOrdering": True}},
)

# jstests/aggregation/sources/group/group_by_empty_object.js
# Ported: all five assertions.
cases(
    "sources/group/group_by_empty_object.js",
    [{"_id": 1, "x": 1}, {"_id": 2, "x": 2}],
    ([{"$group": {"_id": {}}}], [{"_id": {}}]),
    ([{"$group": {"_id": {"$expr": {}}}}], [{"_id": {}}]),
    ([{"$group": {"_id": {"$expr": {"$const": {}}}}}], [{"_id": {}}]),
    ([{"$group": {"_id": {"$expr": {"$expr": {}}}}}], [{"_id": {}}]),
    ([{"$sortByCount": {"$expr": {}}}], [{"_id": {}, "count": 2}]),
)

# jstests/aggregation/sources/addFields/dotted_paths.js
# Ported: every assertAddFieldsResult (overwrite, new sub-object, nested object values, a new top-level
# path, paths through arrays and nested arrays; each with and without $literal).
_DOTTED = {
    "_id": 1,
    "arrayField": [1, {"subField": [2, {}]}, [1]],
    "objField": {"p": {"q": 1}, "subArr": [1]},
    "otherField": "value",
}
_NESTED = {"newSubObj": [{"p": "newValue"}]}


def _dotted(**changes: Any) -> list[dict[str, Any]]:
    return [{**_DOTTED, **changes}]


_SUB = {"newSubPath": {"b": "newValue"}}
_SUBN = {"newSubPath": {"b": _NESTED}}
_SUBF = {"subField": {"b": _NESTED}}
cases(
    "sources/addFields/dotted_paths.js",
    [_DOTTED],
    *[
        ([{"$addFields": {path: value}}], expected)
        for path, plain, expected in [
            ("objField.subArr", "newValue", _dotted(objField={"p": {"q": 1}, "subArr": "newValue"})),
            ("objField.newSubPath.b", "newValue", _dotted(objField={"p": {"q": 1}, "subArr": [1], **_SUB})),
            ("objField.newSubPath.b", _NESTED, _dotted(objField={"p": {"q": 1}, "subArr": [1], **_SUBN})),
            ("newField.newSubPath.b", "newValue", _dotted(newField=_SUB)),
            ("newField.newSubPath.b", _NESTED, _dotted(newField=_SUBN)),
            ("arrayField.newSubPath.b", "newValue", _dotted(arrayField=[_SUB, {"subField": [2, {}], **_SUB}, [_SUB]])),
            ("arrayField.newSubPath.b", _NESTED, _dotted(arrayField=[_SUBN, {"subField": [2, {}], **_SUBN}, [_SUBN]])),
            (
                "arrayField.subField.b",
                _NESTED,
                _dotted(arrayField=[_SUBF, {"subField": [{"b": _NESTED}, {"b": _NESTED}]}, [_SUBF]]),
            ),
        ]
        for value in (plain, {"$literal": plain})
    ],
)

# jstests/aggregation/sources/addFields/add_fields_adds_to_missing_fields.js
# Ported: all four assertions.
_FIRST = {"$group": {"_id": None, "array": {"$first": "$array"}}}
cases(
    "sources/addFields/add_fields_adds_to_missing_fields.js",
    [{"_id": 0, "array": [1, 2, {"m1": "str"}]}],
    (
        [_FIRST, {"$project": {"_id": 0, "array.m1": 1}}, {"$addFields": {"array.m2": "what?"}}],
        [{"array": [{"m1": "str", "m2": "what?"}]}],
    ),
    ([_FIRST, {"$project": {"_id": 0, "array.m1": 1}}], [{"array": [{"m1": "str"}]}]),
    (
        [_FIRST, {"$addFields": {"array.m2": "what?"}}],
        [{"_id": None, "array": [{"m2": "what?"}, {"m2": "what?"}, {"m1": "str", "m2": "what?"}]}],
    ),
    (
        [_FIRST, {"$project": {"_id": 0, "array.m1": 1, "array.m2": "what?"}}],
        [{"array": [{"m2": "what?"}, {"m2": "what?"}, {"m1": "str", "m2": "what?"}]}],
    ),
)

# jstests/aggregation/sources/addFields/empty_objs.js
# Ported: all five assertions.
cases(
    "sources/addFields/empty_objs.js",
    [_DOTTED],
    ([{"$addFields": {"otherField": {}}}], _dotted(otherField={})),
    ([{"$addFields": {"otherField": {"$literal": {}}}}], _dotted(otherField={})),
    ([{"$addFields": {"otherField": {"b": {}}}}], _dotted(otherField={"b": {}})),
    ([{"$addFields": {"otherField": []}}], _dotted(otherField=[])),
    ([{"$addFields": {"newField": {}}}], [{**_DOTTED, "newField": {}}]),
)


# jstests/aggregation/sources/unwind/unwind.js
# Ported: the one assertion (a scalar unwinds to itself; missing, null and [] give nothing).
cases(
    "sources/unwind/unwind.js",
    [
        {"_id": 1},
        {"_id": 2, "x": None},
        {"_id": 3, "x": []},
        {"_id": 4, "x": [1, 2]},
        {"_id": 5, "x": [3]},
        {"_id": 6, "x": 4},
    ],
    ([{"$unwind": "$x"}, {"$sort": {"_id": 1}}], [1, 2, 3, 4], {"pick": "x"}),
)

# jstests/aggregation/sources/unwind/unwind_include_array_index.js
# Ported: all three assertions (NumberLong indexes, null for a scalar, with preserveNullAndEmptyArrays).
_IDX = [{"_id": 0}, {"_id": 1, "x": None}, {"_id": 2, "x": []}, {"_id": 3, "x": [1, 2, 3]}, {"_id": 4, "x": 5}]
_SORT_ID_X = {"$sort": {"_id": 1, "x": 1}}
cases(
    "sources/unwind/unwind_include_array_index.js",
    _IDX,
    (
        [{"$unwind": {"path": "$x"}}, _SORT_ID_X],
        [{"_id": 3, "x": 1}, {"_id": 3, "x": 2}, {"_id": 3, "x": 3}, {"_id": 4, "x": 5}],
    ),
    (
        [{"$unwind": {"path": "$x", "includeArrayIndex": "index"}}, _SORT_ID_X],
        [
            {"_id": 3, "x": 1, "index": Int64(0)},
            {"_id": 3, "x": 2, "index": Int64(1)},
            {"_id": 3, "x": 3, "index": Int64(2)},
            {"_id": 4, "x": 5, "index": None},
        ],
    ),
    (
        [{"$unwind": {"path": "$x", "includeArrayIndex": "index", "preserveNullAndEmptyArrays": True}}, _SORT_ID_X],
        [
            {"_id": 0, "index": None},
            {"_id": 1, "x": None, "index": None},
            {"_id": 2, "index": None},
            {"_id": 3, "x": 1, "index": Int64(0)},
            {"_id": 3, "x": 2, "index": Int64(1)},
            {"_id": 3, "x": 3, "index": Int64(2)},
            {"_id": 4, "x": 5, "index": None},
        ],
    ),
)

# jstests/aggregation/sources/unwind/unwind_preserve_null_and_empty_arrays.js
# Ported: every assertion (missing, null, [] with and without preserveNullAndEmptyArrays; an empty collection).
cases("sources/unwind/unwind_preserve_null_and_empty_arrays.js", [], ([{"$unwind": {"path": "$x"}}], []))
for _doc, _out in [
    ({"_id": 0}, {"_id": 0}),
    ({"_id": 0, "x": None}, {"_id": 0, "x": None}),
    ({"_id": 0, "x": []}, {"_id": 0}),
]:
    cases(
        "sources/unwind/unwind_preserve_null_and_empty_arrays.js",
        [_doc],
        ([{"$unwind": {"path": "$x", "preserveNullAndEmptyArrays": True}}], [_out]),
        ([{"$unwind": {"path": "$x"}}], []),
    )

# jstests/aggregation/sources/unwind/unwind_empty_array.js
# Ported: every assertion (empty arrays, null, missing, nested missing and a scalar parent drop the document).
cases("sources/unwind/unwind_empty_array.js", [{"_id": 0, "a": 1, "b": [], "c": 2}], ([{"$unwind": "$b"}], []))
cases(
    "sources/unwind/unwind_empty_array.js",
    [{"_id": 0, "a": 1, "b": [], "c": 2}, {"_id": 1, "b": [4, 5]}, {"_id": 2, "b": []}],
    ([{"$unwind": "$b"}], [{"_id": 1, "b": 4}, {"_id": 1, "b": 5}]),
)
for _doc, _path in [
    ({"_id": 0, "a": 1, "b": {"x": 10, "y": [], "z": 20}, "c": 2}, "$b.y"),
    ({"_id": 0, "a": 1, "b": None, "c": 2}, "$b"),
    ({"_id": 0, "a": 1, "c": 2}, "$b"),
    ({"_id": 0, "a": 1, "b": {"d": 4}, "c": 2}, "$b.y"),
    ({"_id": 0, "a": 1, "b": 10, "c": 2}, "$b.y"),
]:
    cases("sources/unwind/unwind_empty_array.js", [_doc], ([{"$unwind": _path}], []))

# jstests/aggregation/sources/unwind/unwind_skip.js
# Ported: both assertions.
cases(
    "sources/unwind/unwind_skip.js",
    [{"_id": 0, "a": [1, 2, 3]}],
    ([{"$unwind": "$a"}, {"$skip": 1}], [{"_id": 0, "a": 2}, {"_id": 0, "a": 3}]),
)
cases(
    "sources/unwind/unwind_skip.js",
    [{"_id": 0, "a": [1, 2, 3]}, {"_id": 1, "a": [4, 5, 6]}],
    (
        [{"$unwind": "$a"}, {"$skip": 2}],
        [{"_id": 0, "a": 3}, {"_id": 1, "a": 4}, {"_id": 1, "a": 5}, {"_id": 1, "a": 6}],
    ),
)

# jstests/aggregation/sources/unwind/unwind_sort.js
# Ported: all four assertions (sort on the unwound field and on includeArrayIndex, both directions).
cases(
    "sources/unwind/unwind_sort.js",
    [{"a": [3, 4, 5]}, {"a": [1, 2]}],
    ([{"$unwind": "$a"}, {"$sort": {"a": 1}}], [1, 2, 3, 4, 5], {"pick": "a"}),
    ([{"$unwind": "$a"}, {"$sort": {"a": -1}}], [5, 4, 3, 2, 1], {"pick": "a"}),
    (
        [{"$unwind": {"path": "$a", "includeArrayIndex": "i"}}, {"$sort": {"i": 1}}],
        [Int64(v) for v in (0, 0, 1, 1, 2)],
        {"pick": "i"},
    ),
    (
        [{"$unwind": {"path": "$a", "includeArrayIndex": "i"}}, {"$sort": {"i": -1}}],
        [Int64(v) for v in (2, 1, 1, 0, 0)],
        {"pick": "i"},
    ),
)

# jstests/aggregation/sources/project/handle_missing_subpath.js
# Ported: the one assertion.
cases(
    "sources/project/handle_missing_subpath.js",
    [{"_id": 0, "a": 1}, {"_id": 1, "foo": 2}, {"_id": 2, "foo": {"bar": 3}}],
    (
        [{"$sort": {"_id": 1}}, {"$project": {"_id": 0, "foo.bar": 1, "field": "$foo", "path": "$foo.bar"}}],
        [{}, {"field": 2}, {"foo": {"bar": 3}, "field": {"bar": 3}, "path": 3}],
    ),
)

# jstests/aggregation/sources/project/project_dotted_paths.js
# Ported: the three aggregate results ($_internalInhibitOptimization and the find comparison left out).
cases(
    "sources/project/project_dotted_paths.js",
    [{"a": [1, {"b": 2}, 3, {}]}],
    ([{"$project": {"a": {"$literal": "newValue"}, "_id": 0}}], [{"a": "newValue"}]),
    ([{"$project": {"a.b": {"$literal": "newValue"}, "_id": 0}}], [{"a": [{"b": "newValue"}] * 4}]),
    ([{"$project": {"a.b.c": {"$literal": "newValue"}, "_id": 0}}], [{"a": [{"b": {"c": "newValue"}}] * 4}]),
)

# jstests/aggregation/sources/project/non_existent_subfield.js
# Ported: the assertion, with find's answer written out (MongoDB's find keeps {} for each array element
# that has no b, drops scalars, and keeps an empty a for a subdocument without b).
cases(
    "sources/project/non_existent_subfield.js",
    [
        {"_id": 1, "a": [1]},
        {"_id": 2, "a": {"c": 1}},
        {"_id": 3, "a": [{"c": 1}, {"b": 1, "c": 1}, {"c": 1}]},
        {"_id": 4, "a": 1},
        {"_id": 5, "b": 1},
    ],
    (
        [{"$project": {"a.b": 1}}, {"$sort": {"_id": 1}}],
        [{"_id": 1, "a": []}, {"_id": 2, "a": {}}, {"_id": 3, "a": [{}, {"b": 1}, {}]}, {"_id": 4}, {"_id": 5}],
    ),
)

# jstests/aggregation/sources/project/exclusion_projection_does_not_affect_field_order.js
# Ported: both assertions.
_ORDER = [{"_id": 1}, {"_id": 2, "c": 1}, {"_id": 3, "y": 1, "z": 1}]
cases(
    "sources/project/exclusion_projection_does_not_affect_field_order.js",
    _ORDER,
    (
        [
            {"$project": {"b": 0, "c": 0}},
            {"$addFields": {"x": 3, "y": 4, "b": 5, "c": 6, "a": 7}},
            {"$sort": {"_id": 1}},
        ],
        [
            {"_id": 1, "x": 3, "y": 4, "b": 5, "c": 6, "a": 7},
            {"_id": 2, "x": 3, "y": 4, "b": 5, "c": 6, "a": 7},
            {"_id": 3, "y": 4, "z": 1, "x": 3, "b": 5, "c": 6, "a": 7},
        ],
    ),
)
cases(
    "sources/project/exclusion_projection_does_not_affect_field_order.js",
    [*_ORDER, {"_id": 4, "c": {"y": 11, "z": 22, "a": 33}, "a": 1}],
    ([{"$project": {"c.z": 0}}, {"$sort": {"_id": 1}}], [*_ORDER, {"_id": 4, "c": {"y": 11, "a": 33}, "a": 1}]),
)

# jstests/aggregation/sources/project/inclusion_accepts_all_numeric_types.js
# Ported: the one assertion (NumberLong, double and NumberInt 1 all include).
cases(
    "sources/project/inclusion_accepts_all_numeric_types.js",
    [{"key": 4, "v": 3, "x": 2}],
    ([{"$project": {"_id": 0, "key": Int64(1), "v": 1.0, "x": 1}}], [{"key": 4, "v": 3, "x": 2}]),
)

# jstests/aggregation/sources/project/project_id.js
# Ported: both assertions (an expression for _id).
cases(
    "sources/project/project_id.js",
    [{"a": 2}],
    ([{"$project": {"_id": "$a"}}], [{"_id": 2}]),
    ([{"$project": {"_id": {"$add": [1, "$a"]}}}], [{"_id": 3}]),
)

# jstests/aggregation/sources/project/nested_dotted_common_prefix.js
# Ported: all three assertions (nested and dotted paths mixed; computed fields in the $project's order).
_ONE = {"$add": [1]}
cases(
    "sources/project/nested_dotted_common_prefix.js",
    [{"a": "missing", "b": {"c": "bar", "a": "baz", "z": "not there"}}],
    ([{"$project": {"_id": 0, "b": {"a": 1}, "b.c": 1}}], [{"b": {"c": "bar", "a": "baz"}}]),
    ([{"$project": {"_id": 0, "b.c": 1, "b": {"a": 1}}}], [{"b": {"c": "bar", "a": "baz"}}]),
    (
        [{"$project": {"_id": 0, "A.Z": _ONE, "A": {"Y": _ONE, "A": _ONE}, "A.B": _ONE}}],
        [{"A": {"Z": 1, "Y": 1, "A": 1, "B": 1}}],
    ),
)


# jstests/aggregation/sources/group/numeric_grouping.js
# Ported: both assertions (NumberInt, NumberLong and double 24 and 42 group together, each summing to 30).
cases(
    "sources/group/numeric_grouping.js",
    [{"key": k, "value": v} for k, v in ((24, 17), (Int64(24), 8), (24.0, 5), (42, 11), (Int64(42), 13), (42.0, 6))],
    ([{"$group": {"_id": "$key", "s": {"$sum": "$value"}}}, {"$project": {"_id": 0, "s": 1}}], [{"s": 30}, {"s": 30}]),
)

# jstests/aggregation/sources/group/group_key_is_array.js
# Ported: the one assertion (an array _id at the top level and nested evaluate alike).
cases(
    "sources/group/group_key_is_array.js",
    [{"x": None}, {"y": None}, {"x": None, "y": None}],
    ([{"$group": {"_id": ["$x", "$y"]}}], [{"_id": [None, None]}]),
    ([{"$group": {"_id": {"z": ["$x", "$y"]}}}], [{"_id": {"z": [None, None]}}]),
)

# jstests/aggregation/sources/group/group_by_expr.js
# Ported: every assertion ($expr in _id and in an accumulator, the two error codes each).
_XY = [{"_id": 1, "x": 1, "y": 5}, {"_id": 2, "x": 2, "y": 10}]
cases(
    "sources/group/group_by_expr.js",
    _XY,
    ([{"$group": {"_id": {"$expr": {}}}}], [{"_id": {}}]),
    ([{"$group": {"_id": {"$expr": {"$eq": ["$x", 1]}, "secondGroupByField": "$y"}}}], None, {"error": 15983}),
    ([{"$group": {"_id": {"secondGroupByField": "$y", "$expr": {"$eq": ["$x", 1]}}}}], None, {"error": 16410}),
    (
        [
            {
                "$group": {
                    "_id": {
                        "exprFieldName": {"$expr": {"$max": [{"$expr": {"$multiply": ["$x", 2]}}, 3]}},
                        "secondGroupByField": "$y",
                    }
                }
            }
        ],
        [
            {"_id": {"exprFieldName": 3, "secondGroupByField": 5}},
            {"_id": {"exprFieldName": 4, "secondGroupByField": 10}},
        ],
        {"any_order": True},
    ),
    ([{"$group": {"_id": {"$expr": {"$literal": "this is a string"}}}}], [{"_id": "this is a string"}]),
    ([{"$group": {"_id": {"$expr": {"a": "b"}}}}], [{"_id": {"a": "b"}}]),
    ([{"$group": {"_id": {"$expr": {"$multiply": ["$x", 10]}}}}], [{"_id": 10}, {"_id": 20}], {"any_order": True}),
    ([{"$group": {"_id": 1, "sum": {"$sum": {"$expr": {}}}}}], [{"_id": 1, "sum": 0}]),
    (
        [{"$group": {"_id": 1, "sum": {"$sum": {"$expr": {"$eq": ["$x", 1]}, "secondAccumulatorField": "$y"}}}}],
        None,
        {"error": 15983},
    ),
    (
        [{"$group": {"_id": 1, "sum": {"$sum": {"secondAccumulatorField": "$y", "$expr": {"$eq": ["$x", 1]}}}}}],
        None,
        {"error": 16410},
    ),
    ([{"$group": {"_id": 1, "sum": {"$sum": {"$expr": {"$literal": 5}}}}}], [{"_id": 1, "sum": 10}]),
    ([{"$group": {"_id": 1, "sum": {"$sum": {"$expr": {"a": 5}}}}}], [{"_id": 1, "sum": 0}]),
    ([{"$group": {"_id": 1, "sum": {"$sum": {"$expr": {"$add": ["$x", "$y"]}}}}}], [{"_id": 1, "sum": 18}]),
    (
        [{"$group": {"_id": 1, "sum": {"$sum": {"$expr": {"$add": ["$x", {"$expr": {"$multiply": ["$y", 2]}}]}}}}}],
        [{"_id": 1, "sum": 33}],
    ),
)

# jstests/aggregation/sources/group/group_by_variable.js
# Ported: all four assertions ($$ROOT, $$CURRENT, and their .x).
_WHOLE = [{"_id": {"_id": 1, "x": 1}}, {"_id": {"_id": 2, "x": 2}}]
cases(
    "sources/group/group_by_variable.js",
    [{"_id": 1, "x": 1}, {"_id": 2, "x": 2}],
    ([{"$group": {"_id": "$$ROOT"}}, {"$sort": {"_id": 1}}], _WHOLE),
    ([{"$group": {"_id": "$$CURRENT"}}, {"$sort": {"_id": 1}}], _WHOLE),
    ([{"$group": {"_id": "$$ROOT.x"}}, {"$sort": {"_id": 1}}], [{"_id": 1}, {"_id": 2}]),
    ([{"$group": {"_id": "$$CURRENT.x"}}, {"$sort": {"_id": 1}}], [{"_id": 1}, {"_id": 2}]),
)

# jstests/aggregation/sources/group/group_no_dotted_output_field.js
# Ported: the one assertErrorCode (40235).
cases(
    "sources/group/group_no_dotted_output_field.js",
    [{}],
    ([{"$group": {"_id": None, "bar.baz": {"$addToSet": "$foo"}}}], None, {"error": 40235}),
)


# jstests/aggregation/sources/group/firstlast.js
# Ported: every assertFirstLast (group _id 1's $first and $last after a $sort on _id, with the jstest's
# stages and expressions; the shell's assert.eq takes undefined == null, so a missing value reads as
# null), and the three multikey runAndConfirmResult assertions with its two indexes.
def _first_last(stages: list[dict[str, Any]], expression: Any = "$b") -> list[dict[str, Any]]:
    group = {"$group": {"_id": "$a", "first": {"$first": expression}, "last": {"$last": expression}}}
    nulls = {"_id": 0, "first": {"$ifNull": ["$first", None]}, "last": {"$ifNull": ["$last", None]}}
    return [{"$sort": {"_id": 1}}, *stages, group, {"$match": {"_id": 1}}, {"$project": nulls}]


_FIRST_LAST: list[tuple[Any, Any, Any, Any, Any]] = [
    ([{"_id": 1, "a": 1, "b": 1}], [], "$b", 1, 1),
    ([{"_id": 1, "a": 1, "b": 1}, {"_id": 2, "a": 1, "b": 2}], [], "$b", 1, 2),
    ([{"_id": i, "a": 1, "b": i} for i in (1, 2, 3)], [], "$b", 1, 3),
    *[
        (
            [{"_id": i, "a": a, "b": b} for i, (a, b) in enumerate([(3, 0), (1, 1), (1, 2), (1, 3), (2, 0)])],
            stages,
            "$b",
            first,
            last,
        )
        for stages, first, last in [
            ([], 1, 3),
            ([{"$project": {"x": "$a", "y": "$b"}}, {"$project": {"a": "$x", "b": "$y"}}], 1, 3),
            ([{"$sort": {"b": -1}}], 3, 1),
        ]
    ],
    *[
        ([{"_id": i, "a": 1, "b": i} for i in (1, 2, 3)], stages, "$b", first, last)
        for stages, first, last in [
            ([{"$limit": 2}], 1, 2),
            ([{"$skip": 1}, {"$limit": 2}], 2, 3),
            ([{"$skip": 1}, {"$limit": 1}], 2, 2),
        ]
    ],
    ([*({"_id": i, "a": 1, "b": i} for i in (1, 2, 3)), {"_id": 4, "a": 1, "b": "foo"}], [], "$b", 1, "foo"),
    ([{"_id": 1, "a": 1, "b": "bar"}, {"_id": 2, "a": 1, "b": True}], [], "$b", "bar", True),
    ([{"_id": 1, "a": 1, "b": None}, {"_id": 2, "a": 1, "b": 2}], [], "$b", None, 2),
    ([{"_id": 1, "a": 1, "b": 2}, {"_id": 2, "a": 1, "b": None}], [], "$b", 2, None),
    ([{"_id": 1, "a": 1, "b": None}, {"_id": 2, "a": 1, "b": None}], [], "$b", None, None),
    ([{"_id": 1, "a": 1}, {"_id": 2, "a": 1, "b": 2}], [], "$b", None, 2),
    ([{"_id": 1, "a": 1, "b": 2}, {"_id": 2, "a": 1}], [], "$b", 2, None),
    ([{"_id": 1, "a": 1}, {"_id": 2, "a": 1}], [], "$b", None, None),
    ([{"_id": 1, "a": 1, "b": [{"c": 1}, {"c": 2}]}, {"_id": 2, "a": 1, "b": [{"c": 6}, {}]}], [], "$b.c", [1, 2], [6]),
    ([{"_id": 1, "a": 1, "b": 1}, {"_id": 2, "a": 1, "b": 2}], [], {"$mod": ["$b", 2]}, 1, 0),
    ([{"_id": 1, "a": 1, "b": 1}, {"_id": 2, "a": 1, "b": 2}], [], {"$mod": [{"$add": ["$b", 1]}, 2]}, 0, 1),
]
for _docs, _stages, _expression, _first, _last in _FIRST_LAST:
    cases("sources/group/firstlast.js", _docs, (_first_last(_stages, _expression), [{"first": _first, "last": _last}]))
cases(
    "sources/group/firstlast.js",
    [{"mk": [1, 2, 3], "notMk": 4}],
    ([{"$group": {"_id": "$notMk", "acc": {"$first": "$mk"}}}], [{"_id": 4, "acc": [1, 2, 3]}]),
    ([{"$group": {"_id": "$notMk", "acc": {"$last": "$mk"}}}], [{"_id": 4, "acc": [1, 2, 3]}]),
    (
        [{"$match": {"notMk": {"$eq": 4}}}, {"$group": {"_id": "$notMk", "acc": {"$last": "$mk"}}}],
        [{"_id": 4, "acc": [1, 2, 3]}],
    ),
    indexes=([("notMk", 1), ("mk", 1)], [("notMk", -1), ("mk", -1)]),
)

# jstests/aggregation/sources/match/match.js
# Ported: the invalid-$mod and $where errors; every assertResults (against the jstest's expected
# documents, or find's answer where it passes null), folded into the cursor and behind a $project,
# without an index and with {a: 1}, {"a.b": 1}, {"a.c": 1}. (Geo operators in $match: not modelled.)
_IDENTITY = {"$project": {"_id": "$_id", "a": "$a"}}
_ABC = [{"_id": 0, "a": 1}, {"_id": 1, "a": 2}, {"_id": 2, "a": 3}]
_MATCH_SETS: list[tuple[list[Any], list[tuple[dict[str, Any], Any]]]] = [
    (
        _ABC,
        [
            ({}, _ABC),
            ({"a": 1}, [_ABC[0]]),
            ({"a": 2}, [_ABC[1]]),
            ({"a": {"$gt": 1}}, _ABC[1:]),
            ({"a": {"$lte": 2}}, _ABC[:2]),
            ({"a": {"$in": [1, 3]}}, [_ABC[0], _ABC[2]]),
            ({"$and": [{"a": 2}, {"_id": 1}]}, [_ABC[1]]),
            ({"$and": [{"a": 1}, {"_id": 1}]}, []),
            ({"$and": [{"$or": [{"_id": 1}, {"a": 3}]}, {"$or": [{"_id": 2}, {"a": 2}]}]}, _ABC[1:]),
            ({"$or": [{"_id": 0}, {"a": 3}]}, [_ABC[0], _ABC[2]]),
        ],
    ),
    (
        [{"_id": 0, "a": "x"}, {"_id": 1, "a": "yx"}],
        [
            ({"a": re.compile("^x")}, [{"_id": 0, "a": "x"}]),
            ({"a": re.compile("x")}, [{"_id": 0, "a": "x"}, {"_id": 1, "a": "yx"}]),
        ],
    ),
    ([{"_id": 0, "a": {"b": 4}}, {"_id": 1, "a": 2}], [({"a.b": 4}, [{"_id": 0, "a": {"b": 4}}])]),
    (
        [{"_id": 0, "a": [1, 2, 3]}, {"_id": 1, "a": [2, 2, 3]}, {"_id": 2, "a": [2, 2, 2]}],
        [({"a": 3}, [{"_id": 0, "a": [1, 2, 3]}, {"_id": 1, "a": [2, 2, 3]}])],
    ),
    (
        _NULLS := [
            {"_id": 0},
            {"_id": 1, "a": None},
            {"_id": 2, "a": []},
            {"_id": 3, "a": 0},
            {"_id": 4, "a": [[]]},
            {"_id": 5, "a": [2, 2, 2]},
        ],
        [
            ({"a": None}, _NULLS[:2]),
            ({"a": {"$exists": True}}, FIND),
            ({"a": {"$exists": False}}, FIND),
            ({"x": None}, _NULLS),
            ({"a.y": None}, _NULLS),
            ({"a.y.z": None}, _NULLS),
        ],
    ),
    (
        [{"_id": 0, "a": [1, 2]}, {"_id": 1, "a": [1, 2, 3]}],
        [({"a": {"$elemMatch": {"$gt": 1, "$mod": [2, 1]}}}, [{"_id": 1, "a": [1, 2, 3]}])],
    ),
    (
        [{"_id": 0, "a": [{"b": 1}, {"c": 2}]}, {"_id": 1, "a": [{"b": 1, "c": 2}]}],
        [({"a": {"$elemMatch": {"b": 1, "c": 2}}}, [{"_id": 1, "a": [{"b": 1, "c": 2}]}])],
    ),
    (
        _ELEM := [
            {"_id": 3, "a": [[{"x": {"y": 1}}]]},
            {"_id": 5, "a": [["blah"]]},
            {"_id": 6, "a": [[]]},
            {"_id": 7, "a": [None]},
            {"_id": 8, "a": [2]},
            {"_id": 9, "a": []},
            {"_id": 10, "a": [{"x": 1}]},
            {"_id": 11, "a": [{"y": 1}]},
        ],
        [
            ({"a": {"$elemMatch": {"x": None}}}, [_ELEM[0], _ELEM[1], _ELEM[2], _ELEM[7]]),
            ({"a": {"$elemMatch": {"x.y": None}}}, [_ELEM[0], _ELEM[1], _ELEM[2], _ELEM[6], _ELEM[7]]),
            ({"a": {"$elemMatch": {"x.y.z": None}}}, [_ELEM[0], _ELEM[1], _ELEM[2], _ELEM[6], _ELEM[7]]),
        ],
    ),
    (
        [{"_id": 0}, {"_id": 1, "a": None}, {"_id": 2, "a": []}, {"_id": 3, "a": [1]}, {"_id": 4, "a": [1, 2]}],
        [({"a": {"$size": n}}, FIND) for n in (0, 1, 2)],
    ),
    (
        [
            {"_id": 0},
            {"_id": 1, "a": None},
            {"_id": 2, "a": 1},
            {"_id": 3, "a": Int64(2)},
            {"_id": 4, "a": 66.6},
            {"_id": 5, "a": "abc"},
            {"_id": 6, "a": re.compile("xyz")},
            {"_id": 7, "a": {"q": 1}},
            {"_id": 8, "a": True},
            {"_id": 9, "a": datetime.datetime(2024, 1, 2)},
            {"_id": 10, "a": ObjectId("0" * 24)},
        ],
        [({"a": {"$type": t}}, FIND) for t in range(1, 19)],
    ),
]
for _indexes in ((), ("a",), ("a", "a.b", "a.c")):
    for _docs, _queries in _MATCH_SETS:
        cases(
            "sources/match/match.js",
            _docs,
            *[(stages + [{"$match": q}], e, {"any_order": True}) for q, e in _queries for stages in ([], [_IDENTITY])],
            indexes=_indexes,
        )
cases(
    "sources/match/match.js",
    [{"_id": 0, "a": 1}],
    *[(stages + [{"$match": {"a": {"$mod": [0, 0]}}}], None, {"error": 2}) for stages in ([], [_IDENTITY])],
    *[(stages + [{"$match": {"$where": "true"}}], None, {"error": 2}) for stages in ([], [_IDENTITY])],
)

# jstests/aggregation/sources/match/dotted_numeric_path.js
# Ported: the one assertion (a numeric path component inside $match, then $count).
cases(
    "sources/match/dotted_numeric_path.js",
    [{"_id": 1, "quizzes": [{"score": 100}]}, {"_id": 2, "quizzes": [{"score": 200}]}],
    ([{"$match": {"quizzes.0.score": {"$gt": 0}}}, {"$count": "count"}], [{"count": 2}]),
)

# jstests/aggregation/sources/match/expr_match.js
# Ported: every itcount.
cases(
    "sources/match/expr_match.js",
    [{"x": 0}, {"x": 1, "y": 1}, {"x": 2, "y": 4}, {"x": 3, "y": 9}],
    *[
        ([{"$match": spec}], n, {"count": True})
        for spec, n in [
            ({"$expr": {"$eq": ["$x", 2]}}, 1),
            ({"$expr": {"$eq": ["$x", "$y"]}}, 1),
            ({"$expr": {"$eq": ["$x", {"$sqrt": "$y"}]}}, 3),
            ({"$expr": {"$or": [{"$eq": ["$x", 3]}, {"$and": [{"$eq": ["$x", 2]}, {"$eq": ["$y", 4]}]}]}}, 2),
            ({"$expr": {"$in": ["$x", [1, {"$mod": [4, 2]}, 3]]}}, 3),
            ({"$expr": {"$gte": ["$y", {"$multiply": [3, 3]}]}}, 1),
            ({"$expr": {"$gte": [10, 5]}}, 4),
            ({"$expr": {"$gte": [5, 10]}}, 0),
            ({"$or": [{"$expr": {"$eq": ["$foo", "$bar"]}}, {"b": {"$gt": 3}}]}, 4),
            ({"$and": [{"$expr": {"$eq": ["$foo", "$bar"]}}, {"x": {"$lt": 2}}]}, 2),
        ]
    ],
)

# jstests/aggregation/sources/match/skip_with_limit.js
# Ported: every itcount ($_internalInhibitOptimization left out: it only changes where the work runs).
_M4 = {"$match": {"x": 4}}
_SKIPS: list[tuple[list[dict[str, Any]], int]] = [
    ([{"$skip": 10}, {"$limit": 5}], 5),
    ([{"$skip": 7}, {"$skip": 3}, {"$limit": 5}], 5),
    ([{"$skip": 10}, {"$addFields": {"y": 1}}, {"$limit": 5}], 5),
    ([{"$skip": 10}, {"$group": {"_id": "$y"}}, {"$limit": 5}], 5),
    ([{"$limit": 10}, {"$skip": 5}], 5),
    ([{"$limit": 7}, {"$limit": 3}, {"$skip": 1}], 2),
    ([{"$limit": 10}, {"$addFields": {"y": 1}}, {"$skip": 5}], 5),
    ([{"$limit": 10}, {"$group": {"_id": "$y"}}, {"$skip": 5}], 5),
    ([{"$skip": 18}, {"$limit": 5}], 2),
    ([{"$skip": 11}, {"$skip": 7}, {"$limit": 5}], 2),
    ([{"$skip": 18}, {"$addFields": {"y": 1}}, {"$limit": 5}], 2),
    ([{"$skip": 18}, {"$group": {"_id": "$y"}}, {"$limit": 5}], 2),
    ([{"$sort": {"x": 1}}, {"$skip": 10}, {"$skip": 8}, {"$limit": 5}], 2),
    ([{"$skip": 5}, {"$limit": 10}, {"$skip": 5}, {"$limit": 4}], 4),
    ([{"$skip": 7}, {"$skip": 4}, {"$limit": 4}], 4),
    ([{"$sort": {"y": -1}}, {"$skip": 7}, {"$skip": 4}, {"$limit": 4}], 4),
    ([{"$skip": 7}, {"$skip": 10}, {"$limit": 4}], 3),
    ([{"$sort": {"y": -1}}, {"$skip": 7}, {"$skip": 10}, {"$limit": 4}], 3),
]
cases(
    "sources/match/skip_with_limit.js",
    [{"x": 4, "y": i} for i in range(20)],
    *[([_M4, *stages], n, {"count": True}) for stages, n in _SKIPS],
)


# jstests/aggregation/sources/sort/sort_different_types.js
# Ported: all six runSort checks (every BSON type in MongoDB's order, plain and nested under a.b, both
# directions); the DBPointer document is left out (pymongo cannot write one).
_TYPES: list[Any] = [
    MinKey(),
    None,
    1,
    Int64(2),
    "3",
    {},
    DBRef("test.c", ObjectId("0102030405060708090a0b0c")),
    [[]],
    [[1, 2, "a", "B"]],
    Binary(b"\xef\xbf\xbd", 0),
    ObjectId("0102030405060708090a0b0c"),
    True,
    datetime.datetime(1970, 1, 1, 0, 0, 0, 2000),
    Timestamp(0, 1),
    Regex("regex"),
    Code("function() {}"),
    MaxKey(),
]
_TYPED = [{"_id": i, "a": v} for i, v in enumerate(_TYPES)]
_NESTED_TYPED = [{"_id": i, "a": {"b": v}} for i, v in enumerate(_TYPES)]
_ORDER_UP = list(range(len(_TYPES)))
cases(
    "sources/sort/sort_different_types.js",
    _TYPED[::-1],
    ([{"$sort": {"a": 1}}], _ORDER_UP, {"pick": "_id"}),
    ([{"$sort": {"a": -1}}], _ORDER_UP[::-1], {"pick": "_id"}),
)
cases(
    "sources/sort/sort_different_types.js",
    _NESTED_TYPED[::-1],
    ([{"$sort": {"a": 1}}], _ORDER_UP, {"pick": "_id"}),
    ([{"$sort": {"a.b": 1}}], _ORDER_UP, {"pick": "_id"}),
    ([{"$sort": {"a": -1}}], _ORDER_UP[::-1], {"pick": "_id"}),
    ([{"$sort": {"a.b": -1}}], _ORDER_UP[::-1], {"pick": "_id"}),
)

# jstests/aggregation/sources/sort/array_sort_key_semantics.js
# Ported: both aggregate assertions (the smallest element is the sort key), without and with {a: 1}.
_ARR = [{"_id": 2, "a": [2, 3]}, {"_id": 3, "a": [2, 4]}, {"_id": 4, "a": [2, 1]}]
for _indexes in ((), ("a",)):
    cases(
        "sources/sort/array_sort_key_semantics.js",
        _ARR,
        ([{"$sort": {"a": 1, "_id": 1}}], [_ARR[2], _ARR[0], _ARR[1]]),
        indexes=_indexes,
    )

# jstests/aggregation/sources/sort/sort_dates_before_1970.js
# Ported: the one assertion.
cases(
    "sources/sort/sort_dates_before_1970.js",
    [{"d": datetime.datetime(1980, 1, 1)}, {"d": datetime.datetime(1950, 1, 1)}],
    ([{"$sort": {"d": 1}}], [datetime.datetime(1950, 1, 1), datetime.datetime(1980, 1, 1)], {"pick": "d"}),
)

# jstests/aggregation/sources/sort/collation_sort.js
# Ported: every assertion (ascending, descending and mixed compound sorts with and without the French
# backwards collation, and inside $facet).
_WORDS = [
    (1, "pêche", "côté"),
    (2, "pêche", "coté"),
    (3, "pêche", "côte"),
    (4, "pèché", "côté"),
    (5, "pèché", "coté"),
    (6, "pèché", "côte"),
    (7, "pêché", "côté"),
    (8, "pêché", "coté"),
    (9, "pêché", "côte"),
]
_FR = {"collation": {"locale": "fr", "backwards": True}}
_PUSH_IDS = [{"$project": {"_id": 1}}, {"$group": {"_id": None, "out": {"$push": "$_id"}}}, {"$project": {"_id": 0}}]
cases(
    "sources/sort/collation_sort.js",
    [{"_id": i, "word1": w1, "word2": w2} for i, w1, w2 in _WORDS],
    ([{"$group": {"_id": "$word1"}}, {"$sort": {"_id": 1}}], [{"_id": "pèché"}, {"_id": "pêche"}, {"_id": "pêché"}]),
    (
        [{"$group": {"_id": "$word1"}}, {"$sort": {"_id": 1}}],
        [{"_id": "pêche"}, {"_id": "pèché"}, {"_id": "pêché"}],
        _FR,
    ),
    ([{"$group": {"_id": "$word1"}}, {"$sort": {"_id": -1}}], [{"_id": "pêché"}, {"_id": "pêche"}, {"_id": "pèché"}]),
    (
        [{"$group": {"_id": "$word1"}}, {"$sort": {"_id": -1}}],
        [{"_id": "pêché"}, {"_id": "pèché"}, {"_id": "pêche"}],
        _FR,
    ),
    ([{"$sort": {"word1": 1, "word2": -1}}, *_PUSH_IDS], [{"out": [4, 6, 5, 1, 3, 2, 7, 9, 8]}]),
    ([{"$sort": {"word1": 1, "word2": -1}}, *_PUSH_IDS], [{"out": [1, 2, 3, 4, 5, 6, 7, 8, 9]}], _FR),
    ([{"$sort": {"word1": -1, "word2": 1}}, *_PUSH_IDS], [{"out": [8, 9, 7, 2, 3, 1, 5, 6, 4]}]),
    ([{"$sort": {"word1": -1, "word2": 1}}, *_PUSH_IDS], [{"out": [9, 8, 7, 6, 5, 4, 3, 2, 1]}], _FR),
    (
        [{"$facet": {"fct": [{"$sort": {"word1": -1, "word2": 1}}, *_PUSH_IDS]}}],
        [{"fct": [{"out": [9, 8, 7, 6, 5, 4, 3, 2, 1]}]}],
        _FR,
    ),
)

# jstests/aggregation/sources/bucket/collation_bucket.js
# Ported: every assertion (explicit and inherited numericOrdering buckets, the simple collation
# overriding the default, boundaries and defaults checked under the collation).
_NUMS = [{"num": n} for n in ("1", "2", "5", "10", "20", "50", "100", "200", "500")]
_NUMERIC = {"locale": "en_US", "numericOrdering": True}
_SIMPLE = {"collation": {"locale": "simple"}}
_BUCKETS = [{"_id": "1", "count": 3}, {"_id": "10", "count": 3}, {"_id": "100", "count": 3}]
cases(
    "sources/bucket/collation_bucket.js",
    _NUMS,
    ([{"$bucket": {"groupBy": "$num", "boundaries": ["1", "10", "100", "1000"]}}], _BUCKETS, {"collation": _NUMERIC}),
)
cases(
    "sources/bucket/collation_bucket.js",
    _NUMS,
    ([{"$bucket": {"groupBy": "$num", "boundaries": ["1", "10", "100", "1000"]}}], _BUCKETS),
    (
        [{"$bucket": {"groupBy": "$num", "boundaries": ["1", "10", "100", "1000"]}}],
        None,
        {"error": ANY_ERROR, **_SIMPLE},
    ),
    ([{"$bucket": {"groupBy": "$num", "boundaries": ["100", "20", "4"]}}], None, {"error": ANY_ERROR}),
    ([{"$bucket": {"groupBy": "$num", "boundaries": ["4", "20", "100"]}}], None, {"error": ANY_ERROR, **_SIMPLE}),
    ([{"$bucket": {"groupBy": "$num", "boundaries": ["1", "10", "100"], "default": "40"}}], None, {"error": ANY_ERROR}),
    (
        [{"$bucket": {"groupBy": "$num", "boundaries": ["100", "999"], "default": "2"}}],
        None,
        {"error": ANY_ERROR, **_SIMPLE},
    ),
    (
        [{"$bucket": {"groupBy": "$num", "boundaries": ["100", "999"], "default": "2"}}],
        [{"_id": "2", "count": 6}, {"_id": "100", "count": 3}],
    ),
    (
        [{"$bucket": {"groupBy": "$num", "boundaries": ["1", "19999"], "default": "2"}}],
        [{"_id": "1", "count": 3}, {"_id": "2", "count": 6}],
        _SIMPLE,
    ),
    create={"collation": _NUMERIC},
)


# jstests/aggregation/sources/replaceRoot/use_cases.js
# Ported: both assertions ($replaceRoot and $replaceWith, then $sortByCount).
cases(
    "sources/replaceRoot/use_cases.js",
    [
        {"_id": 0, "comments": [{"user_id": "x", "comment": "foo"}, {"user_id": "y", "comment": "bar"}]},
        {"_id": 1, "comments": [{"user_id": "y", "comment": "bar again"}]},
    ],
    *[
        (
            [{"$unwind": "$comments"}, stage, {"$sortByCount": "$user_id"}],
            [{"_id": "y", "count": 2}, {"_id": "x", "count": 1}],
        )
        for stage in ({"$replaceRoot": {"newRoot": "$comments"}}, {"$replaceWith": "$comments"})
    ],
)

# jstests/aggregation/sources/lookup/lookup_null_semantics.js
# Ported: the assertArrayEq without and with the foreign index {b: 1} (the undefined documents left
# out: pymongo cannot write undefined).
_LOOKUP_B = {"$lookup": {"from": "f", "localField": "a", "foreignField": "b", "as": "lookupResults"}}
_NULL_FOREIGN = (
    {"_id": 0},
    {"_id": 1, "b": None},
    {"_id": 3, "b": 9},
    {"_id": 4, "b": [None, 9]},
    {"_id": 5, "b": 42},
    {"_id": 7, "b": [9, 10]},
)
_NULLISH = [{"_id": 0}, {"_id": 1, "b": None}, {"_id": 4, "b": [None, 9]}]
for _foreign_indexes in ((), ("b",)):
    cases(
        "sources/lookup/lookup_null_semantics.js",
        [{"_id": 0}, {"_id": 1, "a": None}, {"_id": 2, "a": 9}, {"_id": 3, "a": [None, 9]}],
        (
            [_LOOKUP_B],
            [
                {"_id": 0, "lookupResults": _NULLISH},
                {"_id": 1, "a": None, "lookupResults": _NULLISH},
                {
                    "_id": 2,
                    "a": 9,
                    "lookupResults": [{"_id": 3, "b": 9}, {"_id": 4, "b": [None, 9]}, {"_id": 7, "b": [9, 10]}],
                },
                {
                    "_id": 3,
                    "a": [None, 9],
                    "lookupResults": [
                        *_NULLISH[:2],
                        {"_id": 3, "b": 9},
                        {"_id": 4, "b": [None, 9]},
                        {"_id": 7, "b": [9, 10]},
                    ],
                },
            ],
            {"any_order": True},
        ),
        foreign=_NULL_FOREIGN,
        foreign_indexes=_foreign_indexes,
    )


# jstests/aggregation/sources/lookup/lookup_array_semantics.js
# Ported: every runTest but the three with undefined in the foreign record (pymongo cannot write it).
def _matched_ids(local_field: str, foreign_field: str) -> list[dict[str, Any]]:
    lookup = {"$lookup": {"from": "f", "localField": local_field, "foreignField": foreign_field, "as": "matched"}}
    return [lookup, {"$match": {"matched.0": {"$exists": True}}}]


_EMPTY_LOCALS: list[tuple[int, Any]] = [
    (11, None),
    (12, []),
    (13, [None]),
    (14, [None, 1]),
    (15, 1),
    (16, [[[]]]),
    (17, [1, 2]),
]
_ARRAY_RUNS: list[tuple[Any, Any, Any, Any, Any]] = [
    (
        [
            {"_id": i, "a": a}
            for i, a in [
                (0, 1),
                (1, [1]),
                (2, [1, 2, 3]),
                (3, [1, [2, 3]]),
                (4, [1, [1, 2]]),
                (5, [1, 2, 1]),
                (10, [[1]]),
                (11, [[1, 2], 3]),
                (12, 3),
                (13, [2, 3]),
                (14, {"b": 1}),
            ]
        ],
        "a",
        {"_id": 0, "b": 1},
        "b",
        [0, 1, 2, 3, 4, 5],
    ),
    (
        [
            {"_id": i, "a": a}
            for i, a in [(0, 1), (1, 2), (2, [1]), (3, [1, 3]), (4, [3, 2]), (10, 3), (11, [[1]]), (12, [3, 4])]
        ],
        "a",
        {"_id": 0, "b": [1, 2]},
        "b",
        [0, 1, 2, 3, 4],
    ),
    (
        [
            {"_id": i, "a": a}
            for i, a in [(0, [[1, 2], 4]), (1, [[1, 2]]), (10, [1, 2]), (11, [[[1, 2]]]), (12, [[1, 2, 3]])]
        ],
        "a",
        {"_id": 0, "b": [[1, 2], 3]},
        "b",
        [0, 1],
    ),
    (
        [
            {"_id": i, "a": a}
            for i, a in [
                (0, [{"x": 1}, {"x": 2}]),
                (1, [{"x": [1, 2]}]),
                (2, {"x": 1}),
                (3, {"x": [1, 2]}),
                (10, [{"x": 2}, {"x": 3}]),
                (11, 1),
                (12, [1]),
                (13, [[1]]),
                (14, [{"y": 1}]),
            ]
        ],
        "a.x",
        {"_id": 0, "b": 1},
        "b",
        [0, 1, 2, 3],
    ),
    (
        [
            {"_id": i, "a": a}
            for i, a in [
                (0, [{"x": 1}, {"x": 3}]),
                (1, [{"x": [1, 3]}]),
                (2, {"x": 1}),
                (3, {"x": [1, 2]}),
                (10, 1),
                (11, [1]),
                (12, [{"x": 3}]),
                (13, [{"y": 1}]),
            ]
        ],
        "a.x",
        {"_id": 0, "b": [1, 2]},
        "b",
        [0, 1, 2, 3],
    ),
    (
        [
            {"_id": i, "a": a}
            for i, a in [(10, [{"x": 1}, {"x": 2}]), (11, [{"x": [1, 2]}]), (12, {"x": [1, 2]}), (13, [1, 2])]
        ],
        "a.x",
        {"_id": 0, "b": [[1, 2], 3]},
        "b",
        [],
    ),
    (
        [
            {"_id": i, "a": a}
            for i, a in [
                (0, 1),
                (1, 2),
                (2, [1]),
                (3, [1, 3]),
                (4, [3, 2]),
                (5, [[1, 2], 3]),
                (10, 4),
                (11, [[1]]),
                (12, [3, 4]),
            ]
        ],
        "a",
        {"_id": 0, "b": [{"x": 1}, {"x": 2}]},
        "b.x",
        [0, 1, 2, 3, 4],
    ),
    (
        [
            {"_id": 0, "a": [[]]},
            {"_id": 1, "a": [[], 1]},
            {"_id": 10},
            *({"_id": i, "a": a} for i, a in _EMPTY_LOCALS),
        ],
        "a",
        {"_id": 0, "b": []},
        "b",
        [0, 1],
    ),
    (
        [{"_id": i, "a": a} for i, a in [(0, []), (10, [[]]), (11, [[], 1]), (12, [1])]],
        "a",
        {"_id": 0, "b": None},
        "b",
        [0],
    ),
    (
        [{"_id": i, "a": a} for i, a in [(0, []), (10, [[]]), (11, [[], 1]), (12, [1])]],
        "a",
        {"_id": 0, "no_b": True},
        "b",
        [0],
    ),
    (
        [
            {"_id": i, "a": a}
            for i, a in [(0, [{"x": [[]]}]), (10, [{"y": 1}, {"y": 2}]), (11, [[]]), (12, [{"x": []}]), (13, [])]
        ],
        "a.x",
        {"_id": 0, "b": []},
        "b",
        [0],
    ),
    (
        [
            *(
                {"_id": i, "a": a}
                for i, a in [(0, [{"y": 1}, {"y": 2}]), (1, [{"x": []}]), (2, []), (3, [[]]), (4, {"x": []})]
            ),
            {"_id": 5, "x": [1, 2]},
            *(
                {"_id": i, "a": a}
                for i, a in [(10, [{"x": 1}, {"y": 2}]), (11, [{"x": []}, {"x": 1}]), (12, [{"x": [[]]}])]
            ),
        ],
        "a.x",
        {"_id": 0, "b": None},
        "b",
        [0, 1, 2, 3, 4, 5],
    ),
    (
        [
            {"_id": i, "a": a}
            for i, a in [
                (0, [{"x": 1}, {"x": 2}]),
                (1, [{"x": [2, 3, 1]}]),
                (10, [{"x": 2}, {"x": 1}]),
                (11, [{"x": [2, 3]}]),
                (12, {"x": 1}),
                (13, {"x": [1, 2]}),
                (14, [{"y": 1}, {"x": 1}]),
            ]
        ],
        "a.0.x",
        {"_id": 0, "b": 1},
        "b",
        [0, 1],
    ),
    (
        [
            *(
                {"_id": i, "a": a}
                for i, a in [(0, {"x": 1}), (1, {"x": [1, 2]}), (2, [{"y": 1}, {"x": 1}]), (3, []), (4, [[]])]
            ),
            {"_id": 5, "x": [1, 2]},
            *({"_id": i, "a": a} for i, a in [(10, [{"x": 1}, {"x": 2}]), (11, [{"x": [1, 2]}])]),
        ],
        "a.0.x",
        {"_id": 0, "b": None},
        "b",
        [0, 1, 2, 3, 4, 5],
    ),
]
for _local, _lf, _foreign, _ff, _ids in _ARRAY_RUNS:
    cases(
        "sources/lookup/lookup_array_semantics.js",
        _local,
        (_matched_ids(_lf, _ff), _ids, {"pick": "_id", "any_order": True}),
        foreign=(_foreign,),
    )

# jstests/aggregation/sources/lookup/lookup_numeric_field.js
# Ported: every testLookupFieldTraversal result (count 1 or no result; the transformBy explain check
# and the classic-only "00" cases left out), and the $graphLookup ones.
_INNER = ({"y": 3, "z": 4},)
_LOOKUP_PATHS: list[tuple[str, Any, bool]] = [
    ("a", {"a": 3}, True),
    ("a", {"a": 1}, False),
    ("a.b", {"a": {"b": 3}}, True),
    ("a.b.0", {"a": {"b": [3]}}, True),
    ("a.0", {"a": [3, 2, 1]}, True),
    ("a.0", {"a": {"0": 3, "1": 2, "3": 1}}, True),
    ("a.1", {"a": [3, 2, 1]}, False),
    ("a.3", {"a": [3, 2, 1]}, False),
    ("b.3", {"a": [3, 2, 1]}, False),
    ("c.1.0", {"c": [0, [3, 4, 3], [1, 2]]}, True),
    ("c.1.2", {"c": [0, [3, 4, 3], [1, 2]]}, True),
    ("c.0.0", {"c": [0, [3, 4, 3], [1, 2]]}, False),
    ("b.2.1", {"a": [0, [3, 4, 3], [1, 2]]}, False),
    ("a.2.b.1", {"a": [{}, {"b": [2]}, {"b": [1, 3]}]}, True),
    ("a.2.b.1", {"a": {"2": {"b": [1, 3]}}}, True),
    ("a.2.b.2", {"a": [{}, {"b": [2]}, {"b": [1, 3]}]}, False),
    ("a.1.b.1", {"a": [{}, {"b": [2]}, {"b": [1, 3]}]}, False),
    ("a.1.b.2", {"a": [{}, {"b": [2]}, {"b": [1, 3]}]}, False),
    ("a.b.c.1", {"a": {"b": {"c": [1, 3]}}}, True),
    ("a.00", {"a": {"00": 3}}, True),
    ("a.b.01", {"a": {"b": {"01": 3}}}, True),
    ("a.00.b", {"a": {"00": {"b": 3}}}, True),
]
for _field, _doc, _hit in _LOOKUP_PATHS:
    cases(
        "sources/lookup/lookup_numeric_field.js",
        [_doc],
        (
            [
                {"$lookup": {"from": "f", "localField": _field, "foreignField": "y", "as": "docs"}},
                {"$match": {"docs.0.z": 4}},
                {"$count": "count"},
            ],
            [{"count": 1}] if _hit else [],
        ),
        foreign=_INNER,
    )
_GRAPH_PATHS: list[tuple[str, Any, bool]] = [
    ("$a", {"a": 3}, True),
    ("$a", {"a": 1}, False),
    ("$a.b", {"a": {"b": 3}}, True),
    ("$a.b.0", {"a": {"b": {"0": 3}}}, True),
    ("$a.b.0", {"a": {"b": [{"0": 3}]}}, True),
    ("$a.b.0", {"a": {"b": [3]}}, False),
    ("$a.0", {"a": {"0": 3}}, True),
    ("$a.0", {"a": {"0": 2}}, False),
    ("$a.0", {"a": [3, 2, 1]}, False),
    ("$a.0", {"a": [{"0": 3}]}, True),
    ("$a.0", {"a": [[{"0": 3}]]}, False),
    ("$c.1.0", {"c": {"1": {"0": 3}}}, True),
    ("$c.1.0", {"c": {"01": {"0": 3}}}, False),
    ("$c.1.0", {"c": {"1": {"00": 3}}}, False),
    ("$c.1.0", {"c": {"0": {"1": 3}}}, False),
    ("$a.2.b.1", {"a": {"2": {"b": {"1": 3}}}}, True),
    ("$a.2.b.1", {"a": [{}, {"b": [2]}, {"b": [1, 3]}]}, False),
    ("$a.00", {"a": {"00": 3}}, True),
    ("$a.00", {"a": [{"00": 3}]}, True),
    ("$a.00", {"a": {"00": [3]}}, True),
    ("$a.00", {"a": [{"00": [3]}]}, False),
    ("$a.00", {"a": [3]}, False),
]
for _start, _doc, _hit in _GRAPH_PATHS:
    _graph = {
        "from": "f",
        "startWith": _start,
        "connectFromField": "z",
        "connectToField": "y",
        "maxDepth": 0,
        "as": "docs",
    }
    cases(
        "sources/lookup/lookup_numeric_field.js",
        [_doc],
        ([{"$graphLookup": _graph}, {"$match": {"docs.0.z": 4}}, {"$count": "count"}], [{"count": 1}] if _hit else []),
        foreign=_INNER,
    )


# jstests/aggregation/expressions/ifnull.js
# Ported: every assertError / assertResult / assertQueryResult that does not use undefined (pymongo
# cannot write it).
_IFNULL_DOC = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "my_false": False, "my_str": "", "my_null": None,
    "my_obj": {}, "my_list": [], "my_list_of_docs": [{"z": 1}, {"z": 2}],
}  # fmt: skip


def _ifnull(spec: Any) -> list[dict[str, Any]]:
    return [{"$project": {"_id": 0, "a": {"$ifNull": spec}}}]


_IFNULL_RESULTS: list[tuple[Any, list[Any]]] = [
    (1, ["$one", "$two"]), (2, ["$two", "$one"]), (False, ["$my_false", "$one"]), ("", ["$my_str", "$one"]),
    ([], ["$my_list", "$one"]), ({}, ["$my_obj", "$one"]), (1, ["$one", "$my_null"]), (1, ["$one", "$two", "$three"]),
    (1, ["$one", "$two", "$my_null"]), (1, ["$one", "$my_null", "$two"]), (1, ["$one", "$two", None]),
    (2, ["$my_null", "$two"]), (1, ["$my_null", "$one"]), (None, ["$my_null", "$my_null"]),
    (False, ["$my_null", "$my_false", "$one"]), (False, ["$my_null", "$my_null", "$my_false"]),
    (None, ["$my_null", "$my_null", "$my_null", "$my_null"]), (None, ["$nonexistent", "$nonexistent", None]),
    (None, ["$my_null", "$my_null", None]), (2, [{"$add": ["$one", "$one"]}, "$three"]),
    (6, ["$missingField", {"$multiply": ["$two", "$three"]}]), (2, [{"$add": ["$one", "$one"]}, "$three", "$zero"]),
    (1, [None, "$one"]), (1, [None, None, "$one"]), (None, [None, None]), (2, [None, 2]), (2, [2, "$one"]), (2, [2, 3]),
    (3, ["$my_null", None, "$three"]), (3, ["$my_null", 3, "$one"]),
]  # fmt: skip
cases(
    "expressions/ifnull.js",
    [_IFNULL_DOC],
    *[(_ifnull(spec), [{"a": expected}]) for expected, spec in _IFNULL_RESULTS],
    *[(_ifnull(spec), None, {"error": ANY_ERROR}) for spec in ([], ["$one"], ["$my_null"])],
    (_ifnull([{"$divide": ["$one", "$zero"]}, "$zero"]), None, {"error": ANY_ERROR}),
    (_ifnull([{"$mod": ["$one", "$zero"]}, "$zero"]), None, {"error": ANY_ERROR}),
)
_NESTED_IFNULL = ["$a", {"$ifNull": ["$b", {"$ifNull": ["$c", "$d"]}]}]
cases("expressions/ifnull.js", [{"d": "foo"}], (_ifnull(_NESTED_IFNULL), [{"a": "foo"}]))
cases(
    "expressions/ifnull.js",
    [{"d": "foo", "b": "bar"}],
    (_ifnull(_NESTED_IFNULL), [{"a": "bar"}]),
    (_ifnull([*_NESTED_IFNULL, "$e"]), [{"a": "bar"}]),
)
cases(
    "expressions/ifnull.js",
    [{"three": 3, "my_list_of_docs": [{"z": 1}, {"z": 2}]}],
    (
        [
            {"$set": {"my_list_of_docs": {"$ifNull": [None, {"b": "$three"}]}}},
            {"$project": {"_id": 0, "my_list_of_docs": 1, "three": 1}},
        ],
        [{"three": 3, "my_list_of_docs": {"b": 3}}],
    ),
)

# jstests/aggregation/accumulators/avg_ignore_missing.js
# Ported: both assertions.
for _one, _four in ((1, 4), (Int64(1), Int64(4))):
    cases(
        "accumulators/avg_ignore_missing.js",
        [{"a": _one}, {"a": _four}, {"b": _one}],
        ([{"$group": {"_id": None, "avg": {"$avg": "$a"}}}], [{"_id": None, "avg": 2.5}]),
    )

# jstests/aggregation/accumulators/avg_null_no_input.js
# Ported: every assertion (null for no numeric input; missing, null and strings ignored).
cases(
    "accumulators/avg_null_no_input.js",
    [{"a": 1, "b": 2, "c": "string", "d": None}],
    *[([{"$group": {"_id": "$a", "avg": {"$avg": f}}}], [{"_id": 1, "avg": None}]) for f in ("$missing", "$c", "$d")],
)
cases(
    "accumulators/avg_null_no_input.js",
    [{"a": 1, "b": 2, "c": "string", "d": None}, {"a": 1, "d": "string"}, {"a": 1}],
    ([{"$group": {"_id": "$a", "avg": {"$avg": "$d"}}}], [{"_id": 1, "avg": None}]),
)
_AVG_B = [{"$group": {"_id": "$a", "avg": {"$avg": "$b"}}}]
for _bs, _avg in (([2], 2), ([2, 4], 3), ([2, 4, -6], 0)):
    cases("accumulators/avg_null_no_input.js", [{"a": 1, "b": b} for b in _bs], (_AVG_B, [{"_id": 1, "avg": _avg}]))
cases(
    "accumulators/avg_null_no_input.js",
    [*({"a": 1, "b": b} for b in (2, 4, -6, "string", None)), {"a": 1}],
    (_AVG_B, [{"_id": 1, "avg": 0}]),
)


# jstests/aggregation/expressions/in.js
# Ported: every testExpression's aggregate result (the collection-collation one and the hashed-index
# one included; the find-form checks left out) and all seven assertErrorCode.
def _in_case(element: Any, array: list[Any], included: bool, **options: Any) -> None:
    pipeline = [{"$project": {"_id": 0, "included": {"$in": ["$elementField", {"$literal": array}]}}}]
    cases("expressions/in.js", [{"elementField": element}], (pipeline, [{"included": included}]), **options)


_IN_RUNS: list[tuple[Any, list[Any], bool]] = [
    (1, [1, 2, 3], True), ("A", ["a", "A", "a"], True), ({"a": 1}, [{"b": 1}, 2], False), ({"a": 1}, [{"a": 1}], True),
    ([1, 2], [[2, 1]], False), ([1, 2], [[1, 2]], True), (7, [3, 5, 7, 7, 9], True), (7, [3, 5, 7, 9, 9], True),
    (7, [3, 10, 5, 7, 8, 9], True), (7, [7, 10, 7, 10, 2, 5, 3, 7], True), (8, [10, 7, 2, 5, 3], False), (1, [], False),
    ("abc", [Regex("a"), Regex("b"), Regex("c")], False), (Regex("a"), ["a", "b", "c"], False), ([], [1, 2, 3], False),
    ([1], [1, 2, 3], False), ([1, 2], [1, 2, 3], False),
]  # fmt: skip
for _element, _array, _included in _IN_RUNS:
    _in_case(_element, _array, _included)
_in_case("abcd", ["aBcD", "ABCD"], True, create={"collation": {"locale": "en_US", "strength": 2}})
_in_case(5, [10, 7, 2, 5, 3], True, indexes=([("elementField", "hashed")],))
cases(
    "expressions/in.js",
    [{}],
    *[
        ([{"$project": {"included": {"$in": spec}}}], None, {"error": code})
        for spec, code in [
            ([[1, 2], 1], 40081),
            ([1, None], 40081),
            ([1, "$notAField"], 40081),
            (None, 16020),
            ([1], 16020),
            ([], 16020),
            ([1, 2, 3], 16020),
        ]
    ],  # fmt: skip
)

# jstests/aggregation/expressions/array_elem_at.js
# Ported: every assertion.
_ELEM_AT: list[tuple[Any, list[dict[str, Any]]]] = [
    (2, [{"x": 3}]), (1.0, [{"x": 2}]), (Decimal128("2.0"), [{"x": 3}]), (-1, [{"x": 5}]), (-5, [{"x": 1}]),
    (5, [{}]), (2**31 - 1, [{}]), (Int64(2**31 - 1), [{}]), (-6, [{}]), (-(2**31), [{}]), (Int64(-(2**31)), [{}]),
    (None, [{"x": None}]),
]  # fmt: skip
cases(
    "expressions/array_elem_at.js",
    [{"a": [1, 2, 3, 4, 5]}],
    *[([{"$project": {"_id": 0, "x": {"$arrayElemAt": ["$a", i]}}}], out) for i, out in _ELEM_AT],
    ([{"$project": {"_id": 0, "x": {"$arrayElemAt": [None, 4]}}}], [{"x": None}]),
    *[
        ([{"$project": {"x": {"$arrayElemAt": spec}}}], None, {"error": code})
        for spec, code in [
            ([["one", "arg"]], 16020),
            (["one", 2], 28689),
            ([[1, 2], "2"], 28690),
            ([[1, 2], 1.5], 28691),
            ([[1, 2], Decimal128("1.5")], 28691),
            ([[1, 2], 2.0**32], 28691),
            ([[1, 2], -(2.0**31) - 1], 28691),
        ]
    ],  # fmt: skip
)

# jstests/aggregation/expressions/cond.js
# Ported: every assertError and assertResult (undefined as a fourth argument left out), and the nested case.
_COND_ERRORS: list[tuple[Any, int]] = [
    ([], 16020), ([1], 16020), ([False], 16020), ([1, 1], 16020), ([1, 1, None, 1], 16020),
    ({"else": 1, "then": 1}, 17080), ({"if": 1, "else": 1}, 17081), ({"if": 1, "then": 1}, 17082),
    ({"asdf": 1, "then": 1}, 17083),
]  # fmt: skip
_COND_RESULTS: list[tuple[Any, Any]] = [
    (1, [True, 1, 2]), (2, [False, 1, 2]), (1, {"if": True, "then": 1, "else": 2}),
    (1, {"if": True, "else": 2, "then": 1}), (1, {"then": 1, "if": True, "else": 2}),
    (1, {"then": 1, "else": 2, "if": True}), (1, {"else": 2, "then": 1, "if": True}),
    (1, {"else": 2, "if": True, "then": 1}), (1, [{"$and": []}, {"$add": [1]}, {"$add": [1, 1]}]),
    (2, [{"$or": []}, {"$add": [1]}, {"$add": [1, 1]}]), ("a", [1, "a", "b"]), ("a", ["", "a", "b"]),
    ("b", [0, "a", "b"]),
]  # fmt: skip
cases(
    "expressions/cond.js",
    [{}],
    *[([{"$project": {"a": {"$cond": spec}}}], None, {"error": code}) for spec, code in _COND_ERRORS],
    *[([{"$project": {"_id": 0, "a": {"$cond": spec}}}], [{"a": out}]) for out, spec in _COND_RESULTS],
)
cases(
    "expressions/cond.js",
    [{"t": True, "f": False, "x": "foo", "y": "bar"}],
    ([{"$project": {"_id": 0, "a": {"$cond": ["$t", "$x", "$y"]}}}], [{"a": "foo"}]),
    ([{"$project": {"_id": 0, "a": {"$cond": ["$f", "$x", "$y"]}}}], [{"a": "bar"}]),
)
_MEAL = {
    "$cond": [
        {"$eq": ["$noonSense", "am"]},
        {"$cond": [{"$eq": ["$mealCombined", "yes"]}, "brunch", "breakfast"]},
        {"$cond": [{"$eq": ["$mealCombined", "yes"]}, "linner", "dinner"]},
    ]
}
cases(
    "expressions/cond.js",
    [{"noonSense": n, "mealCombined": m} for n, m in (("am", "no"), ("am", "yes"), ("pm", "yes"), ("pm", "no"))],
    (
        [{"$project": {"meal": _MEAL}}, {"$sort": {"meal": 1}}],
        ["breakfast", "brunch", "dinner", "linner"],
        {"pick": "meal"},
    ),
)


# jstests/aggregation/sources/count.js
# Ported: every assertErrorCode and every result (1,000 documents; the $match then $count); the
# "_id" field refusal (9039800) is MongoDB 8.1's, left out.
cases(
    "sources/count.js",
    [],
    *[
        ([{"$count": spec}], None, {"error": code})
        for spec, code in [
            (1, 40156),
            ("", 40157),
            ("$x", 40158),
            ("te\x00st", 40159),
            ("test.string", 40160),
        ]
    ],
)
cases(
    "sources/count.js",
    [{"a": i, "condition": i % 2} for i in range(1000)],
    *[([{"$count": name}], [{name: 1000}]) for name in ("test", "myCount", "quantity")],
    ([{"$match": {"condition": 1}}, {"$count": "quantity"}], [{"quantity": 500}]),
)

# jstests/aggregation/expressions/is_array.js
# Ported: the assertion (the undefined document left out).
_IS_ARRAY: list[tuple[Any, bool]] = [
    (0, False), ("0", False), (ObjectId(), False), (Int64(0), False), ({"y": []}, False), (None, False),
    (float("nan"), False), ([], True), ([0], True), (["0"], True),
]  # fmt: skip
cases(
    "expressions/is_array.js",
    [{"_id": i, "x": x} for i, (x, _) in enumerate(_IS_ARRAY)],
    (
        [{"$sort": {"_id": 1}}, {"$project": {"isArray": {"$isArray": "$x"}}}],
        [{"_id": i, "isArray": flag} for i, (_, flag) in enumerate(_IS_ARRAY)],
    ),
)

# jstests/aggregation/expressions/concat.js
# Ported: both assertions (as an aggregate $project; the jstest runs them as find projections).
cases(
    "expressions/concat.js",
    [{}],
    ([{"$project": {"_id": False, "a": {"$concat": [{"$toLower": "$b"}]}}}], [{"a": ""}]),
    ([{"$project": {"_id": False, "a": {"$concat": []}}}], [{"a": ""}]),
)

# jstests/aggregation/expressions/floor_ceil.js
# Ported: every testOp and both assertErrorCode.
_ROUNDING: list[tuple[str, Any, Any]] = [
    (op, value, out)
    for op, results in (
        ("$ceil", [(Int64(4), Int64(4)), (float("nan"), float("nan")), (float("inf"), float("inf")),
                   (float("-inf"), float("-inf")), (None, None), (-2.0, -2.0), (0.9, 1.0), (-1.2, -1.0)]),
        ("$floor", [(Int64(4), Int64(4)), (float("nan"), float("nan")), (float("inf"), float("inf")),
                    (float("-inf"), float("-inf")), (None, None), (-2.0, -2.0), (0.9, 0.0), (-1.2, -2.0)]),
    )
    for value, out in results
]  # fmt: skip
cases(
    "expressions/floor_ceil.js",
    [{}],
    *[([{"$project": {"_id": 0, "result": {op: value}}}], [{"result": out}]) for op, value, out in _ROUNDING],
    *[([{"$project": {"a": {op: "string"}}}], None, {"error": 28765}) for op in ("$ceil", "$floor")],
)


# jstests/aggregation/expressions/all_elements_true.js
# Ported: all seven testOp.
cases(
    "expressions/all_elements_true.js",
    [{"_id": 0, "allTrue": [True, True], "someTrue": [True, False], "noneTrue": [0, False]}],
    *[
        ([{"$project": {"_id": 0, "result": {"$allElementsTrue": arg}}}], [{"result": out}])
        for arg, out in [
            ({"$literal": [True, True]}, True),
            ({"$literal": [1, True]}, True),
            ({"$literal": [True, 0]}, False),
            ({"$literal": [True, 1, False]}, False),
            ("$allTrue", True),
            ("$someTrue", False),
            ("$noneTrue", False),
        ]
    ],  # fmt: skip
)

# jstests/aggregation/expressions/let.js
# Ported: every testExpr (in $project and summed in $group), the $$ROOT/$$CURRENT projections and
# pushes, the seven FailedToParse name checks and the 17276 use of a sibling variable.
_SUM_VARS = {"$sum": ["$$var1", "$$var2"]}
_X_MINUS_Y = {"$subtract": ["$$x", "$$y"]}
_LET_EXPRESSIONS: list[tuple[Any, int]] = [
    ("$two", 2), ("$$CURRENT.two", 2), ("$$ROOT.two", 2), ({"$add": ["$two", "$$CURRENT.three"]}, 5),
    ({"$add": ["$$CURRENT.two", "$$ROOT.nested.four"]}, 6), ({"$let": {"vars": {"a": 10}, "in": "$$a"}}, 10),
    ({"$let": {"vars": {"a": "$zero"}, "in": "$$a"}}, 0),
    ({"$let": {"vars": {"a": {"$add": ["$one", "$two"]}, "b": 10}, "in": {"$multiply": ["$$a", "$$b"]}}}, 30),
    ({"$let": {"vars": {"var1": 1}, "in": {"$let": {"vars": {"var2": "$$var1"}, "in": _SUM_VARS}}}}, 2),
    ({"$let": {"vars": {"var1": "$one"}, "in": {"$let": {"vars": {"var2": "$$var1", "var1": 3}, "in": _SUM_VARS}}}}, 4),
    ({"$let": {"vars": {"CURRENT": "$$ROOT.nested"}, "in": {"$multiply": ["$four", "$$ROOT.two"]}}}, 8),
    ({"$let": {"vars": {"CURRENT": "$$CURRENT.nested"}, "in": {"$multiply": ["$four", "$$ROOT.two"]}}}, 8),
    ({"$let": {"vars": {"CURRENT": "$nested"}, "in": {"$multiply": ["$four", "$$ROOT.two"]}}}, 8),
    ({"$let": {"vars": {"CURRENT": {"$const": {"ten": 10}}}, "in": {"$multiply": ["$ten", "$$ROOT.two"]}}}, 20),
    ({"$let": {"vars": {"CURRENT": "$three"}, "in": {"$multiply": ["$$CURRENT", "$$ROOT.two"]}}}, 6),
    ({"$let": {"vars": {"x": 6, "y": 10}, "in": {"$let": {"vars": {"x": "$$y", "y": "$$x"}, "in": _X_MINUS_Y}}}}, 4),
    ({"$let": {"vars": {"日本語": 10}, "in": "$$日本語"}}, 10),
]  # fmt: skip
cases(
    "expressions/let.js",
    [{"zero": 0, "one": 1, "two": 2, "three": 3, "nested": {"four": 4}}],
    *[
        item
        for expression, out in _LET_EXPRESSIONS
        for item in (
            ([{"$project": {"_id": 0, "output": expression}}], [{"output": out}]),
            ([{"$group": {"_id": 0, "res": {"$sum": expression}}}], [{"_id": 0, "res": out}]),
        )
    ],
    *[
        ([{"$project": {"a": spec}}], None, {"error": 9})
        for spec in [
            {"$let": {"vars": {"ROOT": 1}, "in": "$$ROOT"}},
            {"$let": {"vars": {"FOO": 1}, "in": "$$FOO"}},
            {"$let": {"vars": {"_underbar": 1}, "in": "$$FOO"}},
            {"$let": {"vars": {"a.b": 1}, "in": "$$FOO"}},
            {"$let": {"vars": {"a b": 1}, "in": "$$FOO"}},
            "$$_underbar",
            "$$with spaces",
        ]
    ],  # fmt: skip
    (
        [{"$project": {"output": {"$let": {"vars": {"var1": "$one", "var2": "$$var1"}, "in": "$$var1"}}}}],
        None,
        {"error": 17276},
    ),
)
cases(
    "expressions/let.js",
    [{"_id": "obj"}],
    ([{"$project": {"_id": 0, "obj": "$$ROOT"}}], [{"obj": {"_id": "obj"}}]),
    ([{"$project": {"_id": 0, "obj": "$$CURRENT"}}], [{"obj": {"_id": "obj"}}]),
    ([{"$group": {"_id": 0, "objs": {"$push": "$$ROOT"}}}], [{"_id": 0, "objs": [{"_id": "obj"}]}]),
    ([{"$group": {"_id": 0, "objs": {"$push": "$$CURRENT"}}}], [{"_id": 0, "objs": [{"_id": "obj"}]}]),
)

# jstests/aggregation/expressions/abs.js
# Ported: the results for every type (the undefined document left out) and all four assertErrorCode.
_ABS: list[tuple[Any, Any]] = [
    (5, 5), (-5, 5), (5.5, 5.5), (-5.5, 5.5), (Int64(5), Int64(5)), (Int64(-5), Int64(5)), (0.0, 0.0), (-0.0, 0.0),
    (0, 0), (-(2**31), Int64(2**31)), (-(2.0**31), 2.0**31), (Int64(2**60 + 1), Int64(2**60 + 1)),
    (Int64(-(2**60) - 1), Int64(2**60 + 1)), (None, None), (float("nan"), float("nan")),
]  # fmt: skip
cases(
    "expressions/abs.js",
    [*({"_id": i, "a": a} for i, (a, _) in enumerate(_ABS)), {"_id": len(_ABS)}],
    (
        [{"$project": {"a": {"$abs": "$a"}}}, {"$sort": {"_id": 1}}],
        [*({"_id": i, "a": out} for i, (_, out) in enumerate(_ABS)), {"_id": len(_ABS), "a": None}],
    ),
    ([{"$project": {"a": {"$abs": "string"}}}], None, {"error": 28765}),
    ([{"$project": {"a": {"$abs": Int64(-(2**63))}}}], None, {"error": 28680}),
)
cases(
    "expressions/abs.js", [{"_id": 0, "a": "string"}], ([{"$project": {"a": {"$abs": "$a"}}}], None, {"error": 28765})
)
cases(
    "expressions/abs.js",
    [{"_id": 0, "a": Int64(-(2**63))}],
    ([{"$project": {"a": {"$abs": "$a"}}}], None, {"error": 28680}),
)


# jstests/aggregation/sources/addFields/use_cases.js
# Ported: the standalone assertion ($addFields equals a $project of the same computed field and the
# included ones); the sharded-cluster half left out.
_I23 = [{"_id": i, "2i": i * 2, "3i": i * 3} for i in range(10)]
cases(
    "sources/addFields/use_cases.js",
    _I23,
    *[
        (pipeline, [{**d, "6i^2": d["2i"] * d["3i"]} for d in _I23], {"any_order": True})
        for pipeline in (
            [{"$project": {"2i": 1, "3i": 1, "6i^2": {"$multiply": ["$2i", "$3i"]}}}],
            [{"$addFields": {"6i^2": {"$multiply": ["$2i", "$3i"]}}}],
        )
    ],
)

# jstests/aggregation/expressions/indexof_array.js
# Ported: every testExpression and all five assertErrorCode.
_INDEX_OF: list[tuple[list[Any], Any]] = [
    ([[1, 2, 3], 2], 1), ([[1, 2, 3], 4], -1), ([[1, 2, 3, 2, 1], 2, 2], 3), ([[1, 2, 3, 4, 5], 4, 0, 3], -1),
    ([[1, 2, 3], 2, 1], 1), ([[1, 2, 3], 2, 0, 10], 1), ([[1, 2, 3, 2, 1, 2, 3], 2, 2, 4], 3), ([None, 2], None),
    ([[1, 2, 3], 2, 3], -1), ([[1, 2, 3], 2, 3, 1], -1), ([[1, 2, 3], 2, 3, 3], -1), ([[1, 2, 3], 2, 3, 5], -1),
    ([[], 1], -1),
]  # fmt: skip
cases(
    "expressions/indexof_array.js",
    [{}],
    *[([{"$project": {"_id": 0, "output": {"$indexOfArray": spec}}}], [{"output": out}]) for spec, out in _INDEX_OF],
    *[
        ([{"$project": {"output": {"$indexOfArray": spec}}}], None, {"error": code})
        for spec, code in [
            (["string", "s"], 40090),
            ([[1, 2, 3], 2, "bad"], 40096),
            ([[1, 2, 3], 2, 0, "bad"], 40096),
            ([[1, 2, 3], 2, -1], 40097),
            ([[1, 2, 3], 2, 1, -1], 40097),
        ]
    ],  # fmt: skip
)


# jstests/aggregation/expressions/map.js
# Ported: every test and assertErrorCode.
_MAP_DOC = {
    "simple": [1, 2, 3, 4],
    "nested": [{"a": 1}, {"a": 2}],
    "mixed": [{"a": 1}, {}, {"a": 2}, {"a": None}],
    "notArray": 1,
    "null": None,
}
_MAPS: list[tuple[dict[str, Any], Any]] = [
    ({"input": "$simple", "as": "var", "in": "$$var"}, [1, 2, 3, 4]),
    ({"input": "$simple", "as": "var", "in": {"$add": [10, "$$var"]}}, [11, 12, 13, 14]),
    ({"input": "$simple", "in": "$$this"}, [1, 2, 3, 4]),
    ({"input": "$nested", "as": "var", "in": "$$var.a"}, [1, 2]),
    ({"input": "$nested", "as": "CURRENT", "in": "$a"}, [1, 2]),
    ({"input": "$mixed", "as": "var", "in": "$$var.a"}, [1, None, 2, None]),
    ({"input": "$null", "as": "var", "in": "$$var"}, None),
]
cases(
    "expressions/map.js",
    [_MAP_DOC],
    *[([{"$project": {"_id": 0, "res": {"$map": spec}}}], [{"res": out}]) for spec, out in _MAPS],
    *[
        ([{"$project": {"a": {"$map": spec}}}], None, {"error": code})
        for spec, code in [
            ({"input": "$simple", "as": "ROOT", "in": "$$ROOT"}, 9),
            ({"input": "$notArray", "as": "var", "in": "$$var"}, 16883),
            ({"x": 1, "input": "$simple", "as": "var", "in": "$$var"}, 16879),
            ({"as": "var", "in": "$$var"}, 16880),
            ({"input": "$simple", "as": "var"}, 16882),
            ({"input": "$simple", "in": "$$var"}, 17276),
        ]
    ],  # fmt: skip
)

# jstests/aggregation/expressions/exprs_in_arrays.js
# Ported: every assertion.
_SET = "$setIntersection"
cases(
    "expressions/exprs_in_arrays.js",
    [{"_id": 0, "a": ["foo", "bar", "baz"], "b": "bar", "c": "Baz"}],
    *[
        ([{"$project": {"_id": 0, "d": spec}}], [{"d": out}])
        for spec, out in [
            (["constant", 1], ["constant", 1]),
            (["$b"], ["bar"]),
            ([{"$toLower": "FoO"}], ["foo"]),
            (["$b", {"$toLower": "FoO"}], ["bar", "foo"]),
            (["$b", "constant", [1, {"$toLower": "FoO"}]], ["bar", "constant", [1, "foo"]]),
            ({_SET: ["$a", ["$b"]]}, ["bar"]),
            ({_SET: ["$a", [{"$toLower": "FoO"}]]}, ["foo"]),
            ({_SET: [[[1, "foo", "bar"]], [[1, {"$toLower": "FoO"}, "$b"]]]}, [[1, "foo", "bar"]]),
        ]
    ],  # fmt: skip
)
cases(
    "expressions/exprs_in_arrays.js",
    [{"_id": 1, "x": 1, "z": 2}],
    ([{"$project": {"_id": 0, "coordinate": ["$x", "$y", "$z"]}}], [{"coordinate": [1, None, 2]}]),
)

# jstests/aggregation/expressions/expression_object.js
# Ported: all six cases, as an aggregate $project (the jstest runs them as find projections).
cases(
    "expressions/expression_object.js",
    [{"_id": "doc1", "field": "val1"}],
    *[
        ([{"$project": projection}], [out])
        for projection, out in [
            ({"label1": "$fieldRef1"}, {"_id": "doc1"}),
            ({"label2": {"$eq": ["$_id", {"label21": "$fieldRef21"}]}}, {"_id": "doc1", "label2": False}),
            ({"label3": {"$eq": [{"label31": "$fieldRef31"}, "$_id"]}}, {"_id": "doc1", "label3": False}),
            (
                {"label4": {"$eq": [{"label41": "$fieldRef41"}, {"label42": "$fieldRef42"}]}},
                {"_id": "doc1", "label4": True},
            ),
            (
                {
                    "label5": {
                        "$eq": [
                            {"label51": {"$eq": ["$_id", {"label511": "$fieldRef511"}]}},
                            {"label52": {"$eq": [{"label521": "$fieldRef521"}, "$_id"]}},
                        ]
                    }
                },
                {"_id": "doc1", "label5": False},
            ),
            (
                {"label6": {"$eq": [{"label61": {"$eq": [{"label611": "$fieldRef611"}, "$_id"]}}, "$_id"]}},
                {"_id": "doc1", "label6": False},
            ),
        ]
    ],  # fmt: skip
)


# jstests/aggregation/expressions/switch.js
# Ported: every assertion (first matching branch, default, nullish cases false, a missing result left out).
_SW_ONE = "one is equal to one!"
_SW_NONE = "No case matched."
_SW_TWO = {"case": {"$eq": [2, 2]}, "then": "two is equal to two!"}
_SWITCHES: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({"branches": [{"case": {"$eq": [1, 1]}, "then": _SW_ONE}]}, {"output": _SW_ONE}),
    ({"branches": [{"case": {"$eq": [1, 1]}, "then": _SW_ONE}, _SW_TWO]}, {"output": _SW_ONE}),
    ({"branches": [{"case": {"$eq": [1, 2]}, "then": "two"}], "default": "no match."}, {"output": "no match."}),
    ({"branches": [{"case": None, "then": "Null was true!"}], "default": _SW_NONE}, {"output": _SW_NONE}),
    ({"branches": [{"case": "$missingField", "then": "Null was true!"}], "default": _SW_NONE}, {"output": _SW_NONE}),
    ({"branches": [{"case": True, "then": None}], "default": False}, {"output": None}),
    ({"branches": [{"case": True, "then": "$missingField"}], "default": False}, {}),
    ({"branches": [{"case": None, "then": False}], "default": None}, {"output": None}),
    ({"branches": [{"case": None, "then": False}], "default": "$missingField"}, {}),
]  # fmt: skip
cases(
    "expressions/switch.js",
    [{}],
    *[([{"$project": {"_id": 0, "output": {"$switch": spec}}}], [out]) for spec, out in _SWITCHES],
)

# jstests/aggregation/expressions/size.js
# Ported: both assertions.
_ARRS: list[list[Any]] = [[], [1], ["asdf", "asdfasdf"], [1, "asdf", 1234, 4.3, {"key": 23}], [3, [31, 31, 13, 13]]]
cases(
    "expressions/size.js",
    [{"_id": i, "arr": a} for i, a in enumerate(_ARRS)],
    (
        [{"$sort": {"_id": 1}}, {"$project": {"_id": 0, "length": {"$size": "$arr"}}}],
        [{"length": len(a)} for a in _ARRS],
    ),
)
cases(
    "expressions/size.js",
    [*({"_id": i, "arr": a} for i, a in enumerate(_ARRS)), {"arr": 231}],
    ([{"$project": {"_id": 0, "length": {"$size": "$arr"}}}], None, {"error": 17124}),
)


# jstests/aggregation/expressions/first_last.js
# Ported: the assertion (the undefined document left out): an empty array's $first/$last is missing,
# a nullish input's is null.
cases(
    "expressions/first_last.js",
    [
        {"_id": 0, "a": []},
        {"_id": 1, "a": ["A"]},
        {"_id": 2, "a": ["A", "B"]},
        {"_id": 3, "a": ["A", "B", "C"]},
        {"_id": 4, "a": None},
        {"_id": 6},
    ],
    (
        [{"$sort": {"_id": 1}}, {"$addFields": {"f": {"$first": "$a"}, "l": {"$last": "$a"}}}],
        [
            {"_id": 0, "a": []},
            {"_id": 1, "a": ["A"], "f": "A", "l": "A"},
            {"_id": 2, "a": ["A", "B"], "f": "A", "l": "B"},
            {"_id": 3, "a": ["A", "B", "C"], "f": "A", "l": "C"},
            {"_id": 4, "a": None, "f": None, "l": None},
            {"_id": 6, "f": None, "l": None},
        ],
    ),
)

# jstests/aggregation/expressions/concat_arrays2.js
# Ported: every assertion.
_CONCAT_DOC = {"a": [1, 2], "b": ["three"], "c": [], "d": [[3], 4], "e": None, "str": "x"}
cases(
    "expressions/concat_arrays2.js",
    [_CONCAT_DOC],
    *[
        ([{"$project": {"_id": 0, "all": {"$concatArrays": args}}}], [{"all": out}])
        for args, out in [
            (["$a", "$b", "$c"], [1, 2, "three"]),
            (["$a", "$d"], [1, 2, [3], 4]),
            (["$a"], [1, 2]),
            (["$a", "$e"], None),
            (["$a", "$f"], None),
        ]
    ],  # fmt: skip
    ([{"$project": {"_id": 0, "all": {"$concatArrays": ["$a", "$str"]}}}], None, {"error": 28664}),
)


# jstests/aggregation/accumulators/first_last.js
# Ported: every assertion ($first/$last grouped by a string and by an object, in $bucketAuto, and
# hinted on the index {_id: 1, sales: -1}).
_SALES = [
    {"_id": i, "state": state, "sales": n * 10, "stateObj": {"st": state}, "n": 3}
    for i, (state, n) in enumerate([(s, n) for s, count in (("AZ", 3), ("CA", 2), ("NY", 20)) for n in range(count)])
]
_FIRSTS = [{"_id": "AZ", "sales": 0}, {"_id": "CA", "sales": 0}, {"_id": "NY", "sales": 0}]
_LASTS = [{"_id": "AZ", "sales": 20}, {"_id": "CA", "sales": 10}, {"_id": "NY", "sales": 190}]
_SORT_ID = {"$sort": {"_id": 1}}
cases(
    "accumulators/first_last.js",
    _SALES,
    ([_SORT_ID, {"$group": {"_id": "$state", "sales": {"$first": "$sales"}}}], _FIRSTS, {"any_order": True}),
    (
        [_SORT_ID, {"$group": {"_id": "$stateObj", "sales": {"$first": "$sales"}}}],
        [{"_id": {"st": d["_id"]}, "sales": d["sales"]} for d in _FIRSTS],
        {"any_order": True},
    ),
    ([_SORT_ID, {"$group": {"_id": "$state", "sales": {"$last": "$sales"}}}], _LASTS, {"any_order": True}),
    (
        [_SORT_ID, {"$group": {"_id": "$stateObj", "sales": {"$last": "$sales"}}}],
        [{"_id": {"st": d["_id"]}, "sales": d["sales"]} for d in _LASTS],
        {"any_order": True},
    ),
    *[
        (
            [
                {"$sort": {"sales": 1}},
                {"$bucketAuto": {"groupBy": "$state", "buckets": 1, "output": {"sales": {op: "$sales"}}}},
                {"$project": {"_id": "$_id.min", "sales": 1}},
            ],
            [{"_id": "AZ", "sales": out}],
            {"field_order": False},  # orderedArrayEq compares each document with documentEq
        )
        for op, out in (("$first", 0), ("$last", 190))
    ],
)
cases(
    "accumulators/first_last.js",
    _SALES,
    *[
        (
            [_SORT_ID, {"$group": {"_id": "$state", "sales": {op: "$sales"}}}, _SORT_ID],
            out,
            {"hint": {"_id": 1, "sales": -1}},
        )
        for op, out in (("$first", _FIRSTS), ("$last", _LASTS))
    ],
    indexes=([("_id", 1), ("sales", -1)],),
)


# jstests/aggregation/expressions/expression_mod.js
# Ported: every assertion (each combination of number types, by value and by $type; the three
# modulo-by-zero errors; NaN and infinities). The shell's numbers are doubles: written as floats.
_MODS: dict[str, tuple[list[Any], Any, int]] = {
    "dub_dub": ([138.5, 3.0], 0.5, 1), "dub_int": ([138.5, Int64(3)], 0.5, 1), "dub_long": ([138.5, 3], 0.5, 1),
    "int_dub": ([8, 3.25], 1.5, 1), "int_dubint": ([8, 3.0], 2, 16), "int_int": ([8, 3], 2, 16),
    "int_long": ([8, Int64(3)], Int64(2), 18), "long_dub": ([Int64(8), 3.25], 1.5, 1),
    "long_dubint": ([Int64(8), 3.0], Int64(2), 18),
    "long_dublong": ([Int64(500000000000), 450000000000.0], 50000000000.0, 1),
    "long_int": ([Int64(8), 3], Int64(2), 18), "long_long": ([Int64(8), Int64(3)], Int64(2), 18),
    "verylong_verylong": ([Int64(800000000000), Int64(300000000000)], Int64(200000000000), 18),
}  # fmt: skip
cases(
    "expressions/expression_mod.js",
    [{}],
    (
        [
            {"$project": {"_id": 0, **{name: {"$mod": args} for name, (args, _, _) in _MODS.items()}}},
            {"$match": {name: {"$type": code} for name, (_, _, code) in _MODS.items()}},
        ],
        [{name: out for name, (_, out, _) in _MODS.items()}],
    ),
    *[
        ([{"$project": {"a": {"$mod": args}}}], None, {"error": 16610})
        for args in ([10.0, 0.0], [10, 0], [Int64(10), Int64(0)])
    ],
    *[
        ([{"$project": {"_id": 0, "a": {"$mod": args}}}], [{"a": out}])
        for args, out in [
            ([10.0, float("nan")], float("nan")),
            ([10.0, float("inf")], 10.0),
            ([10.0, float("-inf")], 10.0),
            ([float("nan"), 10.0], float("nan")),
        ]
    ],  # fmt: skip
)


# --- issue 19's held-out check: files nobody here had ported (ported blind, run once, then fixed) --

# jstests/aggregation/expressions/is_number.js
# Ported: every testIsNumber (the twenty document fields and the nine literals; new Date() and UUID()
# as fixed values of their types).
_WHEN = datetime.datetime(2020, 1, 2, 3, 4, 5)
_UUID = Binary(bytes(range(16)), 4)
_IS_NUMBER_DOCS: list[dict[str, Any]] = [
    {"_id": 1, "integerFieldPath": 56072}, {"_id": 11, "nestedPath": {"nestedNumber": 500}},
    {"_id": 2, "doubleFieldPath": 56072.2}, {"_id": 12, "nestedPath": {"nestedNumber": 56072.2}},
    {"_id": 3, "decimalFieldPath": Decimal128("1.234")},
    {"_id": 13, "nestedPath": {"nestedNumber": Decimal128("1.234")}},
    {"_id": 4, "longFieldPath": Int64(123456789)}, {"_id": 14, "nestedPath": {"nestedNumber": Int64(123456789)}},
    {"_id": 5, "nullFieldPath": None}, {"_id": 15, "nestedPath": {"nestedNull": None}},
    {"_id": 6}, {"_id": 16, "nestedPath": {}},
    {"_id": 7, "arrayFieldPath": [1]}, {"_id": 17, "nestedPath": {"nestedArray": [1]}},
    {"_id": 8, "stringFieldPath": "1234"}, {"_id": 18, "nestedPath": {"nestedString": "12345"}},
    {"_id": 9, "dateFieldPath": _WHEN}, {"_id": 19, "nestedPath": {"nestedDate": _WHEN}},
    {"_id": 10, "binDataFieldPath": _UUID}, {"_id": 20, "nestedPath": {"nestedBinData": _UUID}},
    {"_id": 21},
]  # fmt: skip


def _is_number(expression: Any, expected: bool, _id: int) -> tuple[Any, ...]:
    return (
        [{"$match": {"_id": _id}}, {"$project": {"_id": 0, "isNum": {"$isNumber": expression}}}],
        [{"isNum": expected}],
    )


_NESTED = "$nestedPath.nestedNumber"
cases(
    "expressions/is_number.js",
    _IS_NUMBER_DOCS,
    _is_number("$integerFieldPath", True, 1), _is_number(_NESTED, True, 11),
    _is_number("$doubleFieldPath", True, 2), _is_number(_NESTED, True, 12),
    _is_number("$decimalFieldPath", True, 3), _is_number(_NESTED, True, 13),
    _is_number("$longFieldPath", True, 4), _is_number(_NESTED, True, 14),
    _is_number("$nullFieldPath", False, 5), _is_number(_NESTED, False, 15),
    _is_number("$missingFieldPath", False, 6), _is_number(_NESTED, False, 16),
    _is_number("$arrayFieldPath", False, 7), _is_number(_NESTED, False, 17),
    _is_number("$stringFieldPath", False, 8), _is_number(_NESTED, False, 18),
    _is_number("$dateFieldPath", False, 9), _is_number(_NESTED, False, 19),
    _is_number("$binDataFieldPath", False, 10), _is_number(_NESTED, False, 20),
    _is_number(Int64(12345678), True, 21), _is_number(Decimal128("1.2345678"), True, 21),
    _is_number(18, True, 21), _is_number(5.34, True, 21), _is_number(None, False, 21),
    _is_number([[2]], False, 21), _is_number("a literal string", False, 21),
    _is_number(_WHEN, False, 21), _is_number(_UUID, False, 21),
)  # fmt: skip

# jstests/aggregation/expressions/any_element_true.js
# Ported: every testOp and both assertThrows (5159200), but the two over BSON undefined (pymongo cannot
# write it).
_ANY_DOC = {
    "_id": 0, "allTrue": [True, True], "someTrue": [True, False], "noneTrue": [0, False], "nonArray": 1,
    "nullInput": [None], "nullTrue": [None, True], "empty": [],
}  # fmt: skip


def _any_true(expression: Any, expected: Any) -> tuple[Any, ...]:
    if expected is ANY_ERROR:
        return ([{"$project": {"_id": 0, "result": expression}}], None, {"error": 5159200})
    return ([{"$project": {"_id": 0, "result": expression}}], [{"result": expected}])


cases(
    "expressions/any_element_true.js",
    [_ANY_DOC],
    _any_true({"$anyElementTrue": {"$literal": [True, True]}}, True),
    _any_true({"$anyElementTrue": {"$literal": [1, True]}}, True),
    _any_true({"$anyElementTrue": {"$literal": [True, 0]}}, True),
    _any_true({"$anyElementTrue": {"$literal": [True, 1, False]}}, True),
    _any_true({"$anyElementTrue": {"$literal": [False, 0, False]}}, False),
    _any_true({"$anyElementTrue": "$allTrue"}, True),
    _any_true({"$anyElementTrue": "$someTrue"}, True),
    _any_true({"$anyElementTrue": "$noneTrue"}, False),
    _any_true({"$anyElementTrue": ["$noneTrue"]}, False),
    _any_true({"$anyElementTrue": [["$non_existent_field"]]}, False),
    _any_true({"$anyElementTrue": [["$non_existent_field", True]]}, True),
    _any_true({"$anyElementTrue": "$nullInput"}, False),
    _any_true({"$anyElementTrue": "$nullTrue"}, True),
    _any_true({"$anyElementTrue": "$empty"}, False),
    _any_true({"$anyElementTrue": "$nonArray"}, ANY_ERROR),
    _any_true({"$anyElementTrue": ["$non_existent_field"]}, ANY_ERROR),
)

# jstests/aggregation/expressions/cmp_literal.js
# Ported: both assertions ($eq of a field with itself, and with the $literal string "$string").
cases(
    "expressions/cmp_literal.js",
    [{"_id": 0, "string": "foo"}],
    ([{"$project": {"stringis$string": {"$eq": ["$string", "$string"]}}}], [{"_id": 0, "stringis$string": True}]),
    (
        [{"$project": {"stringis$string": {"$eq": ["$string", {"$literal": "$string"}]}}}],
        [{"_id": 0, "stringis$string": False}],
    ),
)

# jstests/aggregation/expressions/indexof_array_dup.js
# Ported: all four assertions (duplicates before the match, with and without a range).
cases(
    "expressions/indexof_array_dup.js",
    [{"_id": 0, "number": 222}],
    *[
        ([{"$addFields": {"idx": {"$indexOfArray": args}}}], [{"_id": 0, "number": 222, "idx": idx}])
        for args, idx in (
            ([[111, 111, 222], "$number"], 2),
            ([[111, 111, 222, 333], "$number"], 2),
            ([[111, 111, 222, 333], "$number", 0, 1], -1),
            ([[111, 111, 222, 222, 333], "$number", 3, 5], 3),
        )
    ],
)

# jstests/aggregation/expressions/divide.js
# Ported: every testCase (each argument type pair, null operands, the precision of a long and of a
# decimal) and every error case (16608 or BadValue for a zero divisor, 16609 or TypeMismatch for a
# string), one document each as the jstest inserts it.
_D = Decimal128
for _left, _right, _quotient in [
    (10, 2, 5), (10, 2.5, 4), (10, Int64(2), 5), (10, _D("2.5"), _D("4")), (10, None, None),
    (12.5, 5, 2.5), (12.5, 2.5, 5), (12.5, Int64(5), 2.5), (12.5, _D("2.5"), _D("5.000000000000")),
    (12.5, None, None), (Int64(10), 2, 5), (Int64(10), 2.5, 4), (Int64(10), Int64(2), 5),
    (Int64(10), _D("2.5"), _D("4")), (_D("12.5"), 5, _D("2.5")), (_D("12.5"), 2.5, _D("5")),
    (_D("12.5"), Int64(5), _D("2.5")), (_D("12.5"), _D("2.5"), _D("5")), (_D("12.5"), None, None),
    (None, 2, None), (None, 2.5, None), (None, Int64(2), None), (None, _D("2.5"), None),
    (None, 0, None), (None, 0.0, None), (None, Int64(0), None), (None, _D("0"), None),
    (Int64(9223372036854775807), 1, 9223372036854775807.0),
    (_D("9223372036854775807"), 1, _D("9223372036854775807")),
]:  # fmt: skip
    cases(
        "expressions/divide.js",
        [{"_id": 0, "left": _left, "right": _right}],
        ([{"$project": {"computed": {"$divide": ["$left", "$right"]}}}], [{"_id": 0, "computed": _quotient}]),
    )
for _left, _right, _codes in [
    (1, 0, (16608, 2)), (1, 0.0, (16608, 2)), (1, Int64(0), (16608, 2)), (1, _D("0"), (16608, 2)),
    (1, "not a number", (16609, 14)), ("not a number", 1, (16609, 14)),
]:  # fmt: skip
    cases(
        "expressions/divide.js",
        [{"_id": 0, "left": _left, "right": _right}],
        ([{"$project": {"computed": {"$divide": ["$left", "$right"]}}}], None, {"error": _codes}),
    )

# jstests/aggregation/sources/project/dotted_and_nested_proj_are_equal.js
# Ported: all four assertions (a dotted and a nested inclusion, each as 1 and as the field path).
cases(
    "sources/project/dotted_and_nested_proj_are_equal.js",
    [{"a": "foo", "b": {"c": "bar", "z": "not there"}}],
    *[
        ([{"$project": projection}], [{"b": {"c": "bar"}}])
        for projection in (
            {"_id": 0, "b.c": 1},
            {"_id": 0, "b.c": "$b.c"},
            {"_id": 0, "b": {"c": 1}},
            {"_id": 0, "b": {"c": "$b.c"}},
        )
    ],
)


# jstests/aggregation/sources/project/remove_id.js (over jstests/aggregation/data/articles.js)
# Ported: its one assertion (an _id excluded by a $project stays out of the next one's output).
def _posted(seconds: int) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC)


_ARTICLES = [
    {
        "title": "this is my title", "author": "bob", "posted": _posted(1079895594),
        "pageViews": 5, "tags": ["fun", "good", "fun"],
        "comments": [{"author": "joe", "text": "this is cool"}, {"author": "sam", "text": "this is bad"}],
        "other": {"foo": 5},
    },
    {
        "title": "this is your title", "author": "dave", "posted": _posted(1912392670),
        "pageViews": 7, "tags": ["fun", "nasty"],
        "comments": [
            {"author": "barbara", "text": "this is interesting"},
            {"author": "jenny", "text": "i like to play pinball", "votes": 10},
        ],
        "other": {"bar": 14},
    },
    {
        "title": "this is some other title", "author": "jane", "posted": _posted(978239834),
        "pageViews": 6, "tags": ["nasty", "filthy"],
        "comments": [
            {"author": "will", "text": "i don't like the color"},
            {"author": "jenny", "text": "can i get that in green?"},
        ],
        "other": {"bar": 14},
    },
]  # fmt: skip
cases(
    "sources/project/remove_id.js",
    _ARTICLES,
    (
        [{"$sort": {"_id": 1}}, {"$project": {"author": 1, "_id": 0}}, {"$project": {"Writer": "$author"}}],
        [{"Writer": "bob"}, {"Writer": "dave"}, {"Writer": "jane"}],
    ),
)

# jstests/aggregation/sources/lookup/lookup_unknown_field.js
# Ported: its one assertErrorCode (an unknown $lookup field: IDLUnknownField 40415, or FailedToParse 9).
cases(
    "sources/lookup/lookup_unknown_field.js",
    [
        {"_id": 1, "item": "almonds", "price": 12, "quantity": 2},
        {"_id": 2, "item": "pecans", "price": 20, "quantity": 1},
        {"_id": 3},
    ],
    (
        [{"$lookup": {"from": "f", "localField": "item", "foreignField": "sku", "as": "inventory_docs", "hi": "hi"}}],
        None,
        {"error": (40415, 9)},
    ),
    foreign=(
        {"_id": 1, "sku": "almonds", "description": "product 1", "instock": 120},
        {"_id": 2, "sku": "bread", "description": "product 2", "instock": 80},
        {"_id": 3, "sku": "cashews", "description": "product 3", "instock": 60},
        {"_id": 4, "sku": "pecans", "description": "product 4", "instock": 70},
        {"_id": 5, "sku": None, "description": "Incomplete"},
        {"_id": 6},
    ),
)


# jstests/aggregation/sources/bucketauto/granularity_near_zero.js
# Ported: its one assertion (the R80 rounder approaching zero from a denormal, SERVER-57091).
cases(
    "sources/bucketauto/granularity_near_zero.js",
    [{}],
    (
        [
            {
                "$bucketAuto": {
                    "groupBy": {
                        "$reduce": {"input": [], "initialValue": 4.940656484124654e-324, "in": {"$size": ["$$value"]}}
                    },
                    "buckets": Int64(8),
                    "granularity": "R80",
                }
            }
        ],
        [{"_id": {"min": 0, "max": 1.02e-321}, "count": 1}],
    ),
)


def mark_gap(file: str, reason: str, when: Any) -> None:
    """Mark the cases of ``file`` for which ``when(case)`` holds as a known gap of the offline default."""
    for position, case in enumerate(CASES):
        if case.file == file and when(case):
            CASES[position] = replace(case, gap=reason)


def _stage_names(case: Case) -> list[str]:
    return [next(iter(stage)) for stage in case.pipeline]


mark_gap(
    "sources/match/match.js",
    "$mod by 0 is refused without an error code (MongoDB: BadValue, 2)",
    lambda c: "$mod" in repr(c.pipeline) and c.error == 2,
)


mark_gap(
    "sources/lookup/lookup_numeric_field.js",
    "$graphLookup: refused by name on the offline default (the fix: a real server)",
    lambda c: "$graphLookup" in c.pipeline[0],
)


def test_graph_lookup_is_refused_by_name(db: Database, engine: str | None) -> None:
    """What the offline engine does not run is refused with the fix, never answered wrongly."""
    if engine is not None:
        pytest.skip("a real server runs $graphLookup")
    db.c.insert_one({"a": 1})
    graph = {"from": "c", "startWith": "$a", "connectFromField": "a", "connectToField": "a", "as": "g"}
    with pytest.raises(OperationFailure, match=r"does not run the stage \$graphLookup.*MONGODB_URI") as raised:
        list(db.c.aggregate([{"$facet": {"x": [{"$graphLookup": graph}]}}]))
    assert raised.value.code == 168


mark_gap(
    "sources/lookup/lookup_unknown_field.js",
    "an unknown $lookup field is refused without MongoDB's code (40415, or 9 before 8.0)",
    lambda c: c.error is not None,
)

mark_gap(
    "sources/bucketauto/granularity_near_zero.js",
    "$bucketAuto's granularity (preferred-number rounding) is refused by the engine (README gaps)",
    lambda c: True,
)

mark_gap(
    "expressions/let.js",
    "$let rebinding CURRENT: refused by name on the offline default (mongoeco reads the original document)",
    lambda c: "'vars': {'CURRENT'" in repr(c.pipeline),
)
mark_gap(
    "expressions/let.js",
    "a $let variable named _underbar, a.b or 'a b' is refused as an undefined variable (17276), not FailedToParse (9)",
    lambda c: c.error == 9 and any(n in repr(c.pipeline) for n in ("'_underbar': 1", "'a.b': 1", "'a b': 1")),
)


mark_gap(
    "expressions/map.js",
    "$map with as: CURRENT: refused by name on the offline default (mongoeco reads the original document)",
    lambda c: "'as': 'CURRENT'" in repr(c.pipeline),
)


mark_gap(
    "expressions/map.js",
    "$map without input or in is refused before it runs, without MongoDB's code (16880, 16882)",
    lambda c: c.error in (16880, 16882),
)


@pytest.mark.parametrize("case", CASES, ids=[f"{c.file.rsplit('/', 1)[-1]}:{i}" for i, c in enumerate(CASES)])
def test_ported_results(db: Database, case: Case, engine: str | None, request: pytest.FixtureRequest) -> None:
    if case.gap and engine is None:  # a known divergence of the offline default: it must still fail here
        request.node.add_marker(pytest.mark.xfail(reason=case.gap, strict=True))
    check_case(db, case)


# --- jstests/aggregation/sources/facet/use_cases.js (held-out check) --------------------------------
# Ported: the standalone part's three assertions (each $facet output equals its pipeline run alone:
# $sortByCount, $bucket with a default, $bucketAuto) and the one-document facet result, over seeded
# random TVs (1,000 documents where the jstest inserts 10,000; the sharded half is not ported).


def test_facet_use_cases(db: Database) -> None:
    import random

    rng = random.Random(19)
    makers = ["Sony", "Samsung", "LG", "Panasonic", "Mitsubishi", "Vizio", "Toshiba", "Sharp"]
    db.c.insert_many(
        [
            {
                "_id": i,
                "manufacturer": rng.choice(makers),
                "price": rng.randint(100, 4000),
                "screenSize": rng.randint(18, 40),
            }
            for i in range(1000)
        ]
    )
    manufacturers: list[dict[str, Any]] = [{"$sortByCount": "$manufacturer"}, {"$sort": {"count": -1, "_id": 1}}]
    bucketed: list[dict[str, Any]] = [
        {"$bucket": {"groupBy": "$price", "boundaries": [0, 500, 1000, 1500, 2000], "default": 2000}},
        {"$sort": {"count": -1}},
    ]
    auto: list[dict[str, Any]] = [{"$bucketAuto": {"groupBy": "$price", "buckets": 5}}]
    alone = [list(db.c.aggregate(pipeline)) for pipeline in (manufacturers, bucketed, auto)]
    faceted = list(db.c.aggregate([{"$facet": {"m": manufacturers, "b": bucketed, "a": auto}}]))
    assert len(faceted) == 1
    assert [faceted[0]["m"], faceted[0]["b"], faceted[0]["a"]] == alone


def test_bucket_auto_takes_buckets_as_a_long(db: Database) -> None:
    """granularity_near_zero.js gives ``buckets`` as NumberLong(8), which MongoDB takes as 8; without
    its granularity (refused offline, see above) the same $bucketAuto buckets as with an int."""
    db.c.insert_many([{"x": i} for i in range(10)])
    by_long = list(db.c.aggregate([{"$bucketAuto": {"groupBy": "$x", "buckets": Int64(2)}}]))
    assert by_long == list(db.c.aggregate([{"$bucketAuto": {"groupBy": "$x", "buckets": 2}}]))
    assert [b["count"] for b in by_long] == [5, 5]

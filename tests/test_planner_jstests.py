"""Planner-model cases ported from MongoDB's own jstests (mongodb/mongo, master as of 2026-11).

Each test names the file it ports; the documents, indexes, queries and asserted plan facts are the
jstest's, rewritten as Python (assertions the model has no counterpart for, such as aggregation
with ``$_internalInhibitOptimization``, are left out).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from pymongo.database import Database

import workbook
from workbook.errors import UnsupportedByModelError
from workbook.planner import explain_find, summarize

ID = {"v": 2, "key": {"_id": 1}, "name": "_id_"}


def index(key: dict[str, Any], **options: Any) -> dict[str, Any]:
    name = "_".join(f"{f}_{d}" for f, d in key.items())
    return {"v": 2, "key": key, "name": name, **options}


def plan(docs: list[dict[str, Any]], indexes: list[dict[str, Any]], **query: Any) -> dict[str, Any]:
    return summarize(explain_find(docs, [ID, *indexes], namespace="test.c", **query))


# --- jstests/core/query/sort/sort_array.js -----------------------------------------------------

A_ARRAYS = [{"_id": 0, "a": [3, 0, 1]}, {"_id": 1, "a": [0, 4, -1]}]
X_NESTED = [
    {"_id": 0, "x": [{"y": [4, 0, 1], "z": 7}, {"y": 0, "z": 9}]},
    {"_id": 1, "x": [{"y": 1, "z": 7}, {"y": 0, "z": [8, 6]}]},
]
XY_XZ = index({"x.y": 1, "x.z": -1})


@pytest.mark.parametrize(
    ("docs", "indexes", "query", "blocking"),
    [
        (A_ARRAYS, [index({"a": 1})], {"filter": {"a": {"$gte": 2}}, "sort": {"a": -1}}, True),
        (A_ARRAYS, [index({"a": 1})], {"filter": {}, "sort": {"a": -1}}, False),
        (A_ARRAYS, [index({"a": 1})], {"filter": {}, "sort": {"a": 1}}, False),
        (X_NESTED, [XY_XZ], {"filter": {}, "sort": {"x.y": 1, "x.z": -1}}, False),
        (X_NESTED, [XY_XZ], {"filter": {}, "sort": {"x.y": -1, "x.z": 1}}, False),
        (X_NESTED, [XY_XZ], {"filter": {"x.y": 1}, "sort": {"x.z": -1}}, True),
        (X_NESTED, [XY_XZ], {"filter": {"x.y": 1}, "sort": {"x.y": -1}}, True),
        (X_NESTED, [XY_XZ], {"filter": {"x.y": 1, "x.z": 1}, "sort": {"x.y": -1, "x.z": -1}}, True),
        (X_NESTED, [XY_XZ, index({"x.y": 1, "x": -1})], {"filter": {"x.y": 1}, "sort": {"x": -1}}, True),
        (
            [{"_id": 0, "d": 3, "e": [1, 2, 3]}, {"_id": 1, "d": [0, 4, -1], "e": 4}],
            [index({"d": 1, "e": 1})],
            {"filter": {"d": 1}, "sort": {"e": 1}},
            False,
        ),
        (
            [{"_id": 0, "a": [1, 2, 3], "b": {"c": 9}}],
            [index({"a": 1, "b.c": 1})],
            {"filter": {"a": 2}, "sort": {"b.c": -1}},
            False,
        ),
        (
            [
                {"_id": 2, "a": [{"b": 1, "c": 2}, {"b": 2, "c": 3}]},
                {"_id": 0, "a": [{"b": 2, "c": 0}, {"b": 1, "c": 4}]},
                {"_id": 1, "a": [{"b": 1, "c": 5}, {"b": 2, "c": 1}]},
            ],
            [index({"a.b": 1, "a.c": 1})],
            {"filter": {"a.b": 1}, "sort": {"a.c": 1}},
            True,
        ),
        (
            [{"_id": i, "a": [{"x": x}]} for i, x in enumerate((2, 1, 3))],
            [index({"a.x": 1})],
            {"sort": {"a.x": 1}},
            False,
        ),
        (
            [{"_id": i, "a": [{"x": x}]} for i, x in enumerate((2, 1, 3))],
            [index({"a.x": 1})],
            {"sort": {"a.x": 1}, "hint": {"a.x": 1}},
            False,
        ),
    ],
)
def test_sort_array(
    docs: list[dict[str, Any]], indexes: list[dict[str, Any]], query: dict[str, Any], blocking: bool
) -> None:
    """A multikey index provides a sort only over [MinKey, MaxKey] bounds with no bounded field
    sharing the sorted path's array prefix."""
    s = plan(docs, indexes, projection={"_id": 1}, **query)
    assert s["inMemorySort"] == blocking, s["stages"]
    assert s["plan"] == "IXSCAN"


# --- jstests/core/index/covered/covered_index_simple_id.js --------------------------------------

SIMPLE_ID = [{"_id": i} for i in range(10)] + [{"_id": "string"}, {"_id": {"bar": 1}}, {"_id": None}]


@pytest.mark.parametrize(
    "filter",
    [{"_id": 1}, {"_id": "string"}, {"_id": {"bar": 1}}, {}, {"_id": {"$gt": 2, "$lt": 6}}, {"_id": {"$in": [5, 8]}}],
)
def test_covered_index_simple_id(filter: dict[str, Any]) -> None:
    e = explain_find(SIMPLE_ID, [ID], namespace="test.c", filter=filter, projection={"_id": 1}, hint={"_id": 1})
    s = summarize(e)
    assert s["covered"] and e["executionStats"]["totalDocsExamined"] == 0
    assert "PROJECTION_COVERED" in s["stages"]


def test_index_fields_plus_implicit_id_are_covered_by_an_index_holding_id() -> None:
    docs = [{"_id": i, "a": i % 5, "b": i} for i in range(20)]
    s = plan(docs, [index({"a": 1, "_id": 1})], filter={"a": {"$gt": 2}}, projection={"a": 1})
    assert s["covered"] and s["docsExamined"] == 0 and s["nReturned"] == 8


# --- jstests/core/query/collation/collation.js (indexes with a collation) ----------------------

FR = {"locale": "fr_CA"}
NUMBERS = [{"_id": i, "a": i} for i in range(10)]


def test_non_simple_index_covers_and_orders_a_simple_query_without_string_bounds() -> None:
    s = plan(
        NUMBERS, [index({"a": 1}, collation=FR)], filter={"a": {"$gt": 3}}, projection={"a": 1, "_id": 0}, sort={"a": 1}
    )
    assert s["index"] == "a_1" and s["covered"] and not s["inMemorySort"] and s["docsExamined"] == 0


def test_non_simple_index_cannot_answer_a_simple_query_on_strings() -> None:
    # "Query has simple collation, but index has fr_CA collation": COLLSCAN.
    assert plan(NUMBERS, [index({"a": 1}, collation=FR)], filter={"a": "foo"})["plan"] == "COLLSCAN"
    # ...and with matching collations the index is used.
    assert plan(NUMBERS, [index({"a": 1}, collation=FR)], filter={"a": "foo"}, collation=FR)["plan"] == "IXSCAN"


def test_hinted_index_with_another_collation_still_sorts_in_memory() -> None:
    letters = [{"_id": i, "a": a} for i, a in enumerate("ABba")]
    s = plan(
        letters,
        [index({"a": 1})],
        filter={},
        projection={"_id": 0},
        sort={"a": 1},
        hint={"a": 1},
        collation={"locale": "en_US", "strength": 3},
    )
    assert s["plan"] == "IXSCAN" and s["inMemorySort"]


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[Database]:
    monkeypatch.delenv("MONGODB_URI", raising=False)
    database = workbook.connect(database=f"t{uuid.uuid4().hex[:10]}", quiet=True)
    yield database
    database.client.drop_database(database.name)


def test_collection_default_collation_applies_to_queries_without_one(offline: Database) -> None:
    """collation.js: "Find should return correct results when no collation specified and collection
    has a default collation", and an index without a collation inherits the collection's."""
    offline.create_collection("c", collation={"locale": "en_US", "strength": 2})
    offline.c.insert_many([{"_id": 1, "str": "foo"}, {"_id": 2, "str": "FOO"}, {"_id": 3, "str": "bar"}])
    offline.c.create_index("str")
    e = offline.c.find({"str": "FOO"}).explain()
    assert e["queryPlanner"]["collation"]["strength"] == 2
    assert e["executionStats"]["nReturned"] == 2 and summarize(e)["index"] == "str_1"
    simple = offline.c.find({"str": "FOO"}).collation({"locale": "simple"}).explain()
    assert simple["executionStats"]["nReturned"] == 1 and summarize(simple)["plan"] == "COLLSCAN"
    # _id lookups stay IDHACK under the collection's own collation (isIdHackEligibleQuery), not under another
    offline.create_collection("ids", collation={"locale": "en_US", "strength": 2})
    offline.ids.insert_many([{"_id": "foo"}, {"_id": "bar"}])
    by_id = offline.ids.find({"_id": "FOO"}).explain()
    assert summarize(by_id)["plan"] == "IDHACK" and by_id["executionStats"]["nReturned"] == 1
    other = offline.ids.find({"_id": "FOO"}).collation({"locale": "fr"}).explain()
    assert summarize(other)["plan"] != "IDHACK" and other["executionStats"]["nReturned"] == 0


# --- aggregation: $limit after a leading $project goes into the find layer ----------------------


def test_limit_after_a_leading_project_is_pushed_into_the_cursor(offline: Database) -> None:
    """pipeline_d.cpp moves a $limit ahead of a projection, so $cursor examines 5 documents, not 10."""
    offline.c.insert_many([{"_id": i, "a": i} for i in range(10)])
    e = offline.command(
        "explain",
        {"aggregate": "c", "pipeline": [{"$project": {"a": 1}}, {"$limit": 5}], "cursor": {}},
        verbosity="executionStats",
    )
    assert e["executionStats"]["totalDocsExamined"] == 5 and e["executionStats"]["nReturned"] == 5
    assert e["queryPlanner"]["winningPlan"]["stage"] == "LIMIT"


# --- hints on index kinds the model does not build ---------------------------------------------


@pytest.mark.parametrize("hint", [{"a": "text"}, [("a", "text")], "a_text"])
def test_hinting_a_text_index_is_the_models_refusal(hint: Any) -> None:
    # hashed indexes are modelled (tests/test_jstests_query.py, hashed sections); text indexes are not
    with pytest.raises(UnsupportedByModelError, match="text index 'a_text'"):
        explain_find(NUMBERS, [ID, index({"a": "text"})], namespace="t.c", filter={"a": 1}, hint=hint)


# --- jstests/core/index/index_bounds_pipe.js ---------------------------------------------------

PIPE_IDS = [{"_id": v} for v in ("", "\\|", "a", "a|b", "b", "|")]


@pytest.mark.parametrize(
    ("pattern", "bounds", "results"),
    [
        (r"^a", ['["a", "b")', "[/^a/, /^a/]"], 2),
        (r"^\\", ['["\\", "]")', "[/^\\\\/, /^\\\\/]"], 1),
        (r"^a|b", ['["", {})', "[/^a|b/, /^a|b/]"], 3),
        (r"^a\|", ['["a|", "a}")', "[/^a\\|/, /^a\\|/]"], 1),
        (r"^\|", ['["|", "}")', "[/^\\|/, /^\\|/]"], 1),
        (r"^\\|b", ['["", {})', "[/^\\\\|b/, /^\\\\|b/]"], 3),
        (r"^\\|^b", ['["", {})', "[/^\\\\|^b/, /^\\\\|^b/]"], 2),
        (r"^\\\|", ['["", {})', "[/^\\\\\\|/, /^\\\\\\|/]"], 1),
        (r"^\Q|\E", ['["", {})', "[/^\\Q|\\E/, /^\\Q|\\E/]"], 1),
        (r"^\Q\|\E", ['["\\|", "\\}")', "[/^\\Q\\|\\E/, /^\\Q\\|\\E/]"], 1),
    ],
)
def test_index_bounds_pipe(pattern: str, bounds: list[str], results: int) -> None:
    from bson import Regex

    e = explain_find(
        PIPE_IDS, [ID], namespace="t.c", filter={"_id": Regex(pattern)}, projection={"_id": 1}, sort={"_id": 1}
    )
    scan = e["queryPlanner"]["winningPlan"]
    while scan["stage"] != "IXSCAN":
        scan = scan["inputStage"]
    assert scan["indexBounds"]["_id"] == bounds
    assert e["executionStats"]["nReturned"] == results


# --- jstests/core/query/regex/regex6.js --------------------------------------------------------

NAMES = [{"_id": i, "name": n} for i, n in enumerate(("eliot", "emily", "bob", "aaron", "[with]some?symbols"))]


@pytest.mark.parametrize(
    ("filter", "keys", "returned"),
    [
        ({"name": {"$regex": r"^\/"}}, 1, 0),
        ({"name": {"$regex": "^é"}}, 0, 0),
        ({"name": {"$regex": r"^\é"}}, 0, 0),
        ({"name": {"$regex": r"^\."}}, 1, 0),
        ({"name": {"$regex": r"^."}}, 5, 5),
        ({"name": {"$regex": r"^\Qblah\E"}}, 1, 0),
        ({"name": {"$regex": "^blah"}}, 1, 0),
        ({"name": {"$regex": r"^\Q[\Ewi\Qth]some?s\Eym"}}, 2, 1),
        ({"name": {"$regex": "^bob"}}, 2, 1),
        ({"name": {"$regex": "^e", "$gte": "emily"}}, 1, 1),
        ({"name": {"$gt": "a", "$regex": "^emily"}}, 1, 1),
    ],
)
def test_regex6_keys_examined(filter: dict[str, Any], keys: int, returned: int) -> None:
    e = explain_find(NAMES, [ID, index({"name": 1})], namespace="t.c", filter=filter)
    assert (e["executionStats"]["totalKeysExamined"], e["executionStats"]["nReturned"]) == (keys, returned)

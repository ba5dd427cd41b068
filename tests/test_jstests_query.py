"""Query semantics ported from MongoDB's jstests (mongodb/mongo, jstests/core/query and jstests/core/index).

Tested at the model level: the documents a find returns come from the planner model's chosen plan
(:func:`workbook.planner.find_documents`), so each case checks both the result and the explain figures
the jstest asserts. One section per jstest file; each names the assertions ported. Counts are the
jstest's own (MongoDB 7.0/8.0 standalone). A case runs with no index, with the jstest's index, and
hinted, wherever the jstest does.
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Sequence
from typing import Any

import pytest
from bson import Binary, Decimal128, MaxKey, MinKey, Regex, Timestamp

from workbook.errors import UnsupportedByModelError
from workbook.planner import CollectionModel, FindArgs, explain_find_args, find_documents
from workbook.planner.values import UNDEFINED

ID = {"v": 2, "key": {"_id": 1}, "name": "_id_"}


def index(key: dict[str, Any], **options: Any) -> dict[str, Any]:
    return {"v": 2, "key": key, "name": "_".join(f"{f}_{d}" for f, d in key.items()), **options}


def find(docs: Sequence[Any], indexes: list[dict[str, Any]], **args: Any) -> tuple[dict[str, Any], list[Any]]:
    collection = CollectionModel(docs, [ID, *indexes], args.pop("collection_collation", None))
    return find_documents(collection, "test.c", FindArgs.of(**args))


def ids(docs: Sequence[Any], indexes: list[dict[str, Any]], **args: Any) -> list[Any]:
    explain, found = find(docs, indexes, **args)
    assert explain["executionStats"]["nReturned"] == len(found)
    return [d["_id"] for d in found]


def stages(node: dict[str, Any]) -> list[str]:
    out = [node["stage"]]
    for key in ("inputStage",):
        if key in node:
            out += stages(node[key])
    for child in node.get("inputStages", []):
        out += stages(child)
    return out


def winning(explain: dict[str, Any]) -> list[str]:
    return stages(explain["queryPlanner"]["winningPlan"])


# --- find_documents: the documents the model's plan returns -------------------------------------


def test_find_documents_returns_the_plans_documents_in_order() -> None:
    docs = [{"_id": i, "a": a, "b": i} for i, a in enumerate((3, 1, 2, 1))]
    collection = CollectionModel(docs, [ID, index({"a": 1, "b": 1})])
    args = FindArgs.of({"a": {"$lte": 2}}, {"_id": 0, "a": 1, "b": 1}, [("a", -1), ("b", -1)], limit=2)
    explain, found = find_documents(collection, "test.c", args)
    assert found == [{"a": 2, "b": 2}, {"a": 1, "b": 3}]
    assert winning(explain) == ["LIMIT", "PROJECTION_COVERED", "IXSCAN"]
    assert explain["command"] == {**args.command("c"), "$db": "test"}
    assert explain["queryPlanner"] == explain_find_args(collection, "test.c", args)["queryPlanner"]
    _, whole = find_documents(collection, "test.c", FindArgs.of({"a": 1}))
    assert [d is docs[d["_id"]] for d in whole] == [True, True]


def test_find_documents_refuses_what_the_model_does_not_cover() -> None:
    with pytest.raises(UnsupportedByModelError, match=r"\$where"):
        find_documents(CollectionModel([], [ID]), "test.c", FindArgs.of({"$where": "true"}))


# --- jstests/core/query/nan.js ---------------------------------------------------------------------
# Ported: every assertion of testNaNComparisons (EQ, LT, LTE, GT, GTE, four $in, NE), unindexed and
# with {a: 1}; testNonNaNQuery's five queries on NaN-only documents, unindexed and indexed.

NAN_DOCS: list[dict[str, Any]] = [
    {"_id": 0, "a": -math.inf},
    {"_id": 1, "a": -3},
    {"_id": 2, "a": 0},
    {"_id": 3, "a": 3},
    {"_id": 4, "a": math.inf},
    {"_id": 5, "a": math.nan},
    {"_id": 6, "a": -math.nan},
    {"_id": 7, "a": UNDEFINED},
    {"_id": 8, "a": None},
    {"_id": 9, "a": []},
    {"_id": 10, "a": {"b": 1}},
    {"_id": 11, "a": {"b": 1}},
]
NAN_CASES = [
    ({"a": math.nan}, [5, 6]),
    ({"a": {"$lt": math.nan}}, []),
    ({"a": {"$lte": math.nan}}, [5, 6]),
    ({"a": {"$gt": math.nan}}, []),
    ({"a": {"$gte": math.nan}}, [5, 6]),
    ({"a": {"$in": [math.nan, 1000]}}, [5, 6]),
    ({"a": {"$in": [-math.nan, 1000]}}, [5, 6]),
    ({"a": {"$in": [Decimal128("NaN"), 1000]}}, [5, 6]),
    ({"a": {"$in": [Decimal128("-NaN"), 1000]}}, [5, 6]),
    ({"a": {"$ne": math.nan}}, [0, 1, 2, 3, 4, 7, 8, 9, 10, 11]),
]


@pytest.mark.parametrize("indexes", [[], [index({"a": 1})]], ids=["unindexed", "indexed"])
@pytest.mark.parametrize(("query", "expected"), NAN_CASES)
def test_nan_comparisons(indexes: list[dict[str, Any]], query: dict[str, Any], expected: list[int]) -> None:
    assert sorted(ids(NAN_DOCS, indexes, filter=query)) == expected


@pytest.mark.parametrize("indexes", [[], [index({"a": 1})]], ids=["unindexed", "indexed"])
@pytest.mark.parametrize(
    "query", [{"a": 1}, {"a": {"$lt": 1}}, {"a": {"$lte": 1}}, {"a": {"$gt": 1}}, {"a": {"$gte": 1}}]
)
def test_nan_never_matches_a_number(indexes: list[dict[str, Any]], query: dict[str, Any]) -> None:
    docs = [{"_id": 0, "a": math.nan}, {"_id": 1, "a": -math.nan}]
    assert ids(docs, indexes, filter=query) == []


def test_nan_bounds_are_a_point_and_empty() -> None:
    """index_bounds_builder.cpp: only NaN is <= / >= NaN (a point); nothing is < or > NaN."""
    explain, _ = find(NAN_DOCS, [index({"a": 1})], filter={"a": {"$gte": math.nan}})
    assert explain["queryPlanner"]["winningPlan"]["inputStage"]["indexBounds"] == {"a": ["[nan.0, nan.0]"]}
    explain, _ = find(NAN_DOCS, [index({"a": 1})], filter={"a": {"$gt": math.nan}})
    assert explain["queryPlanner"]["winningPlan"]["inputStage"]["indexBounds"] == {"a": []}
    assert explain["executionStats"]["totalDocsExamined"] == 0


# --- null in range comparisons (issue 19; index_bounds_builder.cpp makeNullEqualityBounds) --------
# $gte/$lte null are {$eq: null} (null and missing); $gt/$lt null match nothing.

NULL_DOCS = [{"_id": 0, "a": 1}, {"_id": 1, "a": "s"}, {"_id": 2, "a": None}, {"_id": 3, "a": {}}, {"_id": 4}]


@pytest.mark.parametrize("indexes", [[], [index({"a": 1})]], ids=["unindexed", "indexed"])
@pytest.mark.parametrize(("op", "expected"), [("$gte", [2, 4]), ("$lte", [2, 4]), ("$gt", []), ("$lt", [])])
def test_null_range_comparisons(indexes: list[dict[str, Any]], op: str, expected: list[int]) -> None:
    assert sorted(ids(NULL_DOCS, indexes, filter={"a": {op: None}})) == expected


def test_gte_null_bounds_are_the_null_equality_bounds() -> None:
    explain, _ = find(NULL_DOCS, [index({"a": 1})], filter={"a": {"$gte": None}})
    assert explain["queryPlanner"]["winningPlan"]["inputStage"]["indexBounds"] == {
        "a": ["[undefined, undefined]", "[null, null]"]
    }


# --- jstests/core/query/elemmatch/elemmatch_value.js ----------------------------------------------
# Ported: all eight arrayEq assertions (projection {_id: 0}).

EM_VALUES: list[Any] = [
    5, [5], [3, 7], [[5]], [[3, 7]], [[[5]]], [[[3, 7]]], {"b": 5}, {"b": [5]}, {"b": [3, 7]},
    [{"b": 5}], [{"b": 3}, {"b": 7}], [{"b": [5]}], [{"b": [3, 7]}], [[{"b": 5}]], [[{"b": 3}, {"b": 7}]],
    [[{"b": [5]}]], [[{"b": [3, 7]}]],
]  # fmt: skip
EM_DOCS = [{"_id": i, "a": v} for i, v in enumerate(EM_VALUES)]
RANGE = {"$lt": 6, "$gt": 4}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"a": {"$elemMatch": RANGE}}, [[5]]),
        ({"a.b": {"$elemMatch": RANGE}}, [{"b": [5]}, [{"b": [5]}]]),
        ({"a": {"$elemMatch": {"$elemMatch": RANGE}}}, [[[5]]]),
        ({"a": {"$elemMatch": {"$type": "number"}}}, [[5], [3, 7]]),
        (
            {"a": {"$elemMatch": {"$type": "array"}}},
            [
                [[5]],
                [[3, 7]],
                [[[5]]],
                [[[3, 7]]],
                [[{"b": 5}]],
                [[{"b": 3}, {"b": 7}]],
                [[{"b": [5]}]],
                [[{"b": [3, 7]}]],
            ],
        ),
        ({"a": {"$elemMatch": {"b": RANGE}}}, [[{"b": 5}], [{"b": [5]}], [{"b": [3, 7]}]]),
        ({"a": {"$elemMatch": {"b": {"$elemMatch": RANGE}}}}, [[{"b": [5]}]]),
        ({"a": {"$elemMatch": {"$elemMatch": {"b": RANGE}}}}, [[[{"b": 5}]], [[{"b": [5]}]], [[{"b": [3, 7]}]]]),
    ],
)
def test_elemmatch_value(query: dict[str, Any], expected: list[Any]) -> None:
    _, found = find(EM_DOCS, [], filter=query, projection={"_id": 0})
    assert sorted(map(repr, found)) == sorted(repr({"a": v}) for v in expected)


# --- jstests/core/query/array/arrayfind9.js -------------------------------------------------------
# Ported: all five assertions ($elemMatch:$not, $gte {}, $in [[]], "0" index, and the hinted
# {$natural: 1} / {a: 1} / {"a.b": 1} loop).


@pytest.mark.parametrize(
    ("doc", "query"),
    [
        ({"a": [1]}, {"a": {"$elemMatch": {"$not": {"$ne": 1}}}}),
        ({"a": [{}]}, {"a": {"$elemMatch": {"$gte": {}}}}),
        ({"a": [[]]}, {"a": {"$elemMatch": {"$in": [[]]}}}),
        ({"a": [["x"]]}, {"a": {"$elemMatch": {"0": "x"}}}),
    ],
)
def test_arrayfind9_elemmatch(doc: dict[str, Any], query: dict[str, Any]) -> None:
    assert ids([{"_id": 0, **doc}], [], filter=query) == [0]


@pytest.mark.parametrize("hint", [{"$natural": 1}, {"a": 1}, {"a.b": 1}])
def test_arrayfind9_nested_array_bounds(hint: dict[str, Any]) -> None:
    docs = [{"_id": 0, "a": [{"b": [0, 2]}]}]
    found = ids(
        docs,
        [index({"a": 1}), index({"a.b": 1})],
        filter={"a": {"$elemMatch": {"b": {"$gte": 1, "$lte": 1}}}},
        hint=hint,
    )
    assert found == [0]


# --- jstests/core/query/idhack.js -----------------------------------------------------------------
# Ported: findOne({_id: {x: 2}}).z, the $gte count, the explain (nReturned 1, totalKeysExamined 1,
# IDHACK), no IDHACK with a hint or skip or a regex, the covered {_id: 1} projection, and the simple
# inclusion/exclusion/dotted projection results. (updates, min/max, returnKey, query shapes: not modelled)

IDHACK_DOCS = [
    {"_id": {"x": 1}, "z": 1}, {"_id": {"x": 2}, "z": 2}, {"_id": {"x": 3}, "z": 3},
    {"_id": 1, "z": 4}, {"_id": 2, "z": 5}, {"_id": 3, "z": 6},
]  # fmt: skip


def test_idhack_on_a_document_id() -> None:
    explain, found = find(IDHACK_DOCS, [], filter={"_id": {"x": 2}})
    assert [d["z"] for d in found] == [2]
    assert explain["executionStats"]["nReturned"] == 1
    assert explain["executionStats"]["totalKeysExamined"] == 1
    assert winning(explain) == ["IDHACK"]
    assert len(ids(IDHACK_DOCS, [], filter={"_id": {"$gte": 2}})) == 2


def test_idhack_not_with_hint_skip_or_regex() -> None:
    docs = [*IDHACK_DOCS, {"_id": "abc"}]
    explain, _ = find(docs, [index({"_id": 1, "a": 1})], filter={"_id": {"x": 2}}, hint={"_id": 1, "a": 1})
    assert "IDHACK" not in winning(explain)
    explain, _ = find(docs, [], filter={"_id": {"x": 2}}, skip=1)
    assert "IDHACK" not in winning(explain)
    explain, found = find(docs, [], filter={"_id": re.compile("abc")})
    assert "IDHACK" not in winning(explain)
    assert found == [{"_id": "abc"}]


def test_idhack_covered_id_projection() -> None:
    explain, found = find(IDHACK_DOCS, [], filter={"_id": {"x": 2}}, projection={"_id": 1})
    assert "IDHACK" in winning(explain)
    assert found == [{"_id": {"x": 2}}]


PROJ_DOCS = [{"_id": 0, "a": 0, "b": [{"c": 1}, {"c": 2}]}, {"_id": 1, "a": 1, "b": [{"c": 3}, {"c": 4}]}]


@pytest.mark.parametrize(
    ("id_", "projection", "expected"),
    [
        (1, {"a": 1}, {"_id": 1, "a": 1}),
        (1, {"_id": 0, "a": 1}, {"a": 1}),
        (0, {"_id": 1, "a": 1}, {"_id": 0, "a": 0}),
        (1, {"foobar": 1}, {"_id": 1}),
        (1, {"_id": 0, "foobar": 1}, {}),
        (1, {"_id": 0}, {"a": 1, "b": [{"c": 3}, {"c": 4}]}),
        (1, {"a": 0}, {"_id": 1, "b": [{"c": 3}, {"c": 4}]}),
        (1, {"foobar": 0}, {"_id": 1, "a": 1, "b": [{"c": 3}, {"c": 4}]}),
        (1, {"b": 0}, {"_id": 1, "a": 1}),
        (0, {"a": 0, "b": 0}, {"_id": 0}),
        (0, {"a": 0, "b": 0, "_id": 0}, {}),
        (0, {"_id": 0, "b.c": 1}, {"b": [{"c": 1}, {"c": 2}]}),
        (1, {"foo.bar": 1}, {"_id": 1}),
    ],
)
def test_idhack_projections(id_: int, projection: dict[str, Any], expected: dict[str, Any]) -> None:
    _, found = find(PROJ_DOCS, [], filter={"_id": id_}, projection=projection)
    assert found == [expected]


def test_idhack_missing_id_returns_nothing() -> None:
    assert find(PROJ_DOCS, [], filter={"_id": 8}, projection={"_id": 1})[1] == []
    assert find(PROJ_DOCS, [], filter={"_id": 8}, projection={"_id": 0})[1] == []


# --- jstests/core/query/in/in8.js -----------------------------------------------------------------
# Ported: both checkResults ($in with overlapping regex bounds), with the index {x: 1}.


@pytest.mark.parametrize("values", [[re.compile("^a"), re.compile("^ab")], [re.compile("^ab"), re.compile("^a")]])
def test_in8_overlapping_regex_bounds(values: list[Any]) -> None:
    docs = [{"_id": i, "x": x} for i, x in enumerate(("aa", "ab", "ac", "ad"))]
    explain, found = find(docs, [index({"x": 1})], filter={"x": {"$in": values}})
    assert len(found) == 4
    bounds = explain["queryPlanner"]["winningPlan"]["inputStage"]["indexBounds"]["x"]
    assert bounds == ['["a", "b")', "[/^a/, /^a/]", "[/^ab/, /^ab/]"]


# --- jstests/core/query/regex/regex3.js -----------------------------------------------------------
# Ported: every assertion (itcounts with and without {name: 1}, docsExamined 4 unindexed,
# keysExamined 2 for /^e.*/ and 4 for /^aa*/).


def test_regex3_prefix_scans() -> None:
    docs = [{"_id": i, "name": n} for i, n in enumerate(("eliot", "emily", "bob", "aaron"))]
    explain, found = find(docs, [], filter={"name": re.compile("^e.*")})
    assert len(found) == 2 and explain["executionStats"]["totalDocsExamined"] == 4
    explain, found = find(docs, [index({"name": 1})], filter={"name": re.compile("^e.*")})
    assert len(found) == 2 and explain["executionStats"]["totalKeysExamined"] == 2


def test_regex3_optional_characters() -> None:
    docs = [{"_id": i, "name": n} for i, n in enumerate(("aa", "ab", "ac", "c"))]
    assert len(ids(docs, [], filter={"name": re.compile("^aa*")})) == 3
    explain, found = find(docs, [index({"name": 1})], filter={"name": re.compile("^aa*")})
    assert len(found) == 3 and explain["executionStats"]["totalKeysExamined"] == 4
    assert len(ids(docs, [index({"name": 1})], filter={"name": re.compile("^a[ab]")})) == 2
    assert len(ids(docs, [index({"name": 1})], filter={"name": re.compile("^a[bc]")})) == 2
    one = [{"_id": 0, "name": ""}]
    assert len(ids(one, [], filter={"name": re.compile("^a?")})) == 1
    assert len(ids(one, [index({"name": 1})], filter={"name": re.compile("^a?")})) == 1


@pytest.mark.parametrize(
    "value", [re.compile("^ab", re.I), Regex("^ab", "i"), {"$regex": "^ab", "$options": "i"}], ids=["re", "bson", "op"]
)
def test_regex_with_flags_in_every_spelling(value: Any) -> None:
    """Issue 19: re.compile and bson.Regex with a flag explain with MongoDB's bounds (no prefix for /i)."""
    docs = [{"_id": 0, "a": "abc"}, {"_id": 1, "a": "ABd"}, {"_id": 2, "a": "xab"}]
    explain, found = find(docs, [index({"a": 1})], filter={"a": value})
    assert sorted(d["_id"] for d in found) == [0, 1]
    assert explain["queryPlanner"]["winningPlan"]["inputStage"]["indexBounds"] == {
        "a": ['["", {})', "[/^ab/i, /^ab/i]"]
    }


# --- jstests/core/index/index_bounds_minkey.js and index_bounds_maxkey.js ------------------------
# Ported: all eight assertCoveredQueryAndCount of each file (count, and no FETCH in the plan).

PROJ = {"a": 1, "_id": 0}


def covered_count(docs: Sequence[Any], query: dict[str, Any]) -> int:
    explain, found = find(docs, [index({"a": 1})], filter=query, projection=PROJ)
    assert "FETCH" not in winning(explain) and "PROJECTION_COVERED" in winning(explain), winning(explain)
    return len(found)


@pytest.mark.parametrize(
    ("query", "alone", "others"),
    [
        ({"a": {"$gt": MinKey()}}, 0, 3),
        ({"a": {"$gte": MinKey()}}, 1, 3),
        ({"a": {"$lt": MinKey()}}, 0, 0),
        ({"a": {"$lte": MinKey()}}, 1, 0),
    ],
)
def test_index_bounds_minkey(query: dict[str, Any], alone: int, others: int) -> None:
    assert covered_count([{"_id": 0, "a": MinKey()}], query) == alone
    assert covered_count([{"_id": 0, "a": "string"}, {"_id": 1, "a": {"b": 1}}, {"_id": 2}], query) == others


@pytest.mark.parametrize(
    ("query", "alone", "others"),
    [
        ({"a": {"$gt": MaxKey()}}, 0, 0),
        ({"a": {"$gte": MaxKey()}}, 1, 0),
        ({"a": {"$lt": MaxKey()}}, 0, 3),
        ({"a": {"$lte": MaxKey()}}, 1, 3),
    ],
)
def test_index_bounds_maxkey(query: dict[str, Any], alone: int, others: int) -> None:
    assert covered_count([{"_id": 0, "a": MaxKey()}], query) == alone
    assert covered_count([{"_id": 0, "a": "string"}, {"_id": 1, "a": {"b": 1}}, {"_id": 2}], query) == others


# --- jstests/core/index/index_bounds_object.js ----------------------------------------------------
# Ported: every covered count, and that a multikey index is never covered.


@pytest.mark.parametrize(
    ("docs", "query", "count"),
    [
        ([{"b": 1}], {"$gt": {"b": 0}}, 1),
        ([{"b": 1}], {"$gt": {"b": 2}}, 0),
        ([{"b": 1}], {"$gte": {"b": 1}}, 1),
        ([{"b": 1}], {"$gte": {"b": 1, "c": 2}}, 0),
        ([{"b": 1}], {"$lt": {"b": 2}}, 1),
        ([{"b": 1}], {"$lte": {"b": 1}}, 1),
        ([{"b": 1}, {}], {"$gt": {}}, 1),
        ([{"b": 1}, {}], {"$gte": {}}, 2),
        ([{"b": 1}, {}], {"$lt": {}}, 0),
        ([{"b": 1}, {}], {"$lte": {}}, 1),
        ([{"b": 1}, {}], {"$gt": {}, "$lt": {"b": 2}}, 1),
        ([{"b": 1}, {}], {"$gte": {}, "$lt": {"b": 2}}, 2),
        ([{"b": 1}, {}], {"$lt": {}, "$gte": {}}, 0),
        (["string", True], {"$gt": {}}, 0),
        (["string", True], {"$gte": {}}, 0),
        (["string", True], {"$lt": {}}, 0),
        (["string", True], {"$lte": {}}, 0),
    ],
)
def test_index_bounds_object(docs: list[Any], query: dict[str, Any], count: int) -> None:
    assert covered_count([{"_id": i, "a": a} for i, a in enumerate(docs)], {"a": query}) == count


@pytest.mark.parametrize("op", ["$gt", "$gte", "$lt", "$lte"])
def test_index_bounds_object_multikey_not_covered(op: str) -> None:
    docs = [{"_id": 0, "a": "string"}, {"_id": 1, "a": True}, {"_id": 2, "a": []}]
    explain, _ = find(docs, [index({"a": 1})], filter={"a": {op: {}}}, projection=PROJ)
    assert "FETCH" in winning(explain)


# --- jstests/core/query/exists/existsa.js ---------------------------------------------------------
# Ported: assertMissing / assertExists / assertExistsUnindexed for the top-level cases, count and
# hinted count on the sparse index {a: 1} (the hinted sparse index returns what it holds).

EXISTSA = [{"_id": 0}, {"_id": 1, "a": 1}, {"_id": 2, "a": {"x": 1}, "b": 1}]
SPARSE_A = index({"a": 1}, sparse=True)


@pytest.mark.parametrize(
    ("query", "count", "hinted"),
    [
        ({"a": {"$exists": False}}, 1, 0),
        ({"a": {"$not": {"$exists": True}}}, 1, 0),
        ({"$and": [{"a": {"$exists": False}}]}, 1, 0),
        ({"$or": [{"a": {"$exists": False}}]}, 1, 0),
        ({"$nor": [{"a": {"$exists": True}}]}, 1, 0),
        ({"a.x": {"$exists": False}}, 2, 1),
        ({"b": {"$exists": False}}, 2, 1),
        ({"b": {"$exists": False}, "a": {"$ne": 6}}, 2, 1),
        ({"b": {"$not": {"$exists": True}}}, 2, 1),
        ({"a": {"$exists": True}}, 2, 2),
        ({"a": {"$exists": True}, "$and": [{"a": {"$ne": None}}]}, 2, 2),
        ({"$nor": [{"a": {"$exists": False}}], "$and": [{"a": {"$ne": None}}]}, 2, 2),
        ({"a": {"$not": {"$exists": False}}, "$and": [{"a": {"$ne": None}}]}, 2, 2),
    ],
)
def test_existsa_sparse(query: dict[str, Any], count: int, hinted: int) -> None:
    assert len(ids(EXISTSA, [SPARSE_A], filter=query)) == count
    assert len(ids(EXISTSA, [SPARSE_A], filter=query, hint={"a": 1})) == hinted


def test_existsa_sparse_index_not_chosen_for_exists_false() -> None:
    explain, _ = find(EXISTSA, [SPARSE_A], filter={"a": {"$exists": False}})
    assert winning(explain) == ["COLLSCAN"]


def test_sparse_index_serves_ne_null() -> None:
    """sparse_index_supports_ne_null.js's rule: {$ne: null} excludes missing, so a sparse index answers it."""
    explain, found = find(EXISTSA, [SPARSE_A], filter={"a": {"$ne": None}})
    assert "IXSCAN" in winning(explain)
    assert sorted(d["_id"] for d in found) == [1, 2]
    explain, found = find(
        [{"_id": 0, "a": [None]}, {"_id": 1, "a": [1]}, {"_id": 2}],
        [SPARSE_A],
        filter={"a": {"$elemMatch": {"$ne": None}}},
    )
    assert "IXSCAN" in winning(explain)
    assert [d["_id"] for d in found] == [1]


# --- jstests/core/query/all/all2.js ---------------------------------------------------------------
# Ported: every check (count = itcount) with and without the index, on a.x and on a.

ALL2_OBJECTS = [
    {"_id": 0, "a": [{"x": 1}, {"x": 2}]},
    {"_id": 1, "a": [{"x": 2}, {"x": 3}]},
    {"_id": 2, "a": [{"x": 3}, {"x": 4}]},
]
ALL2_ARRAYS = [{"_id": 0, "a": [1, 2]}, {"_id": 1, "a": [2, 3]}, {"_id": 2, "a": [3, 4]}]
ALL2 = [
    (1, {"$in": [1]}), (2, {"$in": [2]}), (2, {"$in": [1, 2]}), (3, {"$in": [2, 3]}), (3, {"$in": [1, 3]}),
    (1, {"$all": [1, 2]}), (1, {"$all": [2, 3]}), (0, {"$all": [1, 3]}),
]  # fmt: skip


@pytest.mark.parametrize(("count", "condition"), ALL2)
@pytest.mark.parametrize("indexed", [False, True])
def test_all2(count: int, condition: dict[str, Any], indexed: bool) -> None:
    assert len(ids(ALL2_OBJECTS, [index({"a.x": 1})] if indexed else [], filter={"a.x": condition})) == count
    assert len(ids(ALL2_ARRAYS, [index({"a": 1})] if indexed else [], filter={"a": condition})) == count
    names = [{"_id": 0, "name": ["harry", "jack", "tom"]}]
    assert ids(names, [index({"name": 1})] if indexed else [], filter={"name": {"$all": ["harry", "john"]}}) == []


# --- hint({$natural: 1}) / hint({$natural: -1}) (issue 19) ----------------------------------------


@pytest.mark.parametrize(("natural", "direction", "order"), [(1, "forward", [0, 1, 2]), (-1, "backward", [2, 1, 0])])
def test_natural_hint_is_a_directed_collscan(natural: int, direction: str, order: list[int]) -> None:
    docs = [{"_id": i, "a": i} for i in range(3)]
    explain, found = find(docs, [index({"a": 1})], filter={"a": {"$gte": 0}}, hint={"$natural": natural})
    assert explain["queryPlanner"]["winningPlan"] == {
        "stage": "COLLSCAN",
        "filter": {"a": {"$gte": 0}},
        "direction": direction,
    }
    assert [d["_id"] for d in found] == order


# --- a collection's default collation (sort_merge_collation.js, collation_match.js) ---------------


def test_default_collation_orders_and_matches() -> None:
    numeric = {"locale": "en_US", "numericOrdering": True}
    docs = [{"_id": 0, "a": "10"}, {"_id": 1, "a": "9"}, {"_id": 2, "a": "100"}]
    assert ids(docs, [], filter={}, sort={"a": 1}, collection_collation=numeric) == [1, 0, 2]
    insensitive = {"locale": "en_US", "strength": 2}
    docs = [{"_id": 0, "str": "FOO"}, {"_id": 1, "str": "bar"}]
    assert ids(docs, [], filter={"str": "foo"}, collection_collation=insensitive) == [0]
    assert ids(docs, [], filter={"str": "foo"}, collation={"locale": "simple"}, collection_collation=insensitive) == []


# --- jstests/core/index/sparse_index_supports_ne_null.js ------------------------------------------
# Ported: every checkQuery (whether an IXSCAN on the sparse index is in the winning plan, and the
# itcount) of the non-compound, compound and nested-multikey sections.


def check_ne_null(docs: list[dict[str, Any]], key: dict[str, int], query: dict[str, Any], uses: bool, n: int) -> None:
    explain, found = find(docs, [index(key, sparse=True)], filter=query)
    assert ("IXSCAN" in winning(explain)) == uses, explain["queryPlanner"]["winningPlan"]
    assert len(found) == n


NE_NULL = {"a": {"$ne": None}}
EM_NE_NULL = {"a": {"$elemMatch": {"$ne": None}}}


def test_sparse_ne_null_single_field() -> None:
    docs: list[dict[str, Any]] = [
        {"_id": 0, "a": 1},
        {"_id": 1, "a": {"x": 1}},
        {"_id": 2, "a": None},
        {"_id": 3, "a": UNDEFINED},
    ]
    check_ne_null(docs, {"a": 1}, NE_NULL, True, 2)
    check_ne_null(docs, {"a": 1}, EM_NE_NULL, True, 0)
    docs.append({"_id": 4, "a": [1, 2, 3]})
    check_ne_null(docs, {"a": 1}, NE_NULL, False, 3)
    check_ne_null(docs, {"a": 1}, EM_NE_NULL, True, 1)


def test_sparse_ne_null_compound() -> None:
    docs: list[dict[str, Any]] = [
        {"_id": 0, "a": 1, "b": 1}, {"_id": 1, "a": {"x": 1}, "b": 1},
        {"_id": 2, "a": None, "b": 1}, {"_id": 3, "a": UNDEFINED, "b": 1},
    ]  # fmt: skip
    key = {"a": 1, "b": 1}
    check_ne_null(docs, key, NE_NULL, True, 2)
    check_ne_null(docs, key, EM_NE_NULL, True, 0)
    docs.append({"_id": 4, "a": 1, "b": [1, 2, 3]})
    check_ne_null(docs, key, NE_NULL, True, 3)
    check_ne_null(docs, key, EM_NE_NULL, True, 0)
    docs.append({"_id": 5, "a": [1, 2, 3], "b": 1})
    check_ne_null(docs, key, NE_NULL, False, 4)
    check_ne_null(docs, key, EM_NE_NULL, True, 1)


def test_sparse_ne_null_nested_multikey() -> None:
    docs: list[dict[str, Any]] = [
        {"_id": 0, "a": {"b": [{"c": {"d": 1}}]}}, {"_id": 1, "a": {"b": [{"c": {"d": {"e": 1}}}]}},
        {"_id": 2, "a": {"b": [{"c": {"d": None}}]}}, {"_id": 3, "a": {"b": [{"c": {"d": UNDEFINED}}]}},
    ]  # fmt: skip
    key = {"a.b.c.d": 1}
    query, em = {"a.b.c.d": {"$ne": None}}, {"a.b.c.d": {"$elemMatch": {"$ne": None}}}
    check_ne_null(docs, key, query, False, 2)
    check_ne_null(docs, key, em, True, 0)
    docs.append({"_id": 4, "a": [{"b": [{"c": {"d": 1}}]}]})
    check_ne_null(docs, key, query, False, 3)
    check_ne_null(docs, key, em, True, 0)
    docs.append({"_id": 5, "a": {"b": [{"c": [{"d": 1}]}]}})
    check_ne_null(docs, key, query, False, 4)
    check_ne_null(docs, key, em, True, 0)


# --- jstests/core/query/or/or_to_in.js ------------------------------------------------------------
# Ported: assertEquivPlanAndResult for every positive pair (same parsedQuery, same winning plan,
# same results; also sorted on f1 under {locale: "en_US"}), with no index, {f1: 1}, and the three
# indexes; assertOrNotRewrittenToIn for {$lt}/{$gt} (an $eq to a regex is refused by name instead).

OR_DATA: list[dict[str, Any]] = [
    {"_id": 0, "f1": 3, "f2": 7}, {"_id": 1, "f1": 1, "f2": [32, 42, 52, [11]]}, {"_id": 2, "f1": 2, "f2": 9},
    {"_id": 3, "f1": 5, "f2": 42}, {"_id": 4, "f1": 1, "f2": [23, 42, 13]}, {"_id": 5, "f1": "xz", "f2": 13},
    {"_id": 6, "f1": "ab", "f2": 15}, {"_id": 7, "f1": None, "f2": None}, {"_id": 8, "f1": UNDEFINED, "f2": UNDEFINED},
    {"_id": 9, "f1": math.nan, "f2": math.nan}, {"_id": 10, "f1": 1, "f2": [32, 52]},
    {"_id": 11, "f1": 1, "f2": [42, [13, 11]]},
]  # fmt: skip
X, AB, C = re.compile("^x"), re.compile("ab"), re.compile("c")
OR_PAIRS = [
    ({"$or": [{"f1": 5}, {"f1": 3}, {"f1": 7}]}, {"f1": {"$in": [7, 3, 5]}}),
    ({"$or": [{"f1": {"$eq": 5}}, {"f1": {"$eq": 3}}, {"f1": {"$eq": 7}}]}, {"f1": {"$in": [7, 3, 5]}}),
    ({"$or": [{"f1": 42}, {"f1": math.nan}, {"f1": 99}]}, {"f1": {"$in": [42, math.nan, 99]}}),
    ({"$or": [{"f1": X}, {"f1": "ab"}]}, {"f1": {"$in": [X, "ab"]}}),
    ({"$or": [{"f1": X}, {"f1": "ab"}]}, {"$or": [{"f1": "ab"}, {"f1": X}]}),
    ({"$or": [{"f1": X}, {"f1": "^a"}]}, {"f1": {"$in": [X, "^a"]}}),
    ({"$or": [{"f1": 42}, {"f1": None}, {"f1": 99}]}, {"f1": {"$in": [42, 99, None]}}),
    ({"$or": [{"f1": 1}, {"f2": 9}, {"f1": 99}]}, {"$or": [{"f2": 9}, {"f1": {"$in": [1, 99]}}]}),
    ({"$or": [{"f1": {"$regex": X}}, {"f1": {"$regex": AB}}]}, {"f1": {"$in": [X, AB]}}),
    (
        {"$and": [{"$or": [{"f1": 7}, {"f1": 3}, {"f1": 5}]}, {"$or": [{"f1": 1}, {"f1": 2}, {"f1": 3}]}]},
        {"$and": [{"f1": {"$in": [7, 3, 5]}}, {"f1": {"$in": [1, 2, 3]}}]},
    ),
    (
        {"$or": [{"$or": [{"f1": 7}, {"f1": 3}, {"f1": 5}]}, {"$or": [{"f1": 1}, {"f1": 2}, {"f1": 3}]}]},
        {"$or": [{"f1": {"$in": [7, 3, 5]}}, {"f1": {"$in": [1, 2, 3]}}]},
    ),
    (
        {"$or": [{"$and": [{"f1": 7}, {"f2": 7}, {"f1": 5}]}, {"$or": [{"f1": 1}, {"f1": 2}, {"f1": 3}]}]},
        {"$or": [{"$and": [{"f1": 7}, {"f2": 7}, {"f1": 5}]}, {"f1": {"$in": [1, 2, 3]}}]},
    ),
    ({"$or": [{"f2": [32, 52]}, {"f2": [42, [13, 11]]}]}, {"f2": {"$in": [[32, 52], [42, [13, 11]]]}}),
    ({"$or": [{"f2": 52}, {"f2": 13}]}, {"f2": {"$in": [52, 13]}}),
    ({"$or": [{"f2": [11]}, {"f2": [23]}]}, {"f2": {"$in": [[11], [23]]}}),
    ({"$or": [{"f1": 42}, {"f1": None}]}, {"f1": {"$in": [42, None]}}),
    ({"$or": [{"f1": "a"}, {"f1": "b"}, {"f1": C}]}, {"f1": {"$in": ["a", "b", C]}}),
    ({"$or": [{"f1": "a"}, {"f1": "b"}, {"f1": C}]}, {"$or": [{"f1": C}, {"f1": "a"}, {"f1": "b"}]}),
    ({"$or": [{"f1": "a"}, {"f1": "b"}, {"f1": C}]}, {"$or": [{"f1": "a"}, {"f1": C}, {"f1": "b"}]}),
    ({"$or": [{"f2": 9}, {"f1": 1}, {"f1": 99}]}, {"$or": [{"f2": 9}, {"f1": {"$in": [1, 99]}}]}),
    (
        {"$or": [{"f1": 1}, {"f1": 2}, {"f2": 3}, {"f2": 4}]},
        {"$or": [{"f1": {"$in": [1, 2]}}, {"f2": {"$in": [3, 4]}}]},
    ),
    (
        {"$or": [{"f1": 1}, {"f2": 3}, {"f1": 2}, {"f2": 4}]},
        {"$or": [{"f1": {"$in": [1, 2]}}, {"f2": {"$in": [3, 4]}}]},
    ),
    (
        {"$or": [{"f1": 1}, {"f1": 2}, {"f2": 3}, {"f2": 4}, {"f3": 5}]},
        {"$or": [{"f1": {"$in": [1, 2]}}, {"f2": {"$in": [3, 4]}}, {"f3": 5}]},
    ),
    ({"$or": [{"f1": 1}, {"f1": 1}]}, {"f1": 1}),
]
OR_INDEXES = {
    "none": [],
    "f1": [index({"f1": 1})],
    "three": [index({"f1": 1}), index({"f2": 1}), index({"f1": -1, "f2": 1})],
}


def _same_result(left: list[Any], right: list[Any]) -> bool:
    return sorted(d["_id"] for d in left) == sorted(d["_id"] for d in right)


@pytest.mark.parametrize("indexes", list(OR_INDEXES), ids=list(OR_INDEXES))
@pytest.mark.parametrize(("rewritten", "expected"), OR_PAIRS)
def test_or_to_in(indexes: str, rewritten: dict[str, Any], expected: dict[str, Any]) -> None:
    for extra in ({}, {"sort": {"f1": 1}, "collation": {"locale": "en_US"}}):
        want, want_docs = find(OR_DATA, OR_INDEXES[indexes], filter=expected, **extra)
        got, got_docs = find(OR_DATA, OR_INDEXES[indexes], filter=rewritten, **extra)
        assert got["queryPlanner"]["parsedQuery"] == want["queryPlanner"]["parsedQuery"]
        assert got["queryPlanner"]["winningPlan"] == want["queryPlanner"]["winningPlan"]
        assert _same_result(got_docs, want_docs)


def test_or_to_in_not_for_ranges() -> None:
    explain, _ = find(OR_DATA, [], filter={"$or": [{"f1": {"$lt": 2}}, {"f1": {"$gt": 3}}]})
    parsed = explain["queryPlanner"]["parsedQuery"]
    assert list(parsed) == ["$or"] and all("$in" not in next(iter(c.values())) for c in parsed["$or"])


def test_or_of_regex_equalities_is_refused_by_name() -> None:
    with pytest.raises(UnsupportedByModelError, match=r"\$eq with a regular expression"):
        find(OR_DATA, [], filter={"$or": [{"f1": {"$eq": X}}, {"f1": {"$eq": AB}}]})


# --- jstests/core/query/or/or1.js -----------------------------------------------------------------
# Ported: the $or result sets and the three multikey $in counts under each of the four index setups;
# the malformed $or refusals.

OR1_DOCS: list[dict[str, Any]] = [
    {"_id": 0, "a": 1}, {"_id": 1, "a": 2}, {"_id": 2, "b": 1}, {"_id": 3, "b": 2},
    {"_id": 4, "a": 1, "b": 1}, {"_id": 5, "a": 1, "b": 2}, {"_id": 6, "a": 2, "b": 1}, {"_id": 7, "a": 2, "b": 2},
]  # fmt: skip
OR1_INDEXES = [[], [index({"a": 1})], [index({"b": 1})], [index({"a": 1, "b": 1})]]


@pytest.mark.parametrize("indexes", OR1_INDEXES)
def test_or1(indexes: list[dict[str, Any]]) -> None:
    assert sorted(ids(OR1_DOCS, indexes, filter={"$or": [{"a": 1}]})) == [0, 4, 5]
    assert sorted(ids(OR1_DOCS, indexes, filter={"$or": [{"a": 1}, {"b": 2}]})) == [0, 3, 4, 5, 7]
    one = [{"_id": 0, "a": [0, 1], "b": [0, 1]}]  # doTest drops the collection (and its index) first
    assert len(ids(one, [], filter={"$or": [{"a": {"$in": [0, 1]}}]})) == 1
    assert len(ids(one, [], filter={"$or": [{"b": {"$in": [0, 1]}}]})) == 1
    assert len(ids(one, [], filter={"$or": [{"a": {"$in": [0, 1]}}, {"b": {"$in": [0, 1]}}]})) == 1
    for bad in ("a", [], ["a"]):
        with pytest.raises(UnsupportedByModelError):
            find(OR1_DOCS, indexes, filter={"$or": bad})


# --- jstests/core/query/or/or4.js -----------------------------------------------------------------
# Ported: the counts with skip and limit over {a: 1} and {b: 1}, the sorted-equality check, and the
# multikey $or counts (writes, distinct and mapReduce: not modelled).

OR4_DOCS: list[dict[str, Any]] = [
    {"_id": 0, "a": 2},
    {"_id": 1, "b": 3},
    {"_id": 2, "b": 3},
    {"_id": 3, "a": 2, "b": 3},
]
OR4_INDEXES = [index({"a": 1}), index({"b": 1})]
A2_OR_B3 = {"$or": [{"a": 2}, {"b": 3}]}


@pytest.mark.parametrize(
    ("query", "args", "count"),
    [
        (A2_OR_B3, {}, 4), ({"$or": [{"a": 2}, {"a": 2}]}, {}, 2), ({}, {"skip": 2}, 2), (A2_OR_B3, {"skip": 2}, 2),
        (A2_OR_B3, {"skip": 3}, 1), ({}, {"limit": 2}, 2), (A2_OR_B3, {"limit": 1}, 1), (A2_OR_B3, {"limit": 2}, 2),
        (A2_OR_B3, {"limit": 3}, 3), (A2_OR_B3, {"limit": 4}, 4),
    ],
)  # fmt: skip
def test_or4_counts(query: dict[str, Any], args: dict[str, Any], count: int) -> None:
    assert len(ids(OR4_DOCS, OR4_INDEXES, filter=query, **args)) == count


def test_or4_sorted_and_multikey() -> None:
    assert ids(OR4_DOCS, OR4_INDEXES, filter=A2_OR_B3, sort={"_id": 1}) == ids(
        OR4_DOCS, OR4_INDEXES, filter={}, sort={"_id": 1}
    )
    arr = [{"_id": 0, "a": [1, 2]}]
    for query in ({"$or": [{"a": 1}, {"a": 2}]}, {"$or": [{"a": 2}, {"a": 1}]}):
        assert len(ids(arr, OR4_INDEXES, filter=query)) == 1


# --- jstests/core/query/regex/regex6.js -----------------------------------------------------------
# Ported: every count and totalKeysExamined with the index {name: 1}.

REGEX6 = [{"_id": i, "name": n} for i, n in enumerate(("eliot", "emily", "bob", "aaron", "[with]some?symbols"))]


@pytest.mark.parametrize(
    ("query", "keys", "count"),
    [
        ({"name": re.compile(r"^\/")}, 1, 0),
        ({"name": re.compile("^é")}, 0, None),
        ({"name": Regex(r"^\é")}, 0, None),
        ({"name": re.compile(r"^\.")}, 1, None),
        ({"name": re.compile("^.")}, 5, None),
        ({"name": Regex(r"^\Qblah\E")}, 1, 0),
        ({"name": re.compile("^blah")}, 1, None),
        ({"name": Regex(r"^\Q[\Ewi\Qth]some?s\Eym")}, 2, 1),
        ({"name": re.compile("^bob")}, 2, None),
        ({"name": {"$regex": "^e", "$gte": "emily"}}, 1, None),
        ({"name": {"$gt": "a", "$regex": "^emily"}}, 1, None),
    ],
)
def test_regex6_keys_examined(query: dict[str, Any], keys: int, count: int | None) -> None:
    explain, found = find(REGEX6, [index({"name": 1})], filter=query)
    assert explain["executionStats"]["totalKeysExamined"] == keys
    if count is not None:
        assert len(found) == count


# --- jstests/core/index/index_bounds_timestamp.js -------------------------------------------------
# Ported: every count and covered-plan assertion over the index {ts: 1, _id: 1}.

TS_DOCS = [
    {"_id": 0, "ts": Timestamp(0, 1)}, {"_id": 1, "ts": Timestamp(0, 2**31)}, {"_id": 2, "ts": Timestamp(0, 2**32 - 1)},
    {"_id": 3, "ts": Timestamp(1, 0)}, {"_id": 4, "ts": Timestamp(2**32 - 1, 2**32 - 1)},
]  # fmt: skip


@pytest.mark.parametrize(
    ("query", "count"),
    [
        ({"$gt": Timestamp(0, 0)}, 5), ({"$gte": Timestamp(0, 0)}, 5), ({"$lt": Timestamp(1, 0)}, 3),
        ({"$lte": Timestamp(1, 0)}, 4), ({"$gt": Timestamp(0, 1), "$lt": Timestamp(1, 0)}, 2),
        ({"$gt": Timestamp(0, 1), "$lte": Timestamp(1, 0)}, 3), ({"$gte": Timestamp(0, 1), "$lt": Timestamp(1, 0)}, 3),
        ({"$gte": Timestamp(0, 1), "$lte": Timestamp(1, 0)}, 4),
    ],
)  # fmt: skip
def test_index_bounds_timestamp(query: dict[str, Any], count: int) -> None:
    explain, found = find(TS_DOCS, [index({"ts": 1, "_id": 1})], filter={"ts": query}, projection={"ts": 1, "_id": 0})
    assert "FETCH" not in winning(explain) and "IXSCAN" in winning(explain)
    assert len(found) == count


# --- jstests/core/index/indext.js -----------------------------------------------------------------
# Ported: all three hinted itcounts (a hinted sparse index returns only the documents it holds).


def test_indext_hinted_sparse_returns_what_the_index_holds() -> None:
    sparse_b = index({"a.b": 1}, sparse=True)
    sparse_bc = index({"a.b": 1, "a.c": 1}, sparse=True)
    docs: list[dict[str, Any]] = [{"_id": 0, "a": []}, {"_id": 1, "a": 1}]
    assert ids(docs, [sparse_b], filter={}, hint={"a.b": 1}) == []
    docs += [{"_id": 2, "a": []}, {"_id": 3, "a": 1}]
    assert ids(docs, [sparse_b, sparse_bc], filter={}, hint={"a.b": 1, "a.c": 1}) == []
    docs += [{"_id": 4, "a": [{"b": 1}]}, {"_id": 5, "a": 1}]
    assert ids(docs, [sparse_b, sparse_bc], filter={}, hint={"a.b": 1, "a.c": 1}) == [4]


# --- jstests/core/query/explode_for_sort_equality_to_array.js -------------------------------------
# Ported: both assertions (a SORT_MERGE in the winning plan, nReturned 1).


def test_explode_for_sort_equality_to_array() -> None:
    docs = [{"_id": 0, "array": [[1], [2]]}, {"_id": 1, "array": [[1]]}, {"_id": 2, "array": [[2]]}]
    explain, found = find(
        docs, [index({"array": -1, "num": 1})], filter={"array": {"$all": [[1], [2]]}}, sort={"num": 1}
    )
    assert "SORT_MERGE" in winning(explain)
    assert explain["executionStats"]["nReturned"] == 1 and [d["_id"] for d in found] == [0]


# --- jstests/core/index/index_partial_read_ops.js -------------------------------------------------
# Ported: the find() assertions of testBasicPartialFilterExpression (IXSCAN or COLLSCAN, nReturned),
# the three overlapping partial indexes on {a: 1} (IXSCAN, number of rejected plans, same results as
# the COLLSCAN), testFilterWithInExpression and testFilterWithMultiLevelAndOrExpressions.
# (count, aggregate and findAndModify explains: not modelled here.)


def partial_plan(docs: list[dict[str, Any]], pfe: dict[str, Any], query: dict[str, Any]) -> tuple[str, int]:
    explain, _ = find(docs, [index({"x": 1}, partialFilterExpression=pfe)], filter=query)
    return winning(explain)[-1], explain["executionStats"]["nReturned"]


IN_DOCS = [{"x": 1, "a": 4}, {"x": 2, "a": 3}, {"x": 3, "a": 5}]


@pytest.mark.parametrize(
    ("docs", "pfe", "query", "stage"),
    [
        ([{"x": 5, "a": 2}, {"x": 6, "a": 1}], {"a": {"$lte": 1.5}}, {"x": 6, "a": 1}, "IXSCAN"),
        ([{"x": 5, "a": 2}, {"x": 6, "a": 1}], {"a": {"$lte": 1.5}}, {"x": {"$gt": 1}, "a": 1}, "IXSCAN"),
        ([{"x": 5, "a": 2}, {"x": 6, "a": 1}], {"a": {"$lte": 1.5}}, {"x": 6, "a": {"$lte": 1}}, "IXSCAN"),
        ([{"x": 5, "a": 2}, {"x": 6, "a": 1}], {"a": {"$lte": 1.5}}, {"x": 6, "a": {"$lt": 1.6}}, "COLLSCAN"),
        ([{"x": 5, "a": 2}, {"x": 6, "a": 1}], {"a": {"$lte": 1.5}}, {"x": 6}, "COLLSCAN"),
        (IN_DOCS, {"a": {"$in": [3, 5]}}, {"x": 2, "a": 3}, "IXSCAN"),
        (IN_DOCS, {"a": {"$in": [3, 5]}}, {"x": {"$gt": 1}, "a": 5}, "IXSCAN"),
        (IN_DOCS, {"a": {"$in": [3, 5]}}, {"x": 3, "a": {"$lt": 6}}, "COLLSCAN"),
        (IN_DOCS, {"a": {"$in": [3, 5]}}, {"x": 2}, "COLLSCAN"),
    ],
)  # fmt: skip
def test_index_partial_read_ops(
    docs: list[dict[str, Any]], pfe: dict[str, Any], query: dict[str, Any], stage: str
) -> None:
    with_ids = [{"_id": i, **d} for i, d in enumerate(docs)]
    assert partial_plan(with_ids, pfe, query) == (stage, 1)


OR_AND_PFE = {"$or": [{"a": 3}, {"$and": [{"a": 5}, {"b": 5}]}]}
OR_AND_DOCS = [
    {"_id": 0, "x": 1, "a": 1}, {"_id": 1, "x": 2, "a": 5}, {"_id": 2, "x": 3, "a": 5, "b": 1},
    {"_id": 3, "x": 4, "a": 3}, {"_id": 4, "x": 5, "a": 5, "b": 5},
]  # fmt: skip


@pytest.mark.parametrize(
    ("query", "stage"),
    [
        ({"x": 4, "a": 3}, "IXSCAN"),
        ({"x": 5, "a": 5, "b": 5}, "IXSCAN"),
        ({"x": 1, "a": 1}, "COLLSCAN"),
        ({"x": 2, "a": 5}, "COLLSCAN"),
        ({"x": 3, "a": 5, "b": 1}, "COLLSCAN"),
    ],
)
def test_index_partial_or_and_filter(query: dict[str, Any], stage: str) -> None:
    assert partial_plan(OR_AND_DOCS, OR_AND_PFE, query) == (stage, 1)


OVERLAPPING = [
    index({"a": 1}, name=f"index{i + 1}", partialFilterExpression={"a": {"$gte": g}})
    for i, g in enumerate((0, 10, 100))
]
OVERLAP_DOCS = [{"_id": i, "a": a} for i, a in enumerate((1, 2, 3, 11, 12, 13, 101, 102, 103))]


@pytest.mark.parametrize(
    ("query", "rejected", "values"),
    [
        ({"a": {"$gt": 0, "$lt": 10}}, 0, [1, 2, 3]),
        ({"a": {"$gt": 10, "$lt": 100}}, 1, [11, 12, 13]),
        ({"a": {"$gt": 100, "$lt": 1000}}, 2, [101, 102, 103]),
        ({"a": {"$gt": 0}}, 0, [1, 2, 3, 11, 12, 13, 101, 102, 103]),
    ],
)
def test_index_partial_overlapping(query: dict[str, Any], rejected: int, values: list[int]) -> None:
    explain, found = find(OVERLAP_DOCS, OVERLAPPING, filter=query)
    assert "IXSCAN" in winning(explain)
    assert len(explain["queryPlanner"]["rejectedPlans"]) == rejected
    scanned = find(OVERLAP_DOCS, OVERLAPPING, filter=query, hint={"$natural": 1})[1]
    assert sorted(d["a"] for d in found) == sorted(d["a"] for d in scanned) == values


def test_index_partial_outside_every_range_is_a_collscan() -> None:
    explain, _ = find(OVERLAP_DOCS, OVERLAPPING, filter={"a": {"$lt": 0}})
    assert winning(explain) == ["COLLSCAN"]


# --- jstests/core/query/collation/collation_with_reverse_index.js ---------------------------------
# Ported: both assertions (one result, its text intact through a descending collated index).


def test_collation_with_reverse_index() -> None:
    docs = [{"_id": 0, "int": 1, "text": "hello world"}]
    collated = index({"int": -1, "text": -1}, collation={"locale": "en", "strength": 1})
    _, found = find(docs, [collated], filter={"int": 1}, projection={"_id": 0, "int": 1, "text": 1})
    assert len(found) == 1 and found[0]["text"] == "hello world"


# --- jstests/core/query/in/in.js ------------------------------------------------------------------
# Ported: every assertion (a non-array $in refused, the itcounts before and after {a: 1}).


@pytest.mark.parametrize("indexes", [[], [index({"a": 1})]], ids=["unindexed", "indexed"])
def test_in(indexes: list[dict[str, Any]]) -> None:
    docs = [{"_id": 0, "a": 1}, {"_id": 1, "a": 2}]
    for bad in ({"x": 1}, 1):
        with pytest.raises(UnsupportedByModelError, match="not a list"):
            find(docs, indexes, filter={"a": {"$in": bad}})
    assert len(ids(docs, indexes, filter={"a": {"$in": [1]}})) == 1
    assert len(ids(docs, indexes, filter={"a": {"$in": [2]}})) == 1
    assert len(ids(docs, indexes, filter={"a": {"$in": [1, 2]}})) == 2
    assert ids(docs, indexes, filter={"a": {"$in": []}}) == []
    assert len(ids(docs, indexes, filter={"a": {"$gt": 1, "$in": [2]}})) == 1


# --- jstests/core/query/in/in_with_mixed_values.js ------------------------------------------------
# Ported: every itcount of the four sections (regex with scalars, with composite values, on dotted
# paths, and with BinData), unindexed and with {x: 1} / {"y.z": 1}.

A_RE, AB_RE, AC_RE, Z_RE = re.compile("^a"), re.compile("^ab"), re.compile("^ac"), re.compile("^z")
MIXED_SCALARS = [1, 2, 3, "ab", "ac", "ad", Regex("^ab")]
MIXED_COMPOSITE: list[Any] = [
    1, 2, 3, "ab", "ac", "ad", [1], [1, 2], [1, "ab"], ["ac", 2], {"y": 1}, {"y": "ab"}, {"y": [99, {"z": 1}]},
]  # fmt: skip


@pytest.mark.parametrize("indexed", [False, True])
@pytest.mark.parametrize(
    ("values", "query", "count"),
    [
        (MIXED_SCALARS, {"x": {"$in": [1, A_RE]}}, 4),
        (MIXED_SCALARS, {"x": {"$in": [A_RE, 1]}}, 4),
        (MIXED_SCALARS, {"x": {"$in": [A_RE, 1, 2]}}, 5),
        (MIXED_SCALARS, {"x": {"$in": [A_RE, 1, 2, 3]}}, 6),
        (MIXED_SCALARS, {"x": {"$in": [AB_RE, 1, 2, 3]}}, 5),
        (MIXED_SCALARS, {"x": {"$in": [A_RE, 1, 2, AB_RE]}}, 6),
        (MIXED_SCALARS, {"x": {"$in": [1, AB_RE, 2, A_RE]}}, 6),
        (MIXED_SCALARS, {"x": {"$in": [A_RE, 1, 2, 3, AB_RE]}}, 7),
        (MIXED_SCALARS, {"x": {"$in": [1, AB_RE, 2, 3, A_RE]}}, 7),
        (MIXED_COMPOSITE, {"x": {"$in": [1, A_RE]}}, 8),
        (MIXED_COMPOSITE, {"x": {"$in": [2, A_RE]}}, 7),
        (MIXED_COMPOSITE, {"x": {"$in": [[1, 2], A_RE]}}, 6),
        (MIXED_COMPOSITE, {"x": {"$in": [A_RE]}}, 5),
        (MIXED_COMPOSITE, {"x.y": {"$in": [1, 2]}}, 1),
        (MIXED_COMPOSITE, {"x.y": {"$in": [1, A_RE]}}, 2),
        (MIXED_COMPOSITE, {"x": {"$in": [{"y": 1}, Z_RE]}}, 1),
        (MIXED_COMPOSITE, {"x": {"$in": [{"z": 1}, Z_RE]}}, 0),
        (MIXED_COMPOSITE, {"x": {"$in": [{"y": 99}, Z_RE]}}, 0),
        (MIXED_COMPOSITE, {"x.y": {"$in": [{"z": 10}, {"z": 1}, Z_RE]}}, 1),
        (MIXED_COMPOSITE, {"x.y": {"$in": [{"z": 10}, {"z": 11}, Z_RE]}}, 0),
    ],
)
def test_in_with_mixed_values(indexed: bool, values: list[Any], query: dict[str, Any], count: int) -> None:
    docs = [{"_id": i, "x": v} for i, v in enumerate(values)]
    assert len(ids(docs, [index({"x": 1})] if indexed else [], filter=query)) == count


YZ_DOCS = [
    {"_id": i, "x": x, "y": {"z": z}}
    for i, (x, z) in enumerate([(1, 1), (1, 2), (1, 3), (2, "ab"), (2, "ac"), (2, "ad")])
]


@pytest.mark.parametrize("indexed", [False, True])
@pytest.mark.parametrize(
    ("values", "count"),
    [
        ([1, A_RE], 4), ([A_RE, 1], 4), ([1, AB_RE], 2), ([1, 2, AB_RE], 3), ([1, 2, 3, AB_RE], 4),
        ([1, 2, 3, AB_RE, AC_RE], 5), ([1, 2, 3, A_RE], 6), ([A_RE, 1, 2, 3], 6), (["ab", "ac", "ad", 1, 2, 3], 6),
        (["ac", "ad", 1, 2, 3], 5), (["ad", 1, 2, 3], 4), (["ad", A_RE], 3), (["foo", 999], 0),
        ([999, re.compile("no")], 0), (["bar", re.compile("0-9")], 0),
    ],
)  # fmt: skip
def test_in_with_mixed_values_dotted(indexed: bool, values: list[Any], count: int) -> None:
    assert len(ids(YZ_DOCS, [index({"y.z": 1})] if indexed else [], filter={"y.z": {"$in": values}})) == count


def _bin(subtype: int, text: str) -> Binary:
    return Binary(base64.b64decode(text), subtype)


FOX = "KwAAAFRoZSBxdWljayBicm93biBmb3gganVtcHMgb3ZlciB0aGUgbGF6eSBkb2c="
DOG = "VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZw=="
BIN_VALUES: list[Any] = [
    1, "a", [1, 2], math.inf, math.nan, _bin(0, "AAA="), _bin(1, "AAA="), _bin(2, FOX), _bin(0, "ZAA="),
    _bin(1, "ZAA="), _bin(2, FOX), _bin(0, DOG), _bin(1, DOG), _bin(2, FOX),
]  # fmt: skip


@pytest.mark.parametrize("indexed", [False, True])
@pytest.mark.parametrize(
    ("values", "count"),
    [
        ([1, _bin(0, "AAA=")], 3), ([[1, 2], _bin(0, "AAA=")], 2), ([A_RE, _bin(1, "AAA=")], 2),
        (["b", _bin(1, "AAA=")], 1), ([_bin(0, "ZAA="), _bin(0, "AAA=")], 2), ([_bin(1, "ZAA="), _bin(0, "AAA=")], 2),
        ([_bin(0, "ZAA="), _bin(1, "AAA=")], 2), ([_bin(0, "AAAAAAAAAAAAAAAAAAAAAAAAAAAA")], 0),
    ],
)  # fmt: skip
def test_in_with_mixed_values_bindata(indexed: bool, values: list[Any], count: int) -> None:
    docs = [{"_id": i, "x": v} for i, v in enumerate(BIN_VALUES)]
    assert len(ids(docs, [index({"x": 1})] if indexed else [], filter={"x": {"$in": values}})) == count


# --- jstests/core/query/exists/exists.js ----------------------------------------------------------
# Ported: every count of dotest before and after the four indexes, the hinted $exists: false, and
# the four findOne checks on an array of documents.

EXISTS_DOCS = [
    {"_id": 0}, {"_id": 1, "a": 1}, {"_id": 2, "a": {"b": 1}}, {"_id": 3, "a": {"b": {"c": 1}}},
    {"_id": 4, "a": {"b": {"c": {"d": None}}}},
]  # fmt: skip
EXISTS_INDEXES = [index({"a": 1}), index({"a.b": 1}), index({"a.b.c": 1}), index({"a.b.c.d": 1})]


@pytest.mark.parametrize("indexes", [[], EXISTS_INDEXES], ids=["before", "after"])
@pytest.mark.parametrize(
    ("path", "null", "ne_null", "exists", "not_exists"),
    [("a", 1, 4, 4, 1), ("a.b", 2, 3, 3, 2), ("a.b.c", 3, 2, 2, 3), ("a.b.c.d", 5, 0, 1, 4)],
)
def test_exists(
    indexes: list[dict[str, Any]], path: str, null: int, ne_null: int, exists: int, not_exists: int
) -> None:
    count = [len(ids(EXISTS_DOCS, indexes, filter=q)) for q in (
        {path: None}, {path: {"$ne": None}}, {path: {"$exists": True}}, {path: {"$exists": False}},
    )]  # fmt: skip
    assert count == [null, ne_null, exists, not_exists]


def test_exists_hinted_and_on_arrays() -> None:
    assert len(ids(EXISTS_DOCS, EXISTS_INDEXES, filter={"a": {"$exists": False}}, hint={"a": 1})) == 1
    docs = [{"_id": 0, "r": [{"s": 1}]}]
    assert ids(docs, [], filter={"r.s": {"$exists": True}}) == [0]
    assert ids(docs, [], filter={"r.s": {"$exists": False}}) == []
    assert ids(docs, [], filter={"r.t": {"$exists": True}}) == []
    assert ids(docs, [], filter={"r.t": {"$exists": False}}) == [0]


# --- jstests/core/query/elemmatch/elemmatch_ne.js -------------------------------------------------
# Ported: the one assertion (nReturned 1 for $elemMatch with $ne under an $or, index {arr.a, c, d}).


def test_elemmatch_ne() -> None:
    docs = [{"_id": 0, "arr": [{"a": 1}, {"a": 2}], "c": 4, "d": 5, "a": 1}]
    docs += [{"_id": i, "arr": [{"a": 99}], "c": 99, "d": 99} for i in range(1, 101)]
    query = {"arr": {"$elemMatch": {"a": {"$ne": 1}}}, "$or": [{"c": 4, "d": 5}, {"c": 6, "d": 7}]}
    explain, found = find(docs, [index({"arr.a": 1, "c": 1, "d": 1})], filter=query)
    assert explain["executionStats"]["nReturned"] == 1 and [d["_id"] for d in found] == [0]


# --- jstests/core/query/all/all3.js ---------------------------------------------------------------
# Ported: every count ($all and $in with null, their $not, and $all of whole arrays).


@pytest.mark.parametrize(
    ("doc", "query", "count"),
    [
        ({}, {"foo": {"$in": [None]}}, 1),
        ({}, {"foo": {"$all": [None]}}, 1),
        ({}, {"foo": {"$not": {"$all": [None]}}}, 0),
        ({}, {"foo": {"$not": {"$in": [None]}}}, 0),
        ({"foo": 1}, {"foo": {"$in": [None]}}, 0),
        ({"foo": 1}, {"foo": {"$all": [None]}}, 0),
        ({"foo": 1}, {"foo": {"$not": {"$in": [None]}}}, 1),
        ({"foo": 1}, {"foo": {"$not": {"$all": [None]}}}, 1),
        ({"foo": [0, 1]}, {"foo": {"$in": [[0, 1]]}}, 1),
        ({"foo": [0, 1]}, {"foo": {"$all": [[0, 1]]}}, 1),
        ({"foo": []}, {"foo": {"$in": [[]]}}, 1),
        ({"foo": []}, {"foo": {"$all": [[]]}}, 1),
    ],
)
def test_all3(doc: dict[str, Any], query: dict[str, Any], count: int) -> None:
    assert len(ids([{"_id": 0, **doc}], [], filter=query)) == count


# --- jstests/core/query/all/all4.js ---------------------------------------------------------------
# Ported: the $all: [1] and $all: [{$elemMatch}] counts as documents are added; $all: [] (MongoDB's
# $alwaysFalse, an EOF plan) is refused by name instead.

ALL4_STEPS: list[list[dict[str, Any]]] = [[], [{"_id": 0}], [{"_id": 0}, {"_id": 1, "a": 1}]]
ALL4_STEPS.append([*ALL4_STEPS[-1], {"_id": 2, "a": [{"b": 1}]}])


@pytest.mark.parametrize(("step", "ones", "elem"), [(0, 0, 0), (1, 0, 0), (2, 1, 0), (3, 1, 1)])
def test_all4(step: int, ones: int, elem: int) -> None:
    docs = ALL4_STEPS[step]
    assert len(ids(docs, [], filter={"a": {"$all": [1]}})) == ones
    assert len(ids(docs, [], filter={"a": {"$all": [{"$elemMatch": {"b": 1}}]}})) == elem
    with pytest.raises(UnsupportedByModelError, match=r"\$all with an empty"):
        find(docs, [], filter={"a": {"$all": []}})


# --- jstests/core/query/all/all5.js ---------------------------------------------------------------
# Ported: every checkMatch / checkNoMatch ($elemMatch {b: null}, alone and inside $all).


@pytest.mark.parametrize(
    ("doc", "matches"),
    [
        ({}, False), ({"a": 1}, False), ({"a": []}, False), ({"a": [1]}, False),
        ({"a": [{}]}, True), ({"a": [{"c": 1}]}, True), ({"a": [{"b": None}]}, True), ({"a": [{"b": 1}]}, False),
    ],
)  # fmt: skip
def test_all5(doc: dict[str, Any], matches: bool) -> None:
    docs = [{"_id": 0, **doc}]
    assert bool(ids(docs, [], filter={"a": {"$all": [{"$elemMatch": {"b": None}}]}})) == matches
    if matches:
        assert ids(docs, [], filter={"a": {"$elemMatch": {"b": None}}}) == [0]


# --- jstests/core/query/exists/exists3.js ---------------------------------------------------------
# Ported: every itcount, before and after the index {c: -1}.


@pytest.mark.parametrize("indexes", [[], [index({"c": -1})]], ids=["unindexed", "indexed"])
def test_exists3(indexes: list[dict[str, Any]]) -> None:
    docs = [{"_id": 0, "a": 1, "b": 2}]
    assert len(ids(docs, indexes, filter={}, sort={"c": -1})) == 1
    assert len(ids(docs, indexes, filter={"c": {"$exists": False}})) == 1
    assert len(ids(docs, indexes, filter={"c": {"$exists": False}}, sort={"c": -1})) == 1
    assert len(ids(docs, indexes, filter={"c": {"$not": {"$exists": True}}}, sort={"c": -1})) == 1


# --- jstests/core/query/exists/exists5.js ---------------------------------------------------------
# Ported: every count ($exists and $not $exists over missing, nested, array and array-of-document
# fields).


@pytest.mark.parametrize(
    ("doc", "query", "count"),
    [
        ({"a": 1}, {"a.b": {"$exists": False}}, 1), ({"a": 1}, {"a.b": {"$not": {"$exists": True}}}, 1),
        ({"a": 1}, {"c.d": {"$not": {"$exists": True}}}, 1), ({"a": 1}, {"a.b": {"$exists": True}}, 0),
        ({"a": 1}, {"a.b": {"$not": {"$exists": False}}}, 0), ({"a": 1}, {"c.d": {"$not": {"$exists": False}}}, 0),
        ({"a": {"b": 1}}, {"a.b": {"$exists": True}}, 1), ({"a": {"b": 1}}, {"a.b": {"$not": {"$exists": False}}}, 1),
        ({"a": {"b": 1}}, {"a.b": {"$exists": False}}, 0), ({"a": {"b": 1}}, {"a.b": {"$not": {"$exists": True}}}, 0),
        ({"a": [1]}, {"a.b": {"$exists": False}}, 1), ({"a": [1]}, {"a.b": {"$not": {"$exists": True}}}, 1),
        ({"a": [1]}, {"a.b": {"$exists": True}}, 0), ({"a": [1]}, {"a.b": {"$not": {"$exists": False}}}, 0),
        ({"a": [{"b": 1}]}, {"a.b": {"$exists": True}}, 1),
        ({"a": [{"b": 1}]}, {"a.b": {"$not": {"$exists": False}}}, 1),
        ({"a": [{"b": 1}]}, {"a.b": {"$exists": False}}, 0),
        ({"a": [{"b": 1}]}, {"a.b": {"$not": {"$exists": True}}}, 0),
    ],
)  # fmt: skip
def test_exists5(doc: dict[str, Any], query: dict[str, Any], count: int) -> None:
    assert len(ids([{"_id": 0, **doc}], [], filter=query)) == count


# --- jstests/core/query/exists/exists9.js ---------------------------------------------------------
# Ported: every count and hinted itcount (empty documents, empty arrays, "a.0" in an empty array).


@pytest.mark.parametrize(
    ("docs", "path", "exists", "missing"),
    [
        ([{"a": {}}], "a.b", 0, 1),
        ([{}, {"a": []}], "a", 1, 1),
        ([{"a": {"0": 1}}, {"a": []}], "a.0", 1, 1),
    ],
)
def test_exists9(docs: list[dict[str, Any]], path: str, exists: int, missing: int) -> None:
    docs = [{"_id": i, **d} for i, d in enumerate(docs)]
    for indexes, hint in (([], None), ([index({path: 1})], {path: 1})):
        assert len(ids(docs, indexes, filter={path: {"$exists": True}}, hint=hint)) == exists
        assert len(ids(docs, indexes, filter={path: {"$exists": False}}, hint=hint)) == missing


# --- jstests/core/query/in/in4.js -----------------------------------------------------------------
# Ported: check() on both data sets, unindexed and with {key: 1} (equality to [] and $in [[]]).


@pytest.mark.parametrize("indexes", [[], [index({"key": 1})]], ids=["unindexed", "indexed"])
def test_in4_empty_array(indexes: list[dict[str, Any]]) -> None:
    some: list[dict[str, Any]] = [{"_id": 0, "key": []}]
    more = [*some, {"_id": 1, "key": [1]}, {"_id": 2, "key": ["1"]}, {"_id": 3, "key": None}, {"_id": 4}]
    for docs in (some, more):
        assert ids(docs, indexes, filter={"key": []}) == [0]
        assert ids(docs, indexes, filter={"key": {"$in": [[]]}}) == [0]


# --- jstests/core/query/array/arrayfind1.js -------------------------------------------------------
# Ported: every count (A1-A4, B1-B2, and D1-E1 with {"a.x": 1}).

AF1 = [
    {"_id": 0, "a": [{"x": 1}]},
    {"_id": 1, "a": [{"x": 1, "y": 2, "z": 1}]},
    {"_id": 2, "a": [{"x": 1, "y": 1, "z": 3}]},
]


def test_arrayfind1() -> None:
    assert len(ids(AF1, [], filter={})) == 3
    assert len(ids(AF1, [], filter={"a.y": 2})) == 1
    assert len(ids(AF1, [], filter={"a": {"x": 1}})) == 1
    assert len(ids(AF1, [], filter={"a": {"$elemMatch": {"x": 1}}})) == 3
    docs = [*AF1, *({"_id": 3 + i, "a": [{"x": x}]} for i, x in enumerate((2, 3, 4)))]
    assert len(ids(docs, [], filter={"a": {"$elemMatch": {"x": 2}}})) == 1
    assert len(ids(docs, [], filter={"a": {"$elemMatch": {"x": {"$gt": 2}}}})) == 2
    ax = [index({"a.x": 1})]
    assert len(ids(docs, ax, filter={"a": {"$elemMatch": {"x": 2}}})) == 1
    assert len(ids(docs, ax, filter={"a.x": 1})) == 3
    assert len(ids(docs, ax, filter={"a.x": {"$gt": 1}})) == 3
    assert len(ids(docs, ax, filter={"a": {"$elemMatch": {"x": {"$gt": 2}}}})) == 2
    assert len(ids(docs, ax, filter={"a": {"$ne": 2, "$elemMatch": {"x": {"$gt": 2}}}})) == 2


# --- jstests/core/sort_merge_collation.js (the file of the older, flat layout) ---------------------
# Ported: runTest for every sort and filter of testFetchedChildren and testUnfetchedChildren (a
# SORT_MERGE in the plan, results in numeric order, no duplicates), in a collection whose default
# collation has numericOrdering.

NUMERIC = {"locale": "en_US", "numericOrdering": True}
SMC_ROWS = [
    ("1", "18", "11"), ("2", "2", "13"), ("3", "13", "7"), ("4", "7", "4"), ("5", "14", "10"), ("1", "4", "12"),
    ("2", "11", "8"), ("3", "9", "5"), ("4", "10", "14"), ("5", "1", "18"), ("1", "18", "6"), ("2", "2", "3"),
    ("3", "13", "19"), ("4", "7", "15"), ("5", "14", "1"), ("1", "4", "0"), ("2", "11", "17"), ("3", "9", "16"),
    ("4", "10", "9"), ("5", "1", "2"),
]  # fmt: skip
SMC_DOCS = [
    {"_id": i, "filterFieldA": f, "filterFieldB": f, "sortFieldA": a, "sortFieldB": b}
    for i, (f, a, b) in enumerate(SMC_ROWS)
]
SMC_INDEXES = [
    index({"filterFieldA": 1, "sortFieldA": 1, "sortFieldB": 1}, collation=NUMERIC),
    index({"filterFieldA": 1, "sortFieldA": -1, "sortFieldB": -1}, collation=NUMERIC),
    index({"sortFieldA": 1, "sortFieldB": 1}, collation=NUMERIC),
]
SMC_SORTS = [
    {"sortFieldA": 1},
    {"sortFieldA": -1},
    {"sortFieldA": 1, "sortFieldB": 1},
    {"sortFieldA": -1, "sortFieldB": -1},
]
SMC_FIELD_SETS = (("4", "3"), ("4", "3", "1"), ("4", "3", "2", "1"))
SMC_PAIRS = (
    (("4", "4"), ("3", "3")),
    (("4", "4"), ("3", "3"), ("7", "4")),
    (("4", "4"), ("3", "3"), ("7", "4"), ("10", "9")),
)
SMC_FILTERS = [{"$or": [{"filterFieldA": f, "filterFieldB": f} for f in fields]} for fields in SMC_FIELD_SETS] + [
    {"$or": [{"sortFieldA": a, "sortFieldB": b} for a, b in pairs]} for pairs in SMC_PAIRS
]


@pytest.mark.parametrize("sort", SMC_SORTS, ids=[repr(s) for s in SMC_SORTS])
@pytest.mark.parametrize("filter_", SMC_FILTERS, ids=[f"filter{i}" for i in range(len(SMC_FILTERS))])
def test_sort_merge_collation(sort: dict[str, int], filter_: dict[str, Any]) -> None:
    explain, found = find(SMC_DOCS, SMC_INDEXES, filter=filter_, sort=sort, collection_collation=NUMERIC)
    assert "SORT_MERGE" in winning(explain), explain["queryPlanner"]["winningPlan"]
    keys = [tuple(int(d[f]) * direction for f, direction in sort.items()) for d in found]
    assert keys == sorted(keys)
    assert len({d["_id"] for d in found}) == len(found)


# --- jstests/aggregation/sources/match/collation_match.js -----------------------------------------
# Ported: the two $match-pushed-into-the-query-layer counts (explicit and inherited collation), as
# the find the pushed-down $match is. ($project then $match, and $redact: not modelled here.)


def test_collation_match_pushed_down() -> None:
    insensitive = {"locale": "en_US", "strength": 2}
    docs = [{"_id": 0, "a": "a"}]
    assert ids(docs, [], filter={"a": "A"}, collation=insensitive) == [0]
    assert ids(docs, [], filter={"a": "A"}, collection_collation=insensitive) == [0]
    assert ids(docs, [], filter={"a": "A"}) == []


# --- jstests/core/query/in/in2.js -----------------------------------------------------------------
# Ported: both counts under each of the four index setups.

IN2_DOCS = [
    {"_id": i, "a": a, "b": b}
    for i, (a, b) in enumerate([(1, 1), (1, 2), (1, 3), (1, 1), (2, 2), (3, 3), (1, 1), (2, 1), (3, 1)])
]


@pytest.mark.parametrize("indexes", [[], [index({"a": 1})], [index({"b": 1})], [index({"a": 1, "b": 1})]])
def test_in2(indexes: list[dict[str, Any]]) -> None:
    assert len(ids(IN2_DOCS, indexes, filter={"a": {"$in": [1, 2]}})) == 7
    assert len(ids(IN2_DOCS, indexes, filter={"a": {"$in": [1, 2]}, "b": {"$in": [1, 2]}})) == 6


# --- jstests/core/query/in/in5.js -----------------------------------------------------------------
# Ported: A1-C3 for the fields x and _id (equality to a document, $in of a document, dotted paths),
# unindexed, with an index on the field and with one on its "a" subfield.


@pytest.mark.parametrize("field", ["x", "_id"])
def test_in5(field: str) -> None:
    docs: list[dict[str, Any]] = [{field: {"a": 1, "b": 2}} if field == "_id" else {"_id": 0, field: {"a": 1, "b": 2}}]
    queries = [
        {field: {"a": 1, "b": 2}},
        {field: {"$in": [{"a": 1, "b": 2}]}},
        {f"{field}.a": 1, f"{field}.b": {"$in": [2]}},
    ]
    for indexes in ([], [index({field: 1})] if field != "_id" else [], [index({f"{field}.a": 1})]):
        for query in queries:
            assert len(ids(docs, indexes, filter=query)) == 1, (indexes, query)


# --- jstests/core/query/in/in6.js -----------------------------------------------------------------
# Ported: both counts, before and after {i: 1}.


@pytest.mark.parametrize("indexes", [[], [index({"i": 1})]], ids=["unindexed", "indexed"])
def test_in6_null_matches_missing(indexes: list[dict[str, Any]]) -> None:
    docs = [{"_id": 0}]
    assert ids(docs, indexes, filter={"i": None}) == [0]
    assert ids(docs, indexes, filter={"i": {"$in": [None]}}) == [0]


# --- jstests/core/query/array/arrayfind2.js -------------------------------------------------------
# Ported: A1-A4 and both refusals of $all mixing values with $elemMatch, before and after {a: 1}.


@pytest.mark.parametrize("indexes", [[], [index({"a": 1})]], ids=["unindexed", "indexed"])
def test_arrayfind2(indexes: list[dict[str, Any]]) -> None:
    docs = [{"_id": i, "a": [{"x": x}, {"x": y}]} for i, (x, y) in enumerate([(1, 5), (3, 5), (3, 6)])]
    assert len(ids(docs, indexes, filter={})) == 3
    assert len(ids(docs, indexes, filter={"a": {"$elemMatch": {"x": {"$gt": 4}}}})) == 3
    assert len(ids(docs, indexes, filter={"a": {"$elemMatch": {"x": {"$lt": 2}}}})) == 1
    both = {"$all": [{"$elemMatch": {"x": {"$lt": 4}}}, {"$elemMatch": {"x": {"$gt": 5}}}]}
    assert len(ids(docs, indexes, filter={"a": both})) == 1
    for mixed in ([1, {"$elemMatch": {"x": 3}}], [re.compile("a"), {"$elemMatch": {"x": 3}}]):
        with pytest.raises(UnsupportedByModelError, match="MongoDB refuses it too"):
            find(docs, indexes, filter={"a": {"$all": mixed}})


# --- jstests/core/index/elemmatch_index.js --------------------------------------------------------
# Ported: every assertIndexResults (IXSCAN or not, nReturned) on the sparse and the plain {a: 1},
# on {"a.b.c": 1} with empty path components, and the hinted keysExamined of index_elemmatch1
# ($geoWithin: not modelled).

EMI_DOCS = [{"_id": 0, "a": 1}, {"_id": 1, "a": [{}]}, {"_id": 2, "a": [1, None]}, {"_id": 3, "a": [{"type": "Point"}]}]


def index_results(docs: Sequence[Any], indexes: list[dict[str, Any]], query: dict[str, Any]) -> tuple[bool, int]:
    explain, _ = find(docs, indexes, filter=query)
    return "IXSCAN" in winning(explain), explain["executionStats"]["nReturned"]


@pytest.mark.parametrize(
    ("query", "uses", "n"),
    [
        ({"a": {"$elemMatch": {"$exists": False}}}, False, 0),
        ({"a": {"$elemMatch": {"$exists": True}}}, True, 3),
        ({"a": {"$elemMatch": {"$not": {"$exists": False}}}}, False, 3),
        ({"a": {"$elemMatch": {"$gt": 0, "$not": {"$exists": False}}}}, False, 1),
        ({"a": {"$elemMatch": {"$in": [None]}}}, True, 1),
        ({"a": {"$elemMatch": {"$eq": None}}}, True, 1),
        ({"a": {"$elemMatch": {"$not": {"$in": [re.compile("^a")]}}}}, False, 3),
    ],
)
def test_elemmatch_index_sparse(query: dict[str, Any], uses: bool, n: int) -> None:
    assert index_results(EMI_DOCS, [index({"a": 1}, sparse=True)], query) == (uses, n)


def test_elemmatch_index_negated_regex_never_indexed() -> None:
    query = {"a": {"$elemMatch": {"$not": {"$in": [re.compile("^a")]}}}}
    assert index_results(EMI_DOCS, [index({"a": 1})], query) == (False, 3)


ABC = [{"_id": 0, "a": [{"b": {"c": "x"}}]}]


@pytest.mark.parametrize(
    ("query", "uses", "n"),
    [
        ({"": {"$elemMatch": {"a.b.c": "x"}}}, False, 0),
        ({"": {"$all": [{"$elemMatch": {"a.b.c": "x"}}]}}, False, 0),
        ({"a": {"$elemMatch": {"": {"$elemMatch": {"b.c": "x"}}}}}, False, 0),
        ({"a": {"$elemMatch": {"b.c": "x"}}}, True, 1),
        ({"a": {"$all": [{"$elemMatch": {"b.c": "x"}}]}}, True, 1),
        ({"$and": [{"a.b.c": "x"}, {"": {"$elemMatch": {"a.b.c": "x"}}}]}, True, 0),
        ({"$and": [{"a.b.c": "x"}, {"a.b.c": {"$elemMatch": {"": "x"}}}]}, True, 0),
        ({"$and": [{"a.b.c": "x"}, {"$or": [{"a.b.c": "y"}, {"": {"$elemMatch": {"a.b.c": "x"}}}]}]}, True, 0),
        ({"$and": [{"a.b.c": "x"}, {"$or": [{"a.b.c": "y"}, {"a.b.c": {"$elemMatch": {"": "x"}}}]}]}, True, 0),
    ],
)
def test_elemmatch_index_empty_path_components(query: dict[str, Any], uses: bool, n: int) -> None:
    assert index_results(ABC, [index({"a.b.c": 1})], query) == (uses, n)


def test_index_elemmatch1_keys_examined() -> None:
    docs = [
        {"_id": a * 10 + b, "a": a, "b": b, "arr": [{"x": (a * 10 + b) % 10, "y": (a * 10 + b) % 10}]}
        for a in range(10)
        for b in range(10)
    ]
    indexes = [index({"a": 1, "b": 1}), index({"arr.x": 1, "a": 1})]
    query = {"a": 5, "b": {"$in": [1, 3, 5]}, "arr": {"$elemMatch": {"x": 5, "y": 5}}}
    assert len(ids(docs, indexes, filter=query)) == 1
    explain, _ = find(docs, indexes, filter=query, hint={"arr.x": 1, "a": 1})
    assert explain["executionStats"]["totalKeysExamined"] == 1


# --- jstests/core/query/ne/ne_array.js ------------------------------------------------------------
# Ported: every assertion ($ne and $not $in with arrays over {a: 1}, $elemMatch with $not of
# arrays, $not of $elemMatch, and the $elemMatch object cases over {"a.b": 1}).


def test_ne_array() -> None:
    a1 = [index({"a": 1})]
    docs = [{"_id": 0, "a": [1]}, {"_id": 1, "a": [1, 3]}]
    assert find(docs, a1, filter={"a": {"$ne": [1, 3]}}, projection={"_id": 1})[1] == [{"_id": 0}]
    assert find(docs, a1, filter={"a": {"$ne": [1]}}, projection={"_id": 1})[1] == [{"_id": 1}]
    assert ids(docs, a1, filter={"a": {"$not": {"$in": [[1]]}}}) == [1]
    assert ids(docs, a1, filter={"a": {"$not": {"$in": [[1, 3]]}}}) == [0]
    assert ids(docs, a1, filter={"a": {"$not": {"$in": [[1], [1, 3]]}}}) == []
    assert ids(docs, a1, filter={"a": {"$not": {"$in": ["scalar value", [1, 3]]}}}) == [0]
    nested = [{"_id": 0, "a": [[123]]}, {"_id": 1, "a": [4, 5, [123]]}, {"_id": 2, "a": [7, 8]}]
    by_id = {"_id": 1}
    assert ids(nested, a1, filter={"a": {"$elemMatch": {"$not": {"$eq": [123]}}}}, sort=by_id) == [1, 2]
    assert ids(nested, a1, filter={"a": {"$elemMatch": {"$not": {"$in": [[123]]}}}}, sort=by_id) == [1, 2]
    assert ids(nested, a1, filter={"a": {"$not": {"$elemMatch": {"$eq": [123]}}}}) == [2]
    assert ids(nested, a1, filter={"a": {"$not": {"$elemMatch": {"$in": [[123]]}}}}) == [2]
    ab = [index({"a.b": 1})]
    objects = [
        {"_id": 0, "a": [[123]]}, {"_id": 1, "a": [{"b": 123}]},
        {"_id": 2, "a": [{"b": [4, [123]]}]}, {"_id": 3, "a": [{"b": [[123]]}]},
    ]  # fmt: skip
    assert ids(objects, ab, filter={"a": {"$elemMatch": {"b": {"$ne": [123]}}}}, sort=by_id) == [0, 1]
    assert ids(objects, ab, filter={"a": {"$elemMatch": {"b": {"$not": {"$in": [[123]]}}}}}, sort=by_id) == [0, 1]
    assert ids(objects, ab, filter={"a": {"$not": {"$elemMatch": {"b": [123]}}}}, sort=by_id) == [0, 1]
    assert ids(objects, ab, filter={"a": {"$not": {"$elemMatch": {"b": {"$in": [[123]]}}}}}, sort=by_id) == [0, 1]


# --- jstests/core/query/regex/regex_options.js ----------------------------------------------------
# Ported: the find counts with i and u, and the refusal of the invalid option g ($regexFind in a
# projection: not modelled).


def test_regex_options() -> None:
    foo = [{"_id": 0, "a": "foo"}]
    for query in (
        {"a": {"$regex": re.compile("O", re.I)}},
        {"a": re.compile("O", re.I)},
        {"a": {"$regex": "O", "$options": "i"}},
    ):
        assert ids(foo, [], filter=query) == [0]
    hello = [{"_id": 0, "txt": "hello_test"}]
    assert ids(hello, [], filter={"txt": {"$regex": "^hello.*"}}) == [0]
    assert ids(hello, [], filter={"txt": {"$regex": "^hello.*", "$options": "u"}}) == [0]
    assert ids(hello, [], filter={"txt": {"$regex": re.compile("^hello.*")}}) == [0]
    with pytest.raises(UnsupportedByModelError, match="regex option 'g'"):
        find(hello, [], filter={"txt": {"$regex": "^hello.*", "$options": "g"}})


# --- jstests/core/query/regex/regex4.js -----------------------------------------------------------
# Ported: both counts and the docsExamined / keysExamined figures (the $ne regex lines are commented
# out in the jstest).


def test_regex4() -> None:
    docs = [{"_id": i, "name": n} for i, n in enumerate(("eliot", "emily", "bob", "aaron"))]
    explain, found = find(docs, [], filter={"name": re.compile("^e.*")})
    assert len(found) == 2 and explain["executionStats"]["totalDocsExamined"] == 4
    explain, found = find(docs, [index({"name": 1})], filter={"name": re.compile("^e.*")})
    assert len(found) == 2 and explain["executionStats"]["totalKeysExamined"] == 2


# --- jstests/core/query/regex/regex5.js -----------------------------------------------------------
# Ported: doit() (A-M) before and after {x: 1}, and the two $all itcounts after it.

RE5_DOCS = [{"_id": i, "filler": "filler"} for i in range(10)]
RE5_DOCS += [{"_id": 10, "x": ["abc", "xyz1"]}, {"_id": 11, "x": ["ac", "xyz2"]}]
RE5_A, RE5_X = re.compile(".*b.*c"), re.compile(".*y.*")


@pytest.mark.parametrize("indexes", [[], [index({"x": 1})]], ids=["unindexed", "indexed"])
@pytest.mark.parametrize(
    ("query", "count"),
    [
        (RE5_A, 1), (RE5_X, 2), ({"$in": [RE5_X]}, 2), ({"$in": [RE5_A, "xyz1"]}, 1), ({"$in": [RE5_A, "xyz2"]}, 2),
        ({"$all": [RE5_A, RE5_X]}, 1), ({"$all": [RE5_A, "abc"]}, 1), ({"$all": [RE5_A, "ac"]}, 0),
        ({"$nin": [RE5_X]}, 10), ({"$nin": [RE5_A, "xyz1"]}, 11), ({"$nin": [RE5_A, "xyz2"]}, 10),
        ({"$not": {"$nin": [RE5_X]}}, 2), ({"$nin": [re.compile("^a.c")]}, 11),
    ],
)  # fmt: skip
def test_regex5(indexes: list[dict[str, Any]], query: Any, count: int) -> None:
    assert len(ids(RE5_DOCS, indexes, filter={"x": query})) == count


def test_regex5_all_with_regexes_indexed() -> None:
    assert ids(RE5_DOCS, [index({"x": 1})], filter={"x": {"$all": ["a", re.compile("^a")]}}) == []
    assert len(ids(RE5_DOCS, [index({"x": 1})], filter={"x": {"$all": [re.compile("^a")]}})) == 2


# --- jstests/core/query/regex/regex_embed1.js -----------------------------------------------------
# Ported: every itcount, before and after {"a.x": 1}.


@pytest.mark.parametrize("indexes", [[], [index({"a.x": 1})]], ids=["unindexed", "indexed"])
def test_regex_embed1(indexes: list[dict[str, Any]]) -> None:
    docs = [
        {"_id": 1, "a": [{"x": "abc"}, {"x": "def"}]},
        {"_id": 2, "a": [{"x": "ab"}, {"x": "de"}]},
        {"_id": 3, "a": [{"x": "ab"}, {"x": "de"}, {"x": "abc"}]},
    ]
    assert len(ids(docs, indexes, filter={})) == 3
    assert len(ids(docs, indexes, filter={"a.x": "abc"})) == 2
    assert len(ids(docs, indexes, filter={"a.x": re.compile(".*abc.*")})) == 2
    assert len(ids(docs, indexes, filter={"a.0.x": "abc"})) == 1
    assert len(ids(docs, indexes, filter={"a.0.x": re.compile("abc")})) == 1


# --- jstests/core/query/and/and.js ----------------------------------------------------------------
# Ported: the three malformed-$and refusals and every count without $where, before and after
# {a: 1}, and the two final itcounts ($where is refused by name: not modelled).

AND_DOCS: list[dict[str, Any]] = [{"_id": 0, "a": [1, 2]}, {"_id": 1, "a": "foo"}]
AND_CASES = [
    ({"$and": [{"a": 1}]}, 1),
    ({"$and": [{"a": 1}, {"a": 2}]}, 1),
    ({"$and": [{"a": 1}, {"a": 3}]}, 0),
    ({"$and": [{"a": 1}, {"a": 2}, {"a": 3}]}, 0),
    ({"$and": [{"a": "foo"}]}, 1),
    ({"$and": [{"a": "foo"}, {"a": "g"}]}, 0),
    ({"a": 2, "$and": [{"a": 1}]}, 1),
    ({"a": 0, "$and": [{"a": 1}]}, 0),
    ({"a": 2, "$and": [{"a": 0}]}, 0),
    ({"a": 1, "$and": [{"a": 1}]}, 1),
    ({"a": 2, "$and": [{"$and": [{"a": 1}]}]}, 1),
    ({"a": 0, "$and": [{"$and": [{"a": 1}]}]}, 0),
    ({"a": 2, "$and": [{"$and": [{"a": 0}]}]}, 0),
    ({"a": 1, "$and": [{"$and": [{"a": 1}]}]}, 1),
    ({"$and": [{"a": 2}, {"$and": [{"a": 1}]}]}, 1),
    ({"$and": [{"a": 0}, {"$and": [{"a": 1}]}]}, 0),
    ({"$and": [{"a": 2}, {"$and": [{"a": 0}]}]}, 0),
    ({"$and": [{"a": 1}, {"$and": [{"a": 1}]}]}, 1),
    ({"$and": [{"a": re.compile("foo")}]}, 1),
    ({"$and": [{"a": re.compile("foo")}, {"a": re.compile("^f")}, {"a": re.compile("o")}]}, 1),
    ({"$and": [{"a": re.compile("foo")}, {"a": re.compile("^g")}]}, 0),
    ({"$and": [{"a": re.compile("^f")}, {"a": "foo"}]}, 1),
    ({"$and": [{"a": re.compile("^F")}, {"a": "foo"}]}, 0),
    ({"$and": [{"a": re.compile("^F", re.I)}, {"a": "foo"}]}, 1),
    ({"$and": [{"a": {"$gt": 0}}]}, 1),
]


@pytest.mark.parametrize("indexes", [[], [index({"a": 1})]], ids=["unindexed", "indexed"])
def test_and(indexes: list[dict[str, Any]]) -> None:
    for bad in (4, [], [4]):
        with pytest.raises(UnsupportedByModelError, match="MongoDB refuses it too"):
            find(AND_DOCS, indexes, filter={"$and": bad})
    for query, count in AND_CASES:
        assert len(ids(AND_DOCS, indexes, filter=query)) == count, query
    with pytest.raises(UnsupportedByModelError, match=r"\$where"):
        find(AND_DOCS, indexes, filter={"a": "foo", "$where": 'this.a=="foo"'})


def test_and_indexed_itcounts() -> None:
    assert len(ids(AND_DOCS, [index({"a": 1})], filter={"a": 1, "$and": [{"a": 2}]})) == 1
    assert len(ids(AND_DOCS, [index({"a": 1})], filter={"$and": [{"a": 1}, {"a": 2}]})) == 1


# --- jstests/core/query/or/or5.js -----------------------------------------------------------------
# Ported: the counts over {a: 1}, {b: 1}, {c: 1} (batchSize does not change a result), the
# duplicated-documents reset, and the three one-branch $or on an array ($near: not modelled).

OR5_DOCS = [
    {"_id": i, **d}
    for i, d in enumerate(
        [{"a": 2}, {"b": 3}, {"c": 4}, {"a": 2, "b": 3}, {"a": 2, "c": 4}, {"b": 3, "c": 4}, {"a": 2, "b": 3, "c": 4}]
    )
]
OR5_INDEXES = [index({"a": 1}), index({"b": 1}), index({"c": 1})]


@pytest.mark.parametrize(
    ("branches", "count"),
    [
        ([{"a": 2}, {"b": 3}, {"c": 4}], 7), ([{"a": 6}, {"b": 3}, {"c": 4}], 6),
        ([{"a": 2}, {"b": 6}, {"c": 4}], 6), ([{"a": 2}, {"b": 3}, {"c": 6}], 6),
    ],
)  # fmt: skip
def test_or5(branches: list[dict[str, Any]], count: int) -> None:
    explain, found = find(OR5_DOCS, OR5_INDEXES, filter={"$or": branches})
    assert len(found) == count and "OR" in winning(explain)


def test_or5_duplicates_and_arrays() -> None:
    docs = [{"_id": i, k: v} for i, (k, v) in enumerate([("a", 2), ("a", 2), ("b", 3), ("b", 3), ("c", 4), ("c", 4)])]
    assert len(ids(docs, OR5_INDEXES, filter={"$or": [{"a": 2}, {"b": 3}, {"c": 4}]})) == 6
    arr = [{"_id": 0, "a": [1, 2]}]
    assert len(ids(arr, OR5_INDEXES, filter={"$or": [{"a": [1, 2]}]})) == 1
    assert len(ids(arr, OR5_INDEXES, filter={"$or": [{"a": {"$all": [1, 2]}}]})) == 1
    assert len(ids(arr, OR5_INDEXES, filter={"$or": [{"a": {"$all": [1, 3]}}]})) == 0


# --- jstests/core/query/or/ore.js -----------------------------------------------------------------
# Ported: the one count (an $or over a descending and an ascending index).


def test_ore() -> None:
    docs = [{"_id": 0, "a": 1, "b": 1}, {"_id": 1, "a": 2, "b": 1}]
    assert len(ids(docs, [index({"a": -1}), index({"b": 1})], filter={"$or": [{"a": {"$in": [1, 2]}}, {"b": 1}]})) == 2


# --- jstests/core/query/or/orf.js -----------------------------------------------------------------
# Ported: nReturned 200, totalKeysExamined 200, totalDocsExamined 200 for an $or of 200 _id
# equalities hinted to {_id: 1} (rewritten to one $in), and the count.


def test_orf() -> None:
    docs = [{"_id": i} for i in range(200)]
    explain, found = find(docs, [], filter={"$or": [{"_id": i} for i in range(200)]}, hint={"_id": 1})
    stats = explain["executionStats"]
    assert (stats["nReturned"], stats["totalKeysExamined"], stats["totalDocsExamined"]) == (200, 200, 200)
    assert len(found) == 200

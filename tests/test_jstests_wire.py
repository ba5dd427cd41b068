"""MongoDB's jstests run the way the acceptance check runs them: over pymongo, against the offline default.

Each section ports one file of mongodb/mongo's ``jstests/`` (named in its header, with the assertions
ported); the expected answers are the jstest's own asserts (MongoDB 7.0/8.0 standalone). Every test
also runs against a real server when ``MONGODB_URI`` is set (the ``mongodb`` variant of ``db``), so a
port that misreads a jstest fails there. Where a jstest checks a plan, the explain is checked too: on
the offline default it is the planner model's, the same plan that answered the find.

Tally (kept by hand when a section is added; issue 19's closing numbers):

* 126 jstest files ported here (123 never ported before in this suite; index_bounds_minkey, _maxkey and
  _timestamp.js were ported at the model level in tests/test_jstests_query.py and run here over the
  wire too): 376 assert statements, most of them looping over a jstest's cases;
* on their first run against the offline default, 99 of the 126 agreed (79%). The 27 that did not
  were fixed where they belong: the planner model (hashed keys and bounds, $mod, ranges to whole
  arrays, positional index paths, hashed keys kept out of covered reads, {$elemMatch: {}},
  $alwaysTrue/$alwaysFalse, $natural sorts, {$meta: "sortKey"}, MongoDB's
  refusals of malformed $regex, $options, $in and $mod operands), the read layer (documents holding
  Timestamp, Regex, DBRef, Decimal128 or Binary reach the model in bson's types instead of being
  refused to the engine; distinct and count are answered from the model's plan), and engine patches
  (patches/index-definitions.md: same-key twins, compound hashed indexes; patches/always-operators.md:
  $alwaysTrue/$alwaysFalse, a negative $slice skip) with the read layer's projection of _id sub-fields;
* now 126 of 126 pass (slice1.js and projection_conflicts.js in part: the engine refuses nested
  projection documents, and some conflicts with code 31325). In sparse_index_internal_expr.js the
  offline default refuses by name the hinted-sparse-index $expr query it cannot answer right
  (explain assertions of $expr queries are not ported); arrayfind5.js is ported with its 7.0/8.0
  answer (9.0 changed it, SERVER-36681);
  distinct_array1.js accepts the null MongoDB's index may add (SERVER-14832), as the jstest does.
  Read and not ported: array_comparison_correctness.js (its asserted answers leave {val: 3} out of
  {$gt: 2}, which no documented rule gives), ne_null.js and ne_null_indexed.js (9.0 semantics),
  null_undefined.js (BSON undefined, which pymongo cannot write).

Since then, jstests/core/query/idhack.js (results over the wire, for the read by storage key that answers a find of
one string or ObjectId _id): it agreed on its first run, and fails if that read drops the projection. And
jstests/core/write/delete/remove7.js (multikey removes, round after round): it agreed on its first run, and fails if
the index scan reads an entry's record id as a position.

Issue 19's held-out check (the last sections): 14 more files nobody here had ported, from
jstests/core/query/ and jstests/core/index/covered/, each ported from the jstest alone and run once
before any fix: covered_index_simple_2/_3, covered_index_compound_1, covered_index_sort_1/_2,
sorth, sortk, sort_dotted_paths, arrayfind8, and3, type8, elemmatch_projection, ne3 and
array_index_and_nonIndex_consistent (3,530 checks run, 2,802 of them the last file's).

* first run: 9 of the 14 agreed in every check (64%); 60 checks disagreed (98.3% agreed; 92.3%
  leaving out the last file). Wrong find() results among them: 24 sort orders and 6 answers to
  sorts MongoDB refuses as parallel arrays (sort_dotted_paths.js: a sort on several paths took
  each path's smallest value apart, where MongoDB takes the first of the compound keys, paths
  through one array taking one element's values), and 5 answers to regex operands of $ne/$gt/$gte/
  $lt/$lte that MongoDB refuses (ne3.js). Running them also found two more: an index on {a.c, a.b}
  over an array of subdocuments held the cross product of the two paths' values (36 keys where
  MongoDB holds 18), so when it provided a sort it returned the wrong order, and the engine
  answered {$not: {$not: p}} (refused by the model) with 77 documents where p gives 66 or 22.
* fixed where they belong: the planner model (planner/keys.py compound_values: one key generator
  for compound index keys and sort keys; regex operands refused with MongoDB's BadValue; $not over
  $not is its operand) and the engine (patches/aggregation-semantics.md: an $elemMatch opening with
  $or/$and/$nor matches documents). Left as strict xfails with README gap rows: and3.js's seven
  $where explains (refused by name) and four elemmatch_projection.js cases the engine refuses
  (DBRef fields, $elemMatch beside an exclusion); now 12 of the 14 files pass every check, 3,512
  of 3,530 checks (99.5%). sort_dotted_paths_numeric.js and sort_dotted_paths_parallel_arrays.js
  (the newer split of sort_dotted_paths.js) hold the same assertions and are not counted again.

In all, 142 jstest files are ported here; 140 pass every assertion on the offline default (the last two,
minmax.js and return_key.js, were ported after mongoeco was found ignoring min(), max() and returnKey:
the model answers them now; return_key.js's explain and sortKey-projection cases are refused by name). With the
10 held-out files of tests/test_jstests_aggregation.py the held-out check is 24 files: 15 agreed on
the first run (62.5%; 3,554 of 3,627 checks, 98.0%), 20 after the fixes (83.3%; 3,607, 99.4%).

Issue 23 added jstests/aggregation/sources/merge/mode_keep_existing_insert.js (its sections that match on
``_id``, for the $merge ``_id`` lookup of patches/merge-id-scan.md): it agreed on its first run, with the
lookup's change and without it, so 143 files in all.
"""

from __future__ import annotations

import base64
import datetime
import random
import re
from collections.abc import Mapping
from typing import Any

import pytest
from bson import Binary, Code, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp
from pymongo.database import Database

from workbook.planner.reading import walk, winning_plan
from workbook.shard_hash import hash64


def plan_stages(explain: Mapping[str, Any]) -> list[str]:
    """The winning plan's stage names, root first."""
    return [str(s.get("stage")) for s in walk(winning_plan(explain["queryPlanner"]))]


def without_id(documents: Any) -> list[dict[str, Any]]:
    return [{k: v for k, v in d.items() if k != "_id"} for d in documents]


def unordered(documents: Any) -> list[str]:
    return sorted(repr(sorted(d.items())) for d in documents)


# --- jstests/core/index/hashed/hashed_index_queries.js --------------------------------------------
# Ported: every find and count: a range or a sub-field query on a hashed prefix is a COLLSCAN; an
# equality to a subdocument uses the hashed index (IXSCAN + FETCH) and returns the 7 documents; $in
# on hashed and non-hashed fields of {a: 1, b: "hashed", c: -1}; a range on the non-hashed prefix.

HIQ_DOCS = [
    doc
    for i in range(100)
    for doc in ({"a": i, "b": {"subObj": f"str_{i % 13}"}, "c": i % 10}, {"a": i, "b": i % 13, "c": i % 10})
]


def _load_hiq(db: Database, key: list[tuple[str, Any]]) -> Any:
    coll = db.hiq
    coll.create_index(key)
    coll.insert_many([{"_id": n, **doc} for n, doc in enumerate(HIQ_DOCS)])
    return coll


def test_hashed_index_queries_hashed_prefix(db: Database) -> None:
    coll = _load_hiq(db, [("b", "hashed"), ("c", -1)])
    assert "COLLSCAN" in plan_stages(coll.find({"b": {"$gt": 10, "$lt": 12}}, {"_id": 0}).explain())
    assert "COLLSCAN" in plan_stages(coll.find({"b.subObj": "str_10"}, {"_id": 0}).explain())
    found = list(coll.find({"b": {"subObj": "str_11"}}, {"_id": 0}))
    expected = [{"a": a, "b": {"subObj": "str_11"}, "c": a % 10} for a in (11, 24, 37, 50, 63, 76, 89)]
    assert unordered(found) == unordered(expected)
    stages = plan_stages(coll.find({"b": {"subObj": "str_11"}}, {"_id": 0}).explain())
    assert "IXSCAN" in stages and "FETCH" in stages


def test_hashed_index_queries_hashed_not_prefix(db: Database) -> None:
    coll = _load_hiq(db, [("a", 1), ("b", "hashed"), ("c", -1)])
    query = {"a": {"$in": [38, 37]}, "b": {"$in": [{"subObj": "str_12"}, {"subObj": "str_11"}]}, "c": {"$in": [7, 8]}}
    found = list(coll.find(query, {"_id": 0}))
    assert unordered(found) == unordered(
        [{"a": 37, "b": {"subObj": "str_11"}, "c": 7}, {"a": 38, "b": {"subObj": "str_12"}, "c": 8}]
    )
    assert {"IXSCAN", "FETCH"} <= set(plan_stages(coll.find(query, {"_id": 0}).explain()))
    ranged = {"a": {"$gt": 25, "$lt": 29}, "b": 0}
    assert list(coll.find(ranged, {"_id": 0})) == [{"a": 26, "b": 0, "c": 6}]
    assert {"IXSCAN", "FETCH"} <= set(plan_stages(coll.find(ranged, {"_id": 0}).explain()))
    assert coll.count_documents(ranged) == 1


def test_hashed_index_queries_counts(db: Database) -> None:
    coll = _load_hiq(db, [("b", "hashed"), ("a", 1)])
    assert coll.count_documents({"b": {"$gt": 10, "$lt": 12}}) == 7
    assert coll.count_documents({"b": {"subObj": "str_10"}}) == 7


# --- jstests/core/index/hashed/hashed_index_sort.js -----------------------------------------------
# Ported: every validateFindCmdOutputAndPlan: the documents in order and the stages expected and not
# expected, for {a: "hashed", b: -1, c: 1} and for {a: 1, b: -1, c: "hashed", d: 1}.


def _load_his(db: Database, key: list[tuple[str, Any]]) -> Any:
    coll = db.his
    coll.insert_many([{"_id": 10 * i + j, "a": i, "b": j, "c": i + j, "d": i - j} for i in range(5) for j in range(5)])
    coll.create_index(key)
    return coll


def _check_sorted(coll: Any, filter_: Any, projection: Any, sort: Any, expected: Any, wanted: Any, unwanted=()) -> None:
    cursor = coll.find(filter_, projection or {"_id": 0}, sort=list(sort.items()))
    if expected is not None:
        assert list(cursor.clone()) == expected
    stages = set(plan_stages(cursor.explain()))
    assert set(wanted) <= stages, stages
    assert not set(unwanted) & stages, stages


def test_hashed_index_sort_hashed_prefix(db: Database) -> None:
    coll = _load_his(db, [("a", "hashed"), ("b", -1), ("c", 1)])
    ones = [{"b": j, "c": 1 + j} for j in range(5)]
    _check_sorted(
        coll, {"a": 1}, {"b": 1, "c": 1, "_id": 0}, {"b": 1}, ones, ["IXSCAN", "FETCH"], ["SORT_MERGE", "SORT"]
    )
    pairs = [{"b": j} for j in range(5) for _ in range(2)]
    _check_sorted(
        coll, {"a": {"$in": [1, 2]}}, {"b": 1, "_id": 0}, {"b": 1}, pairs, ["FETCH", "SORT_MERGE"], ["COLLSCAN"]
    )
    whole = [{"a": 1, "b": j, "c": 1 + j, "d": 1 - j} for j in range(5)]
    _check_sorted(coll, {"a": 1}, None, {"c": 1}, whole, ["IXSCAN", "SORT"])


def test_hashed_index_sort_hashed_not_prefix(db: Database) -> None:
    coll = _load_his(db, [("a", 1), ("b", -1), ("c", "hashed"), ("d", 1)])
    ab = {"_id": 0, "a": 1, "b": 1}
    _check_sorted(
        coll, {"a": 1}, ab, {"b": 1}, [{"a": 1, "b": j} for j in range(5)], ["IXSCAN"], ["SORT_MERGE", "SORT", "FETCH"]
    )
    _check_sorted(coll, {"a": 1, "c": 2}, ab, {"b": 1, "d": -1}, [{"a": 1, "b": 1}], ["IXSCAN", "FETCH"], ["SORT"])
    everything = [{"a": i, "b": j} for i in range(5) for j in reversed(range(5))]
    _check_sorted(coll, {}, ab, {"a": 1, "b": -1}, everything, ["IXSCAN"], ["SORT_MERGE", "SORT", "FETCH"])
    _check_sorted(coll, {}, ab, {"a": 1, "b": -1, "c": 1}, None, ["SORT", "COLLSCAN"])
    _check_sorted(coll, {"a": {"$in": [1, 2]}}, ab, {"b": 1}, None, ["SORT_MERGE"], ["COLLSCAN", "FETCH"])
    db_ = [{"b": 4 - k, "d": k - 3} for k in range(5)]
    _check_sorted(coll, {"a": 1}, {"_id": 0, "d": 1, "b": 1}, {"d": 1}, db_, ["IXSCAN", "SORT"], ["COLLSCAN", "FETCH"])
    _check_sorted(coll, {"a": 1, "b": 1}, {"_id": 0, "c": 1}, {"c": 1}, [{"c": 2}], ["IXSCAN", "FETCH", "SORT"])


def test_hashed_hint_returns_what_the_index_holds(db: Database) -> None:
    """Not a jstest: a hinted hashed index answers a range (a whole-index scan, then the filter)."""
    coll = _load_his(db, [("a", "hashed")])
    hinted = coll.find({"a": {"$gte": 3}}, {"_id": 1}).hint("a_hashed")
    assert sorted(d["_id"] for d in hinted.clone()) == [30 + j for j in range(5)] + [40 + j for j in range(5)]
    scan = next(s for s in walk(winning_plan(hinted.explain()["queryPlanner"])) if s["stage"] == "IXSCAN")
    assert scan["indexBounds"] == {"a": ["[MinKey, MaxKey]"]} and scan["keyPattern"] == {"a": "hashed"}
    point = next(s for s in walk(winning_plan(coll.find({"a": 2}).explain()["queryPlanner"])) if s["stage"] == "IXSCAN")
    hashed = Int64(hash64(2))  # MongoDB's hash of 2 (hash64 holds hasher_test.cpp's vectors: test_shard_hash)
    assert point["indexBounds"] == {"a": [f"[{hashed}, {hashed}]"]}


# --- jstests/core/index/index_multiple_compatibility.js -------------------------------------------
# Ported: every testIndexCompat (both indexes on {a: 1} build; each document is found through the
# index that holds it and not through the other, before and after its removal) and every
# uniqueness assertion after them.

S1 = {"locale": "en_US", "strength": 1}
S2 = {"locale": "en_US", "strength": 2}
S3 = {"locale": "en_US", "strength": 3}


def _compat(db: Database, first: dict[str, Any], second: dict[str, Any], both: dict[str, Any] | None = None) -> Any:
    coll = db.imc
    coll.drop()
    db.command(
        "createIndexes", "imc", indexes=[{"key": {"a": 1}, **first["index"]}, {"key": {"a": 1}, **second["index"]}]
    )
    one, two = first["index"]["name"], second["index"]["name"]

    def count(doc: dict[str, Any], name: str) -> int:
        return len(list(coll.find(doc).hint(name)))

    for mine, other, spec in ((one, two, first), (two, one, second)):
        if "doc" in spec:
            coll.insert_one(dict(spec["doc"]))
            assert (count(spec["doc"], mine), count(spec["doc"], other)) == (1, 0), spec
    if both is not None:
        coll.insert_one(dict(both))
        assert (count(both, one), count(both, two)) == (1, 1)
    for mine, spec in ((one, first), (two, second)):
        if "doc" in spec:
            coll.delete_many(spec["doc"])  # the shell's remove() removes every match
            assert count(spec["doc"], mine) == 0
    if both is not None:
        coll.delete_many(both)
        assert (count(both, one), count(both, two)) == (0, 0)
    return coll


def test_index_multiple_compatibility_partial_and_sparse(db: Database) -> None:
    strings = {"a": {"$type": "string"}}
    _compat(
        db,
        {"index": {"name": "a1", "collation": S1, "partialFilterExpression": strings}},
        {"index": {"name": "a2", "collation": S2, "partialFilterExpression": strings}},
        {"a": "A"},
    )
    _compat(
        db,
        {"index": {"name": "a1", "collation": S1, "partialFilterExpression": {"a": {"$lt": 10}}}, "doc": {"a": 5}},
        {"index": {"name": "a2", "collation": S2, "partialFilterExpression": {"a": {"$gt": 20}}}, "doc": {"a": 25}},
    )
    _compat(
        db,
        {"index": {"name": "a1", "collation": S1, "partialFilterExpression": {"a": {"$lt": 10}}}, "doc": {"a": -5}},
        {"index": {"name": "a2", "collation": S2, "partialFilterExpression": {"a": {"$gte": 0}}}, "doc": {"a": 15}},
        {"a": 5},
    )
    _compat(
        db,
        {"index": {"name": "a1", "collation": S1, "partialFilterExpression": {"b": 0}}, "doc": {"b": 0}},
        {"index": {"name": "a2", "collation": S2, "sparse": True}, "doc": {"a": 5, "b": 1}},
        {"a": -1, "b": 0},
    )
    _compat(
        db,
        {"index": {"name": "a1", "collation": S1, "sparse": True}},
        {"index": {"name": "a2", "collation": S2, "sparse": False}, "doc": {"b": 0}},
        {"a": 1},
    )
    names = sorted(i["name"] for i in db.imc.list_indexes())
    assert names == ["_id_", "a1", "a2"]


def test_index_multiple_compatibility_unique(db: Database) -> None:
    from pymongo.errors import DuplicateKeyError

    coll = _compat(
        db,
        {"index": {"name": "unique", "collation": S1, "unique": True}},
        {"index": {"name": "reg", "collation": S2, "unique": False}},
        {"a": "foo"},
    )
    coll.insert_one({"a": "f"})
    with pytest.raises(DuplicateKeyError):
        coll.insert_one({"a": "F"})
    coll = _compat(
        db,
        {
            "index": {
                "name": "unique",
                "collation": S1,
                "unique": True,
                "partialFilterExpression": {"a": {"$type": "number"}},
            }
        },
        {"index": {"name": "a", "collation": S2, "unique": False}, "doc": {"a": "foo"}},
        {"a": 5},
    )
    coll.insert_one({"a": 5})
    coll.insert_one({"a": "foo"})
    coll.insert_one({"a": "foo"})
    with pytest.raises(DuplicateKeyError):
        coll.insert_one({"a": 5})
    coll = _compat(
        db,
        {"index": {"name": "a1", "collation": S1, "unique": True}},
        {"index": {"name": "a2", "collation": S3, "unique": True}},
        {"a": "a"},
    )
    coll.insert_one({"a": "a"})
    for value in ("a", "A"):
        with pytest.raises(DuplicateKeyError):
            coll.insert_one({"a": value})
    coll = _compat(
        db,
        {"index": {"name": "a1", "collation": S1, "unique": True, "sparse": True}},
        {"index": {"name": "a2", "collation": S2, "unique": False}, "doc": {"b": 0}},
        {"a": "a"},
    )
    coll.insert_one({"a": "a"})
    coll.insert_one({})
    coll.insert_one({})
    with pytest.raises(DuplicateKeyError):
        coll.insert_one({"a": "a"})


# --- jstests/core/index/index_bounds_timestamp.js, index_bounds_minkey.js, index_bounds_maxkey.js --
# Ported over the wire: the counts and the covered plans, in collections that also hold the values
# mongoeco decodes into its own types (Timestamp, Regex, DBRef): the model reads them as bson's.

TIMESTAMPS = [
    Timestamp(0, 1),
    Timestamp(0, 2**31),
    Timestamp(0, 2**32 - 1),
    Timestamp(1, 0),
    Timestamp(2**32 - 1, 2**32 - 1),
]
TS_COUNTS = [
    ({"$gt": Timestamp(0, 0)}, 5), ({"$gte": Timestamp(0, 0)}, 5), ({"$lt": Timestamp(1, 0)}, 3),
    ({"$lte": Timestamp(1, 0)}, 4), ({"$gt": Timestamp(0, 1), "$lt": Timestamp(1, 0)}, 2),
    ({"$gt": Timestamp(0, 1), "$lte": Timestamp(1, 0)}, 3), ({"$gte": Timestamp(0, 1), "$lt": Timestamp(1, 0)}, 3),
    ({"$gte": Timestamp(0, 1), "$lte": Timestamp(1, 0)}, 4),
]  # fmt: skip


def test_index_bounds_timestamp_over_the_wire(db: Database) -> None:
    db.ts.create_index([("ts", 1), ("_id", 1)])
    db.ts.insert_many([{"_id": i, "ts": ts} for i, ts in enumerate(TIMESTAMPS)])
    for query, count in TS_COUNTS:
        cursor = db.ts.find({"ts": query}, {"ts": 1, "_id": 0})
        assert len(list(cursor.clone())) == count, query
        stages = plan_stages(cursor.explain())
        assert "IXSCAN" in stages and "FETCH" not in stages


@pytest.mark.parametrize(
    ("alone_value", "query", "alone", "others"),
    [
        (MinKey(), {"$gt": MinKey()}, 0, 3), (MinKey(), {"$gte": MinKey()}, 1, 3),
        (MinKey(), {"$lt": MinKey()}, 0, 0), (MinKey(), {"$lte": MinKey()}, 1, 0),
        (MaxKey(), {"$gt": MaxKey()}, 0, 0), (MaxKey(), {"$gte": MaxKey()}, 1, 0),
        (MaxKey(), {"$lt": MaxKey()}, 0, 3), (MaxKey(), {"$lte": MaxKey()}, 1, 3),
    ],
)  # fmt: skip
def test_index_bounds_minkey_maxkey_over_the_wire(
    db: Database, alone_value: Any, query: dict[str, Any], alone: int, others: int
) -> None:
    db.c.create_index("a")
    db.c.insert_one({"_id": 0, "a": alone_value})
    cursor = db.c.find({"a": query}, {"a": 1, "_id": 0})
    assert len(list(cursor.clone())) == alone
    assert "FETCH" not in plan_stages(cursor.explain())
    db.c.delete_many({})
    db.c.insert_many([{"_id": 0, "a": "string"}, {"_id": 1, "a": {"b": 1}}, {"_id": 2}])
    cursor = db.c.find({"a": query}, {"a": 1, "_id": 0})
    assert len(list(cursor.clone())) == others
    assert "FETCH" not in plan_stages(cursor.explain())


MIXED_TYPES = [
    MinKey(), None, 1, "s", {"b": 1}, [2], Binary(b"x", 0), ObjectId("0" * 24), True, datetime.datetime(2020, 1, 1),
    Timestamp(1, 2), Regex("^a", "i"), Code("x"), MaxKey(),
]  # fmt: skip
"""One value of each BSON type, in MongoDB's comparison order (bson-type-comparison-order)."""


@pytest.mark.parametrize("indexed", [False, True], ids=["no index", "index on a"])
def test_every_type_in_bson_order(db: Database, indexed: bool) -> None:
    """Not one jstest: the order every sort and range jstest relies on, with values mongoeco keeps in
    its own types (Timestamp, Regex) among them; the answer is the model's (the explain counts it)."""
    if indexed:
        db.c.create_index("a")
    db.c.insert_many([{"_id": i, "a": v} for i, v in reversed(list(enumerate(MIXED_TYPES)))])
    in_order = [0, 1, 2, 5, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13]  # the array [2] sorts by its element 2
    assert [d["_id"] for d in db.c.find({}, sort=[("a", 1), ("_id", 1)])] == in_order
    assert [d["_id"] for d in db.c.find({"a": {"$gte": Timestamp(0, 0)}})] == [10]
    assert [d["_id"] for d in db.c.find({"a": {"$type": "javascript"}})] == [12]
    assert [d["_id"] for d in db.c.find({"a": {"$type": "string"}})] == [3]
    assert sorted(d["_id"] for d in db.c.find({"a": {"$gt": MinKey()}})) == list(range(1, 14))
    cursor = db.c.find({"a": {"$gte": {}}})
    assert [d["_id"] for d in cursor.clone()] == [4]
    assert cursor.explain()["executionStats"]["nReturned"] == 1


# --- small-file ports: counts with and without the jstest's index ---------------------------------


def _counts(
    db: Database, docs: list[dict[str, Any]], cases: list[tuple[Any, int]], indexes: list[Any], *, alone: bool = False
) -> None:
    """Insert ``docs``, then check every (filter, count) with no index and after each index is built
    (``alone``: each index replaces the one before, as a jstest's dropIndexes() between checks)."""
    coll = db.jst
    coll.drop()
    coll.insert_many([dict(d) for d in docs])
    for index in [None, *indexes]:
        if index is not None:
            if alone:
                coll.drop_indexes()
            key, options = (index[0], index[1]) if isinstance(index, tuple) else (index, {})
            coll.create_index(key, **options)
        for filter_, count in cases:
            assert len(list(coll.find(filter_))) == count, (filter_, index)
            assert coll.count_documents(filter_) == count, (filter_, index)


# jstests/core/query/all/all.js: every count of doTest, unindexed and with {a: 1} (the last state of
# the collection, which each count of the file's later steps sees).
ALL_DOCS = [{"a": [1, 2, 3]}, {"a": [1, 2, 4]}, {"a": [1, 8, 5]}, {"a": [1, 8, 6]}, {"a": [1, 9, 7]}, {"a": []}, {}]


def test_all(db: Database) -> None:
    first = [
        ({"a": {"$all": [1]}}, 5), ({"a": {"$all": [1, 2]}}, 2), ({"a": {"$all": [1, 8]}}, 2),
        ({"a": {"$all": [1, 3]}}, 1), ({"a": {"$all": [2]}}, 2), ({"a": {"$all": [2, 3]}}, 1),
        ({"a": {"$all": [2, 1]}}, 2),
    ]  # fmt: skip
    _counts(db, ALL_DOCS, first, [[("a", 1)]])
    docs = [*ALL_DOCS, {"a": [2, 2]}, {"a": [[2]]}, {"a": [{"b": [10, 11]}, 11]}, {"a": {"b": [20, 30]}}]
    later = [
        ({"a": {"$all": [2, 2]}}, 3), ({"a": {"$all": [2]}}, 3), ({"a.b": {"$all": [10]}}, 1),
        ({"a.b": {"$all": [20]}}, 1), ({"a": {"$all": [11]}}, 1), ({"a.b": {"$all": [20, 30]}}, 1),
        ({"a": {"$all": [1]}}, 5), ({"a": {"$all": [19]}}, 0), ({"a": {"$all": []}}, 0),
    ]  # fmt: skip
    _counts(db, docs, later, [[("a", 1)]])


# jstests/core/query/and/andor.js: every ok() (one match) of both test() functions, unindexed and
# with {a: 1}.
ANDOR_EQUALITY = [
    {"a": 1}, {"$and": [{"a": 1}]}, {"$or": [{"a": 1}]}, {"$and": [{"$and": [{"a": 1}]}]},
    {"$or": [{"$or": [{"a": 1}]}]}, {"$and": [{"$or": [{"a": 1}]}]}, {"$or": [{"$and": [{"a": 1}]}]},
    {"$and": [{"$and": [{"$or": [{"a": 1}]}]}]}, {"$and": [{"$or": [{"$and": [{"a": 1}]}]}]},
    {"$or": [{"$and": [{"$and": [{"a": 1}]}]}]}, {"$or": [{"$and": [{"$or": [{"a": 1}]}]}]},
    {"$nor": [{"a": 2}]}, {"$nor": [{"$nor": [{"a": 1}]}]}, {"$and": [{"$nor": [{"a": 2}]}]},
    {"$nor": [{"$and": [{"a": 2}]}]}, {"$and": [{"$and": [{"$nor": [{"a": 2}]}]}]},
    {"$and": [{"$nor": [{"$and": [{"a": 2}]}]}]}, {"$nor": [{"$and": [{"$and": [{"a": 2}]}]}]},
    {"$nor": [{"$and": [{"$nor": [{"a": 1}]}]}]},
]  # fmt: skip
ANDOR_NE = [
    {"a": {"$ne": 2}}, {"$and": [{"a": {"$ne": 2}}]}, {"$or": [{"a": {"$ne": 2}}]},
    {"$and": [{"$and": [{"a": {"$ne": 2}}]}]}, {"$or": [{"$or": [{"a": {"$ne": 2}}]}]},
    {"$and": [{"$or": [{"a": {"$ne": 2}}]}]}, {"$or": [{"$and": [{"a": {"$ne": 2}}]}]},
    {"$and": [{"$and": [{"$or": [{"a": {"$ne": 2}}]}]}]}, {"$and": [{"$or": [{"$and": [{"a": {"$ne": 2}}]}]}]},
    {"$or": [{"$and": [{"$and": [{"a": {"$ne": 2}}]}]}]}, {"$or": [{"$and": [{"$or": [{"a": {"$ne": 2}}]}]}]},
    {"$nor": [{"a": {"$ne": 1}}]}, {"$nor": [{"$nor": [{"a": {"$ne": 2}}]}]}, {"$and": [{"$nor": [{"a": {"$ne": 1}}]}]},
    {"$nor": [{"$and": [{"a": {"$ne": 1}}]}]}, {"$and": [{"$and": [{"$nor": [{"a": {"$ne": 1}}]}]}]},
    {"$and": [{"$nor": [{"$and": [{"a": {"$ne": 1}}]}]}]}, {"$nor": [{"$and": [{"$and": [{"a": {"$ne": 1}}]}]}]},
    {"$nor": [{"$and": [{"$nor": [{"a": {"$ne": 2}}]}]}]},
]  # fmt: skip


def test_andor(db: Database) -> None:
    _counts(db, [{"a": 1}], [(q, 1) for q in ANDOR_EQUALITY + ANDOR_NE], [[("a", 1)]])


# jstests/core/query/array/array_match1.js: the four counts of test(), unindexed and with {a: 1}.
def test_array_match1(db: Database) -> None:
    docs = [{"_id": 1, "a": [5, 5]}, {"_id": 2, "a": [6, 6]}, {"_id": 3, "a": [5, 5]}]
    _counts(db, docs, [({"a": [5, 5]}, 2), ({"a": [6, 6]}, 1)], [[("a", 1)]])
    nested = [{"_id": d["_id"], "a": {"b": d["a"]}} for d in docs]
    _counts(db, nested, [({"a.b": [5, 5]}, 2), ({"a.b": [6, 6]}, 1)], [[("a", 1)]])


# jstests/core/query/array/array_match4.js: $eq and $gte to a whole array, unindexed and indexed.
def test_array_match4(db: Database) -> None:
    _counts(db, [{"a": [1, 2]}], [({"a": [1, 2]}, 1), ({"a": {"$gte": [1, 2]}}, 1)], [[("a", 1)]])


# jstests/core/query/array/arrayfind3.js: A1, A2, B1, B2.
def test_arrayfind3(db: Database) -> None:
    docs = [{"a": [1, 2]}, {"a": [1, 2, 6]}, {"a": [1, 4, 6]}]
    cases = [({"a": {"$gte": 3, "$lte": 5}}, 2), ({"a": {"$elemMatch": {"$gte": 3, "$lte": 5}}}, 1)]
    _counts(db, docs, cases, [[("a", 1)]])


# jstests/core/query/array/arrayfind4.js: every itcount, hinted {$natural: 1} and {a: 1}.
@pytest.mark.parametrize("doc", [{"a": []}, {"a": [[]]}], ids=["empty array", "array of an empty array"])
def test_arrayfind4(db: Database, doc: dict[str, Any]) -> None:
    db.c.insert_one(dict(doc))
    db.c.create_index("a")
    for filter_ in ({"a": []}, {"a": {"$in": [[]]}}):
        for hint in ([("$natural", 1)], [("a", 1)]):
            assert len(list(db.c.find(filter_).hint(hint))) == 1, (filter_, hint)


# jstests/core/query/array/arrayfind5.js: check() for both documents, unindexed and with {"a.b": 1},
# with the 7.0/8.0 answer for {"a.b": null} (the file's 7.0 version): 9.0 (requires_fcv_90,
# SERVER-36681) lets a non-object element (5) match a dotted null; 7.0 and 8.0 do not.
@pytest.mark.parametrize(("doc", "null_elem_match"), [({"a": [{}, {"b": 1}]}, 1), ({"a": [5, {"b": 1}]}, 0)])
def test_arrayfind5(db: Database, doc: dict[str, Any], null_elem_match: int) -> None:
    cases = [
        ({"a.b": 1}, 1),
        ({"a": {"$elemMatch": {"b": 1}}}, 1),
        ({"a.b": None}, null_elem_match),
        ({"a": {"$elemMatch": {"b": None}}}, null_elem_match),
    ]
    _counts(db, [doc], cases, [[("a.b", 1)]])


# jstests/core/query/array/arrayfind6.js: every count of checkElemMatchMatches, unindexed and with {"a.b": 1}.
def test_arrayfind6(db: Database) -> None:
    cases = [
        ({"a": {"$elemMatch": {"b": 1, "c": 2}}}, 1),
        ({"a": {"$not": {"$elemMatch": {"b": 1, "c": 2}}}}, 0),
        ({"a": {"$not": {"$elemMatch": {"b": 1, "c": 3}}}}, 1),
        ({"a": {"$not": {"$elemMatch": {"b": {"$ne": 1}, "c": 3}}}}, 1),
        ({"a": {"$not": {"$elemMatch": {"b": {"$ne": 2}, "c": 3}}}}, 1),
    ]
    _counts(db, [{"a": [{"b": 1, "c": 2}]}], cases, [[("a.b", 1)]])


# jstests/core/query/array/arrayfind7.js: the nested $elemMatch count and every checkElemMatch
# (unindexed, indexed, and after a document makes the index multikey).
ARRAYFIND7 = [
    (
        [("a.b.c", 1)],
        {"a": [{"b": [{"c": 1}]}]},
        {"a": {"$elemMatch": {"b": {"$elemMatch": {"c": {"$gte": 1, "$lte": 1}}}}}},
    ),
    (
        [("a.b.c", 1)],
        {"a": [{"b": [{"c": 2}]}]},
        {"a": {"$elemMatch": {"b": {"$elemMatch": {"c": {"$gte": 1, "$in": [2]}}}}}},
    ),
    (
        [("a.d.e", 1), ("a.b.c", 1)],
        {"a": [{"b": [{"c": 1}], "d": [{"e": 1}]}]},
        {"a": {"$elemMatch": {"d": {"$elemMatch": {"e": {"$lte": 1}}}, "b": {"$elemMatch": {"c": {"$gte": 1}}}}}},
    ),
    (
        [("a.x", 1), ("a.b.c", 1)],
        {"a": [{"b": [{"c": 1}], "x": 1}]},
        {"a.x": 1, "a": {"$elemMatch": {"b": {"$elemMatch": {"c": {"$gte": 1}}}}}},
    ),
    (
        [("a.b.c", 1)],
        {"a": [{"b": [{"c": [1]}]}]},
        {"a": {"$elemMatch": {"b.c": {"$elemMatch": {"$gte": 1, "$lte": 1}}}}},
    ),
]


def test_arrayfind7(db: Database) -> None:
    nested = {"a": {"$elemMatch": {"b": {"$elemMatch": {"c": 1, "d": 2}}}}}
    _counts(db, [{"a": [{"b": [{"c": 1, "d": 2}]}]}], [(nested, 1)], [[("a.b.c", 1)]])
    for index, doc, query in ARRAYFIND7:
        _counts(db, [doc], [(query, 1)], [index])
        db.jst.insert_one({"a": {"b": {"c": [10, 11]}}})  # makes the index multikey
        assert db.jst.count_documents(query) == 1 and len(list(db.jst.find(query))) == 1


# jstests/core/query/array/arrayfinda.js: $elemMatch matches only elements of arrays, also hinted.
def test_arrayfinda(db: Database) -> None:
    db.c.insert_many([{"a": [{"b": 1}]}, {"a": {"b": 1}}])
    for query in ({"a": {"$elemMatch": {"b": {"$gte": 1}}}}, {"a": {"$elemMatch": {"b": 1}}}):
        assert [d["a"] for d in db.c.find(query)] == [[{"b": 1}]]
    db.c.create_index("a")
    for query in ({"a": {"$elemMatch": {"b": {"$gte": 1}}}}, {"a": {"$elemMatch": {"b": 1}}}):
        assert [d["a"] for d in db.c.find(query).hint([("a", 1)])] == [[{"b": 1}]]


# jstests/core/query/array/arrayfindb.js: both cases, unindexed and indexed.
def test_arrayfindb(db: Database) -> None:
    case1 = [({"a": {"$elemMatch": {"b": {"$gte": 2, "$lt": 4}, "c": 25}}}, 0)]
    _counts(db, [{"a": [{"b": 1, "c": 25}, {"a": 3, "b": 59}]}], case1, [[("a.b", 1), ("a.c", 1)]])
    docs = [{"a": [{"b": 1}, {"c": 1}]}, {"a": [{"b": 2}, {"c": 1}]}, {"a": [{"b": 1}, {"c": 2}]}]
    _counts(db, docs, [({"a": {"$elemMatch": {"$or": [{"b": 2}, {"c": 2}]}}}, 2)], [[("a.b", 1)], [("a.c", 1)]])


# jstests/core/query/exists/exists2.js: A1-A4, B1, B2.
def test_exists2(db: Database) -> None:
    cases = [
        ({}, 2),
        ({"a": 1, "b": 1}, 2),
        ({"a": 1, "b": 1, "c": {"$exists": True}}, 1),
        ({"a": 1, "b": 1, "c": {"$exists": False}}, 1),
    ]
    _counts(db, [{"a": 1, "b": 1}, {"a": 1, "b": 1, "c": 1}], cases, [[("a", 1), ("b", 1), ("c", 1)]])


# jstests/core/query/exists/exists4.js: all seven counts over the unique {date: -1, country_code: 1, user_id: 1}.
def test_exists4(db: Database) -> None:
    day = datetime.datetime(2010, 8, 27)
    rows = [(None, None), ("IT", None), ("ES", None), ("ES", "a@s.org"), ("ES", "a@gmail.com"), ("ES", "a@p.com")]
    docs = [
        {"date": day, **({"country_code": c} if c else {}), **({"user_id": u} if u else {}), "tot_visit": n}
        for n, (c, u) in enumerate(rows)
    ]
    cases = [
        ({"date": day}, 6),
        ({"date": day, "country_code": {"$exists": True}}, 5),
        ({"date": day, "country_code": {"$exists": False}}, 1),
        ({"date": day, "country_code": None}, 1),
        ({"date": day, "country_code": {"$exists": True}, "user_id": {"$exists": True}}, 3),
        ({"date": day, "country_code": {"$exists": True}, "user_id": {"$exists": False}}, 2),
        ({"date": day, "country_code": {"$exists": True}, "user_id": None}, 2),
    ]
    _counts(db, docs, cases, [([("date", -1), ("country_code", 1), ("user_id", 1)], {"unique": True})])


# jstests/core/query/exists/exists6.js: every itcount, over {b: 1} and then {a: 1, b: 1}.
def test_exists6(db: Database) -> None:
    docs = [{}, {"b": 1}, {"b": None}]
    single = [
        ({"b": {"$exists": True}}, 2),
        ({"b": {"$not": {"$exists": False}}}, 2),
        ({"b": {"$exists": False}}, 1),
        ({"b": {"$not": {"$exists": True}}}, 1),
    ]
    _counts(db, docs, single, [[("b", 1)]])
    docs += [{"a": 1}, {"a": 1, "b": 1}, {"a": 1, "b": None}]
    compound = [({"a": 1, **q}, n) for q, n in single]
    _counts(db, docs, compound, [[("b", 1)], [("a", 1), ("b", 1)]])


# jstests/core/query/exists/exists7.js: $exists with 1 and 0, unindexed and with {b: 1}.
def test_exists7(db: Database) -> None:
    docs = [{}, {"a": 1}, {"a": 2}, {"a": 3, "b": 3}, {"a": 4, "b": 4}]
    _counts(db, docs, [({"b": {"$exists": 1}}, 2), ({"b": {"$exists": 0}}, 3)], [[("b", 1)]])


# jstests/core/query/exists/exists8.js: every count (array element field names in $exists paths).
EXISTS8 = [
    ({"a": [1]}, [("a.0", True, 1), ("a.1", False, 1), ("a.0", False, 0), ("a.1", True, 0)]),
    ({"a": [1, 2]}, [("a.0", True, 1), ("a.1", False, 0), ("a.0", False, 0), ("a.1", True, 1)]),
    ({"a": [{}]}, [("a.0", True, 1), ("a.1", False, 1), ("a.0", False, 0), ("a.1", True, 0)]),
    ({"a": [{}, {}]}, [("a.0", True, 1), ("a.1", False, 0), ("a.0", False, 0), ("a.1", True, 1)]),
    ({"a": [{"b": 2}, {"a": 1}]}, [("a.a", True, 1), ("a.1.a", True, 1), ("a.0.a", False, 1)]),
    (
        {"a": [[1]]},
        [("a.0", True, 1), ("a.0.0", True, 1), ("a.0.0", False, 0), ("a.0.0.0", True, 0), ("a.0.0.0", False, 1)],
    ),
    ({"a": [[[1]]]}, [("a.0.0.0", True, 1)]),
    ({"a": [[{"b": 1}]]}, [("a.b", True, 0), ("a.b", False, 1), ("a.0.b", True, 1), ("a.0.b", False, 0)]),
    (
        {"a": [[], [{"b": 1}]]},
        [
            ("a.0.b", True, 0), ("a.0.b", False, 1), ("a.1.b", True, 1), ("a.1.b", False, 0),
            ("a.1.0.b", True, 1), ("a.1.0.b", False, 0), ("a.1.1.b", True, 0), ("a.1.1.b", False, 1),
        ],
    ),
]  # fmt: skip


@pytest.mark.parametrize(("doc", "checks"), EXISTS8, ids=[repr(d) for d, _ in EXISTS8])
def test_exists8(db: Database, doc: dict[str, Any], checks: list[tuple[str, bool, int]]) -> None:
    _counts(db, [doc], [({path: {"$exists": exists}}, n) for path, exists, n in checks], [])


# jstests/core/query/exists/existsb.js: every count of checkExistsNull with no index, {a: 1},
# sparse {a: 1}, {a: 1, b: 1} and sparse {a: 1, b: 1}.
def test_existsb(db: Database) -> None:
    docs = [{}, {"a": 1}, {"b": 1}, {"a": 1, "b": None}, {"a": 1, "b": 1}]
    yes, no = {"$exists": True}, {"$exists": False}
    cases = [
        ({"a": yes}, 3), ({"a": no}, 2), ({"b": yes}, 3), ({"b": no}, 2),
        ({"a": {"$not": no}}, 3), ({"a": {"$not": yes}}, 2), ({"b": {"$not": no}}, 3), ({"b": {"$not": yes}}, 2),
        ({"a": 1, "b": yes}, 2), ({"a": 1, "b": no}, 1), ({"a": yes, "b": 1}, 1), ({"a": no, "b": 1}, 1),
        ({"a": yes, "b": yes}, 2), ({"a": yes, "b": no}, 1), ({"a": no, "b": yes}, 1), ({"a": no, "b": no}, 1),
    ]  # fmt: skip
    indexes = [
        [("a", 1)],
        ([("a", 1)], {"sparse": True}),
        [("a", 1), ("b", 1)],
        ([("a", 1), ("b", 1)], {"sparse": True}),
    ]
    _counts(db, docs, cases, indexes, alone=True)


# jstests/core/query/ne/ne1.js: A and B.
def test_ne1(db: Database) -> None:
    _counts(db, [{"x": 1}, {"x": 2}, {"x": 3}], [({"x": {"$ne": 2}}, 2)], [[("x", 1)]])


# jstests/core/query/ne/ne2.js: nReturned A and B of the explain over {a: 1}.
def test_ne2(db: Database) -> None:
    db.c.create_index("a")
    db.c.insert_many([{"a": -0.5}, {"a": 0}, {"a": 0}, {"a": 0.5}])
    for query in ({"a": {"$ne": 0}}, {"a": {"$gt": -1, "$lt": 1, "$ne": 0}}):
        assert db.c.find(query).explain()["executionStats"]["nReturned"] == 2
        assert len(list(db.c.find(query))) == 2


# jstests/core/query/not/not1.js: every count of test(), unindexed and with {a: 1}.
def test_not1(db: Database) -> None:
    cases = [({}, 3), ({"a": 1}, 1), ({"a": {"$ne": 1}}, 2), ({"a": {"$in": [1]}}, 1), ({"a": {"$nin": [1]}}, 2)]
    _counts(db, [{"a": 1}, {"a": 2}, {}], cases, [[("a", 1)]])


# jstests/core/query/not/not2.js: every check() and fail() of doTest, unindexed and with {i: 1}.
NOT2_STRINGS = [
    ({"i": {"$not": {"$not": {"$gt": "a"}}}}, ["b"]), ({"i": {"$gt": "a"}}, ["b"]),
    ({"i": {"$not": {"$gt": "a"}}}, ["a"]), ({"i": {"$not": {"$ne": "a"}}}, ["a"]),
    ({"i": {"$not": {"$gte": "b"}}}, ["a"]), ({"i": {"$exists": True}}, ["a", "b"]),
    ({"i": {"$not": {"$exists": True}}}, []), ({"j": {"$not": {"$exists": False}}}, []),
    ({"j": {"$not": {"$exists": True}}}, ["a", "b"]), ({"i": {"$not": {"$in": ["a"]}}}, ["b"]),
    ({"i": {"$not": {"$in": ["a", "b"]}}}, []), ({"i": {"$not": {"$in": ["g"]}}}, ["a", "b"]),
    ({"i": {"$not": {"$nin": ["a"]}}}, ["a"]), ({"i": {"$not": re.compile("a")}}, ["b"]),
    ({"i": {"$not": re.compile("(a|b)")}}, []), ({"i": {"$not": re.compile("a"), "$regex": "a"}}, []),
    ({"i": {"$not": re.compile("aa")}}, ["a", "b"]), ({"i": {"$not": {"$regex": "a"}}}, ["b"]),
    ({"i": {"$not": {"$regex": "A", "$options": "i"}}}, ["b"]), ({"i": {"$not": {"$regex": "[ab]"}}}, []),
    ({"i": {"$not": {"$regex": "^foo"}}}, ["a", "b"]), ({"i": {"$type": 2}}, ["a", "b"]),
    ({"i": {"$not": {"$type": 1}}}, ["a", "b"]), ({"i": {"$not": {"$type": 2}}}, []),
]  # fmt: skip
NOT2_FAILS = [
    {"i": {"$not": {"$not": "a"}}}, {"i": {"$not": "a"}}, {"i": {"$not": {"$ref": "foo"}}}, {"i": {"$not": {}}},
    {"i": {"$not": {"$options": "a"}}},
]  # fmt: skip
NOT2_LATER = [
    (
        [{"i": 1}],
        [
            ({"i": {"$not": {"$mod": [5, 1]}}}, []),
            ({"i": {"$mod": [5, 2]}}, []),
            ({"i": {"$not": {"$mod": [5, 2]}}}, [1]),
        ],
    ),
    (
        [{"i": ["a", "b"]}],
        [
            ({"i": {"$not": {"$size": 2}}}, []), ({"i": {"$not": {"$size": 3}}}, [["a", "b"]]),
            ({"i": {"$not": {"$gt": "a"}}}, []), ({"i": {"$not": {"$gt": "c"}}}, [["a", "b"]]),
            ({"i": {"$not": {"$all": ["a", "b"]}}}, []), ({"i": {"$not": {"$all": ["c"]}}}, [["a", "b"]]),
        ],
    ),
    (
        [{"i": [{"j": "a"}]}, {"i": [{"j": "b"}]}],
        [
            ({"i": {"$not": {"$elemMatch": {"j": "a"}}}}, [[{"j": "b"}]]),
            ({"i": {"$not": {"$elemMatch": {"j": "f"}}}}, [[{"j": "a"}], [{"j": "b"}]]),
        ],
    ),
]  # fmt: skip


@pytest.mark.parametrize("indexed", [False, True], ids=["no index", "index on i"])
def test_not2(db: Database, indexed: bool) -> None:
    from pymongo.errors import OperationFailure

    if indexed:
        db.c.create_index("i")
    for docs, cases in [([{"i": "a"}, {"i": "b"}], NOT2_STRINGS), *NOT2_LATER]:
        db.c.delete_many({})
        db.c.insert_many([dict(d) for d in docs])
        for query, expected in cases:
            assert [d["i"] for d in db.c.find(query, sort=[("i", 1)])] == expected, query
    db.c.delete_many({})
    db.c.insert_many([{"i": "a"}, {"i": "b"}])
    for query in NOT2_FAILS:
        with pytest.raises(OperationFailure):
            list(db.c.find(query))


# jstests/core/query/not/not3.js: both cases over the multikey {arr: 1}.
def test_not3(db: Database) -> None:
    db.c.create_index("arr")
    db.c.insert_many([{"_id": 0, "arr": [1, 2, 3]}, {"_id": 1, "arr": [10, 11]}])
    assert [d["_id"] for d in db.c.find({"arr": {"$ne": 3}})] == [1]
    assert [d["_id"] for d in db.c.find({"arr": {"$not": {"$gt": 6}}})] == [0]


# jstests/core/query/in/in3.js: every count of doTest, unindexed and with {key: 1}.
def test_in3(db: Database) -> None:
    cases = [
        ({"key": [1]}, 1), ({"key": {"$in": [[1]]}}, 1), ({"key": {"$in": [[1]], "$ne": [2]}}, 1),
        ({"key": {"$in": [["1"]], "$type": 2}}, 1), ({"key": ["1"]}, 1), ({"key": {"$in": [["1"]]}}, 1),
        ({"key": [2]}, 1), ({"key": {"$in": [[2]]}}, 1),
    ]  # fmt: skip
    _counts(db, [{"key": [1]}, {"key": ["1"]}, {"key": [[2]]}], cases, [[("key", 1)]])


# jstests/core/query/in/in7.js: $elemMatch inside $in, $nin and their $not is refused.
def test_in7(db: Database) -> None:
    from pymongo.errors import OperationFailure

    db.c.insert_one({})
    elem = {"$elemMatch": {"b": 1}}
    for query in ({"$in": [elem]}, {"$not": {"$in": [elem]}}, {"$nin": [elem]}, {"$not": {"$nin": [elem]}}):
        with pytest.raises(OperationFailure):
            list(db.c.find({"a": query}))


# jstests/core/query/in/in_with_collation.js: the matching _ids of $in under the collection's
# case-insensitive default collation.
IN_LIST = ["cyD", 8, "BZd", 6, "awD", 2, "Cwa", 9, 3, "bxA", "azB", 4, "Ayc", 1, "cXB", "dYa", 7, "bwC", 5]


def test_in_with_collation(db: Database) -> None:
    db.create_collection("inc", collation={"locale": "en_US", "strength": 2})
    docs = []
    for i in reversed(range(len(IN_LIST))):
        value = IN_LIST[i]
        first = value if isinstance(value, int) or i % 2 else (value.lower() if i % 4 == 0 else value.upper())
        second = first + (10 if i % 2 == 0 else -10) if isinstance(first, int) else first[1:] + first[:1]
        docs += [{"_id": 2 * i, "x": first}, {"_id": 2 * i + 1, "x": second}]
    db.inc.insert_many(docs)
    assert sorted(d["_id"] for d in db.inc.find({"x": {"$in": IN_LIST}}, {"_id": 1})) == list(range(0, 38, 2))
    db.inc.create_index("x")
    assert sorted(d["_id"] for d in db.inc.find({"x": {"$in": IN_LIST}}, {"_id": 1})) == list(range(0, 38, 2))


# jstests/core/query/type/type1.js: A1-A4 and B1-B4 and the $regex with $type count.
def test_type1(db: Database) -> None:
    cases = [({}, 4), ({"x": {"$type": 1}}, 1), ({"x": {"$type": 2}}, 3), ({"x": {"$type": 3}}, 0)]
    docs = [{"x": 1.1}, {"x": "3"}, {"x": "asd"}, {"x": "foo"}]
    _counts(db, docs, [*cases, ({"x": {"$regex": "f", "$type": 2}}, 1)], [[("x", 1)]])


# jstests/core/query/type/type2.js: $type 10 matches null, not missing.
def test_type2(db: Database) -> None:
    cases = [({"a": None}, 2), ({"a": {"$type": 10}}, 1), ({"a": {"$exists": True}}, 2), ({"a": {"$exists": False}}, 1)]
    _counts(db, [{"a": None}, {}, {"a": "a"}], cases, [[("a", 1)]])


# jstests/core/query/type/type3.js: every hinted and unhinted $type count except undefined's
# (pymongo cannot write BSON undefined).
TYPE3 = [
    ([{"a": {"": ""}}], 3, 1, True), ([{"a": [["c"]]}], 4, 1, True), ([{"a": Regex("r")}], 11, 1, True),
    ([{"a": None}], 10, 1, True), ([{"a": Code("function() { var a = 0; }")}], 13, 1, False),
    ([{"a": Binary(b"", 0)}], 5, 1, False), ([{"a": Timestamp(0, 0)}, {"a": Timestamp(0x80008000, 0)}], 17, 2, False),
    ([{"a": Timestamp(0, 0)}, {"a": Timestamp(0x80008000, 0)}], 9, 0, False),
    ([{"a": datetime.datetime(2020, 1, 1)}], 17, 0, False), ([{"a": datetime.datetime(2020, 1, 1)}], 9, 1, False),
]  # fmt: skip


@pytest.mark.parametrize(("docs", "code", "count", "hinted"), TYPE3)
def test_type3(db: Database, docs: list[dict[str, Any]], code: int, count: int, hinted: bool) -> None:
    db.c.create_index("a")
    db.c.insert_many([dict(d) for d in docs])
    cursor = db.c.find({"a": {"$type": code}})
    assert len(list(cursor.hint([("a", 1)]) if hinted else cursor)) == count


# jstests/core/query/type/type_array.js: every assertion of runTests, unindexed and with {a: 1}.
@pytest.mark.parametrize("indexed", [False, True], ids=["no index", "index on a"])
def test_type_array(db: Database, indexed: bool) -> None:
    from pymongo.errors import OperationFailure

    if indexed:
        db.c.create_index("a")

    def found(query: dict[str, Any]) -> list[int]:
        return sorted(d["_id"] for d in db.c.find(query))

    db.c.insert_many(
        [
            {"_id": 1, "a": [1, 2, 3]}, {"_id": 2, "a": [1, "foo", 3]}, {"_id": 3, "a": []}, {"_id": 4, "a": [[]]},
            {"_id": 5, "a": [[[]]]}, {"_id": 6, "a": 1}, {"_id": 7, "a": "foo"},
        ]
    )  # fmt: skip
    assert found({"a": {"$type": "number"}}) == [1, 2, 6]
    assert found({"a": {"$type": "string"}}) == [2, 7]
    assert found({"a": {"$type": "array"}}) == [1, 2, 3, 4, 5]
    assert found({"a.0": {"$type": "array"}}) == [4, 5]
    assert found({"a.0.0": {"$type": "array"}}) == [5]
    db.c.delete_many({})
    db.c.insert_many(
        [
            {"_id": 0, "a": 1.0}, {"_id": 1, "a": 1}, {"_id": 2, "a": Int64(1)}, {"_id": 3, "a": "str"},
            {"_id": 4, "a": []}, {"_id": 5, "a": [1, "str"]}, {"_id": 6},
        ]
    )  # fmt: skip
    for bad in (["string", None], [{}, "string"]):
        with pytest.raises(OperationFailure):
            list(db.c.find({"a": {"$type": bad}}))
    assert found({"a": {"$type": ["long", 2]}}) == [2, 3, 5]
    assert found({"a": {"$type": ["long", "array"]}}) == [2, 4, 5]
    assert found({"a": {"$type": ["long", "array", "long", "array"]}}) == [2, 4, 5]
    assert found({"a": {"$type": ["long", "array", 18, 4]}}) == [2, 4, 5]


# jstests/core/query/type/type_operator_on_missing_values.js: no type matches a missing field, and
# its $not matches every document.
BSON_TYPE_NAMES = [
    "double", "string", "object", "array", "binData", "undefined", "objectId", "bool", "date", "null", "regex",
    "dbPointer", "javascript", "symbol", "javascriptWithScope", "int", "timestamp", "long", "decimal", "minKey",
    "maxKey",
]  # fmt: skip


def test_type_operator_on_missing_values(db: Database) -> None:
    documents = [{"_id": 0}, {"_id": 1, "b": 123}]
    db.c.insert_many([dict(d) for d in documents])
    for name in BSON_TYPE_NAMES:
        assert list(db.c.find({"a": {"$type": name}}, sort=[("_id", 1)])) == [], name
        assert list(db.c.find({"a": {"$not": {"$type": name}}}, sort=[("_id", 1)])) == documents, name


# jstests/core/query/regex/regex.js: counts A-H, the $elemMatch $regex count, the refusals of null
# bytes and of a regex's flags beside $options (codes 51075 and 51074), and the last three counts.
def test_regex(db: Database) -> None:
    from pymongo.errors import OperationFailure

    db.c.insert_one({"a": "bcd"})
    counts = [(re.compile("b"), 1), (re.compile("bc"), 1), (re.compile("bcd"), 1), (re.compile("bcde"), 0)]
    assert [db.c.count_documents({"a": r}) for r, _ in counts] == [n for _, n in counts]
    for doc in ({"a": {"b": "cde"}}, {"a": {"b": ["cde"]}}, {"a": [{"b": "cde"}]}, {"a": [{"b": ["cde"]}]}):
        db.c.drop()
        db.c.insert_one(doc)
        assert db.c.count_documents({"a.b": re.compile("de")}) == 1, doc
    db.c.drop()
    db.c.insert_one({"x": ["abc"]})
    query = {"x": {"$elemMatch": {"$regex": "ABC", "$options": "i"}}}
    assert db.c.count_documents(query) == 1
    for bad in ({"a": {"$regex": "a\0b", "$options": "i"}}, {"a": {"$regex": "ab", "$options": "i\0"}}):
        with pytest.raises(OperationFailure):
            list(db.c.find(bad))
    with pytest.raises(OperationFailure) as regex_first:
        list(db.c.find({"x": {"$regex": Regex("ab", "i"), "$options": "s"}}))
    assert regex_first.value.code == 51075
    with pytest.raises(OperationFailure) as options_first:
        list(db.c.find({"x": {"$options": "s", "$regex": Regex("ab", "i")}}))
    assert options_first.value.code == 51074
    assert db.c.count_documents({"x": {"$regex": Regex("ABC", "i")}}) == 1
    assert db.c.count_documents({"x": {"$regex": Regex("ABC"), "$options": "i"}}) == 1
    assert db.c.count_documents({"x": {"$options": "i", "$regex": Regex("ABC")}}) == 1


# jstests/core/query/regex/regex2.js: every count (ASCII and Cyrillic, both syntaxes, the s flag).
def test_regex2(db: Database) -> None:
    for lower, upper in (("test", "Test"), ("\u0442\u0435\u0441\u0442", "\u0422\u0435\u0441\u0442")):
        db.c.delete_many({})
        db.c.insert_many([{"a": lower}, {"a": upper}])
        cases = [
            ({}, 2), ({"a": upper}, 1), ({"a": lower}, 1), ({"a": re.compile(upper)}, 1),
            ({"a": re.compile(lower)}, 1), ({"a": re.compile(lower, re.I)}, 2), ({"a": {"$regex": upper}}, 1),
            ({"a": {"$regex": lower}}, 1), ({"a": {"$regex": lower, "$options": "i"}}, 2),
            ({"a": {"$options": "i", "$regex": lower}}, 2),
        ]  # fmt: skip
        assert [db.c.count_documents(q) for q, _ in cases] == [n for _, n in cases], lower
    db.c.delete_many({})
    db.c.insert_many([{"a": "1  2"}, {"a": "1\n2"}])
    assert db.c.count_documents({"a": {"$regex": "1.*2"}}) == 1
    assert db.c.count_documents({"a": {"$regex": "1.*2", "$options": "s"}}) == 2


# jstests/core/query/regex/regex7.js: a stored regex matches itself (by value), unindexed and indexed,
# and a string also matches the regex.
def test_regex7(db: Database) -> None:
    db.c.insert_many([{"r": Regex("^a")}, {"r": Regex("^a", "i")}, {"r": Regex("^b")}])
    for indexed in (False, True):
        if indexed:
            db.c.create_index("r")
        for pattern in (Regex("^a"), Regex("^a", "i"), Regex("^b")):
            found = db.c.find_one({"r": pattern})
            assert found is not None and (found["r"].pattern, found["r"].flags) == (pattern.pattern, pattern.flags)
            assert db.c.count_documents({"r": pattern}) == 1
    db.c.insert_one({"r": "a"})
    assert db.c.count_documents({"r": Regex("^a")}) == 2


# jstests/core/query/regex/regex8.js, regex9.js, regexa.js, regexb.js: every count, unindexed and indexed.
def test_regex8(db: Database) -> None:
    docs = [{"_id": 1, "a": "abc"}, {"_ud": 2, "a": "abc"}, {"_id": 3, "a": "bdc"}]
    cases = [
        ({}, 3),
        ({"a": re.compile("a.*")}, 2),
        ({"a": re.compile("[ab].*")}, 3),
        ({"a": re.compile("[a|b].*")}, 3),
    ]
    _counts(db, docs, cases, [[("a", 1)]])


def test_regex9(db: Database) -> None:
    docs = [{"_id": 1, "a": ["a", "b", "c"]}, {"_id": 2, "a": ["a", "b", "c", "d"]}, {"_id": 3, "a": ["b", "c", "d"]}]
    cases = [({"a": re.compile("a")}, 2), ({"a": {"$regex": "a"}}, 2), ({"a": {"$regex": re.compile("a")}}, 2)]
    _counts(db, docs, cases, [])


def test_regexa(db: Database) -> None:
    cases = [
        ({"a": re.compile("^(z|.)")}, 1), ({"a": re.compile("^z|.")}, 1), ({"a": re.compile("^z(z|.)")}, 0),
        ({"a": re.compile("^zz|.")}, 1),
    ]  # fmt: skip
    _counts(db, [{"a": "a"}], cases, [[("a", 1)]])


def test_regexb(db: Database) -> None:
    doc = {"a": "a", "b": "b", "c": "c", "d": "d", "e": "e"}
    five = {k: re.compile(k) for k in doc}
    _counts(db, [doc], [(five, 1), ({**five, "e": re.compile("barf")}, 0)], [])


# jstests/core/query/regex/regexc.js: the three itcounts (one index used twice).
def test_regexc(db: Database) -> None:
    _counts(
        db,
        [{"a": "0"}, {"a": "1"}, {"a": "10"}],
        [({"$and": [{"a": re.compile("0")}, {"a": re.compile("1")}]}, 1)],
        [[("a", 1)]],
    )
    docs = [{"a": "0", "b": "1"}, {"a": "10", "b": "10"}, {"a": "10", "b": "2"}]
    _counts(db, docs, [({"a": re.compile("0"), "b": re.compile("1")}, 2)], [[("a", 1), ("b", 1)]])
    four = [{"a": "0"}, {"a": "1"}, {"a": "2"}, {"a": "10"}]
    _counts(db, four, [({"$or": [{"a": re.compile("0")}, {"a": re.compile("1")}]}, 3)], [[("a", 1)]])


# jstests/core/query/regex/regex_not_id.js: a regex _id is refused, first field or not.
def test_regex_not_id(db: Database) -> None:
    from pymongo.errors import WriteError

    db.c.insert_one({"_id": "ABCDEF1"})
    for doc in ({"_id": Regex("^A")}, {"xxx": "ABCDEF", "_id": Regex("ABCDEF")}):
        with pytest.raises(WriteError):
            db.c.insert_one(doc)


# jstests/core/query/elemmatch/elemmatch_object.js: every arrayEq (documents, any order).
EMO_DOCS = [
    {"a": {"b": 1, "c": 4}}, {"a": [{"b": 1, "c": 4}]}, {"a": [{"b": 2, "c": 3}]},
    {"a": [{"b": 1, "c": 2}, {"b": 3, "c": 4}]}, {"a": [{"b": 1, "c": 2}, {"b": 3, "c": 4}, {"b": 1, "c": 4}]},
    {"a": [{"b": [], "c": []}]}, {"a": [{"b": [12, 2], "c": [13, 3]}]}, {"a": [{"b": [11, 1], "c": [14, 4]}]},
    {"a": [{"b": {"w": 1, "x": 2}, "c": {"y": 3, "z": 4}}]},
    {"a": [{"b": [{"w": 5, "x": 6}, {"w": 1, "x": 2}], "c": [{"y": 7, "z": 8}, {"y": 3, "z": 4}]}]},
    {"a": [{"b": [{"w": 5, "x": 2}, {"w": 1, "x": 6}], "c": [{"y": 7, "z": 4}, {"y": 3, "z": 8}]}]},
    {"a": [{"b": [{"w": 5, "x": 6}, {"w": 1, "x": 2}], "c": [{"y": 7, "z": 4}, {"y": 3, "z": 8}]}]},
    {"a": [{"b": [{"w": [11, 1], "x": [12, 2]}], "c": [{"y": [13, 3], "z": [14, 4]}]}]},
]  # fmt: skip
EMO_CASES = [
    ({"b": 2}, [2, 6]), ({"b": 1}, [1, 3, 4, 7]), ({"b": 1, "c": 4}, [1, 4, 7]),
    ({"b": {"$elemMatch": {}}, "c": {"$elemMatch": {}}}, [9, 10, 11, 12]),
    ({"b": {"$elemMatch": {"w": 1, "x": 2}}, "c": {"$elemMatch": {}}}, [9, 11, 12]),
    ({"b": {"$elemMatch": {"w": 1, "x": 2}}, "c": {"$elemMatch": {"y": 3, "z": 4}}}, [9, 12]),
]  # fmt: skip
EMO_SECOND = [
    {}, {"a": 1}, {"a": "foo"}, {"a": []}, {"a": {}}, {"a": [1]}, {"a": ["foo"]}, {"a": [[]]}, {"a": [{}]},
    {"a": [[1]]}, {"a": [1, []]}, {"a": [1, {}]}, {"a": [{"b": 1}]},
]  # fmt: skip


def test_elemmatch_object(db: Database) -> None:
    db.c.insert_many([{"_id": i, **d} for i, d in enumerate(EMO_DOCS)])
    for inner, expected in EMO_CASES:
        assert sorted(d["_id"] for d in db.c.find({"a": {"$elemMatch": inner}})) == expected, inner
    db.c.drop()
    db.c.insert_many([{"_id": i, **d} for i, d in enumerate(EMO_SECOND)])
    for query in ({"a": {"$elemMatch": {}}}, {"a": {"$elemMatch": {"$or": [{}, {}]}}}):
        assert sorted(d["_id"] for d in db.c.find(query)) == [7, 8, 9, 10, 11, 12], query


# jstests/core/query/elemmatch/elemmatch_or_pushdown.js: every result, over the index and (where the
# jstest hints both) over a collection scan; the aggregate $match of the third part too.
def _ids_sorted(cursor: Any) -> list[Any]:
    return [d["_id"] for d in cursor.sort("_id", 1)]


def test_elemmatch_or_pushdown(db: Database) -> None:
    c = db.c
    c.insert_many(
        [
            {"_id": i, "a": a, "b": [{"c": v}]}
            for i, (a, v) in enumerate([(1, 4), (2, 4), (2, 5), (1, 5), (1, 6), (1, 7)])
        ]
    )
    c.create_index([("a", 1), ("b.c", 1)])
    assert _ids_sorted(c.find({"a": 1, "b": {"$elemMatch": {"$or": [{"c": 4}, {"c": 5}]}}})) == [0, 3]
    assert _ids_sorted(c.find({"a": 1, "$or": [{"a": 2}, {"b": {"$elemMatch": {"$or": [{"c": 4}, {"c": 5}]}}}]})) == [
        0,
        3,
    ]
    c.drop()
    rows = [
        (5, 8, "d", 6),
        (4, 8, "d", 6),
        (5, 8, "d", 7),
        (4, 9, "d", 6),
        (5, 8, "e", 7),
        (4, 8, "e", 7),
        (5, 8, "e", 8),
        (5, 9, "e", 7),
    ]
    c.insert_many([{"_id": i, "a": a, "b": [{"c": [{"f": f}], k: v}]} for i, (a, f, k, v) in enumerate(rows)])
    c.create_index([("b.d", 1), ("b.c.f", 1)])
    c.create_index([("b.e", 1), ("b.c.f", 1)])
    query = {"a": 5, "b": {"$elemMatch": {"c": {"$elemMatch": {"f": 8}}, "$or": [{"d": 6}, {"e": 7}]}}}
    assert _ids_sorted(c.find(query)) == [0, 4]
    c.drop()
    c.insert_many(
        [
            {"_id": i, "arr": [{"a": i % 2, "b": 2 + (i // 2) % 2}], "c": 4 if i < 4 else 6, "d": 5 if i < 4 else 7}
            for i in range(8)
        ]
    )
    key = [("arr.a", 1), ("arr.b", 1), ("c", 1), ("d", 1)]
    c.create_index(key)
    either = [{"c": 4, "d": 5}, {"c": 6, "d": 7}]
    query = {"arr": {"$elemMatch": {"a": {"$ne": 1}, "$or": [{"b": 2}, {"b": 3}]}}, "$or": either}
    for hint in (key, [("$natural", 1)]):
        assert _ids_sorted(c.find(query, {"_id": 1}).hint(hint)) == [0, 2, 4, 6]
        pipeline = [
            {"$match": {"arr": {"$elemMatch": {"a": {"$ne": 1}}}, "$or": either}},
            {"$project": {"_id": 1}},
            {"$sort": {"_id": 1}},
        ]
        assert [d["_id"] for d in c.aggregate(pipeline, hint=dict(hint))] == [0, 2, 4, 6]
    c.drop()
    arrays = [
        [{"a": 0, "b": 1}], [{"a": 0, "b": 5}], [{"a": 1, "b": 1}, {"a": 0, "b": 5}],
        [{"a": 2, "b": 0}, {"a": 1, "b": 9}], [{"a": 1, "b": 1}], [{"a": 0, "b": 3}],
        [{"a": 1, "b": 1}, {"a": 0, "b": 3}], [{"a": 1, "b": 5}, {"a": 0, "b": 3}],
    ]  # fmt: skip
    c.insert_many([{"_id": i, "arr": arr} for i, arr in enumerate(arrays)])
    c.create_index([("arr.a", 1), ("arr.b", 1)])
    negation = {"arr": {"$elemMatch": {"a": {"$ne": 1}, "$or": [{"b": {"$lt": 2}}, {"b": {"$gt": 3}}]}}}
    for hint in ([("arr.a", 1), ("arr.b", 1)], [("$natural", 1)]):
        assert _ids_sorted(c.find(negation, {"_id": 1}).hint(hint)) == [0, 1, 2, 3]
    c.drop()
    nested = [
        [{"a": [{"c": 2}], "b": 1}], [{"a": [{"c": 2}], "b": 5}], [{"a": [{"c": 2}, {"c": 3}], "b": 0}],
        [{"a": [{"c": 1}, {"c": 2}], "b": 0}, {"a": [{"c": 5}], "b": 9}], [{"b": 1}],
        [{"a": [{"c": 1}, {"c": 2}], "b": 1}], [{"a": [{"c": 1}], "b": 5}], [{"a": [{"c": 2}], "b": 3}],
        [{"a": [{"c": 1}], "b": 0}, {"a": [{"c": 2}], "b": 3}],
    ]  # fmt: skip
    c.insert_many([{"_id": i, "arr": arr} for i, arr in enumerate(nested)])
    c.create_index([("arr.a.c", 1), ("arr.b", 1)])
    query = {"arr": {"$elemMatch": {"a.c": {"$ne": 1}, "$or": [{"b": {"$lt": 2}}, {"b": {"$gt": 3}}]}}}
    for hint in ([("arr.a.c", 1), ("arr.b", 1)], [("$natural", 1)]):
        assert _ids_sorted(c.find(query, {"_id": 1}).hint(hint)) == [0, 1, 2, 3, 4]


# jstests/core/query/or/or2.js: the refused $or forms, both results and the IXSCAN, with no index
# and with each of the four indexes.
@pytest.mark.parametrize(
    "key", [None, [("x", 1)], [("x", 1), ("a", 1)], [("x", 1), ("b", 1)], [("x", 1), ("a", 1), ("b", 1)]]
)
def test_or2(db: Database, key: Any) -> None:
    from pymongo.errors import OperationFailure

    if key is not None:
        db.c.create_index(key)
    rows = [(0, 1, None), (0, 2, None), (0, None, 1), (0, None, 2), (1, 1, 1), (1, 1, 2), (1, 2, 1), (1, 2, 2)]
    docs = [
        {"_id": i, "x": x, **({"a": a} if a else {}), **({"b": b} if b else {})} for i, (x, a, b) in enumerate(rows)
    ]
    db.c.insert_many(docs)
    for bad in ("a", [], ["a"]):
        with pytest.raises(OperationFailure):
            list(db.c.find({"x": 0, "$or": bad}))
    assert list(db.c.find({"x": 0, "$or": [{"a": 1}]})) == [docs[0]]
    assert sorted(d["_id"] for d in db.c.find({"x": 1, "$or": [{"a": 1}, {"b": 2}]})) == [4, 5, 7]
    if key is not None:
        assert "IXSCAN" in plan_stages(db.c.find({"x": 0, "$or": [{"a": 1}]}).explain())


# jstests/core/query/or/or3.js: the refused $nor forms and every result, with no index and each of
# the four indexes.
@pytest.mark.parametrize(
    "key", [None, [("x", 1)], [("x", 1), ("a", 1)], [("x", 1), ("b", 1)], [("x", 1), ("a", 1), ("b", 1)]]
)
def test_or3(db: Database, key: Any) -> None:
    from pymongo.errors import OperationFailure

    if key is not None:
        db.c.create_index(key)
    rows = [(0, 1, None), (0, 2, None), (0, None, 1), (0, None, 2), (1, 1, 1), (1, 1, 2), (1, 2, 1), (1, 2, 2)]
    docs = [
        {"_id": i, "x": x, **({"a": a} if a else {}), **({"b": b} if b else {})} for i, (x, a, b) in enumerate(rows)
    ]
    db.c.insert_many(docs)
    for bad in ("a", [], ["a"]):
        with pytest.raises(OperationFailure):
            list(db.c.find({"x": 0, "$nor": bad}))

    def found(query: dict[str, Any]) -> list[int]:
        return sorted(d["_id"] for d in db.c.find(query))

    assert found({"$nor": [{"a": 1}]}) == found({"a": {"$ne": 1}}) == [1, 2, 3, 6, 7]
    assert found({"x": 1, "$nor": [{"a": 1}, {"b": 2}]}) == found({"x": 1, "a": {"$ne": 1}, "b": {"$ne": 2}}) == [6]
    assert found({"$nor": [{"a": 1}], "$or": [{"b": 2}]}) == found({"a": {"$ne": 1}, "b": 2}) == [3, 7]
    if key is not None:
        assert "IXSCAN" in plan_stages(db.c.find({"x": 1, "$nor": [{"a": 1}, {"b": 2}]}).explain())


# jstests/core/query/or/or6.js: a rooted $or sorted on c (merge sort) and on a.
def test_or6(db: Database) -> None:
    db.c.create_index([("a", 1), ("c", 1)])
    db.c.create_index([("b", 1), ("c", 1)])
    db.c.insert_many([{"a": 1, "c": 9}, {"a": 1, "c": 10}, {"b": 2, "c": 8}, {"b": 2, "c": 7}])
    assert [d["c"] for d in db.c.find({"$or": [{"a": 1}, {"b": 2}]}).sort("c", 1)] == [7, 8, 9, 10]
    assert len(list(db.c.find({"$or": [{"a": 1}, {"b": 2}]}).sort("a", 1))) == 4


# jstests/core/query/or/or7.js: every count over {a: 1}.
def test_or7(db: Database) -> None:
    c = db.c
    c.create_index("a")
    c.insert_one({"a": 2})
    assert c.count_documents({"$or": [{"a": {"$in": [1, 3]}}, {"a": 2}]}) == 1
    ab_or_a = {"$or": [{"a": re.compile("^ab")}, {"a": re.compile("^a")}]}
    for values, count in ((["aa", "ab", "ad"], 3), (["aa", "ad"], 2), (["aa", "ac"], 2)):
        c.delete_many({})
        c.insert_many([{"a": v} for v in values])
        assert c.count_documents(ab_or_a) == count
    c.insert_one({"a": "ab"})
    assert (
        c.count_documents({"$or": [{"a": {"$in": [re.compile("^ab")], "$gte": "abc"}}, {"a": re.compile("^a")}]}) == 3
    )
    c.delete_many({})
    c.insert_many([{"a": "a"}, {"a": "b"}])
    assert c.count_documents({"$or": [{"a": {"$gt": "a", "$lt": "b"}}, {"a": {"$gte": "a", "$lte": "b"}}]}) == 2


# jstests/core/query/or/or8.js: a missing collection, empty $in branches, nested fields.
def test_or8(db: Database) -> None:
    assert list(db.missing.find({"$or": [{"PropA": {"$lt": "b"}}, {"PropA": {"$lt": "b", "$gt": "a"}}]})) == []
    db.c.insert_many([{"a": 1}, {"a": 3}])
    db.c.create_index("a")
    assert list(db.c.find({"$or": [{"a": {"$in": []}}]})) == []
    for branches in (
        [{"a": {"$in": []}}, {"a": 1}, {"a": 3}],
        [{"a": 1}, {"a": {"$in": []}}, {"a": 3}],
        [{"a": 1}, {"a": 3}, {"a": {"$in": []}}],
    ):
        assert len(list(db.c.find({"$or": branches}))) == 2
    db.c.drop()
    db.c.insert_one({"a": {"b": 1, "c": 1}})
    db.c.create_index("a.b")
    db.c.create_index("a.c")
    assert len(list(db.c.find({"$or": [{"a.b": 1}, {"a.c": 1}]}))) == 1
    db.c.delete_many({})
    db.c.insert_one({"a": [{"b": 1, "c": 1}, {"b": 2, "c": 1}]})
    assert len(list(db.c.find({"$or": [{"a.b": 2}, {"a.c": 1}]}))) == 1


# jstests/core/query/or/or9.js: every check() over {a: 1, b: 1}.
OR9_ONE = [
    [{"a": {"$gte": 1, "$lte": 3}}, {"a": 2}], [{"a": {"$gt": 2, "$lte": 3}}, {"a": 2}],
    [{"b": {"$gte": 1, "$lte": 3}}, {"b": 2}], [{"b": {"$gte": 2, "$lte": 3}}, {"b": 2}],
    [{"b": {"$gt": 2, "$lte": 3}}, {"b": 2}], [{"a": {"$gte": 1, "$lte": 3}}, {"a": 2, "b": 2}],
    [{"a": {"$gte": 1, "$lte": 3}, "b": 3}, {"a": 2}], [{"b": {"$gte": 1, "$lte": 3}}, {"b": 2, "a": 2}],
    [{"b": {"$gte": 1, "$lte": 3}, "a": 3}, {"b": 2}], [{"a": {"$gte": 1, "$lte": 3}, "b": 3}, {"a": 2, "b": 2}],
    [{"a": {"$gte": 2, "$lte": 3}, "b": 3}, {"a": 2, "b": 2}],
    [{"a": {"$gte": 1, "$lte": 3}, "b": 2}, {"a": 2, "b": 2}],
    [{"b": {"$gte": 1, "$lte": 3}, "a": 3}, {"a": 2, "b": 2}],
    [{"b": {"$gte": 2, "$lte": 3}, "a": 3}, {"a": 2, "b": 2}],
    [{"b": {"$gte": 1, "$lte": 3}, "a": 2}, {"a": 2, "b": 2}],
]  # fmt: skip
OR9_TWO = [
    [{"a": {"$in": [1, 5]}, "b": {"$in": [1, 5]}}, {"a": {"$in": [1, 5]}, "b": {"$in": [1, 5]}}],
    [{"a": {"$in": [1]}, "b": {"$in": [1, 5]}}, {"a": {"$in": [1, 5]}, "b": {"$in": [1, 5]}}],
    [{"a": {"$in": [1]}, "b": {"$in": [1]}}, {"a": {"$in": [1, 5]}, "b": {"$in": [1, 5]}}],
]


def test_or9(db: Database) -> None:
    db.c.create_index([("a", 1), ("b", 1)])
    db.c.insert_one({"a": 2, "b": 2})
    assert [db.c.count_documents({"$or": q}) for q in OR9_ONE] == [1] * len(OR9_ONE)
    db.c.delete_many({})
    db.c.insert_many([{"a": 1, "b": 5}, {"a": 5, "b": 1}])
    assert [db.c.count_documents({"$or": q}) for q in OR9_TWO] == [2] * len(OR9_TWO)


# jstests/core/query/or/orb.js, orc.js, org.js, orh.js, ork.js: every count.
def test_orb(db: Database) -> None:
    db.c.insert_one({"a": 1})
    db.c.create_index([("a", -1)])
    assert db.c.count_documents({"$or": [{"a": {"$gt": 0, "$lt": 2}}, {"a": {"$gt": -1, "$lt": 3}}]}) == 1
    db.c.drop()
    db.c.insert_one({"a": 1, "b": 1})
    db.c.create_index([("a", 1), ("b", -1)])
    assert db.c.count_documents({"$or": [{"a": {"$gt": 0, "$lt": 2}}, {"a": {"$gt": -1, "$lt": 3}}]}) == 1
    assert (
        db.c.count_documents({"$or": [{"a": 1, "b": {"$gt": 0, "$lt": 2}}, {"a": 1, "b": {"$gt": -1, "$lt": 3}}]}) == 1
    )


def test_orc(db: Database) -> None:
    db.c.create_index([("a", -1), ("b", 1), ("c", 1)])
    query = {
        "$or": [
            {"a": None, "b": {"$gte": 0, "$lte": 5}, "c": {"$gte": 0, "$lte": 5}},
            {"a": None, "b": {"$gte": 3, "$lte": 8}, "c": {"$gte": 3, "$lte": 8}},
        ]
    }
    for doc in ({"a": None, "b": 4, "c": 4}, {"b": 4, "c": 4}):
        db.c.delete_many({})
        db.c.insert_one(doc)
        assert db.c.count_documents(query) == 1


def test_org_and_orh(db: Database) -> None:
    db.c.create_index("a", sparse=True)
    db.c.create_index("b")
    for doc, query in (
        ({"a": 1, "b": 2}, {"$or": [{"a": 1}, {"b": 2}]}),
        ({"a": None, "b": 2}, {"$or": [{"a": None}, {"b": 2}]}),
        ({"b": 2}, {"$or": [{"a": None}, {"b": 2}]}),
    ):
        db.c.delete_many({})
        db.c.insert_one(doc)
        assert db.c.count_documents(query) == 1, doc
    db.d.create_index("a", sparse=True)
    db.d.create_index([("b", 1), ("a", 1)])
    db.d.insert_one({"b": 2})
    for query in (
        {"a": None},
        {"b": 2, "a": None},
        {"$or": [{"b": 2, "a": None}, {"a": None}]},
        {"$or": [{"a": None}, {"b": 2, "a": None}]},
    ):
        assert db.d.count_documents(query) == 1, query


def test_ork(db: Database) -> None:
    db.c.create_index("a")
    db.c.insert_many([{"a": [1, 2], "b": 5}, {"a": [2, 4], "b": 5}])
    for b, count in ((5, 2), (6, 1)):
        query = {
            "$or": [
                {"a": 1, "$and": [{"$or": [{"a": 2}, {"a": 3}]}, {"$or": [{"b": b}]}]},
                {"a": 2, "$or": [{"a": 3}, {"a": 4}]},
            ]
        }
        assert len(list(db.c.find(query))) == count


# jstests/core/query/or/orp.js: $or deduplication past 101 results.
def test_orp(db: Database) -> None:
    t = db.orp1
    for key in ("a", "b", "c"):
        t.create_index(key)
    t.insert_many([{"_id": i, "a": 1, "b": 1} for i in range(110)])
    assert t.count_documents({"$or": [{"a": 1}, {"b": 1}]}) == 110
    assert t.count_documents({"$or": [{"a": 1}, {"c": 1}, {"b": 1}]}) == 110
    t.insert_one({"_id": 110, "c": 1})
    assert t.count_documents({"$or": [{"a": 1}, {"c": 1}, {"b": 1}]}) == 111
    t = db.orp2
    t.create_index([("a", 1), ("b", 1)])
    t.insert_many([{"a": i, "b": j} for i in range(11) for j in range(11)])
    assert (
        t.count_documents({"$or": [{"a": {"$gte": 0}, "b": {"$gte": 0}}, {"a": {"$lte": 11}, "b": {"$lte": 11}}]})
        == 121
    )
    t = db.orp3
    t.create_index("a")
    t.create_index("b")
    t.insert_many([{"a": 1, "b": 120}, *({"b": i} for i in range(120))])
    assert t.count_documents({"$or": [{"a": 1}, {"b": {"$gte": 0}}]}) == 121


# --- sorts (jstests/core/query/sort/) -------------------------------------------------------------


def _values(cursor: Any, field: str) -> list[Any]:
    return [d.get(field) for d in cursor]


# sort1.js: every first/next value, unindexed and with {x: 1}; the numericOrdering collation sorts.
def test_sort1(db: Database) -> None:
    c = db.c
    c.insert_many([{"x": x, "z": 33} for x in (3, 5, 2, 3, 1)])
    for _ in range(2):
        assert c.find().sort("x", 1)[0]["x"] == 1 and c.find().sort("x", 1).skip(1)[0]["x"] == 2
        assert c.find().sort("x", -1)[0]["x"] == 5 and c.find().sort("x", -1)[1]["x"] == 3
        assert c.find().sort("x", -1).skip(1)[0]["x"] == 3
        c.create_index("x")
    c.drop()
    c.insert_many([{"x": x} for x in ("a", "aba", "zed", "foo")])
    for _ in range(2):
        assert next(c.find().sort("x", 1).limit(1))["x"] == "a" and next(c.find().sort("x", 1))["x"] == "a"
        assert next(c.find().sort("x", -1).limit(1))["x"] == "zed" and next(c.find().sort("x", -1))["x"] == "zed"
        c.create_index("x")
    c.drop()
    c.insert_many([{"_id": 0, "str": "1000"}, {"_id": 1, "str": "5"}, {"_id": 2, "str": "200"}])
    numeric = {"locale": "en_US", "numericOrdering": True}
    assert [d["_id"] for d in c.find().sort("str", -1).collation(numeric)] == [0, 2, 1]
    c.drop()
    c.insert_many([{"_id": 0, "strs": ["1000", "500"]}, {"_id": 1, "strs": ["2000", "60"]}])
    assert [d["_id"] for d in c.find({"strs": {"$lt": "1000"}}).sort("strs", 1).collation(numeric)] == [1, 0]


# sort2.js: sort on a dotted path, and NaN, -Infinity, 1, 5e9, Infinity in order, unindexed and indexed.
def test_sort2(db: Database) -> None:
    c = db.c
    c.insert_many([{"x": 1, "y": {"a": a, "b": b}} for a, b in ((5, 4), (7, 3), (2, 3), (9, 3))])
    for _ in range(2):
        assert [d["y"]["a"] for d in c.find().sort("y.a", 1)][:2] == [2, 5]
        c.create_index("y.a")
    c.drop()
    c.insert_many([{"x": v} for v in (1, 5000000000, float("nan"), float("inf"), float("-inf"))])
    for _ in range(2):
        assert [repr(d["x"]) for d in c.find({}, {"_id": 0}).sort("x", 1)] == ["nan", "-inf", "1", "5000000000", "inf"]
        c.create_index("x")


# sort3.js, sort4.js: ascending, descending and compound orders with missing fields, with the indexes.
def test_sort3_and_sort4(db: Database) -> None:
    db.s3.insert_many([{"a": 1}, {"a": 5}, {"a": 3}])
    assert _values(db.s3.find().sort("a", 1), "a") == [1, 3, 5]
    assert _values(db.s3.find().sort("a", -1), "a") == [5, 3, 1]
    c = db.s4

    def nice(sort: list[tuple[str, int]]) -> str:
        return ",".join(d["name"] + d.get("prename", "") for d in c.find().sort(sort))

    c.insert_many([{"name": n, "prename": p} for n, p in (("A", "B"), ("A", "C"), ("B", "B"), ("B", "D"))])
    assert nice([("name", 1), ("prename", 1)]) == "AB,AC,BB,BD"
    assert nice([("prename", 1), ("name", 1)]) == "AB,BB,AC,BD"
    c.insert_one({"name": "A"})
    assert nice([("name", 1), ("prename", 1)]) == "A,AB,AC,BB,BD"
    c.insert_one({"name": "C"})
    assert nice([("name", 1), ("prename", 1)]) == "A,AB,AC,BB,BD,C"
    c.create_index([("name", 1), ("prename", 1)])
    assert nice([("name", 1), ("prename", 1)]) == "A,AB,AC,BB,BD,C"
    c.drop_indexes()
    c.create_index("name")
    assert nice([("name", 1), ("prename", 1)]) == "A,AB,AC,BB,BD,C"


# sort5.js: compound sorts on dotted paths and _id, with and without limit, unindexed and indexed.
def test_sort5(db: Database) -> None:
    t = db.c
    t.insert_many(
        [
            {"_id": i, "x": x, "y": {"a": a, "b": b}}
            for i, x, a, b in ((5, 1, 5, 4), (7, 2, 7, 3), (2, 3, 2, 3), (9, 4, 9, 3))
        ]
    )
    for sort, key in (
        ([("y.b", 1), ("y.a", -1)], [("y.b", 1), ("y.a", -1)]),
        ([("y.b", 1), ("_id", -1)], [("y.b", 1), ("_id", -1)]),
    ):
        assert _values(t.find().sort(sort), "x") == [4, 2, 3, 1]
        t.create_index(key)
        assert _values(t.find().sort(sort), "x") == [4, 2, 3, 1]
        assert _values(t.find().sort(sort).limit(500), "x") == [4, 2, 3, 1]
    proj = {"y.a": 1, "y.b": 1, "_id": 1}
    sort = [("y.a", 1), ("y.b", 1), ("_id", 1)]
    assert _values(t.find({}, proj).sort(sort), "_id") == [2, 5, 7, 9]
    assert _values(t.find({}, proj).sort(sort).limit(500), "_id") == [2, 5, 7, 9]


# sort6.js: null and missing sort first ascending, last descending, unindexed and indexed.
@pytest.mark.parametrize("first", [{"_id": 1, "c": None}, {"_id": 1}], ids=["null", "missing"])
def test_sort6(db: Database, first: dict[str, Any]) -> None:
    db.c.insert_many([first, {"_id": 2, "c": 1}, {"_id": 3, "c": 2}])
    for _ in range(2):
        assert _values(db.c.find().sort("c", -1), "_id") == [3, 2, 1]
        assert _values(db.c.find().sort("c", 1), "_id") == [1, 2, 3]
        db.c.create_index("c")


# sort8.js: an array sorts by its members, unindexed and hinted, with and without bounds.
def test_sort8(db: Database) -> None:
    c = db.c
    c.insert_many([{"a": [1, 10]}, {"a": 5}])
    forward, reverse = list(c.find().sort("a", 1)), list(c.find().sort("a", -1))
    c.create_index("a")
    assert list(c.find().sort("a", 1).hint([("a", 1)])) == forward
    assert list(c.find().sort("a", -1).hint([("a", 1)])) == reverse
    assert forward[0]["a"] == [1, 10] and reverse[0]["a"] == [1, 10]
    c.drop_indexes()
    forward, reverse = list(c.find({"a": {"$gte": 5}}).sort("a", 1)), list(c.find({"a": {"$lte": 5}}).sort("a", -1))
    c.create_index("a")
    assert list(c.find({"a": {"$gte": 5}}).sort("a", 1).hint([("a", 1)])) == forward
    assert list(c.find({"a": {"$lte": 5}}).sort("a", -1).hint([("a", 1)])) == reverse


# sort9.js: every itcount of unindexed array, missing and empty-document sorts.
SORT9 = [
    (
        [{"a": []}, {"a": [[]]}],
        [({"a": {"$ne": 4}}, "a", 2), ({"a.b": {"$ne": 4}}, "a.b", 2), ({"a": {"$ne": 4}}, "a.b", 2)],
    ),
    (
        [{}],
        [
            ({"a": {"$ne": 4}}, "a", 1), ({"a.b": {"$ne": 4}}, "a.b", 1), ({"a": {"$ne": 4}}, "a.b", 1),
            ({"a": {"$exists": 0}}, "a", 1), ({"a": {"$exists": 0}}, "a.b", 1),
        ],
    ),
    (
        [{"a": {}}],
        [
            ({"a": {"$ne": 4}}, "a", 1), ({"a.b": {"$ne": 4}}, "a.b", 1), ({"a": {"$ne": 4}}, "a.b", 1),
            ({"a.b": {"$exists": 0}}, "a", 1), ({"a.b": {"$exists": 0}}, "a.b", 1),
        ],
    ),
]  # fmt: skip


@pytest.mark.parametrize(("docs", "cases"), SORT9, ids=["arrays", "missing", "empty document"])
def test_sort9(db: Database, docs: list[dict[str, Any]], cases: list[tuple[Any, str, int]]) -> None:
    db.c.insert_many([dict(d) for d in docs])
    for query, field, count in cases:
        assert len(list(db.c.find(query).sort(field, 1))) == count, (query, field)


# sort10.js: signed dates sort in order, unindexed, with {x: 1} and with {x: -1}.
def test_sort10(db: Database) -> None:
    c = db.c
    c.insert_many([{"x": datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=ms)} for ms in (50000, -50)])
    for _ in range(2):
        assert c.find().sort("x", 1)[0]["x"] == datetime.datetime(1970, 1, 1) - datetime.timedelta(milliseconds=50)
        c.create_index("x")
        c.insert_one({"x": datetime.datetime(2026, 1, 1)})
    c.drop()
    millis = [-5000000000000, 5000000000000, 0, 5, -5]
    dates = [datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=ms) for ms in millis]
    c.insert_many([{"x": d} for d in dates])
    for key in (None, [("x", 1)], [("x", -1)]):
        if key is not None:
            c.drop_indexes()
            c.create_index(key)
        assert _values(c.find().sort("x", 1), "x") == sorted(dates)
        assert _values(c.find().sort("x", -1), "x") == sorted(dates, reverse=True)


# sort_numeric.js: ints and doubles in one order; a == 3 and a == 3.0 each find one.
def test_sort_numeric(db: Database) -> None:
    values = [3, 3.1, 2.9, 1, 1.9, 5, 4.9, 2.91]
    db.c.insert_many([{"a": v} for v in values])
    for _ in range(2):
        assert _values(db.c.find().sort("a", 1), "a") == sorted(values)
        assert db.c.count_documents({"a": 3}) == 1 and db.c.count_documents({"a": 3.0}) == 1
        db.c.create_index("a")


# sorta.js: MinKey, [], null, missing, 1, [2], MaxKey in order, unindexed and with {a: 1, _id: 1}.
def test_sorta(db: Database) -> None:
    docs = [
        {"_id": 0, "a": MinKey()}, {"_id": 1, "a": []}, {"_id": 2, "a": []}, {"_id": 3, "a": None}, {"_id": 4},
        {"_id": 5, "a": None}, {"_id": 6, "a": 1}, {"_id": 7, "a": [2]}, {"_id": 8, "a": MaxKey()},
    ]  # fmt: skip
    db.c.insert_many([dict(d) for d in docs])
    assert _values(db.c.find().sort([("a", 1), ("_id", 1)]), "_id") == list(range(9))
    db.c.create_index([("a", 1), ("_id", 1)])
    assert _values(db.c.find().sort([("a", 1), ("_id", 1)]), "_id") == list(range(9))


# sortc.js: sort with skip, with and without a second candidate plan, unindexed and with {a: 1}.
def test_sortc(db: Database) -> None:
    db.c.insert_many([{"a": 1}, {"a": 2}])
    for _ in range(2):
        for direction, first in ((1, [1, 2]), (-1, [2, 1])):
            for query in ({}, {"a": {"$gt": 0}, "b": None}):
                assert [db.c.find(query).sort("a", direction).skip(skip)[0]["a"] for skip in (0, 1)] == first
        db.c.create_index("a")


# sortd.js: sorted results with duplicates and two candidate plans, every check.
def test_sortd(db: Database) -> None:
    t = db.c

    def sorted_count(cursor: Any) -> int:
        values = [d["a"] for d in cursor]
        keys = [min(v) if isinstance(v, list) else v for v in values]
        assert keys == sorted(keys)
        return len(values)

    t.insert_many([{"a": [1, 2, 3, 4, 5]}, {"a": 10}])
    t.create_index("a")
    assert len(list(t.find({"a": {"$gt": 0}}).sort("a", 1))) == 2
    assert len(list(t.find({"a": {"$gt": 0}, "b": None}).sort("a", 1))) == 2
    for top, tail, repeat in ((10, 100, 30), (200, 2000, 30)):
        t.drop()
        t.insert_many([{"a": 1}, {"a": top}, *({"a": i} for i in range(2, top)), *({"a": tail} for _ in range(repeat))])
        t.create_index("a")
        assert sorted_count(t.find({"a": {"$gte": 0, "$lte": top}}).sort("a", 1)) == top
        assert sorted_count(t.find({"a": {"$gte": 0, "$lte": top}, "b": None}).sort("a", 1)) == top
    t.drop()
    t.insert_many([{"a": i} for i in reversed(range(400))])
    t.create_index("a")
    assert sorted_count(t.find({"a": {"$gte": 0, "$lte": 400}, "b": None}).batch_size(50).sort("a", 1)) == 400


# sorti.js: a projection applies after an in-memory sort, also hinted.
def test_sorti(db: Database) -> None:
    db.c.insert_many([{"a": 1, "b": 0}, {"a": 3, "b": 1}, {"a": 2, "b": 2}, {"a": 4, "b": 3}])
    assert _values(db.c.find().sort("a", 1), "b") == [0, 2, 1, 3]
    assert _values(db.c.find({}, {"_id": 0, "b": 1}).sort("a", 1), "b") == [0, 2, 1, 3]
    db.c.create_index("b")
    assert _values(db.c.find({}, {"_id": 0, "b": 1}).sort("a", 1), "b") == [0, 2, 1, 3]
    assert _values(db.c.find({}, {"_id": 0, "b": 1}).sort("a", 1).hint([("b", 1)]), "b") == [0, 2, 1, 3]


# sortl.js: an _id equality with a sort, and its {$meta: "sortKey"} projection (the find part).
def test_sortl(db: Database) -> None:
    db.c.insert_one({"_id": 1, "a": 2})
    assert list(db.c.find({"_id": 1}).sort("a", 1)) == [{"_id": 1, "a": 2}]
    assert list(db.c.find({"_id": 1}, {"b": {"$meta": "sortKey"}}).sort("a", 1)) == [{"_id": 1, "a": 2, "b": [2]}]


# natural.js: $natural sort and hint, and the refused mixtures.
def test_natural(db: Database) -> None:
    from pymongo.errors import OperationFailure

    c = db.c
    c.create_index("a")
    c.insert_many([{"_id": 1, "a": 3}, {"_id": 2, "a": 2}, {"_id": 3, "a": 1}])
    assert list(c.find({"a": 2}).sort("$natural", 1)) == [{"_id": 2, "a": 2}]
    assert list(c.find({"a": 2}).hint([("$natural", -1)])) == [{"_id": 2, "a": 2}]
    assert _values(c.find().hint([("$natural", 1)]).sort("a", 1), "_id") == [3, 2, 1]
    refused = [
        c.find().hint([("a", 1)]).sort("$natural", 1),
        c.find().hint([("a", 1), ("$natural", 1)]),
        c.find().hint([("$natural", 1), ("b", 1)]),
        c.find().hint([("a", 1), ("$natural", 1), ("b", 1)]),
        c.find().sort([("a", 1), ("$natural", 1)]),
        c.find().sort([("$natural", 1), ("b", 1)]),
        c.find().sort([("a", 1), ("$natural", 1), ("b", 1)]),
    ]
    for cursor in refused:
        with pytest.raises(OperationFailure):
            list(cursor)


# --- covered queries (jstests/core/index/covered/) ------------------------------------------------


def _index_only(cursor: Any) -> bool:
    """analyze_plan.js isIndexOnly: no FETCH and no COLLSCAN in the winning plan."""
    stages = set(plan_stages(cursor.explain()))
    return not stages & {"FETCH", "COLLSCAN"}


# coveredIndex1.js: every assertIfQueryIsCovered (classic multi-planning, as 7.0/8.0 rank plans).
def test_covered_index1(db: Database) -> None:
    c = db.c
    rows = [("john", "doe"), ("jack", "doe"), ("john", "smith"), ("jack", "black"), ("bob", "murray")]
    c.insert_many([{"order": i, "fn": fn, "ln": ln} for i, (fn, ln) in enumerate(rows)])
    c.insert_many(
        [
            {"order": 5, "fn": "aaa", "ln": "bbb", "obj": {"a": 1, "b": "blah"}},
            {"order": 6, "fn": "ccc", "ln": "ddd", "arr": [1, 2, 3, 4, 5, 6]},
        ]
    )

    def check(query: dict[str, Any], projection: Any, covered: bool, hint: Any = None) -> None:
        cursor = c.find(query, projection)
        assert _index_only(cursor.hint(hint) if hint else cursor) is covered, (query, projection)

    c.create_index("ln")
    check({}, None, False)
    check({"ln": "doe"}, None, False)
    check({"ln": "doe"}, {"ln": 1}, False)
    check({"ln": "doe"}, {"ln": 1, "_id": 0}, True, [("ln", 1)])
    c.drop_index("ln_1")
    c.create_index([("ln", 1), ("fn", 1)])
    check({"ln": "doe"}, {"ln": 1, "_id": 0}, True)
    check({"ln": "doe"}, {"ln": 1, "fn": 1, "_id": 0}, True)
    check({"ln": "doe", "fn": "john"}, {"ln": 1, "fn": 1, "_id": 0}, True)
    check({"fn": "john", "ln": "doe"}, {"fn": 1, "ln": 1, "_id": 0}, True)
    check({"fn": "john"}, {"fn": 1, "_id": 0}, False)
    c.drop_index("ln_1_fn_1")
    c.create_index([("_id", 1), ("ln", 1)])
    check({"_id": 123, "ln": "doe"}, {"_id": 1}, True)
    check({"_id": 123, "ln": "doe"}, {"ln": 1}, True)
    check({"ln": "doe", "_id": 123}, {"ln": 1, "_id": 1}, True)
    check({"ln": "doe"}, {"ln": 1}, False)
    c.drop_index("_id_1_ln_1")
    c.create_index("obj")
    check({"obj.a": 1}, {"obj": 1}, False)
    check({"obj": {"a": 1, "b": "blah"}}, None, False)
    check({"obj": {"a": 1, "b": "blah"}}, {"obj": 1, "_id": 0}, True)
    c.drop_index("obj_1")
    c.create_index([("obj.a", 1), ("obj.b", 1)])
    check({"obj.a": 1}, {"obj": 1}, False)
    c.drop_index("obj.a_1_obj.b_1")
    c.create_index("arr.0")
    check({"arr.0": 1}, None, False)
    check({"arr.0": {"$mod": [7, 6]}}, None, False)


# covered_index_simple_1.js: every hinted covered query (index only, no document examined).
def test_covered_index_simple_1(db: Database) -> None:
    c = db.c
    c.insert_many([{"foo": i % 10} for i in range(20)] + [{"bar": i} for i in range(5)])
    c.insert_many([{"foo": "string"}, {"foo": {"bar": 1}}, {"foo": None}])
    c.create_index("foo")
    for query in (
        {"foo": 1},
        {"foo": "string"},
        {"foo": {"bar": 1}},
        {},
        {"foo": {"$gt": 2, "$lt": 6}},
        {"foo": {"$in": [5, 8]}},
        {"foo": "2"},
    ):
        cursor = c.find(query, {"foo": 1, "_id": 0}).hint([("foo", 1)])
        assert _index_only(cursor.clone()), query
        assert cursor.explain()["executionStats"]["totalDocsExamined"] == 0, query


# covered_index_negative_1.js: every query that is not covered examines documents.
def test_covered_index_negative_1(db: Database) -> None:
    c = db.c
    c.insert_many(
        [{"a": i, "b": f"strvar_{i % 13}", "c": i % 10, "d": i * 10, "e": [i, i % 10], "f": i} for i in range(100)]
    )
    c.create_index([("a", 1), ("b", -1), ("c", 1)])
    c.create_index("e")
    c.create_index("d")
    c.create_index([("f", "hashed")])
    abc = [("a", 1), ("b", -1), ("c", 1)]
    cases = [
        (c.find({"a": 10, "b": "strvar_10", "c": 0}).hint(abc)),
        (c.find({"a": 10, "b": "strvar_10", "c": 0}, {"a": 1, "b": 1, "c": 1}).hint(abc)),
        (c.find({"d": 100}, {"d": 1, "c": 1, "_id": 0}).hint([("d", 1)])),
        (c.find({"e": 99}, {"e": 1, "_id": 0}).hint([("e", 1)])),
        (c.find({"d": {"$lt": 1000}}, {"a": 1, "b": 1, "c": 1, "_id": 0}).hint(abc)),
        (c.find({"f": 10}, {"f": 1, "_id": 0}).hint([("f", "hashed")])),
    ]
    for cursor in cases:
        assert not _index_only(cursor.clone())
        assert cursor.explain()["executionStats"]["totalDocsExamined"] != 0


# --- $mod (jstests/core/query/mod/) ---------------------------------------------------------------


def _mod_ids(db: Database, divisor: Any, remainder: Any, field: str = "a") -> list[Any]:
    return [d["_id"] for d in db.c.find({field: {"$mod": [divisor, remainder]}}).sort("_id", 1)]


# mod.js: every assertDocumentsFromMod, itcount and refusal.
def test_mod(db: Database) -> None:
    from pymongo.errors import OperationFailure

    big = [4000000000, 15000000000, -4000000000, -15000000000]
    values = [*big, *(v + (0.12345 if v > 0 else -0.12345) for v in big)]
    values += [Decimal128(f"{v}.12345") for v in big]
    db.c.insert_many([{"_id": i + 1, "a": v} for i, v in enumerate(values)])
    assert _mod_ids(db, 4000000000, 0) == [1, 3, 5, 7, 9, 11]
    assert _mod_ids(db, -4000000000, 0) == [1, 3, 5, 7, 9, 11]
    assert _mod_ids(db, 10000000000, 5000000000) == [2, 6, 10]
    assert _mod_ids(db, 10000000000, -5000000000) == [4, 8, 12]
    assert _mod_ids(db, -10000000000, 5000000000) == [2, 6, 10]
    assert _mod_ids(db, -10000000000, -5000000000) == [4, 8, 12]
    db.c.drop()
    db.c.insert_many(
        [{"_id": i + 1, "a": v} for i, v in enumerate([4.2, 4.5, 4.7, *(Decimal128(x) for x in ("4.2", "4.5", "4.7"))])]
    )
    assert _mod_ids(db, 4, 0) == [1, 2, 3, 4, 5, 6]
    db.c.drop()
    db.c.insert_many(
        [
            {"_id": 1, "str": "abc123", "a": 0}, {"_id": 2, "str": "xyz123", "a": 5},
            {"_id": 3, "str": "ijk123", "a": 12}, {"_id": 4, "s": "array", "a": [0, 7]},
            {"_id": 5, "s": "array", "a": [1, 7]}, {"_id": 6, "s": "array", "a": [-5]},
        ]
    )  # fmt: skip
    counts = [((-10, -5), 1), ((4, -1), 1), ((5, 0), 4), ((12, 0), 3), ((12, 1), 1)]
    assert [len(_mod_ids(db, d, r)) for (d, r), _ in counts] == [n for _, n in counts]
    db.c.insert_many(
        [
            {"_id": 7, "arr": [1, [2, 3], [[4]]]}, {"_id": 8, "arr": [{"b": [1, 2, 3]}, {"b": [5]}]},
            {"_id": 9, "arr": [{"b": [-1]}, {"b": [5]}]}, {"_id": 10, "arr": "string"},
        ]
    )  # fmt: skip
    assert len(_mod_ids(db, 1, 0, "arr")) == 1 and len(_mod_ids(db, 4, 0, "arr")) == 0
    assert len(_mod_ids(db, 3, 0, "arr.b")) == 1 and len(_mod_ids(db, 5, 0, "arr.b")) == 2
    assert len(_mod_ids(db, 5, 0, "arr.b.c")) == 0
    assert len(_mod_ids(db, 1, Int64(0))) == 6
    assert len(_mod_ids(db, Int64(5), Decimal128("2.1"))) == 3
    assert len(_mod_ids(db, Decimal128("5.001"), Decimal128("2.1"))) == 3
    assert len(_mod_ids(db, 7, 1)) == 1
    assert _mod_ids(db, 10, 1, "str") == _mod_ids(db, 10, 1, "s") == _mod_ids(db, 10, 1, "noField") == []
    refused = [
        [0, 1], [0, 0], [Decimal128("0.001"), Decimal128("1.001")], [1, 0, 0], [Decimal128("0.1")],
        [Decimal128("0"), Decimal128("0")], [10, 1, 1], [10], ["a", 0], ["a", "b"],
    ]  # fmt: skip
    for operands in refused:
        with pytest.raises(OperationFailure) as error:
            list(db.c.find({"a": {"$mod": operands}}))
        assert error.value.code == 2, operands
    db.c.insert_many([{"_id": 11, "c": float("nan")}, {"_id": 12, "c": float("inf")}])
    assert _mod_ids(db, 11, 10.0, "c") == [] and _mod_ids(db, -12, 0, "c") == []


# mod_overflow.js: -2^63 and -2^31 modulo each spelling of -1 (the find part).
def test_mod_overflow(db: Database) -> None:
    db.c.insert_many([{"_id": 0, "val": Int64(-(2**63))}, {"_id": 1, "val": -(2**31)}])
    for divisor in (-1.0, -1, Int64(-1), Decimal128("-1")):
        assert _mod_ids(db, divisor, 0, "val") == [0, 1]


# mod_special_values.js: NaN, infinities and 1e19 as operands are refused; as dividends they never
# match; dividends are truncated.
def test_mod_special_values(db: Database) -> None:
    from pymongo.errors import OperationFailure

    for special in ("NaN", "Infinity", "1e19"):
        for value in (Decimal128(special), float(special)):
            for operands in ([value, 1], [1, value]):
                with pytest.raises(OperationFailure) as error:
                    list(db.c.find({"attribute": {"$mod": operands}}))
                assert error.value.code == 2
    db.c.insert_many([{"_id": 100, "attribute": -1e19}, {"_id": 101, "attribute": Decimal128("1e19")}])
    assert _mod_ids(db, 1, 0, "attribute") == []
    db.c.delete_many({})
    values = [14.5, 14.50001, 15.01, Decimal128("14.5"), Decimal128("14.50001"), Decimal128("15.01"), 24, Int64(34)]
    db.c.insert_many([{"_id": i + 1, "attribute": v} for i, v in enumerate(values)])
    assert _mod_ids(db, 10, 4, "attribute") == [1, 2, 4, 5, 7, 8]
    db.c.delete_many({})
    specials = [Decimal128(x) for x in ("-NaN", "NaN", "-Infinity", "Infinity")] + [
        float(x) for x in ("nan", "-nan", "inf", "-inf")
    ]
    db.c.insert_many([{"attribute": v} for v in specials])
    assert _mod_ids(db, 1, 0, "attribute") == []


# --- jstests/core/index/sparse_index_internal_expr.js ---------------------------------------------
# Ported: the unhinted $expr results (complete with no index, with {missing: 1}, and with the sparse
# index); the hinted sparse index, where MongoDB returns only what the index holds (nothing), is
# refused by name on the offline default (the model does not cover $expr, and the engine would
# return the document): a refusal, never a wrong answer. The explain assertions need $expr: not ported.
def test_sparse_index_internal_expr(db: Database, engine: str | None) -> None:
    from pymongo.errors import OperationFailure

    db.c.insert_one({"a": 1})
    expr = {"$expr": {"$lt": ["$missing", "r"]}}
    assert list(db.c.find(expr, {"_id": 0})) == [{"a": 1}]
    db.c.create_index("missing")
    assert list(db.c.find(expr, {"_id": 0})) == [{"a": 1}]
    db.c.drop_index("missing_1")
    db.c.create_index("missing", sparse=True, name="missing_1_sparse")
    assert list(db.c.find(expr, {"_id": 0})) == [{"a": 1}]
    if engine is not None:  # a real server: MongoDB's own answer
        assert list(db.c.find(expr, {"_id": 0}).hint("missing_1_sparse")) == []
        return
    with pytest.raises(OperationFailure, match="hinted sparse index 'missing_1_sparse'") as refused:
        list(db.c.find(expr, {"_id": 0}).hint("missing_1_sparse"))
    assert "real MongoDB server" in str(refused.value) or "MONGODB_URI" in str(refused.value)


# --- jstests/core/index/index*.js -----------------------------------------------------------------


# indexa.js, indexb.js: a unique index refuses an update or save that would duplicate a key.
def test_indexa_and_indexb(db: Database) -> None:
    from pymongo.errors import DuplicateKeyError

    db.a.create_index("x", unique=True)
    db.a.insert_many([{"x": "A"}, {"x": "B"}], ordered=False)
    with pytest.raises(DuplicateKeyError):
        db.a.insert_one({"x": "A"})
    assert db.a.count_documents({}) == 2
    with pytest.raises(DuplicateKeyError):
        db.a.replace_one({"x": "B"}, {"x": "A"})
    values = [d["x"] for d in db.a.find()]
    assert len(values) == 2 and len(set(values)) == 2
    db.b.create_index("a", unique=True)
    db.b.insert_one({"a": 1})
    x_id = db.b.insert_one({"a": 2}).inserted_id
    with pytest.raises(DuplicateKeyError):
        db.b.replace_one({"_id": x_id}, {"a": 1, "filler": "a" * 59})
    assert db.b.count_documents({}) == 2
    assert db.b.count_documents({"a": 1}) == 1 and db.b.count_documents({"a": 2}) == 1


# indexc.js: a date range with and without a sort, before and after a multikey compound index.
def test_indexc(db: Database) -> None:
    start = datetime.datetime(2026, 1, 1)
    db.c.insert_many(
        [{"a": i, "ts": start + datetime.timedelta(milliseconds=i), "cats": [i, i + 1, i + 2]} for i in range(1, 100)]
    )
    mid = start + datetime.timedelta(milliseconds=51)
    for _ in range(2):
        assert len(list(db.c.find({"ts": {"$lt": mid}}))) == 50
        assert len(list(db.c.find({"ts": {"$lt": mid}}).sort("ts", 1))) == 50
        db.c.create_index([("ts", 1), ("cats", 1)])
        db.c.create_index("cats")


# indexl.js: $all beside $in on a multikey field, unindexed and with {a: 1}.
def test_indexl(db: Database) -> None:
    first = [
        ({"a": {"$all": [1], "$in": [2]}}, 1), ({"a": {"$all": [2], "$in": [1]}}, 1),
        ({"a": {"$in": [2], "$all": [1]}}, 1), ({"a": {"$in": [1], "$all": [2]}}, 1),
    ]  # fmt: skip
    later = [
        ({"a": {"$in": [2], "$all": [1]}}, 2), ({"a": {"$in": [3], "$all": [1, 2]}}, 1),
        ({"a": {"$in": [1], "$all": [3]}}, 1), ({"a": {"$in": [2, 3], "$all": [1]}}, 2),
        ({"a": {"$in": [4], "$all": [2, 3]}}, 1), ({"a": {"$in": [1, 3], "$all": [2]}}, 3),
    ]  # fmt: skip
    _counts(db, [{"a": [1, 2]}], first, [[("a", 1)]])
    _counts(db, [{"a": [1, 2]}, {"a": [3, 4]}, {"a": [2, 3]}, {"a": [1, 2, 3, 4]}], later, [[("a", 1)]])


# indexm.js: an $or overlapping the rest of the query, with no index, {a: 1}, {"a.x": 1}, none.
def test_indexm(db: Database) -> None:
    query = {"a": {"x": 1}, "$or": [{"a": {"x": 2}}, {"a": {"x": 3}}]}
    _counts(db, [{"a": [{"x": 1}, {"x": 2}, {"x": 3}, {"x": 4}]}], [(query, 1)], [[("a", 1)], [("a.x", 1)]], alone=True)
    db.jst.drop_indexes()
    assert db.jst.count_documents(query) == 1


# indexn.js: impossible ranges match nothing, also inside an $or.
def test_indexn(db: Database) -> None:
    db.c.insert_one({"a": 1, "b": [1, 2]})
    db.c.create_index("a")
    db.c.create_index("b")
    impossible = {"$gt": 5, "$lt": 0}
    assert db.c.count_documents({"a": impossible}) == 0
    assert db.c.count_documents({"a": impossible, "b": 2}) == 0
    assert db.c.count_documents({"a": impossible, "b": {"$gt": 0, "$lt": 5}}) == 0
    assert db.c.count_documents({"$or": [{"a": impossible}, {"a": 1}]}) == 1
    assert db.c.count_documents({"$or": [{"a": 1}, {"a": impossible}]}) == 1
    db.c.insert_one({"a": 2})
    assert db.c.count_documents({"$or": [{"a": 1}, {"a": impossible}, {"a": 2}]}) == 2


# indexr.js: parallel nested fields under one array, without, with single-key and multikey indexes.
def test_indexr(db: Database) -> None:
    t = db.c
    doc = {"a": [{"b": 3, "c": 6}, {"b": 1, "c": 1}]}
    ranges = {"a.b": {"$gt": 2}, "a.c": {"$lt": 4}}
    whole = {"a": {"b": 3, "c": 6}, "a.c": {"$lt": 4}}
    t.insert_one(dict(doc))
    assert t.count_documents(ranges) == 1 and t.count_documents(whole) == 1
    t.delete_many({})
    t.create_index([("a.b", 1), ("a.c", 1)])
    t.create_index([("a", 1), ("a.c", 1)])
    assert t.count_documents(ranges) == 0 and t.count_documents(whole) == 0
    t.insert_one({"a": {"b": 3, "c": 3}})
    assert t.count_documents(ranges) == 1
    assert t.count_documents({"a": {"b": 3, "c": 3}, "a.c": {"$lt": 4}}) == 1
    t.delete_many({})
    t.insert_one(dict(doc))
    assert t.count_documents(ranges) == 1 and t.count_documents(whole) == 1
    assert len(list(t.find(ranges).sort("a.b", -1))) == 1
    assert len(list(t.find(whole).sort("a", -1))) == 1
    assert len(list(t.find({"a.c": {"$lt": 4}}).hint([("a.b", 1), ("a.c", 1)]))) == 1
    assert len(list(t.find({"a.c": {"$lt": 4}}).hint([("a", 1), ("a.c", 1)]))) == 1


# indexs.js: a parent and a nested field in one index, with an array holding a subdocument.
def test_indexs(db: Database) -> None:
    for key, doc in (
        ([("a", 1)], {"a": [{"b": 3}]}),
        ([("a", 1), ("a.b", 1)], {"a": {"b": 3}}),
        ([("a", 1), ("a.b", 1)], {"a": [{"b": 3}]}),
    ):
        db.c.drop()
        db.c.create_index(key)
        db.c.insert_one(dict(doc))
        assert db.c.count_documents({"a": {"b": 3}}) == 1, (key, doc)


# --- more of jstests/core/query/ ------------------------------------------------------------------


# always_true_false.js: every itcount and refusal.
def test_always_true_false(db: Database) -> None:
    from pymongo.errors import OperationFailure

    c = db.c
    c.insert_many([{"a": []}, {"a": False}, {"a": None}, {}, {"a": False, "b": 2}, {"a": False, "b": 1}])
    f, t = {"$alwaysFalse": 1}, {"$alwaysTrue": 1}
    cases = [
        (f, 0), ({**f, "a": False}, 0), ({**f, "b": 1}, 0), ({"$or": [{"b": 1}, f]}, 1), ({"$or": [f]}, 0),
        ({"$or": [f, f]}, 0), ({"$or": [f, {"a": {"$all": []}}, f]}, 0), ({"$and": [{"b": 1}, f]}, 0),
        ({"$and": [{"a": False}, f, f]}, 0), (t, 6), ({**t, "a": False}, 3), ({**t, "b": 1}, 1),
        ({"$and": [{"a": False}, t, t]}, 3), ({"$and": [{"a": False}, t, f]}, 0), ({"$or": [{"b": 1}, t]}, 6),
        ({"$or": [{"b": 1}, f, t]}, 6),
    ]  # fmt: skip
    assert [len(list(c.find(q))) for q, _ in cases] == [n for _, n in cases]
    c.drop()
    c.insert_many([{}, {}, {}])
    with pytest.raises(OperationFailure) as empty_or:
        list(c.find({"$or": []}))
    assert empty_or.value.code == 2
    for q in ({"$or": [f]}, {"$or": [{"a": {"$all": []}}]}, {"$or": [f, f]}, {"$or": [f, {"a": {"$all": []}}, f]}):
        assert list(c.find(q)) == [], q
    for q, code in (({"$alwaysTrue": 0}, 9), ({"$alwaysFalse": 0}, 9), ({"a": {"$alwaysFalse": 1}}, 2)):
        with pytest.raises(OperationFailure) as refused:
            list(c.find(q))
        assert refused.value.code == code, q


# array/array1.js: equality to a whole array also finds it nested in an outer array.
def test_array1(db: Database) -> None:
    db.c.insert_one({"a": [[1, 2]]})
    assert db.c.count_documents({"a": [1, 2]}) == 1
    db.c.insert_one({"a": [1, 2]})
    assert db.c.count_documents({"a": [1, 2]}) == 2
    db.c.create_index("a")
    assert db.c.count_documents({"a": [1, 2]}) == 2


# array/array4.js: a positional path (a.0, a.12) with a regex, and a field named "0".
def test_array4(db: Database) -> None:
    db.a.insert_many([{"_id": 0, "a": ["1", "2", "3"]}, {"_id": 1, "a": ["2", "1"]}])
    assert [d["_id"] for d in db.a.find({"a.0": re.compile("1")})] == [0]
    db.b.insert_many([{"_id": 2, "a": {"0": "1"}}, {"_id": 3, "a": ["2", "1"]}])
    assert [d["_id"] for d in db.b.find({"a.0": re.compile("1")})] == [2]
    long = ["0", "1", "2", "3", "4", "5", "6", "1", "1", "1", "2", "3", "2", "1"]
    db.d.insert_many([{"_id": 4, "a": long}, {"_id": 5, "a": ["2", "1"]}])
    assert [d["_id"] for d in db.d.find({"a.12": re.compile("2")})] == [4]


# bindata_eq.js: every BinData equality count, across subtypes.
def test_bindata_eq(db: Database) -> None:
    def blob(subtype: int, text: str) -> Binary:
        return Binary(base64.b64decode(text), subtype)

    zeros = "AAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    fox = "KwAAAFRoZSBxdWljayBicm93biBmb3gganVtcHMgb3ZlciB0aGUgbGF6eSBkb2c="
    uuid = "OEJTfmD8twzaj/LPKLIVkA=="
    first = [
        (0, zeros), (0, "AQAAAAEBAAVlbl9VSwAAAAAAAAhv"), (0, "AQAAAAEBAAVlbl9VSwAAAAAAAAhz"),
        (0, "////////////////////////////"), (0, "ZG9n"), (0, "JA4A8gAxqTwciCuF5GGzAA=="),
        (1, "JA4A8gAxqTwciCuF5GGzAA=="), (0, "VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZw=="), (2, fox),
    ]  # fmt: skip
    db.c.insert_many([{"a": blob(s, t)} for s, t in first])

    def count(subtype: int, text: str) -> int:
        return len(list(db.c.find({"a": {"$eq": blob(subtype, text)}})))

    assert [count(s, t) for s, t in first] == [1] * len(first)
    second = [(1, zeros), (2, fox), (3, uuid), (4, uuid), (5, zeros), (6, zeros)]
    db.c.insert_many([{"a": blob(s, t)} for s, t in second])
    assert [count(s, t) for s, t in second] == [1, 2, 1, 1, 1, 1]
    assert (count(8, zeros), count(9, zeros), count(0, "AAAAAAAAAAAAAAAAAAAAAAAAAAAB"), count(0, "")) == (0, 0, 0, 0)
    db.c.insert_many([{"a": blob(s, zeros)} for s in (0, 0, 1, 1)])
    assert (count(0, zeros), count(1, zeros)) == (3, 3)


# basic2.js, basic4.js, basic7.js, basica.js: finding by _id, 1 == 1.0, cursor access, saves.
def test_basic2_basic4_basic7_basica(db: Database) -> None:
    oid = db.b2.insert_one({"n": 2}).inserted_id
    assert db.b2.count_documents({}) == 1
    assert db.b2.find_one({"_id": oid})["n"] == 2 and db.b2.find_one({"_id": oid}, {"n": 1})["n"] == 2
    db.b2.delete_one({"_id": oid})
    assert db.b2.count_documents({}) == 0
    db.b4.insert_one({"a": 1, "b": 1.0})
    assert all(db.b4.find_one(q) for q in ({}, {"a": 1}, {"a": 1.0}, {"b": 1}, {"b": 1.0}))
    assert db.b4.find_one({"b": 2.0}) is None
    db.b7.insert_one({"a": 1})
    db.b7.create_index("a")
    assert db.b7.find()[0]["a"] == 1 and list(db.b7.find())[0]["a"] == 1
    db.ba.insert_one({"a": 1, "b": [{"x": 2, "y": 2}, {"x": 3, "y": 3}]})
    x = db.ba.find_one()
    x["b"][0].update({"x": 4, "z": 4, "m": 9, "asd": 11})
    x.update({"a": 2, "z": 11})
    db.ba.replace_one({"_id": x["_id"]}, x)
    assert db.ba.find_one() == x


# add_skip_stage_before_fetch.js: a SKIP below the FETCH examines only the documents returned.
def test_add_skip_stage_before_fetch(db: Database) -> None:
    rng = random.Random(13946)
    key = [("a", 1), ("b", 1), ("c", 1)]
    db.c.create_index(key)
    db.c.insert_many(
        [{"a": i % 2, "b": i % 4, "c": rng.randrange(1000), "d": rng.randrange(1000)} for i in range(10000)]
    )

    def stats(cursor: Any) -> tuple[int, int]:
        explain = cursor.explain()["executionStats"]
        return explain["totalKeysExamined"], explain["totalDocsExamined"]

    keys, docs = stats(db.c.find({"a": 0, "b": 2}).hint(key).skip(2400))
    assert keys >= 2500 and docs == 100
    keys, docs = stats(db.c.find({"a": 0, "b": 2}).hint(key).sort("c", 1).skip(2400))
    assert keys >= 2500 and docs == 100
    covered = db.c.find({"a": 0, "b": 2}, {"_id": 0, "a": 1}).hint(key).sort("c", 1).skip(2400)
    keys, docs = stats(covered.clone())
    assert keys >= 2500 and docs == 0 and _index_only(covered)
    keys, docs = stats(db.c.find({"a": 0, "b": 2}).hint(key).sort("d", 1).skip(2400))
    assert keys >= 2500 and docs == 2500
    assert len(list(db.c.find({"a": 0, "b": 2}).hint(key).sort("c", 1).skip(2400))) == 100


# --- distinct (jstests/core/query/distinct/) ------------------------------------------------------


def _distinct(coll: Any, key: str, query: Any = None) -> list[Any]:
    return sorted(coll.distinct(key, query), key=repr)


# distinct1.js: every distinct, with and without a query, and the refused non-document query.
def test_distinct1(db: Database) -> None:
    from pymongo.errors import OperationFailure

    c = db.c
    assert c.distinct("a") == []
    c.insert_many([{"a": v} for v in (1, 2, 2, 2, 3)])
    assert _distinct(c, "a") == [1, 2, 3] and _distinct(c, "a", {"a": {"$lt": 3}}) == [1, 2]
    c.drop()
    c.insert_many([{"a": {"b": v}, "c": 12} for v in "abcc"])
    assert _distinct(c, "a.b") == ["a", "b", "c"]
    c.drop()
    c.insert_many([{"_id": 1, "a": 1}, {"_id": 2, "a": 2}])
    assert _distinct(c, "_id") == [1, 2] and c.distinct("a", {"_id": 1}) == [1]
    c.drop()
    c.insert_many([{"a": a, "b": b} for a, b in ((1, 2), (2, 2), (2, 1), (2, 2), (3, 2), (4, 1), (4, 1))])
    assert sorted(db.command("distinct", "c", key="a")["values"]) == [1, 2, 3, 4]
    assert sorted(db.command("distinct", "c", key="a", query=None)["values"]) == [1, 2, 3, 4]
    assert sorted(db.command("distinct", "c", key="a", query={"b": 2})["values"]) == [1, 2, 3]
    with pytest.raises(OperationFailure):
        db.command("distinct", "c", key="a", query=1)


# distinct2.js: a null parent and a missing field give no values.
def test_distinct2(db: Database) -> None:
    db.c.insert_one({"a": None})
    assert db.c.distinct("a.b") == []
    db.c.drop()
    db.c.insert_one({"a": 1})
    assert db.c.distinct("a") == [1]
    db.c.insert_one({})
    assert db.c.distinct("a") == [1]


# distinct_array1.js: arrays are unwound, positional paths pick one element; with and without
# indexes (the index-dependent null of SERVER-14832 is accepted where the jstest accepts it).
def test_distinct_array1(db: Database) -> None:
    c = db.c
    c.insert_many([{"a": [1, 2, 3]}, {"a": [2, 3, 4]}, {"a": [3, 4, 5]}, {"a": 9}])
    for _ in range(2):
        assert _distinct(c, "a") == [1, 2, 3, 4, 5, 9]
        assert _distinct(c, "a.0") == [1, 2, 3] and _distinct(c, "a.1") == [2, 3, 4]
        c.create_index("a")
    c.insert_many(
        [
            {"a": [{"b": "a"}, {"b": "d"}], "c": 12}, {"a": [{"b": "b"}, {"b": "d"}], "c": 12},
            {"a": [{"b": "c"}, {"b": "e"}], "c": 12}, {"a": [{"b": "c"}, {"b": "f"}], "c": 12},
            {"a": [], "c": 12}, {"a": {"b": "z"}, "c": 12},
        ]
    )  # fmt: skip
    c.drop_indexes()
    assert _distinct(c, "a.b") == list("abcdefz")
    assert _distinct(c, "a.0.b") == list("abc") and _distinct(c, "a.1.b") == list("def")
    c.create_index("a.b")
    assert [v for v in _distinct(c, "a.b") if v is not None] == list("abcdefz")
    c.insert_many([{"_id": {"a": v}} for v in ([1, 2, 3], [2, 3, 4], [3, 4, 5], 9)])
    assert [v for v in _distinct(c, "_id.a") if isinstance(v, int)] == [1, 2, 3, 4, 5, 9]
    assert _distinct(c, "_id.a.0") == [1, 2, 3] and _distinct(c, "_id.a.1") == [2, 3, 4]


# distinct_index2.js: every distinct over {a: 1, b: 1}, {c: 1} and a hashed {a: "hashed"}.
def test_distinct_index2(db: Database) -> None:
    docs = [{"_id": n, "a": n // 100, "b": n // 10 % 10, "c": n % 10} for n in range(1000)]
    for name, keys in (("d1", [[("a", 1), ("b", 1)], [("c", 1)]]), ("d2", [[("a", "hashed")]])):
        coll = db[name]
        for key in keys:
            coll.create_index(key)
        coll.insert_many([dict(d) for d in docs])
        for field in ("a", "b", "c") if name == "d1" else ("a",):
            assert _distinct(coll, field) == list(range(10)), (name, field)
            if field != "a":
                assert _distinct(coll, field, {"a": 1}) == list(range(10)), (name, field)


# distinct_multikey.js: every distinct result (the explain assertions are about DISTINCT_SCAN,
# which the model does not plan for distinct: not ported).
def test_distinct_multikey(db: Database) -> None:
    c = db.c
    c.create_index("a")
    c.insert_many([{"a": [1, 2, 3]}, {"a": [2, 3, 4]}, {"a": [5, 6, 7]}])
    assert _distinct(c, "a") == [1, 2, 3, 4, 5, 6, 7] and _distinct(c, "a", {"a": 3}) == [1, 2, 3, 4]
    c.drop()
    c.create_index("a.b")
    c.insert_many([{"a": {"b": [1, 2, 3]}}, {"a": {"b": [2, 3, 4]}}])
    assert _distinct(c, "a.b", {"a.b": 3}) == [1, 2, 3, 4]
    c.drop()
    c.create_index("a")
    c.insert_many([{"a": 1}, {"a": 2}, {"a": 3}])
    assert _distinct(c, "a", {"a": {"$gte": 2}}) == [2, 3]
    c.drop()
    c.create_index([("a", 1), ("b", 1)])
    c.insert_many([{"a": 1, "b": [2, 3]}, {"a": 8, "b": [3, 4]}, {"a": 7, "b": [4, 5]}])
    assert _distinct(c, "a", {"a": {"$gte": 2}}) == [7, 8] and _distinct(c, "b", {"a": {"$gte": 2}}) == [3, 4, 5]
    c.drop()
    c.create_index([("a", 1), ("b", 1)])
    c.insert_many([{"a": [2, 3], "b": 1}, {"a": [3, 4], "b": 8}, {"a": [3, 5], "b": 7}])
    assert _distinct(c, "b", {"a": 3}) == [1, 7, 8]
    c.drop()
    c.create_index([("a", 1), ("b.c", 1)])
    c.insert_many([{"a": [2, 3], "b": {"c": 1}}, {"a": [3, 4], "b": {"c": 8}}, {"a": [3, 5], "b": {"c": 7}}])
    assert _distinct(c, "b.c", {"a": 3}) == [1, 7, 8]


# distinct_collator.js: distinct, find and aggregate under several collations (the $sortArray $expr
# distinct at the end is the engine's: only that it works is asserted, as in the jstest).
def test_distinct_collator(db: Database) -> None:
    from pymongo.errors import BulkWriteError

    c = db.c
    with pytest.raises(BulkWriteError):  # the jstest's ordered insert stops at its duplicate _id: 5 is never stored
        c.insert_many(
            [{"_id": {"a": []}}, {"_id": {"a": [2]}}, {"_id": {"a": [2, 3]}}, {"_id": {"a": [2, 3]}}, {"_id": 5}]
        )
    query = {"_id": {"$in": [{"a": [2, 3]}, 5]}}
    for locale in ("ca", "fr_CA", "simple"):
        reply = db.command("distinct", "c", key="_id.a.0", query=query, collation={"locale": locale})
        assert reply["values"] == [2], locale
        assert list(c.find(query).collation({"locale": locale})) == [{"_id": {"a": [2, 3]}}]
        assert list(c.aggregate([{"$match": query}], collation={"locale": locale})) == [{"_id": {"a": [2, 3]}}]
    db.d.insert_many([{"array": ["yellow", "red"]}, {"array": ["red", "yellow"]}])
    db.command(
        "distinct",
        "d",
        key="array",
        query={"$expr": {"$sortArray": {"input": "$array", "sortBy": -1}}},
        collation={"locale": "el"},
    )


# --- count (jstests/core/query/count/) ------------------------------------------------------------


def _count(db: Database, name: str, query: Any = None, **options: Any) -> int:
    return int(db.command("count", name, query=query, **options)["n"])


# count_hint.js: a hinted count is the hinted index's count, a sparse index's included; bad hints fail.
def test_count_hint(db: Database) -> None:
    from pymongo.errors import OperationFailure

    db.c.insert_many([{"i": 1}, {"i": 2}])
    assert _count(db, "c") == 2
    db.c.create_index("i")
    assert _count(db, "c", hint="i_1") == _count(db, "c", hint={"i": 1}) == 2
    assert _count(db, "c", {"i": 1}, hint="_id_") == _count(db, "c", {"i": 1}, hint={"_id": 1}) == 1
    assert _count(db, "c", hint="_id_") == _count(db, "c", hint={"_id": 1}) == 2
    db.c.create_index("x", sparse=True)
    assert _count(db, "c", hint="x_1") == _count(db, "c", hint={"x": 1}) == 0
    assert _count(db, "c", {"i": 1}, hint="x_1") == _count(db, "c", {"i": 1}, hint={"x": 1}) == 0
    for query in (None, {"i": 1}):
        for hint in ({"bad": 1, "hint": 1}, "BAD HINT"):
            with pytest.raises(OperationFailure):
                _count(db, "c", query, hint=hint)
    with pytest.raises(OperationFailure, match="hint provided does not correspond to an existing index") as bad:
        _count(db, "c", hint={"bad": 1, "hint": 1})
    assert bad.value.code == 2


# count2.js: counts with and without skip and limit (applySkipLimit), and the refused negative skip.
def test_count2(db: Database) -> None:
    from pymongo.errors import OperationFailure

    db.c.insert_many([{"num": i, "m": i % 20} for i in range(1000)])
    assert _count(db, "c") == 1000 and len(list(db.c.find())) == 1000
    assert len(list(db.c.find({"m": 5}))) == 50 and _count(db, "c", {"m": 5}) == 50
    assert len(list(db.c.find({"m": 5}).skip(10))) == 40 and _count(db, "c", {"m": 5}, skip=10) == 40
    assert len(list(db.c.find({"m": 5}).skip(10).limit(20))) == 20
    assert _count(db, "c", {"m": 5}, skip=10, limit=20) == 20
    assert _count(db, "c", {"m": 5}, skip=45, limit=20) == 5
    with pytest.raises(OperationFailure):
        _count(db, "c", skip=-2)


# count6.js: every count with skip, limit, negative limit and limit 0, for both objects.
@pytest.mark.parametrize("obj", [{"a": True, "b": False}, {"a": 1, "b": 0}], ids=["booleans", "numbers"])
def test_count6(db: Database, obj: dict[str, Any]) -> None:
    db.c.create_index([("b", 1), ("a", 1)])

    def check(query: dict[str, Any], expected: int) -> None:
        assert _count(db, "c", query) == expected
        for skip in (1, 2):
            for limit in (1, 2):
                assert _count(db, "c", query, skip=skip) == max(expected - skip, 0)
                assert _count(db, "c", query, limit=limit) == min(expected, limit)
                assert _count(db, "c", query, skip=skip, limit=limit) == min(max(expected - skip, 0), limit)
                assert _count(db, "c", query, limit=-limit) == _count(db, "c", query, limit=limit)
                assert _count(db, "c", query, skip=skip, limit=-limit) == _count(db, "c", query, skip=skip, limit=limit)
        assert _count(db, "c", query, limit=0) == expected
        assert _count(db, "c", query, limit=0, skip=2) == max(expected - 2, 0)

    for i in range(5):
        check({"a": obj["a"], "b": obj["b"]}, i)
        check({"b": obj["b"], "a": obj["a"]}, i)
        db.c.insert_one(dict(obj))
    db.c.insert_many(
        [
            {"a": True, "b": True},
            {"a": True, "b": 1},
            {"a": False, "b": 1},
            {"a": False, "b": True},
            {"a": False, "b": False},
        ]
    )
    check({"a": obj["a"], "b": obj["b"]}, 5)
    check({"b": obj["b"], "a": obj["a"]}, 5)
    check({}, 10)


# countc.js: every count (the $where ones are the engine's).
def test_countc(db: Database) -> None:
    def fresh(name: str, key: Any, docs: list[dict[str, Any]]) -> str:
        db[name].create_index(key)
        db[name].insert_many(docs)
        return name

    n = fresh("c1", "a", [{"a": 0}, {"a": 99}, *({"a": i + 0.5} for i in range(99))])
    assert _count(db, n, {"a": {"$in": list(range(100))}}) == 2
    n = fresh("c2", "a", [{"a": [1, 2]}, {"a": 9}])
    assert _count(db, n, {"a": {"$gt": 0, "$lt": 5}}) == 1
    n = fresh("c3", [("a.b", 1), ("a.c", 1)], [{"a": [{"b": 2, "c": 3}, {}]}])
    assert _count(db, n, {"a.b": 2, "a.c": 2}) == 0
    n = fresh("c4", "a", [{"a": "a"}, {"a": {}}])
    assert _count(db, n, {"a": {"$gte": ""}}) == 1
    n = fresh("c5", "a", [{"a": datetime.datetime(1970, 1, 1, 0, 0, 0, 1000)}, {"a": True}])
    assert _count(db, n, {"a": {"$lte": datetime.datetime(1970, 1, 1, 0, 0, 0, 1000)}}) == 1
    n = fresh("c6", [("a", -1)], [{"a": 1}, {"a": 2}, {"a": 3}])
    assert [_count(db, n, {"a": q}) for q in ({"$gt": 2}, {"$lt": 2}, {"$lte": 2}, {"$lt": 3})] == [1, 1, 2, 2]
    rows = [{"a": 1, "b": 2}, {"a": 2, "b": 1}, {"a": 2, "b": 3}, {"a": 3, "b": 4}]
    n = fresh("c7", [("a", 1), ("b", 1)], [dict(r) for r in rows])
    queries = [
        {"a": 1},
        {"a": 2},
        {"a": {"$gt": 2}},
        {"a": {"$lt": 2}},
        {"a": 2, "b": {"$gt": 0}},
        {"a": 2, "b": {"$lt": 3}},
        {"a": 1, "b": {"$lt": 3}},
    ]
    assert [_count(db, n, q) for q in queries] == [1, 2, 1, 1, 2, 1, 1]
    n = fresh("c8", [("a", 1), ("b", -1)], [dict(r) for r in rows])
    assert [_count(db, n, q) for q in queries[2:]] == [1, 1, 2, 1, 1]
    n = fresh("c9", "a", [{"a": [1, 2]}])
    assert _count(db, n, {"a": {"$gt": 0, "$lte": 2}}) == 1
    n = fresh("c10", "a", [{"a": 1, "b": 1}, {"a": 1, "b": 2}])
    assert _count(db, n, {"a": 1, "$where": "this.b == 1"}) == 1


# count3.js, count4.js, count5.js, count7.js, count9.js: every count, itcount and size.
def test_count3_to_count9(db: Database) -> None:
    db.c3.insert_many([{"a": 1}, {"a": 1, "b": 2}])
    assert len(list(db.c3.find({"a": 1}, {"b": 1}))) == _count(db, "c3", {"a": 1}) == 2
    db.c4.insert_many([{"_id": i, "x": i} for i in range(100)])
    q = {"x": {"$gt": 25, "$lte": 75}}
    for _ in range(2):
        assert _count(db, "c4", q) == len(list(db.c4.find(q))) == db.c4.count_documents(q) == 50
        db.c4.create_index("x")
    assert _count(db, "c4", q, limit=1) == 1 and len(list(db.c4.find(q).limit(1))) == 1
    assert _count(db, "c4", q, limit=5) == 5 and _count(db, "c4", q, skip=5, limit=5) == 5
    assert _count(db, "c4", q, skip=48, limit=5) == 2 and _count(db, "c4", limit=20) == 20
    assert _count(db, "c4", skip=120) == 0 and db.command("count", "c4")["ok"] == 1.0
    db.c7.create_index("a")
    words = ["algebra", "apple", "azores", "bumper", "supper", "termite", "zeppelin", "ziggurat", "zope"]
    db.c7.insert_many([{"a": w} for w in words])
    assert _count(db, "c7", {"a": re.compile("p")}) == 5
    db.c7.delete_many({})
    db.c7.insert_many([{"a": [1, 2, 3]}, {"a": [1, 2, 3]}, {"a": [1]}])
    assert _count(db, "c7", {"a": {"$gt": 1}}) == 2
    db.c9.create_index("a")
    db.c9.insert_one({"a": ["a", "b", "a"]})
    assert _count(db, "c9", {"a": "a"}) == 1
    db.c9.insert_one({"a": ["a", "b", "a"]})
    assert _count(db, "c9", {"a": "a"}) == 2
    db.c9.drop()
    db.c9.create_index([("a", 1), ("b", 1)])
    for n in (1, 2):
        db.c9.insert_one({"a": ["a", "b", "a"], "b": "r"})
        assert _count(db, "c9", {"a": "a", "b": "r"}) == _count(db, "c9", {"a": "a"}) == n
    db.c9.drop()
    db.c9.create_index([("a.b", 1), ("a.c", 1)])
    db.c9.insert_one({"a": [{"b": "b", "c": "c"}, {"b": "b", "c": "c"}]})
    assert _count(db, "c9", {"a.b": "b", "a.c": "c"}) == 1


# array/array_match2.js, array_match3.js: numeric path parts against arrays and fields named "1".
def test_array_match2_and_3(db: Database) -> None:
    for doc, queries in (
        ({"a": [{"1": 4}, 5]}, [{"a.1": 4}, {"a.1": 5}]),
        ({"a": [{"1": {"foo": 4}}, {"foo": 5}]}, [{"a.1.foo": 4}, {"a.1.foo": 5}]),
        ({"a": [{"1": {"foo": 4}}, {}]}, [{"a.1": {"$exists": True}}, {"a.1.foo": {"$exists": True}}]),
    ):
        db.m2.delete_many({})
        db.m2.insert_one(doc)
        assert [db.m2.count_documents(q) for q in queries] == [1, 1], doc
    _counts(db, [{"a": {"0": 5}}, {"a": [5]}], [({"a.0": 5}, 2)], [[("a.0", 1)]])


# array/arrayfind10.js: every arrayEq and itcount, unindexed and with the jstest's index.
AF10_MIXED = [
    [1], [1, 2], [2], [3], [3, 1], [3, 2], [3, 2, 1], [[1]], [[2]], [[3]], [[[1]]], [[[2]]], [[[3]]], [1, [[2]]],
    [3, [1]], [3, [[2]]], [3, [[2]], 1], [[1], 2], [[1], [2]], [[3], 1], [[3], 2], [[3], 2, 1], [[3], [1]],
    [[3], [[2]]], [[3], [[2]], 1],
]  # fmt: skip


def _values_of(coll: Any, query: dict[str, Any]) -> list[str]:
    return sorted(repr(d["a"]) for d in coll.find(query, {"_id": 0}))


def test_arrayfind10(db: Database) -> None:
    t = db.c
    t.insert_many([{"a": "foo"}, {"a": ["foo"]}, {"a": [["foo"]]}, {"a": [[["foo"]]]}])
    for _ in range(2):
        assert _values_of(t, {"a": "foo"}) == sorted(repr(v) for v in ("foo", ["foo"]))
        t.create_index("a")
    t.drop()
    arrays = [[123, "foo"], ["foo", 123], ["bar", "foo"], ["bar", "baz", "foo"], ["bar", "baz", 123]]
    t.insert_many([{"a": a} for a in arrays])
    for _ in range(2):
        assert _values_of(t, {"a": "foo"}) == sorted(repr(a) for a in arrays[:4])
        t.create_index("a")
    t.drop()
    subdocs = [
        [{}, {"b": "foo"}], [{"b": "foo"}, {}], [{"b": 123}, {"b": "foo"}], [{"b": "foo"}, {"b": 123}],
        [{"b": "bar"}, {"b": "foo"}], [{"b": "bar"}, {"b": "baz"}, {"b": "foo"}],
        [{"b": "bar"}, {"b": "baz"}, {"b": 123}],
    ]  # fmt: skip
    t.insert_many([{"a": a} for a in subdocs])
    for _ in range(2):
        assert _values_of(t, {"a.b": "foo"}) == sorted(repr(a) for a in subdocs[:6])
        t.create_index("a.b")
    t.drop()
    nested = [[{"b": [{"c": [5, 7]}]}], [{"b": []}, {"b": [{"c": [5, 7]}]}]]
    t.insert_many([{"a": a} for a in nested])
    for _ in range(2):
        for q in (5, {"$eq": 5}, {"$in": [5]}, {"$size": 2}, {"$elemMatch": {"$eq": 5}}):
            assert _values_of(t, {"a.b.c": q}) == sorted(repr(a) for a in nested), q
        t.create_index("a.b")
    t.drop()
    t.insert_many([{"a": 1}, {"a": 2}, {"a": 3}, *({"a": a} for a in AF10_MIXED)])
    lt2 = [[1], [1, 2], [[1]], [1, [[2]]], [3, [1]], [[1], 2], [[1], [2]], [[3], [1]]]
    gt2 = [a for a in AF10_MIXED if a not in ([1], [1, 2], [2])]
    lt12 = [[1], [[1]], [3, [1]], [[1], 2], [[1], [2]], [[3], [1]]]
    gt12 = [a for a in AF10_MIXED if a not in ([1], [1, 2])]
    for _ in range(2):
        assert _values_of(t, {"a": {"$eq": [2]}}) == sorted(repr(a) for a in ([2], [[2]], [[1], [2]]))
        assert _values_of(t, {"a": {"$lt": [2]}}) == sorted(repr(a) for a in lt2)
        assert _values_of(t, {"a": {"$gt": [2]}}) == sorted(repr(a) for a in gt2)
        assert _values_of(t, {"a": {"$eq": [1, 2]}}) == [repr([1, 2])]
        assert _values_of(t, {"a": {"$lt": [1, 2]}}) == sorted(repr(a) for a in lt12)
        assert _values_of(t, {"a": {"$gt": [1, 2]}}) == sorted(repr(a) for a in gt12)
        t.create_index("a")
    t.drop()
    pairs = [[1], [1, 1], [1, 2], [1, 2, 3], [1, 3], [2], [2, 1], [2, 1, 3], [2, 2], [2, 3], [3, 1], [3, 2], [3, 3]]
    t.insert_many([{"a": a} for a in pairs])
    expected = {
        (2, 2): (1, 8, 9, 4, 5), (1,): (1, 0, 1, 12, 13), (3,): (0, 10, 10, 3, 3), (1, 2, 3): (1, 3, 4, 9, 10),
    }  # fmt: skip
    for _ in range(2):
        for operand, counts in expected.items():
            got = tuple(len(list(t.find({"a": {op: list(operand)}}))) for op in ("$eq", "$lt", "$lte", "$gt", "$gte"))
            assert got == counts, operand
        t.create_index("a")


# project/proj_key1.js: a covered, sorted projection, also in batches of 2.
def test_proj_key1(db: Database) -> None:
    db.c.insert_many([{"a": i, "b": i} for i in range(10)])
    db.c.create_index("a")
    expected = [{"a": i} for i in range(10)]
    assert list(db.c.find({"a": {"$gte": 0}}, {"a": 1, "_id": 0}).sort("a", 1)) == expected
    assert list(db.c.find({"a": {"$gte": 0}}, {"a": 1, "_id": 0}).sort("a", 1).batch_size(2)) == expected


# project/projection_with_hashed_index.js: the hashed index's prefix sorts and covers "a.b".
def test_projection_with_hashed_index(db: Database) -> None:
    db.c.insert_many([{"_id": 1, "a": {"b": 5}}, {"_id": 2, "a": {"b": 2, "c": 1}}, {"_id": 3, "a": {"b": 0}}])
    scanned = list(db.c.find({}, {"_id": 0, "a.b": 1}).sort("a.b", 1))
    db.c.create_index([("a.b", 1), ("a", "hashed")])
    assert list(db.c.find({}, {"_id": 0, "a.b": 1}).sort("a.b", 1)) == scanned
    plan = db.c.find({}, {"_id": 0, "a.b": 1}).sort("a.b", 1).explain()
    stages = list(walk(winning_plan(plan["queryPlanner"])))
    assert "PROJECTION_DEFAULT" in {s["stage"] for s in stages} and "FETCH" not in {s["stage"] for s in stages}
    assert next(s for s in stages if s["stage"] == "IXSCAN")["indexName"] == "a.b_1_a_hashed"


def test_a_hashed_key_is_never_read_as_the_value() -> None:
    """Not a jstest: the model's own covered projection and key filter over {"a.b": 1, a: "hashed"}
    read "a.b" from the key and leave the hash of "a" out (it would overwrite the subdocument)."""
    from workbook.planner import CollectionModel, FindArgs, find_documents

    docs = [{"_id": 1, "a": {"b": "x5"}}, {"_id": 2, "a": {"b": "y2", "c": 1}}, {"_id": 3, "a": {"b": "x0"}}]
    indexes = [{"v": 2, "key": {"_id": 1}, "name": "_id_"}, {"v": 2, "key": {"a.b": 1, "a": "hashed"}, "name": "ab"}]
    collection = CollectionModel(docs, indexes)
    args = FindArgs.of({"a.b": re.compile("^x")}, {"_id": 0, "a.b": 1}, [("a.b", 1)], hint="ab")
    explain, found = find_documents(collection, "t.c", args)
    assert found == [{"a": {"b": "x0"}}, {"a": {"b": "x5"}}]
    assert "FETCH" not in plan_stages(explain)


# --- projections (jstests/core/query/project/; applied by the engine's projection code) -----------


# id_partial_projection.js: every checkResults.
def test_id_partial_projection(db: Database) -> None:
    db.c.insert_many([{"_id": {"a": 1, "b": 1}, "sortKey": 1}, {"_id": 3, "sortKey": 2}])

    def found(projection: dict[str, Any]) -> list[dict[str, Any]]:
        return list(db.c.find({}, projection).sort("sortKey", 1))

    assert found({"_id": 1}) == [{"_id": {"a": 1, "b": 1}}, {"_id": 3}]
    assert found({"_id.a": 1}) == [{"_id": {"a": 1}}, {}]
    assert found({"_id.b": 1}) == [{"_id": {"b": 1}}, {}]
    assert found({"_id.a": 0}) == [{"_id": {"b": 1}, "sortKey": 1}, {"_id": 3, "sortKey": 2}]
    assert found({"_id": 0}) == [{"sortKey": 1}, {"sortKey": 2}]


# slice1.js: the $slice forms on one level, beside inclusions and exclusions, and on nested arrays
# (the dotted-path forms of its first part).
def test_slice1(db: Database) -> None:
    t = db.c
    t.insert_one({"_id": 1, "a": [0, 1, 2, 3, 4, 5, -5, -4, -3, -2, -1], "b": 1, "c": 1})
    for spec, expected in (
        (3, [0, 1, 2]),
        (-3, [-3, -2, -1]),
        ([2, 3], [2, 3, 4]),
        ([-5, 4], [-5, -4, -3, -2]),
        ([-5, 10], [-5, -4, -3, -2, -1]),
    ):
        assert t.find_one({}, {"a": {"$slice": spec}})["a"] == expected, spec
    out = t.find_one({}, {"a": {"$slice": 3}})
    assert (out["a"], out["b"], out["c"]) == ([0, 1, 2], 1, 1)
    out = t.find_one({}, {"a": {"$slice": 3}, "b": True})
    assert out["a"] == [0, 1, 2] and out["b"] == 1 and "c" not in out
    out = t.find_one({}, {"a": {"$slice": 3}, "b": False})
    assert out["a"] == [0, 1, 2] and "b" not in out and out["c"] == 1
    t.drop()
    comments = [{"id": i, "text": c} for i, c in enumerate("abcd")]
    t.insert_one({"comments": comments, "title": "foo"})
    out = t.find_one({}, {"comments": {"$slice": 2}, "irrelevantField": 1})
    assert out["comments"] == comments[:2] and "title" not in out
    out = t.find_one({}, {"comments": {"$slice": 2}})
    assert out["comments"] == comments[:2] and out["title"] == "foo"
    out = t.find_one({}, {"comments": {"$slice": 2}, "title": 0})
    assert out["comments"] == comments[:2] and "title" not in out
    t.drop()
    t.insert_one({"_id": 1, "a": [[1, 1, 1], [2, 2, 2], [3, 3, 3]], "b": 1, "c": 1})
    assert t.find_one({}, {"a": {"$slice": 1}})["a"] == [[1, 1, 1]]
    assert t.find_one({}, {"a": {"$slice": -1}})["a"] == [[3, 3, 3]]
    assert t.find_one({}, {"a": {"$slice": [0, 2]}})["a"] == [[1, 1, 1], [2, 2, 2]]
    # the rest of slice1.js ($slice inside a nested projection document, {a: {b: {$slice: ...}}}) is
    # refused by the offline engine (31325, listed in the README): not ported


# projection_conflicts.js: every colliding projection is refused in find (MongoDB's codes are 31249 and
# 31250; the offline engine refuses some with 31325, "unsupported projection operator": a refusal,
# with another code, listed in the README).
@pytest.mark.parametrize(
    "projection",
    [
        {"a.b": 1, "a": {"b": {"c": 1}}}, {"a": {"b": {"c": 1}}, "a.b": 1}, {"a": 1, "a.b": 1}, {"a.b": 1, "a": 1},
        {"a.b": 1, "a.b.c": 1}, {"a.b": 0, "a": {"b": {"c": 0}}}, {"a": {"b": {"c": 0}}, "a.b": 0},
        {"a": 0, "a.b": 0}, {"a.b": 0, "a": 0}, {"a.b": 0, "a.b.c": 0}, {"a.b": 1, "a": {"b": "$$REMOVE"}},
    ],
)  # fmt: skip
def test_projection_conflicts(db: Database, projection: dict[str, Any]) -> None:
    from pymongo.errors import OperationFailure

    db.c.insert_one({"a": {"b": 1}})
    with pytest.raises(OperationFailure) as refused:
        list(db.c.find({}, projection))
    assert refused.value.code in (31249, 31250, 31325)


# index/index_check3.js: type-bracketed ranges and the keys they examine, with the SERVER-99 cases.
def test_index_check3(db: Database) -> None:
    t = db.c
    t.insert_many([{"a": 1}, {"a": 2}, {"a": 3}, {"a": "z"}])
    for _ in range(2):
        assert len(list(t.find({"a": {"$lt": 2}}))) == 1 and len(list(t.find({"a": {"$gt": 2}}))) == 1
        t.create_index("a")
    t.drop()
    t.insert_many([{"i": i, **({"foo": i} if i % 2 == 0 else {})} for i in range(100)])
    t.create_index("foo")
    for query in ({"foo": {"$lt": 50}}, {"foo": {"$gt": 50}}):
        assert t.find(query).explain()["executionStats"]["totalKeysExamined"] < 30
    t.drop()
    t.insert_many([{"i": "a"}, *({} for _ in range(10))])
    t.create_index("i")
    for query in ({"i": {"$lte": "a"}}, {"i": {"$gte": "a"}}):
        assert t.find(query).explain()["executionStats"]["totalKeysExamined"] < 3
    assert _count(db, "c", {"i": {"$gte": "a"}}) == len(list(t.find({"i": {"$gte": "a"}}))) == 1
    assert len(list(t.find({"i": {"$gte": "a"}}).sort("i", 1))) == 1
    t.insert_one({"i": "b"})
    assert t.find({"i": {"$gte": "a"}}).explain()["executionStats"]["totalKeysExamined"] < 3
    assert _count(db, "c", {"i": {"$gte": "a"}}) == len(list(t.find({"i": {"$gte": "a"}}))) == 2
    bounded = {"i": {"$gte": "a", "$lt": MaxKey()}}
    assert (
        len(list(t.find(bounded)))
        == len(list(t.find(bounded).sort("i", -1)))
        == len(list(t.find(bounded).sort("i", 1)))
        == 2
    )


# index/index_arr1.js, index_arr2.js: a compound index over an empty array; a multi-update through
# a positional path, counted again with the index.
def test_index_arr1_and_arr2(db: Database) -> None:
    t = db.a1
    t.insert_many([{"_id": 1, "a": 5, "b": [{"x": 1}]}, {"_id": 2, "a": 5, "b": []}, {"_id": 3, "a": 5}])
    assert len(list(t.find({"a": 5}))) == 3
    t.create_index([("a", 1), ("b.x", 1)])
    assert len(list(t.find({"a": 5}))) == 3
    t.insert_one({"_id": 4, "a": 5, "b": []})
    t.create_index([("a", 1), ("b.a", 1), ("b.c", 1)])
    assert [dict(i["key"]) for i in t.list_indexes()] == [{"_id": 1}, {"a": 1, "b.x": 1}, {"a": 1, "b.a": 1, "b.c": 1}]
    for with_index in (False, True):
        t = db[f"a2{with_index}"]
        now = 1_700_000_000
        t.insert_many(
            [
                {"_id": n + 1, "a": [{"b": {"c": 1}}], "created": created}
                for n, created in enumerate(range(now - 20, now + 1))
            ]
        )
        query: dict[str, Any] = {"created": {"$gte": now - 5}}
        expected = _count(db, t.name, query)
        if with_index:
            t.create_index("a.b.c", name="x")
        assert t.update_many(query, {"$set": {"a.0.b.c": 0}}).matched_count == expected
        assert _count(db, t.name, {**query, "a.b.c": 0}) == expected


# index/index_partial_create_drop.js: the refused partial filters and sparse partial indexes, twins on
# one key pattern with different filters, the ambiguous drop by key pattern (code 181), and a query
# after a drop (keysPerIndex, from validate, is not ported).
def test_index_partial_create_drop(db: Database) -> None:
    from pymongo.errors import OperationFailure

    c = db.c
    for bad in (5, {"x": {"$asdasd": 3}}, {"$and": 5}, {"x": re.compile("abc")}, {"$expr": {"$eq": ["$x", 5]}}):
        with pytest.raises(OperationFailure):
            c.create_index("x", partialFilterExpression=bad)
    c.insert_many([{"x": i, "a": i} for i in range(10)])
    c.create_index("x", partialFilterExpression={"a": {"$lt": 5}})
    c.drop_index([("x", 1)])
    assert len(list(c.list_indexes())) == 1
    for sparse in (True, 1):
        with pytest.raises(OperationFailure):
            c.create_index("x", partialFilterExpression={"a": 1}, sparse=sparse)
    c.create_index("x", partialFilterExpression={"a": 1}, sparse=False)
    assert len(list(c.list_indexes())) == 2
    c.drop_index([("x", 1)])
    c.create_index("x", partialFilterExpression={"a": {"$lt": 5}})
    c.drop_index([("x", 1)])
    assert len(list(c.find({"x": 0, "a": 0}))) == 1
    c.drop_indexes()
    c.create_index("x", name="partialIndex1", partialFilterExpression={"a": {"$lt": 5}})
    c.create_index("x", name="partialIndex2", partialFilterExpression={"a": {"$gte": 5}})
    assert len(list(c.list_indexes())) == 3
    with pytest.raises(OperationFailure) as ambiguous:
        db.command("dropIndexes", "c", index={"x": 1})
    assert ambiguous.value.code == 181
    c.drop_index("partialIndex2")
    assert len(list(c.list_indexes())) == 2
    assert sorted(d["x"] for d in c.find({"x": {"$gte": 3}, "a": {"$lt": 5}})) == [3, 4]


# --- issue 19's held-out check: files nobody here had ported (ported blind, run once, then fixed) --
# Each was read from mongodb/mongo and ported before it was ever run against the offline default; the
# module docstring gives the first run's agreement.


def _covered_and_no_docs(cursor: Any) -> bool:
    """isIndexOnly on the winning plan and executionStats.totalDocsExamined == 0."""
    explained = cursor.explain()
    stages = set(plan_stages(explained))
    return not stages & {"FETCH", "COLLSCAN"} and explained["executionStats"]["totalDocsExamined"] == 0


# index/covered/covered_index_simple_2.js: all six cases (a unique {foo: 1}: equality to an int, a
# string and a subdocument, no filter, a range, $in), each covered with no document examined.
def test_covered_index_simple_2(db: Database) -> None:
    c = db.c
    c.insert_many([{"foo": i} for i in range(10)] + [{"foo": "string"}, {"foo": {"bar": 1}}, {"foo": None}])
    c.create_index("foo", unique=True)
    for query in ({"foo": 1}, {"foo": "string"}, {"foo": {"bar": 1}}, {}, {"foo": {"$gt": 2, "$lt": 6}}):
        assert _covered_and_no_docs(c.find(query, {"foo": 1, "_id": 0}).hint([("foo", 1)])), query
    assert _covered_and_no_docs(c.find({"foo": {"$in": [5, 8]}}, {"foo": 1, "_id": 0}).hint([("foo", 1)]))


# index/covered/covered_index_simple_3.js: all eight cases (a sparse unique {foo: 1}: the six of
# simple_2 and {$exists: true}; then $nin over {bar: 1}).
def test_covered_index_simple_3(db: Database) -> None:
    c = db.c
    c.insert_many(
        [{"foo": i} for i in range(10)]
        + [{"bar": i} for i in range(5)]
        + [{"foo": "string"}, {"foo": {"bar": 1}}, {"foo": None}]
    )
    c.create_index("foo", sparse=True, unique=True)
    queries: list[dict[str, Any]] = [
        {"foo": 1}, {"foo": "string"}, {"foo": {"bar": 1}}, {}, {"foo": {"$gt": 2, "$lt": 6}},
        {"foo": {"$in": [5, 8]}}, {"foo": {"$exists": True}},
    ]  # fmt: skip
    for query in queries:
        assert _covered_and_no_docs(c.find(query, {"foo": 1, "_id": 0}).hint([("foo", 1)])), query
    c.drop_indexes()
    c.create_index("bar")
    assert _covered_and_no_docs(c.find({"bar": {"$nin": [5, 8]}}, {"bar": 1, "_id": 0}).hint([("bar", 1)]))


# index/covered/covered_index_compound_1.js: all seven cases over {a: 1, b: -1, c: 1}.
def test_covered_index_compound_1(db: Database) -> None:
    c = db.c
    c.insert_many([{"a": i, "b": f"strvar_{i % 13}", "c": i % 10} for i in range(100)])
    key = [("a", 1), ("b", -1), ("c", 1)]
    c.create_index(key)
    abc = {"a": 1, "b": 1, "c": 1, "_id": 0}
    bc = {"b": 1, "c": 1, "_id": 0}
    cases: list[tuple[dict[str, Any], dict[str, Any]]] = [
        ({"a": 10, "b": "strvar_10", "c": 0}, abc),
        ({"a": 26, "b": "strvar_0"}, abc),
        ({"a": 38, "b": "strvar_12", "c": 8}, bc),
        ({}, bc),
        ({"a": {"$gt": 25, "$lt": 43}}, bc),
        ({"a": 38, "b": "strvar_12", "c": {"$in": [5, 8]}}, bc),
        ({"a": 38, "b": "strvar_12", "c": 55}, abc),
    ]
    for query, projection in cases:
        assert _covered_and_no_docs(c.find(query, projection).hint(key)), query


# index/covered/covered_index_sort_1.js: all three cases (sorts both ways over {foo: 1}, and a range).
def test_covered_index_sort_1(db: Database) -> None:
    c = db.c
    c.insert_many([{"foo": i % 10} for i in range(20)] + [{"bar": i} for i in range(5)])
    c.insert_many([{"foo": "1"}, {"foo": {"bar": 1}}, {"foo": None}])
    c.create_index("foo")
    projection = {"foo": 1, "_id": 0}
    for query, direction in (({}, 1), ({}, -1), ({"foo": {"$gt": 2}}, -1)):
        assert _covered_and_no_docs(c.find(query, projection).sort("foo", direction).hint([("foo", 1)]))


# index/covered/covered_index_sort_2.js: the one case (sort on _id descending over the _id index).
def test_covered_index_sort_2(db: Database) -> None:
    c = db.c
    c.insert_many([{"_id": i} for i in range(10)] + [{"_id": "1"}, {"_id": {"bar": 1}}, {"_id": None}])
    assert _covered_and_no_docs(c.find({}, {"_id": 1}).sort("_id", -1).hint([("_id", 1)]))


# query/sort/sorth.js: every assertMatches of checkForwardDirection (five indexes and sorts) and
# checkReverseDirection (five), with limit -1 and -2 and the added {a: 1.5} document; where the
# jstest accepts either document with b: 3, so does the port.
_SORTH_DOCS = [(1, 1), (1, 2), (1, 3), (2, 0), (2, 3), (2, 5)]
_IN12 = {"$in": [1, 2]}
_B3 = [[(1, 3)], [(2, 3)]]
_SORTH_FORWARD: list[tuple[dict[str, Any], int, list[list[tuple[Any, int]]]]] = [
    *[
        ({"$gte": 0}, -1, [[(2, 0)]]), ({"$gt": 0}, -1, [[(1, 1)]]), ({"$gte": 1}, -1, [[(1, 1)]]),
        ({"$gt": 1}, -1, [[(1, 2)]]), ({"$gte": 2}, -1, [[(1, 2)]]), ({"$gt": 2}, -1, _B3),
        ({"$gte": 3}, -1, _B3), ({"$gt": 3}, -1, [[(2, 5)]]), ({"$gte": 4}, -1, [[(2, 5)]]),
        ({"$gt": 4}, -1, [[(2, 5)]]), ({"$gte": 5}, -1, [[(2, 5)]]),
        ({"$lte": 0}, -1, [[(2, 0)]]), ({"$lt": 1}, -1, [[(2, 0)]]), ({"$lte": 1}, -1, [[(2, 0)]]),
        ({"$lt": 3}, -1, [[(2, 0)]]),
        ({"$gte": 0, "$lte": 0}, -1, [[(2, 0)]]), ({"$gte": 0, "$lt": 1}, -1, [[(2, 0)]]),
        ({"$gte": 0, "$lte": 1}, -1, [[(2, 0)]]), ({"$gt": 0, "$lte": 1}, -1, [[(1, 1)]]),
        ({"$gte": 2, "$lt": 3}, -1, [[(1, 2)]]), ({"$gte": 2.5, "$lte": 3}, -1, _B3),
        ({"$gt": 2.5, "$lte": 3}, -1, _B3),
        ({"$gte": 0}, -2, [[(2, 0), (1, 1)]]), ({"$gt": 1}, -2, [[(1, 2), (2, 3)], [(1, 2), (1, 3)]]),
        ({"$gt": 4}, -2, [[(2, 5)]]),
    ]
]  # fmt: skip
_SORTH_REVERSE: list[tuple[dict[str, Any], list[list[tuple[Any, int]]]]] = [
    ({"$gte": 0}, [[(2, 5)]]), ({"$gte": 5}, [[(2, 5)]]), ({"$lte": 5}, [[(2, 5)]]),
    ({"$lte": 5, "$gte": 5}, [[(2, 5)]]), ({"$lt": 3}, [[(1, 2)]]), ({"$lt": 3, "$gt": 1}, [[(1, 2)]]),
    ({"$lt": 2, "$gte": 1}, [[(1, 1)]]), ({"$lt": 5}, _B3), ({"$lt": 3.1}, _B3), ({"$lt": 3.5}, _B3),
    ({"$lte": 3}, _B3), ({"$lt": 3.5, "$gte": 3}, _B3), ({"$lte": 3, "$gt": 0}, _B3),
]  # fmt: skip


def _sorth_reset(db: Database, index: list[tuple[str, int]]) -> Any:
    t = db.sorth
    t.drop()
    t.insert_many([{"a": a, "b": b} for a, b in _SORTH_DOCS])
    t.create_index(index)
    return t


def _sorth_find(t: Any, b: dict[str, Any], sort: list[tuple[str, int]], limit: int, hint: Any) -> list[tuple[Any, int]]:
    cursor = t.find({"a": _IN12, "b": b}, {"_id": 0}).sort(sort).limit(limit).hint(hint)
    return [(d["a"], d["b"]) for d in cursor]


@pytest.mark.parametrize(
    ("sort", "index"),
    [
        ([("b", 1)], [("a", 1), ("b", 1)]),
        ([("b", 1)], [("a", 1), ("b", 1), ("c", 1)]),
        ([("b", 1)], [("a", 1), ("b", 1), ("c", -1)]),
        ([("b", 1), ("c", 1)], [("a", 1), ("b", 1), ("c", 1)]),
        ([("b", 1), ("c", -1)], [("a", 1), ("b", 1), ("c", -1)]),
    ],
)
def test_sorth_forward(db: Database, sort: list[tuple[str, int]], index: list[tuple[str, int]]) -> None:
    t = _sorth_reset(db, index)
    for b, limit, acceptable in _SORTH_FORWARD:
        assert _sorth_find(t, b, sort, limit, index) in acceptable, (b, limit)
    t.insert_one({"a": 1.5, "b": 3})
    assert _sorth_find(t, {"$gte": 0}, sort, -2, index) == [(2, 0), (1, 1)]


@pytest.mark.parametrize(
    ("sort", "index"),
    [
        ([("b", -1)], [("a", 1), ("b", -1)]),
        ([("b", -1)], [("a", 1), ("b", -1), ("c", 1)]),
        ([("b", -1)], [("a", 1), ("b", -1), ("c", -1)]),
        ([("b", -1), ("c", 1)], [("a", 1), ("b", -1), ("c", 1)]),
        ([("b", -1), ("c", -1)], [("a", 1), ("b", -1), ("c", -1)]),
    ],
)
def test_sorth_reverse(db: Database, sort: list[tuple[str, int]], index: list[tuple[str, int]]) -> None:
    t = _sorth_reset(db, index)
    for b, acceptable in _SORTH_REVERSE:
        assert _sorth_find(t, b, sort, -1, index) in acceptable, b


# query/sort/sortk.js: every assertion (the $in explosion with limits -1/-2, skip, no limit and its
# totalKeysExamined, the $where query (the engine's), reversed sorts, the unhinted plan and its
# nReturned, three intervals, the multikey index, a {a: 1, b: -1} index, and an equality before $in).
def test_sortk(db: Database) -> None:
    t = db.sortk

    def reset() -> None:
        t.delete_many({})
        t.insert_many([{"a": a, "b": b} for a, b in ((1, 1), (1, 2), (1, 3), (2, 4), (2, 5), (2, 0))])

    reset()
    ab = [("a", 1), ("b", 1)]
    t.create_index(ab)

    def simple(extra: dict[str, Any] | None = None, sort: Any = None, hint: Any = None) -> Any:
        return t.find({"a": {"$in": [1, 2]}, **(extra or {})}).sort(sort or [("b", 1)]).hint(hint or ab)

    assert simple().limit(-1)[0]["b"] == 0
    two = list(simple().limit(-2))
    assert (two[0]["b"], two[1]["b"]) == (0, 1)
    assert list(simple().limit(-1).skip(1))[0]["b"] == 1
    assert len(list(simple().limit(0))) == 6
    assert simple().limit(0).explain()["executionStats"]["totalKeysExamined"] == 6
    assert len(list(simple().limit(0).skip(1))) == 5
    assert list(simple({"$where": "this.b>=2"}).limit(-1))[0]["b"] == 2
    assert list(simple({}, [("b", -1)]).limit(-1))[0]["b"] == 5
    assert list(simple({}, [("a", -1), ("b", 1)]).limit(-1))[0]["b"] == 0
    assert list(t.find({"a": {"$in": [1, 2]}}).sort("b", 1).limit(-1))[0]["b"] == 0
    assert t.find({"a": {"$in": [1, 2]}}).sort("b", 1).limit(-1).explain()["executionStats"]["nReturned"] == 1
    t.delete_many({"b": 0})
    assert list(simple().limit(-1))[0]["b"] == 1

    def three(limit: int) -> list[int]:
        return [d["b"] for d in t.find({"a": {"$in": [1, 2, 3]}}).sort("b", 1).hint(ab).limit(limit)]

    assert three(-1) == [1] and three(-2) == [1, 2]
    t.insert_one({"a": 3, "b": 0})
    assert three(-1) == [0] and three(-2) == [0, 1]
    t.delete_many({})
    t.insert_many([{"a": 1, "b": [0, 1, 2]}, {"a": 2, "b": [0, 1, 2]}, {"a": 1, "b": 5}])
    assert len(list(simple().limit(-3))) == 3
    reset()
    t.create_index([("a", 1), ("b", -1)])
    assert list(simple({}, [("b", -1)], [("a", 1), ("b", -1)]).limit(-1))[0]["b"] == 5
    assert list(simple({}, [("b", 1)], [("a", 1), ("b", -1)]).limit(-1))[0]["b"] == 0
    t.drop()
    abc = [("a", 1), ("b", 1), ("c", 1)]
    t.create_index(abc)
    t.insert_many(
        [
            {"a": a, "b": b, "c": c}
            for a, b, c in ((0, 0, -1), (0, 2, 1), (1, 1, 1), (1, 1, 2), (1, 1, 3), (1, 2, 4), (1, 2, 5), (1, 2, 0))
        ]
    )
    for query in ({"a": 1, "b": {"$in": [1, 2]}}, {"$and": [{"a": 1}, {"b": {"$in": [1, 2]}}]}):
        assert [d["c"] for d in t.find(query).sort("c", 1).hint(abc).limit(-1)] == [0]
        assert [d["c"] for d in t.find(query).sort("c", 1).hint(abc).limit(-2)] == [0, 1]

    def in01(limit: int, sort: Any) -> list[int]:
        return [d["b"] for d in t.find({"a": {"$in": [0, 1]}}).sort(sort).hint(abc).limit(limit)]

    assert in01(-1, [("b", 1)])[0] == 0
    assert in01(-1, [("b", 1), ("c", 1)])[0] == 0
    assert in01(-2, [("b", 1), ("c", 1)]) == [0, 1]


# query/sort/sort_dotted_paths.js: every testSortAndSortWithLimit (with and without limit 500) and every
# parallel-arrays refusal (BadValue or CannotIndexParallelArrays); the documents holding undefined
# (_id 2 and 9 of the first set) are left out, pymongo cannot write them, and so from its answers.
def _sorted_ids(c: Any, sort: list[tuple[str, int]], expected: list[int]) -> None:
    assert [d["_id"] for d in c.find({}, {"_id": 1}).sort(sort)] == expected, sort
    assert [d["_id"] for d in c.find({}, {"_id": 1}).sort(sort).limit(500)] == expected, sort


def _parallel_refused(db: Database, sort: dict[str, int]) -> None:
    from pymongo.errors import OperationFailure

    with pytest.raises(OperationFailure) as refused:
        db.command("find", "c", sort=sort)
    assert refused.value.code in (2, 171), refused.value


def test_sort_dotted_paths(db: Database) -> None:
    c = db.c
    c.insert_many(
        [{"_id": 1, "a": 1}, {"_id": 3, "a": None}, {"_id": 4, "a": {}}, {"_id": 5, "a": []}, {"_id": 6, "a": [1]}]
        + [{"_id": 7, "a": [[1]]}, {"_id": 8}]
    )
    _sorted_ids(c, [("a", 1), ("_id", 1)], [5, 3, 8, 1, 6, 4, 7])
    _sorted_ids(c, [("a", -1), ("_id", 1)], [7, 4, 1, 6, 3, 8, 5])
    _sorted_ids(c, [("a.0", 1), ("_id", 1)], [1, 3, 4, 5, 8, 6, 7])
    _sorted_ids(c, [("a.0", -1), ("_id", 1)], [7, 6, 1, 3, 4, 5, 8])
    c.drop()
    c.insert_many(
        [
            {"_id": 1, "a": 1, "b": [2]}, {"_id": 2, "a": 2, "b": []}, {"_id": 3, "a": [], "b": 4},
            {"_id": 4, "a": [1], "b": 4}, {"_id": 5, "a": [2, 3], "b": 2}, {"_id": 6, "a": 2, "b": [3, 5]},
            {"_id": 7, "a": 1, "b": [1, 3]}, {"_id": 8, "a": [1, 2], "b": 3}, {"_id": 9, "a": 2, "b": 3},
        ]
    )  # fmt: skip
    _sorted_ids(c, [("a", 1), ("b", 1), ("_id", 1)], [3, 7, 1, 8, 4, 2, 5, 6, 9])
    _sorted_ids(c, [("a", 1), ("b", -1), ("_id", 1)], [3, 4, 7, 8, 1, 6, 9, 5, 2])
    _sorted_ids(c, [("a", -1), ("b", 1), ("_id", 1)], [5, 2, 6, 8, 9, 7, 1, 4, 3])
    _sorted_ids(c, [("a", -1), ("b", -1), ("_id", 1)], [5, 6, 8, 9, 2, 4, 7, 1, 3])
    c.drop()
    c.insert_many([{"_id": 1, "a": [], "b": 1}, {"_id": 2, "a": 1, "b": []}, {"_id": 3, "a": [], "b": []}])
    for sort in ({"a": 1, "b": 1}, {"_id": 1, "a": 1, "b": 1}, {"a": 1, "_id": 1, "b": 1}, {"a": 1, "b": 1, "_id": 1}):
        _parallel_refused(db, sort)
    not_both = {"$or": [{"a": {"$not": {"$type": "array"}}}, {"b": {"$not": {"$type": "array"}}}]}
    output = [{"_id": 1, "a": [], "b": 1}, {"_id": 2, "a": 1, "b": []}]
    for sort in ({"a": 1, "b": 1}, {"_id": 1, "a": 1, "b": 1}, {"a": 1, "_id": 1, "b": 1}, {"a": 1, "b": 1, "_id": 1}):
        assert list(c.find(not_both).sort(list(sort.items()))) == output, sort
    c.drop()
    c.insert_many(
        [
            {"_id": 1, "a": {"b": 2}}, {"_id": 2, "a": {"b": []}}, {"_id": 3, "a": {"b": [2, 3]}},
            {"_id": 4, "a": {"c": 1}}, {"_id": 5, "a": []}, {"_id": 6, "a": [{"b": [5]}]},
            {"_id": 7, "a": [{"b": [4, 5]}, {"b": 7}]}, {"_id": 8, "a": [{"b": [1, 3]}, {"b": [2, 5]}]},
            {"_id": 9, "a": [{"b": []}, {"b": [1, 3]}]},
        ]
    )  # fmt: skip
    _sorted_ids(c, [("a.b", 1), ("_id", 1)], [2, 9, 4, 5, 8, 1, 3, 7, 6])
    _sorted_ids(c, [("a.b", 1), ("_id", -1)], [9, 2, 5, 4, 8, 3, 1, 7, 6])
    _sorted_ids(c, [("a.b", -1), ("_id", 1)], [7, 6, 8, 3, 9, 1, 4, 5, 2])
    _sorted_ids(c, [("a.b", -1), ("_id", -1)], [7, 8, 6, 9, 3, 1, 5, 4, 2])
    c.drop()
    pairs = [((4, 1), (1, 2)), ((2, 1), (4, 2)), ((6, 1), (9, 2)), ((4, 1), (5, 3)), ((2, 1), (7, 3)),
             ((5, 1), (3, 3)), ((7, 2), (2, 3)), ((3, 2), (8, 3)), ((8, 2), (6, 3))]  # fmt: skip
    c.insert_many([{"_id": i + 1, "a": [{"b": b, "c": cc} for b, cc in p]} for i, p in enumerate(pairs)])
    for second in ("a.b", "a"):
        _sorted_ids(c, [("a.c", 1), (second, 1), ("_id", 1)], [2, 5, 1, 4, 6, 3, 8, 7, 9])
        _sorted_ids(c, [("a.c", 1), (second, -1), ("_id", 1)], [3, 6, 1, 4, 2, 5, 9, 7, 8])
        _sorted_ids(c, [("a.c", -1), (second, 1), ("_id", 1)], [7, 6, 4, 9, 5, 8, 1, 2, 3])
        _sorted_ids(c, [("a.c", -1), (second, -1), ("_id", 1)], [8, 5, 9, 4, 6, 7, 3, 2, 1])
    # not in the jstest: the same orders from an index on the two paths (its keys are one element's
    # values together, as MongoDB's are: 18 keys, not the 36 of a cross product)
    c.create_index([("a.c", 1), ("a.b", 1)])
    hinted = c.find({}, {"_id": 1}).hint([("a.c", 1), ("a.b", 1)])
    assert [d["_id"] for d in hinted.sort([("a.c", 1), ("a.b", 1)])] == [2, 5, 1, 4, 6, 3, 8, 7, 9]
    assert c.find({}).hint([("a.c", 1), ("a.b", 1)]).explain()["executionStats"]["totalKeysExamined"] == 18
    c.drop()
    c.insert_one({"_id": 1, "a": {"b": [1, 2], "c": [3, 4]}})
    _parallel_refused(db, {"a.b": 1, "a.c": 1})
    c.drop()
    c.insert_one({"a": {"b": [1, 2]}, "c": {"d": [3, 4]}})
    _parallel_refused(db, {"a.b": 1, "c.d": 1})
    c.drop()
    c.insert_many(
        [
            {"_id": 1, "a": [{"b": [4, 1], "c": 1}, {"b": [1, 5], "c": 2}]},
            {"_id": 2, "a": [{"b": 2, "c": [1, 3]}, {"b": 4, "c": [2, 4]}]},
            {"_id": 3, "a": [{"b": [6, 4], "c": 1}, {"b": [9, 7], "c": 2}]},
            {"_id": 4, "a": [{"b": 4, "c": [1, 2]}, {"b": 5, "c": [3, 2]}]},
            {"_id": 5, "a": [{"b": [2, 3], "c": 1}, {"b": [7, 6], "c": 3}]},
            {"_id": 6, "a": [{"b": 5, "c": []}, {"b": 3, "c": 3}]},
            {"_id": 7, "a": [{"b": [], "c": 2}, {"b": 2, "c": 3}]},
            {"_id": 8, "a": [{"b": 3, "c": [2]}, {"b": 8, "c": [3]}]},
            {"_id": 9, "a": [{"b": [8], "c": 2}, {"b": [6], "c": 3}]},
        ]
    )
    _sorted_ids(c, [("a.c", 1), ("a.b", 1), ("_id", 1)], [6, 1, 2, 5, 3, 4, 7, 8, 9])
    _sorted_ids(c, [("a.c", 1), ("a.b", -1), ("_id", 1)], [6, 3, 1, 4, 5, 2, 9, 8, 7])
    _sorted_ids(c, [("a.c", -1), ("a.b", 1), ("_id", 1)], [2, 7, 6, 4, 5, 9, 8, 1, 3])
    _sorted_ids(c, [("a.c", -1), ("a.b", -1), ("_id", 1)], [2, 8, 5, 9, 4, 6, 7, 3, 1])
    _sorted_ids(c, [("a.b", 1), ("a", 1), ("_id", 1)], [7, 1, 2, 5, 6, 8, 4, 3, 9])
    _sorted_ids(c, [("a.b", 1), ("a", -1), ("_id", 1)], [7, 1, 5, 2, 8, 6, 3, 4, 9])
    _sorted_ids(c, [("a.b", -1), ("a", 1), ("_id", 1)], [3, 8, 9, 5, 6, 4, 1, 2, 7])
    _sorted_ids(c, [("a.b", -1), ("a", -1), ("_id", 1)], [3, 9, 8, 5, 1, 4, 6, 2, 7])
    _sorted_ids(c, [("a.0.b", 1), ("_id", 1)], [7, 1, 2, 5, 8, 3, 4, 6, 9])
    _sorted_ids(c, [("a.0.b", 1), ("_id", -1)], [7, 1, 5, 2, 8, 4, 3, 6, 9])
    _sorted_ids(c, [("a.0.b", -1), ("_id", 1)], [9, 3, 6, 1, 4, 5, 8, 2, 7])
    _sorted_ids(c, [("a.0.b", -1), ("_id", -1)], [9, 3, 6, 4, 1, 8, 5, 2, 7])
    c.drop()
    c.insert_many(
        [
            {"_id": 1, "a": {"b": 1}, "c": [{"d": [4, 1]}, {"d": [1, 5]}]},
            {"_id": 2, "a": [{"b": [1, 3]}, {"b": [2, 4]}], "c": {"d": 2}},
            {"_id": 3, "a": {"b": 1}, "c": [{"d": [6, 4]}, {"d": [9, 7]}]},
            {"_id": 4, "a": [{"b": [2]}, {"b": [3, 2]}], "c": {"d": 4}},
            {"_id": 5, "a": {"b": 1}, "c": [{"d": [2, 3]}, {"d": [7, 6]}]},
            {"_id": 6, "a": [{"b": []}, {"b": 3}], "c": {"d": 4}},
            {"_id": 7, "a": {"b": 2}, "c": [{"d": []}, {"d": 2}]},
            {"_id": 8, "a": [{"b": [2]}, {"b": [3]}], "c": {"d": 3}},
            {"_id": 9, "a": {"b": 3}, "c": [{"d": [8]}, {"d": [6]}]},
        ]
    )
    _sorted_ids(c, [("a.b", 1), ("c.d", 1), ("_id", 1)], [6, 1, 2, 5, 3, 7, 8, 4, 9])
    _sorted_ids(c, [("a.b", 1), ("c.d", -1), ("_id", 1)], [6, 3, 5, 1, 2, 4, 8, 7, 9])
    _sorted_ids(c, [("a.b", -1), ("c.d", 1), ("_id", 1)], [2, 8, 4, 6, 9, 7, 1, 5, 3])
    _sorted_ids(c, [("a.b", -1), ("c.d", -1), ("_id", 1)], [2, 9, 4, 6, 8, 7, 3, 5, 1])
    c.drop()
    c.insert_many(
        [
            {"_id": 1, "a": {"b": {"c": 2}}}, {"_id": 2, "a": {"b": {"c": []}}},
            {"_id": 3, "a": [{"b": []}, {"b": {"c": []}}]}, {"_id": 4, "a": [{"b": {"c": 1}}]},
            {"_id": 5, "a": {"b": [{"c": 3}, {"d": 1}]}}, {"_id": 6, "a": {"b": [{"c": [5]}]}},
            {"_id": 7, "a": []}, {"_id": 8, "a": {"b": [{"c": [1, 3]}, {"c": [2, 5]}]}},
            {"_id": 9, "a": [{"b": [{"c": []}, {"c": [1, 3]}]}]},
        ]
    )  # fmt: skip
    _sorted_ids(c, [("a.b.c", 1), ("_id", 1)], [2, 3, 9, 5, 7, 4, 8, 1, 6])
    _sorted_ids(c, [("a.b.c", 1), ("_id", -1)], [9, 3, 2, 7, 5, 8, 4, 1, 6])
    _sorted_ids(c, [("a.b.c", -1), ("_id", 1)], [6, 8, 5, 9, 1, 4, 3, 7, 2])
    _sorted_ids(c, [("a.b.c", -1), ("_id", -1)], [8, 6, 9, 5, 1, 4, 7, 3, 2])


# query/array/arrayfind8.js: every checkQuery (count and values of the standard and the $elemMatch
# query, unindexed, with a single-key index and with the index made multikey), with {a: 1} and then
# {"a.b": 1} as the jstest's currentIndexSpec.
_AF8: list[tuple[str, dict[str, Any], Any, Any, Any, dict[str, Any] | None]] = [
    ("a", {"$gt": 4}, [5], None, None, None),
    ("a", {"$gt": 4, "$lt": 6}, [5], None, [3, 7], None),
    ("a", {"$gt": 4, "$not": {"$gte": 6}}, [5], None, None, None),
    ("a", {"$gt": 4, "$not": {"$ne": 6}}, [6], None, None, None),
    ("a", {"$gte": 5, "$lte": 5}, [5], None, [4, 6], None),
    ("a", {"$in": [4, 6], "$gt": 5}, [6], None, [4, 7], None),
    ("a", {"$regex": "^a"}, ["a"], None, None, None),
    ("a", {"$gt": 4}, [5], None, None, {"a": {"$lt": 6}}),
    ("a", {"$gte": 5}, [5], None, None, {"a": {"$lte": 5}}),
    ("a", {"$in": [4, 6]}, [6], None, None, {"a": {"$gt": 5}}),
    ("a", {"$gt": 4}, [5], None, None, {"a": {"$elemMatch": {"$lt": 6}}}),
    ("a", {"$gt": 4}, [3, 7], None, None, {"a": {"$elemMatch": {"$lt": 6}}}),
    ("a", {"$gte": 5}, [5], None, None, {"a": {"$elemMatch": {"$lte": 5}}}),
    ("a", {"$in": [4, 6]}, [6], None, None, {"a": {"$elemMatch": {"$gt": 5}}}),
    ("a", {"$elemMatch": {"$in": [5]}}, None, [[5]], [5], None),
    ("a.b", {"$elemMatch": {"b": {"$gte": 1, "$lte": 1}}}, None, [[{"b": 1}]], [{"b": 1}], None),
    ("a.b", {"$elemMatch": {"b": {"$gte": 1, "$lte": 1}}}, None, [[{"b": [0, 2]}]], [{"b": [0, 2]}], None),
    ("a.b", {"b": {"$elemMatch": {"$gte": 1, "$lte": 1}}}, [{"b": [1]}], None, None, None),
    ("a.b", {"b": {"$elemMatch": {"$gte": 1, "$lte": 4}}}, [{"b": [1]}], None, None, None),
    ("a.b", {"b": {"$elemMatch": {"$gte": 1, "$lte": 4}}}, [{"b": [2]}], None, None, {"a.b": {"$in": [2, 5]}}),
    ("a.b", {"b": {"$elemMatch": {"$in": [1, 2]}, "$in": [2, 3]}}, [{"b": [2]}], None, [{"b": [1]}, {"b": [3]}], None),
]


@pytest.mark.parametrize("case", _AF8, ids=[f"{i}" for i in range(len(_AF8))])
def test_arrayfind8(db: Database, case: tuple[Any, ...]) -> None:
    index, sub, both, elem, non_elem, extra = case
    extra = extra or {}
    first = next(iter(sub))
    standard = {"$and": [{"a": sub} if first.startswith("$") else {f"a.{first}": sub[first]}, extra]}
    elem_query = {"$and": [{"a": {"$elemMatch": sub}}, extra]}

    def check(coll: Any, with_non_elem: bool, context: str) -> None:
        for query, expected in ((standard, [both, non_elem if with_non_elem else None]), (elem_query, [both, elem])):
            values = [v for v in expected if v]
            assert coll.count_documents(query) == len(values), (context, query)
            assert sorted(repr(d["a"]) for d in coll.find(query)) == sorted(map(repr, values)), (context, query)

    plain = db.af8_plain
    for value in (both, elem, non_elem):
        if value:
            plain.insert_one({"a": value})
    check(plain, True, "unindexed")
    indexed = db.af8_indexed
    for value in (both, elem):
        if value:
            indexed.insert_one({"a": value})
    indexed.create_index(index)
    check(indexed, False, "single key index")
    if non_elem:
        indexed.insert_one({"a": non_elem})
    indexed.insert_many([{"a": [-1, -2]}, {"a": {"b": [-1, -2]}}])
    check(indexed, True, "multikey index")


# query/and/and3.js: every checkScanMatch without $where (totalDocsExamined and nReturned of the query
# hinted to {a: 1}) and the two itcounts; the seven $where ones are in test_and3_where.
_AND3: list[tuple[dict[str, Any], int, int]] = [
    ({"a": re.compile("o")}, 1, 1), ({"a": re.compile("a")}, 0, 0),
    ({"a": {"$not": re.compile("o")}}, 2, 1), ({"a": {"$not": re.compile("a")}}, 2, 2),
    ({"$and": [{"a": re.compile("o")}]}, 1, 1), ({"$and": [{"a": re.compile("a")}]}, 0, 0),
    ({"$and": [{"a": {"$not": re.compile("o")}}]}, 2, 1), ({"$and": [{"a": {"$not": re.compile("a")}}]}, 2, 2),
    ({"$and": [{"a": re.compile("oo")}, {"a": {"$not": re.compile("o")}}]}, 1, 0),
    ({"$and": [{"a": re.compile("o")}, {"a": {"$not": re.compile("a")}}]}, 1, 1),
    ({"$or": [{"a": re.compile("o")}]}, 1, 1), ({"$or": [{"a": re.compile("a")}]}, 0, 0),
    ({"$nor": [{"a": re.compile("o")}]}, 2, 1), ({"$nor": [{"a": re.compile("a")}]}, 2, 2),
    ({"$and": [{"$and": [{"a": re.compile("o")}]}]}, 1, 1), ({"$and": [{"$and": [{"a": re.compile("a")}]}]}, 0, 0),
    ({"$and": [{"$and": [{"a": {"$not": re.compile("o")}}]}]}, 2, 1),
    ({"$and": [{"$and": [{"a": {"$not": re.compile("a")}}]}]}, 2, 2),
    ({"$and": [{"$or": [{"a": re.compile("o")}]}]}, 1, 1), ({"$and": [{"$or": [{"a": re.compile("a")}]}]}, 0, 0),
    ({"$or": [{"a": {"$not": re.compile("o")}}]}, 2, 1),
    ({"$and": [{"$or": [{"a": {"$not": re.compile("o")}}]}]}, 2, 1),
    ({"$and": [{"$or": [{"a": {"$not": re.compile("a")}}]}]}, 2, 2),
    ({"$and": [{"$nor": [{"a": re.compile("o")}]}]}, 2, 1), ({"$and": [{"$nor": [{"a": re.compile("a")}]}]}, 2, 2),
]  # fmt: skip


def test_and3(db: Database) -> None:
    t = db.c
    t.insert_many([{"a": 1}, {"a": "foo"}])
    t.create_index("a")
    for query, docs, n in _AND3:
        stats = t.find(query).hint([("a", 1)]).explain()["executionStats"]
        assert (stats["totalDocsExamined"], stats["nReturned"]) == (docs, n), query
    assert len(list(t.find({"a": 1, "$and": [{"a": 2}]}))) == 0
    assert len(list(t.find({"$and": [{"a": 1}, {"a": 2}]}))) == 0


_AND3_WHERE: list[tuple[dict[str, Any], int, int]] = [
    ({"$where": "this.a==1"}, 2, 1), ({"$and": [{"$where": "this.a==1"}]}, 2, 1),
    ({"a": 1, "$where": "this.a==1"}, 1, 1), ({"a": 1, "$and": [{"$where": "this.a==1"}]}, 1, 1),
    ({"$and": [{"a": 1}, {"$where": "this.a==1"}]}, 1, 1), ({"$and": [{"a": 1, "$where": "this.a==1"}]}, 1, 1),
    ({"a": 1, "$and": [{"a": 1}, {"a": 1, "$where": "this.a==1"}]}, 1, 1),
]  # fmt: skip


def test_and3_where(db: Database, engine: str | None, request: pytest.FixtureRequest) -> None:
    """$where is the engine's on the offline default: its find answers, its explain is refused by name
    (README gap table: "$where, $expr, ..."), so the jstest's explain figures are a strict xfail there."""
    from pymongo.errors import OperationFailure

    if engine is None:
        request.node.add_marker(
            pytest.mark.xfail(
                reason="explain of $where is refused by name (README gaps)", raises=OperationFailure, strict=True
            )
        )
    t = db.c
    t.insert_many([{"a": 1}, {"a": "foo"}])
    t.create_index("a")
    for query, docs, n in _AND3_WHERE:
        stats = t.find(query).hint([("a", 1)]).explain()["executionStats"]
        assert (stats["totalDocsExamined"], stats["nReturned"]) == (docs, n), query


# query/type/type8.js: MinKey and MaxKey round-trip as _id and are not each other.
def test_type8(db: Database) -> None:
    for mine, other in ((MinKey(), MaxKey()), (MaxKey(), MinKey())):
        db.minmaxcmp.replace_one({"_id": mine}, {"_id": mine}, upsert=True)
        doc = db.minmaxcmp.find_one({"_id": mine})
        assert doc is not None and doc["_id"] == mine and doc["_id"] != other
        assert isinstance(doc["_id"], type(mine)) and not isinstance(doc["_id"], type(other))


# --- issue 19's opening example: a regex written the usual Python way explains on the offline default ---
@pytest.mark.parametrize(
    ("pattern", "bounds", "found"),
    [
        (re.compile("^ab"), ['["ab", "ac")', "[/^ab/, /^ab/]"], 1),
        (re.compile("^ab", re.I), ['["", {})', "[/^ab/i, /^ab/i]"], 2),
    ],
    ids=["no-flags", "ignorecase"],
)
def test_re_compile_explains_with_mongodb_bounds(db: Database, pattern: Any, bounds: list[str], found: int) -> None:
    c = db.c
    c.insert_many([{"name": "abc"}, {"name": "ABd"}, {"name": "xab"}])
    c.create_index("name")
    explained = c.find({"name": pattern}).explain()
    scans = [s for s in walk(winning_plan(explained["queryPlanner"])) if s.get("stage") == "IXSCAN"]
    assert scans and scans[0]["indexBounds"] == {"name": bounds}
    assert explained["executionStats"]["nReturned"] == found == len(list(c.find({"name": pattern})))


# query/elemmatch/elemmatch_projection.js: every testSingleDocument (the projection of one inserted
# document, _id removed unless projected out) and the multi-batch loop; new Date() as a fixed date.
_EMP_WHEN = datetime.datetime(2021, 5, 6, 7, 8, 9)
_EMP_OID = ObjectId("0123456789abcdef01234567")
_EMP_TYPES = {"x": [{"a": "string", "b": _EMP_WHEN}, {"a": _EMP_OID, "b": 1.2345}, {"a": "string2", "b": _EMP_WHEN}]}
_EMP_ABD = [{"a": 1, "b": 2}, {"a": 2, "c": 3}, {"a": 1, "d": 5}]
_EMP_Y = [{"aa": 1, "bb": 2}, {"aa": 2, "cc": 3}, {"aa": 1, "dd": 5}]


def _emp_refs(name: str) -> dict[str, Any]:
    from bson import DBRef

    return {
        "x": [
            DBRef("otherCollection", "id0", name),
            DBRef("otherCollection", "id1", name),
            DBRef("otherCollection2", "id2", name),
        ]
    }


_EMP_CASES: list[tuple[dict[str, Any], Any, Any]] = [
    ({"x": {"$elemMatch": {"a": -6}}}, {"x": [{"a": 1, "b": 4}, {"a": -6, "c": 3}]}, {"x": [{"a": -6, "c": 3}]}),
    (
        {"x": {"$elemMatch": {"a": -6, "c": 3}}},
        {"x": [{"a": 1, "b": 4}, {"a": -6, "c": 3}]},
        {"x": [{"a": -6, "c": 3}]},
    ),
    (
        {"x": {"$elemMatch": {"a": {"$lt": 1}}}},
        {"x": [{"a": 1, "b": 4}, {"a": -6, "c": 3}]},
        {"x": [{"a": -6, "c": 3}]},
    ),
    (
        {"x": {"$elemMatch": {"a": {"$gt": 0, "$lt": 2}}}},
        {"x": [{"a": 1, "b": 1}, {"a": 1, "b": 2}]},
        {"x": [{"a": 1, "b": 1}]},
    ),
    ({"x": {"$elemMatch": {"$in": [100, 4, -123]}}}, {"x": [1, 2, 3, 4, 5]}, {"x": [4]}),
    (
        {"x": {"$elemMatch": {"a": {"$in": [1]}}}},
        {"x": [{"a": 1, "b": 2}, {"a": 2, "c": 3}, {"a": 1, "d": 5}]},
        {"x": [{"a": 1, "b": 2}]},
    ),
    ({"x": {"$elemMatch": {"$nin": [4, 5, 6]}}}, {"x": [1, 2, 3, 4, 5]}, {"x": [1]}),
    ({"x": {"$elemMatch": {"$all": [1]}}}, {"x": [1, 2, 3, 4, 5]}, {"x": [1]}),
    ({"x": {"$elemMatch": {}}}, {"x": ["string", 123, [1, 2, 3], {"a": 1}]}, {"x": [[1, 2, 3]]}),
    ({"x": {"$elemMatch": {}}}, {"x": ["string", 123, {"a": 1}]}, {"x": [{"a": 1}]}),
    (
        {"x": {"$elemMatch": {"$elemMatch": {"$gt": 5, "$lt": 7}}}},
        {"x": [[1, 2, 3], [4, 5, 6], [7, 8, 9]]},
        {"x": [[4, 5, 6]]},
    ),
    ({"x": {"$elemMatch": {"a": "string"}}}, _EMP_TYPES, {"x": [{"a": "string", "b": _EMP_WHEN}]}),
    ({"x": {"$elemMatch": {"a": re.compile("ring2")}}}, _EMP_TYPES, {"x": [{"a": "string2", "b": _EMP_WHEN}]}),
    ({"x": {"$elemMatch": {"a": {"$type": 2}}}}, _EMP_TYPES, {"x": [{"a": "string", "b": _EMP_WHEN}]}),
    ({"x": {"$elemMatch": {"a": {"$ne": 1}}}}, {"x": _EMP_ABD}, {"x": [{"a": 2, "c": 3}]}),
    ({"x": {"$elemMatch": {"d": {"$exists": True}}}}, {"x": _EMP_ABD, "y": _EMP_Y}, {"x": [{"a": 1, "d": 5}]}),
    ({"x": {"$elemMatch": {"a": {"$mod": [2, 0]}}}}, {"x": _EMP_ABD, "y": _EMP_Y}, {"x": [{"a": 2, "c": 3}]}),
    (
        {"_id": 0, "x": {"$elemMatch": {"a": 1}}, "y": {"$elemMatch": {"c": 3}}},
        {"x": [{"a": 1, "b": 2}, {"a": 3, "b": 4}], "y": [{"c": 1, "d": 2}, {"c": 3, "d": 4}]},
        {"x": [{"a": 1, "b": 2}], "y": [{"c": 3, "d": 4}]},
    ),
    ({"x": {"$elemMatch": {"$gt": 2, "$lt": 4}}}, {"x": [1, 2, 4, 3, 5]}, {"x": [3]}),
    (
        {
            "x": {
                "$elemMatch": {
                    "$or": [{"a": {"$eq": 4}}, {"$and": [{"a": {"$mod": [12, 0]}}, {"a": {"$mod": [15, 0]}}]}]
                }
            }
        },
        {"x": [{"a": 1}, {"a": 180}, {"a": 4}]},
        {"x": [{"a": 180}]},
    ),
    ({"x": {"$elemMatch": {"$id": "id0"}}}, "refs", ("otherCollection", "id0")),
    ({"x": {"$elemMatch": {"$ref": "otherCollection2"}}}, "refs", ("otherCollection2", "id2")),
    ({"x": {"$elemMatch": {"$db": "DB"}}}, "refs", ("otherCollection", "id0")),
    ({"x": {"$elemMatch": {"$gt": 2}}}, {"x": {"a": 123}, "d": 456}, {}),
    ({"x": {"$elemMatch": {"$gt": 2}}, "d": 1}, {"x": {"a": 123}, "d": 456}, {"d": 456}),
    ({"x": {"$elemMatch": {"$gt": 2}}, "d": 0}, {"x": {"a": 123}, "d": 456}, {}),
    ({"x": {"$elemMatch": {}}}, {"x": ["string", 123, {"b": 123}]}, {"x": [{"b": 123}]}),
    ({"x": {"$elemMatch": {}}}, {"x": ["string", 123, [1, 2, 3]]}, {"x": [[1, 2, 3]]}),
    ({"x": {"$elemMatch": {"$or": [{}, {}]}}}, {"x": ["string", 123, {"b": 123}]}, {"x": [{"b": 123}]}),
    ({"x": {"$elemMatch": {"$or": [{}, {}]}}}, {"x": ["string", 123, [1, 2, 3]]}, {"x": [[1, 2, 3]]}),
    ({"x": {"$elemMatch": {"$lt": 0}}}, {"x": [1, 2, 3]}, {}),
]


@pytest.mark.parametrize("case", _EMP_CASES, ids=[str(i) for i in range(len(_EMP_CASES))])
def test_elemmatch_projection(
    db: Database, case: tuple[dict[str, Any], Any, Any], engine: str | None, request: pytest.FixtureRequest
) -> None:
    from bson import DBRef
    from pymongo.errors import OperationFailure

    projection, document, expected = case
    if engine is None and (document == "refs" or projection.get("d") == 0):
        reason = (
            "an $elemMatch projection on DBRef fields, or beside an exclusion, is refused by the engine (README gaps)"
        )
        request.node.add_marker(pytest.mark.xfail(reason=reason, raises=OperationFailure, strict=True))
    if document == "refs":
        document = _emp_refs(db.name)
        projection = {"x": {"$elemMatch": {"$db": db.name}}} if "$db" in repr(projection) else projection
        expected = {"x": [DBRef(expected[0], expected[1], db.name)]}
    db.c.insert_one(dict(document))
    found = db.c.find_one({}, projection)
    assert found is not None
    found.pop("_id", None)
    assert found == expected


def test_elemmatch_projection_across_batches(db: Database) -> None:
    db.c.insert_many([{"_id": 0, "x": _EMP_ABD, "y": _EMP_Y}, {"_id": 1, "x": [{"a": 1, "b": 3}, {"a": -6, "c": 3}]}])
    found = list(db.c.find({}, {"x": {"$elemMatch": {"a": 1}}}).sort("_id", 1).batch_size(1))
    assert len(found) == 2 and all(d["x"][0]["a"] == 1 for d in found)


# query/ne/ne3.js: $ne, $gt, $gte, $lt and $lte with a regex are refused; $in with one counts 0.
def test_ne3(db: Database) -> None:
    from pymongo.errors import OperationFailure

    t = db.c
    for op in ("$ne", "$gt", "$gte", "$lt", "$lte"):
        with pytest.raises(OperationFailure):
            t.find_one({"t": {op: re.compile("a")}})
    assert t.count_documents({"t": {"$in": [re.compile("a")]}}) == 0


# query/array/array_index_and_nonIndex_consistent.js: every query of both lists over {val: 1} gives
# the same documents as the $natural-hinted COLLSCAN (checked a COLLSCAN). Not ported: its check
# that a comparison to an array uses the multikey IXSCAN, 8.1's planning (the jstest is tagged
# requires_fcv_81; 7.0/8.0 scan the collection for such comparisons, as the offline default does).
# Both scans agreeing is what MongoDB's answer requires; the $not-over-$not queries also equal their
# inner predicate (the offline engine's own $not answered 77 documents where 66 and 22 are right).
_AIC_SINGLE: list[Any] = [
    [1, 2], [3, 4], [3, 1], {"test": 5}, [{"test": 7}], [True, False], 2, 3, 4, [2], [3], [4], [1, True],
    [True, 1], [1, 4], [None], None, MinKey(), [MinKey()], [MinKey(), 3], [3, MinKey()], MaxKey(), [MaxKey()],
    [MaxKey(), 3], [3, MaxKey()], [],
]  # fmt: skip
_AIC_PREDICATES: list[Any] = [
    [2, 2], [0, 3], [3, 0], [1, 3], [3, 1], [1, 5], [5, 1], [1], [3], [5], {"test": 2}, {"test": 6},
    [True, True], [True], True, 1, 3, 5, [], [MinKey()], [MinKey(), 2], [MinKey(), 4], MinKey(), [MaxKey()],
    [MaxKey(), 2], [MaxKey(), 4], MaxKey(), [], False, None, [None],
]  # fmt: skip


def _aic_ops(q: Any) -> list[dict[str, Any]]:
    return [
        {"$lt": q}, {"$lte": q}, {"$gt": q}, {"$gte": q}, {"$eq": q}, {"$in": [q, "nonExistentString"]},
        {"$not": {"$lt": q}}, {"$not": {"$lte": q}}, {"$not": {"$gt": q}}, {"$not": {"$gte": q}},
        {"$not": {"$eq": q}}, {"$not": {"$in": [q, "nonExistentString"]}},
        {"$elemMatch": {"$not": {"$eq": q}}}, {"$elemMatch": {"$not": {"$gte": q}}},
        {"$elemMatch": {"$not": {"$lte": q}}},
    ]  # fmt: skip


def _aic_values(cursor: Any) -> list[str]:
    return sorted(repr(d) for d in cursor)


@pytest.mark.parametrize("depth", [0, 1, 2], ids=["flat", "nested", "double-nested"])
def test_array_index_and_non_index_consistent(db: Database, depth: int) -> None:
    coll = db.aic
    coll.create_index("val")
    values = _AIC_SINGLE + [[v] for v in _AIC_SINGLE] + [[[v]] for v in _AIC_SINGLE]
    coll.insert_many([{"val": v} for v in values])
    assert len(list(coll.find({}))) == len(_AIC_SINGLE) * 3
    predicates = [p for p in _AIC_PREDICATES]
    for _ in range(depth):
        predicates = [[p] for p in predicates]
    project = {"_id": 0, "val": 1}
    for q in predicates:
        for predicate in _aic_ops(q):
            query = {"val": predicate}
            indexed = _aic_values(coll.find(query, project))
            natural = coll.find(query, project).hint([("$natural", 1)])
            assert "COLLSCAN" in plan_stages(natural.explain()), query
            assert indexed == _aic_values(natural), query


def test_array_index_and_non_index_consistent_intervals(db: Database) -> None:
    coll = db.aic
    coll.create_index("val")
    values = _AIC_SINGLE + [[v] for v in _AIC_SINGLE] + [[[v]] for v in _AIC_SINGLE]
    coll.insert_many([{"val": v} for v in values])
    queries: list[dict[str, Any]] = [
        {"val": {"$gt": 1, "$lt": 3}}, {"val": {"$gt": [1], "$lt": [3]}}, {"val": {"$not": {"$gt": 3, "$lt": 1}}},
        {"val": {"$not": {"$gt": [3], "$lt": [1]}}}, {"val": {"$not": {"$gt": [3], "$lt": 1}}},
        {"val": {"$not": {"$not": {"$lt": 3}}}}, {"val": {"$not": {"$not": {"$lt": True}}}},
        {"val": {"$not": {"$not": {"$lt": [True]}}}}, {"val": {"$not": {"$not": {"$lt": [3]}}}},
    ]  # fmt: skip
    project = {"_id": 0, "val": 1}
    for query in queries:
        assert _aic_values(coll.find(query, project)) == _aic_values(coll.find(query, project).hint([("$natural", 1)]))
        inner = query["val"].get("$not", {}).get("$not")
        if inner is not None:  # not -(not p) is p
            assert _aic_values(coll.find(query, project)) == _aic_values(coll.find({"val": inner}, project)), query


# --- jstests/core/query/minmax.js ------------------------------------------------------------------
# Ported: every count and order of a hinted find with min() and/or max() on {a: 1, b: 1}, {a: 1, b: -1},
# {a: 1} and {a: -1}, and the refusals: no hint (51173; pymongo refuses it before sending, so the
# command is sent raw), bounds that are not the hinted index's fields (51174), min and max naming
# different fields (51176), min not before max in the index's order (51175), and $natural (291).
# Not ported: the $planCacheStats check (no plan cache offline). The offline default's explain of
# such a find is refused by name (the model builds no scan between two compound keys).

_MINMAX_DOCS = [{"a": 1, "b": 1}, {"a": 1, "b": 2}, {"a": 2, "b": 1}, {"a": 2, "b": 2}]


def _minmax(coll: Any, hint: list[tuple[str, int]], low: Any = None, high: Any = None) -> Any:
    cursor = coll.find().hint(hint)
    if low is not None:
        cursor = cursor.min(low)
    if high is not None:
        cursor = cursor.max(high)
    return cursor


def test_minmax_counts_on_compound_indexes(db: Database) -> None:
    from pymongo.errors import OperationFailure

    coll = db.jstests_minmax
    up = [("a", 1), ("b", 1)]
    coll.create_index(up)
    coll.insert_many([dict(doc) for doc in _MINMAX_DOCS])
    cases = [
        ([("a", 1), ("b", 2)], [("a", 2), ("b", 1)], 1), ([("a", 1), ("b", 2)], [("a", 2), ("b", 1.5)], 2),
        ([("a", 1), ("b", 2)], [("a", 2), ("b", 2)], 2), ([("a", 1), ("b", 2)], None, 3),
        (None, [("a", 2), ("b", 1.5)], 3),
    ]  # fmt: skip
    for low, high, count in cases:
        assert len(list(_minmax(coll, up, low, high))) == count, (low, high)
    coll.drop()
    down = [("a", 1), ("b", -1)]
    coll.create_index(down)
    coll.insert_many([dict(doc) for doc in _MINMAX_DOCS])
    cases = [
        ([("a", 1), ("b", 2)], None, 4), (None, [("a", 2), ("b", 0.5)], 4),
        ([("a", 2), ("b", 1)], None, 1), (None, [("a", 1), ("b", 1.5)], 1),
    ]  # fmt: skip
    for low, high, count in cases:
        assert len(list(_minmax(coll, down, low, high))) == count, (low, high)
    refusals = [
        (lambda: coll.find().hint(down).min([("a", 1)]), 51174),
        (lambda: coll.find().hint(down).min([("a", 1), ("b", 1)]).max([("a", 1)]), 51176),
        (lambda: coll.find().hint(down).min([("b", 1)]).max([("a", 1), ("b", 2)]), 51176),
        (lambda: coll.find().hint([("$natural", 1)]).min([("a", 1)]), 291),
        (lambda: coll.find().hint([("$natural", 1)]).max([("a", 1)]), 291),
    ]
    for make, code in refusals:
        with pytest.raises(OperationFailure) as refused:
            list(make())
        assert refused.value.code == code
    with pytest.raises(OperationFailure) as refused:  # pymongo itself refuses min() without a hint
        db.command({"find": coll.name, "min": {"a": 1, "b": 2}, "max": {"a": 2, "b": 1}})
    assert refused.value.code in (2, 51173)  # NoQueryExecutionPlans or 51173, as the jstest allows


def test_minmax_single_field_order_and_empty_ranges(db: Database) -> None:
    from pymongo.errors import OperationFailure

    coll = db.jstests_minmax
    coll.create_index("a")
    coll.insert_many([{"_id": i, "a": i} for i in range(10)])
    for make in (
        lambda: coll.find().hint([("a", 1)]).min([("a", 6)]).max([("a", 3)]).sort("a", -1),
        lambda: coll.find().hint([("a", 1)]).min([("a", 2)]).max([("a", 2)]),
        lambda: coll.find().hint([("a", 1)]).min([("a", 2)]).max([("a", 2)]).sort("a", -1),
    ):
        with pytest.raises(OperationFailure) as refused:
            list(make())
        assert refused.value.code == 51175
    coll.drop()
    coll.insert_many([dict(doc) for doc in _MINMAX_DOCS])
    coll.create_index([("a", 1), ("b", 1)])
    with pytest.raises(OperationFailure) as refused:
        list(coll.find().min([("a", 1), ("b", 2)]).max([("a", 1), ("b", 2)]).hint([("a", 1), ("b", 1)]))
    assert refused.value.code == 51175
    coll.drop()
    coll.create_index("a")
    coll.insert_many([{"a": 3}, {"a": 4}, {"a": 5}])
    assert [d["a"] for d in coll.find().hint([("a", 1)]).min([("a", 4)])] == [4, 5]
    assert [d["a"] for d in coll.find().hint([("a", 1)]).max([("a", 4)])] == [3]
    coll.drop_indexes()
    coll.create_index([("a", -1)])
    assert [d["a"] for d in coll.find().hint([("a", -1)]).min([("a", 4)])] == [4, 3]
    assert [d["a"] for d in coll.find().hint([("a", -1)]).max([("a", 4)])] == [5]


def test_minmax_bounds_then_filter_sort_skip_and_limit(db: Database) -> None:
    """Beyond the jstest, what the manual says min()/max() do with the rest of a find: the bounds choose
    the index keys read, the filter, sort, skip and limit apply to what they fetch; a multikey
    document whose keys fall in the range comes back once."""
    coll = db.minmax_more
    coll.create_index("a")
    coll.insert_many([{"_id": i, "a": i} for i in range(10)] + [{"_id": 10, "a": [1, 5, 8]}])
    found = coll.find({"a": {"$ne": 4}}, {"_id": 1}).hint([("a", 1)]).min([("a", 3)]).max([("a", 7)])
    assert [d["_id"] for d in found] == [3, 5, 10, 6]  # index order: a 3, 5 (twice: one record), 6
    assert [d["_id"] for d in found.clone().sort("_id", -1).skip(1).limit(2)] == [6, 5]


# --- jstests/core/query/return_key.js --------------------------------------------------------------
# Ported: every result: the hinted index's keys in the sort's order, through an index-provided and an
# in-memory sort, with an inclusion or an exclusion projection (ignored). Not ported on the offline
# default: the explain checks (returnKey's explain is refused by name there) and the {$meta: "sortKey"}
# projections beside returnKey (refused by name: the model does not add sort keys to returned keys).


def test_return_key_results(db: Database, engine: str | None) -> None:
    coll = db.jstests_returnkey
    coll.insert_many([{"a": 1, "b": 3}, {"a": 2, "b": 2}, {"a": 3, "b": 1}])
    coll.create_index("a")
    coll.create_index("b")
    up, down = [{"a": 1}, {"a": 2}, {"a": 3}], [{"a": 3}, {"a": 2}, {"a": 1}]
    cases = [({}, ("a", 1), up), ({}, ("a", -1), down), ({}, ("b", 1), down), ({}, ("b", -1), up)]
    cases += [({"b": 1}, ("a", -1), down), ({"a": 0}, ("a", -1), down)]
    for projection, sort, expected in cases:
        found = coll.find({}, projection or None, return_key=True).hint([("a", 1)]).sort(*sort)
        assert list(found) == expected, (projection, sort)
    if engine is None:  # the rest is how the offline default answers what the jstest leaves implicit
        assert list(coll.find({"a": {"$gt": 1}}, return_key=True)) == [{"a": 2}, {"a": 3}]
        assert list(coll.find({}, return_key=True).hint([("$natural", 1)])) == [{}, {}, {}], "no index read"
        one = coll.find_one({"a": 1})
        assert list(coll.find({"_id": one["_id"]}, return_key=True)) == [{"_id": one["_id"]}]


def test_return_key_beside_a_sort_key_projection_is_answered_or_refused_by_name(
    db: Database, engine: str | None
) -> None:
    from pymongo.errors import OperationFailure

    coll = db.jstests_returnkey
    coll.insert_many([{"a": 1, "b": 3}, {"a": 2, "b": 2}, {"a": 3, "b": 1}])
    coll.create_index("a")
    found = coll.find({}, {"c": {"$meta": "sortKey"}}, return_key=True).hint([("a", 1)]).sort("b", 1)
    if engine is not None:
        assert list(found) == [{"a": 3, "c": [1]}, {"a": 2, "c": [2]}, {"a": 1, "c": [3]}]
        return
    with pytest.raises(OperationFailure, match="returnKey beside") as refused:
        list(found)
    assert refused.value.code == 115


# --- jstests/core/query/idhack.js ------------------------------------------------------------------
# Ported over the wire (the plan checks are in tests/test_jstests_query.py, on the model): every result,
# with the jstest's numeric _ids and again with string and ObjectId _ids, which the offline default reads
# by their storage keys (offline_reads.ReadLayer._stored_by_id): a document _id, the $gte count, a read
# after an update and after a multi-update, a regex _id, the covered {_id: 1} projection, every inclusion,
# exclusion, dotted and $elemMatch projection, returnKey (alone and over a projection), a missing _id, and
# min()/max() without a hint (51173). Not ported: the query-shape-hash checks (not in explain here).

_IDHACK_KINDS: dict[str, Any] = {
    "numbers": lambda n: n,
    "strings": lambda n: f"id{n}",
    "ObjectIds": lambda n: ObjectId(f"{n:024x}"),
}


@pytest.mark.parametrize("kind", list(_IDHACK_KINDS))
def test_idhack_results(db: Database, kind: str) -> None:
    from pymongo.errors import OperationFailure

    make = _IDHACK_KINDS[kind]
    t = db.idhack
    t.insert_many([{"_id": {"x": 1}, "z": 1}, {"_id": {"x": 2}, "z": 2}, {"_id": {"x": 3}, "z": 3}])
    t.insert_many([{"_id": make(1), "z": 4}, {"_id": make(2), "z": 5}, {"_id": make(3), "z": 6}])
    assert t.find_one({"_id": {"x": 2}})["z"] == 2
    assert t.count_documents({"_id": {"$gte": make(2)}}) == len(list(t.find({"_id": {"$gte": make(2)}}))) == 2
    t.update_one({"_id": {"x": 2}}, {"$set": {"z": 7}})
    assert t.find_one({"_id": {"x": 2}})["z"] == 7
    t.update_many({"_id": {"$gte": make(2)}}, {"$set": {"z": 8}})
    assert [t.find_one({"_id": make(n)})["z"] for n in (1, 2, 3)] == [4, 8, 8]
    t.insert_one({"_id": "abc"})
    assert t.find_one({"_id": re.compile("abc")}) == {"_id": "abc"}
    assert t.find_one({"_id": {"x": 2}}, {"_id": 1}) == {"_id": {"x": 2}}

    t.drop()
    zero, one = make(0), make(1)
    t.insert_many([{"_id": zero, "a": 0, "b": [{"c": 1}, {"c": 2}]}, {"_id": one, "a": 1, "b": [{"c": 3}, {"c": 4}]}])
    cases: list[tuple[Any, dict[str, Any], dict[str, Any]]] = [
        (one, {"a": 1}, {"_id": one, "a": 1}),
        (one, {"_id": 0, "a": 1}, {"a": 1}),
        (zero, {"_id": 1, "a": 1}, {"_id": zero, "a": 0}),
        (one, {"foobar": 1}, {"_id": one}),
        (one, {"_id": 0, "foobar": 1}, {}),
        (one, {"_id": 0}, {"a": 1, "b": [{"c": 3}, {"c": 4}]}),
        (one, {"a": 0}, {"_id": one, "b": [{"c": 3}, {"c": 4}]}),
        (one, {"foobar": 0}, {"_id": one, "a": 1, "b": [{"c": 3}, {"c": 4}]}),
        (one, {"b": 0}, {"_id": one, "a": 1}),
        (zero, {"a": 0, "b": 0}, {"_id": zero}),
        (zero, {"a": 0, "b": 0, "_id": 0}, {}),
        (zero, {"_id": 0, "b.c": 1}, {"b": [{"c": 1}, {"c": 2}]}),
        (one, {"foo.bar": 1}, {"_id": one}),
        (one, {"b": {"$elemMatch": {"c": 4}}}, {"_id": one, "b": [{"c": 4}]}),
    ]
    for wanted, projection, expected in cases:
        assert next(t.find({"_id": wanted}, projection)) == expected, projection
    missing = make(8)
    assert list(t.find({"_id": missing}, {"_id": 1})) == list(t.find({"_id": missing}, {"_id": 0})) == []
    assert next(t.find({"_id": one}, return_key=True)) == {"_id": one}
    assert next(t.find({"_id": one}, {"a": 1}, return_key=True)) == {"_id": one}
    for bound in ("min", "max"):  # sent as a command: pymongo's cursor refuses min/max without a hint itself
        with pytest.raises(OperationFailure) as refused:
            db.command({"find": "idhack", "filter": {"_id": make(2)}, bound: {"_id": one}})
        assert refused.value.code in (2, 51173), bound  # NoQueryExecutionPlans on older servers


# --- jstests/aggregation/sources/merge/mode_keep_existing_insert.js ------------------------------
# Ported for the $merge _id lookup (patches/merge-id-scan.md): the sections matching on _id, the
# default "on": into a missing and an existing target, documents changed, added and deleted in the
# source, a unique index of the target violated (DuplicateKey, nothing written), and a source whose
# _id is projected out (each document gets a new _id and is inserted). Not ported: the sections with
# an explicit "on" field (other unique indexes: not what the lookup changed) and collection options.

KEEP_EXISTING = [{"$merge": {"into": "target", "whenMatched": "keepExisting", "whenNotMatched": "insert"}}]


def _merged(db: Database, pipeline: list[dict[str, Any]] = KEEP_EXISTING) -> list[dict[str, Any]]:
    list(db.source.aggregate(pipeline))
    return list(db.target.find().sort("_id", 1))


def test_merge_keep_existing_insert_matches_on_id(db: Database) -> None:
    first, second = {"_id": 1, "a": 1, "b": "a"}, {"_id": 2, "a": 2, "b": "b"}
    db.source.insert_one(dict(first))
    assert _merged(db) == [first]  # into a collection that does not exist
    db.source.insert_one(dict(second))
    assert _merged(db) == [first, second]  # into an existing one
    assert _merged(db) == [first, second]  # unchanged source: nothing changes
    db.source.replace_one({"_id": 2}, {"a": 22, "c": "c"})
    assert _merged(db) == [first, second]  # a matched document is kept as it was
    db.source.replace_one({"_id": 1}, {"a": 11})
    db.source.replace_one({"_id": 2}, {"a": 22, "c": "c", "d": "d"})
    assert _merged(db) == [first, second]
    third, fourth = {"_id": 3, "a": 3, "b": "c"}, {"_id": 4, "a": 4, "c": "d"}
    db.source.insert_one(dict(third))
    assert _merged(db) == [first, second, third]  # a new document is inserted
    db.source.delete_one({"_id": 3})
    db.target.delete_one({"_id": 3})
    db.source.insert_many([dict(third), dict(fourth)])
    assert _merged(db) == [first, second, third, fourth]
    db.source.delete_many({"_id": {"$in": [3, 4]}})
    db.target.delete_many({"_id": {"$in": [3, 4]}})
    db.source.delete_one({"_id": 1})
    assert _merged(db) == [first, second]  # a document deleted from the source stays in the target


def test_merge_keep_existing_insert_refuses_a_unique_key_violation(db: Database) -> None:
    from pymongo.errors import OperationFailure

    db.target.insert_many([{"_id": 1, "a": 1, "b": "a"}, {"_id": 2, "a": 2, "b": "b"}])
    db.source.insert_one({"_id": 4, "a": 1})
    db.target.create_index("a", unique=True)
    with pytest.raises(OperationFailure) as refused:
        list(db.source.aggregate(KEEP_EXISTING))
    assert refused.value.code == 11000  # DuplicateKey
    assert list(db.target.find().sort("_id", 1)) == [{"_id": 1, "a": 1, "b": "a"}, {"_id": 2, "a": 2, "b": "b"}]


def test_merge_keep_existing_insert_of_documents_without_their_id(db: Database) -> None:
    db.source.insert_many([{"_id": 1, "a": 1, "b": "a"}, {"_id": 2, "a": 2, "b": "b"}])
    db.target.insert_one({"_id": 1, "b": "c"})
    list(db.source.aggregate([{"$project": {"_id": 0}}, *KEEP_EXISTING]))
    assert unordered(db.target.find({}, {"_id": 0})) == unordered([{"b": "c"}, {"a": 1, "b": "a"}, {"a": 2, "b": "b"}])


# --- jstests/core/write/delete/remove7.js ----------------------------------------------------------------
# Ported over the wire with a seeded generator in place of Math.random, and fewer rounds (60 of 200): documents
# with arrays of tags under a multikey index, ten more saved each round, then every document holding any of ten
# tags removed. The jstest asserts the count after the remove is 0; here the count before it, what the remove
# deleted, what a find through the tags index returns and its explain's nReturned are also held against the
# documents the test itself inserted (on the offline default, the model's index after each delete keeps its
# entries' record ids: planner.keys.update_index).


def test_remove7_multikey_removes_leave_no_match(db: Database) -> None:
    rng = random.Random(7)

    def tags(n: int = 5) -> list[int]:
        return [rng.randint(1, 20) for _ in range(n)]

    t = db.remove7
    held = {}
    for i in range(1000):
        held[i] = tags()
    t.insert_many([{"_id": i, "tags": held[i]} for i in range(1000)])
    t.create_index([("tags", 1)])
    next_id = 1000
    for _ in range(60):
        for _ in range(10):
            held[next_id] = tags(100)
            t.insert_one({"_id": next_id, "tags": held[next_id]})
            next_id += 1
        wanted = tags(10)
        matching = sorted(i for i, values in held.items() if set(values) & set(wanted))
        query = {"tags": {"$in": wanted}}
        assert db.command("count", t.name, query=query)["n"] == len(matching)
        found = t.find(query, {"_id": 1}).hint("tags_1")
        assert sorted(d["_id"] for d in found) == matching
        assert t.find(query).hint("tags_1").explain()["executionStats"]["nReturned"] == len(matching)
        assert t.delete_many(query).deleted_count == len(matching)
        for i in matching:
            del held[i]
        assert db.command("count", t.name, query=query)["n"] == 0, "not zero after!"
        assert sorted(d["_id"] for d in t.find({}, {"_id": 1})) == sorted(held)

"""keysExamined and seeks counted as MongoDB's IXSCAN counts them.

Source: src/mongo/db/exec/index_scan.cpp (IndexScan::doWork increments keysExamined for every key
the cursor returns, before the IndexBoundsChecker looks at it; a single-interval scan sets an end
position so the key beyond the interval is never returned) and src/mongo/db/query/index_bounds.cpp
(IndexBoundsChecker::checkKey). Documentation reference for the quantities:
https://www.mongodb.com/docs/manual/reference/explain-results/#mongodb-data-explain.executionStats.totalKeysExamined
"""

from __future__ import annotations

from workbook.planner import explain_find
from workbook.planner.bounds import simple_regex_prefix
from workbook.planner.values import sort_key

ID = {"v": 2, "key": {"_id": 1}, "name": "_id_"}
A = {"v": 2, "key": {"a": 1}, "name": "a_1"}


def scan_stats(docs: list[dict], flt: dict, indexes: list[dict] | None = None, **query: object) -> dict:
    e = explain_find(docs, indexes or [ID, A], namespace="t.c", filter=flt, **query)
    stage = e["executionStats"]["executionStages"]
    while stage["stage"] != "IXSCAN":
        stage = stage["inputStage"]
    return {"keys": stage["keysExamined"], "seeks": stage["seeks"], "n": e["executionStats"]["nReturned"]}


TENS = [{"_id": i, "a": i % 10} for i in range(100)]  # values 0..9, ten documents each


def test_equality_examines_exactly_the_matches():
    """A point interval is a single interval: the scan stops at the end position (no extra key)."""
    assert scan_stats(TENS, {"a": 4}) == {"keys": 10, "seeks": 1, "n": 10}


def test_in_with_gaps_examines_one_extra_key_per_interval():
    """$in [1, 3, 5] over values 0..9: after each point the cursor lands on the next value (2, 4, 6),
    counts it, and either seeks to the next point or finishes: matches + 3 keys, 3 seeks."""
    assert scan_stats(TENS, {"a": {"$in": [5, 1, 3]}}) == {"keys": 33, "seeks": 3, "n": 30}


def test_in_over_adjacent_values_needs_no_seek():
    """$in [1, 2, 3] where those values are adjacent in the index: the key after 1 is already in the
    next interval (VALID), so only the final key (4) is extra: matches + 1, one seek."""
    assert scan_stats(TENS, {"a": {"$in": [1, 2, 3]}}) == {"keys": 31, "seeks": 1, "n": 30}


def test_in_ending_at_the_last_key_has_nothing_extra_to_examine():
    """When the last interval ends at the index's last key the cursor simply runs out."""
    assert scan_stats(TENS, {"a": {"$in": [8, 9]}}) == {"keys": 20, "seeks": 1, "n": 20}


def test_range_examines_exactly_the_range():
    """A range on one field is a single interval: keys = matches."""
    assert scan_stats(TENS, {"a": {"$gte": 2, "$lt": 4}}) == {"keys": 20, "seeks": 1, "n": 20}


def test_compound_range_then_equality_seeks_between_prefixes():
    """{a: 1, b: 1} with a in [0, 2] and b == 1 (not a single interval, so the IndexBoundsChecker
    drives the scan): past each b point it seeks to the next a, lands before b == 1, seeks again."""
    docs = [{"_id": i, "a": i // 3, "b": i % 3} for i in range(12)]  # a 0..3, b 0..2
    ab = {"v": 2, "key": {"a": 1, "b": 1}, "name": "a_1_b_1"}
    stats = scan_stats(docs, {"a": {"$gte": 0, "$lte": 2}, "b": 1}, [ID, ab])
    # (0,1) valid; (0,2) ahead -> seek past a=0; (1,0) behind -> seek to (1,1); (1,1) valid;
    # (1,2) -> seek; (2,0) -> seek; (2,1) valid; (2,2): a is at the end of its last interval -> DONE.
    assert stats == {"keys": 8, "seeks": 5, "n": 3}


def test_descending_index_scans_forward_in_its_own_order():
    """An index {a: -1} answers {a: {$in: [...]}} with bounds in descending order."""
    desc = {"v": 2, "key": {"a": -1}, "name": "a_-1"}
    e = explain_find(TENS, [ID, desc], namespace="t.c", filter={"a": {"$in": [1, 3]}})
    scan = e["queryPlanner"]["winningPlan"]["inputStage"]
    assert scan["indexBounds"] == {"a": ["[3, 3]", "[1, 1]"]}
    assert e["executionStats"]["totalKeysExamined"] == 22


def test_bson_comparison_order():
    """https://www.mongodb.com/docs/manual/reference/bson-type-comparison-order/:
    MinKey < null < numbers < strings < objects < arrays < binData < ObjectId < bool < date < ... < MaxKey."""
    import datetime

    from bson import Binary, MaxKey, MinKey, ObjectId, Regex

    ordered = [
        MinKey(),
        None,
        -1,
        2.5,
        3,
        "a",
        "b",
        {"a": 1},
        [1],
        Binary(b"x"),
        ObjectId(),
        False,
        True,
        datetime.datetime(2020, 1, 1),
        Regex("x"),
        MaxKey(),
    ]
    assert sorted(ordered[::-1], key=sort_key) == ordered


def test_simple_regex_prefix_rules():
    """index_bounds_builder.cpp simpleRegex: rooted literal prefixes only; 'i' disables the prefix."""
    assert simple_regex_prefix("^abc", "") == ("abc", True)
    assert simple_regex_prefix("^ab?c", "") == ("a", False)
    assert simple_regex_prefix("^abc", "i") == ("", False)
    assert simple_regex_prefix(r"\Aabc", "m") == ("abc", True)
    assert simple_regex_prefix("abc", "") == ("", False)

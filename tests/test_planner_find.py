"""The planner model on find: plan shapes and counts MongoDB's documentation states."""

from __future__ import annotations

import pytest

from workbook.errors import UnknownHintError, UnsupportedByModelError
from workbook.planner import explain_find, summarize

ID = {"v": 2, "key": {"_id": 1}, "name": "_id_"}

# The inventory collection of https://www.mongodb.com/docs/manual/tutorial/analyze-query-plan/
INVENTORY = [
    {"_id": 1, "item": "f1", "type": "food", "quantity": 500},
    {"_id": 2, "item": "f2", "type": "food", "quantity": 100},
    {"_id": 3, "item": "p1", "type": "paper", "quantity": 200},
    {"_id": 4, "item": "p2", "type": "paper", "quantity": 150},
    {"_id": 5, "item": "f3", "type": "food", "quantity": 300},
    {"_id": 6, "item": "t1", "type": "toys", "quantity": 500},
    {"_id": 7, "item": "a1", "type": "apparel", "quantity": 250},
    {"_id": 8, "item": "a2", "type": "apparel", "quantity": 400},
    {"_id": 9, "item": "t2", "type": "toys", "quantity": 50},
    {"_id": 10, "item": "f4", "type": "food", "quantity": 75},
]


def index(name: str, **extra: object) -> dict:
    """A list_indexes() entry from a name like 'a_1_b_-1'."""
    parts = name.split("_")
    key = {parts[i]: int(parts[i + 1]) for i in range(0, len(parts), 2)}
    return {"v": 2, "key": key, "name": name, **extra}


def find(docs: list[dict], indexes: list[dict], **query: object) -> dict:
    return explain_find(docs, [ID, *indexes], namespace="test.c", **query)


def stages(plan: dict) -> list[str]:
    out = []
    while plan:
        out.append(plan["stage"])
        plan = plan.get("inputStage")
    return out


def ixscan(explain: dict) -> dict:
    plan = explain["queryPlanner"]["winningPlan"]
    while plan["stage"] != "IXSCAN":
        plan = plan["inputStage"]
    return plan


def test_query_without_index_scans_the_collection():
    """https://www.mongodb.com/docs/manual/tutorial/analyze-query-plan/ (Query with No Index):
    COLLSCAN, nReturned 3, totalKeysExamined 0, totalDocsExamined 10."""
    e = find(INVENTORY, [], filter={"quantity": {"$gte": 100, "$lte": 200}})
    assert e["queryPlanner"]["winningPlan"]["stage"] == "COLLSCAN"
    stats = e["executionStats"]
    assert (stats["nReturned"], stats["totalKeysExamined"], stats["totalDocsExamined"]) == (3, 0, 10)


def test_query_with_index_examines_only_matching_keys():
    """Same page (Query with Index): FETCH over IXSCAN {quantity: 1}, 3 keys, 3 docs, 3 returned."""
    e = find(INVENTORY, [index("quantity_1")], filter={"quantity": {"$gte": 100, "$lte": 200}})
    assert stages(e["queryPlanner"]["winningPlan"]) == ["FETCH", "IXSCAN"]
    assert ixscan(e)["indexBounds"] == {"quantity": ["[100, 200]"]}
    stats = e["executionStats"]
    assert (stats["nReturned"], stats["totalKeysExamined"], stats["totalDocsExamined"]) == (3, 3, 3)
    assert e["modelledBy"].startswith("workbook planner model")


def test_compound_index_equality_first_examines_two_keys():
    """Same page (Compare Performance of Indexes): hint {type: 1, quantity: 1} examines 2 keys for 2."""
    e = find(
        INVENTORY,
        [index("quantity_1_type_1"), index("type_1_quantity_1")],
        filter={"quantity": {"$gte": 100, "$lte": 300}, "type": "food"},
        hint={"type": 1, "quantity": 1},
    )
    assert (e["executionStats"]["totalKeysExamined"], e["executionStats"]["nReturned"]) == (2, 2)


def test_compound_index_range_first_examines_the_gap_keys():
    """Same page: hint {quantity: 1, type: 1} returns 2 documents but examines more keys.

    The page (written for MongoDB 3.x) prints totalKeysExamined 5. The current IndexScan::doWork
    (src/mongo/db/exec/index_scan.cpp) counts every key the cursor lands on, including the key
    (400, "apparel") on which the IndexBoundsChecker answers DONE, so today's servers report 6:
    (100 food) valid, (150 paper) seek, (200 paper) seek, (250 apparel) seek, (300 food) valid, (400) done.
    """
    e = find(
        INVENTORY,
        [index("quantity_1_type_1")],
        filter={"quantity": {"$gte": 100, "$lte": 300}, "type": "food"},
    )
    scan = e["executionStats"]["executionStages"]["inputStage"]
    assert (scan["keysExamined"], scan["seeks"], e["executionStats"]["nReturned"]) == (6, 4, 2)


def test_multi_planner_prefers_the_equality_first_index():
    """https://www.mongodb.com/docs/manual/core/query-plans/: candidate plans race; the more
    productive one wins and the other is listed in rejectedPlans (shape only, no counters)."""
    e = find(
        INVENTORY,
        [index("quantity_1_type_1"), index("type_1_quantity_1")],
        filter={"quantity": {"$gte": 100, "$lte": 300}, "type": "food"},
    )
    assert ixscan(e)["indexName"] == "type_1_quantity_1"
    rejected = e["queryPlanner"]["rejectedPlans"]
    assert [p["inputStage"]["indexName"] for p in rejected] == ["quantity_1_type_1"]
    assert "nReturned" not in rejected[0]


def test_bounds_are_printed_like_mongodb():
    """https://www.mongodb.com/docs/manual/reference/explain-results/ (indexBounds) with type
    bracketing from https://www.mongodb.com/docs/manual/reference/bson-type-comparison-order/."""
    docs = [{"_id": i, "a": i, "s": f"k{i}"} for i in range(10)]
    idx = [index("a_1"), index("s_1")]
    cases = {
        "gt": ({"a": {"$gt": 5}}, {"a": ["(5, inf.0]"]}),
        "lte": ({"a": {"$lte": 5}}, {"a": ["[-inf.0, 5]"]}),
        "range": ({"a": {"$gt": 2, "$lt": 7.5}}, {"a": ["(2, 7.5)"]}),
        "in": ({"a": {"$in": [7, 1, 4, 1]}}, {"a": ["[1, 1]", "[4, 4]", "[7, 7]"]}),
        "ne": ({"a": {"$ne": 3}}, {"a": ["[MinKey, 3)", "(3, MaxKey]"]}),
        "exists": ({"a": {"$exists": True}}, {"a": ["[MinKey, MaxKey]"]}),
        "null": ({"a": None}, {"a": ["[undefined, undefined]", "[null, null]"]}),
        "string gt": ({"s": {"$gt": "k5"}}, {"s": ['("k5", {})']}),
        "string lt": ({"s": {"$lt": "k5"}}, {"s": ['["", "k5")']}),
    }
    for name, (flt, expected) in cases.items():
        assert ixscan(find(docs, idx, filter=flt))["indexBounds"] == expected, name


def test_reverse_scan_prints_reversed_bounds():
    """https://www.mongodb.com/docs/manual/tutorial/sort-results-with-indexes/: a descending sort on
    an ascending index walks it backward; explain prints [MaxKey, MinKey]."""
    docs = [{"_id": i, "a": i} for i in range(5)]
    e = find(docs, [index("a_1")], sort={"a": -1})
    scan = ixscan(e)
    assert scan["direction"] == "backward"
    assert scan["indexBounds"] == {"a": ["[MaxKey, MinKey]"]}
    assert "SORT" not in stages(e["queryPlanner"]["winningPlan"])


def test_regex_prefix_is_tight_and_other_regexes_filter_keys():
    """https://www.mongodb.com/docs/manual/reference/operator/query/regex/#index-use: a case-sensitive
    prefix regex scans a narrow range; other regexes scan all strings and test each key.
    (index_bounds_builder.cpp simpleRegex: "^foo" is EXACT, so no filter remains.)"""
    docs = [{"_id": i, "s": w} for i, w in enumerate(["abc", "abd", "abz", "ac", "b", "Abc"])]
    prefix = find(docs, [index("s_1")], filter={"s": {"$regex": "^ab"}})
    scan = ixscan(prefix)
    assert scan["indexBounds"] == {"s": ['["ab", "ac")', "[/^ab/, /^ab/]"]}
    assert "filter" not in scan and prefix["executionStats"]["nReturned"] == 3
    # 3 matches, then "ac" ends the string interval and the seek to the regex point finds nothing more.
    assert prefix["executionStats"]["totalKeysExamined"] == 4
    anywhere = find(docs, [index("s_1")], filter={"s": {"$regex": "bc", "$options": "i"}})
    scan = ixscan(anywhere)
    assert scan["indexBounds"] == {"s": ['["", {})', "[/bc/i, /bc/i]"]}
    assert scan["filter"] == {"s": {"$regex": "bc", "$options": "i"}}
    assert anywhere["executionStats"]["nReturned"] == 2
    assert anywhere["executionStats"]["totalKeysExamined"] == 6


def test_covered_query_reads_no_documents():
    """https://www.mongodb.com/docs/manual/core/query-optimization/#covered-query: index
    {type: 1, item: 1}, find({type: "food", item: /^c/}, {item: 1, _id: 0}) is covered."""
    docs = [
        {"_id": 1, "type": "food", "item": "cake"},
        {"_id": 2, "type": "food", "item": "bread"},
        {"_id": 3, "type": "food", "item": "cookie"},
        {"_id": 4, "type": "toys", "item": "car"},
    ]
    e = find(
        docs,
        [index("type_1_item_1")],
        filter={"type": "food", "item": {"$regex": "^c"}},
        projection={"item": 1, "_id": 0},
    )
    assert stages(e["queryPlanner"]["winningPlan"]) == ["PROJECTION_COVERED", "IXSCAN"]
    assert e["executionStats"]["totalDocsExamined"] == 0
    assert e["executionStats"]["nReturned"] == 2
    summary = summarize(e)
    assert summary["covered"] and summary["index"] == "type_1_item_1"


def test_projection_including_id_is_not_covered():
    """Same page: the _id field must be excluded (unless indexed) for the query to be covered."""
    docs = [{"_id": 1, "type": "food", "item": "cake"}]
    e = find(docs, [index("type_1_item_1")], filter={"type": "food"}, projection={"item": 1})
    assert stages(e["queryPlanner"]["winningPlan"]) == ["PROJECTION_SIMPLE", "FETCH", "IXSCAN"]
    assert e["executionStats"]["totalDocsExamined"] == 1


SORT_DOCS = [{"_id": i, "a": i % 3, "b": i % 5, "c": i, "d": i % 2} for i in range(30)]


def test_sort_on_equality_prefix_uses_index_order():
    """https://www.mongodb.com/docs/manual/tutorial/sort-results-with-indexes/ (Sort and Non-prefix
    Subset of an Index): index {a, b, c, d}; find({a: 5}).sort({b: 1, c: 1}) needs no SORT stage,
    but find({a: {$gt: 2}}).sort({c: 1}) does."""
    idx = [index("a_1_b_1_c_1_d_1")]
    by_index = find(SORT_DOCS, idx, filter={"a": 1}, sort={"b": 1, "c": 1})
    assert "SORT" not in stages(by_index["queryPlanner"]["winningPlan"])
    blocking = find(SORT_DOCS, idx, filter={"a": {"$gt": 0}}, sort={"c": 1})
    assert stages(blocking["queryPlanner"]["winningPlan"])[:2] == ["FETCH", "SORT"]
    assert summarize(blocking)["inMemorySort"]
    cs = [d["c"] for d in SORT_DOCS if d["a"] > 0]
    assert blocking["executionStats"]["nReturned"] == len(cs)


def test_esr_order_avoids_the_blocking_sort():
    """https://www.mongodb.com/docs/manual/tutorial/equality-sort-range-guideline/: for
    find({manufacturer: "GM", hp: {$gt: 250}}).sort({model: 1}), index {manufacturer, model, hp}
    (equality, sort, range) needs no SORT; {manufacturer, hp, model} sorts in memory."""
    cars = [
        {"_id": i, "manufacturer": ["GM", "Ford"][i % 2], "hp": 200 + i * 7, "model": f"m{i % 4}"} for i in range(40)
    ]
    esr = find(
        cars,
        [index("manufacturer_1_model_1_hp_1")],
        filter={"manufacturer": "GM", "hp": {"$gt": 250}},
        sort={"model": 1},
    )
    assert "SORT" not in stages(esr["queryPlanner"]["winningPlan"])
    ers = find(
        cars,
        [index("manufacturer_1_hp_1_model_1")],
        filter={"manufacturer": "GM", "hp": {"$gt": 250}},
        sort={"model": 1},
    )
    assert "SORT" in stages(ers["queryPlanner"]["winningPlan"])
    expected = sum(1 for c in cars if c["manufacturer"] == "GM" and c["hp"] > 250)
    assert esr["executionStats"]["nReturned"] == ers["executionStats"]["nReturned"] == expected == 16
    # the ESR index returns keys already in model order; the other needs its SORT (on index keys)
    assert stages(ers["queryPlanner"]["winningPlan"]) == ["FETCH", "SORT", "IXSCAN"]


def test_sort_with_limit_pushes_the_limit_into_sort():
    """https://www.mongodb.com/docs/manual/reference/explain-results/ (SORT with limitAmount) and
    planner_analysis.cpp analyzeDataAccess: with a blocking sort, the sort enforces skip + limit."""
    e = find(SORT_DOCS, [], sort={"c": -1}, skip=2, limit=3)
    plan = e["queryPlanner"]["winningPlan"]
    assert stages(plan) == ["SKIP", "SORT", "COLLSCAN"]
    assert plan["inputStage"]["limitAmount"] == 5 and plan["inputStage"]["type"] == "simple"
    assert e["executionStats"]["nReturned"] == 3


def test_limit_skip_projection_positions_without_sort():
    """analyzeDataAccess order: SKIP, then PROJECTION (fetching if needed), then LIMIT on top."""
    e = find(SORT_DOCS, [index("c_1")], filter={"c": {"$gte": 10}}, projection={"b": 1}, skip=2, limit=4)
    assert stages(e["queryPlanner"]["winningPlan"]) == ["LIMIT", "PROJECTION_SIMPLE", "FETCH", "SKIP", "IXSCAN"]
    stats = e["executionStats"]
    assert (stats["nReturned"], stats["totalKeysExamined"], stats["totalDocsExamined"]) == (4, 6, 4)


def test_residual_predicates_filter_on_fetch():
    """https://www.mongodb.com/docs/manual/reference/explain-results/: predicates the index cannot
    answer appear as the FETCH stage's filter; docsExamined counts every fetched document."""
    e = find(INVENTORY, [index("type_1")], filter={"type": "food", "quantity": {"$gt": 90}})
    fetch = e["executionStats"]["executionStages"]
    assert fetch["filter"] == {"quantity": {"$gt": 90}}
    assert (fetch["docsExamined"], fetch["nReturned"]) == (4, 3)


def test_hidden_index_is_not_a_candidate_and_cannot_be_hinted():
    """https://www.mongodb.com/docs/manual/core/index-hidden/: the planner ignores hidden indexes;
    hinting one fails as for a missing index."""
    idx = [index("quantity_1", hidden=True)]
    e = find(INVENTORY, idx, filter={"quantity": 100})
    assert e["queryPlanner"]["winningPlan"]["stage"] == "COLLSCAN"
    with pytest.raises(UnknownHintError, match="hint provided does not correspond to an existing index"):
        find(INVENTORY, idx, filter={"quantity": 100}, hint="quantity_1")


def test_hint_forces_an_index_even_without_a_predicate_on_it():
    """https://www.mongodb.com/docs/manual/reference/method/cursor.hint/: the hinted index is used;
    with no predicate on it the whole index is scanned."""
    e = find(INVENTORY, [index("item_1")], filter={"quantity": 100}, hint="item_1")
    scan = ixscan(e)
    assert scan["indexBounds"] == {"item": ["[MinKey, MaxKey]"]}
    assert e["executionStats"]["totalKeysExamined"] == 10
    natural = find(INVENTORY, [index("quantity_1")], filter={"quantity": 100}, hint={"$natural": 1})
    assert natural["queryPlanner"]["winningPlan"]["stage"] == "COLLSCAN"


def test_id_equality_uses_idhack():
    """https://www.mongodb.com/docs/manual/reference/explain-results/ (IDHACK stage)."""
    e = find(INVENTORY, [], filter={"_id": 4})
    assert e["queryPlanner"]["winningPlan"]["stage"] == "IDHACK"
    assert (e["executionStats"]["totalKeysExamined"], e["executionStats"]["totalDocsExamined"]) == (1, 1)


def test_unsupported_operators_say_what_is_supported():
    """The model refuses what it does not cover instead of guessing."""
    with pytest.raises(UnsupportedByModelError, match=r"does not cover the top-level operator \$where.*supports"):
        find(INVENTORY, [], filter={"$where": "true"})
    with pytest.raises(UnsupportedByModelError, match=r"\$bitsAllSet"):
        find(INVENTORY, [], filter={"quantity": {"$bitsAllSet": 2}})

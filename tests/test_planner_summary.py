"""summarize() on modelled explains and on real server explain shapes.

Shapes follow https://www.mongodb.com/docs/manual/reference/explain-results/ (classic
queryPlanner.winningPlan; SBE since 7.0 nests the tree under winningPlan.queryPlan; aggregate
explains list stages with $cursor first; SBE $lookup appears as an EQ_LOOKUP stage).
"""

from __future__ import annotations

from workbook.planner import summarize

CLASSIC_FIND = {
    "queryPlanner": {
        "winningPlan": {
            "stage": "FETCH",
            "inputStage": {
                "stage": "IXSCAN",
                "indexName": "quantity_1",
                "isMultiKey": False,
                "keyPattern": {"quantity": 1},
            },
        }
    },
    "executionStats": {"nReturned": 3, "executionTimeMillis": 0, "totalKeysExamined": 3, "totalDocsExamined": 3},
}

SBE_COVERED = {
    "explainVersion": "2",
    "queryPlanner": {
        "winningPlan": {
            "queryPlan": {
                "stage": "PROJECTION_COVERED",
                "inputStage": {"stage": "IXSCAN", "indexName": "a_1_b_1", "isMultiKey": False},
            },
            "slotBasedPlan": {"slots": "...", "stages": "[2] cfilter ..."},
        }
    },
    "executionStats": {
        "nReturned": 5,
        "totalKeysExamined": 5,
        "totalDocsExamined": 0,
        "executionStages": {"stage": "project", "inputStage": {"stage": "ixseek"}},
    },
}

CLASSIC_SORT_COLLSCAN = {
    "queryPlanner": {
        "winningPlan": {
            "stage": "SORT",
            "sortPattern": {"price": 1},
            "inputStage": {"stage": "COLLSCAN", "filter": {"type": {"$eq": "food"}}},
        }
    },
    "executionStats": {"nReturned": 4, "totalKeysExamined": 0, "totalDocsExamined": 10},
}

AGG_LOOKUP = {
    "stages": [
        {
            "$cursor": {
                "queryPlanner": {"winningPlan": {"stage": "COLLSCAN"}},
                "executionStats": {"nReturned": 4, "totalKeysExamined": 0, "totalDocsExamined": 4},
            }
        },
        {
            "$lookup": {"from": "products", "as": "p", "localField": "sku", "foreignField": "sku"},
            "totalDocsExamined": 4,
            "totalKeysExamined": 4,
            "collectionScans": 0,
            "indexesUsed": ["sku_1"],
            "nReturned": 4,
        },
    ],
}

SBE_EQ_LOOKUP = {
    "explainVersion": "2",
    "queryPlanner": {
        "winningPlan": {
            "queryPlan": {
                "stage": "EQ_LOOKUP",
                "foreignCollection": "test.products",
                "strategy": "IndexedLoopJoin",
                "indexName": "sku_1",
                "inputStage": {"stage": "COLLSCAN"},
            }
        }
    },
    "executionStats": {"nReturned": 4, "totalKeysExamined": 4, "totalDocsExamined": 8},
}


def test_classic_find():
    s = summarize(CLASSIC_FIND)
    assert (s["plan"], s["index"], s["nReturned"], s["keysExamined"], s["docsExamined"]) == (
        "IXSCAN",
        "quantity_1",
        3,
        3,
        3,
    )
    assert not s["covered"] and not s["inMemorySort"] and s["docsExaminedPerReturned"] == 1.0
    assert s["source"] == "MongoDB server explain"


def test_sbe_query_plan_is_read_under_queryPlan():
    s = summarize(SBE_COVERED)
    assert (s["index"], s["covered"], s["docsExamined"]) == ("a_1_b_1", True, 0)


def test_collscan_with_in_memory_sort():
    s = summarize(CLASSIC_SORT_COLLSCAN)
    assert (s["plan"], s["index"], s["inMemorySort"], s["docsExaminedPerReturned"]) == ("COLLSCAN", None, True, 2.5)


def test_aggregate_with_lookup_adds_the_lookup_figures():
    s = summarize(AGG_LOOKUP)
    assert s["lookups"][0]["indexesUsed"] == ["sku_1"]
    assert (s["docsExamined"], s["keysExamined"], s["nReturned"]) == (8, 4, 4)


def test_sbe_eq_lookup():
    s = summarize(SBE_EQ_LOOKUP)
    assert s["lookups"] == [{"from": "test.products", "strategy": "IndexedLoopJoin", "indexesUsed": ["sku_1"]}]
    assert (s["plan"], s["index"]) == ("COLLSCAN", None)


def test_zero_results_has_no_ratio():
    empty = {
        "queryPlanner": {"winningPlan": {"stage": "COLLSCAN"}},
        "executionStats": {"nReturned": 0, "totalKeysExamined": 0, "totalDocsExamined": 7},
    }
    assert summarize(empty)["docsExaminedPerReturned"] is None


def test_a_sort_stage_after_the_cursor_is_a_blocking_sort():
    # the shape of a server's explain of [$match, $unwind, $sort]: the query layer answers the $match,
    # and the $sort runs as its own pipeline stage over every unwound row (DocumentSourceSort)
    cursor = {
        "queryPlanner": {"winningPlan": {"stage": "FETCH", "inputStage": {"stage": "IXSCAN", "indexName": "c_1"}}},
        "executionStats": {"nReturned": 3, "totalKeysExamined": 3, "totalDocsExamined": 3},
    }
    unwind_then_sort = {"stages": [{"$cursor": cursor}, {"$unwind": {"path": "$r"}}, {"$sort": {"sortKey": {"p": 1}}}]}
    sort_absorbed = {"stages": [{"$cursor": cursor}, {"$unwind": {"path": "$r"}}]}
    assert summarize(unwind_then_sort)["inMemorySort"] is True
    assert summarize(sort_absorbed)["inMemorySort"] is False

"""Modelled aggregate explain: find-layer pushdown and $lookup figures.

Documentation: https://www.mongodb.com/docs/manual/core/aggregation-pipeline-optimization/ (a leading
$match/$sort/$limit runs in the query layer) and
https://www.mongodb.com/docs/manual/reference/explain-results/ ($lookup stage statistics added in 5.0:
totalDocsExamined, totalKeysExamined, collectionScans, indexesUsed).
"""

from __future__ import annotations

import pytest

from workbook.errors import UnsupportedByModelError
from workbook.planner import explain_aggregate, summarize

ID = {"v": 2, "key": {"_id": 1}, "name": "_id_"}
ORDERS = [{"_id": i, "sku": f"s{i % 4}", "qty": i} for i in range(12)]
PRODUCTS = [{"_id": i, "sku": f"s{i}", "name": f"p{i}"} for i in range(6)]
SKU = {"v": 2, "key": {"sku": 1}, "name": "sku_1"}


def test_leading_match_sort_limit_run_in_the_find_layer():
    """A pipeline made only of pushable stages explains like a find (no stages array)."""
    e = explain_aggregate(
        {"orders": (ORDERS, [ID, {"v": 2, "key": {"qty": 1}, "name": "qty_1"}])},
        "orders",
        [{"$match": {"qty": {"$gte": 3}}}, {"$sort": {"qty": -1}}, {"$limit": 2}],
    )
    assert "stages" not in e
    plan = e["queryPlanner"]["winningPlan"]
    assert plan["stage"] == "LIMIT" and plan["inputStage"]["inputStage"]["direction"] == "backward"
    assert (e["executionStats"]["nReturned"], e["executionStats"]["totalKeysExamined"]) == (2, 2)
    assert e["command"]["aggregate"] == "orders"


def test_lookup_with_foreign_index_uses_it_per_outer_document():
    """$lookup localField/foreignField with an index on foreignField: each outer document runs an
    indexed equality match; figures are summed over the outer documents."""
    colls = {"orders": (ORDERS, [ID]), "products": (PRODUCTS, [ID, SKU])}
    e = explain_aggregate(
        colls,
        "orders",
        [
            {"$match": {"qty": {"$lt": 6}}},
            {"$lookup": {"from": "products", "localField": "sku", "foreignField": "sku", "as": "product"}},
        ],
    )
    cursor, lookup = e["stages"]
    assert cursor["$cursor"]["queryPlanner"]["winningPlan"]["stage"] == "COLLSCAN"
    assert cursor["nReturned"] == 6
    # each of the 6 orders matches exactly one product: 1 key and 1 document per order
    assert (lookup["totalKeysExamined"], lookup["totalDocsExamined"]) == (6, 6)
    assert (lookup["collectionScans"], lookup["indexesUsed"], lookup["nReturned"]) == (0, ["sku_1"], 6)
    summary = summarize(e)
    assert summary["lookups"][0]["indexesUsed"] == ["sku_1"]
    assert summary["docsExamined"] == 12 + 6


def test_lookup_without_foreign_index_scans_per_outer_document():
    """Without an index on foreignField every outer document costs a collection scan."""
    colls = {"orders": (ORDERS, [ID]), "products": (PRODUCTS, [ID])}
    e = explain_aggregate(
        colls,
        "orders",
        [
            {"$lookup": {"from": "products", "localField": "sku", "foreignField": "sku", "as": "product"}},
        ],
    )
    lookup = e["stages"][1]
    assert lookup["collectionScans"] == 12
    assert lookup["totalDocsExamined"] == 12 * len(PRODUCTS)
    assert lookup["indexesUsed"] == [] and lookup["totalKeysExamined"] == 0


def test_lookup_on_id_uses_the_id_index():
    """foreignField _id is answered by the _id index (IDHACK), reported as "_id_"."""
    colls = {"orders": (ORDERS, [ID]), "products": (PRODUCTS, [ID])}
    e = explain_aggregate(
        colls,
        "orders",
        [
            {"$limit": 3},
            {"$lookup": {"from": "products", "localField": "qty", "foreignField": "_id", "as": "p"}},
        ],
    )
    lookup = e["stages"][1]
    assert lookup["indexesUsed"] == ["_id_"] and lookup["collectionScans"] == 0
    assert lookup["totalDocsExamined"] == 3


def test_stages_after_the_find_layer_are_listed_not_modelled():
    """$group examines nothing itself: the work is the $cursor's; the stage is listed, marked not modelled."""
    e = explain_aggregate(
        {"orders": (ORDERS, [ID])}, "orders", [{"$match": {"qty": {"$gt": 0}}}, {"$group": {"_id": "$sku"}}]
    )
    cursor, group = e["stages"]
    assert cursor["$cursor"]["executionStats"]["totalDocsExamined"] == len(ORDERS)
    assert group["$group"] == {"_id": "$sku"} and "not modelled" in group["modelNote"]
    assert "nReturned" not in group


def test_lookup_after_unmodelled_stages_is_refused():
    """A $lookup fed by a $group reads inputs the model does not compute: refused, not guessed."""
    pipeline = [
        {"$group": {"_id": "$sku"}},
        {"$lookup": {"from": "orders", "localField": "_id", "foreignField": "sku", "as": "o"}},
    ]
    with pytest.raises(UnsupportedByModelError, match=r"\$lookup"):
        explain_aggregate({"orders": (ORDERS, [ID])}, "orders", pipeline)

"""Parts in three shapes: builder invariants, equal answers from every shape, renames and their copies."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import pytest
from pymongo.errors import DuplicateKeyError, WriteError

import workbook
from tests.shape_support import loaded_in_every_shape, same_in_every_shape
from workbook.errors import OperationRejectedError, UnknownChoiceError
from workbook.operations.parts import refresh_part_names
from workbook.shapes.parts import DUPLICATION_POLICY, PART_FACTS, build_embedded, build_hybrid, build_referenced

NOW = datetime(2026, 1, 15, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def tiny():
    return workbook.generate("parts", scale="tiny", seed=7)


def usage(dataset) -> Counter:
    return Counter(line["partId"] for product in dataset.collections["products"] for line in product["parts"])


def most_used(dataset) -> str:
    return usage(dataset).most_common(1)[0][0]


def least_used(dataset) -> str:
    counts = usage(dataset)
    return min(counts, key=lambda part: (counts[part], part))


def expected_cost(dataset, product_id: str) -> float:
    """The bill of materials computed in plain Python from the canonical dataset."""
    parts = {part["_id"]: part for part in dataset.collections["parts"]}
    product = next(p for p in dataset.collections["products"] if p["_id"] == product_id)
    return round(sum(parts[line["partId"]]["cost"] * line["quantity"] for line in product["parts"]), 2)


@pytest.fixture
def all_shapes(engine, tiny):
    """The tiny dataset loaded in every shape; dropped afterwards."""
    yield from loaded_in_every_shape(engine, tiny)


# --- pure builders -------------------------------------------------------------------------


def test_embedded_lines_copy_every_fact_in_the_products_order(tiny):
    parts = {part["_id"]: part for part in tiny.collections["parts"]}
    built = build_embedded(tiny)
    assert set(built) == {"products", "renames"}  # no parts collection: parts live in products
    for product, original in zip(built["products"], tiny.collections["products"], strict=True):
        assert [line["partId"] for line in product["parts"]] == [line["partId"] for line in original["parts"]]
        for line, source in zip(product["parts"], original["parts"], strict=True):
            assert line == {"partId": source["partId"], **{f: parts[source["partId"]][f] for f in PART_FACTS}} | {
                "quantity": source["quantity"]
            }


def test_hybrid_copies_only_the_policy_fields_and_current_names(tiny):
    parts = {part["_id"]: part for part in tiny.collections["parts"]}
    built = build_hybrid(tiny)
    assert built["parts"] == tiny.collections["parts"]
    for product in built["products"]:
        for line in product["parts"]:
            assert set(line) == {"partId", "quantity", *DUPLICATION_POLICY["copied"]}
            assert line["name"] == parts[line["partId"]]["name"]
    referenced = build_referenced(tiny)
    assert referenced["products"] == tiny.collections["products"]


def test_the_generator_applied_every_rename_to_the_parts(tiny):
    parts = {part["_id"]: part for part in tiny.collections["parts"]}
    last = {event["partId"]: event["newName"] for event in tiny.collections["renames"]}  # oldest first
    assert last and all(parts[part_id]["name"] == name for part_id, name in last.items())


# --- equal answers ---------------------------------------------------------------------------


def test_reads_answer_the_same_in_every_shape(all_shapes, tiny):
    top, rare = most_used(tiny), least_used(tiny)
    users = same_in_every_shape(all_shapes, "products_using_part", top)
    assert users == sorted(users) and len(users) == usage(tiny)[top]
    assert len(same_in_every_shape(all_shapes, "products_using_part", rare)) == usage(tiny)[rare]
    assert same_in_every_shape(all_shapes, "products_using_part", "part-nope") == []

    products = tiny.collections["products"]
    longest = max(products, key=lambda p: (len(p["parts"]), p["_id"]))["_id"]
    for product_id in {users[0], users[-1], longest, products[0]["_id"]}:
        detail = same_in_every_shape(all_shapes, "product_detail", product_id)
        original = next(p for p in products if p["_id"] == product_id)
        assert [line["partId"] for line in detail["parts"]] == [line["partId"] for line in original["parts"]]
        assert all(set(line) == {"partId", *PART_FACTS, "quantity"} for line in detail["parts"])
        cost = same_in_every_shape(all_shapes, "bill_of_materials_cost", product_id)
        assert cost == expected_cost(tiny, product_id) > 0
    assert same_in_every_shape(all_shapes, "product_detail", "prod-nope") is None
    assert same_in_every_shape(all_shapes, "bill_of_materials_cost", "prod-nope") is None


def test_a_rename_rewrites_each_shape_differently_and_reads_agree_after(all_shapes, tiny):
    top = most_used(tiny)
    uses = usage(tiny)[top]
    changed = {shape: op.rename_part(top, "Gold Gizmo 9mm", now=NOW) for shape, op in all_shapes.items()}
    assert changed == {"embedded": uses, "referenced": 1, "hybrid": 1 + uses}
    users = same_in_every_shape(all_shapes, "products_using_part", top)
    for product_id in (users[0], users[-1]):
        detail = same_in_every_shape(all_shapes, "product_detail", product_id)
        assert next(line for line in detail["parts"] if line["partId"] == top)["name"] == "Gold Gizmo 9mm"
        assert same_in_every_shape(all_shapes, "bill_of_materials_cost", product_id) == expected_cost(tiny, product_id)
    for op in all_shapes.values():
        event = op.db.renames.find_one({"partId": top}, sort=[("renamedAt", -1)])
        assert (event["newName"], event["renamedAt"]) == ("Gold Gizmo 9mm", NOW.replace(tzinfo=None))
        assert op.db.renames.count_documents({}) == len(tiny.collections["renames"]) + 1
        assert op.rename_part(top, "Gold Gizmo 9mm") == 0  # already the name: nothing rewritten, nothing logged
        assert op.db.renames.count_documents({}) == len(tiny.collections["renames"]) + 1


def test_bad_renames_are_rejected_with_the_fix(all_shapes, tiny):
    for op in all_shapes.values():
        with pytest.raises(OperationRejectedError, match="non-empty"):
            op.rename_part(most_used(tiny), "  ")
        with pytest.raises(OperationRejectedError, match="No part 'part-nope'"):
            op.rename_part("part-nope", "Anything")


def test_refresh_repairs_copies_left_stale_by_a_direct_write(all_shapes, tiny):
    hybrid = all_shapes["hybrid"]
    top, rare = most_used(tiny), least_used(tiny)
    for part_id in (top, rare):
        hybrid.db.parts.update_one({"_id": part_id}, {"$set": {"name": f"Renamed {part_id}"}})  # bypasses rename_part
    product_id = same_in_every_shape(all_shapes, "products_using_part", top)[0]
    stale = hybrid.product_detail(product_id)
    assert next(line for line in stale["parts"] if line["partId"] == top)["name"] != f"Renamed {top}"
    assert refresh_part_names(hybrid.db) == usage(tiny)[top] + usage(tiny)[rare]
    fresh_line = next(line for line in hybrid.product_detail(product_id)["parts"] if line["partId"] == top)
    assert fresh_line["name"] == f"Renamed {top}"
    assert refresh_part_names(hybrid.db) == 0  # nothing stale is left


# --- validators, indexes and loading ---------------------------------------------------------


def test_validators_reject_bad_product_lines(all_shapes, tiny):
    product_id = tiny.collections["products"][0]["_id"]
    for shape, op in all_shapes.items():
        with pytest.raises(WriteError) as caught:
            op.db.products.update_one({"_id": product_id}, {"$set": {"parts.0.quantity": 0}})
        assert caught.value.code == 121, shape
        with pytest.raises(WriteError):
            op.db.products.update_one({"_id": product_id}, {"$set": {"parts": []}})
    with pytest.raises(WriteError):
        all_shapes["hybrid"].db.products.update_one({"_id": product_id}, {"$unset": {"parts.0.name": ""}})
    with pytest.raises(WriteError):
        all_shapes["embedded"].db.products.update_one({"_id": product_id}, {"$unset": {"parts.0.cost": ""}})


def test_sku_is_unique(all_shapes, tiny):
    part = tiny.collections["parts"][0]
    with pytest.raises(DuplicateKeyError):
        all_shapes["referenced"].db.parts.insert_one({**part, "_id": "part-copy"})


def test_unknown_operation_lists_the_choices(all_shapes):
    message = "Choose from: bill_of_materials_cost, product_detail, products_using_part, rename_part"
    with pytest.raises(UnknownChoiceError, match=message):
        all_shapes["referenced"].run("rename", "part-000001", "x")

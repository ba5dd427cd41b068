"""Lesson 03 and 05 helpers on the tiny store: product page, listing, projection, stock, sizes."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

import workbook
from workbook.calls import measure_call
from workbook.patterns import document_size, product_page
from workbook.shapes import SHAPE_NAMES


@pytest.fixture(scope="module")
def store():
    return workbook.generate("store", scale="tiny", seed=7)


@pytest.fixture(scope="module")
def shapes(store):
    loaded = [
        workbook.load(store, shape, workbook.connect(database=f"t{uuid.uuid4().hex[:8]}", quiet=True), progress=False)
        for shape in SHAPE_NAMES
    ]
    yield dict(zip(SHAPE_NAMES, loaded, strict=True))
    for each in loaded:
        each.db.client.drop_database(each.db.name)


@pytest.fixture(scope="module")
def top(shapes):
    return product_page.most_reviewed_product(shapes["referenced"])


def test_most_reviewed_product_is_the_same_in_every_shape(shapes, store, top):
    counts = {}
    for review in store.collections["reviews"]:
        counts[review["productId"]] = counts.get(review["productId"], 0) + 1
    assert top == min(counts, key=lambda p: (-counts[p], p))
    assert product_page.most_reviewed_product(shapes["embedded"]) == top


def test_product_page_work_one_read_in_hybrid_three_in_referenced(shapes, top):
    work = product_page.product_page_work(list(shapes.values()), top)
    assert work.loc["hybrid", "round_trips"] == 1 and work.loc["hybrid", "docs_examined"] == 1
    assert work.loc["referenced", "round_trips"] == 3
    assert work.loc["embedded", "bytes_returned"] > work.loc["hybrid", "bytes_returned"]


def test_listing_with_rating_agrees_in_every_shape(shapes, store):
    category = store.collections["products"][0]["category"]["_id"]
    answers = product_page.listing_answers(list(shapes.values()), category)
    assert answers["embedded"] == answers["referenced"] == answers["hybrid"]
    assert answers["hybrid"] and all(
        r["ratingAverage"] is None or 1 <= r["ratingAverage"] <= 5 for r in answers["hybrid"]
    )
    work = product_page.listing_work(list(shapes.values()), category)
    assert work.loc["referenced", "round_trips"] == 2 and work.loc["hybrid", "round_trips"] == 1


def test_projection_saves_bytes_and_only_a_covered_one_saves_fetches(shapes, store):
    category = store.collections["products"][0]["category"]["_id"]
    frame = product_page.projection_work(shapes["hybrid"]["products"], category)
    whole, named, covered = (frame.loc[label] for label in product_page.PROJECTIONS)
    assert whole["docs_examined"] == named["docs_examined"] == whole["docs_returned"] > 0
    assert covered["docs_examined"] == 0 and bool(covered["covered"]) and not bool(named["covered"])
    assert whole["bytes_returned"] > named["bytes_returned"] > covered["bytes_returned"]


def test_stock_write_cost_leaves_stock_unchanged_and_inventory_is_smallest(shapes, top):
    stock = shapes["hybrid"]["products"].find_one({"_id": top})["stock"]
    frame = product_page.stock_write_cost(list(shapes.values()), top)
    assert frame["document_bytes"].idxmin() == "inventory (isolated)"
    assert frame.loc["products (embedded)", "document_bytes"] > frame.loc["products (hybrid)", "document_bytes"]
    assert shapes["hybrid"]["products"].find_one({"_id": top})["stock"] == stock
    assert shapes["hybrid"].db["inventory"].find_one({"_id": top})["stock"] == stock


def test_bloat_table_and_hot_cold_split(shapes, store):
    category = store.collections["products"][0]["category"]["_id"]
    bloat = document_size.bloat_table(list(shapes.values()), category)
    assert (
        bloat.loc["embedded", "avg_obj_bytes"]
        > bloat.loc["hybrid", "avg_obj_bytes"]
        > bloat.loc["referenced", "avg_obj_bytes"]
    )
    assert bloat["listing_bytes_per_product"].nunique() == 1  # the listing needs the same bytes in every shape
    split = document_size.split_hot_cold(shapes["embedded"], db=shapes["embedded"].db)
    hot = split["products_hot"].find_one({"_id": store.collections["products"][0]["_id"]})
    cold = split["products_cold"].find_one({"_id": hot["_id"]})
    assert set(hot) | set(cold) == set(shapes["embedded"]["products"].find_one({"_id": hot["_id"]}))
    assert set(hot) & set(cold) == {"_id"}
    table = document_size.split_table(shapes["embedded"], split, category)
    assert table.loc["products_hot", "avg_obj_bytes"] < table.loc["products (embedded)", "avg_obj_bytes"] / 5


def test_binary_table_photo_inside_dominates_the_document(shapes):
    frame = document_size.binary_table(shapes["hybrid"].db, image_bytes=50_000, products=5)
    assert frame.loc["photo inside the document", "avg_obj_bytes"] > 50_000
    assert frame.loc["photo URL (object storage)", "avg_obj_bytes"] < 200


def test_measure_call_counts_round_trips_and_returns_the_result(shapes, top):
    work = measure_call(shapes["hybrid"].db, shapes["hybrid"]["products"].find_one, {"_id": top})
    assert work.round_trips == 1 and work.result["_id"] == top and work.commands == ["find"]


def test_a_new_review_is_one_update_of_the_product(shapes, top):
    """Last: it adds a review to the hybrid shape."""
    hybrid = shapes["hybrid"]
    before = hybrid.ops.product_page(top)
    sent = product_page.add_review_commands(
        hybrid, top, "cust-000001", 4, "Solid.", now=datetime(2027, 1, 1, tzinfo=UTC)
    )
    updates = sent[sent["command"] == "update"]
    assert list(updates["collection"]) == ["products"]
    assert updates.iloc[0]["operators"] == "$inc, $push" and updates.iloc[0]["$slice"] == 5
    after = hybrid.ops.product_page(top)
    assert after["ratingCount"] == before["ratingCount"] + 1
    assert after["reviews"][0]["text"] == "Solid." and len(after["reviews"]) == 5

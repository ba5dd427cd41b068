"""The store in three shapes: invariants of the builders, equal answers from every shape, real writes."""

from __future__ import annotations

import uuid
from collections import Counter
from datetime import UTC, datetime

import pytest
from pymongo.errors import WriteError

import workbook
from tests.conftest import fingerprint
from tests.shape_support import loaded_in_every_shape, same_in_every_shape
from workbook.dataset_parts import shape_spec
from workbook.errors import OperationRejectedError, UnknownChoiceError
from workbook.shapes.store import RECENT_REVIEWS, build_embedded, build_hybrid, build_referenced

NOW = datetime(2026, 1, 15, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def tiny():
    return workbook.generate("store", scale="tiny", seed=7)


def review_counts(dataset) -> Counter:
    return Counter(r["productId"] for r in dataset.collections["reviews"])


def most_reviewed(dataset) -> str:
    return review_counts(dataset).most_common(1)[0][0]


def unreviewed(dataset) -> str:
    counts = review_counts(dataset)
    return next(p["_id"] for p in dataset.collections["products"] if p["_id"] not in counts)


@pytest.fixture
def all_shapes(engine, tiny):
    """The tiny dataset loaded in every shape; dropped afterwards."""
    yield from loaded_in_every_shape(engine, tiny)


# --- pure builders -------------------------------------------------------------------------


def test_hybrid_keeps_at_most_five_newest_reviews_and_exact_summary(tiny):
    products = build_hybrid(tiny)["products"]
    counts = review_counts(tiny)
    ratings = Counter()
    for review in tiny.collections["reviews"]:
        ratings[review["productId"]] += review["rating"]
    assert max(counts.values()) > RECENT_REVIEWS  # the subset really is a subset somewhere
    for product in products:
        recent = product["recentReviews"]
        assert len(recent) == min(RECENT_REVIEWS, counts[product["_id"]])
        assert [r["createdAt"] for r in recent] == sorted((r["createdAt"] for r in recent), reverse=True)
        assert product["rating"] == {"count": counts[product["_id"]], "sum": ratings[product["_id"]]}


def test_embedded_holds_every_review_and_referenced_none(tiny):
    embedded = build_embedded(tiny)["products"]
    assert sum(len(p["reviews"]) for p in embedded) == len(tiny.collections["reviews"])
    assert all("productId" not in r for p in embedded for r in p["reviews"])
    referenced = build_referenced(tiny)
    assert all("reviews" not in p for p in referenced["products"])
    assert len(referenced["reviews"]) == len(tiny.collections["reviews"])


# --- equal answers ---------------------------------------------------------------------------


def test_reads_answer_the_same_in_every_shape(all_shapes, tiny):
    top, none = most_reviewed(tiny), unreviewed(tiny)
    page = same_in_every_shape(all_shapes, "product_page", top)
    assert page["ratingCount"] == review_counts(tiny)[top] and len(page["reviews"]) == RECENT_REVIEWS
    assert same_in_every_shape(all_shapes, "product_page", none)["ratingAverage"] is None
    assert same_in_every_shape(all_shapes, "product_page", "prod-nope") is None
    category = tiny.collections["products"][0]["category"]["_id"]
    listing = same_in_every_shape(all_shapes, "category_listing", category, page=0, page_size=3)
    assert [p["price"] for p in listing] == sorted(p["price"] for p in listing) and listing
    customer = tiny.collections["orders"][0]["customerId"]
    orders = same_in_every_shape(all_shapes, "my_orders", customer)
    assert [o["createdAt"] for o in orders] == sorted((o["createdAt"] for o in orders), reverse=True)
    first = tiny.collections["orders"][0]["createdAt"]
    report = same_in_every_shape(all_shapes, "monthly_sales_report", first.year, first.month)
    assert report and [r["revenue"] for r in report] == sorted((r["revenue"] for r in report), reverse=True)


def test_writes_then_reads_agree_in_every_shape(all_shapes, tiny):
    top = most_reviewed(tiny)
    for i in range(RECENT_REVIEWS + 2):
        for op in all_shapes.values():
            op.add_review(
                top, "cust-000001", 1 + i % 5, f"review {i}", now=NOW.replace(minute=i), review_id=f"rev-new-{i}"
            )
    page = same_in_every_shape(all_shapes, "product_page", top)
    assert [r["_id"] for r in page["reviews"]] == [f"rev-new-{i}" for i in range(6, 1, -1)]
    assert page["ratingCount"] == review_counts(tiny)[top] + RECENT_REVIEWS + 2
    hybrid = all_shapes["hybrid"].db.products.find_one({"_id": top})
    assert len(hybrid["recentReviews"]) == RECENT_REVIEWS

    product = tiny.collections["products"][0]
    for op in all_shapes.values():
        assert op.place_order("cust-000002", [(product["_id"], 1)], now=NOW, order_id="ord-test-1") == "ord-test-1"
        assert op.change_price(product["_id"], 1.5)
    orders = same_in_every_shape(all_shapes, "my_orders", "cust-000002", limit=1)
    assert orders[0]["items"][0]["price"] == product["price"]  # the price at the time of sale
    assert same_in_every_shape(all_shapes, "product_page", product["_id"])["price"] == 1.5


def test_order_beyond_stock_is_rejected_and_takes_nothing(all_shapes, tiny):
    first, second = tiny.collections["products"][:2]
    op = all_shapes["hybrid"]
    with pytest.raises(OperationRejectedError, match="not enough stock"):
        op.place_order("cust-000001", [(first["_id"], 1), (second["_id"], second["stock"] + 1)])
    stocks = {p["_id"]: p["stock"] for p in op.db.products.find({"_id": {"$in": [first["_id"], second["_id"]]}})}
    assert stocks == {first["_id"]: first["stock"], second["_id"]: second["stock"]}  # the transaction rolled back
    assert op.db.orders.count_documents({"customerId": "cust-000001", "status": "placed"}) == 0


def test_bad_review_is_rejected_with_the_fix(all_shapes, tiny):
    with pytest.raises(OperationRejectedError, match="1 to 5"):
        all_shapes["embedded"].add_review(most_reviewed(tiny), "cust-000001", 9, "great")
    with pytest.raises(OperationRejectedError, match="No product"):
        all_shapes["referenced"].add_review("prod-nope", "cust-000001", 4, "great")


# --- validators and loading ------------------------------------------------------------------


def test_hybrid_validator_rejects_a_sixth_recent_review(all_shapes, tiny):
    db = all_shapes["hybrid"].db
    top = most_reviewed(tiny)
    extra = {"_id": "rev-x", "customerId": "c", "rating": 3, "text": "", "createdAt": NOW}
    with pytest.raises(WriteError) as caught:
        db.products.update_one({"_id": top}, {"$push": {"recentReviews": extra}})  # no $slice
    assert caught.value.code == 121
    with pytest.raises(WriteError):
        db.reviews.insert_one({"productId": top, "customerId": "c", "rating": 6, "createdAt": NOW})


def test_load_is_idempotent_and_reports_sizes(engine, tiny):
    db = workbook.connect(engine, database=f"t{uuid.uuid4().hex[:8]}", quiet=True)
    try:
        first = workbook.load(tiny, "hybrid", db, progress=False)
        db.scratch.insert_one({"_id": "mine"})  # not the shape's: left alone
        loaded = fingerprint(db.client, db.name)
        db.products.update_one({}, {"$set": {"price": 0}})
        db.reviews.delete_many({"rating": 5})
        edited = fingerprint(db.client, db.name)
        second = workbook.load(tiny, "hybrid", db, progress=False)
        assert edited != loaded
        assert fingerprint(db.client, db.name) == loaded  # the same state again, edits undone
        frame = second.to_frame()
        assert frame.loc["reviews", "documents"] == len(tiny.collections["reviews"])
        assert frame.loc["products", "max_bytes"] >= frame.loc["products", "avg_bytes"] > 0
        assert first.to_frame().equals(frame)
        assert db.scratch.count_documents({}) == 1
    finally:
        db.client.drop_database(db.name)


def test_switching_a_database_between_shapes_leaves_no_stale_collections(engine, tiny):
    db = workbook.connect(engine, database=f"t{uuid.uuid4().hex[:8]}", quiet=True)
    try:
        workbook.load(tiny, "referenced", db, progress=False)
        db.notes.insert_one({"_id": "mine"})
        workbook.load(tiny, "embedded", db, progress=False)
        assert "reviews" not in db.list_collection_names()  # only the referenced shape has it
        assert db.notes.count_documents({}) == 1  # the learner's own collection stays
        workbook.load(tiny, "hybrid", db, progress=False)
        assert db.reviews.count_documents({}) == len(tiny.collections["reviews"])
    finally:
        db.client.drop_database(db.name)


def test_load_refuses_a_database_outside_the_namespace(tiny, monkeypatch):
    from workbook.connection import client_for
    from workbook.errors import NamespaceError

    monkeypatch.delenv("MONGODB_URI", raising=False)
    with pytest.raises(NamespaceError, match="only writes to its own databases"):
        workbook.load(tiny, "hybrid", client_for(None)["course_foreign_guard"], progress=False)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: shape_spec("store", "embeded"), "Choose from: embedded, hybrid, referenced. Did you mean 'embedded'?"),
        (lambda: shape_spec("stor", "hybrid"), "Did you mean 'store'?"),
        (lambda: workbook.generate("store", scale="huge"), "Choose from:"),
    ],
)
def test_unknown_names_list_the_choices(call, message):
    with pytest.raises(UnknownChoiceError, match=message.replace("?", r"\?").replace("(", r"\(")):
        call()


def test_unknown_operation_lists_the_choices(all_shapes):
    with pytest.raises(UnknownChoiceError, match="Did you mean 'product_page'"):
        all_shapes["hybrid"].run("product_pgae", "prod-000001")

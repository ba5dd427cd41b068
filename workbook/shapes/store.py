"""The store in three shapes: where the reviews live.

- embedded: every review inside its product (simple, and the unbounded-array anti-pattern at scale);
- referenced: reviews in their own collection, holding ``productId``;
- hybrid: the reviews collection, plus in each product the 5 newest reviews (subset pattern) and a
  rating summary kept up to date on every new review (computed pattern).

Orders copy the product's name and price at the time of sale (extended reference) in every shape.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from workbook.shapes.spec import CollectionSpec, Document, IndexSpec, Made, ShapeSpec, json_schema

if TYPE_CHECKING:
    from workbook.datasets import Dataset

RECENT_REVIEWS = 5
"""How many reviews the hybrid shape keeps inside each product."""

NEWEST_FIRST = (("createdAt", -1), ("_id", -1))
"""Review order everywhere: newest first, ``_id`` breaking ties."""

_DATE = {"bsonType": "date"}
_RATING = {"bsonType": ["int", "long"], "minimum": 1, "maximum": 5}
_REVIEW_FIELDS = {
    "_id": {"bsonType": "string"},
    "customerId": {"bsonType": "string"},
    "rating": _RATING,
    "createdAt": _DATE,
}
_PRODUCT_FIELDS: dict[str, Any] = {
    "name": {"bsonType": "string"},
    "price": {"bsonType": ["double", "int", "long", "decimal"], "minimum": 0},
    "stock": {"bsonType": ["int", "long"], "minimum": 0},
    "category": {"bsonType": "object", "required": ["_id", "name"]},
}
_PRODUCT_REQUIRED = ["name", "price", "stock", "category"]

CATEGORY_LISTING = IndexSpec(
    (("category._id", 1), ("price", 1), ("_id", 1)),
    "category_price",
    "category listing, ESR: equality on the category, then the sort on price (_id breaks ties)",
)
CATEGORIES = CollectionSpec("categories", validator=json_schema(["name"], {"name": {"bsonType": "string"}}))
CUSTOMERS = CollectionSpec(
    "customers",
    (IndexSpec((("email", 1),), "email_unique", "sign-in by email; no two accounts share one", unique=True),),
    json_schema(["name", "email"], {"name": {"bsonType": "string"}, "email": {"bsonType": "string"}}),
)
ORDERS = CollectionSpec(
    "orders",
    (
        IndexSpec((("customerId", 1), ("createdAt", -1)), "customer_newest", "my orders: one customer, newest first"),
        IndexSpec((("createdAt", 1),), "created", "monthly sales report: a range of dates"),
    ),
    json_schema(
        ["customerId", "createdAt", "items", "total"],
        {
            "customerId": {"bsonType": "string"},
            "createdAt": _DATE,
            "total": {"bsonType": ["double", "int", "long", "decimal"], "minimum": 0},
            "items": {
                "bsonType": "array",
                "minItems": 1,
                "items": {"bsonType": "object", "required": ["productId", "name", "price", "quantity"]},
            },
        },
    ),
)
REVIEWS = CollectionSpec(
    "reviews",
    (IndexSpec((("productId", 1), ("createdAt", -1), ("_id", -1)), "product_newest", "a product's newest reviews"),),
    json_schema(
        ["productId", "customerId", "rating", "createdAt"], {"productId": {"bsonType": "string"}, **_REVIEW_FIELDS}
    ),
)


def _products(**extra_fields: Any) -> CollectionSpec:
    return CollectionSpec(
        "products",
        (CATEGORY_LISTING,),
        json_schema(_PRODUCT_REQUIRED + sorted(extra_fields), {**_PRODUCT_FIELDS, **extra_fields}),
    )


def review_entry(review: Document) -> Document:
    """A review as it sits inside a product (no ``productId``: the product is the parent)."""
    return {key: value for key, value in review.items() if key != "productId"}


def newest(reviews: Sequence[Document], count: int | None = None) -> list[Document]:
    """Reviews newest first (``_id`` breaks ties), at most ``count``."""
    ordered = sorted(reviews, key=lambda r: (r["createdAt"], r["_id"]), reverse=True)
    return ordered if count is None else ordered[:count]


def _reviews_by_product(dataset: Dataset) -> dict[str, list[Document]]:
    grouped: dict[str, list[Document]] = defaultdict(list)
    for review in dataset.documents("reviews"):
        grouped[review["productId"]].append(review_entry(review))
    return grouped


def _shared(dataset: Dataset) -> dict[str, list[Document]]:
    return {name: list(dataset.documents(name)) for name in ("categories", "customers", "orders")}


def build_embedded(dataset: Dataset) -> dict[str, Sequence[Document]]:
    """Every product holds all its reviews, oldest first (as they were appended)."""
    grouped = _reviews_by_product(dataset)

    def with_reviews(product: Document) -> Document:
        return {**product, "reviews": list(reversed(newest(grouped.get(product["_id"], []))))}

    return {"products": Made(dataset.documents("products"), with_reviews), **_shared(dataset)}


def build_referenced(dataset: Dataset) -> dict[str, Sequence[Document]]:
    """Products without reviews; reviews in their own collection."""
    return {
        "products": list(dataset.documents("products")),
        "reviews": list(dataset.documents("reviews")),
        **_shared(dataset),
    }


def build_hybrid(dataset: Dataset) -> dict[str, Sequence[Document]]:
    """Reviews in their own collection, plus the newest five and a rating summary in each product."""
    grouped = _reviews_by_product(dataset)

    def with_summary(product: Document) -> Document:
        reviews = grouped.get(product["_id"], [])
        summary = {"count": len(reviews), "sum": sum(r["rating"] for r in reviews)}
        return {**product, "recentReviews": newest(reviews, RECENT_REVIEWS), "rating": summary}

    products = Made(dataset.documents("products"), with_summary)
    return {"products": products, "reviews": list(dataset.documents("reviews")), **_shared(dataset)}


def shapes() -> dict[str, ShapeSpec]:
    """The store's three shapes."""
    review_array = {
        "bsonType": "array",
        "items": {"bsonType": "object", "required": list(_REVIEW_FIELDS), "properties": _REVIEW_FIELDS},
    }
    recent = {**review_array, "maxItems": RECENT_REVIEWS}
    summary = {
        "bsonType": "object",
        "required": ["count", "sum"],
        "properties": {
            "count": {"bsonType": ["int", "long"], "minimum": 0},
            "sum": {"bsonType": ["int", "long"], "minimum": 0},
        },
    }
    return {
        "embedded": ShapeSpec(
            "store",
            "embedded",
            "every review inside its product: one read per page, but the array grows without bound",
            (_products(reviews=review_array), CATEGORIES, CUSTOMERS, ORDERS),
            build_embedded,
        ),
        "referenced": ShapeSpec(
            "store",
            "referenced",
            "reviews in their own collection: bounded documents, three reads per product page",
            (_products(), REVIEWS, CATEGORIES, CUSTOMERS, ORDERS),
            build_referenced,
        ),
        "hybrid": ShapeSpec(
            "store",
            "hybrid",
            "reviews collection plus the 5 newest and a rating summary in the product (subset + computed)",
            (_products(recentReviews=recent, rating=summary), REVIEWS, CATEGORIES, CUSTOMERS, ORDERS),
            build_hybrid,
        ),
    }

"""The product page and the category listing (lesson 03): what each read needs, and what it costs.

The hybrid store keeps the 5 newest reviews (subset pattern) and a rating summary (computed pattern)
inside each product, updated by one atomic update per new review. Here: the page and the listing
measured per shape, the commands a new review sends, what a projection saves (bytes, not work,
unless the query is covered), and what isolating the stock count saves a sale.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import pandas as pd
from pymongo.collection import Collection

from workbook.calls import Work, measure_call
from workbook.errors import WorkbookError
from workbook.loaded import Loadable, LoadedShape, loaded_shapes
from workbook.operations.store import PAGE_SIZE
from workbook.patterns.work import work_table

LISTING_SORT = [("price", 1), ("_id", 1)]
"""The category listing's order: cheapest first, ``_id`` breaking ties (the ``category_price`` index)."""

PROJECTIONS: dict[str, dict[str, int] | None] = {
    "whole document": None,
    "name and price": {"name": 1, "price": 1},
    "covered: price and _id": {"price": 1, "_id": 1},
}
"""Three ways to read one listing page: no projection, the fields shown, only fields the index holds."""


def most_reviewed_product(loaded: LoadedShape) -> str:
    """The ``_id`` of the product with the most reviews (the biggest embedded document)."""
    if "reviews" in loaded.collection_names:
        pipeline: list[dict[str, Any]] = [{"$group": {"_id": "$productId", "n": {"$sum": 1}}}]
        source = loaded["reviews"]
    else:
        pipeline = [{"$project": {"n": {"$size": {"$ifNull": ["$reviews", []]}}}}]
        source = loaded["products"]
    top = next(source.aggregate([*pipeline, {"$sort": {"n": -1, "_id": 1}}, {"$limit": 1}]))
    return str(top["_id"])


def product_page_work(shapes: Loadable, product_id: str) -> pd.DataFrame:
    """The product page of ``product_id`` in each shape: round trips, documents and keys examined, bytes."""
    rows = {s.shape: measure_call(s.db, s.ops.run, "product_page", product_id) for s in loaded_shapes(shapes)}
    return work_table(rows)


def add_review_commands(
    loaded: LoadedShape, product_id: str, customer_id: str, rating: int, text: str, *, now: datetime | None = None
) -> pd.DataFrame:
    """Add a review and list the commands it sent: command, collection, and the update operators used."""
    work = measure_call(None, loaded.ops.run, "add_review", product_id, customer_id, rating, text, now=now)
    rows = []
    for command in work.sent:
        name, body = command["name"], command["command"]
        updates = body.get("updates", []) if name == "update" else []
        operators = sorted({op for u in updates for op in u.get("u", {})})
        slices = [
            push.get("$slice")
            for u in updates
            for push in (u.get("u", {}).get("$push", {}) or {}).values()
            if isinstance(push, Mapping)
        ]
        rows.append(
            {
                "command": name,
                "collection": str(body.get(name, ""))
                if name in ("insert", "update", "find", "delete", "aggregate")
                else "",
                "operators": ", ".join(operators),
                "$slice": slices[0] if slices else None,
            }
        )
    return pd.DataFrame(rows, columns=["command", "collection", "operators", "$slice"]).convert_dtypes()


def listing_with_rating(loaded: LoadedShape, category_id: str, page_size: int = PAGE_SIZE) -> list[dict[str, Any]]:
    """One category page, cheapest first, each product with its rating average (None if unrated)."""
    products = loaded["products"]
    match = {"category._id": category_id}
    if loaded.shape == "hybrid":  # the computed pattern: the summary is in the product
        hybrid = products.find(match, {"name": 1, "price": 1, "rating": 1}).sort(LISTING_SORT).limit(page_size)
        return [_row(p, p["rating"]["sum"] / p["rating"]["count"] if p["rating"]["count"] else None) for p in hybrid]
    if loaded.shape == "embedded":  # every rating of every product on the page comes back to be averaged
        fields = {"name": 1, "price": 1, "reviews.rating": 1}
        embedded = products.find(match, fields).sort(LISTING_SORT).limit(page_size)
        return [_row(p, _mean([r["rating"] for r in p.get("reviews", [])])) for p in embedded]
    page = list(products.find(match, {"name": 1, "price": 1}).sort(LISTING_SORT).limit(page_size))
    averages = {
        row["_id"]: row["average"]
        for row in loaded["reviews"].aggregate(
            [
                {"$match": {"productId": {"$in": [p["_id"] for p in page]}}},
                {"$group": {"_id": "$productId", "average": {"$avg": "$rating"}}},
            ]
        )
    }
    return [_row(p, averages.get(p["_id"])) for p in page]


def _mean(values: list[int]) -> float | None:
    return sum(values) / len(values) if values else None


def _row(product: Mapping[str, Any], average: float | None) -> dict[str, Any]:
    rounded = None if average is None else round(float(average), 2)
    return {"_id": product["_id"], "name": product["name"], "price": product["price"], "ratingAverage": rounded}


def listing_work(shapes: Loadable, category_id: str) -> pd.DataFrame:
    """The category listing with rating averages, per shape: its work counts."""
    rows = {s.shape: measure_call(s.db, listing_with_rating, s, category_id) for s in loaded_shapes(shapes)}
    return work_table(rows)


def listing_answers(shapes: Loadable, category_id: str) -> dict[str, list[dict[str, Any]]]:
    """The listing each shape returns (the same products, prices and averages in every shape)."""
    return {s.shape: listing_with_rating(s, category_id) for s in loaded_shapes(shapes)}


def projection_work(products: Collection, category_id: str, page_size: int = PAGE_SIZE) -> pd.DataFrame:
    """One listing page read three ways (:data:`PROJECTIONS`): bytes returned against documents examined."""
    from workbook.explaining import explain

    rows: dict[str, Work] = {}
    covered: dict[str, bool] = {}
    match = {"category._id": category_id}
    for label, projection in PROJECTIONS.items():

        def read(projection: dict[str, int] | None = projection) -> list[Any]:
            return list(products.find(match, projection).sort(LISTING_SORT).limit(page_size))

        rows[label] = measure_call(products.database, read)
        plan = explain(products, match, projection=projection, sort=LISTING_SORT, limit=page_size)
        covered[label] = bool(plan.summary()["covered"])
    frame = work_table(rows, "projection")
    frame["covered"] = pd.Series(covered)
    return frame


def isolate_stock(loaded: LoadedShape) -> Collection:
    """Copy each product's stock count into an ``inventory`` collection (same ``_id``): the high-write field alone."""
    inventory = loaded.db["inventory"]
    inventory.drop()
    rows = [{"_id": p["_id"], "stock": p["stock"]} for p in loaded["products"].find({}, {"stock": 1})]
    if rows:
        inventory.insert_many(rows)
    return inventory


def stock_write_cost(shapes: Loadable, product_id: str) -> pd.DataFrame:
    """Bytes of the document a sale's stock update must load, lock and rewrite: the product in each
    shape, and the isolated ``inventory`` document (created by :func:`isolate_stock` if missing)."""
    rows = []
    for loaded in loaded_shapes(shapes):
        rows.append({"where the stock lives": f"products ({loaded.shape})", **_write(loaded["products"], product_id)})
    last = loaded_shapes(shapes)[-1]
    if "inventory" not in last.db.list_collection_names():
        isolate_stock(last)
    rows.append({"where the stock lives": "inventory (isolated)", **_write(last.db["inventory"], product_id)})
    return pd.DataFrame(rows).set_index("where the stock lives")


def _write(collection: Collection, product_id: str) -> dict[str, Any]:
    """One stock change, undone after: the size of the document it wrote and the work it took."""
    pipeline: list[dict[str, Any]] = [{"$match": {"_id": product_id}}, {"$project": {"b": {"$bsonSize": "$$ROOT"}}}]
    size = next(collection.aggregate(pipeline), None)
    if size is None:
        raise WorkbookError(f"No product {product_id!r} in {collection.full_name}.", fix="Pick an _id from products.")
    # A restock of one, undone after: a sale's decrement would be refused when the stock is already 0.
    work = measure_call(collection.database, collection.update_one, {"_id": product_id}, {"$inc": {"stock": 1}})
    collection.update_one({"_id": product_id}, {"$inc": {"stock": -1}})
    return {"document_bytes": int(size["b"]), "round_trips": work.round_trips, "docs_examined": work.docs_examined}

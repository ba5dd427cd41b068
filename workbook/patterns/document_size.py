"""Document size against what the hot reads need (lesson 05): the bloated-document test, a hot/cold
split, and binaries kept outside the document."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
from bson import Binary
from pymongo.collection import Collection
from pymongo.database import Database

from workbook.calls import measure_call
from workbook.loaded import Loadable, LoadedShape, loaded_shapes
from workbook.namespace import require_own_database

HOT_FIELDS = ("name", "price", "brand", "category", "stock")
"""What the store's hot reads (category listing, product header, place order) use of a product."""


def avg_obj_bytes(collection: Collection) -> float:
    """``avgObjSize`` from ``collStats``: the average document size, without scanning the documents."""
    return float(collection.database.command("collStats", collection.name).get("avgObjSize", 0.0))


def _listing_bytes(collection: Collection, category_id: str) -> float:
    """Bytes per product the category listing returns (its projection, one page)."""
    from workbook.operations.store import LISTING_FIELDS

    def read() -> list[Any]:
        return list(collection.find({"category._id": category_id}, LISTING_FIELDS).sort("price", 1).limit(20))

    work = measure_call(collection.database, read)
    return work.bytes_returned / max(work.docs_returned, 1)


def bloat_table(shapes: Loadable, category_id: str) -> pd.DataFrame:
    """Per shape: the products' average size against the bytes a listing needs of each (the bloated-document test)."""
    rows = []
    for loaded in loaded_shapes(shapes):
        average = avg_obj_bytes(loaded["products"])
        needed = _listing_bytes(loaded["products"], category_id)
        rows.append(
            {
                "shape": loaded.shape,
                "avg_obj_bytes": round(average),
                "listing_bytes_per_product": round(needed),
                "times_what_is_needed": round(average / needed, 1),
            }
        )
    return pd.DataFrame(rows).set_index("shape")


def split_hot_cold(
    loaded: LoadedShape, hot_fields: Sequence[str] = HOT_FIELDS, db: Database | None = None
) -> dict[str, Collection]:
    """Copy the products into ``products_hot`` (``hot_fields``) and ``products_cold`` (the rest), same ``_id``."""
    from workbook.connection import connect

    db = db if db is not None else connect(database="store_split", quiet=True)
    require_own_database(db.name)
    hot, cold = db["products_hot"], db["products_cold"]
    hot.drop()
    cold.drop()
    hot_rows, cold_rows = [], []
    for product in loaded["products"].find():
        hot_rows.append({k: v for k, v in product.items() if k == "_id" or k in hot_fields})
        cold_rows.append({k: v for k, v in product.items() if k not in hot_fields})
    hot.insert_many(hot_rows)
    cold.insert_many(cold_rows)
    hot.create_index([("category._id", 1), ("price", 1), ("_id", 1)], name="category_price")
    return {"products_hot": hot, "products_cold": cold}


def split_table(loaded: LoadedShape, split: dict[str, Collection], category_id: str) -> pd.DataFrame:
    """Average document size of the products before and after the split, against what the listing needs."""
    rows = [("products (" + loaded.shape + ")", loaded["products"]), *split.items()]
    return (
        pd.DataFrame(
            [
                {
                    "collection": label,
                    "documents": c.estimated_document_count(),
                    "avg_obj_bytes": round(avg_obj_bytes(c)),
                    "listing_bytes_per_product": round(_listing_bytes(c, category_id)) if "cold" not in label else None,
                }
                for label, c in rows
            ]
        )
        .set_index("collection")
        .convert_dtypes()
    )


def binary_table(db: Database, image_bytes: int = 200_000, products: int = 50) -> pd.DataFrame:
    """The same products with a product photo stored inside each document, and as a URL to object storage."""
    require_own_database(db.name)
    inline, outside = db["photos_inline"], db["photos_outside"]
    for collection in (inline, outside):
        collection.drop()
    photo = Binary(b"\x89PNG" + b"\0" * (image_bytes - 4))
    inline.insert_many([{"_id": n, "name": f"product {n}", "price": 10 + n, "photo": photo} for n in range(products)])
    outside.insert_many(
        [
            {"_id": n, "name": f"product {n}", "price": 10 + n, "photoUrl": f"https://images.example.com/p/{n}.png"}
            for n in range(products)
        ]
    )
    rows = []
    for label, collection in (("photo inside the document", inline), ("photo URL (object storage)", outside)):
        stats = db.command("collStats", collection.name)
        rows.append(
            {
                "where the photo lives": label,
                "avg_obj_bytes": round(stats["avgObjSize"]),
                "collection_bytes": int(stats["size"]),
            }
        )
    return pd.DataFrame(rows).set_index("where the photo lives")

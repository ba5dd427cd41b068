"""The document versioning pattern (lesson 13): the current version in one collection, every older one in another.

Reads of "the product now" stay one document through ``_id``, as before; an audit or "what did it
cost on the day of the order?" reads ``products_history``, where each superseded version is a
whole copy keyed ``{productId, version}`` (a unique index, so two writers cannot both store the
same version). An update copies the current document into the history, then updates it with
``$inc: {version: 1}``, filtered on the version it read: if another update got there first,
nothing is modified and the update says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd
from pymongo import ASCENDING, DESCENDING
from pymongo.database import Database

from workbook.calls import measure_call
from workbook.errors import WorkbookError
from workbook.shapes.spec import Document

CURRENT = "products"
HISTORY = "products_history"
HISTORY_INDEX = [("productId", ASCENDING), ("version", DESCENDING)]


@dataclass
class Versioned:
    """The store's products with versions, loaded into ``db``."""

    db: Database

    def __repr__(self) -> str:
        return f"<versioned products ({CURRENT} and {HISTORY}) in {self.db.name}>"


def load_versioned(dataset: Any, db: Database | None = None) -> Versioned:
    """The store's products at version 1 and an empty history (default: ``workbench_<learner>_patterns_versioning``)."""
    from workbook.connection import connect
    from workbook.loading import fill
    from workbook.namespace import require_own_database

    collections = getattr(dataset, "collections", None)
    if getattr(dataset, "name", None) != "store" or not collections:
        raise WorkbookError(
            "Versioned products are built from the store's products.",
            fix='Pass workbook.generate("store", scale=workbook.course_scale(), seed=7).',
        )
    db = db if db is not None else connect(database="patterns_versioning", quiet=True)
    require_own_database(db.name)
    db.drop_collection(CURRENT)
    db.drop_collection(HISTORY)
    db[HISTORY].create_index(HISTORY_INDEX, name="product_version", unique=True)
    fill(db, CURRENT, [{**p, "version": 1} for p in collections["products"]])
    return Versioned(db)


def update_versioned(versioned: Versioned, product_id: str, changes: dict[str, Any]) -> int:
    """Keep the current version in the history, then ``$set`` ``changes``; the new version number."""
    db = versioned.db
    current = db[CURRENT].find_one({"_id": product_id})
    if current is None:
        raise WorkbookError(f"No product {product_id!r} in {db.name}.{CURRENT}.", fix="Pick an _id from products.")
    version = current["version"]
    kept = {**{k: v for k, v in current.items() if k != "_id"}, "productId": product_id}
    db[HISTORY].insert_one({"_id": f"{product_id}:v{version}", **kept})
    done = db[CURRENT].update_one(
        {"_id": product_id, "version": version}, {"$set": dict(changes), "$inc": {"version": 1}}
    )
    if not done.modified_count:
        raise WorkbookError(
            f"{product_id} changed while it was being updated (version {version} is no longer current).",
            fix="Read it again and retry the update.",
        )
    return version + 1


def as_of(versioned: Versioned, product_id: str, version: int) -> Document | None:
    """The product as it was at ``version``: the current document or one from the history."""
    db = versioned.db
    current = db[CURRENT].find_one({"_id": product_id, "version": version})
    if current is not None:
        return current
    return db[HISTORY].find_one({"productId": product_id, "version": version})


def history_frame(versioned: Versioned, product_id: str, fields: tuple[str, ...] = ("price", "stock")) -> pd.DataFrame:
    """Every version of the product, newest first: where it is kept and ``fields``."""
    db = versioned.db
    projection = {"version": 1, **dict.fromkeys(fields, 1)}
    current = db[CURRENT].find_one({"_id": product_id}, projection) or {}
    older = db[HISTORY].find({"productId": product_id}, projection).sort("version", -1)
    rows = [{"kept in": CURRENT, **current}, *({"kept in": HISTORY, **d} for d in older)]
    frame = pd.DataFrame(rows).drop(columns="_id").set_index("version")
    return frame[["kept in", *fields]]


def read_work(versioned: Versioned, product_id: str, version: int) -> pd.DataFrame:
    """The work of reading the product now, and as of an older ``version`` (round trips, keys, documents)."""
    reads = {
        "current (by _id)": measure_call(versioned.db, versioned.db[CURRENT].find_one, {"_id": product_id}),
        f"as of version {version}": measure_call(versioned.db, as_of, versioned, product_id, version),
    }
    rows = [{"read": label, **work.row()} for label, work in reads.items()]
    return pd.DataFrame(rows).set_index("read").drop(columns="bytes_returned").convert_dtypes()

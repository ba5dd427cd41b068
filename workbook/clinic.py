"""The anti-pattern clinic (notebook 11): make each anti-pattern on a course database, then undo it.

Each function here either plants one problem the schema doctor should find (extra indexes, a
collection per day, a case-insensitive regex lookup) or applies the fix its finding recommends.
They write only to the learner's own databases.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from pymongo.collection import Collection
from pymongo.database import Database

from workbook.lessons.search import CASE_INSENSITIVE
from workbook.namespace import require_own_database

"""The collation that compares letters without their case (strength 2: base letters and accents)."""

EXTRA_PRODUCT_INDEXES: tuple[tuple[str, list[tuple[str, int]]], ...] = (
    ("category", [("category._id", 1)]),  # a prefix of category_price: redundant
    ("name", [("name", 1)]),
    ("brand", [("brand", 1)]),
    ("price", [("price", 1)]),
    ("stock", [("stock", 1)]),
    ("created", [("createdAt", 1)]),
    ("rating", [("rating.average", -1)]),
    ("reviews", [("rating.count", -1)]),
    ("brand_price", [("brand", 1), ("price", 1)]),
    ("name_brand", [("name", 1), ("brand", 1)]),
)
"""Indexes someone added "just in case": with ``_id_`` and ``category_price`` that makes 12."""


def over_index(products: Collection) -> list[str]:
    """Add :data:`EXTRA_PRODUCT_INDEXES` to a store's products; returns their names."""
    require_own_database(products.database.name)
    return [products.create_index(keys, name=name) for name, keys in EXTRA_PRODUCT_INDEXES]


def redundant_index_names(report: Any) -> list[str]:
    """Names of the indexes a doctor report found to be a prefix of another index, sorted."""
    return sorted(str(f.evidence["index"]) for f in report.of("unnecessary_indexes") if f.evidence.get("covered_by"))


redundant_indexes = redundant_index_names
"""The old name, kept while notebook 11 calls ``clinic.redundant_indexes(report)``."""


def drop_indexes(collection: Collection, names: list[str]) -> list[str]:
    """Drop the indexes called ``names`` from ``collection``; returns the names of the indexes left, sorted."""
    require_own_database(collection.database.name)
    for name in names:
        collection.drop_index(name)
    return sorted(collection.index_information())


def fresh_database(name: str) -> Database:
    """Your own database ``name`` (``workbench_<learner>_<name>``), emptied first: the same start every run."""
    from workbook.connection import connect

    db = connect(database=name, quiet=True)
    require_own_database(db.name)
    db.client.drop_database(db.name)
    return db


def daily_collections(db: Database, days: int, *, prefix: str = "events", per_day: int = 1) -> list[str]:
    """A collection per day (``events_2020_01_01``...), each with ``per_day`` events; returns their names.

    One ``insert_many`` per day creates its collection: a command each, as on any server.
    """
    require_own_database(db.name)
    start = datetime(2020, 1, 1, tzinfo=UTC)
    names = []
    for offset in range(days):
        day = start + timedelta(days=offset)
        name = f"{prefix}_{day:%Y_%m_%d}"
        db[name].insert_many([{"kind": "view", "at": day + timedelta(hours=h)} for h in range(per_day)])
        names.append(name)
    return names


MERGE_BATCH = 50
"""Daily collections read per aggregation, one ``$unionWith`` stage each (MongoDB allows 1,000 stages; the
offline engine copies what a pipeline has gathered at each ``$unionWith``, so there shorter pipelines are faster)."""


def merge_daily_collections(db: Database, *, prefix: str = "events") -> int:
    """Fold every ``<prefix>_<date>`` collection into one ``<prefix>`` with a ``day`` field; returns how many.

    Per batch of :data:`MERGE_BATCH` collections, one aggregation reads them all with ``$unionWith``
    (giving each document the doctor's compound ``_id`` ``{collection, id}`` and its ``day`` as a
    date) and one ``insert_many`` writes them; then the
    daily collections are dropped and ``{day: 1, at: 1}`` is indexed. (The doctor's command, one
    ``$merge`` per collection, gives the same result; the offline engine's ``$merge`` slows down
    as its target grows, so the clinic inserts.)
    """
    require_own_database(db.name)
    from workbook.schema_doctor.collections import family_merge_pipeline

    pattern = re.compile(rf"^{re.escape(prefix)}_\d{{4}}_\d\d_\d\d$")
    daily = [name for name in sorted(db.list_collection_names()) if pattern.match(name)]
    for first in range(0, len(daily), MERGE_BATCH):
        name, *rest = daily[first : first + MERGE_BATCH]
        # the doctor's own first stage for each: a compound _id {collection, id} and the day as a date
        pipeline: list[dict[str, Any]] = family_merge_pipeline(name, prefix)[:1]
        pipeline += [
            {"$unionWith": {"coll": other, "pipeline": family_merge_pipeline(other, prefix)[:1]}} for other in rest
        ]
        documents = list(db[name].aggregate(pipeline))
        if documents:
            db[prefix].insert_many(documents)
    for name in daily:
        db.drop_collection(name)
    db[prefix].create_index([("day", 1), ("at", 1)], name="day_at")
    return len(daily)


def run_printed_merge(db: Database, *, days: int = 3, prefix: str = "events") -> dict[str, Any]:
    """Run the doctor's printed merge, as printed, on ``days`` daily collections that reuse ``_id`` 1 and 2.

    ``db`` is emptied first (it must be one of yours). Returns the events counted before and after,
    the merged documents' ``_id`` values and the type of their ``day``: nothing may be lost, though
    every day holds an event with ``_id`` 1 and one with ``_id`` 2.
    """
    from workbook.schema_doctor.collections import family_merge_pipeline

    require_own_database(db.name)
    for name in db.list_collection_names():
        db.drop_collection(name)
    start = datetime(2020, 1, 1, tzinfo=UTC)
    names = [f"{prefix}_{start + timedelta(days=offset):%Y_%m_%d}" for offset in range(days)]
    for name in names:
        db[name].insert_many([{"_id": 1, "kind": "view"}, {"_id": 2, "kind": "buy"}])
    before = sum(db[name].count_documents({}) for name in names)
    for name in names:
        db[name].aggregate(family_merge_pipeline(name, prefix))
    merged = list(db[prefix].find().sort("_id", 1))
    return {
        "before": before,
        "after": len(merged),
        "ids": [(doc["_id"]["collection"], doc["_id"]["id"]) for doc in merged],
        "days": sorted({doc["day"] for doc in merged}),
    }


def email_lookup(customers: Collection, *, regex: bool, calls: int = 3) -> list[Any]:
    """The support desk's customer lookup by e-mail, typed in capitals, as a doctor workload (40 a second).

    ``regex=True`` matches with ``/^...$/i`` (no index can serve it); ``regex=False`` matches the
    e-mail exactly under :data:`CASE_INSENSITIVE`, which a collation index serves. The e-mails
    looked up are read here, first, so the doctor observes only the lookups.
    """
    from workbook.bounds import MAX_CALLS, check_count
    from workbook.schema_doctor import HotOperation

    check_count("calls", calls, most=MAX_CALLS, unit="lookups")
    typed = [c["email"].upper() for c in customers.find({}, {"email": 1}).sort("_id", 1).limit(calls)]

    def lookup(db: Any, i: int) -> Any:
        email = typed[i % len(typed)]
        if regex:
            return db.customers.find_one({"email": re.compile(f"^{re.escape(email)}$", re.IGNORECASE)})
        return db.customers.find_one({"email": email}, collation=CASE_INSENSITIVE)

    call: Callable[[Any, int], Any] = lookup
    return [HotOperation("find_customer_by_email", 40, call)]


def case_insensitive_email_index(customers: Collection) -> str:
    """Replace the customers' unique e-mail index by a unique one under :data:`CASE_INSENSITIVE`; returns its name.

    One index on ``{email: 1}`` per key pattern is all the offline default keeps, and an e-mail that
    differs only in case is the same address anyway, so the case-insensitive one takes over uniqueness.
    """
    require_own_database(customers.database.name)
    if "email_unique" in customers.index_information():
        customers.drop_index("email_unique")
    return customers.create_index("email", name="email_ci", unique=True, collation=CASE_INSENSITIVE)


def course_thresholds(scale: str | None = None) -> Any:
    """The doctor's thresholds for the course's data at ``scale`` (default: the course scale).

    The defaults at ``small`` and above. At ``tiny`` the longest arrays hold a few dozen elements,
    so arrays are reported from 20 elements: the same findings, on data small enough for a quick test run.
    """
    from workbook.loading import course_scale
    from workbook.schema_doctor import Thresholds

    if (scale or course_scale()) == "tiny":
        return Thresholds(array_elements=20)
    return Thresholds()

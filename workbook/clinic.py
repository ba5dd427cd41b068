"""The anti-pattern clinic (notebook 11): make each anti-pattern on a course database, then undo it.

Each function here either plants one problem the schema doctor should find (extra indexes, a
collection per day, a case-insensitive regex lookup) or applies the fix its finding recommends.
They write only to the learner's own databases.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from pymongo.collection import Collection
from pymongo.database import Database

from workbook.lessons.search import CASE_INSENSITIVE
from workbook.namespace import require_own_database
from workbook.operations.store import LISTING_FIELDS

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


MERGE_BATCH = 200
"""Daily collections read per aggregation, one ``$unionWith`` stage each (MongoDB allows 1,000 stages). Each batch is
one aggregation and one ``insert_many`` round trip: 2,000 collections merged in 1.85-1.88 s by batches of 200,
2.06-2.08 s by 50 and 1.91-1.95 s by 500 on the offline default (2026-12-06, load 0.6-0.8), now that its
``$unionWith`` copies each document once (patches/union-with-copies.md)."""


def merge_daily_collections(db: Database, *, prefix: str = "events") -> int:
    """Fold every ``<prefix>_<date>`` collection into one ``<prefix>`` with a ``day`` field; returns how many.

    Per batch of :data:`MERGE_BATCH` collections, one aggregation reads them all with ``$unionWith``
    (giving each document the doctor's compound ``_id`` ``{collection, id}`` and its ``day`` as a
    date) and one ``insert_many`` writes them; then the
    daily collections are dropped and ``{day: 1, at: 1}`` is indexed. (The doctor's command, one
    ``$merge`` per collection, gives the same result in one command per collection; the clinic's batches
    take 10 aggregations for 2,000 collections.)
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


def category_listing(products: Collection, *, calls: int = 3) -> list[Any]:
    """The store's category listing alone, as a doctor workload (600 a second): 20 products of a category,
    cheapest first, projected to :data:`LISTING_FIELDS`. The categories are read here, first."""
    from workbook.bounds import MAX_CALLS, check_count
    from workbook.schema_doctor import HotOperation

    check_count("calls", calls, most=MAX_CALLS, unit="listings")
    categories = sorted(products.distinct("category._id"))[:calls]

    def listing(db: Any, i: int) -> Any:
        chosen = {"category._id": categories[i % len(categories)]}
        return list(db.products.find(chosen, LISTING_FIELDS).sort([("price", 1), ("_id", 1)]).limit(20))

    call: Callable[[Any, int], Any] = listing
    return [HotOperation("category_listing", 600, call)]


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


# --- a printed fix, run on a copy: does it lose anything? ---------------------------------------------------

FIX_CHECK_DATABASE = "clinic_fix_check"
"""The learner's database (``workbench_<learner>_clinic_fix_check``) where printed fixes run on copies."""


@dataclass(repr=False)
class FixCheck:
    """A doctor's printed fix, run as printed on a copy of some documents, and what it kept."""

    anti_pattern: str
    copied: str
    counts: dict[str, tuple[int, int]]
    lost: list[str] = field(default_factory=list)

    @property
    def nothing_lost(self) -> bool:
        """True when every document, element and field of the copy is still there after the fix."""
        return not self.lost

    def record(self) -> Any:
        """The check as labelled values: what was copied, the counts before → after, what was lost."""
        from workbook.display import record

        values: dict[str, Any] = {"ran on a copy of": self.copied}
        values.update({f"{name} (before → after)": pair for name, pair in self.counts.items()})
        values["lost"] = "; ".join(self.lost) or "nothing"
        return record(values, caption=f"the printed fix for {self.anti_pattern.replace('_', ' ')}, run on a copy")

    def __repr__(self) -> str:
        return repr(self.record())

    def _repr_html_(self) -> str:
        return str(self.record()._repr_html_())


def try_fix_on_copy(source: Database, finding: Any, *, parents: int = 50, with_longest: bool = True) -> FixCheck:
    """Copy ``parents`` documents the ``finding`` is about (and what they reference) from ``source`` into
    :data:`FIX_CHECK_DATABASE`, under the same collection names, run the finding's printed fix there
    exactly as printed, and count what it kept.

    For unbounded arrays, bloated documents (split along the hot read, split past the size threshold,
    or a binary payload moved to GridFS), data read together and ``$lookup`` on a hot path (the
    fixes that move documents); the copy's database is emptied first. For an array, ``with_longest``
    puts the document with the longest array in the copy (its thousands of elements make the copy and
    its fix take longer).
    """
    from workbook.bounds import check_count
    from workbook.errors import UnknownChoiceError

    check_count("parents", parents, most=10_000, unit="documents")
    runs: dict[str, Callable[[Database, Database, Any, int, bool], FixCheck]] = {
        "unbounded_arrays": _check_array_fix,
        "bloated_documents": _check_bloated_fix,
        "separated_data": _check_embed_fix,
        "lookup_on_hot_path": _check_reference_fix,
    }
    if finding.anti_pattern not in runs:
        raise UnknownChoiceError("finding with a fix that moves documents", finding.anti_pattern, list(runs))
    copy = fresh_database(FIX_CHECK_DATABASE)
    return runs[finding.anti_pattern](source, copy, finding, parents, with_longest)


def _as_printed(finding: Any, pipeline: Any) -> None:
    """Refuse to run anything but what the finding printed."""
    from workbook.schema_doctor.collections import to_mongosh

    if to_mongosh(pipeline) not in finding.command:
        from workbook.errors import WorkbookError

        raise WorkbookError(
            f"the finding did not print {to_mongosh(pipeline)}: nothing was run",
            fix="report it: the doctor's printed command and the pipeline it stands for disagree",
        )


def _copy(source: Collection, target: Collection, filter: dict[str, Any], limit: int = 0) -> list[dict[str, Any]]:
    documents = list(source.find(filter).sort("_id", 1).limit(limit))
    if documents:
        target.insert_many(documents)
    return documents


def _check_array_fix(source: Database, copy: Database, finding: Any, parents: int, with_longest: bool) -> FixCheck:
    from workbook.schema_doctor.arrays import cap_update, move_elements_pipeline, over_cap

    collection, name = finding.where.split(".", 1)
    child = finding.evidence["child_collection"]
    longest = finding.evidence["longest_document_id"]
    originals = _copy(source[collection], copy[collection], {"_id": longest}) if with_longest else []
    originals += _copy(source[collection], copy[collection], {"_id": {"$ne": longest}}, parents - len(originals))
    pipeline = move_elements_pipeline(name, child)
    _as_printed(finding, pipeline)
    _as_printed(finding, over_cap(name))
    copy[collection].aggregate(pipeline)
    copy[child].create_index("parentId")
    copy[collection].update_many(over_cap(name), cap_update(name, []))
    elements = sum(len(_at(d, name) or []) for d in originals)
    lost = []
    for original in originals:
        moved = [e["element"] for e in copy[child].find({"parentId": original["_id"]}).sort("position", 1)]
        if moved != list(_at(original, name) or []):
            lost.append(f"elements of {original['_id']!r}")
        kept = copy[collection].find_one({"_id": original["_id"]})
        if kept is None or (_at(original, name) or [])[-20:] != (_at(kept, name) or []):
            lost.append(f"the newest elements of {original['_id']!r}")
    counts = {
        collection: (len(originals), copy[collection].count_documents({})),
        f"{name} elements, moved to {child}": (elements, copy[child].count_documents({})),
    }
    which = (
        " (the longest array first)" if with_longest else f" (not the longest, {finding.evidence['max_elements']:,})"
    )
    return FixCheck(finding.anti_pattern, f"{len(originals):,} {collection}{which}", counts, lost)


def _at(document: dict[str, Any], path: str) -> Any:
    value: Any = document
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _check_bloated_fix(source: Database, copy: Database, finding: Any, parents: int, longest: bool) -> FixCheck:
    """The three bloated-document fixes: a binary payload goes to GridFS, anything else is split."""
    if "avg_binary_bytes" in finding.evidence:
        return _check_binary_fix(source, copy, finding, parents, longest)
    return _check_split_fix(source, copy, finding, parents, longest)


def _check_split_fix(source: Database, copy: Database, finding: Any, parents: int, _longest: bool) -> FixCheck:
    from workbook.schema_doctor.documents import split_pipeline, split_unset

    collection = finding.where
    # against a hot read the cold fields move; past the size threshold, the biggest document's largest field
    fields = list(finding.evidence.get("cold_fields") or [finding.evidence["largest_field"]])
    biggest = finding.evidence.get("biggest_id")
    originals = [] if biggest is None else _copy(source[collection], copy[collection], {"_id": biggest})
    rest = {} if biggest is None else {"_id": {"$ne": biggest}}
    if parents > len(originals):  # limit(0) would copy them all
        originals += _copy(source[collection], copy[collection], rest, parents - len(originals))
    pipeline = split_pipeline(collection, fields)
    _as_printed(finding, pipeline)
    copy[collection].aggregate(pipeline)
    copy[collection].update_many({}, split_unset(fields))
    details = {d["_id"]: d for d in copy[f"{collection}_details"].find()}
    lost = []
    for original in originals:
        kept = copy[collection].find_one({"_id": original["_id"]}) or {}
        if {**kept, **details.get(original["_id"], {})} != original:
            lost.append(f"fields of {original['_id']!r}")
    counts = {
        collection: (len(originals), copy[collection].count_documents({})),
        f"{collection}_details": (0, len(details)),
    }
    return FixCheck(finding.anti_pattern, f"{len(originals):,} {collection}", counts, lost)


def _check_binary_fix(source: Database, copy: Database, finding: Any, parents: int, _longest: bool) -> FixCheck:
    """Upload each payload to GridFS, run the printed update with its file id, and read every payload back."""
    from gridfs import GridFSBucket

    from workbook.schema_doctor.documents import binary_move_command, binary_move_update

    payload = finding.evidence["fields"][0]
    collection = finding.where.removesuffix(f".{payload}")
    if binary_move_command(collection, payload) not in finding.command:
        from workbook.errors import WorkbookError

        raise WorkbookError(
            f"the finding did not print {binary_move_command(collection, payload)!r}: nothing was run",
            fix="report it: the doctor's printed command and the update it stands for disagree",
        )
    originals = _copy(source[collection], copy[collection], {payload: {"$type": "binData"}}, parents)
    bucket = GridFSBucket(copy)
    for original in originals:
        file_id = bucket.upload_from_stream(f"{collection}/{original['_id']}/{payload}", bytes(original[payload]))
        copy[collection].update_one({"_id": original["_id"]}, binary_move_update(payload, file_id))
    lost = []
    stored = 0
    for original in originals:
        kept = copy[collection].find_one({"_id": original["_id"]}) or {}
        file_id = kept.pop(f"{payload}FileId", None)
        data = bucket.open_download_stream(file_id).read() if file_id is not None else None
        stored += data is not None
        if payload in kept or data != bytes(original[payload]) or {**kept, payload: original[payload]} != original:
            lost.append(f"{payload} of {original['_id']!r}")
    counts = {
        collection: (len(originals), copy[collection].count_documents({})),
        f"{payload} payloads, read back from GridFS": (len(originals), stored),
    }
    return FixCheck(finding.anti_pattern, f"{len(originals):,} {collection}", counts, lost)


def _check_embed_fix(source: Database, copy: Database, finding: Any, parents: int, _longest: bool) -> FixCheck:
    from workbook.schema_doctor.access import embed_pipeline

    parent, child, key = finding.evidence["parent"], finding.evidence["child"], finding.evidence["child_field"]
    originals = _copy(source[parent], copy[parent], {}, parents)
    children = _copy(source[child], copy[child], {key: {"$in": [d["_id"] for d in originals]}})
    pipeline = embed_pipeline(child, key, parent)
    _as_printed(finding, pipeline)
    copy[child].aggregate(pipeline)
    lost = []
    embedded = 0
    for original in originals:
        kept = copy[parent].find_one({"_id": original["_id"]}) or {}
        inside = kept.pop(child, [])
        embedded += len(inside)
        mine = sorted(str(c["_id"]) for c in children if c[key] == original["_id"])
        if kept != original or sorted(str(c["_id"]) for c in inside) != mine:
            lost.append(f"{parent} {original['_id']!r}")
    counts = {
        parent: (len(originals), copy[parent].count_documents({})),
        child: (len(children), copy[child].count_documents({})),
        f"{child} embedded in {parent}": (len(children), embedded),
    }
    return FixCheck(
        finding.anti_pattern, f"{len(originals):,} {parent} and their {len(children):,} {child}", counts, lost
    )


def _check_reference_fix(source: Database, copy: Database, finding: Any, parents: int, _longest: bool) -> FixCheck:
    from workbook.schema_doctor.access import extended_reference_pipeline

    evidence = finding.evidence
    local, local_field, joined, foreign = (
        evidence["local"],
        evidence["local_field"],
        evidence["from"],
        evidence["foreign_field"],
    )
    originals = _copy(source[local], copy[local], {}, parents)
    keys = {str(v) for d in originals for v in _path_values(d, local_field)}
    referenced = [d for d in source[joined].find() if {str(v) for v in _path_values(d, foreign)} & keys]
    if referenced:
        copy[joined].insert_many(referenced)
    pipeline = extended_reference_pipeline(local, local_field, joined, foreign)
    _as_printed(finding, pipeline)
    copy[local].aggregate(pipeline)
    lost = []
    copied = 0
    for original in originals:
        kept = copy[local].find_one({"_id": original["_id"]}) or {}
        refs = kept.pop("copied", [])
        copied += len(refs)
        wanted = {str(v) for v in _path_values(original, local_field)}
        expected = sum(1 for d in referenced if {str(v) for v in _path_values(d, foreign)} & wanted)
        if kept != original or len(refs) != expected:
            lost.append(f"{local} {original['_id']!r}")
    counts = {
        local: (len(originals), copy[local].count_documents({})),
        joined: (len(referenced), copy[joined].count_documents({})),
    }
    return FixCheck(
        finding.anti_pattern, f"{len(originals):,} {local} and the {len(referenced):,} {joined} they join", counts, lost
    )


def _path_values(value: Any, path: str) -> list[Any]:
    """Every value at a dotted ``path``, through arrays, as ``$lookup`` matches them (each array element)."""
    head, _, rest = path.partition(".")
    if isinstance(value, list):
        return [found for element in value for found in _path_values(element, path)]
    if not isinstance(value, dict) or head not in value:
        return []
    inner = value[head]
    if rest:
        return _path_values(inner, rest)
    return list(inner) if isinstance(inner, list) else [inner]


def lookup_ranking(report: Any) -> Any:
    """The report's ``$lookup`` findings as a table, in the doctor's order: by how often the operation runs."""
    import pandas as pd

    from workbook.display import table

    rows = [
        {
            "rank": f.evidence["rank_by_frequency"],
            "operation": f.evidence["operation"],
            "calls per second": f.evidence["per_second"],
            "joins": f"{f.evidence['local']} → {f.evidence['from']}.{f.evidence['foreign_field']}",
            "foreign field indexed": f.evidence["foreign_field_indexed"],
            "severity": f.severity.label,
        }
        for f in sorted(report.of("lookup_on_hot_path"), key=lambda f: f.evidence["rank_by_frequency"])
    ]
    return table(pd.DataFrame(rows).set_index("rank"), caption="$lookup findings, most frequent first")

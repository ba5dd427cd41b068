"""Anti-pattern 1, unbounded arrays: long arrays, and arrays whose longest is far above the average."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from workbook.schema_doctor.collections import to_mongosh
from workbook.schema_doctor.context import Context, Sample
from workbook.schema_doctor.lessons import UNBOUNDED_ARRAYS
from workbook.schema_doctor.report import Finding, Severity
from workbook.schema_doctor.thresholds import MAX_BSON_SIZE

WHY = (
    "Every new element makes the document bigger to read, cache and replicate, a multikey index holds "
    "one key per element, and once the document reaches 16 MiB the next append fails."
)


def check_arrays(ctx: Context) -> Iterator[Finding]:
    """Findings for each top-level array field that is long, or whose longest is far above its average."""
    for collection in ctx.examined():
        ctx.budget.check()
        sample = ctx.sample(collection)
        for name, lengths in _array_lengths(sample).items():
            finding = _judge(ctx, sample, name, lengths)
            if finding is not None:
                yield finding


def _array_lengths(sample: Sample) -> dict[str, list[tuple[int, int, Any]]]:
    """Per array field: (length, bytes, document _id) for every sampled document where it is an array."""
    lengths: dict[str, list[tuple[int, int, Any]]] = {}
    for document in sample.documents:
        for f in document.fields + document.nested:
            if f.type == "array" and f.length is not None:
                lengths.setdefault(f.name, []).append((f.length, f.bytes, document.id))
    return lengths


def _judge(ctx: Context, sample: Sample, name: str, lengths: list[tuple[int, int, Any]]) -> Finding | None:
    limits = ctx.thresholds
    longest, longest_bytes, longest_id = max(lengths, key=lambda row: row[0])
    average = sum(row[0] for row in lengths) / len(lengths)
    at_or_over = sum(1 for row in lengths if row[0] >= limits.array_elements)
    long_array = longest >= limits.array_elements
    skewed = longest >= limits.array_skew_min_elements and longest >= limits.array_skew * max(average, 1e-9)
    if not (long_array or skewed):
        return None
    element_bytes = longest_bytes / longest if longest else 0.0
    evidence: dict[str, Any] = {
        "field": name,
        "max_elements": longest,
        "avg_elements": round(average, 1),
        "documents_at_or_over_threshold": at_or_over,
        "threshold": limits.array_elements,
        "documents_read": len(sample.documents),
        "whole_collection": sample.whole_collection,
        "longest_document_id": longest_id,
        "longest_array_bytes": longest_bytes,
        "bytes_per_element": round(element_bytes, 1),
    }
    evidence.update(_growth(ctx, sample.collection, name, longest_id, longest, element_bytes))
    severity = Severity.WARNING
    if longest >= limits.array_elements_critical or longest_bytes >= MAX_BSON_SIZE // 2:
        severity = Severity.CRITICAL
    if long_array:
        summary = (
            f"{name}: up to {longest:,} elements ({longest_bytes:,} bytes), average {average:,.1f}; "
            f"{at_or_over:,} of {len(sample.documents):,} documents read have {limits.array_elements:,} or more"
        )
    else:
        summary = (
            f"{name}: the longest has {longest:,} elements, {longest / max(average, 1e-9):,.0f}x the average "
            f"of {average:,.1f}: a few documents are already outliers"
        )
    if "growth_per_30_days" in evidence:
        summary += f"; it grew by about {evidence['growth_per_30_days']:,.0f} elements a month"
    child = f"{sample.collection}_{name}"
    evidence["child_collection"] = child
    command = (
        f"// 1. copy every element there is to {child}, one document each, keyed by the parent's _id:\n"
        f"db.{sample.collection}.aggregate({to_mongosh(move_elements_pipeline(name, child))})\n"
        f"db.{child}.createIndex({{parentId: 1}})\n"
        f"// 2. only then cap the array in place (every element is already in {child}):\n"
        f"db.{sample.collection}.updateMany({to_mongosh(over_cap(name))}, {to_mongosh(cap_update(name, []))})\n"
        f"// 3. from now on, each new element goes to both, capped here:\n"
        f"db.{child}.insertOne({{parentId: id, element: entry}})\n"
        f"db.{sample.collection}.updateOne({{_id: id}}, {{$push: {{{json.dumps(name)}: "
        f"{{$each: [entry], $slice: -{CAPPED}}}}}}})"
    )
    return Finding(
        UNBOUNDED_ARRAYS,
        severity,
        f"{sample.collection}.{name}",
        summary,
        evidence,
        WHY,
        f"Copy every element to its own collection keyed by the parent _id ({child}) first; then keep only a "
        f"capped subset (the newest {CAPPED}) in the parent, capped on every write with $push and $each/$slice.",
        command,
    )


CAPPED = 20
"""Elements the printed fix keeps in the parent: the newest 20 (a page)."""


def move_elements_pipeline(name: str, child: str) -> list[dict[str, Any]]:
    """The printed fix's first step: every element of array ``name`` to ``child``, one document each.

    Each gets ``parentId`` (the parent's ``_id``), ``position`` and ``element``, under the compound
    ``_id`` ``{parentId, position}``: running it twice changes nothing, and no element of one parent can
    overwrite another's. The parent is only read.
    """
    return [
        {"$unwind": {"path": f"${name}", "includeArrayIndex": "position"}},
        {
            "$project": {
                "_id": {"parentId": "$_id", "position": "$position"},
                "parentId": "$_id",
                "position": 1,
                "element": f"${name}",
            }
        },
        {"$merge": {"into": child, "on": "_id", "whenMatched": "keepExisting", "whenNotMatched": "insert"}},
    ]


def over_cap(name: str) -> dict[str, Any]:
    """The filter of the documents whose array ``name`` holds more than :data:`CAPPED` elements."""
    return {f"{name}.{CAPPED}": {"$exists": True}}


def cap_update(name: str, entries: list[Any]) -> dict[str, Any]:
    """The update that appends ``entries`` to array ``name`` and keeps its newest :data:`CAPPED` elements."""
    return {"$push": {name: {"$each": entries, "$slice": -CAPPED}}}


def _growth(
    ctx: Context, collection: str, name: str, document_id: Any, length: int, element_bytes: float
) -> dict[str, Any]:
    """Growth of the longest array, when its elements carry a date: elements per 30 days, time to 16 MiB."""
    coll = ctx.db[collection]
    empty: dict[str, Any] = {}
    first = next(
        coll.aggregate([{"$match": {"_id": document_id}}, {"$project": {"first": {"$arrayElemAt": [f"${name}", 0]}}}]),
        empty,
    ).get("first")
    if isinstance(first, datetime):
        path, key = name, None
    elif isinstance(first, dict):
        dated = [k for k, v in first.items() if isinstance(v, datetime)]
        if not dated:
            return {}
        path, key = f"{name}.{dated[0]}", dated[0]
    else:
        return {}
    # One document, projected to the dates alone; min/max here (mongoeco's $unwind+$group took 98 s on 1,855).
    document = coll.find_one({"_id": document_id}, {path: 1}) or empty
    elements: Any = document
    for part in name.split("."):  # the array may sit inside a subdocument (stats.history)
        elements = elements.get(part, []) if isinstance(elements, dict) else []
    moments = [e if key is None else e.get(key) for e in elements if key is None or isinstance(e, dict)]
    dates = [m for m in moments if isinstance(m, datetime)]
    oldest, newest = (min(dates), max(dates)) if dates else (None, None)
    if not isinstance(oldest, datetime) or not isinstance(newest, datetime) or newest <= oldest:
        return {}
    days = (newest - oldest).total_seconds() / 86400
    per_30_days = length / days * 30
    growth: dict[str, Any] = {
        "date_field": path,
        "oldest_element": oldest,
        "newest_element": newest,
        "growth_per_30_days": round(per_30_days, 1),
    }
    if per_30_days > 0 and element_bytes > 0:
        growth["months_to_16_MiB_at_this_rate"] = round(
            max(0.0, MAX_BSON_SIZE / element_bytes - length) / per_30_days, 1
        )
    return growth

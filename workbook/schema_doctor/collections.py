"""Anti-pattern 3, a massive number of collections: too many, or one per date, tenant or device.

>>> name_pattern("logs_2024_01_31"), name_pattern("cust_5f1d7ac3b2e4f9a1c0d3e5f7"), name_pattern("orders")
('logs_<date>', 'cust_<id>', None)
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

from workbook.schema_doctor.context import Context
from workbook.schema_doctor.families import DATE_PART, ID_PART, name_pattern
from workbook.schema_doctor.lessons import MANY_COLLECTIONS
from workbook.schema_doctor.report import Finding, Severity

WHY = (
    "Every collection carries at least an _id index, and the storage engine manages each collection and index "
    "separately: thousands of them strain the replica set and the cache even when most are idle."
)


def check_collections(ctx: Context) -> list[Finding]:
    """Findings for too many collections in the database and for families of dated or id-named ones."""
    limits = ctx.thresholds
    names = ctx.collections()
    findings = []
    if len(names) >= limits.collections:
        findings.append(
            Finding(
                MANY_COLLECTIONS,
                Severity.CRITICAL,
                ctx.db.name,
                f"{len(names):,} collections in one database (threshold {limits.collections:,})",
                {"collections": len(names), "threshold": limits.collections},
                WHY,
                "Merge collections that hold the same kind of document into one, and turn what told them apart into "
                "a field that leads the relevant indexes.",
                "db.stats().collections  // then merge, as for the collection families reported below",
            )
        )
    families: dict[str, list[str]] = defaultdict(list)
    for name in names:
        pattern = name_pattern(name)
        if pattern is not None:
            families[pattern].append(name)
    for pattern, members in sorted(families.items()):
        if len(members) < limits.patterned_collections:
            continue
        merged = re.sub(r"[-_.]*<(date|id)>[-_.]*", "_", pattern).strip("_") or "merged"
        key = "day" if "<date>" in pattern else "sourceId"
        example = members[0]
        findings.append(
            Finding(
                MANY_COLLECTIONS,
                Severity.WARNING,
                pattern,
                f"{len(members):,} collections named {pattern} (e.g. {', '.join(members[:3])})",
                {
                    "pattern": pattern,
                    "collections": len(members),
                    "examples": members[:5],
                    "threshold": limits.patterned_collections,
                },
                WHY,
                f"Merge them into one collection {merged} with a {key} field, indexed first"
                + (
                    "; time-partitioned data fits a time series collection with a TTL instead of dropping collections"
                    if key == "day"
                    else ""
                )
                + ".",
                f'db.getCollection("{example}").aggregate({to_mongosh(family_merge_pipeline(example, merged))})'
                f"  // for each of the {len(members):,}\n"
                f"db.{merged}.createIndex({{{key}: 1}})",
            )
        )
    return findings


def name_date(name: str) -> datetime | None:
    """The date a collection's name holds (``events_2020_01_31`` is 2020-01-31, UTC), None if none.

    >>> [str(name_date(n)) for n in ("events_2020_01_31", "logs_2024_02", "orders")]
    ['2020-01-31 00:00:00+00:00', '2024-02-01 00:00:00+00:00', 'None']
    """
    found = DATE_PART.search(name)
    if found is None:
        return None
    digits = re.sub(r"\D", "", found.group(0))
    year, month, day = int(digits[:4]), int(digits[4:6] or 1), int(digits[6:8] or 1)
    return datetime(year, month, day, tzinfo=UTC)


def family_merge_pipeline(name: str, merged: str) -> list[dict[str, Any]]:
    """The aggregation that folds one collection of a dated or id-named family into ``merged``.

    Each document gets a compound ``_id`` ``{collection, id}``: daily collections often reuse
    ``_id`` values, and ``$merge`` on a plain ``_id`` would let each later day overwrite the earlier
    one. A dated family gets ``day``, the date from the name (a BSON date, not the name); an
    id-named one gets ``sourceId``, the id from the name. Running it twice changes nothing.
    """
    when = name_date(name)
    label: dict[str, Any] = {"day": when} if when is not None else {"sourceId": _id_in(name)}
    return [
        {"$set": {"_id": {"collection": name, "id": "$_id"}, **label}},
        {"$merge": {"into": merged, "on": "_id", "whenMatched": "replace", "whenNotMatched": "insert"}},
    ]


def _id_in(name: str) -> str:
    found = ID_PART.search(name)
    return found.group(0) if found else name


def to_mongosh(value: Any) -> str:
    """A pipeline or value written as mongosh accepts it (dates as ``ISODate``), for printed fixes.

    >>> to_mongosh([{"$set": {"day": datetime(2020, 1, 2, tzinfo=UTC), "n": 1}}])
    '[{$set: {day: ISODate("2020-01-02T00:00:00Z"), n: 1}}]'
    """
    if isinstance(value, datetime):
        return f'ISODate("{value.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}")'
    if isinstance(value, dict):
        items = (f"{_mongosh_key(str(k))}: {to_mongosh(v)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(to_mongosh(v) for v in value) + "]"
    return json.dumps(value)


def _mongosh_key(key: str) -> str:
    return key if re.fullmatch(r"[$A-Za-z_][$\w]*", key) else json.dumps(key)

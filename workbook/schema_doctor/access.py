"""Anti-patterns 5, 6 and 7, read from what the workload's operations send (or the profiler logged).

5. separating data that is read together: one call fetches the same key from several collections;
6. case-insensitive regex (``i``) with no matching collation index;
7. ``$lookup`` on hot paths, ranked by how often the operation runs, and lookups with no index on
   the foreign field.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from bson.regex import Regex

from workbook.schema_doctor.collections import to_mongosh
from workbook.schema_doctor.context import Context
from workbook.schema_doctor.lessons import CASE_INSENSITIVE_REGEX, LOOKUP_ON_HOT_PATH, SEPARATED_DATA
from workbook.schema_doctor.observe import Observation, Sent, parse
from workbook.schema_doctor.report import Finding, Severity

WHY_TOGETHER = (
    "Each call pays a round trip (or a $lookup) per collection, and keeping the pieces consistent on write "
    "needs a multi-document transaction: the data is one document split in several."
)
WHY_REGEX = (
    "With the i flag the server cannot use an index range for the pattern, so it examines far more index keys "
    "or documents than it returns (totalKeysExamined or totalDocsExamined far above nReturned)."
)
WHY_LOOKUP = (
    "The join runs for every document that reaches the stage, on every call: on the most frequent read it "
    "multiplies the work of the hottest path. Without an index on the foreign field each join scans the collection."
)


def check_together(ctx: Context, observations: list[Observation]) -> list[Finding]:
    """Operations that, on every observed call, fetch the same key from two or more collections."""
    findings = []
    for observation in observations:
        if not observation.calls:
            continue
        # The collections that share a key with another one on every call (a call may read more).
        shared: set[str] | None = None
        fields: set[tuple[str, str]] = set()
        for call in observation.calls:
            pairs = {pair for group in _same_key_groups(call) for pair in group}
            fields |= pairs
            collections = {c for c, _ in pairs}
            shared = collections if shared is None else shared & collections
        if shared is not None and len(shared) >= 2:
            group = frozenset(pair for pair in fields if pair[0] in shared)
            findings.append(_together_finding(ctx, observation, group))
    return findings


def _equalities(query: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(field, value) for each equality on a plain value in a filter."""
    if not isinstance(query, dict):
        return
    for key, value in query.items():
        if key in ("$and", "$or") and isinstance(value, list):
            for part in value:
                yield from _equalities(part, prefix)
        elif key.startswith("$"):
            continue
        elif isinstance(value, dict) and "$eq" in value:
            yield prefix + key, value["$eq"]
        elif isinstance(value, str | int | float) or type(value).__name__ in ("ObjectId", "UUID", "Binary"):
            yield prefix + key, value


def _same_key_groups(call: list[Sent]) -> set[frozenset[tuple[str, str]]]:
    """Sets of (collection, field) that one call queried with the same value, spanning 2+ collections."""
    by_value: dict[Any, set[tuple[str, str]]] = defaultdict(set)
    for sent in call:
        if sent.name == "getMore":
            continue
        for field_name, value in _equalities(sent.filter):
            by_value[(type(value).__name__, str(value))].add((sent.collection, field_name))
    return {frozenset(pairs) for pairs in by_value.values() if len({c for c, _ in pairs}) >= 2}


def embed_pipeline(child: str, child_field: str, parent: str) -> list[dict[str, Any]]:
    """The printed migration for data read together: each parent gets its ``child`` documents as an array.

    Children whose key matches no parent are not embedded (``whenNotMatched: "discard"``); they stay
    in ``child``, which this pipeline only reads.
    """
    return [
        {"$group": {"_id": f"${child_field}", child: {"$push": "$$ROOT"}}},
        {"$merge": {"into": parent, "on": "_id", "whenMatched": "merge", "whenNotMatched": "discard"}},
    ]


def extended_reference_pipeline(local: str, local_field: str, source: str, foreign: str) -> list[dict[str, Any]]:
    """The printed fix for a hot ``$lookup``: copy ``_id`` and ``name`` of the joined documents into ``local``.

    Each ``local`` document gains a ``copied`` array and keeps every field it had (``whenMatched:
    "merge"``); ``source`` is only read.
    """
    return [
        {"$lookup": {"from": source, "localField": local_field, "foreignField": foreign, "as": "copied"}},
        {"$set": {"copied": {"$map": {"input": "$copied", "in": {"_id": "$$this._id", "name": "$$this.name"}}}}},
        {"$merge": {"into": local, "on": "_id", "whenMatched": "merge"}},
    ]


def _together_finding(ctx: Context, observation: Observation, group: frozenset[tuple[str, str]]) -> Finding:
    pairs = sorted(group)
    collections = sorted({c for c, _ in pairs})
    trips = sum(len(call) for call in observation.calls) / len(observation.calls)
    hot = observation.per_second >= ctx.thresholds.hot_per_second
    parent = next((c for c, f in pairs if f == "_id"), collections[0])
    children = [(c, f) for c, f in pairs if c != parent]
    child, child_field = children[0]
    described = ", ".join(f"{c}.{f}" for c, f in pairs)
    return Finding(
        SEPARATED_DATA,
        Severity.WARNING if hot else Severity.INFO,
        f"{observation.operation} → {', '.join(collections)}",
        f"every observed call of {observation.operation} ({observation.per_second:g}/s) reads {', '.join(collections)} "
        f"by the same key ({described}): {trips:.1f} round trips per call",
        {
            "operation": observation.operation,
            "per_second": observation.per_second,
            "calls_observed": len(observation.calls),
            "collections": collections,
            "fields": [f"{c}.{f}" for c, f in pairs],
            "round_trips_per_call": round(trips, 2),
            "parent": parent,
            "child": child,
            "child_field": child_field,
        },
        WHY_TOGETHER,
        f"Embed the one-to-one and one-to-few parts of {', '.join(c for c, _ in children)} in {parent}; for a large "
        "one-to-many keep a capped subset and a summary there. Migrate with an aggregation ending in $merge, switch "
        "the reads, then drop what is no longer read.",
        f"db.{child}.aggregate({to_mongosh(embed_pipeline(child, child_field, parent))})\n"
        f"// then read db.{parent}.findOne({{_id: key}}) alone",
    )


def _regex_fields(query: Any, prefix: str = "") -> Iterator[str]:
    """Fields a filter matches with a case-insensitive regular expression."""
    if isinstance(query, list):
        for part in query:
            yield from _regex_fields(part, prefix)
        return
    if not isinstance(query, dict):
        return
    for key, value in query.items():
        if key in ("$and", "$or", "$nor"):
            yield from _regex_fields(value, prefix)
        elif key.startswith("$"):
            continue
        elif _case_insensitive(value) or isinstance(value, dict) and _regex_operator(value):
            yield prefix + key


def _regex_operator(value: dict[str, Any]) -> bool:
    """``{$regex: ..., $options: "i"}``, a ``$regex`` holding an ``i`` pattern, or ``$in`` with one."""
    if "$regex" in value:
        return "i" in str(value.get("$options", "")) or _case_insensitive(value["$regex"])
    listed = value.get("$in")
    return isinstance(listed, list) and any(_case_insensitive(v) for v in listed)


def _case_insensitive(value: Any) -> bool:
    if isinstance(value, re.Pattern):
        return bool(value.flags & re.IGNORECASE)
    if isinstance(value, Regex):
        flags = value.flags
        return bool(flags & re.IGNORECASE) if isinstance(flags, int) else "i" in str(flags)
    return False


def _collation_index(ctx: Context, collection: str, field_name: str) -> str | None:
    """The name of an index led by ``field_name`` with a case-insensitive collation (strength 1 or 2)."""
    for spec in ctx.indexes(collection):
        keys = list(dict(spec["key"]))
        collation = spec.get("collation") or {}
        if keys and keys[0] == field_name and int(collation.get("strength", 3)) <= 2:
            return str(spec["name"])
    return None


def check_case_insensitive(ctx: Context, observations: list[Observation]) -> list[Finding]:
    """Filters with a case-insensitive regex, per operation and field."""
    findings = []
    for observation in observations:
        seen: set[tuple[str, str]] = set()
        for sent in (s for call in observation.calls for s in call):
            for field_name in _regex_fields(sent.filter):
                if (sent.collection, field_name) in seen:
                    continue
                seen.add((sent.collection, field_name))
                findings.append(_regex_finding(ctx, observation, sent.collection, field_name))
    return findings


def _regex_finding(ctx: Context, observation: Observation, collection: str, field_name: str) -> Finding:
    hot = observation.per_second >= ctx.thresholds.hot_per_second
    index = _collation_index(ctx, collection, field_name)
    count = ctx.stats(collection).get("count")
    if index is None:
        severity = Severity.WARNING if hot else Severity.INFO
        fix = (
            f"Create an index on {field_name} with a case-insensitive collation (strength 2) and query with equality "
            "and the same collation; or store a normalised copy (lower-cased) and query that with a plain index."
        )
        command = (
            f'db.{collection}.createIndex({{{field_name}: 1}}, {{collation: {{locale: "en", strength: 2}}}})\n'
            f'db.{collection}.find({{{field_name}: value}}).collation({{locale: "en", strength: 2}})'
        )
    else:
        severity = Severity.INFO
        fix = (
            f"{index} has a case-insensitive collation, but a collation index cannot serve $regex: replace the "
            "regex with an equality that names the index's collation."
        )
        command = f'db.{collection}.find({{{field_name}: value}}).collation({{locale: "en", strength: 2}})'
    return Finding(
        CASE_INSENSITIVE_REGEX,
        severity,
        f"{collection}.{field_name}",
        f"{observation.operation} ({observation.per_second:g}/s) matches {field_name} with a case-insensitive regex "
        + (
            f"and {collection} has no collation index on it"
            if index is None
            else f"(the collation index {index} cannot help)"
        ),
        {
            "operation": observation.operation,
            "per_second": observation.per_second,
            "field": field_name,
            "collation_index": index,
            "documents": count,
        },
        WHY_REGEX,
        fix,
        command,
    )


def _lookups(pipeline: Any) -> Iterator[dict[str, Any]]:
    """Every $lookup in a pipeline, including those nested in $lookup pipelines and $facet."""
    for stage in pipeline if isinstance(pipeline, list | tuple) else []:
        if not isinstance(stage, dict):
            continue
        if "$lookup" in stage:
            lookup = dict(stage["$lookup"])
            yield lookup
            yield from _lookups(lookup.get("pipeline"))
        if "$facet" in stage:
            for branch in dict(stage["$facet"]).values():
                yield from _lookups(branch)


def check_lookups(ctx: Context, observations: list[Observation]) -> list[Finding]:
    """``$lookup`` stages the workload runs, ranked by how often their operation runs."""
    rows: dict[tuple[str, str, str, str], tuple[Observation, str]] = {}
    for observation in observations:
        for sent in (s for call in observation.calls for s in call):
            for lookup in _lookups(list(sent.pipeline)):
                foreign = str(lookup.get("foreignField", "")) or "(pipeline)"
                key = (observation.operation, sent.collection, str(lookup.get("from", "?")), foreign)
                rows.setdefault(key, (observation, str(lookup.get("localField", ""))))
    ranked = sorted(rows.items(), key=lambda item: -item[1][0].per_second)
    findings = []
    for rank, ((operation, local, source, foreign), (observation, local_field)) in enumerate(ranked, start=1):
        hot = observation.per_second >= ctx.thresholds.hot_per_second
        indexed = foreign == "_id" or any(list(dict(s["key"]))[:1] == [foreign] for s in ctx.indexes(source))
        severity = Severity.INFO
        if hot:
            severity = Severity.WARNING if indexed else Severity.CRITICAL
        elif not indexed and foreign != "(pipeline)":
            severity = Severity.WARNING
        summary = (
            f"#{rank} by frequency: {operation} ({observation.per_second:g}/s) joins {local} to {source} "
            f"on {source}.{foreign}" + ("" if indexed or foreign == "(pipeline)" else ", which has no index")
        )
        pipeline = extended_reference_pipeline(local, str(local_field), source, str(foreign))
        command = (
            f"// copy the few fields the hot read needs from {source} into {local} (extended reference):\n"
            f"db.{local}.aggregate({to_mongosh(pipeline)})"
        )
        if not indexed and foreign != "(pipeline)":
            command = f"db.{source}.createIndex({{{foreign}: 1}})  // at once, whatever else you decide\n" + command
        findings.append(
            Finding(
                LOOKUP_ON_HOT_PATH,
                severity,
                f"{operation} → {source}",
                summary,
                {
                    "rank_by_frequency": rank,
                    "operation": operation,
                    "per_second": observation.per_second,
                    "from": source,
                    "foreign_field": foreign,
                    "foreign_field_indexed": indexed,
                    "hot": hot,
                    "local": local,
                    "local_field": local_field,
                },
                WHY_LOOKUP,
                f"Copy the fields {operation} needs into {local} and read without the join; keep the reference for "
                "everything else." + ("" if indexed else f" Until then, index {source}.{foreign}."),
                command,
            )
        )
    return findings


def profiler_observations(ctx: Context, entries: int) -> list[Observation]:
    """Reads logged by the database profiler (``system.profile``, when enabled), grouped by query shape.

    Each shape becomes an observation whose rate is how often it was logged over the logged span.
    """
    if "system.profile" not in ctx.db.list_collection_names():
        return []
    logged = list(ctx.db["system.profile"].find({}, sort=[("ts", -1)], limit=entries))
    ctx.notes.append(f"system.profile: the newest {len(logged):,} entries read")
    groups: dict[str, list[tuple[Sent, datetime | None]]] = defaultdict(list)
    for entry in logged:
        command = entry.get("command")
        if not isinstance(command, dict) or not command:
            continue
        sent = parse({"name": next(iter(command)), "command": command})
        if sent is None:
            continue
        blanked = json.dumps([_shape(sent.filter), _shape(list(sent.pipeline))], sort_keys=True)
        shape = f"{sent.name} {sent.collection} {blanked}"
        groups[shape].append((sent, _moment(entry.get("ts"))))
    observations = []
    for shape, items in groups.items():
        times = [t for _, t in items if isinstance(t, datetime)]
        span = (max(times) - min(times)).total_seconds() if len(times) > 1 else 0.0
        per_second = len(items) / span if span > 0 else 0.0
        observation = Observation(f"profiler: {shape[:80]}", per_second)
        observation.calls = [[sent] for sent, _ in items]
        observations.append(observation)
    return observations


def _moment(value: Any) -> datetime | None:
    """A profiler timestamp: a BSON date on MongoDB, ISO text on the offline engine."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None
    if not isinstance(value, datetime):
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _shape(value: Any) -> Any:
    """A filter or pipeline with its values blanked, so calls with different arguments group together."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_shape(v) for v in value]
    if _case_insensitive(value):
        return "/regex/i"
    return 1

"""Anti-pattern 4, unnecessary indexes: unused ($indexStats), a prefix of another index, or too many."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from workbook.schema_doctor.collections import to_mongosh
from workbook.schema_doctor.context import Context
from workbook.schema_doctor.lessons import UNNECESSARY_INDEXES
from workbook.schema_doctor.report import Finding, Severity
from workbook.schema_doctor.thresholds import MAX_INDEXES_PER_COLLECTION

WHY = (
    "Every insert and delete, and every update that touches its fields, must update each index; each one also "
    "takes disk and cache."
)
_EQUIVALENCE = ("unique", "sparse", "partialFilterExpression", "collation", "expireAfterSeconds", "hidden")


def enforces(spec: dict[str, Any]) -> str | None:
    """What an index does besides speeding up reads, or None: hiding or dropping it changes that."""
    if spec.get("name") == "_id_":
        return "it is the _id index, which every collection must have"
    duties = []
    if spec.get("unique"):
        duties.append("it enforces uniqueness of " + ", ".join(_keys(spec)) + " (a hidden unique index still does)")
    if "expireAfterSeconds" in spec:
        duties.append(
            f"it is a TTL index deleting documents after {spec['expireAfterSeconds']} s (a hidden one still does)"
        )
    return "; ".join(duties) or None


def check_indexes(ctx: Context) -> Iterator[Finding]:
    """Findings per collection: unused and prefix-redundant indexes, and too many indexes."""
    for collection in ctx.examined():
        ctx.budget.check()
        specs = ctx.indexes(collection)
        yield from _too_many(ctx, collection, specs)
        yield from _redundant(collection, specs)
        yield from _unused(ctx, collection, specs)


def _keys(spec: dict[str, Any]) -> list[str]:
    return [str(k) for k in dict(spec["key"])]


def _key_pairs(spec: dict[str, Any]) -> list[tuple[str, Any]]:
    return list(dict(spec["key"]).items())


def _hide_then_drop(collection: str, name: str) -> str:
    return (
        f'db.{collection}.hideIndex("{name}")\n'
        "// watch latency and the slow query log for a full business cycle; if nothing got worse:\n"
        f'db.{collection}.dropIndex("{name}")'
    )


def _too_many(ctx: Context, collection: str, specs: list[dict[str, Any]]) -> list[Finding]:
    limit = ctx.thresholds.indexes_per_collection
    if len(specs) <= limit:
        return []
    return [
        Finding(
            UNNECESSARY_INDEXES,
            Severity.WARNING,
            collection,
            f"{len(specs)} indexes (threshold {limit}; the hard limit is {MAX_INDEXES_PER_COLLECTION})",
            {"indexes": len(specs), "threshold": limit, "names": [s["name"] for s in specs]},
            WHY
            + " A collection that needs an index per attribute usually needs another shape (the attribute pattern).",
            "Check each index against the workload; extend one that shares a prefix instead of adding another; "
            "hide, watch, then drop the rest.",
            f"db.{collection}.aggregate([{{$indexStats: {{}}}}])  // on every member, then for each unneeded one:\n"
            + _hide_then_drop(collection, "<name>"),
        )
    ]


def _redundant(collection: str, specs: list[dict[str, Any]]) -> list[Finding]:
    findings = []
    for shorter in specs:
        if shorter.get("name") == "_id_":
            continue
        keys = _key_pairs(shorter)
        for longer in specs:
            other = _key_pairs(longer)
            if longer is shorter or len(other) <= len(keys) or other[: len(keys)] != keys:
                continue
            if any(
                shorter.get(option) != longer.get(option)
                for option in ("partialFilterExpression", "collation", "sparse")
            ):
                continue  # not interchangeable for the planner
            duty = enforces(shorter)
            severity = Severity.INFO if duty else Severity.WARNING
            fix = f"{shorter['name']} is a prefix of {longer['name']}, which serves every query it serves."
            if duty:
                fix += f" But {duty}: keep it unless that duty moves elsewhere."
            findings.append(
                Finding(
                    UNNECESSARY_INDEXES,
                    severity,
                    f"{collection}.{shorter['name']}",
                    f"{shorter['name']} {to_mongosh(dict(shorter['key']))} is a prefix of {longer['name']} "
                    f"{to_mongosh(dict(longer['key']))}",
                    {
                        "index": shorter["name"],
                        "key": dict(shorter["key"]),
                        "covered_by": longer["name"],
                        "enforces": duty,
                    },
                    WHY,
                    fix
                    + " Hide it first: the planner ignores a hidden index (still maintained), so undoing is instant.",
                    _hide_then_drop(collection, str(shorter["name"])),
                )
            )
            break
    return findings


def _unused(ctx: Context, collection: str, specs: list[dict[str, Any]]) -> list[Finding]:
    by_name = {s["name"]: s for s in specs}
    stats = list(ctx.db[collection].aggregate([{"$indexStats": {}}]))
    now = datetime.now(UTC)
    findings = []
    young = []
    for row in stats:
        name = row.get("name")
        accesses = row.get("accesses", {})
        since = accesses.get("since")
        if name == "_id_" or not isinstance(since, datetime):
            continue
        since = since if since.tzinfo else since.replace(tzinfo=UTC)
        if now - since < ctx.thresholds.index_stats_min_age:
            young.append(str(name))
            continue
        if int(accesses.get("ops", 0)) > 0:
            continue
        spec = by_name.get(name, row.get("spec", {}))
        duty = enforces(spec)
        hidden = bool(spec.get("hidden"))
        fix = f"Nothing has used {name} since {since:%Y-%m-%d %H:%M} UTC on this member."
        if duty:
            fix += f" But {duty}: dropping it removes that, hiding it does not."
        fix += (
            " It is already hidden: if nothing got worse over a business cycle, drop it."
            if hidden
            else " Hide it, watch for a business cycle, then drop it."
        )
        command = f'db.{collection}.dropIndex("{name}")' if hidden else _hide_then_drop(collection, str(name))
        findings.append(
            Finding(
                UNNECESSARY_INDEXES,
                Severity.INFO if duty else Severity.WARNING,
                f"{collection}.{name}",
                f"{name} has 0 uses since {since:%Y-%m-%d %H:%M} UTC "
                f"({(now - since).days} days, this member's counters)",
                {"index": name, "ops": 0, "since": since, "host": row.get("host"), "enforces": duty, "hidden": hidden},
                WHY + " The counters are per member and reset on restart: check every member that serves reads.",
                fix,
                command,
            )
        )
    if young:
        ctx.notes.append(
            f"{collection}: $indexStats counters are younger than {_days(ctx.thresholds.index_stats_min_age)} "
            f"for {', '.join(young)}: not judged unused yet"
        )
    return findings


def _days(span: timedelta) -> str:
    """A threshold age as people say it: '7 days', '12 hours'."""
    return f"{span.days:g} days" if span.days and not span.seconds else f"{span.total_seconds() / 3600:g} hours"

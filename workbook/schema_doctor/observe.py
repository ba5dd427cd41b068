"""Run each hot operation a few times under command monitoring and keep what it sent.

What a call sends (which collections, which filters, a regex with the ``i`` flag, a ``$lookup``
and its ``foreignField``, how many bytes per document came back) is what checks 2, 5, 6 and 7
read. Operations run against the read-only handle, so one that tries to write is stopped first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pymongo.errors import PyMongoError

from workbook.calls import measure_call
from workbook.errors import WorkbookError
from workbook.monitor import COMMANDS
from workbook.schema_doctor.readonly import OutOfTime, ReadOnlyDatabase, ReadOnlyViolation
from workbook.schema_doctor.workload_adapter import HotOperation

_COLLECTION_KEY = {
    "find": "find",
    "aggregate": "aggregate",
    "count": "count",
    "distinct": "distinct",
    "getMore": "collection",
}


@dataclass(frozen=True)
class Sent:
    """One read command a call sent: where, with which filter/pipeline, and what came back."""

    name: str
    collection: str
    filter: dict[str, Any]
    pipeline: tuple[dict[str, Any], ...]
    projection: dict[str, Any] | None
    collation: dict[str, Any] | None
    reply_bytes: int
    reply_docs: int


@dataclass
class Observation:
    """A hot operation and the commands each of its sample calls sent."""

    operation: str
    per_second: float
    calls: list[list[Sent]] = field(default_factory=list)


def observe(
    db: ReadOnlyDatabase,
    client: Any,
    operations: list[HotOperation],
    calls: int,
    hot_per_second: float,
    notes: list[str],
) -> list[Observation]:
    """Call each hot read operation ``calls`` times and record its commands (writes and rare reads are not run)."""
    if not operations:
        return []
    if COMMANDS not in list(getattr(client.options, "event_listeners", [])):
        notes.append(
            "workload not observed: this client does not carry the workbench's command listener "
            "(connect with workbook.connect, or MongoClient(..., event_listeners=[workbook.monitor.COMMANDS]))"
        )
        return []
    observations = []
    for op in operations:
        if op.kind != "read":
            notes.append(f"{op.name}: a write, not run (the doctor is read-only)")
            continue
        if op.per_second < hot_per_second:
            # A daily report may scan a collection; rare operations should not shape the schema anyway.
            notes.append(f"{op.name} ({op.per_second:.2g}/s): below the hot threshold of {hot_per_second:g}/s, not run")
            continue
        observation = Observation(op.name, op.per_second)
        for i in range(calls):
            try:
                work = measure_call(None, op.call, db, i)
            except (OutOfTime, ReadOnlyViolation):
                raise
            except (WorkbookError, PyMongoError) as error:
                if isinstance(error, PyMongoError) and error.timeout:
                    raise
                notes.append(f"{op.name}: call {i + 1} failed ({type(error).__name__}: {error}); not counted")
                continue
            observation.calls.append([sent for sent in map(parse, work.sent) if sent is not None])
        notes.append(f"{op.name} ({op.per_second:g}/s): {len(observation.calls)} call(s) observed")
        observations.append(observation)
    return observations


def parse(command: dict[str, Any]) -> Sent | None:
    """A captured command as a :class:`Sent`, or None for commands that read no collection."""
    name = command["name"]
    body = command["command"]
    key = _COLLECTION_KEY.get(name)
    if key is None:
        return None
    collection = str(body.get(key, ""))
    pipeline = tuple(dict(stage) for stage in body.get("pipeline", []) or [])
    query = body.get("filter", body.get("query")) or {}
    if name == "aggregate":
        matches = [stage["$match"] for stage in pipeline[:1] if "$match" in stage]
        query = matches[0] if matches else {}
    return Sent(
        name,
        collection,
        dict(query),
        pipeline,
        dict(body["projection"]) if body.get("projection") else None,
        dict(body["collation"]) if body.get("collation") else None,
        int(command.get("reply_bytes", 0)),
        int(command.get("reply_docs", 0)),
    )

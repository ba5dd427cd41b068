"""Work counts from explain: the keys and documents the reads of a measured call examined."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from pymongo.database import Database

from workbook.errors import ExplainError
from workbook.explaining.view import explain_command
from workbook.planner import FindArgs


def reads_of(name: str, command: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The reads inside a command, as find or aggregate commands (writes: the query finding their targets)."""
    collection = str(command.get(name, ""))
    if name == "find":
        return [FindArgs.from_command(command).command(collection)]
    if name == "aggregate":
        return [{"aggregate": collection, "pipeline": list(command.get("pipeline", [])), "cursor": {}}]
    finds: list[FindArgs] = []
    if name == "update":
        finds = [
            FindArgs(dict(u.get("q", {})), limit=None if u.get("multi") else 1) for u in command.get("updates", [])
        ]
    elif name == "delete":
        finds = [FindArgs(dict(d.get("q", {})), limit=d.get("limit") or None) for d in command.get("deletes", [])]
    elif name == "findAndModify":
        finds = [FindArgs.of(command.get("query", {}), sort=command.get("sort"), limit=1)]
    elif name in ("count", "distinct"):
        finds = [FindArgs(dict(command.get("query") or {}))]
    return [args.command(collection) for args in finds]  # insert, getMore, transactions: nothing examined


def explained_reads(
    db: Database, commands: list[dict[str, Any]]
) -> Iterator[tuple[str, dict[str, Any] | ExplainError]]:
    """For each read inside ``commands`` (as :class:`workbook.monitor.Captured` records them), its
    collection and explain summary, or the ExplainError saying why it could not be explained."""
    for sent in commands:
        name, command = sent["name"], sent["command"]
        collection = db.client[sent["database"]][str(command.get(name, ""))]
        for read in reads_of(name, command):
            try:
                yield collection.name, explain_command(collection, read).summary()
            except ExplainError as error:
                yield collection.name, error


def work_examined(db: Database, commands: list[dict[str, Any]]) -> dict[str, float]:
    """Keys and documents examined by the commands one call sent, from explain (NaN if any read can't be)."""
    keys = docs = 0
    for _, summary in explained_reads(db, commands):
        if isinstance(summary, Exception):
            return {"keys_examined": math.nan, "docs_examined": math.nan}
        keys += summary["keysExamined"] or 0
        docs += summary["docsExamined"] or 0
    return {"keys_examined": keys, "docs_examined": docs}

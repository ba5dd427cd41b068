"""Modelled explain of a write: the find that selects its documents, under an UPDATE or DELETE stage.

MongoDB explains one update or delete statement (write_ops_exec / explain of ``update``/``delete``):
the query plan is the find's, ``nReturned`` is 0, and the write stage reports what the write would
do (``nMatched``, ``nWouldModify``, ``nWouldUpsert``; ``nWouldDelete``) without doing it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbook.errors import ExplainError
from workbook.planner.explain import run_find
from workbook.planner.plans import CollectionModel
from workbook.planner.query import FindArgs, make_query
from workbook.planner.unsupported import not_modelled
from workbook.planner.values import MISSING, compare


def _statement(command: Mapping[str, Any], field: str) -> Mapping[str, Any]:
    statements = command.get(field)
    if not isinstance(statements, list) or len(statements) != 1 or not isinstance(statements[0], Mapping):
        raise ExplainError(
            f"explain takes exactly one {field[:-1]} statement (MongoDB refuses more too).",
            fix=f'Explain one statement at a time: {{"{field}": [{{"q": {{...}}, ...}}]}}.',
        )
    return statements[0]


def _wrap(explain: dict[str, Any], stage: str, counters: dict[str, Any]) -> dict[str, Any]:
    planner = explain["queryPlanner"]
    planner["winningPlan"] = {"stage": stage, "inputStage": planner["winningPlan"]}
    planner["rejectedPlans"] = [{"stage": stage, "inputStage": plan} for plan in planner["rejectedPlans"]]
    stats = explain["executionStats"]
    inner = stats["executionStages"]
    stats["executionStages"] = {
        "stage": stage,
        "nReturned": 0,
        "executionTimeMillisEstimate": 0,
        "works": inner["works"] + 1,
        "advanced": 0,
        "needTime": inner["works"],
        "needYield": 0,
        "saveState": 0,
        "restoreState": 0,
        "isEOF": 1,
        **counters,
        "inputStage": inner,
    }
    stats["nReturned"] = 0
    return explain


def explain_delete(collection: CollectionModel, namespace: str, command: Mapping[str, Any]) -> dict[str, Any]:
    """Model ``explain`` of a delete command with one statement."""
    statement = _statement(command, "deletes")
    limit = statement.get("limit", 0)
    args = FindArgs.of(
        statement.get("q"),
        limit=1 if limit == 1 else None,
        hint=statement.get("hint"),
        collation=statement.get("collation"),
    )
    explain, members = run_find(collection, namespace, make_query(args, collection.collation))
    return _wrap(explain, "DELETE", {"nWouldDelete": len(members)})


def explain_update(collection: CollectionModel, namespace: str, command: Mapping[str, Any]) -> dict[str, Any]:
    """Model ``explain`` of an update command with one statement."""
    statement = _statement(command, "updates")
    update = statement.get("u")
    if not isinstance(update, Mapping):
        raise not_modelled("an update given as a pipeline")
    if statement.get("arrayFilters"):
        raise not_modelled("updates with arrayFilters")
    multi = bool(statement.get("multi"))
    args = FindArgs.of(
        statement.get("q"), limit=None if multi else 1, hint=statement.get("hint"), collation=statement.get("collation")
    )
    explain, members = run_find(collection, namespace, make_query(args, collection.collation))
    modified = sum(1 for m in members if m.doc is not None and would_modify(m.doc, update))
    upsert = bool(statement.get("upsert")) and not members
    counters = {"nMatched": len(members), "nWouldModify": modified, "nWouldUpsert": int(upsert)}
    return _wrap(explain, "UPDATE", counters)


def _same(left: Any, right: Any) -> bool:
    """Equal as BSON: same types, same values, same field order."""
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        return list(left) == list(right) and all(_same(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(_same(a, b) for a, b in zip(left, right, strict=True))
    return type(left) is type(right) and left == right


def _get(document: Mapping[str, Any], path: str) -> Any:
    value: Any = document
    for part in path.split("."):
        if isinstance(value, list):
            raise not_modelled("updates of paths through arrays")
        if not isinstance(value, Mapping) or part not in value:
            return MISSING
        value = value[part]
    return value


def would_modify(document: Mapping[str, Any], update: Mapping[str, Any]) -> bool:
    """Whether applying ``update`` would change ``document`` (an update MongoDB counts in nWouldModify)."""
    if not any(key.startswith("$") for key in update):  # a replacement
        current = {k: v for k, v in document.items() if k != "_id"}
        return not _same(current, {k: v for k, v in update.items() if k != "_id"})
    for operator, fields in update.items():
        if not isinstance(fields, Mapping):
            raise ExplainError(f"The update operator {operator} needs a document.", fix='e.g. {"$set": {"a": 1}}')
        for path, value in fields.items():
            if "$" in path:
                raise not_modelled("positional updates ($, $[], $[<id>])")
            if _changes(operator, _get(document, path), value):
                return True
    return False


def _changes(operator: str, old: Any, value: Any) -> bool:
    present = old is not MISSING
    if operator == "$set":
        return not present or not _same(old, value)
    if operator in ("$unset", "$rename"):
        return present
    if operator == "$inc":
        return not present or not _same(old, old + value)
    if operator == "$mul":
        return not present or not _same(old, old * value)
    if operator in ("$min", "$max"):
        order = compare(value, old) if present else 0
        return not present or (order < 0 if operator == "$min" else order > 0)
    if operator in ("$push", "$currentDate"):
        return True
    if operator == "$addToSet":
        values = value["$each"] if isinstance(value, Mapping) and "$each" in value else [value]
        return not present or (isinstance(old, list) and any(not any(_same(v, e) for e in old) for v in values))
    if operator == "$pull":
        if isinstance(value, Mapping):
            raise not_modelled("$pull with a condition")
        return present and isinstance(old, list) and any(_same(e, value) for e in old)
    if operator == "$pop":
        return present and isinstance(old, list) and bool(old)
    if operator == "$setOnInsert":
        return False
    raise not_modelled(f"the update operator {operator}")

"""The offline default's reads, executed by the planner model's plan: one semantics for results and explain.

A ``find`` sent to the offline server is planned and run by :mod:`workbook.planner` over the model
of the collection that explain uses (the same documents, the same index keys), and the documents
the winning plan returns are the reply. So which documents match, in which order, and what
``explain`` reports about it come from one piece of code and cannot disagree, and a hinted sparse
index returns what that index holds, as on MongoDB.

What the model refuses (``UnsupportedByModelError``: ``$where``, ``$expr``, text and geo
operators, ...) or cannot read (a malformed command) goes to the engine unchanged, whose answer
and error messages stand; so do reads inside a transaction (they must see the transaction's own
writes, which the committed model does not hold), tailable cursors and the find options listed in
:data:`ENGINE_OPTIONS`. Projection is applied by the engine's own projection code, which covers
every projection form (``$slice``, ``$elemMatch``, positional) the same way for both paths.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import bson

from workbook import engine_compat, offline_aggregation, planner
from workbook.errors import ExplainError
from workbook.planner.predicates import parse_filter

ENGINE_OPTIONS = frozenset(
    {"tailable", "awaitData", "min", "max", "returnKey", "showRecordId", "let", "readConcern", "oplogReplay"}
)
"""find options the model does not execute: a find carrying one (with a value) is the engine's."""

TRANSACTION_FIELDS = ("txnNumber", "autocommit", "startTransaction")
"""Fields that put a command inside a transaction, whose reads the committed model cannot answer."""

_FIND_ONLY = ("filter", "projection", "sort", "limit", "skip", "hint", "collation")


def model_answers(body: Mapping[str, Any]) -> bool:
    """Whether a ``find`` command is one the model may execute (it may still refuse its filter)."""
    if not isinstance(body.get("find"), str) or body["find"].startswith("system."):
        return False  # system.profile and friends are the engine's virtual collections
    if any(body.get(name) is not None for name in TRANSACTION_FIELDS):
        return False
    if _whole_collection(body.get("filter"), body.get("sort"), body.get("hint")):
        return False
    return not any(body.get(name) not in (None, False) for name in ENGINE_OPTIONS)


def _whole_collection(filter_: Any, sort: Any, hint: Any) -> bool:
    """Whether a find reads every document in natural order: any plan's answer is the engine's (a
    collection scan), so the engine's find answers it without building a model (``find()``, a first
    page). Not used for aggregates: mongoeco's own pipeline source narrows a small Int64 to int32."""
    return not filter_ and not sort and not hint


def _in_transaction(session: Any) -> bool:
    """Whether an engine session (or None) is inside a transaction (its reads see its own uncommitted writes)."""
    return bool(getattr(session, "in_transaction", False))


class IndexUses:
    """How often each index was used by a plan the offline default ran (``$indexStats`` ``accesses``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[tuple[str, str, str]] = Counter()

    def record(self, database: str, collection: str, names: Sequence[str]) -> None:
        """Count one use of each index in ``names`` on ``database.collection``."""
        with self._lock:
            for name in names:
                self._counts[(database, collection, name)] += 1

    def count(self, database: str, collection: str, name: str) -> int:
        """Uses of one index since the server started (or since the index was rebuilt)."""
        with self._lock:
            return self._counts[(database, collection, name)]

    def forget_indexes(self, database: str, collection: str, names: Sequence[str]) -> None:
        """Start these indexes' counts again at 0 (a new index has never been used)."""
        with self._lock:
            for name in names:
                self._counts.pop((database, collection, name), None)

    def forget(self, database: str, collection: str | None = None) -> None:
        """Drop the counts of a dropped collection (or database): a new index starts at 0, as on MongoDB."""
        with self._lock:
            for key in [k for k in self._counts if k[0] == database and collection in (None, k[1])]:
                del self._counts[key]


def indexes_used(plan: Mapping[str, Any]) -> list[str]:
    """The index names a winning plan scans (IXSCAN, DISTINCT_SCAN... anywhere in the tree)."""
    names: list[str] = []
    stack = [plan]
    while stack:
        stage = stack.pop()
        if isinstance(stage.get("indexName"), str):
            names.append(stage["indexName"])
        stack.extend(stage.get("inputStages", []))
        if isinstance(stage.get("inputStage"), Mapping):
            stack.append(stage["inputStage"])
    return names


_LAYERS: dict[int, ReadLayer] = {}
"""The read layer of each offline engine in this process, by ``id(engine)``."""


def _covers(collection: Any, operation: Any) -> bool:
    """Whether an aggregate's pushdown find is one the read layer may run (cheap: the filter and sort parse)."""
    if id(getattr(collection, "_engine", None)) not in _LAYERS or getattr(operation, "text_query", None) is not None:
        return False
    try:
        parse_filter(dict(engine_compat.to_pymongo(operation.filter_spec or {})))
    except ExplainError:
        return False
    return not str(getattr(collection, "_collection_name", "")).startswith("system.")


async def _pushdown(collection: Any, operation: Any, session: Any) -> list[Any] | None:
    layer = _LAYERS.get(id(getattr(collection, "_engine", None)))
    return None if layer is None else await layer.pushdown(collection, operation, session)


class ReadLayer:
    """Answers the offline server's ``find`` commands with the planner model (see the module docstring)."""

    def __init__(self, engine: Any, explain: Any) -> None:
        self._engine = engine
        self._explain = explain  # workbook.explaining.native.ExplainHook: the one model cache
        self.uses = IndexUses()
        _LAYERS[id(engine)] = self
        engine_compat.install_pushdown_reads(_covers, _pushdown)

    async def find(self, context: Any, cursors: Any) -> dict[str, Any] | None:
        """The reply to a ``find`` command, or None when the engine should answer it."""
        body = dict(context.command_document)
        raw = context.raw_body if isinstance(context.raw_body, Mapping) else {}
        if not model_answers({**raw, **body}) or _in_transaction(getattr(context, "session", None)):
            return None
        database, name = str(context.db_name), str(body["find"])
        namespace = f"{database}.{name}"
        body = {k: engine_compat.to_pymongo(v) if k in _FIND_ONLY else v for k, v in body.items()}  # bson types
        try:
            args = planner.FindArgs.of(body.get("filter"), **{k: body.get(k) for k in _FIND_ONLY[1:]})
        except ExplainError:
            return None  # malformed: the engine's own validation answers, with MongoDB's message
        started = time.perf_counter_ns()
        model = await self._explain.model(database, name)
        rids = await self._run(model, database, name, args)
        if rids is None:
            return None  # not modelled (or a hint the engine words its own way): the engine answers
        self._profile(database, name, body, time.perf_counter_ns() - started)
        if body.get("projection"):  # projected from the decoded document, as the engine's find does
            project = engine_compat.projection_executor(body["projection"], body.get("filter"))
            documents = [project(model.documents[rid]) for rid in rids]
        else:
            documents = [model.documents[rid] for rid in rids]  # the engine's public forms, as its find returns
        reply = {"cursor": {"firstBatch": documents, "ns": namespace, "id": 0}, "ok": 1.0}
        if body.get("singleBatch") or (isinstance(body.get("limit"), int) and body["limit"] < 0):
            return reply  # one batch, cursor closed, as MongoDB answers a negative limit
        lsid = raw.get("lsid")
        return dict(cursors.materialize_command_result(body, reply, lsid=lsid, connection=context.connection))

    async def pushdown(self, collection: Any, operation: Any, session: Any) -> list[Any] | None:
        """The documents an aggregate's leading stages select (mongoeco's pushdown find), chosen by the
        model's plan, in the engine's internal form the rest of the pipeline reads; None: the engine's."""
        if _in_transaction(session):  # the rest was checked by _covers before this cursor was made
            return None
        database, name = str(collection._db_name), str(collection._collection_name)
        try:
            args = planner.FindArgs.of(
                engine_compat.to_pymongo(operation.filter_spec or {}), None, operation.sort or None,
                operation.limit or None, operation.skip or None, operation.hint, operation.collation,
            )  # fmt: skip
        except ExplainError:
            return None
        model = await self._explain.model(database, name)
        records = self._explain.records(database, name, model)
        rids = None if records is None else await self._run(model, database, name, args)
        if records is None or rids is None:
            return None
        internal = engine_compat.decoder(self._engine)
        documents = [internal(records[rid]) for rid in rids]
        if operation.projection:
            documents = _project_pushed(operation.projection, operation.filter_spec, documents)
        return documents

    async def _run(self, model: Any, database: str, name: str, args: planner.FindArgs) -> list[int] | None:
        """Plan and run a find (without its projection) on the model, off the server's event loop, and
        count the indexes its plan used: the positions of the documents it returns, or None if refused."""
        run = functools.partial(planner.find_records, model, f"{database}.{name}", replace(args, projection=None))
        try:
            explain, rids = await asyncio.get_running_loop().run_in_executor(None, run)
        except ExplainError:
            return None
        self.uses.record(database, name, indexes_used(explain["queryPlanner"]["winningPlan"]))
        return rids

    def _profile(self, database: str, name: str, body: Mapping[str, Any], nanoseconds: int) -> None:
        """Record the find in the database profiler (``system.profile``) when it is on, as the engine's find does."""
        micros = max(1, nanoseconds // 1000)
        if not self._engine._profile_is_active(database, duration_micros=micros):
            return
        command = {"find": name, **{k: body[k] for k in _FIND_ONLY if body.get(k) is not None}}
        self._engine._record_profile_event(database, op="query", command=command, duration_micros=micros)

    def after(self, command: str, database: str, body: Mapping[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
        """Keep ``$indexStats`` true to the plans run: fill its ``accesses.ops`` from the uses counted
        here, and start an index at 0 when it is (re)created or its collection dropped, as MongoDB does."""
        target = body.get(command)
        if command == "aggregate" and isinstance(target, str) and _starts_with_index_stats(body):
            for entry in reply.get("cursor", {}).get("firstBatch", []):
                if isinstance(entry, dict) and isinstance(entry.get("accesses"), dict):
                    ops = self.uses.count(database, target, str(entry.get("name")))
                    entry["accesses"] = {**entry["accesses"], "ops": bson.Int64(ops)}
        elif command == "createIndexes" and isinstance(target, str):
            names = [str(spec.get("name")) for spec in body.get("indexes", []) if isinstance(spec, Mapping)]
            self.uses.forget_indexes(database, target, names)
        elif command == "drop" and isinstance(target, str):
            self.uses.forget(database, target)
        elif command == "dropDatabase":
            self.uses.forget(database)
        return reply


def _project_pushed(projection: Mapping[str, Any], filter_spec: Any, documents: list[Any]) -> list[Any]:
    """A leading ``$project`` pushed into the find: an inclusion of fields follows MongoDB's aggregation
    rules (nested specs, any number as a flag, ``{}`` kept for a subdocument without the field:
    non_existent_subfield.js); anything else is the engine's projection."""
    flat = offline_aggregation.flatten(projection)
    flags = [offline_aggregation.flag(value) for value in flat.values()]
    if all(f is not None for f in flags) and any(f == 1 for path, f in zip(flat, flags, strict=True) if path != "_id"):
        return [offline_aggregation.inclusion_project(document, flat, _no_expressions) for document in documents]
    project = engine_compat.projection_executor(flat, filter_spec, public=False)
    return [project(document) for document in documents]


def _no_expressions(expression: Any) -> Any:
    raise AssertionError(f"an inclusion projection has no expression to evaluate: {expression!r}")


def _starts_with_index_stats(body: Mapping[str, Any]) -> bool:
    pipeline = body.get("pipeline")
    return (
        isinstance(pipeline, list)
        and bool(pipeline)
        and isinstance(pipeline[0], Mapping)
        and "$indexStats" in pipeline[0]
    )

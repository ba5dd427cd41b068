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
:data:`ENGINE_OPTIONS`, except those the engine would ignore (:data:`IGNORED_BY_THE_ENGINE`): the model
answers ``min``/``max`` and ``returnKey``, and refuses the rest by name. Projection is applied by the
engine's own projection code, which covers every projection form (``$slice``, ``$elemMatch``,
positional) the same way for both paths.
"""

from __future__ import annotations

import asyncio
import datetime
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import bson
from bson import ObjectId

from workbook import engine_compat, engine_reads, offline_aggregation, planner
from workbook.errors import ExplainError, InvalidQueryError, UnknownHintError
from workbook.facts import MAX_BLOCKING_SORT_BYTES, QUERY_EXCEEDED_MEMORY_LIMIT, bson_size
from workbook.offline_cursors import Projector, batch_of
from workbook.offline_explain import NOT_MODELLED_CODE
from workbook.offline_writes import exact_id_key
from workbook.planner.predicates import parse_filter
from workbook.planner.query import asks_sort_key, make_query
from workbook.planner.reading import index_name
from workbook.planner.unsupported import not_modelled
from workbook.planner.values import sort_key

ENGINE_OPTIONS = frozenset(
    {"tailable", "awaitData", "min", "max", "returnKey", "showRecordId", "let", "readConcern", "oplogReplay"}
)
"""find options the model does not execute: a find carrying one (with a value) is the engine's."""

IGNORED_BY_THE_ENGINE = ("min", "max", "returnKey", "showRecordId")
"""find options the offline engine accepts and then ignores (it returned every match, whole documents,
for ``min``/``max`` index bounds, ``returnKey``'s index keys and ``showRecordId``'s ``$recordId``): the
model answers ``min``/``max`` and ``returnKey`` (:data:`MODEL_ONLY`); a find it cannot answer with one
of them (``showRecordId``, any of them inside a transaction) is refused by name instead."""

KEY_BOUNDS = ("min", "max")
MODEL_ONLY = (*KEY_BOUNDS, "returnKey")
"""The find options only the model answers (:mod:`workbook.planner.minmax`, :mod:`workbook.planner.returnkey`)."""

TRANSACTION_FIELDS = ("txnNumber", "autocommit", "startTransaction")
"""Fields that put a command inside a transaction, whose reads the committed model cannot answer."""

_FIND_ONLY = ("filter", "projection", "sort", "limit", "skip", "hint", "collation")
PROFILED_FIELDS = (*_FIND_ONLY, "key", "query", "min", "max", "returnKey", "comment")
"""The fields of a find, count or distinct the profiler entry's ``command`` keeps (in this order)."""


def option_set(body: Mapping[str, Any], *names: str) -> bool:
    """Whether a find sets any of the options ``names`` (to a value other than None or False: pymongo
    leaves unset options out, and sends some as False)."""
    return any(body.get(name) not in (None, False) for name in names)


def _plain_find(body: Mapping[str, Any]) -> bool:
    """Whether a ``find`` names a collection (not a system one), outside a transaction, with no option
    only the engine executes: the finds the model or the stored documents may answer."""
    if not isinstance(body.get("find"), str) or body["find"].startswith("system."):
        return False  # system.profile and friends are the engine's virtual collections
    if any(body.get(name) is not None for name in TRANSACTION_FIELDS):
        return False
    return not option_set(body, *ENGINE_OPTIONS)


def model_answers(body: Mapping[str, Any]) -> bool:
    """Whether a ``find`` command is one the model may execute (it may still refuse its filter)."""
    return _plain_find(body) and not _whole_collection(body.get("filter"), body.get("sort"), body.get("hint"))


def _whole_collection(filter_: Any, sort: Any, hint: Any) -> bool:
    """Whether a find reads every document in natural order: any plan's answer is a collection scan,
    so it is answered without building a model (``find()``, a first page), from the stored documents
    (:func:`reads_stored`) or by the engine. Not used for aggregates: mongoeco's own pipeline source
    narrows a small Int64 to int32."""
    return not filter_ and not sort and not hint


def reads_stored(body: Mapping[str, Any]) -> bool:
    """Whether a ``find`` is a plain read of a whole collection in natural order that the stored
    documents answer as they are (:func:`workbook.engine_reads.public_records`, the documents the
    engine's find replies with): no filter, sort or hint (absent, or an empty document), a skip and
    a limit that are plain integers (a negative skip is the engine's error), no ``$meta``
    projection, no option only the engine executes, not in a transaction, not a system collection.
    Everything else keeps its path, so malformed commands get the engine's own errors."""
    if not _plain_find(body):
        return False
    for name in ("filter", "sort", "hint"):
        if body.get(name) is not None and not (isinstance(body[name], Mapping) and not body[name]):
            return False
    for name in ("skip", "limit"):
        if body.get(name) is not None and (type(body[name]) is not int or (name == "skip" and body[name] < 0)):
            return False
    projection = body.get("projection")
    return projection is None or (isinstance(projection, Mapping) and "$meta" not in repr(projection))


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


def _has_stage(plan: Mapping[str, Any], stage_name: str) -> bool:
    """Whether a plan tree holds a stage called ``stage_name``."""
    stack = [plan]
    while stack:
        stage = stack.pop()
        if stage.get("stage") == stage_name:
            return True
        stack.extend(stage.get("inputStages", []))
        if isinstance(stage.get("inputStage"), Mapping):
            stack.append(stage["inputStage"])
    return False


def layer_of(engine: Any) -> ReadLayer | None:
    """The read layer answering finds for an offline engine, if any."""
    return _LAYERS.get(id(engine))


def indexes_used(plan: Mapping[str, Any]) -> list[str]:
    """The index names a winning plan scans (IXSCAN, DISTINCT_SCAN, IDHACK on ``_id_``... anywhere in the tree),
    as MongoDB's plan summary lists them for ``$indexStats``."""
    names: list[str] = []
    stack = [plan]
    while stack:
        stage = stack.pop()
        name = index_name(stage) if stage.get("stage") == "IDHACK" else stage.get("indexName")
        if isinstance(name, str):
            names.append(name)
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
        self._explain = explain  # workbook.offline_explain.ExplainHook: the one model cache
        self.uses = IndexUses()
        self.sort_memory_limit = MAX_BLOCKING_SORT_BYTES  # internalQueryMaxBlockingSortMemoryUsageBytes
        _LAYERS[id(engine)] = self
        engine_compat.install_pushdown_reads(_covers, _pushdown)

    async def find(self, context: Any, cursors: Any) -> dict[str, Any] | None:
        """The reply to a ``find`` command, or None when the engine should answer it."""
        body = dict(context.command_document)
        raw = context.raw_body if isinstance(context.raw_body, Mapping) else {}
        sent = {**raw, **body}
        _refuse_ignored(sent, ("showRecordId",))
        bounded, keys_only = option_set(sent, *KEY_BOUNDS), option_set(sent, "returnKey")
        if _in_transaction(getattr(context, "session", None)) or (bounded and keys_only):
            _refuse_ignored(sent, MODEL_ONLY)  # in a transaction the engine answers, and would ignore them
            return None
        if bounded or keys_only:
            if not _plain_find({k: v for k, v in sent.items() if k not in MODEL_ONLY}):
                _refuse_ignored(sent, MODEL_ONLY)  # with a tailable cursor, on a system collection...
        elif reads_stored(sent):
            return await self._stored(body, raw, context, cursors)
        elif not model_answers(sent):
            return None
        database, name = str(context.db_name), str(body["find"])
        namespace = f"{database}.{name}"
        body = {k: engine_compat.to_pymongo(v) if k in _FIND_ONLY else v for k, v in body.items()}  # bson types
        try:
            args = planner.FindArgs.of(body.get("filter"), **{k: body.get(k) for k in _FIND_ONLY[1:]})
        except ExplainError:
            return None  # malformed: the engine's own validation answers, with MongoDB's message
        started = time.perf_counter_ns()
        if not (bounded or keys_only or asks_sort_key(body.get("projection"))):
            by_id = await self._stored_by_id(database, name, args)
            if by_id is not None:  # IDHACK's answer, without the model
                self.uses.record(database, name, ["_id_"])
                self._profile(database, name, body, time.perf_counter_ns() - started)
                documents, project = self._projection(context, by_id)
                return self._reply(body, raw, namespace, documents, context, cursors, project)
        model = await self._explain.model(database, name)
        if keys_only:
            documents = await self._keys(model, database, name, args)
            self._profile(database, name, body, time.perf_counter_ns() - started)
            return self._reply(body, raw, namespace, documents, context, cursors)
        if bounded:
            if asks_sort_key(body.get("projection")):
                _refuse_ignored(sent, KEY_BOUNDS)
            in_bounds = await self._bounded(model, database, name, args, sent)
            self._profile(database, name, body, time.perf_counter_ns() - started)
            documents, project = self._projected(context, model, in_bounds)
            return self._reply(body, raw, namespace, documents, context, cursors, project)
        if asks_sort_key(body.get("projection")):  # the engine's projection has no sortKey: the model's
            projected = await self._run(model, database, name, args, projected=True)
            if projected is None:
                return None
            documents = list(projected)
            self._profile(database, name, body, time.perf_counter_ns() - started)
            return self._reply(body, raw, namespace, documents, context, cursors)
        sorted_in_memory: list[bool] = []
        rids = await self._run(model, database, name, args, sorted_in_memory=sorted_in_memory)
        if rids is None:
            _refuse_incomplete_hint(model, args)
            return None  # not modelled (or a hint the engine words its own way): the engine answers
        if sorted_in_memory and body.get("allowDiskUse") is False:
            self._check_sort_memory(model, rids)
        self._profile(database, name, body, time.perf_counter_ns() - started)
        documents, project = self._projected(context, model, rids)
        return self._reply(body, raw, namespace, documents, context, cursors, project)

    @classmethod
    def _projected(cls, context: Any, model: Any, rids: list[int]) -> tuple[list[Any], Projector | None]:
        """The documents at ``rids`` (the engine's public forms, as its find returns them), and the projection
        each batch applies to them as it is sent (:mod:`workbook.offline_cursors`), as the engine's find does."""
        return cls._projection(context, [model.documents[rid] for rid in rids])

    @staticmethod
    def _projection(context: Any, documents: list[Any]) -> tuple[list[Any], Projector | None]:
        """``documents`` and the projection each batch applies to them as it is sent."""
        sent = context.command_document  # the engine's own forms (a regex is its Regex), as its find reads them
        if not sent.get("projection"):
            return documents, None
        return documents, engine_compat.projection_executor(sent["projection"], sent.get("filter"))

    async def _stored_by_id(self, database: str, name: str, args: planner.FindArgs) -> list[Any] | None:
        """What a find of one ``_id`` returns (IDHACK's answer), read by its storage key where that key is exact
        (:func:`~workbook.offline_writes.exact_id_key`: a string or an ObjectId); None for any other find, or where
        the collection has a collation or no ``_id`` index.

        The planner model gives the same document, but a write before the read makes it rebuild from every
        document: a read by ``_id`` after each write cost O(n) (update_one then find_one by ``_id``, 5.7 ms at 1,000
        documents, 49 ms at 100,000). Read here, it costs the same at any size."""
        value = _lone_id(args)
        key = None if value is _NO_ID else exact_id_key(self._engine, value)
        if key is None:
            return None
        _, exists, indexes, options, _ = await self._explain.catalog(database, name)
        if not exists:
            return []
        if options.get("collation") or not any(dict(index.get("key", {})) == {"_id": 1} for index in indexes):
            return None
        return engine_reads.stored_at(self._engine, database, name, key)

    async def _keys(self, model: Any, database: str, name: str, args: planner.FindArgs) -> list[dict[str, Any]]:
        """A find with ``returnKey`` run on the model (:mod:`workbook.planner.returnkey`), off the event loop."""
        from workbook.planner.returnkey import returned_keys

        run = partial(returned_keys, model, f"{database}.{name}", args)
        indexes, keys = await self._modelled(run)
        self.uses.record(database, name, indexes)
        return keys

    @staticmethod
    async def _modelled(run: Any, *, refuse: bool = True, at_once: bool = False) -> Any:
        """``run()`` off the server's event loop (``at_once``: on it, for a run that reads one document at most).
        MongoDB's refusals (a filter it refuses, a hint naming no index) become the server's errors, in MongoDB's
        words; what the model does not cover becomes None (the engine answers), or with ``refuse`` a refusal by
        name (the engine would ignore an option)."""
        try:
            return run() if at_once else await asyncio.get_running_loop().run_in_executor(None, run)
        except InvalidQueryError as error:
            raise engine_compat.bad_value(str(error), error.code) from error
        except UnknownHintError as error:
            raise engine_compat.bad_value(str(error)) from error
        except ExplainError as error:
            if not refuse:
                return None
            raise _refusal(error) from error

    async def _bounded(
        self, model: Any, database: str, name: str, args: planner.FindArgs, sent: Mapping[str, Any]
    ) -> list[int]:
        """A find with ``min``/``max`` run on the model (:mod:`workbook.planner.minmax`), off the event loop;
        MongoDB's refusals as the server's errors, and a refusal by name for what the model cannot answer."""
        from workbook.planner.minmax import bounded_records

        minimum, maximum = (engine_compat.to_pymongo(sent.get(key)) for key in KEY_BOUNDS)
        run = partial(bounded_records, model, f"{database}.{name}", args, minimum, maximum)
        index, rids = await self._modelled(run)
        self.uses.record(database, name, [index])
        return rids

    async def _stored(
        self, body: dict[str, Any], raw: Mapping[str, Any], context: Any, cursors: Any
    ) -> dict[str, Any] | None:
        """The reply to a whole-collection find (:func:`reads_stored`) from the stored documents, in
        natural order, skipped, limited and projected as the engine's find does; None for a name the
        engine keeps no documents under (a view, a collection that does not exist), which it answers.

        The engine's own scan copies every document three times and converts each value on the way
        (40,000 parts/hybrid products: 1.7 s); the stored documents are already in the form its find
        replies with, and the reply encoding sends them uncopied."""
        database, name = str(context.db_name), str(body["find"])
        if self._engine._storage.get(database, {}).get(name) is None:
            return None
        started = time.perf_counter_ns()
        loop = asyncio.get_running_loop()
        documents, _ = await loop.run_in_executor(None, engine_reads.public_records, self._engine, database, name)
        skip, limit = body.get("skip") or 0, abs(body.get("limit") or 0)
        documents = documents[skip : skip + limit] if limit else documents[skip:]
        project = None
        if body.get("projection"):  # the engine's forms, as sent; the reply is encoded, never changed: no copies
            project = engine_compat.sharing_projection(engine_compat.projection_executor(body["projection"], None))
        self._profile(database, name, body, time.perf_counter_ns() - started)
        return self._reply(body, raw, f"{database}.{name}", documents, context, cursors, project)

    def _reply(
        self,
        body: Mapping[str, Any],
        raw: Mapping[str, Any],
        namespace: str,
        documents: list[Any],
        context: Any,
        cursors: Any,
        project: Projector | None = None,
    ) -> dict[str, Any]:
        """The find's reply: one batch for a negative limit or singleBatch, else a cursor batched as MongoDB
        batches (:class:`workbook.offline_cursors.SizedCursors`), each batch projected by ``project`` as sent."""
        if body.get("singleBatch") or (isinstance(body.get("limit"), int) and body["limit"] < 0):
            batch = batch_of(documents, None, project)  # one batch (16 MiB at most), cursor closed, as MongoDB
            return {"cursor": {"firstBatch": batch, "ns": namespace, "id": 0}, "ok": 1.0}
        reply = {"cursor": {"firstBatch": documents, "ns": namespace, "id": 0}, "ok": 1.0}
        lsid = raw.get("lsid")
        return dict(
            cursors.materialize_command_result(body, reply, lsid=lsid, connection=context.connection, project=project)
        )

    async def count(self, context: Any) -> dict[str, Any] | None:
        """The reply to a ``count`` command, counted from the model's plan (a hinted sparse index counts
        what it holds: count_hint.js); None when the engine should answer (a count of the whole
        collection with no hint, skip or limit is its metadata count, inside a transaction, or not modelled)."""
        body = dict(context.command_document)
        raw = context.raw_body if isinstance(context.raw_body, Mapping) else {}
        target, query = body.get("count"), body.get("query")
        if (
            not isinstance(target, str)
            or target.startswith("system.")
            or (query is not None and not isinstance(query, Mapping))
        ):
            return None
        if any({**raw, **body}.get(field) is not None for field in TRANSACTION_FIELDS):
            return None
        if _in_transaction(getattr(context, "session", None)):
            return None
        skip, limit, hint = body.get("skip"), body.get("limit"), body.get("hint")
        if not query and hint is None and skip is None and limit is None:
            return None  # the collection's own count
        for number in (skip, limit):
            if number is not None and (isinstance(number, bool) or not isinstance(number, int | float)):
                return None
        if skip is not None and skip < 0:
            return None  # MongoDB refuses a negative skip: the engine words it
        database, name = str(context.db_name), target
        try:
            args = planner.FindArgs.of(
                engine_compat.to_pymongo(query or {}),
                skip=int(skip) if skip else None,
                limit=abs(int(limit)) if limit else None,  # limit(-n) counts as limit(n); 0 is no limit
                hint=engine_compat.to_pymongo(hint) if hint is not None else None,
                collation=body.get("collation"),
            )
        except ExplainError:
            return None
        started = time.perf_counter_ns()
        model = await self._explain.model(database, name)
        rids = await self._run(model, database, name, args)
        if rids is None:
            _refuse_incomplete_hint(model, args)
            return None
        self._profile(database, name, body, time.perf_counter_ns() - started, "count")
        return {"n": len(rids), "ok": 1.0}

    async def distinct(self, context: Any) -> dict[str, Any] | None:
        """The reply to a ``distinct`` command, from the documents the model's plan for its query
        returns (distinct1.js, distinct2.js, distinct_array1.js: a missing field gives no value, an
        array its elements, a positional path one element); None when the engine should answer it."""
        body = dict(context.command_document)
        raw = context.raw_body if isinstance(context.raw_body, Mapping) else {}
        key, query = body.get("key"), body.get("query")
        if not isinstance(key, str) or not key or (query is not None and not isinstance(query, Mapping)):
            return None  # malformed: the engine's validation answers
        target = body.get("distinct")
        if not isinstance(target, str) or target.startswith("system."):
            return None
        if any({**raw, **body}.get(field) is not None for field in TRANSACTION_FIELDS):
            return None  # inside a transaction: the engine sees its own writes
        if _in_transaction(getattr(context, "session", None)):
            return None
        database, name = str(context.db_name), str(body["distinct"])
        try:
            args = planner.FindArgs.of(
                engine_compat.to_pymongo(query or {}), hint=body.get("hint"), collation=body.get("collation")
            )
        except ExplainError:
            return None
        started = time.perf_counter_ns()
        model = await self._explain.model(database, name)
        rids = await self._run(model, database, name, args)
        if rids is None:
            return None
        collate = make_query(args, model.collation).collate
        found: dict[tuple, Any] = {}
        for rid in rids:
            for value in _distinct_values(model.documents[rid], key.split(".")):
                found.setdefault(sort_key(value, collate), value)
        self._profile(database, name, body, time.perf_counter_ns() - started, "distinct")
        return {"values": [found[k] for k in sorted(found)], "ok": 1.0}

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

    async def _run(
        self,
        model: Any,
        database: str,
        name: str,
        args: planner.FindArgs,
        sorted_in_memory: list[bool] | None = None,
        *,
        projected: bool = False,
    ) -> list[Any] | None:
        """Plan and run a find (without its projection) on the model, off the server's event loop, and
        count the indexes its plan used: the positions of the documents it returns, or None if refused
        (``projected``: the documents themselves, projected by the plan's PROJECTION stage).
        ``sorted_in_memory`` gets True when the winning plan has a blocking SORT stage."""
        namespace = f"{database}.{name}"

        def run() -> tuple[dict[str, Any], Sequence[Any]]:
            if projected:
                return planner.find_documents(model, namespace, args)
            return planner.find_records(model, namespace, replace(args, projection=None))

        ran = await self._modelled(run, refuse=False, at_once=_by_id(model, args))
        if ran is None:
            return None
        explain, rids = ran
        winning = explain["queryPlanner"]["winningPlan"]
        self.uses.record(database, name, indexes_used(winning))
        if sorted_in_memory is not None and _has_stage(winning, "SORT"):
            sorted_in_memory.append(True)
        return list(rids)

    def _check_sort_memory(self, model: Any, rids: list[int]) -> None:
        """A blocking sort run with ``allowDiskUse: false`` fails once the documents it holds pass the limit
        (code 292), as MongoDB's does; with disk use allowed (the default since 6.0) it would spill, and answers."""
        from mongoeco.errors import OperationFailure

        held = sum(bson_size(model.documents[rid]) for rid in rids)
        if held > self.sort_memory_limit:
            raise OperationFailure(
                f"Executor error during find command :: caused by :: Sort exceeded memory limit of "
                f"{self.sort_memory_limit} bytes, but did not opt in to external sorting.",
                code=QUERY_EXCEEDED_MEMORY_LIMIT,
            )

    def _profile(
        self, database: str, name: str, body: Mapping[str, Any], nanoseconds: int, command_name: str = "find"
    ) -> None:
        """Record the command in the database profiler (``system.profile``) when it is on, as MongoDB does: a
        find as ``op: "query"``, a count or distinct as ``op: "command"``; the command's own fields, its
        ``comment`` included (what a learner tags a query with to find it there: pymongo's test_comment)."""
        micros = max(1, nanoseconds // 1000)
        if not self._engine._profile_is_active(database, duration_micros=micros):
            return
        command = {command_name: name, **{k: body[k] for k in PROFILED_FIELDS if body.get(k) is not None}}
        op = "query" if command_name == "find" else "command"
        self._engine._record_profile_event(database, op=op, command=command, duration_micros=micros)

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


def _distinct_values(value: Any, parts: list[str]) -> Iterator[Any]:
    """The values ``distinct`` takes from one document at a dotted path: arrays along the way are
    traversed, a numeric part picks that element of an array, an array at the end gives its
    elements, and a missing field (or a scalar in the way) gives nothing."""
    if not parts:
        if isinstance(value, list):
            yield from value
        else:
            yield value
        return
    head, rest = parts[0], parts[1:]
    if isinstance(value, Mapping):
        if head in value:
            yield from _distinct_values(value[head], rest)
    elif isinstance(value, list):
        if head.isdigit():
            if int(head) < len(value):
                yield from _distinct_values(value[int(head)], rest)
            return
        for element in value:
            if isinstance(element, Mapping):
                yield from _distinct_values(element, parts)


def _refuse_ignored(body: Mapping[str, Any], options: Sequence[str]) -> None:
    """Refuse, by name, a find with one of ``options`` (of :data:`IGNORED_BY_THE_ENGINE`) set (a value other
    than None or False, as pymongo leaves unset options out)."""
    named = [name for name in options if option_set(body, name)]
    if named:
        raise _refusal(
            not_modelled(
                f"the find option(s) {', '.join(named)} (the offline engine would ignore them and return every "
                "matching document whole)"
            )
        )


def _refusal(error: ExplainError) -> Exception:
    """The server's error for a query the offline default refuses by name: CommandNotSupported (115), the fix
    after the message (as :func:`workbook.offline_explain.error_from_reply` reads it back)."""
    return engine_compat.bad_value(f"{error.message}\nFix: {error.fix}", NOT_MODELLED_CODE)


def _refuse_incomplete_hint(model: Any, args: planner.FindArgs) -> None:
    """Refuse, by name, a filter the model does not cover whose hint names a sparse or partial index:
    MongoDB returns only what that index holds (sparse_index_internal_expr.js), which the engine,
    matching every document, would not; an answer the offline default cannot give right is refused."""
    if args.hint is None:
        return
    for spec in model.specs:
        if (spec.sparse or spec.partial is not None) and spec.hinted_by(args.hint):
            kind = "sparse" if spec.sparse else "partial"
            error = not_modelled(
                f"this filter over the hinted {kind} index {spec.name!r} (MongoDB returns only the documents "
                "that index holds; the offline engine would return every match)"
            )
            raise _refusal(error)


def _project_pushed(projection: Mapping[str, Any], filter_spec: Any, documents: list[Any]) -> list[Any]:
    """A leading ``$project`` pushed into the find: an inclusion of fields follows MongoDB's aggregation
    rules (nested specs, any number as a flag, ``{}`` kept for a subdocument without the field:
    non_existent_subfield.js); anything else is the engine's projection."""
    flat = offline_aggregation.flatten(projection)
    flags = [offline_aggregation.flag(value) for value in flat.values()]
    if all(f is not None for f in flags) and any(f == 1 for path, f in zip(flat, flags, strict=True) if path != "_id"):
        project_one = offline_aggregation.inclusion_projector(flat)
        return [project_one(document, _no_expressions) for document in documents]
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


_PLAIN_IDS = frozenset({str, int, float, bool, datetime.datetime, ObjectId})
"""Exact types of an ``_id`` that a find by ``_id`` looks up as itself (no array, document, regex or null)."""


def _by_id(model: Any, args: planner.FindArgs) -> bool:
    """Whether a find is ``{_id: <plain value>}`` alone on a collection with an ``_id`` index: its plan (IDHACK)
    reads one document at most, so it runs on the server's loop rather than crossing to a worker thread and
    back (175 us a find on this machine, more than the run)."""
    return type(_lone_id(args)) in _PLAIN_IDS and any(spec.paths == ["_id"] for spec in model.specs)


def _lone_id(args: planner.FindArgs) -> Any:
    """The ``_id`` a find asks for when its filter is ``{_id: <value>}`` alone, with no hint, skip, sort or
    collation (what IDHACK answers); :data:`_NO_ID` for any other find."""
    if len(args.filter) != 1 or args.hint is not None or args.skip or args.sort or args.collation:
        return _NO_ID
    return args.filter.get("_id", _NO_ID)


_NO_ID = object()

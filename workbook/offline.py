"""The offline default: mongoeco's in-memory engine, served over the MongoDB wire protocol inside
this process, so learners (and the test suite) use a real pymongo client with no server to install.

Why this design (measured 2026-11-30, mongoeco 4.11.0; maintainers' notes in docs/offline-engine.md):

- mongoeco's own in-process client is not pymongo (no ``Cursor.collation``, no ``Database.client``);
  its wire server gives real pymongo objects, so a learner's code cannot tell the engines apart.
- Three subclasses carry the workbench's fixes: :func:`_engine_class` (storage: the 16 MiB limit
  with MongoDB's codes, linear inserts, a race-free unique index build), ``_WorkbenchExecutor``
  (commands: each rewrite or answer is one entry in :data:`COMMAND_HOOKS` or :func:`_rewrite`) and
  ``_WorkbenchProxy`` (installs the executor and the per-process credentials).
- Every private mongoeco name used here comes from :mod:`workbook.engine_compat`, whose contract
  test names whatever a mongoeco upgrade moved.
- The server is this process's alone: it listens on 127.0.0.1 and requires a user and password
  generated for this process (SCRAM-SHA-256); :func:`workbook.connect` passes them, nobody else
  has them. Each upstream-worthy fix is written up in ``patches/``.

Nothing starts at import: the server starts on the first :func:`offline_server` call.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import random
import secrets
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from typing import Any, TypeVar
from urllib.parse import quote_plus

import bson

from workbook import engine_compat, offline_transactions, offline_validators, offline_views, offline_writes
from workbook.facts import FIRST_BATCH_DOCUMENTS, MAX_BSON_SIZE
from workbook.facts import bson_size as _plain_bson_size
from workbook.lazy_imports import defer_iri_grammar

PACKAGE = "mongoeco"
_T = TypeVar("_T")

TOO_LARGE_ON_INSERT = 10334
"""MongoDB's code for inserting a document over 16 MiB (BSONObjectTooLarge)."""
TOO_LARGE_AFTER_UPDATE = 17419
"""MongoDB's code for an update whose resulting document is over 16 MiB."""

_write_kind: contextvars.ContextVar[str] = contextvars.ContextVar("workbook_write_kind", default="insert")

WORK_COUNTERS: dict[str, int] = {"insert_calls": 0, "id_documents_examined": 0}
"""Work done by the engine for inserts: a guard test tells linear from quadratic inserts with it."""


def _count_id_scan(storage: Mapping[str, Any], db_name: str, coll_name: str) -> None:
    """Count a walk over every stored document's _id (what mongoeco does for numeric ids)."""
    WORK_COUNTERS["id_documents_examined"] += len(storage.get(db_name, {}).get(coll_name, {}))


def _engine_class() -> type:
    """Build the patched engine class (imports mongoeco only when the offline default is used)."""
    defer_iri_grammar()  # mongoeco imports jsonschema, which would build a 1.4 s grammar nothing here uses
    from mongoeco.errors import WriteError

    engine_compat.install_type_bracketing()
    engine_compat.install_bson_value_sizes()
    engine_compat.install_aggregation_semantics()
    record_type, default_index_name, normalize_index_keys, duplicate_error = engine_compat.index_helpers()
    from mongoeco.core.collation import normalize_collation, string_equality_key

    memory_engine: Any = offline_transactions.engine_class(engine_compat.memory_engine_class())  # per-document txns
    change_log: Any = offline_writes.change_log_mixin(engine_compat.committed_change_class())

    fast_writes = (offline_writes.YieldingWrites, offline_writes.CountedCandidates, offline_writes.MissingIdIsEmpty)

    class _WorkbenchEngine(*fast_writes, change_log, memory_engine):  # type: ignore[misc]
        """mongoeco's memory engine with the storage-level fixes the course needs."""

        def _ensure_unique_indexes(self, db_name: str, coll_name: str, candidate: Any, **kw: Any) -> None:
            # The full-collection _id scan only matters for numeric ids (1 == 1.0 == Decimal128("1"),
            # different storage keys); for every other id the storage-key lookup is exact.
            numeric = engine_compat.id_contains_numeric_value(candidate.get("_id"))
            if kw.get("scan_payload_id") and not numeric:
                kw["scan_payload_id"] = False
            if kw.get("check_id_storage") and (kw.get("scan_payload_id") or numeric):
                _count_id_scan(kw.get("storage_view") or self._storage, db_name, coll_name)
            super()._ensure_unique_indexes(db_name, coll_name, candidate, **kw)

        async def insert_documents(self, db_name: str, coll_name: str, documents: Any, **kw: Any) -> Any:
            # mongoeco collects every stored _id once per call when a numeric _id is inserted: one
            # call per batch is linear, one call per document (its own wire insert) is quadratic.
            WORK_COUNTERS["insert_calls"] += 1
            if any(engine_compat.id_contains_numeric_value(d.get("_id")) for d in documents):
                _count_id_scan(self._storage, db_name, coll_name)
            return await super().insert_documents(db_name, coll_name, documents, **kw)

        async def update_with_operation(self, *args: Any, **kwargs: Any) -> Any:
            token = _write_kind.set("update")
            try:
                return await super().update_with_operation(*args, **kwargs)
            finally:
                _write_kind.reset(token)

        async def merge_document(self, *args: Any, **kwargs: Any) -> Any:
            token = _write_kind.set("update")
            try:
                return await super().merge_document(*args, **kwargs)
            finally:
                _write_kind.reset(token)

        async def create_index(self, db_name: str, coll_name: str, keys: Any, **options: Any) -> str:
            # mongoeco checks a new unique index pairwise over all documents (O(n^2): 2,000 documents
            # took 16 s). For the plain case, build it as non-unique, then check with one set and mark
            # it unique in one step under the collection lock (no insert can slip in between); a
            # conflict drops the half-built index. A collation compares strings by their collation key
            # (5,000 e-mails under strength 2 took minutes pairwise). Anything unusual (partial, sparse,
            # a transaction, an existing index of that name, a collated key holding a subdocument or
            # an array) keeps mongoeco's own path.
            _check_index_limits(self, db_name, coll_name, keys, options.get("context"))  # workbook.offline_limits
            context = options.get("context")
            plain = (
                options.get("unique")
                and not any(options.get(option) for option in ("partial_filter_expression", "sparse"))
                and not (context is not None and context.in_transaction)  # implicit wire sessions are fine
            )
            if not plain:
                return str(await super().create_index(db_name, coll_name, keys, **options))
            normalized = normalize_index_keys(keys)
            name = options.get("name") or default_index_name(normalized)
            existing = self._indexes_view(context).get(db_name, {}).get(coll_name, [])
            if any(record.name == name or list(record.key) == list(normalized) for record in existing):
                return str(await super().create_index(db_name, coll_name, keys, **options))
            fields = [field for field, _ in normalized]
            created = str(await super().create_index(db_name, coll_name, keys, **{**options, "unique": False}))
            failure: Exception | None = None
            async with self._get_lock(db_name, coll_name):
                failure = self._unique_conflict(
                    db_name, coll_name, context, fields, normalized, created, options.get("collation")
                )
                if failure is None:
                    records = self._indexes_view(context)[db_name][coll_name]
                    for position, record in enumerate(records):
                        if record.name == created:
                            records[position] = dataclasses.replace(record, unique=True)
            if failure is _UNSURE:  # a collated key mongoeco must compare itself (after the lock is released)
                await super().drop_index(db_name, coll_name, created, context=context)
                return str(await super().create_index(db_name, coll_name, keys, **options))
            if failure is not None:
                await super().drop_index(db_name, coll_name, created, context=context)
                raise failure
            return created

        def _unique_conflict(
            self,
            db_name: str,
            coll_name: str,
            context: Any,
            fields: list[str],
            key: Any,
            name: str,
            collation: Any = None,
        ) -> Any:
            """The E11000 error for the first two documents sharing a key, or None (one pass, one set).

            Under a ``collation`` strings count by their collation key (``string_equality_key``, the
            key mongoeco groups by); a key holding a subdocument or an array returns ``_UNSURE``.
            """
            spec = normalize_collation(collation) if collation else None
            seen: set[Any] = set()
            for data in self._storage_view(context).get(db_name, {}).get(coll_name, {}).values():
                document = self._borrow_storage_document(data)
                if spec is None:
                    document_keys = self._unique_index_keys(document, fields)
                else:
                    values = list(self._unique_index_values(document, fields))
                    if any(isinstance(v, dict | list) for value in values for v in value):
                        return _UNSURE
                    document_keys = {
                        tuple(
                            ("collated", string_equality_key(v, spec))
                            if type(v) is str
                            else self._index_equality_key(v)
                            for v in value
                        )
                        for value in values
                    }
                conflict = seen.intersection(document_keys)
                if conflict:
                    record = record_type(name=name, fields=fields, key=key, unique=True)
                    error: Exception = duplicate_error(
                        namespace=f"{db_name}.{coll_name}",
                        index=record,
                        document=document,
                        conflict=next(iter(conflict)),
                    )
                    return error
                seen.update(document_keys)
            return None

        def _encode_storage_document(self, document: Any) -> Any:
            _check_depth(document)  # workbook.offline_limits: nesting depth 100
            size = bson_size(document)
            if size > MAX_BSON_SIZE:
                # Raised inside the engine's rollback scope: the stored document and its index
                # entries stay as they were, as on MongoDB.
                if _write_kind.get() == "update":
                    raise WriteError(
                        f"Resulting document after update is larger than {MAX_BSON_SIZE} "
                        f"(document is {size} bytes; 16 MiB, enforced by the workbench on the offline default)",
                        code=TOO_LARGE_AFTER_UPDATE,
                    )
                raise WriteError(
                    f"BSONObjectTooLarge: document is {size} bytes, larger than the maximum "
                    f"{MAX_BSON_SIZE} bytes (16 MiB), enforced by the workbench on the offline default",
                    code=TOO_LARGE_ON_INSERT,
                )
            return super()._encode_storage_document(document)

    return _WorkbenchEngine


def _check_depth(document: Any) -> None:
    """Raise MongoDB's error for a document nested deeper than 100 levels (mongoeco accepts it)."""
    from mongoeco.errors import WriteError

    from workbook.offline_limits import depth_error

    error = depth_error(document)
    if error is not None:
        raise WriteError(error[1], code=error[0])


def _check_index_limits(engine: Any, db_name: str, coll_name: str, keys: Any, context: Any) -> None:
    """Raise MongoDB's error for an index over the 64-index, 32-field or parallel-arrays limits."""
    from mongoeco.errors import OperationFailure

    from workbook.offline_limits import new_index_error, parallel_arrays_error

    normalize_index_keys = engine_compat.index_helpers()[2]
    normalized: list[tuple[str, Any]] = [(str(field), way) for field, way in normalize_index_keys(keys)]
    records = engine._indexes_view(context).get(db_name, {}).get(coll_name, [])
    keys_of: list[list[tuple[str, Any]]] = [[("_id", 1)]]
    keys_of += [[(str(field), way) for field, way in record.key] for record in records]
    existing = [k for i, k in enumerate(keys_of) if k not in keys_of[:i]]  # _id counts once, listed or not
    error = new_index_error(f"{db_name}.{coll_name}", normalized, existing)
    if error is None:
        stored = engine._storage_view(context).get(db_name, {}).get(coll_name, {}).values()
        documents = (engine._borrow_storage_document(data) for data in stored)
        error = parallel_arrays_error(documents, [field for field, _ in normalized])
    if error is not None:
        raise OperationFailure(error[1], code=error[0])


_UNSURE = object()
"""A unique-index check the one-pass path cannot decide (a collated key holding a subdocument or array)."""


def bson_size(document: Mapping[str, Any]) -> int:
    """Size in bytes of ``document`` encoded as BSON, as ``$bsonSize`` reports it."""
    try:
        return _plain_bson_size(document)
    except (bson.errors.InvalidDocument, TypeError, ValueError):
        # Engine-side documents hold mongoeco's own scalar types (BsonInt64, Decimal128, DBRef...):
        # convert them to pymongo's, then let pymongo's encoder count.
        return len(bson.encode(engine_compat.to_pymongo(dict(document))))


DEFAULT_FIRST_BATCH = FIRST_BATCH_DOCUMENTS
"""MongoDB returns at most 101 documents in a cursor's first batch unless told otherwise."""

BAD_VALUE, TYPE_MISMATCH, INVALID_OPTIONS, NAMESPACE_NOT_FOUND, UNAUTHORIZED = 2, 14, 72, 26, 13
WRITE_CONFLICT, NO_SUCH_TRANSACTION = 112, 251
"""MongoDB error codes the executor answers with."""

TRANSIENT = "TransientTransactionError"
"""The label that tells drivers (``with_transaction``) to retry the whole transaction."""


def _transaction_key(body: Mapping[str, Any]) -> tuple[str, Any] | None:
    """``(session id, txnNumber)`` of a command sent inside a transaction, else None."""
    if body.get("autocommit") is False and "txnNumber" in body and isinstance(body.get("lsid"), Mapping):
        return repr(body["lsid"].get("id")), body["txnNumber"]
    return None


CommandHook = Callable[["OfflineServer", str, dict[str, Any]], Awaitable[dict[str, Any] | None]]
"""``hook(server, db_name, command) -> reply or None``: answer a command, or None to let the engine run it."""

COMMAND_HOOKS: dict[str, CommandHook] = {}
"""Commands the workbench answers itself, by command name (e.g. ``explain``); see :func:`register_command`."""

WRITE_COMMANDS = frozenset(
    {
        "insert",
        "update",
        "delete",
        "findAndModify",
        "create",
        "drop",
        "dropDatabase",
        "createIndexes",
        "dropIndexes",
        "collMod",
        "renameCollection",
        "aggregate",
    }
)
WriteListener = Callable[[str, str, str], None]
"""``listener(command, db_name, collection)``: called after a write command succeeds."""
WRITE_LISTENERS: list[WriteListener] = []
"""Called after every successful write command from any client (e.g. to invalidate explain caches)."""


def register_command(name: str, hook: CommandHook) -> None:
    """Answer the wire command ``name`` with ``hook`` on the offline default (replaces an earlier hook)."""
    COMMAND_HOOKS[name] = hook


def _writes_out(aggregate: dict[str, Any]) -> bool:
    """Whether a pipeline ends in $out or $merge (no cursor batches to size)."""
    pipeline = aggregate.get("pipeline") or [{}]
    return any(stage in pipeline[-1] for stage in ("$out", "$merge"))


SIMPLE_COLLATIONS = ("simple", "en")


def _collation(spec: Any) -> Any:
    """A collation the engine accepts: mongoeco knows only ``simple`` and ``en``; any other locale
    is compared with the ``en`` (root Unicode) rules at the same strength, which is what strengths 1-3
    give for the Latin-script data the course uses."""
    if isinstance(spec, Mapping) and spec.get("locale") not in SIMPLE_COLLATIONS and "locale" in spec:
        return {**spec, "locale": "en"}
    return spec


def _rewrite(command: str, body: dict[str, Any]) -> dict[str, Any]:
    """Adjust a command's body before the engine parses it (each rewrite closes one gap)."""
    if command == "buildinfo":  # pymongo's server_info() sends the lowercase spelling
        body = {"buildInfo" if k == "buildinfo" else k: v for k, v in body.items()}
    if command == "find" and "batchSize" not in body:
        body = {**body, "batchSize": DEFAULT_FIRST_BATCH}
    if command == "aggregate" and "batchSize" not in body.get("cursor", {}) and not _writes_out(body):
        body = {**body, "cursor": {**body.get("cursor", {}), "batchSize": DEFAULT_FIRST_BATCH}}
    if command == "create":  # drivers may send a capped size as a double (MongoDB accepts 4096.0)
        for key in ("size", "max"):
            if isinstance(body.get(key), float) and body[key].is_integer():
                body = {**body, key: int(body[key])}
    if "collation" in body:
        body = {**body, "collation": _collation(body["collation"])}
    if isinstance(body.get("let"), Mapping):  # let values are expressions: {$literal: "$x"} is the string "$x"
        body = {**body, "let": {k: _literal(v) for k, v in body["let"].items()}}
    if command == "aggregate" and body.get("aggregate") == 1:
        body = _database_aggregate(body)
    if command == "findAndModify" and isinstance(body.get("update"), Mapping) and not body["update"]:
        body = {**body, "update": EMPTY_REPLACEMENT}
    if command == "explain" and isinstance(body.get("explain"), dict) and body["explain"]:
        inner = body["explain"]
        body = {**body, "explain": _rewrite(str(next(iter(inner))), inner)}
    for key in ("updates", "deletes", "indexes"):
        if isinstance(body.get(key), list):
            body = {**body, key: [_statement(item) for item in body[key]]}
    return body


DATABASE_AGGREGATE = "$cmd.aggregate"
"""Where a database-level ``aggregate: 1`` runs (MongoDB reports this namespace for its cursor too)."""


def _database_aggregate(body: dict[str, Any]) -> dict[str, Any]:
    """``db.aggregate(...)``: mongoeco needs a collection, so its first stage becomes ``$documents``.

    ``$listLocalSessions`` lists the calling session (the only one a learner's code can see);
    ``$currentOp`` lists nothing (the engine runs one command at a time).
    """
    import datetime

    pipeline = list(body.get("pipeline") or [])
    first = pipeline[0] if pipeline and isinstance(pipeline[0], Mapping) else {}
    if "$listLocalSessions" in first:
        lsid = body.get("lsid")
        sessions = (
            [{"_id": {"id": lsid.get("id")}, "lastUse": datetime.datetime.now(datetime.UTC)}]
            if isinstance(lsid, Mapping)
            else []
        )
        pipeline[0] = {"$documents": sessions}
    elif "$currentOp" in first:
        pipeline[0] = {"$documents": []}
    return {**body, "aggregate": DATABASE_AGGREGATE, "pipeline": pipeline}


def _literal(value: Any) -> Any:
    """The value of a ``let`` expression mongoeco binds unevaluated: ``{"$literal": v}`` and ``{"$rand": {}}``."""
    if isinstance(value, Mapping) and list(value) == ["$literal"]:
        return value["$literal"]
    if isinstance(value, Mapping) and list(value) == ["$rand"]:
        return random.random()  # noqa: S311 - MongoDB's $rand, not a secret
    return value


EMPTY_REPLACEMENT = [{"$project": {"_id": 1}}]
"""``replace_one(f, {})`` as the update pipeline that does the same: keep only ``_id``."""


def _statement(item: Any) -> Any:
    """One update/delete statement or index spec with its collation and empty replacement fixed."""
    if not isinstance(item, dict):
        return item
    if "collation" in item:
        item = {**item, "collation": _collation(item["collation"])}
    if "u" in item and isinstance(item["u"], Mapping) and not item["u"]:
        # replace_one(f, {}) keeps only _id, as on MongoDB; mongoeco refuses an empty replacement.
        item = {**item, "u": EMPTY_REPLACEMENT}
    if "dropDups" in item and "key" in item:  # ignored by MongoDB since 3.0; refused by mongoeco
        item = {k: v for k, v in item.items() if k != "dropDups"}
    return item


def _executor_class() -> type:
    """Build the wire executor subclass (imports mongoeco only when the offline default is used)."""
    _proxy_class, executor_class, _user = engine_compat.wire_classes()
    base: Any = executor_class

    class _WorkbenchExecutor(base):
        """mongoeco's wire command executor with the commands lessons need and it lacks."""

        server: OfflineServer | None = None

        _coll_mods: dict[int, tuple[str, dict[str, Any]]]

        def _build_request_context(self, body: dict[str, Any], **kw: Any) -> Any:
            explained = self._explain.intercept(super(), body, kw)  # explain hook: the planner model answers
            if explained is not None:
                return explained
            command = next(iter(body), None)
            offline_validators.check_validator_command(command, body)  # an unknown bsonType: BadValue, as MongoDB
            if command in OFF_SURFACE:  # not on mongoeco's wire surface: parse as a ping, answer it here
                db_name = kw.get("db_name") or body.get("$db")
                ping = {"ping": 1, **{k: v for k, v in body.items() if k.startswith("$") or k == "lsid"}}
                context = super()._build_request_context(ping, **kw)
                self._coll_mods[id(context)] = (str(db_name), dict(body))
                return context
            body = _rewrite(str(command), body)
            body = self._through_views(str(command), body, kw)
            body = offline_views.prepare_aggregate(self._collection_options(kw, body), str(command), body)
            return super()._build_request_context(self._hinted_order(str(command), body, kw), **kw)

        def _hinted_order(self, command: str, body: dict[str, Any], kw: Mapping[str, Any]) -> dict[str, Any]:
            """A hinted ``find`` without a sort returns documents in the index's order, as MongoDB's index
            scan does (mongoeco answers in insertion order)."""
            hint = body.get("hint")
            if command != "find" or not hint or body.get("sort") or self.server is None:
                return body
            db_name = str(kw.get("db_name") or body.get("$db"))
            records = self.server.engine._indexes.get(db_name, {}).get(str(body.get("find")), [])
            wanted = list(dict(hint).items()) if isinstance(hint, Mapping) else None
            for record in records:
                if record.name == hint or (wanted is not None and list(record.key) == wanted):
                    return {**body, "sort": dict(record.key)}
            return body

        def _collection_options(self, kw: Mapping[str, Any], body: Mapping[str, Any]) -> Mapping[str, Any]:
            if self.server is None:
                return {}
            return self.server.engine._collection_options.get(str(kw.get("db_name") or body.get("$db")), {})

        def _through_views(self, command: str, body: dict[str, Any], kw: Mapping[str, Any]) -> dict[str, Any]:
            """Reads of a view become aggregations on its source; writes to a view are refused."""
            from mongoeco.errors import OperationFailure

            target = body.get(command)
            if command not in VIEW_COMMANDS or not isinstance(target, str) or self.server is None:
                return body
            db_name = str(kw.get("db_name") or body.get("$db"))
            options = self.server.engine._collection_options.get(db_name, {})
            view = offline_views.resolve_view(options.get, target)
            if view is None:
                return body
            if command == "find":
                return offline_views.find_as_aggregate(body, *view)
            if command == "aggregate":
                return offline_views.aggregate_on_view(body, *view)
            raise OperationFailure(
                f"Namespace {db_name}.{target} is a view, not a collection", code=offline_views.VIEW_WRITE_REFUSED
            )

        _aborted: set[tuple[str, Any]]
        _explain: Any  # workbook.explaining.native.ExplainHook, installed by _WorkbenchProxy
        _reads: Any  # workbook.offline_reads.ReadLayer, installed by _WorkbenchProxy

        async def execute_prepared(self, context: Any) -> dict[str, Any]:
            from mongoeco.errors import OperationFailure

            command, db_name = context.command_name, context.db_name
            local = self._coll_mods.pop(id(context), None)
            if local is not None:
                command, db_name = str(next(iter(local[1]))), local[0]
            open_kind = context.capability.kind in OPEN_COMMAND_KINDS
            if not open_kind and self._auth.enabled and not context.connection.authenticated_users:
                raise OperationFailure(f"command {command} requires authentication", code=UNAUTHORIZED)
            _check_write_concern(context.raw_body)
            transaction = _transaction_key(context.raw_body)
            if self.server is not None:  # maxTimeMS for writes that wait; NoSuchTransaction once expired
                offline_transactions.before_command(self.server.engine, context.raw_body, context.session)
            if transaction is not None and transaction in self._aborted:
                if command == "abortTransaction":
                    return {"ok": 1.0}
                raise OperationFailure(
                    f"Transaction {getattr(transaction[1], 'value', transaction[1])} has been aborted "
                    "(an earlier operation in it failed)",
                    code=NO_SUCH_TRANSACTION,
                    error_labels=(TRANSIENT,),
                )
            try:
                answer = self._answer(context, command, db_name, local)
                reply = await (answer if open_kind or self.server is None else self.server.on_engine(answer))
            except OperationFailure as error:
                if command == "commitTransaction" and "Write conflict" in str(error):
                    # mongoeco detects the conflict at commit, without MongoDB's code and label, so
                    # with_transaction would give up instead of retrying the whole transaction; and
                    # it leaves the stale snapshot in place, so the retry would conflict forever.
                    self._session_store.abort_transaction({"lsid": context.raw_body["lsid"]})
                    raise OperationFailure(
                        f"WriteConflict: {error} (another write committed after this transaction started)",
                        code=WRITE_CONFLICT,
                        error_labels=(TRANSIENT,),
                    ) from error
                if transaction is not None and command not in ("commitTransaction", "abortTransaction"):
                    self._abort(context, transaction)
                raise
            _fill_write_error_codes(reply)
            if transaction is not None and reply.get("writeErrors"):
                self._abort(context, transaction)
            return self._finish(context, command, db_name, local, reply)

        def _abort(self, context: Any, transaction: tuple[str, Any]) -> None:
            """A failed operation aborts its transaction, as on MongoDB: nothing of it is committed."""
            self._aborted.add(transaction)
            self._session_store.abort_transaction({"lsid": context.raw_body["lsid"]})

        async def _answer(
            self, context: Any, command: str, db_name: str, local: tuple[str, dict[str, Any]] | None
        ) -> dict[str, Any]:
            """The reply to one command: native explain's, a registered hook's, the workbench's own, or the engine's."""
            explained = await self._explain.answer(context)  # explain hook
            if explained is not None:
                return dict(explained)
            self._explain.note(context)  # explain hook: count writes from any client (before and after)
            try:
                return await self._dispatch(context, command, db_name, local)
            finally:
                self._explain.note(context)

        async def _dispatch(
            self, context: Any, command: str, db_name: str, local: tuple[str, dict[str, Any]] | None
        ) -> dict[str, Any]:
            """The reply of a registered hook, of the workbench's own handlers, or of the engine."""
            hook = COMMAND_HOOKS.get(command)
            if hook is not None and self.server is not None:
                reply = await hook(self.server, db_name, dict(context.command_document))
                if reply is not None:
                    return reply
            if local is not None and command == "usersInfo":
                return {
                    "users": [
                        {
                            "_id": f"admin.{USER}",
                            "user": USER,
                            "db": "admin",
                            "roles": [{"role": "root", "db": "admin"}],
                        }
                    ],
                    "ok": 1.0,
                }
            if local is not None and command == "getParameter":
                return {
                    "authenticationMechanisms": list(MECHANISMS),
                    "requireApiVersion": False,
                    "enableTestCommands": False,
                    "featureCompatibilityVersion": {"version": "7.0"},
                    "ok": 1.0,
                }
            if local is not None:
                return await self._coll_mod(db_name, local[1])
            if command == "find" and self.server is not None:
                read = await self._reads.find(context, self._cursor_store)  # the planner model's plan runs it
                if read is not None:
                    return read
            if command == "insert":
                return await self._insert(context)
            if command == "renameCollection":
                return await self._rename(context.command_document, context.session)
            if command == "count" and self.server is not None:
                view = self._view_of(db_name, context.command_document.get("count"))
                if view is not None:
                    return await self._count_view(db_name, context.command_document, view, context.session)
            if command == "aggregate" and _ends_in_out(context.command_document):
                return await self._aggregate_out(context)
            return dict(await super().execute_prepared(context))

        def _finish(
            self,
            context: Any,
            command: str,
            db_name: str,
            local: tuple[str, dict[str, Any]] | None,
            reply: dict[str, Any],
        ) -> dict[str, Any]:
            """Adjust a successful reply to MongoDB's shape and tell the write listeners."""
            if command == "listCollections":
                reply = offline_views.mark_views(reply)
            reply = self._reads.after(command, db_name, context.command_document, reply)
            if command in ("aggregate", "getMore"):
                _check_result_sizes(reply)
            if context.capability.kind == "handshake" and "saslSupportedMechs" in context.command_document:
                # Drivers negotiate the mechanism from this (mongoeco omits it; pymongo then tries SHA-1).
                reply = {**reply, "saslSupportedMechs": list(MECHANISMS)}
            writes = command in WRITE_COMMANDS and (command != "aggregate" or _writes_out(context.command_document))
            if writes and reply.get("ok") and WRITE_LISTENERS:
                collection = str((local[1] if local else context.command_document).get(command, ""))
                for listener in WRITE_LISTENERS:
                    listener(command, db_name, collection)
            return reply

        async def _insert(self, context: Any) -> dict[str, Any]:
            """``insert`` as one engine batch: mongoeco's own command inserts one document at a time,
            rebuilding a set of every numeric _id per document (O(n^2) for numeric ids)."""
            body = context.command_document
            documents = list(body.get("documents") or [])
            too_large = any(bson_size(document) > MAX_BSON_SIZE for document in documents)
            if not documents or not isinstance(body.get("insert"), str) or too_large:
                # mongoeco's own one-by-one path reports a too-large document as that document's
                # write error (code 10334), as MongoDB does; the batch path would fail the command.
                return dict(await super().execute_prepared(context))
            collection = self._client.get_database(context.db_name).get_collection(body["insert"])
            ordered = bool(body.get("ordered", True))
            inserted, start = 0, 0
            errors: list[dict[str, Any]] = []
            # Documents MongoDB refuses before storage (a $-prefixed field in _id) split the batch.
            for index in [*(i for i, d in enumerate(documents) if _dollar_in_id(d)), len(documents)]:
                if (errors and ordered) or start > len(documents):
                    break
                run_inserted, run_errors = await self._insert_run(collection, documents[start:index], start, context)
                inserted, errors = inserted + run_inserted, errors + run_errors
                if index < len(documents) and not (run_errors and ordered):
                    errors.append(
                        {
                            "index": index,
                            "code": DOLLAR_PREFIXED_FIELD,
                            "errmsg": (f"_id fields may not contain '$'-prefixed fields: {documents[index]['_id']!r}"),
                        }
                    )
                start = index + 1
            reply: dict[str, Any] = {"n": inserted, "ok": 1.0}
            if errors:
                reply["writeErrors"] = errors
            return reply

        async def _insert_run(
            self, collection: Any, documents: list[Any], offset: int, context: Any
        ) -> tuple[int, list[dict[str, Any]]]:
            """Insert consecutive documents of one command with one engine call: (inserted, write errors)."""
            from mongoeco.errors import BulkWriteError

            if not documents:
                return 0, []
            body = context.command_document
            try:
                await collection.insert_many(
                    documents,
                    ordered=bool(body.get("ordered", True)),
                    bypass_document_validation=bool(body.get("bypassDocumentValidation", False)),
                    session=context.session,
                )
            except BulkWriteError as error:
                details = dict(getattr(error, "details", None) or {})
                errors = [
                    {**{k: v for k, v in dict(e).items() if k != "op"}, "index": int(dict(e)["index"]) + offset}
                    for e in details.get("writeErrors", [])
                ]
                return int(details.get("nInserted", 0)), errors
            return len(documents), []

        def _view_of(self, db_name: str, name: Any) -> tuple[str, list[dict[str, Any]]] | None:
            """``(source, pipeline)`` when ``name`` is a view in ``db_name``, else None."""
            if not isinstance(name, str) or self.server is None:
                return None
            return offline_views.resolve_view(self.server.engine._collection_options.get(db_name, {}).get, name)

        async def _count_view(
            self, db_name: str, body: Mapping[str, Any], view: tuple[str, list[dict[str, Any]]], session: Any
        ) -> dict[str, Any]:
            """``count`` (``estimated_document_count``) on a view counts what the view returns."""
            source, pipeline = view
            stages = offline_views.count_pipeline(body, pipeline)
            cursor = self._client.get_database(db_name).get_collection(source).aggregate(stages, session=session)
            counted = [document async for document in cursor]
            return {"n": int(counted[0]["n"]) if counted else 0, "ok": 1.0}

        async def _rename(self, body: Mapping[str, Any], session: Any) -> dict[str, Any]:
            """``renameCollection`` (sent to ``admin``): within a database by the engine, across by copying."""
            from mongoeco.errors import OperationFailure

            if _across_databases(body):
                return await self._rename_across_databases(body, session)
            (db_name, source_name), (_same, target_name) = (
                str(body[key]).split(".", 1) for key in ("renameCollection", "to")
            )
            database = self._client.get_database(db_name)
            names = await database.list_collection_names(session=session)
            if source_name not in names:
                raise OperationFailure(
                    f"Source collection {body['renameCollection']} does not exist", code=NAMESPACE_NOT_FOUND
                )
            if target_name in names:
                if not body.get("dropTarget"):
                    raise OperationFailure("target namespace exists", code=NAMESPACE_EXISTS)
                await database.drop_collection(target_name, session=session)
            await database.get_collection(source_name).rename(target_name, session=session)
            return {"ok": 1.0}

        async def _rename_across_databases(self, body: Mapping[str, Any], session: Any) -> dict[str, Any]:
            """``renameCollection`` to another database: copy documents and indexes, then drop the source."""
            from mongoeco.errors import OperationFailure

            (source_db, source_name), (target_db, target_name) = (
                str(body[key]).split(".", 1) for key in ("renameCollection", "to")
            )
            source_database = self._client.get_database(source_db)
            target_database = self._client.get_database(target_db)
            if source_name not in await source_database.list_collection_names(session=session):
                raise OperationFailure(
                    f"Source collection {body['renameCollection']} does not exist", code=NAMESPACE_NOT_FOUND
                )
            if target_name in await target_database.list_collection_names(session=session):
                if not body.get("dropTarget"):
                    raise OperationFailure("target namespace exists", code=NAMESPACE_EXISTS)
                await target_database.drop_collection(target_name, session=session)
            source = source_database.get_collection(source_name)
            documents = [document async for document in source.find({}, session=session)]
            indexes = [index async for index in await source.list_indexes(session=session)]
            await target_database.create_collection(target_name, session=session)
            target = target_database.get_collection(target_name)
            if documents:
                await target.insert_many(documents, session=session)
            for index in indexes:
                if index.get("name") != "_id_":
                    options = {k: v for k, v in index.items() if k in INDEX_OPTIONS}
                    await target.create_index(list(dict(index["key"]).items()), session=session, **options)
            await source_database.drop_collection(source_name, session=session)
            return {"ok": 1.0}

        async def _aggregate_out(self, context: Any) -> dict[str, Any]:
            """``$out``: run the pipeline before it, then replace the target collection with the result."""
            body = dict(context.command_document)
            pipeline = list(body["pipeline"])
            target = pipeline[-1]["$out"]
            target_db, target_coll = (
                (str(target.get("db", context.db_name)), str(target["coll"]))
                if isinstance(target, Mapping)
                else (context.db_name, str(target))
            )
            source = self._client.get_database(context.db_name).get_collection(body["aggregate"])
            let = body.get("let") if isinstance(body.get("let"), dict) else None
            cursor = source.aggregate(pipeline[:-1], session=context.session, let=let)
            documents = [document async for document in cursor]
            destination = self._client.get_database(target_db)
            await destination.drop_collection(target_coll, session=context.session)
            await destination.create_collection(target_coll, session=context.session)
            if documents:
                await destination.get_collection(target_coll).insert_many(documents, session=context.session)
            namespace = f"{context.db_name}.{body['aggregate']}"
            return {"cursor": {"id": 0, "ns": namespace, "firstBatch": []}, "ok": 1.0}

        async def _coll_mod(self, db_name: str, body: dict[str, Any]) -> dict[str, Any]:
            """``collMod`` for index visibility and validators, the parts the course uses."""
            from mongoeco.errors import OperationFailure

            coll_name = body["collMod"]
            assert self.server is not None, "the executor is installed by OfflineServer"
            engine = self.server.engine
            if coll_name not in engine._collection_options.get(db_name, {}) and coll_name not in engine._storage.get(
                db_name, {}
            ):
                raise OperationFailure(f"ns does not exist: {db_name}.{coll_name}", code=NAMESPACE_NOT_FOUND)
            _check_coll_mod(body)
            reply: dict[str, Any] = {}
            async with engine._get_lock(db_name, coll_name):
                if "index" in body:
                    reply.update(_set_index_hidden(engine, db_name, coll_name, body["index"]))
                options = engine._collection_options.setdefault(db_name, {}).setdefault(coll_name, {})
                for key in ("validator", "validationLevel", "validationAction"):
                    if key in body:
                        options[key] = body[key]
            return {**reply, "ok": 1.0}

    return _WorkbenchExecutor


VIEW_COMMANDS = frozenset({"find", "aggregate", "insert", "update", "delete", "findAndModify", "createIndexes"})
"""Commands that name a collection which may be a view (reads are resolved, writes refused)."""

OFF_SURFACE = frozenset({"collMod", "usersInfo", "getParameter"})
"""Commands mongoeco's wire surface lacks, answered by the executor (collMod: the course hides indexes)."""

OPEN_COMMAND_KINDS = frozenset({"handshake", "authenticate", "sasl_start", "sasl_continue", "logout"})
"""Command kinds a connection may send before it authenticates (hello and the SCRAM conversation)."""

COLL_MOD_OPTIONS = frozenset(
    {
        "collMod",
        "index",
        "validator",
        "validationLevel",
        "validationAction",
        "comment",
        "$db",
        "lsid",
        "$readPreference",
        "$clusterTime",
        "txnNumber",
        "autocommit",
    }
)
VALIDATION_LEVELS = ("off", "strict", "moderate")
VALIDATION_ACTIONS = ("error", "warn")


INDEX_OPTIONS = frozenset({"name", "unique", "sparse", "hidden", "expireAfterSeconds", "collation"})
"""Index options copied when a collection moves to another database."""
NAMESPACE_EXISTS = 48
DOLLAR_PREFIXED_FIELD = 52


def _dollar_in_id(document: Any) -> bool:
    """Whether a document's ``_id`` is a document with a ``$``-prefixed field (MongoDB refuses to store it)."""
    identifier = document.get("_id") if isinstance(document, Mapping) else None
    return isinstance(identifier, Mapping) and any(str(key).startswith("$") for key in identifier)


def _check_write_concern(body: Mapping[str, Any]) -> None:
    """A standalone server refuses ``w`` > 1, as MongoDB does (nothing can acknowledge it)."""
    from mongoeco.errors import OperationFailure

    concern = body.get("writeConcern")
    w = concern.get("w") if isinstance(concern, Mapping) else None
    w = getattr(w, "value", w)
    if isinstance(w, int) and not isinstance(w, bool) and w > 1:
        raise OperationFailure("cannot use 'w' > 1 when a host is not replicated", code=BAD_VALUE)


def _across_databases(command: Mapping[str, Any]) -> bool:
    """Whether a ``renameCollection`` moves a collection to another database (mongoeco refuses that)."""
    source, target = str(command.get("renameCollection", "")), str(command.get("to", ""))
    return "." in source and "." in target and source.split(".", 1)[0] != target.split(".", 1)[0]


def _ends_in_out(command: Mapping[str, Any]) -> bool:
    pipeline = command.get("pipeline")
    return (
        bool(pipeline) and isinstance(pipeline, list) and isinstance(pipeline[-1], Mapping) and ("$out" in pipeline[-1])
    )


def _check_coll_mod(body: Mapping[str, Any]) -> None:
    """Refuse what MongoDB refuses, before anything changes (a bad validator must not break later inserts)."""
    from mongoeco.errors import OperationFailure

    unknown = sorted(set(body) - COLL_MOD_OPTIONS)
    if unknown:
        raise OperationFailure(
            f"collMod option(s) {unknown} are not supported by the offline default; "
            "supported: index (hidden), validator, validationLevel, validationAction",
            code=INVALID_OPTIONS,
        )
    if "validator" in body and not isinstance(body["validator"], Mapping):
        raise OperationFailure(
            f"BSON field 'collMod.validator' is the wrong type '{type(body['validator']).__name__}', "
            "expected type 'object'",
            code=TYPE_MISMATCH,
        )
    for field, allowed in (("validationLevel", VALIDATION_LEVELS), ("validationAction", VALIDATION_ACTIONS)):
        if field in body and body[field] not in allowed:
            raise OperationFailure(
                f"Enumeration value '{body[field]}' for field 'collMod.{field}' is not a valid value; "
                f"choose from: {', '.join(allowed)}",
                code=BAD_VALUE,
            )
    if "index" in body and not isinstance(body["index"], Mapping):
        raise OperationFailure(
            "BSON field 'collMod.index' is the wrong type, expected type 'object'", code=TYPE_MISMATCH
        )


def _set_index_hidden(engine: Any, db_name: str, coll_name: str, spec: Mapping[str, Any]) -> dict[str, Any]:
    from mongoeco.errors import OperationFailure

    if "hidden" not in spec:
        raise OperationFailure(
            "collMod index: only 'hidden' can be changed on the offline default", code=INVALID_OPTIONS
        )
    records = engine._indexes.get(db_name, {}).get(coll_name, [])
    for position, record in enumerate(records):
        by_name = spec.get("name") == record.name
        by_key = "keyPattern" in spec and list(dict(spec["keyPattern"]).items()) == list(record.key)
        if by_name or by_key:
            if record.name == "_id_":
                raise OperationFailure("cannot modify hidden field of the _id_ index", code=INVALID_OPTIONS)
            hidden = bool(spec["hidden"])
            records[position] = dataclasses.replace(record, hidden=hidden)
            return {"hidden_old": bool(record.hidden), "hidden_new": hidden}
    raise OperationFailure(f"cannot find index {dict(spec)} for ns {db_name}.{coll_name}", code=27)


MAX_RESULT_SIZE = MAX_BSON_SIZE + 16 * 1024
"""MongoDB's internal document limit (16 MiB + 16 KiB): an aggregation result larger than this fails."""


def _check_result_sizes(reply: Mapping[str, Any]) -> None:
    """Fail as MongoDB does when an aggregation produces a document over the limit (e.g. a huge $group)."""
    from mongoeco.errors import OperationFailure

    cursor = reply.get("cursor") or {}
    for document in cursor.get("firstBatch") or cursor.get("nextBatch") or []:
        size = bson_size(document)
        if size > MAX_RESULT_SIZE:
            raise OperationFailure(
                f"BSONObjectTooLarge: an aggregation result document is {size} bytes; "
                f"the limit is {MAX_RESULT_SIZE} (16 MiB + 16 KiB). Group into smaller documents "
                "(e.g. $group on a finer key, or $project fewer fields before it)",
                code=TOO_LARGE_ON_INSERT,
            )


def _fill_write_error_codes(reply: Mapping[str, Any]) -> None:
    """Every writeErrors entry carries a code, as on MongoDB (pymongo reads ``code`` unconditionally)."""
    for entry in reply.get("writeErrors") or []:
        if isinstance(entry, dict) and entry.get("code") is None:
            entry["code"] = BAD_VALUE


MECHANISMS = ("SCRAM-SHA-256",)
"""mongoeco 4.11.0's SCRAM-SHA-1 does not verify pymongo's proofs; SHA-256 is MongoDB's default anyway."""

USER = "workbook"
"""The offline server's only user; its password is generated per process and never written down."""


def _proxy_class() -> type:
    """Build the proxy subclass that installs the workbench executor (no instance swapping)."""
    proxy_class, _executor, _user = engine_compat.wire_classes()
    base: Any = proxy_class
    executor = _executor_class()

    class _WorkbenchProxy(base):
        """mongoeco's wire server with the workbench's executor."""

        def __init__(self, *, server: OfflineServer, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self._executor = executor(
                self._client, self._cursor_store, self._session_store, surface=self._surface, auth=self._auth
            )
            self._executor.server = server
            self._executor._coll_mods = {}
            self._executor._aborted = set()
            from workbook.explaining.native import hook_for
            from workbook.offline_reads import ReadLayer

            self._executor._explain = hook_for(server.engine)
            self._executor._reads = ReadLayer(server.engine, self._executor._explain)

    return _WorkbenchProxy


class OfflineServer:
    """The engine on its own event loop thread, and its wire server on 127.0.0.1 on another.

    Two loops so a long engine command (a big unindexed ``$lookup`` takes minutes) never stalls the
    wire: handshakes, heartbeats and authentication are answered on the network loop while every
    command that touches data runs, one at a time as before, on the engine loop.
    """

    def __init__(self) -> None:
        defer_iri_grammar()  # before the first mongoeco import: see workbook.lazy_imports
        from mongoeco.api import AsyncMongoClient

        _proxy, _executor, user_class = engine_compat.wire_classes()
        self.engine = _engine_class()(aggregation_materialization_limit=None)
        self._client = AsyncMongoClient(self.engine)
        self._password = secrets.token_urlsafe(24)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="workbook-engine", daemon=True)
        self._thread.start()
        self._network_loop = asyncio.new_event_loop()
        self._network_thread = threading.Thread(
            target=self._network_loop.run_forever, name="workbook-offline-wire", daemon=True
        )
        self._network_thread.start()
        self._proxy = _proxy_class()(
            server=self,
            client=self._client,
            host="127.0.0.1",
            port=0,
            auth_users=(user_class(username=USER, password=self._password, mechanisms=MECHANISMS),),
        )
        address = asyncio.run_coroutine_threadsafe(self._proxy.start(), self._network_loop).result()
        self.host, self.port = str(address.host), int(address.port)
        self.uri = (
            f"mongodb://{USER}:{quote_plus(self._password)}@{self.host}:{self.port}/"
            "?directConnection=true&authSource=admin&authMechanism=SCRAM-SHA-256"
        )
        """The URI with this process's credentials: only :func:`workbook.connect` should need it."""
        self.address_uri = f"mongodb://{self.host}:{self.port}/?directConnection=true"
        """The address without credentials (what another process could find by scanning ports)."""
        self._check_hooks()

    def _check_hooks(self) -> None:
        """Fail loudly, with the fix, unless the workbench's wire hooks answer: a find's explain is the
        planner model's, and a command without credentials is refused with MongoDB's code 13."""
        from pymongo import MongoClient
        from pymongo.errors import OperationFailure

        from workbook.errors import OfflineEngineBrokenError
        from workbook.planner import MODELLED_FIELD

        fix = (
            f"Reinstall the pinned engine (pip install 'mongoeco=={engine_compat.TESTED_VERSION}'), or run "
            "tests/test_engine_compat.py to see which private names moved; or use a real MongoDB (MONGODB_URI)."
        )
        problems = engine_compat.problems() + engine_compat.instance_problems(self.engine, self._proxy)
        client: MongoClient[dict[str, Any]]
        anonymous: MongoClient[dict[str, Any]]
        with MongoClient(self.uri, serverSelectionTimeoutMS=5000) as client:
            explained: dict[str, Any] = client["workbench_selfcheck"]["c"].find({"a": 1}).explain()
        if MODELLED_FIELD not in explained:
            problems.append("a find's explain came back unmodelled (the explain hook did not answer)")
        with MongoClient(self.address_uri, serverSelectionTimeoutMS=5000) as anonymous:
            try:
                anonymous["workbench_selfcheck"].command("find", "c")
                problems.append("a find without credentials was answered (the authentication hook did not refuse it)")
            except OperationFailure as error:
                if error.code != UNAUTHORIZED:
                    problems.append(f"a find without credentials failed with code {error.code}, not {UNAUTHORIZED}")
        if problems:
            raise OfflineEngineBrokenError(
                f"The offline default (mongoeco {engine_compat.installed_version()}) does not answer as the "
                "workbench needs: " + "; ".join(problems), fix=fix,
            )  # fmt: skip

    @property
    def version(self) -> str:
        """The installed mongoeco version."""
        return engine_compat.installed_version()

    def run(self, coroutine: Coroutine[Any, Any, _T]) -> _T:
        """Run a coroutine on the engine's event loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    async def on_engine(self, coroutine: Coroutine[Any, Any, _T]) -> _T:
        """Await, from the network loop, a coroutine run on the engine loop."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coroutine, self._loop))

    def bulk_insert(self, db_name: str, coll_name: str, documents: Iterable[Mapping[str, Any]]) -> int:
        """Insert many documents straight into the engine (the fast path for loads); returns the count.

        Skips the driver-facing layer (its deep copies and per-value checks) but not the engine's
        own: validators, unique indexes and the 16 MiB limit all apply. Stops at the first
        rejected document, like an ordered ``insert_many``.
        """
        from bson import ObjectId
        from mongoeco.errors import WriteError

        batch = [{"_id": ObjectId(), **d} if "_id" not in d else dict(d) for d in documents]
        if not batch:
            return 0
        from workbook.explaining.native import hook_for  # explain hook: a write no command shows

        writes = hook_for(self.engine).writes
        writes.bump(db_name, coll_name)
        try:
            outcomes = self.run(self.engine.insert_documents(db_name, coll_name, batch))
        finally:
            writes.bump(db_name, coll_name)
        inserted = sum(1 for outcome in outcomes if outcome)
        if inserted != len(batch):
            rejected = batch[inserted]
            raise WriteError(
                f"E11000 duplicate key error collection: {db_name}.{coll_name}: document {inserted} "
                f"(_id {rejected['_id']!r}) repeats a unique key (_id or a unique index); "
                f"{inserted} inserted before it",
                code=11000,
            )
        for listener in WRITE_LISTENERS:
            listener("insert", db_name, coll_name)
        return inserted


_server: OfflineServer | None = None
_server_lock = threading.Lock()


def offline_server() -> OfflineServer:
    """The process's offline server, started on first use."""
    global _server
    with _server_lock:
        if _server is None:
            _server = OfflineServer()
        return _server

"""The offline default's wire commands: mongoeco's command executor and proxy server with the
workbench's fixes.

``WorkbenchExecutor`` answers each command: the explain hook and read layer first (the planner
model's plan), then a registered hook (:data:`workbook.offline_commands.COMMAND_HOOKS`), the
commands mongoeco's wire surface lacks, and last the engine. ``WorkbenchProxy`` installs it with the
per-process credentials. Importing this module imports mongoeco: only
:class:`workbook.offline.OfflineServer` imports it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mongoeco.errors import BulkWriteError, OperationFailure, WriteError

from workbook import engine_compat, gc_pause, offline_transactions, offline_validators, offline_views, offline_writes
from workbook.facts import (
    BAD_VALUE,
    BSON_OBJECT_TOO_LARGE,
    DOLLAR_PREFIXED_FIELD,
    INVALID_OPTIONS,
    MAX_BSON_SIZE,
    NAMESPACE_EXISTS,
    NAMESPACE_NOT_FOUND,
    NO_SUCH_TRANSACTION,
    OVERFLOW,
    TOO_LARGE_ON_INSERT,
    TRANSIENT_TRANSACTION_ERROR,
    TYPE_MISMATCH,
    UNAUTHORIZED,
    VIEW_WRITE_REFUSED,
    WRITE_CONFLICT,
)
from workbook.offline_commands import (
    COLL_MOD_OPTIONS,
    COMMAND_HOOKS,
    DROP_LISTENERS,
    INDEX_OPTIONS,
    MECHANISMS,
    OFF_SURFACE,
    OPEN_COMMAND_KINDS,
    USER,
    VALIDATION_ACTIONS,
    VALIDATION_LEVELS,
    VIEW_COMMANDS,
    WRITE_COMMANDS,
    WRITE_LISTENERS,
    across_databases,
    dollar_in_id,
    ends_in_out,
    rewrite,
    transaction_key,
    writes_out,
)
from workbook.offline_cursors import SizedCursors
from workbook.offline_engine import INSERTED_AT_MOST, SENT_DOCUMENTS, new_profiled_command, refused_before_storage
from workbook.offline_explain import hook_for
from workbook.offline_indexes import ListedIndexes
from workbook.offline_limits import ADDED_ID_BYTES, engine_bson_size, largest_wire_document
from workbook.offline_reads import KEY_BOUNDS, ReadLayer, option_set

if TYPE_CHECKING:
    from workbook.offline import OfflineServer

_ProxyBase: Any
_ExecutorBase: Any
_ProxyBase, _ExecutorBase, _user_class = engine_compat.wire_classes()


class WorkbenchExecutor(_ExecutorBase):
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
        body = rewrite(str(command), body)
        body = self._through_views(str(command), body, kw)
        body = offline_views.prepare_aggregate(self._collection_options(kw, body), str(command), body)
        return super()._build_request_context(self._hinted_order(str(command), body, kw), **kw)

    def _hinted_order(self, command: str, body: dict[str, Any], kw: Mapping[str, Any]) -> dict[str, Any]:
        """A hinted ``find`` without a sort returns documents in the index's order, as MongoDB's index
        scan does (mongoeco answers in insertion order). Not one with ``min``/``max``: the model reads
        those in index order itself (:mod:`workbook.planner.minmax`), where a sort would order a multikey
        document by its smallest element instead."""
        hint = body.get("hint")
        if command != "find" or not hint or body.get("sort") or option_set(body, *KEY_BOUNDS) or self.server is None:
            return body
        db_name = str(kw.get("db_name") or body.get("$db"))
        records = self.server.engine._indexes.get(db_name, {}).get(str(body.get("find")), [])
        wanted = list(dict(hint).items()) if isinstance(hint, Mapping) else None
        for record in records:
            if record.name == hint or (wanted is not None and list(record.key) == wanted):
                if not all(direction in (1, -1) for _, direction in record.key):
                    return body  # a hashed (or other special) key orders by no sort: the model runs it
                return {**body, "sort": dict(record.key)}
        return body

    def _collection_options(self, kw: Mapping[str, Any], body: Mapping[str, Any]) -> Mapping[str, Any]:
        if self.server is None:
            return {}
        return self.server.engine._collection_options.get(str(kw.get("db_name") or body.get("$db")), {})

    def _through_views(self, command: str, body: dict[str, Any], kw: Mapping[str, Any]) -> dict[str, Any]:
        """Reads of a view become aggregations on its source; writes to a view are refused."""
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
        raise OperationFailure(f"Namespace {db_name}.{target} is a view, not a collection", code=VIEW_WRITE_REFUSED)

    _aborted: set[tuple[str, Any]]
    _explain: Any  # workbook.offline_explain.ExplainHook, installed by _WorkbenchProxy
    _reads: Any  # workbook.offline_reads.ReadLayer, installed by _WorkbenchProxy
    _listed_indexes: Any  # workbook.offline_indexes.ListedIndexes, installed by _WorkbenchProxy

    async def execute_prepared(self, context: Any) -> dict[str, Any]:
        new_profiled_command()  # its profiler entries are its own (offline_engine._profile_by_namespace)
        command, db_name = context.command_name, context.db_name
        local = self._coll_mods.pop(id(context), None)
        if local is not None:
            command, db_name = str(next(iter(local[1]))), local[0]
        open_kind = context.capability.kind in OPEN_COMMAND_KINDS
        if not open_kind and self._auth.enabled and not context.connection.authenticated_users:
            raise OperationFailure(f"command {command} requires authentication", code=UNAUTHORIZED)
        check_write_concern(context.raw_body)
        transaction = transaction_key(context.raw_body)
        if self.server is not None:  # maxTimeMS for writes that wait; NoSuchTransaction once expired
            offline_transactions.before_command(self.server.engine, context.raw_body, context.session)
        if transaction is not None and transaction in self._aborted:
            if command == "abortTransaction":
                return {"ok": 1.0}
            raise OperationFailure(
                f"Transaction {getattr(transaction[1], 'value', transaction[1])} has been aborted "
                "(an earlier operation in it failed)",
                code=NO_SUCH_TRANSACTION,
                error_labels=(TRANSIENT_TRANSACTION_ERROR,),
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
                    error_labels=(TRANSIENT_TRANSACTION_ERROR,),
                ) from error
            if transaction is not None and command not in ("commitTransaction", "abortTransaction"):
                self._abort(context, transaction)
            raise
        fill_write_error_codes(reply)
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
        self._explain.note(context, local)  # explain hook: count writes from any client (before and after)
        try:
            return await self._dispatch(context, command, db_name, local)
        finally:
            self._explain.note(context, local)

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
                **offline_transactions.get_parameters(self.server.engine if self.server else None),
                "ok": 1.0,
            }
        if local is not None and command == "setParameter" and self.server is not None:
            return offline_transactions.set_parameter(self.server.engine, db_name, local[1])
        if local is not None:
            return await self._coll_mod(db_name, local[1])
        if command == "find" and self.server is not None:
            read = await self._reads.find(context, self._cursor_store)  # the planner model's plan runs it
            if read is not None:
                return read
        if command == "distinct" and self.server is not None:
            values = await self._reads.distinct(context)  # the model's documents, MongoDB's distinct rules
            if values is not None:
                return values
        if command == "insert":
            return await self._insert(context)
        if command == "delete":  # delete_many in chunks, one engine pass (offline_writes.BulkDeletes)
            deleted = await offline_writes.bulk_delete(self, context)
            if deleted is not None:
                return deleted
        if command == "renameCollection":
            return await self._rename(context.command_document, context.session)
        if command == "count" and self.server is not None:
            view = self._view_of(db_name, context.command_document.get("count"))
            if view is not None:
                return await self._count_view(db_name, context.command_document, view, context.session)
            counted = await self._reads.count(context)  # the model's plan: a hinted sparse index counts
            if counted is not None:
                return counted
        if command == "aggregate" and ends_in_out(context.command_document):
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
        reply = self._listed_indexes.reply(command, context.command_document, reply)
        reply = self._reads.after(command, db_name, context.command_document, reply)
        if command in ("aggregate", "getMore"):
            check_result_sizes(reply)
        if context.capability.kind == "handshake" and "saslSupportedMechs" in context.command_document:
            # Drivers negotiate the mechanism from this (mongoeco omits it; pymongo then tries SHA-1).
            reply = {**reply, "saslSupportedMechs": list(MECHANISMS)}
        if command in ("drop", "dropDatabase") and reply.get("ok"):
            self._forget_dropped(db_name, context.command_document.get("drop") if command == "drop" else None)
        writes = command in WRITE_COMMANDS and (command != "aggregate" or writes_out(context.command_document))
        if writes and reply.get("ok") and WRITE_LISTENERS:
            collection = str((local[1] if local else context.command_document).get(command, ""))
            for listener in WRITE_LISTENERS:
                listener(command, db_name, collection)
        return reply

    def _forget_dropped(self, database: str, collection: Any) -> None:
        """Tell :data:`DROP_LISTENERS` a collection (or database) is gone. Kept, what they hold grew a
        learner's kernel by each shape it ever loaded and dropped (1.7 GB after the three datasets in
        three shapes at ``small``, each loaded, dropped and restored)."""
        if self.server is None or (collection is not None and not isinstance(collection, str)):
            return  # no engine of ours, or not a collection name (nothing was dropped)
        for listener in DROP_LISTENERS:
            listener(self.server.engine, database, collection)

    async def _insert(self, context: Any) -> dict[str, Any]:
        """``insert`` as one engine batch: mongoeco's own command inserts one document at a time,
        rebuilding a set of every numeric _id per document (O(n^2) for numeric ids)."""
        body = context.command_document
        documents = list(body.get("documents") or [])
        if not documents or not isinstance(body.get("insert"), str):
            return dict(await super().execute_prepared(context))
        collection = self._client.get_database(context.db_name).get_collection(body["insert"])
        # Documents MongoDB refuses before storage (a $-prefixed field in _id) split the batch.
        refused = {
            index: (DOLLAR_PREFIXED_FIELD, f"_id fields may not contain '$'-prefixed fields: {document['_id']!r}")
            for index, document in enumerate(documents)
            if dollar_in_id(document)
        }
        inserted, errors = await self._insert_around(collection, documents, refused, 0, context)
        reply: dict[str, Any] = {"n": inserted, "ok": 1.0}
        if errors:
            reply["writeErrors"] = errors
        return reply

    async def _insert_around(
        self, collection: Any, documents: list[Any], refused: dict[int, tuple[int, str]], offset: int, context: Any
    ) -> tuple[int, list[dict[str, Any]]]:
        """Insert ``documents`` but the ``refused`` ones (position: (code, message)), each of which is its own
        write error, as MongoDB reports it; an ordered insert stops at the first error."""
        ordered = bool(context.command_document.get("ordered", True))
        inserted, start = 0, 0
        errors: list[dict[str, Any]] = []
        for index in [*sorted(refused), len(documents)]:
            run = await self._insert_run(collection, documents[start:index], offset + start, context)
            inserted, errors = inserted + run[0], errors + run[1]
            if index == len(documents) or (errors and ordered):
                break
            code, message = refused[index]
            errors.append({"index": offset + index, "code": code, "errmsg": message})
            if ordered:
                break
            start = index + 1
        return inserted, errors

    async def _insert_run(
        self, collection: Any, documents: list[Any], offset: int, context: Any
    ) -> tuple[int, list[dict[str, Any]]]:
        """Insert consecutive documents of one command with one engine call per piece: (inserted, write errors)."""
        if not documents:
            return 0, []
        body = context.command_document
        ordered = bool(body.get("ordered", True))
        inserted, errors = 0, []
        internal = _internal_form()
        # each document's size is at most the request's largest (WorkbenchProxy), if it came over the wire
        payload = _REQUEST_PAYLOAD.get()
        largest = None if payload is None else largest_wire_document(payload)
        # In pieces, with a turn of the loop between them, so a 50,000-document insert_many never keeps
        # other clients' commands waiting (offline_writes.BULK_INSERT_CHUNK documents at most per turn).
        for start in range(0, len(documents), offline_writes.BULK_INSERT_CHUNK):
            # At the command boundary already (one walk each, workbook.offline_codec): mongoeco's
            # insert_many then neither deep-copies them twice nor converts them (it keeps them as they are).
            sent = documents[start : start + offline_writes.BULK_INSERT_CHUNK]
            piece = [internal(d) for d in sent]
            sent_token = SENT_DOCUMENTS.set({id(i): (i, d) for i, d in zip(piece, sent, strict=True)})
            if start:
                await asyncio.sleep(0)
            offline_writes.WRITE_WORK["largest_step"] = max(offline_writes.WRITE_WORK["largest_step"], len(piece))
            try:
                # The new documents all survive: no collection would free any. Not while a transaction
                # is open: the insert may then wait for it, and the collector stays off meanwhile.
                pause = gc_pause.paused() if self.server is None or not self.server.engine._transactions.open else None
                sized = INSERTED_AT_MOST.set(None if largest is None else largest + ADDED_ID_BYTES)
                try:
                    with pause or contextlib.nullcontext():
                        await collection.insert_many(
                            piece,
                            ordered=ordered,
                            bypass_document_validation=bool(body.get("bypassDocumentValidation", False)),
                            session=context.session,
                        )
                finally:
                    INSERTED_AT_MOST.reset(sized)
                    SENT_DOCUMENTS.reset(sent_token)
            except BulkWriteError as error:
                details = dict(getattr(error, "details", None) or {})
                errors += [
                    {**{k: v for k, v in dict(e).items() if k != "op"}, "index": int(dict(e)["index"]) + offset + start}
                    for e in details.get("writeErrors", [])
                ]
                inserted += int(details.get("nInserted", 0))
                if ordered:
                    break
                continue
            except WriteError as error:  # (a BulkWriteError is one: caught above)
                if getattr(error, "code", None) not in (TOO_LARGE_ON_INSERT, OVERFLOW):
                    raise
                # The engine sizes each document as it stores it (no second encoding up front) and refused
                # this piece whole (its rollback scope): its documents go again, the refused ones as errors.
                refused = {i: e for i, d in enumerate(piece) if (e := refused_before_storage(d)) is not None}
                if not refused:
                    raise
                piece_inserted, piece_errors = await self._insert_around(
                    collection, piece, refused, offset + start, context
                )
                inserted, errors = inserted + piece_inserted, errors + piece_errors
                if piece_errors and ordered:
                    break
                continue
            inserted += len(piece)
        return inserted, errors

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
        if across_databases(body):
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
        coll_name = body["collMod"]
        assert self.server is not None, "the executor is installed by OfflineServer"
        engine = self.server.engine
        if coll_name not in engine._collection_options.get(db_name, {}) and coll_name not in engine._storage.get(
            db_name, {}
        ):
            raise OperationFailure(f"ns does not exist: {db_name}.{coll_name}", code=NAMESPACE_NOT_FOUND)
        check_coll_mod(body)
        reply: dict[str, Any] = {}
        async with engine._get_lock(db_name, coll_name):
            if "index" in body:
                reply.update(set_index_hidden(engine, db_name, coll_name, body["index"]))
            options = engine._collection_options.setdefault(db_name, {}).setdefault(coll_name, {})
            for key in ("validator", "validationLevel", "validationAction"):
                if key in body:
                    options[key] = body[key]
        return {**reply, "ok": 1.0}


def _internal_form() -> Any:
    """A function from a wire document to the form mongoeco's command boundary gives it (a document
    without ``_id`` stays as it is: mongoeco adds the ``_id``)."""
    to_internal = engine_compat.document_codec().to_internal
    return lambda document: to_internal(document) if isinstance(document, dict) and "_id" in document else document


def check_write_concern(body: Mapping[str, Any]) -> None:
    """A standalone server refuses ``w`` > 1, as MongoDB does (nothing can acknowledge it)."""
    concern = body.get("writeConcern")
    w = concern.get("w") if isinstance(concern, Mapping) else None
    w = getattr(w, "value", w)
    if isinstance(w, int) and not isinstance(w, bool) and w > 1:
        raise OperationFailure("cannot use 'w' > 1 when a host is not replicated", code=BAD_VALUE)


def check_coll_mod(body: Mapping[str, Any]) -> None:
    """Refuse what MongoDB refuses, before anything changes (a bad validator must not break later inserts)."""
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


def set_index_hidden(engine: Any, db_name: str, coll_name: str, spec: Mapping[str, Any]) -> dict[str, Any]:
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


def check_result_sizes(reply: Mapping[str, Any]) -> None:
    """Fail as MongoDB does when an aggregation produces a document over the limit (e.g. a huge $group)."""
    cursor = reply.get("cursor") or {}
    for document in cursor.get("firstBatch") or cursor.get("nextBatch") or []:
        size = engine_bson_size(document)
        if size > MAX_RESULT_SIZE:
            raise OperationFailure(
                f"BSONObjectTooLarge: an aggregation result document is {size} bytes; "
                f"the limit is {MAX_RESULT_SIZE} (16 MiB + 16 KiB). Group into smaller documents "
                "(e.g. $group on a finer key, or $project fewer fields before it)",
                code=BSON_OBJECT_TOO_LARGE,
            )


def fill_write_error_codes(reply: Mapping[str, Any]) -> None:
    """Every writeErrors entry carries a code, as on MongoDB (pymongo reads ``code`` unconditionally)."""
    for entry in reply.get("writeErrors") or []:
        if isinstance(entry, dict) and entry.get("code") is None:
            entry["code"] = BAD_VALUE


_REQUEST_PAYLOAD: contextvars.ContextVar[bytes | None] = contextvars.ContextVar(
    "workbook_request_payload", default=None
)
"""The OP_MSG payload of the request being answered (not copied), or None: an insert reads its documents'
lengths from it (:func:`workbook.offline_limits.largest_wire_document`); no other command parses it."""


LARGE_REQUEST = 256 * 1024
"""Bytes above which a request's BSON is decoded off the network loop (an insert_many of 50,000
documents took the loop, and every other client's replies, for seconds)."""


class WorkbenchProxy(_ProxyBase):
    """mongoeco's wire server with the workbench's executor.

    A large OP_MSG (an ``insert_many``) is decoded in a worker thread (:data:`LARGE_REQUEST`), so the
    network loop keeps answering other clients (hello, handshakes) while it is read; its command
    then runs as any other.
    """

    _predecoded: dict[int, Any]

    async def _dispatch_wire_request(self, header: Any, payload: bytes, *, connection: Any) -> Any:
        from mongoeco.wire.protocol import OP_MSG, decode_op_msg

        if len(payload) > LARGE_REQUEST and header.op_code == OP_MSG:
            with contextlib.suppress(Exception):  # the loop's own decode below reports it as mongoeco does
                self._predecoded[id(payload)] = await asyncio.to_thread(lambda: decode_op_msg(header, payload).body)
        sized = _REQUEST_PAYLOAD.set(payload if header.op_code == OP_MSG else None)
        try:
            return await super()._dispatch_wire_request(header, payload, connection=connection)
        finally:
            _REQUEST_PAYLOAD.reset(sized)
            self._predecoded.pop(id(payload), None)

    def _decode_wire_context(self, header: Any, payload: bytes, connection: Any, state: Any) -> Any:
        body = self._predecoded.pop(id(payload), None)
        if body is None:
            return super()._decode_wire_context(header, payload, connection, state)
        from mongoeco.wire.protocol import OP_MSG_MORE_TO_COME

        if engine_compat.wire_message_flags(payload) & OP_MSG_MORE_TO_COME:  # as mongoeco's own _decode_wire_context
            state.disposition = "suppress"
            state.expects_reply = False
        state.phase = "prepare"
        return self._executor._build_request_context(
            body, connection=connection, db_name=None, on_normalized=state.normalized
        )

    def __init__(self, *, server: OfflineServer, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._predecoded = {}
        self._cursor_store = SizedCursors()  # batches cut at 16 MiB, as MongoDB cuts them
        self._executor = WorkbenchExecutor(
            self._client, self._cursor_store, self._session_store, surface=self._surface, auth=self._auth
        )
        self._executor.server = server
        self._executor._coll_mods = {}
        self._executor._aborted = set()

        self._executor._explain = hook_for(server.engine)
        self._executor._reads = ReadLayer(server.engine, self._executor._explain)
        self._executor._listed_indexes = ListedIndexes()

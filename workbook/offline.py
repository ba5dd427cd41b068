"""The offline default: mongoeco's in-memory engine, served over the MongoDB wire protocol inside
this process, so learners (and the test suite) use a real pymongo client with no server to install.

Why this design (measured 2026-11-30, mongoeco 4.11.0, see README "How the offline default works"):

- mongoeco's own in-process client is not pymongo (no ``Cursor.collation``, no ``Database.client``);
  its wire server gives real pymongo objects, so a learner's code cannot tell the engines apart.
- Its wire ``insert`` command inserts one document at a time and each single insert scanned the
  whole collection for a duplicate ``_id`` (O(n^2) loads). ``_WorkbenchEngine`` skips that scan for
  non-numeric ``_id`` values, where the storage-key lookup already detects duplicates, and bulk
  loads go through the engine directly (:meth:`OfflineServer.bulk_insert`).
- Gaps closed here, because lessons touch them: the 16 MiB document limit on inserts and growing
  updates; ``collMod`` (hide/unhide an index, change a validator); lowercase ``buildinfo`` (used by
  pymongo's ``server_info()``); the 50,000-document aggregation materialization limit is lifted;
  a cursor's first batch holds 101 documents by default, as on MongoDB, so round trips compare.

Nothing starts at import: the server starts on the first :func:`offline_server` call.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections.abc import Coroutine, Iterable, Mapping
from typing import Any, TypeVar

import bson

from workbook.facts import FIRST_BATCH_DOCUMENTS, MAX_BSON_SIZE
from workbook.facts import bson_size as _plain_bson_size

PACKAGE = "mongoeco"
_T = TypeVar("_T")


def _engine_class() -> type:
    """Build the patched engine class (imports mongoeco only when the offline default is used)."""
    from mongoeco._types.documents import EngineIndexRecord
    from mongoeco._types.indexes import default_index_name, normalize_index_keys
    from mongoeco.core.duplicate_keys import index_build_duplicate_error
    from mongoeco.core.identity import id_contains_numeric_value
    from mongoeco.engines.memory import MemoryEngine
    from mongoeco.errors import WriteError

    class _WorkbenchEngine(MemoryEngine):
        """mongoeco's memory engine with the two fixes the course needs at the storage layer."""

        def _ensure_unique_indexes(self, db_name: str, coll_name: str, candidate: Any, **kw: Any) -> None:
            # The full-collection _id scan only matters for numeric ids (1 == 1.0 == Decimal128("1"),
            # different storage keys); for every other id the storage-key lookup is exact.
            if kw.get("scan_payload_id") and not id_contains_numeric_value(candidate.get("_id")):
                kw["scan_payload_id"] = False
            super()._ensure_unique_indexes(db_name, coll_name, candidate, **kw)

        async def create_index(self, db_name: str, coll_name: str, keys: Any, **options: Any) -> str:
            # mongoeco checks a new unique index pairwise over all documents (O(n^2): 2,000 documents
            # took 16 s). For the plain case, check with one set instead, build it as non-unique, then
            # mark it unique; anything unusual (collation, partial, sparse, a session, an existing
            # index of that name) keeps mongoeco's own path.
            context = options.get("context")
            plain = (
                options.get("unique")
                and not any(options.get(option) for option in ("collation", "partial_filter_expression", "sparse"))
                and not (context is not None and context.in_transaction)  # implicit wire sessions are fine
            )
            if not plain:
                return await super().create_index(db_name, coll_name, keys, **options)
            normalized = normalize_index_keys(keys)
            name = options.get("name") or default_index_name(normalized)
            existing = self._indexes_view(context).get(db_name, {}).get(coll_name, [])
            if any(record.name == name or list(record.key) == list(normalized) for record in existing):
                return await super().create_index(db_name, coll_name, keys, **options)
            fields = [field for field, _ in normalized]
            async with self._get_lock(db_name, coll_name):
                seen: set[Any] = set()
                for data in self._storage_view(context).get(db_name, {}).get(coll_name, {}).values():
                    document = self._borrow_storage_document(data)
                    document_keys = self._unique_index_keys(document, fields)
                    conflict = seen.intersection(document_keys)
                    if conflict:
                        key: list[tuple[str, int | str]] = list(normalized)
                        record = EngineIndexRecord(name=name, fields=fields, key=key, unique=True)
                        raise index_build_duplicate_error(
                            namespace=f"{db_name}.{coll_name}",
                            index=record,
                            document=document,
                            conflict=next(iter(conflict)),
                        )
                    seen.update(document_keys)
            created = await super().create_index(db_name, coll_name, keys, **{**options, "unique": False})
            async with self._get_lock(db_name, coll_name):
                records = self._indexes_view(context)[db_name][coll_name]
                for position, record in enumerate(records):
                    if record.name == created:
                        records[position] = dataclasses.replace(record, unique=True)
            return created

        def _encode_storage_document(self, document: Any) -> Any:
            size = bson_size(document)
            if size > MAX_BSON_SIZE:
                # Raised inside the engine's rollback scope: the stored document and its index
                # entries stay as they were, as on MongoDB.
                raise WriteError(
                    f"BSONObjectTooLarge: document is {size} bytes, larger than the maximum "
                    f"{MAX_BSON_SIZE} bytes (16 MiB), enforced by the workbench on the offline default",
                    code=10334,
                )
            return super()._encode_storage_document(document)

    return _WorkbenchEngine


def bson_size(document: Mapping[str, Any]) -> int:
    """Size in bytes of ``document`` encoded as BSON, as ``$bsonSize`` reports it."""
    try:
        return _plain_bson_size(document)
    except (bson.errors.InvalidDocument, TypeError):
        from mongoeco.core.aggregation.runtime import _bson_document_size

        return int(_bson_document_size(dict(document)))


DEFAULT_FIRST_BATCH = FIRST_BATCH_DOCUMENTS
"""MongoDB returns at most 101 documents in a cursor's first batch unless told otherwise."""


def _writes_out(aggregate: dict[str, Any]) -> bool:
    """Whether a pipeline ends in $out or $merge (no cursor batches to size)."""
    pipeline = aggregate.get("pipeline") or [{}]
    return any(stage in pipeline[-1] for stage in ("$out", "$merge"))


class _WorkbenchExecutor:
    """Wraps mongoeco's wire command executor to add the commands lessons need and it lacks."""

    def __init__(self, inner: Any, engine: Any) -> None:
        self._inner = inner
        self._engine = engine
        self._coll_mods: dict[int, tuple[str, dict[str, Any]]] = {}
        from workbook.explaining.native import hook_for  # explain hook: the planner model answers explain

        self._explain = hook_for(engine)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _build_request_context(self, body: dict[str, Any], **kw: Any) -> Any:
        explained = self._explain.intercept(self._inner, body, kw)  # explain hook
        if explained is not None:
            return explained
        command = next(iter(body), None)
        if command == "buildinfo":  # pymongo's server_info() sends the lowercase spelling
            body = {"buildInfo" if k == "buildinfo" else k: v for k, v in body.items()}
        if command == "find" and "batchSize" not in body:
            body = {**body, "batchSize": DEFAULT_FIRST_BATCH}
        if command == "aggregate" and "batchSize" not in body.get("cursor", {}) and not _writes_out(body):
            body = {**body, "cursor": {**body.get("cursor", {}), "batchSize": DEFAULT_FIRST_BATCH}}
        if command == "collMod":
            db_name = kw.get("db_name") or body.get("$db")
            context = self._inner._build_request_context({"ping": 1, "$db": db_name}, **kw)
            self._coll_mods[id(context)] = (str(db_name), dict(body))
            return context
        return self._inner._build_request_context(body, **kw)

    async def execute_prepared(self, context: Any) -> dict[str, Any]:
        pending = self._coll_mods.pop(id(context), None)
        if pending is not None:
            return await self._coll_mod(*pending)
        answer = await self._explain.answer(context)  # explain hook
        if answer is not None:
            return answer
        self._explain.note(context)  # explain hook: count writes from any client (before and after)
        try:
            return await self._inner.execute_prepared(context)
        finally:
            self._explain.note(context)

    async def _coll_mod(self, db_name: str, body: dict[str, Any]) -> dict[str, Any]:
        """``collMod`` for index visibility and validators, the parts the course uses."""
        from mongoeco.errors import OperationFailure

        coll_name = body["collMod"]
        engine = self._engine
        if coll_name not in engine._collection_options.get(db_name, {}) and coll_name not in engine._storage.get(
            db_name, {}
        ):
            raise OperationFailure(f"ns does not exist: {db_name}.{coll_name}", code=26)
        supported = {
            "collMod",
            "index",
            "validator",
            "validationLevel",
            "validationAction",
            "$db",
            "lsid",
            "$readPreference",
            "$clusterTime",
        }
        unknown = sorted(set(body) - supported)
        if unknown:
            raise OperationFailure(
                f"collMod option(s) {unknown} are not supported by the offline default; "
                "supported: index (hidden), validator, validationLevel, validationAction",
                code=72,
            )
        reply: dict[str, Any] = {}
        async with engine._get_lock(db_name, coll_name):
            if "index" in body:
                reply.update(self._set_index_hidden(db_name, coll_name, body["index"]))
            options = engine._collection_options.setdefault(db_name, {}).setdefault(coll_name, {})
            for key in ("validator", "validationLevel", "validationAction"):
                if key in body:
                    options[key] = body[key]
        return {**reply, "ok": 1.0}

    def _set_index_hidden(self, db_name: str, coll_name: str, spec: Mapping[str, Any]) -> dict[str, Any]:
        from mongoeco.errors import OperationFailure

        if "hidden" not in spec:
            raise OperationFailure("collMod index: only 'hidden' can be changed on the offline default", code=72)
        records = self._engine._indexes.get(db_name, {}).get(coll_name, [])
        for position, record in enumerate(records):
            by_name = spec.get("name") == record.name
            by_key = "keyPattern" in spec and list(dict(spec["keyPattern"]).items()) == list(record.key)
            if by_name or by_key:
                if record.name == "_id_":
                    raise OperationFailure("cannot modify hidden field of the _id_ index", code=72)
                hidden = bool(spec["hidden"])
                records[position] = dataclasses.replace(record, hidden=hidden)
                return {"hidden_old": bool(record.hidden), "hidden_new": hidden}
        raise OperationFailure(f"cannot find index {dict(spec)} for ns {db_name}.{coll_name}", code=27)


class OfflineServer:
    """The engine, its wire server on 127.0.0.1, and the event loop thread that runs both."""

    def __init__(self) -> None:
        from mongoeco.api import AsyncMongoClient
        from mongoeco.wire.proxy import AsyncMongoEcoProxyServer

        self.engine = _engine_class()(aggregation_materialization_limit=None)
        self._client = AsyncMongoClient(self.engine)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="workbook-offline", daemon=True)
        self._thread.start()
        self._proxy = AsyncMongoEcoProxyServer(client=self._client, host="127.0.0.1", port=0)
        self._proxy._executor = _WorkbenchExecutor(self._proxy._executor, self.engine)  # type: ignore[assignment]
        self.uri = self.run(self._proxy.start()).uri

    @property
    def version(self) -> str:
        """The installed mongoeco version."""
        from mongoeco import __version__

        return str(__version__)

    def run(self, coroutine: Coroutine[Any, Any, _T]) -> _T:
        """Run a coroutine on the engine's event loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

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


"""Native explain on the offline default: the offline server answers ``explain`` with the planner model.

``cursor.explain()``, ``db.command("explain", {...}, verbosity=...)`` and ``aggregate`` with
``explain: true`` all reach :class:`ExplainHook` (installed by :mod:`workbook.offline` in its
command dispatch), which reads the collections the command touches from the engine, builds (or
reuses) their models, and answers with MongoDB's explain shape, labelled by ``modelledBy``.

A refusal (a query the model does not cover, a hint naming no index) goes back as a server error
carrying the workbench's message and fix, which :func:`workbook.explain` turns back into the error.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from workbook import engine_compat, planner
from workbook.engine_reads import public_records_and_ids
from workbook.errors import ExplainError, UnknownHintError, UnsupportedByModelError
from workbook.explain_cache import ModelCache, WriteCounter
from workbook.explain_model import collections_read, model_explain
from workbook.offline_commands import DROP_LISTENERS, dropped

NOT_MODELLED_CODE = 115  # CommandNotSupported: the model does not cover this query
BAD_VALUE_CODE = 2  # BadValue: what MongoDB answers for a hint naming no index

_ModelKey = tuple[str, str]
_Catalog = tuple[tuple[int, int], bool, list[Any], dict[str, Any], tuple[tuple[int, int], str, str]]
"""What :meth:`ExplainHook.catalog` read: (write stamp, exists, indexes, options, the models' cache stamp)."""


def claims(body: Mapping[str, Any]) -> bool:
    """Whether a command is one the hook answers: ``explain``, or ``aggregate`` with ``explain: true``."""
    name = next(iter(body), None)
    return name == "explain" or (name == "aggregate" and bool(body.get("explain")))


def explained(body: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """(the explained command, the verbosity) of an explain request."""
    if next(iter(body), None) == "aggregate":  # aggregate's own explain flag answers at queryPlanner
        command = {k: v for k, v in body.items() if k not in ("explain", "$db", "lsid")}
        return command, "queryPlanner"
    inner = body.get("explain")
    if not isinstance(inner, Mapping) or not inner:
        raise ExplainError("explain needs a command document.", fix='Send {"explain": {"find": "products", ...}}.')
    return dict(inner), str(body.get("verbosity", "allPlansExecution"))


class ExplainHook:
    """The offline server's explain: models cached per collection, invalidated by any client's writes."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine
        self._client: Any = None
        self.writes = WriteCounter()
        self.models: ModelCache[planner.CollectionModel] = ModelCache()
        self._pending: dict[int, tuple[str, dict[str, Any]]] = {}
        self._records: dict[_ModelKey, tuple[planner.CollectionModel, Sequence[Any]]] = {}
        self._catalogs: dict[_ModelKey, _Catalog] = {}
        """Each collection's (write stamp, exists, indexes, options, model stamp), read when its write stamp moved."""

    # --- the dispatch hook --------------------------------------------------------------------
    def intercept(self, inner: Any, body: dict[str, Any], options: dict[str, Any]) -> Any | None:
        """For an explain request, a request context for ``inner`` that :meth:`answer` will answer."""
        if not claims(body):
            return None
        database = str(options.get("db_name") or body.get("$db") or "test")
        context = inner._build_request_context({"ping": 1, "$db": database}, **options)
        self._pending[id(context)] = (database, dict(body))
        return context

    async def answer(self, context: Any) -> dict[str, Any] | None:
        """The explain reply for a context :meth:`intercept` made (None for any other context)."""
        pending = self._pending.pop(id(context), None)
        if pending is None:
            return None
        database, body = pending
        try:
            command, verbosity = explained(engine_compat.to_pymongo(body))  # the wire's values as pymongo's
            names = collections_read(command)
            models = {name: await self.model(database, name) for name in names}
            loop = asyncio.get_running_loop()
            work = functools.partial(model_explain, models, database, command, verbosity)
            reply = await loop.run_in_executor(None, work)  # the planner runs off the server's event loop
        except ExplainError as error:
            raise _server_error(error) from None
        return {**reply, "ok": 1.0}

    def note(self, context: Any, local: tuple[str, dict[str, Any]] | None = None) -> None:
        """Count a command the server runs as a write if it may change data (call before and after).

        ``local``: the (database, command) of one the executor answers itself (``collMod``...), whose context
        holds a ``ping`` in its place."""
        if local is not None:
            self.writes.note(*local)
            return
        document = getattr(context, "command_document", None)
        if isinstance(document, Mapping):
            self.writes.note(str(getattr(context, "db_name", "")), document)

    # --- models -------------------------------------------------------------------------------
    def _collection(self, database: str, name: str) -> Any:
        if self._client is None:
            from mongoeco.api import AsyncMongoClient

            self._client = AsyncMongoClient(self._engine)
        return self._client[database][name]

    async def catalog(self, database: str, name: str) -> _Catalog:
        """Whether ``database.name`` exists, its indexes and its options, as the engine lists them.

        Read again only when the collection's write stamp moved: every command that may create, drop,
        index or change a collection moves it (:class:`~workbook.explain_cache.WriteCounter`, before and
        after it runs), as does every install straight into the engine. Read for every find, the three
        listings took 120 us a find, and 280 us beside 300 other collections (``listCollections`` lists
        them all)."""
        key: _ModelKey = (database, name)
        stamp = self.writes.stamp(database, name)
        known = self._catalogs.get(key)
        if known is not None and known[0] == stamp:
            return known
        collection = self._collection(database, name)
        exists = name in await self._client[database].list_collection_names()
        indexes = await collection.list_indexes().to_list() if exists else []
        options = await collection.options() if exists else {}
        catalog: _Catalog = (stamp, exists, indexes, options, (stamp, repr(indexes), repr(options)))
        if self.writes.stamp(database, name) == stamp:  # no write began meanwhile
            self._catalogs[key] = catalog
        return catalog

    async def model(self, database: str, name: str) -> planner.CollectionModel:
        """The current model of ``database.name`` (cached until any client writes to it)."""
        _, exists, indexes, options, stamp = await self.catalog(database, name)
        key: _ModelKey = (database, name)
        cached = self.models.get(key, stamp)
        if cached is not None:
            return cached
        # Read on the server's event loop, so no write interleaves; an unchanged document is the same
        # object in the next version, and the model reuses the index keys it made for it.
        documents, records, ids = public_records_and_ids(self._engine, database, name) if exists else ([], [], None)
        model = planner.CollectionModel(
            documents, indexes, options.get("collation"), previous=self.models.latest(key), ids=ids
        )
        if self.writes.stamp(database, name) == stamp[0]:  # no write began meanwhile
            self.models.put(key, stamp, model)
        self._records[key] = (model, records)
        # Records only for models still cached: a dropped or evicted collection's documents are let go.
        self._records = {k: held for k, held in self._records.items() if self.models.latest(k) is held[0] or k == key}
        return model

    def forget_dropped(self, database: str, collection: str | None = None) -> None:
        """Let go of the models (and records) of a dropped collection, or of every one of a dropped database."""

        def kept(key: Hashable) -> bool:
            return not (isinstance(key, tuple) and dropped(database, collection, key))

        self.models.forget(kept)
        self._records = {key: held for key, held in self._records.items() if kept(key)}
        self._catalogs = {key: held for key, held in self._catalogs.items() if kept(key)}

    def records(self, database: str, name: str, model: planner.CollectionModel) -> Sequence[Any] | None:
        """The engine's stored records behind ``model.documents`` (same order), while ``model`` is current."""
        held = self._records.get((database, name))
        return held[1] if held is not None and held[0] is model else None


def _server_error(error: ExplainError) -> Exception:
    from mongoeco.errors import OperationFailure

    code = NOT_MODELLED_CODE if isinstance(error, UnsupportedByModelError) else BAD_VALUE_CODE
    return OperationFailure(str(error), code=code)


def error_from_reply(message: str, code: int | None) -> ExplainError:
    """The workbench error a refused explain came back as (the inverse of the server side)."""
    text, _, fix = message.partition("\nFix: ")
    if code == NOT_MODELLED_CODE and text.startswith("The offline planner model"):
        return UnsupportedByModelError(text, fix=fix or None)
    if "hint provided" in text:
        return UnknownHintError(text, fix=fix or None)
    return ExplainError(f"The explain was refused: {text}", fix=fix or "Check the filter, sort and projection.")


_hooks: dict[int, ExplainHook] = {}


def _forget_dropped(engine: Any, database: str, collection: str | None) -> None:
    """A dropped collection's models go too (a :data:`~workbook.offline_commands.DROP_LISTENERS` listener)."""
    hook = _hooks.get(id(engine))
    if hook is not None:
        hook.forget_dropped(database, collection)


DROP_LISTENERS.append(_forget_dropped)


def hook_for(engine: Any) -> ExplainHook:
    """The explain hook of an offline engine (one per engine, made on first use)."""
    hook = _hooks.get(id(engine))
    if hook is None:
        hook = _hooks[id(engine)] = ExplainHook(engine)
    return hook

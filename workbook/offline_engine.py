"""The offline default's storage: mongoeco's memory engine with the workbench's fixes.

- the 16 MiB limit and nesting depth 100 with MongoDB's codes (:mod:`workbook.offline_limits`);
- the 64-index, 32-field and parallel-arrays limits on ``createIndexes``;
- a unique index built in one pass under the collection lock (mongoeco checks pairs: O(n^2));
- per-document transactions (:mod:`workbook.offline_transactions`) and the write paths of
  :mod:`workbook.offline_writes`.

Importing this module imports mongoeco and installs two of :mod:`workbook.engine_compat`'s engine
patches (BSON type bracketing, value sizes): only :class:`workbook.offline.OfflineServer` imports it.
"""

from __future__ import annotations

import contextvars
import copy
import dataclasses
from collections.abc import Mapping
from typing import Any

from workbook.lazy_imports import defer_iri_grammar

defer_iri_grammar()  # mongoeco imports jsonschema, which would build a 1.4 s grammar nothing here uses

from mongoeco.core.collation import normalize_collation, string_equality_key  # noqa: E402
from mongoeco.errors import OperationFailure, WriteError  # noqa: E402

from workbook import (  # noqa: E402
    engine_compat,
    offline_appends,
    offline_codec,
    offline_ids,
    offline_transactions,
    offline_unique,
    offline_writes,
)
from workbook.engine_aggregation import install_aggregation_semantics  # noqa: E402
from workbook.facts import (  # noqa: E402
    MAX_BSON_SIZE,
    TOO_LARGE_AFTER_UPDATE,
    TOO_LARGE_ON_INSERT,
    TOO_LARGE_TO_UPSERT,
)
from workbook.offline_indexes import IndexDefinitions  # noqa: E402  (same-key twins, compound hashed indexes)
from workbook.offline_limits import (  # noqa: E402
    WORK_COUNTERS,
    depth_error,
    engine_bson_size,
    new_index_error,
    parallel_arrays_error,
)

_write_kind: contextvars.ContextVar[str] = contextvars.ContextVar("workbook_write_kind", default="insert")
"""What the engine is storing: "insert", or within an update (or a $merge) "update" for a changed document
and "upsert" for a new one (told by its unique check, which excludes the document's own key only then)."""


INSERTED_AT_MOST: contextvars.ContextVar[int | None] = contextvars.ContextVar("workbook_inserted_at_most", default=None)
"""While the executor stores a wire ``insert``'s documents: an upper bound on each one's BSON size (the
largest the request carried, :func:`workbook.offline_limits.largest_wire_document`, plus an ``_id`` the
engine may add), so the 16 MiB check needs no second encoding of each; None otherwise."""

SENT_DOCUMENTS: contextvars.ContextVar[dict[int, tuple[Any, Any]] | None] = contextvars.ContextVar(
    "workbook_sent_documents", default=None
)
"""While the executor stores a wire ``insert``'s documents: by the id of each document in the engine's form,
(that document, the document as the wire decoded it). :meth:`WorkbenchEngine._encode_storage_document` keeps
the decoded one as the stored document when the codec would give it back as itself."""


def _count_id_scan(storage: Mapping[str, Any], db_name: str, coll_name: str) -> None:
    """Count a walk over every stored document's _id (what mongoeco does for numeric ids)."""
    WORK_COUNTERS["id_documents_examined"] += len(storage.get(db_name, {}).get(coll_name, {}))


engine_compat.install_type_bracketing()
engine_compat.install_bson_value_sizes()
engine_compat.install_object_id_types()  # id_contains_numeric_value answers ObjectIds itself
engine_compat.install_cheap_change_delivery()  # no hub state per committed change
offline_codec.install_fast_wire_decode()  # pymongo's values to the engine's in one walk
offline_codec.install_fast_wire_encode()  # and back, plain values and containers uncopied
offline_codec.install_fast_to_public()  # the internal form to the public one, the same way
offline_codec.install_fast_codec()  # one walk per document, not one per level (workbook.offline_codec)
engine_compat.install_always_operators()
install_aggregation_semantics()  # workbook.engine_aggregation: issue 19's aggregation fixes
offline_appends.batch_appends()  # new documents appended in batches (first: the followers below wrap its __setitem__)
offline_ids.install_tracking()  # numeric _id checks from a per-collection count (no scan per write)
offline_unique.install_key_tracking()  # compound and partial unique indexes checked by key (no scan per write)
_record_type, _default_index_name, _normalize_index_keys, _duplicate_error = engine_compat.index_helpers()

_memory_engine: Any = offline_transactions.engine_class(engine_compat.memory_engine_class())  # per-document txns
_change_log: Any = offline_writes.change_log_mixin(engine_compat.committed_change_class())

_fast_writes = (
    offline_unique.UniqueKeysByIndex,
    offline_writes.YieldingWrites,
    offline_writes.CountedCandidates,
    offline_writes.MissingIdIsEmpty,
    offline_ids.NumericIdsByCount,
    offline_writes.BulkDeletes,
    offline_writes.UncopiedChangePayloads,
)


def profiled_namespace(db_name: str, command: Mapping[str, Any]) -> str:
    """The ``ns`` MongoDB's profiler gives a command: the collection it names (a ``getMore``'s
    ``collection``), ``<db>.$cmd.aggregate`` for a database aggregate, else ``<db>.$cmd``.

    >>> profiled_namespace("shop", {"find": "orders", "filter": {}})
    'shop.orders'
    >>> profiled_namespace("shop", {"getMore": 7, "collection": "orders"}), profiled_namespace("shop", {"aggregate": 1})
    ('shop.orders', 'shop.$cmd.aggregate')
    """
    name, target = next(iter(command.items()), (None, None))
    if name == "getMore":
        target = command.get("collection")
    if isinstance(target, str) and target:
        return f"{db_name}.{target}"
    return f"{db_name}.$cmd.aggregate" if name == "aggregate" else f"{db_name}.$cmd"


_profiled: contextvars.ContextVar[tuple[str, Any, str, Any] | None] = contextvars.ContextVar(
    "workbook_profiled", default=None
)
"""The profiler entry the command being run recorded first: (database, command name, namespace, entry)."""


def new_profiled_command() -> None:
    """Start a command: an entry it records has no twin yet (the executor calls this for each command)."""
    _profiled.set(None)


def _profile_by_namespace(profiler: Any) -> None:
    """Make mongoeco 4.11.0's profiler entries MongoDB's: one entry per operation, under its namespace.

    mongoeco filed every entry under ``<db>.system.profile``; MongoDB files each under the namespace it
    ran on, which is how a learner finds a collection's queries (``{ns: "shop.orders"}``). And a command
    the engine answers was recorded twice: as the operation (a find as ``op: "query"``, without its
    ``comment``) and again, at the end, as a command with every field sent. The second now completes the
    first (the fields sent, the operation's ``op``) instead of adding an entry.
    """
    record = profiler.record

    def record_once_under_its_namespace(db_name: str, *, namespace: str, command: Any, op: str, **kw: Any) -> Any:
        if not isinstance(command, Mapping) or not command or not profiler.is_active(db_name):
            return record(db_name, namespace=namespace, command=command, op=op, **kw)  # (records nothing when off)
        namespace, name = profiled_namespace(db_name, command), next(iter(command))
        twin = _profiled.get()
        if op == "command" and twin is not None and twin[:3] == (db_name, name, namespace):
            _profiled.set(None)
            entries = profiler._entries.get(db_name, [])
            for position in range(len(entries) - 1, -1, -1):
                if entries[position] is twin[3]:
                    sent, ok, errmsg = copy.deepcopy(dict(command)), kw.get("ok", 1.0), kw.get("errmsg")
                    entries[position] = dataclasses.replace(twin[3], command=sent, ok=ok, errmsg=errmsg)
                    return None
        before = len(profiler._entries.get(db_name, ()))
        result = record(db_name, namespace=namespace, command=command, op=op, **kw)
        entries = profiler._entries.get(db_name, [])
        added = len(entries) > before  # not when a slowms threshold left it out
        _profiled.set((db_name, name, namespace, entries[-1]) if added else None)
        return result

    profiler.record = record_once_under_its_namespace


class WorkbenchEngine(IndexDefinitions, *_fast_writes, _change_log, _memory_engine):  # type: ignore[misc]
    """mongoeco's memory engine with the storage-level fixes the course needs."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _profile_by_namespace(self._profiler)

    def _ensure_unique_indexes(self, db_name: str, coll_name: str, candidate: Any, **kw: Any) -> None:
        # The full-collection _id scan only matters for numeric ids (1 == 1.0 == Decimal128("1"),
        # different storage keys); for every other id the storage-key lookup is exact.
        numeric = engine_compat.id_contains_numeric_value(candidate.get("_id"))
        if _write_kind.get() != "insert":  # the document about to be stored replaces one, or is new (an upsert)
            _write_kind.set("update" if kw.get("exclude_storage_key") is not None else "upsert")
        if kw.get("exclude_storage_key") is None and offline_ids.only_id_index(self, kw, db_name, coll_name):
            # A new document, no index but _id's: the _id check is the whole check, answered here (each layer
            # below asks the same: a tenth of an insert, and a fifth of an insert_many's with numeric ids).
            if not kw.get("check_id_storage") or "_id" not in candidate:
                return
            if not numeric:  # an _id equal only to its own storage key
                storage = self._storage if kw.get("storage_view") is None else kw["storage_view"]
                if self._storage_key(candidate["_id"]) not in storage.get(db_name, {}).get(coll_name, {}):
                    return  # (a duplicate goes below: mongoeco's own check words the error)
            elif offline_ids.checked() and offline_ids.refuse_equal_numeric_id(self, db_name, coll_name, candidate, kw):
                return  # no stored _id equals it (a duplicate raised the engine's error)
        if kw.get("scan_payload_id") and not numeric:
            kw["scan_payload_id"] = False
        if kw.get("check_id_storage") and (kw.get("scan_payload_id") or numeric) and not offline_ids.checked():
            _count_id_scan(kw.get("storage_view") or self._storage, db_name, coll_name)
        super()._ensure_unique_indexes(db_name, coll_name, candidate, **kw)

    async def insert_documents(self, db_name: str, coll_name: str, documents: Any, **kw: Any) -> Any:
        # mongoeco collects every stored _id once per call when a numeric _id is inserted: one
        # call per batch is linear, one call per document (its own wire insert) is quadratic.
        WORK_COUNTERS["insert_calls"] += 1  # its numeric _id scans are counted by offline_ids.NumericIdsByCount
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
        normalized = _normalize_index_keys(keys)
        name = options.get("name") or _default_index_name(normalized)
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
                        ("collated", string_equality_key(v, spec)) if type(v) is str else self._index_equality_key(v)
                        for v in value
                    )
                    for value in values
                }
            conflict = seen.intersection(document_keys)
            if conflict:
                record = _record_type(name=name, fields=fields, key=key, unique=True)
                error: Exception = _duplicate_error(
                    namespace=f"{db_name}.{coll_name}",
                    index=record,
                    document=document,
                    conflict=next(iter(conflict)),
                )
                return error
            seen.update(document_keys)
        return None

    def _encode_storage_document(self, document: Any) -> Any:
        # Raised inside the engine's rollback scope: the stored document and its index entries stay as
        # they were, as on MongoDB.
        error = refused_before_storage(document, _write_kind.get())
        if error is not None:
            raise WriteError(error[1], code=error[0])
        sent = SENT_DOCUMENTS.get()
        found = None if sent is None else sent.get(id(document))
        if found is not None and found[0] is document and engine_compat.stores_with_document_codec(self):
            # A wire insert's document as the wire decoded it, when the codec gives it back as itself and the
            # engine changed nothing since (an _id it added): kept as the stored document, its payload encoded
            # only if the engine asks, and the engine's reads read it (as a restore's documents are kept).
            # The encode walk was a seventh of an insert's server time, and the first read decoded it twice.
            decoded = found[1]
            if engine_compat.decodes_to_itself(decoded) and decoded == document:
                return engine_compat.lazy_stored_class()(decoded, engine_compat.document_codec().encode, shared=True)
        return super()._encode_storage_document(document)


def refused_before_storage(document: Any, write: str = "insert") -> tuple[int, str] | None:
    """MongoDB's (code, message) when ``document`` (the engine's form) cannot be stored: nested deeper than
    100 levels, or over 16 MiB, worded as MongoDB words it for an ``insert``, an ``update``'s result or an
    ``upsert``'s new document (jstests core/max_doc_size.js); else None.

    The storage guard (:meth:`WorkbenchEngine._encode_storage_document`) raises it; the executor asks it
    which documents of a piece the engine refused."""
    at_most = INSERTED_AT_MOST.get() if write == "insert" else None
    if at_most is not None and at_most <= MAX_BSON_SIZE:  # sized by the request: only the depth is left
        return depth_error(document, at_most)
    try:
        size: int | None = engine_bson_size(document)
    except RecursionError:  # nested far deeper than 100 levels: the depth error says so
        size = None
    error = depth_error(document, size)  # workbook.offline_limits: nesting depth 100
    if error is not None or size is None or size <= MAX_BSON_SIZE:
        return error
    enforced = "16 MiB, enforced by the workbench on the offline default"
    if write == "update":
        return TOO_LARGE_AFTER_UPDATE, (
            f"Resulting document after update is larger than {MAX_BSON_SIZE} (document is {size} bytes; {enforced})"
        )
    if write == "upsert":
        return TOO_LARGE_TO_UPSERT, (
            f"Document to upsert is larger than {MAX_BSON_SIZE} (document is {size} bytes; {enforced})"
        )
    return TOO_LARGE_ON_INSERT, (
        f"object to insert too large. size in bytes: {size}, max size: {MAX_BSON_SIZE} ({enforced})"
    )


def _check_index_limits(engine: Any, db_name: str, coll_name: str, keys: Any, context: Any) -> None:
    """Raise MongoDB's error for an index over the 64-index, 32-field or parallel-arrays limits."""
    normalized: list[tuple[str, Any]] = [(str(field), way) for field, way in _normalize_index_keys(keys)]
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

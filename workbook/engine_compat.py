"""Every private mongoeco name the offline default touches, in one place.

The offline default (:mod:`workbook.offline`) subclasses mongoeco's memory engine and its wire
command executor and proxy server, and reaches into a few private helpers and attributes to
close gaps the course hits. Private names change without notice between releases, so they are
all listed here in :data:`PRIVATE_NAMES`, resolved here, and checked by
``tests/test_engine_compat.py``: after a mongoeco upgrade that test names each one that moved,
instead of the offline default failing somewhere inside a lesson.

Written against :data:`TESTED_VERSION`. Nothing is imported from mongoeco at import time.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from typing import Any

TESTED_VERSION = "4.11.0"
"""The mongoeco release the offline default's patches were written and checked against."""


@dataclasses.dataclass(frozen=True)
class PrivateName:
    """One mongoeco name the workbench relies on, and what it relies on it for."""

    module: str
    attribute: str  # "Class.method" or "function" or "Class" (dotted inside the module)
    why: str
    parameters: tuple[str, ...] = ()  # parameter names the workbench passes or overrides, if callable
    instance_attribute: bool = False  # set on instances in __init__: checked on a live engine

    @property
    def qualified(self) -> str:
        """``module:attribute``, as shown in the contract test's failure message."""
        return f"{self.module}:{self.attribute}"


_MEMORY = "mongoeco.engines.memory"
_EXECUTOR = "mongoeco.wire.executor"
_PROXY = "mongoeco.wire.proxy"
_STORAGE = "mongoeco.engines._memory_collection"
_COLLECTION = "mongoeco.api._async.collection"
_AGGREGATION = "mongoeco.api._async.aggregation_cursor"

PRIVATE_NAMES: tuple[PrivateName, ...] = (
    # The memory engine: subclassed by workbook.offline_engine.WorkbenchEngine.
    PrivateName(
        _MEMORY,
        "MemoryEngine._ensure_unique_indexes",
        "skip the O(n) _id scan per insert",
        ("candidate", "check_id_storage", "scan_payload_id", "storage_view"),
    ),
    PrivateName(
        _MEMORY, "MemoryEngine._encode_storage_document", "the 16 MiB guard on every stored document", ("document",)
    ),
    PrivateName(
        _MEMORY, "MemoryEngine._indexes_view", "read index records for the unique-index fast path", ("context",)
    ),
    PrivateName(_MEMORY, "MemoryEngine._storage_view", "read documents for the unique-index fast path", ("context",)),
    PrivateName(_MEMORY, "MemoryEngine._borrow_storage_document", "decode a stored document without copying"),
    PrivateName(
        _MEMORY,
        "_StoredDocument.decoded_wrapped",
        "the decoded form cached on a stored document, filled sharing the payload's untagged parts (shared_borrow)",
    ),
    PrivateName(
        "mongoeco.core.codec",
        "DocumentCodec._is_tagged_value",
        "which payload parts the codec decodes to another value (shared_borrow)",
        ("data",),
    ),
    PrivateName(
        _MEMORY,
        "MemoryEngine._borrow_public_storage_document",
        "documents as the engine's find replies with them: what the model reads and the read layer returns",
        ("payload",),
    ),
    PrivateName(
        _MEMORY,
        "MemoryEngine._profile_is_active",
        "whether a find the model executes goes to system.profile",
        ("db_name", "duration_micros"),
    ),
    PrivateName(
        _MEMORY,
        "MemoryEngine._record_profile_event",
        "record a find the model executes in system.profile",
        ("db_name", "op", "command", "duration_micros"),
    ),
    PrivateName(
        _STORAGE,
        "MemoryCollection._chunks",
        "walk a collection chunk by chunk, reusing the decoded documents of unchanged chunks (storage_chunks)",
        instance_attribute=True,
    ),
    PrivateName(
        _STORAGE,
        "MemoryCollection._head_chunk",
        "the first chunk of a collection's natural order (storage_chunks)",
        instance_attribute=True,
    ),
    # The persistent collection and index maps (snapshot.py and bulkload.py build them; sizes.py keys on them).
    *(
        PrivateName(
            _STORAGE,
            f"MemoryCollection.{slot}",
            f"build a collection's storage in one pass ({why})",
            instance_attribute=True,
        )  # fmt: skip
        for slot, why in (
            ("_values", "the id -> document map; its identity is the collection's version"),
            ("_ordinals", "each document's insertion ordinal"),
            ("_locations", "each document's chunk and offset"),
            ("_tail_chunk", "the last chunk"),
            ("_next_chunk", "the next chunk id"),
            ("_next_ordinal", "the next insertion ordinal"),
        )
    ),
    *(
        PrivateName(
            _STORAGE, f"MemoryIndexMap.{slot}", f"build an index map in one pass ({why})", instance_attribute=True
        )  # fmt: skip
        for slot, why in (
            ("_buckets", "the members of each key"),
            ("_bucket_ordinals", "each member's ordinal per key"),
            ("_bucket_order_roots", "each key's members in ordinal order"),
            ("_next_membership_ordinal", "the next member ordinal"),
            ("_expiry_root", "a TTL schedule (snapshots refuse indexes that have one)"),
        )
    ),
    PrivateName(_STORAGE, "_ORDER_CHUNK_SIZE", "how many documents a storage chunk holds (snapshot.py)"),
    PrivateName(_STORAGE, "_expiry_priority", "an index map's TTL priority function (snapshot.py)"),
    PrivateName(
        _MEMORY,
        "MemoryEngine._search_indexes",
        "snapshots refuse collections with search indexes",
        instance_attribute=True,
    ),  # fmt: skip
    PrivateName(
        _MEMORY,
        "MemoryEngine._decode_storage_document",
        "decode a stored document (another engine version's fallback in the schema doctor's memory read)",
    ),  # fmt: skip
    PrivateName(_STORAGE, "_DELETED", "a deleted slot in a chunk (storage_chunks)"),
    PrivateName(_STORAGE, "_NO_CHUNK", "the end of the chunk chain (storage_chunks)"),
    PrivateName(_STORAGE, "_OrderChunk", "a chunk's items and the next chunk's id (storage_chunks, snapshot.py)"),
    PrivateName(_COLLECTION, "AsyncCollection._engine", "the engine an aggregate reads", instance_attribute=True),
    PrivateName(_COLLECTION, "AsyncCollection._db_name", "the database an aggregate reads", instance_attribute=True),
    PrivateName(
        _COLLECTION, "AsyncCollection._collection_name", "the collection an aggregate reads", instance_attribute=True
    ),
    PrivateName(
        _AGGREGATION,
        "AsyncAggregationCursor._build_pushdown_cursor",
        "an aggregate's leading $match/$sort/$skip/$limit run by the planner model (install_pushdown_reads)",
        ("operation",),
    ),
    PrivateName(
        _AGGREGATION,
        "AsyncAggregationCursor._session",
        "the session an aggregate runs in (its transaction's reads stay the engine's)",
        instance_attribute=True,
    ),
    PrivateName(
        _AGGREGATION, "AsyncAggregationCursor._collection", "the collection an aggregate reads", instance_attribute=True
    ),
    PrivateName(
        "mongoeco.core.projections",
        "_ProjectionExecutor",
        "the engine's projection, parsed once, for finds the model executes (workbook.offline_reads)",
        ("projection", "selector_filter", "dialect"),
    ),
    PrivateName(
        _MEMORY, "MemoryEngine._unique_index_keys", "the keys a unique index sees in a document", ("document", "fields")
    ),
    PrivateName(
        _MEMORY,
        "MemoryEngine._unique_index_values",
        "the raw values a unique index sees (collated unique builds)",
        ("document", "fields"),
    ),
    PrivateName(_MEMORY, "MemoryEngine._index_equality_key", "how a non-string key compares", ("value",)),
    PrivateName(
        _MEMORY,
        "MemoryEngine._decode_codec_payload",
        "decode a stored document without caching it (the schema doctor's memory read)",
        ("payload", "preserve_bson_wrappers"),
    ),
    PrivateName(
        _MEMORY, "MemoryEngine._get_lock", "the per-collection lock around index builds and collMod", ("db", "coll")
    ),
    PrivateName(_MEMORY, "MemoryEngine._storage_key", "the storage key of an _id"),
    PrivateName(_MEMORY, "MemoryEngine._storage", "which collections exist (collMod)", instance_attribute=True),
    PrivateName(_MEMORY, "MemoryEngine._indexes", "index records (collMod hidden)", instance_attribute=True),
    PrivateName(_MEMORY, "MemoryEngine._collection_options", "validators (collMod)", instance_attribute=True),
    # Helpers used by the fast paths.
    PrivateName("mongoeco._types.documents", "EngineIndexRecord", "name a failed unique index build"),
    PrivateName("mongoeco._types.indexes", "default_index_name", "the index name MongoDB derives"),
    PrivateName("mongoeco._types.indexes", "normalize_index_keys", "index key specs as (field, direction)"),
    PrivateName(
        "mongoeco.core.duplicate_keys",
        "index_build_duplicate_error",
        "E11000 for a failed build",
        ("namespace", "index", "document", "conflict"),
    ),
    PrivateName("mongoeco.core.identity", "id_contains_numeric_value", "which _ids need the numeric scan"),
    PrivateName("mongoeco.core.collation", "normalize_collation", "a collated unique index checked in one pass"),
    PrivateName("mongoeco.core.collation", "string_equality_key", "a collated unique index checked in one pass"),
    PrivateName("mongoeco.core.bson_ordering", "bson_equality_key", "numeric _id equality (1 == 1.0)"),
    PrivateName("mongoeco.wire.bson_bridge", "encode_wire_value", "engine values back to pymongo's bson types"),
    # The wire layer: subclassed by workbook.offline_executor.
    PrivateName(
        _EXECUTOR,
        "WireCommandExecutor._build_request_context",
        "rewrite a command before it runs",
        ("body", "connection", "db_name", "on_normalized"),
    ),
    PrivateName(_EXECUTOR, "WireCommandExecutor.execute_prepared", "answer or post-process a command", ("context",)),
    PrivateName(
        _PROXY,
        "AsyncMongoEcoProxyServer._executor",
        "install the workbench's executor subclass",
        instance_attribute=True,
    ),
    PrivateName(_PROXY, "AsyncMongoEcoProxyServer._client", "the executor's client", instance_attribute=True),
    PrivateName(_PROXY, "AsyncMongoEcoProxyServer._cursor_store", "the executor's cursors", instance_attribute=True),
    PrivateName(
        _EXECUTOR,
        "WireCommandExecutor._cursor_store",
        "batch the replies of finds the model executes (workbook.offline_reads)",
        instance_attribute=True,
    ),
    PrivateName(_PROXY, "AsyncMongoEcoProxyServer._session_store", "the executor's sessions", instance_attribute=True),
    PrivateName(_PROXY, "AsyncMongoEcoProxyServer._surface", "the executor's command surface", instance_attribute=True),
    PrivateName(_PROXY, "AsyncMongoEcoProxyServer._auth", "the executor's authentication", instance_attribute=True),
    PrivateName(
        "mongoeco.wire.auth",
        "WireAuthenticationService.require_authenticated",
        "refuse unauthenticated commands",
        ("connection", "command_name"),
    ),
    PrivateName("mongoeco.wire.requests", "WireRequestContext", "command name, document, session of a request"),
    # Type bracketing in comparisons (install_type_bracketing).
    PrivateName(
        "mongoeco.core.filtering",
        "QueryEngine._comparison_matches_candidate",
        "bracket $gt/$lt by BSON type",
        ("candidate", "target", "operator"),
    ),
    PrivateName(
        "mongoeco.core.filtering",
        "QueryEngine._match_top_level_comparison",
        "bracket $gt/$lt by BSON type",
        ("doc", "field", "target", "operator"),
    ),
    PrivateName(
        "mongoeco.core.compiled_query",
        "CompiledQuery._comparison_code",
        "bracket compiled dotted-path comparisons",
        ("field", "value", "operator"),
    ),
    PrivateName("mongoeco.core.compiled_query", "CompiledQuery._store", "pass the bracket check to compiled code"),
    PrivateName("mongoeco.core.compiled_query", "CompiledQuery._field", "the compiled code's field literal"),
    PrivateName("mongoeco.compat", "MONGODB_DIALECT_70", "BSON type order for brackets"),
    PrivateName(
        "mongoeco.core.aggregation.runtime",
        "_bson_value_size",
        "$bsonSize of Int64, Decimal128, DBRef, Code, MinKey, MaxKey",
    ),
    # The bulk loader (workbook/bulkload.py): checks and builds what inserts would, in one pass.
    PrivateName(_MEMORY, "MemoryEngine._index_keys", "the keys an index holds for a document", ("document", "fields")),
    PrivateName(
        _MEMORY,
        "MemoryEngine._validate_compound_multikey_shape",
        "refuse compound indexes over two arrays",
        ("document", "index"),
    ),
    PrivateName(_MEMORY, "MemoryEngine._codec", "which codec stores documents", instance_attribute=True),
    PrivateName(_MEMORY, "MemoryEngine._index_data", "install built index maps", instance_attribute=True),
    PrivateName(_MEMORY, "MemoryEngine._collections", "register an installed collection", instance_attribute=True),
    PrivateName(_MEMORY, "MemoryEngine._meta_lock", "install under the metadata lock", instance_attribute=True),
    PrivateName("mongoeco.core.codec", "DocumentCodec._MARKER", "the key the codec reserves for tagged values"),
    PrivateName("mongoeco.core.codec", "DocumentCodec.encode", "encode dates, ObjectIds and other scalars"),
    PrivateName("mongoeco.core.codec", "DocumentCodec.to_public", "a decoded document as the engine's find returns it"),
    PrivateName("mongoeco.core.codec", "DocumentCodec._tagged_value", "a datetime's stored form, in one call"),
    PrivateName("mongoeco.core.bson_scalars", "normalize_utc_bson_datetime", "datetimes as BSON stores them"),
    PrivateName(
        "mongoeco.core.schema_validation",
        "compile_collection_validator",
        "compile a collection's validator once per load",
        ("options", "dialect"),
    ),
    PrivateName(
        "mongoeco.engines.semantic_core",
        "enforce_collection_document_validation",
        "the engine's own error for a document the validator refuses",
        ("document", "options", "original_document", "dialect"),
    ),
    PrivateName("mongoeco._types.indexes", "is_ordered_index_spec", "which indexes the bulk loader builds"),
    PrivateName("mongoeco.core.identity", "assert_valid_root_document_id", "refuse array and regex _ids"),
    # Per-document transaction conflicts (workbook/offline_transactions.py).
    PrivateName(
        _MEMORY, "MemoryEngine._start_session_transaction", "note the snapshot a transaction starts from", ("session",)
    ),
    PrivateName(
        _MEMORY,
        "MemoryEngine._commit_session_transaction",
        "commit only the documents a transaction wrote",
        ("session",),
    ),
    PrivateName(
        _MEMORY, "MemoryEngine._abort_session_transaction", "release an aborted transaction's documents", ("session",)
    ),
    PrivateName(
        _MEMORY,
        "MemoryEngine._prepare_transaction_write_set_locked",
        "install a transaction's documents one by one instead of its whole collections",
        ("snapshot",),
    ),
    PrivateName(
        _MEMORY,
        "MemoryEngine._set_storage_document_locked",
        "see which document a write touches",
        ("collection", "storage_key", "document"),
    ),
    PrivateName(
        _MEMORY,
        "MemoryEngine._delete_storage_document_locked",
        "see which document a delete touches",
        ("collection", "storage_key"),
    ),
    PrivateName(
        _MEMORY,
        "MemoryEngine._update_indexes_locked",
        "index one committed document",
        ("db_name", "coll_name", "storage_key", "document", "action", "index_data_view", "indexes_view"),
    ),
    PrivateName(_MEMORY, "MemoryEngine._mvcc_states", "each open transaction's snapshot", instance_attribute=True),
    PrivateName(
        _MEMORY,
        "MemoryEngine._mvcc_version",
        "the committed version a snapshot is compared with",
        instance_attribute=True,
    ),
    PrivateName(
        _MEMORY,
        "MemoryEngine._publication_stack",
        "whether a write is a transaction's or a plain one",
        instance_attribute=True,
    ),
    PrivateName(
        "mongoeco.engines.mvcc",
        "MemoryMvccState",
        "a transaction's snapshot: storage, indexes, touched namespaces, snapshot_version",
    ),
    PrivateName(
        "mongoeco.core.server_errors",
        "server_error",
        "a write conflict is the command's error, not a writeError",
        ("message", "code", "scope", "context"),
    ),
    PrivateName("mongoeco.core.server_errors", "ErrorScope", "the COMMAND scope of a write conflict"),
    PrivateName("mongoeco.error_catalog", "SERVER_CODE_NAMES", "codeName WriteConflict / NoSuchTransaction (absent)"),
    # The change log kept in sequence order, pruned by bisection (workbook/offline_writes.py).
    PrivateName(
        _MEMORY,
        "MemoryEngine._prune_committed_changes_locked",
        "drop acknowledged change-log entries by bisection instead of a filter over the log per write",
    ),
    PrivateName(
        _MEMORY,
        "MemoryEngine._prepare_committed_changes_locked",
        "append a write's changes without rebuilding the whole change log",
        ("payloads",),
    ),
    PrivateName(
        _MEMORY,
        "MemoryEngine.dispatch_committed_changes",
        "deliver changes after a checkpoint by bisection (public, but its log is private)",
        ("consumer_id", "consumer"),
    ),
    PrivateName(
        _MEMORY, "MemoryEngine._committed_changes", "the change log (kept in sequence order)", instance_attribute=True
    ),
    PrivateName(
        _MEMORY, "MemoryEngine._change_checkpoints", "consumers' acknowledged sequences", instance_attribute=True
    ),
    PrivateName(_MEMORY, "MemoryEngine._change_pruned_through", "the change log's floor", instance_attribute=True),
    PrivateName(_MEMORY, "MemoryEngine._commit_sequence", "the last committed sequence", instance_attribute=True),
    PrivateName(_MEMORY, "MemoryEngine._change_log_max_entries", "the change log's capacity", instance_attribute=True),
    PrivateName(_MEMORY, "MemoryEngine._change_dispatch", "serialize deliveries per consumer", instance_attribute=True),
    PrivateName("mongoeco.engines.results", "CommittedChange", "build change-log entries"),
    PrivateName(
        _MEMORY,
        "MemoryEngine._candidate_items_for_plan_locked",
        "no full scan for a string or ObjectId _id that is not stored (inserting upserts)",
        ("coll", "query_plan", "collation"),
    ),
    PrivateName(_MEMORY, "MemoryEngine._direct_id_lookup_from_plan", "the _id a plan looks up, if any"),
    PrivateName(_MEMORY, "MemoryEngine.delete_with_operation", "yield to the loop per deleted document"),
    PrivateName(_MEMORY, "MemoryEngine.update_with_operation", "yield to the loop per updated document"),
)


def resolve(name: PrivateName) -> Any:
    """The object ``name`` refers to (raises ImportError or AttributeError when it moved)."""
    from workbook.lazy_imports import defer_iri_grammar

    defer_iri_grammar()  # mongoeco's import pulls in jsonschema: without the 1.4 s IRI grammar
    target: Any = importlib.import_module(name.module)
    parts = name.attribute.split(".")
    for part in parts[:1] if name.instance_attribute else parts:  # instance attributes: check the class
        target = getattr(target, part)
    return target


def problems() -> list[str]:
    """One line per private name that no longer resolves or lost a parameter the workbench uses."""
    found = []
    for name in PRIVATE_NAMES:
        try:
            target = resolve(name)
        except (ImportError, AttributeError) as error:
            found.append(f"{name.qualified} is gone ({error}); used to {name.why}")
            continue
        if name.parameters and callable(target):
            present = set(inspect.signature(target).parameters)
            missing = [p for p in name.parameters if p not in present]
            if missing:
                found.append(f"{name.qualified} lost parameter(s) {missing}; used to {name.why}")
    return found


def instance_problems(engine: Any, proxy: Any) -> list[str]:
    """Instance attributes (set in ``__init__``) missing from a live engine or proxy."""
    collection = proxy._client.get_database("workbench_contract").get_collection("c") if proxy else None
    owners = {
        _MEMORY: engine,
        _AGGREGATION: collection.aggregate([]) if collection is not None else None,
        _PROXY: proxy,
        _EXECUTOR: getattr(proxy, "_executor", None),
        _STORAGE: memory_storage_internals().MemoryCollection(),
        "MemoryIndexMap": memory_storage_internals().MemoryIndexMap(),
        _COLLECTION: collection,
    }
    found = []
    for name in PRIVATE_NAMES:
        if name.instance_attribute:
            owner_name, _, attribute = name.attribute.rpartition(".")
            owner = owners.get(owner_name) if owner_name in owners else owners[name.module]
            if not hasattr(owner, attribute):
                found.append(f"{name.qualified} is not set on a live instance; used to {name.why}")
    return found


def installed_version() -> str:
    """The installed mongoeco version."""
    from mongoeco import __version__

    return str(__version__)


# Resolved accessors, so the offline modules import private names from here and nowhere else.


def command_error(message: str, code: int, code_name: str, labels: tuple[str, ...]) -> Any:
    """A mongoeco OperationFailure that fails the whole command (not one of ``writeErrors``), with labels."""
    from mongoeco.core.server_errors import ErrorScope, server_error
    from mongoeco.error_catalog import SERVER_CODE_NAMES

    SERVER_CODE_NAMES.setdefault(code, code_name)  # MongoDB's name; mongoeco's catalog lacks 112 and 251
    return server_error(message, code=code, scope=ErrorScope.COMMAND, context={"errorLabels": list(labels)})


def bson_equality_key(value: Any) -> Any:
    """mongoeco's BSON equality key: equal for values MongoDB compares equal (1, 1.0, Int64(1))."""
    from mongoeco.core.bson_ordering import bson_equality_key as key

    return key(value)


def id_contains_numeric_value(value: Any) -> bool:
    """Whether an _id holds a number anywhere (those need equality across numeric types)."""
    from mongoeco.core.identity import id_contains_numeric_value as numeric

    return bool(numeric(value))


def to_pymongo(value: Any) -> Any:
    """An engine value (mongoeco's own BSON scalar types) as pymongo's ``bson`` types."""
    from mongoeco.wire.bson_bridge import encode_wire_value

    return encode_wire_value(value)


def index_helpers() -> tuple[Any, Any, Any, Any]:
    """``(EngineIndexRecord, default_index_name, normalize_index_keys, index_build_duplicate_error)``."""
    from mongoeco._types.documents import EngineIndexRecord
    from mongoeco._types.indexes import default_index_name, normalize_index_keys
    from mongoeco.core.duplicate_keys import index_build_duplicate_error

    return EngineIndexRecord, default_index_name, normalize_index_keys, index_build_duplicate_error


def committed_change_class() -> type:
    """mongoeco's change-log entry (``sequence``, ``payload``), built by the offline default's change log."""
    from mongoeco.engines.results import CommittedChange

    return CommittedChange


def memory_engine_class() -> type:
    """mongoeco's memory engine class, which the offline default subclasses."""
    from mongoeco.engines.memory import MemoryEngine

    return MemoryEngine


def wire_classes() -> tuple[type, type, type]:
    """``(AsyncMongoEcoProxyServer, WireCommandExecutor, WireAuthUser)`` for the offline server."""
    from mongoeco.wire.auth import WireAuthUser
    from mongoeco.wire.executor import WireCommandExecutor
    from mongoeco.wire.proxy import AsyncMongoEcoProxyServer

    return AsyncMongoEcoProxyServer, WireCommandExecutor, WireAuthUser


_BRACKETING_INSTALLED = False


def comparison_bracket(value: Any) -> int | None:
    """MongoDB's canonical type bracket of ``value`` (numbers share one), or None if unknown."""
    from mongoeco.compat import MONGODB_DIALECT_70

    order = MONGODB_DIALECT_70.bson_type_order
    rank = order.get(type(value))
    if rank is None:
        rank = next((r for t, r in order.items() if isinstance(value, t)), None)
    return None if rank is None else int(rank)


def _brackets_differ(candidate: Any, target: Any) -> bool:
    """True when MongoDB's $gt/$gte/$lt/$lte cannot match: the operand and value are of different types.

    Only scalar operands are bracketed here (null, MinKey, MaxKey, arrays and documents keep
    mongoeco's own rules); an array value is left to the element-wise comparison.
    """
    if target is None or isinstance(candidate, list) or isinstance(target, (list, dict)):
        return False
    target_rank = comparison_bracket(target)
    if target_rank is None or target_rank in (0, 1, 127):
        return False
    candidate_rank = comparison_bracket(candidate)
    return candidate_rank is not None and candidate_rank != target_rank


def install_type_bracketing() -> None:
    """Make mongoeco's query comparisons respect BSON type brackets, as MongoDB does.

    ``find({"a": {"$gt": 1}})`` matches numbers only on MongoDB; mongoeco 4.11.0 compares across
    types in BSON order, so strings, dates and booleans match too. Wraps the two comparison entry
    points of its interpreted matcher and the compiled matcher's dotted-path comparison.
    Idempotent; see patches/type-bracketing.md.
    """
    global _BRACKETING_INSTALLED
    if _BRACKETING_INSTALLED:
        return
    from mongoeco.core.compiled_query import CompiledQuery
    from mongoeco.core.filtering import QueryEngine

    candidate_match = getattr(QueryEngine._comparison_matches_candidate, "__func__")  # noqa: B009 - unbound
    top_level = getattr(QueryEngine._match_top_level_comparison, "__func__")  # noqa: B009
    comparison_code = CompiledQuery._comparison_code

    def bracketed_candidate(cls: Any, /, candidate: Any, target: Any, operator: str, **kw: Any) -> bool:
        if _brackets_differ(candidate, target):
            return False
        return bool(candidate_match(cls, candidate, target, operator, **kw))

    def bracketed_top_level(cls: Any, /, doc: Any, field: str, target: Any, operator: str, **kw: Any) -> bool:
        if isinstance(doc, dict) and field in doc and _brackets_differ(doc[field], target):
            return False
        return bool(top_level(cls, doc, field, target, operator, **kw))

    def bracketed_code(self: Any, field: str, value: Any, operator: str) -> str:
        code = str(comparison_code(self, field, value, operator))
        if "." not in field:
            return code
        same = self._store("same", lambda candidate: not _brackets_differ(candidate, value))
        return code.replace(
            f" for candidate in _extract(doc, {self._field(field)})",
            f" for candidate in _extract(doc, {self._field(field)}) if {same}(candidate)",
        )

    engine: Any = QueryEngine  # patched in place: every mongoeco matcher calls these two classmethods
    engine._comparison_matches_candidate = classmethod(bracketed_candidate)
    engine._match_top_level_comparison = classmethod(bracketed_top_level)
    compiled: Any = CompiledQuery
    compiled._comparison_code = bracketed_code
    _BRACKETING_INSTALLED = True


_BSON_SIZES_INSTALLED = False


def install_bson_value_sizes() -> None:
    """Let ``$bsonSize`` (and collStats sizes) measure every BSON type, as MongoDB does.

    mongoeco 4.11.0's size function knows the common scalars only and raises "$bsonSize cannot
    encode value of type BsonInt64" (or Decimal128, DBRef, Code, MinKey...). Sizes the rest with
    pymongo's encoder. Idempotent; see patches/bson-size-all-types.md.
    """
    global _BSON_SIZES_INSTALLED
    if _BSON_SIZES_INSTALLED:
        return
    import bson
    from mongoeco.core.aggregation import runtime

    known = runtime._bson_value_size

    def value_size(value: Any) -> int:
        try:
            return int(known(value))
        except Exception:  # noqa: BLE001 - mongoeco raises OperationFailure; fall back for any type
            encoded = bson.encode({"v": to_pymongo(value)})
            return len(encoded) - 4 - 1 - 1 - 2  # minus the wrapper: length, type byte, "v\0", trailing 0

    runtime._bson_value_size = value_size
    _BSON_SIZES_INSTALLED = True


_PUSHDOWN_INSTALLED = False


def install_pushdown_reads(covers: Any, read: Any) -> None:
    """Route the documents an aggregate's leading stages select through the offline read layer.

    mongoeco turns an aggregate's leading ``$match``/``$sort``/``$skip``/``$limit``/``$project`` into one
    find (its pushdown) and runs the rest of the pipeline over the cursor it builds for it. Where
    ``covers(collection, operation)`` says the planner model can run that find, the cursor is one whose
    documents ``read(collection, operation, session)`` (async) selects, as the read layer answers a
    ``find`` command; ``read`` may still return None, and the engine's own cursor is used. Idempotent.
    """
    global _PUSHDOWN_INSTALLED
    if _PUSHDOWN_INSTALLED:
        return
    from mongoeco.api._async.aggregation_cursor import AsyncAggregationCursor

    engine_build = AsyncAggregationCursor._build_pushdown_cursor

    class ModelCursor:
        """The pushdown cursor's ``to_list``/``close``, over the documents the read layer selects."""

        def __init__(self, aggregation: Any, operation: Any) -> None:
            self._aggregation, self._operation = aggregation, operation
            self._engine_cursor: Any = None

        async def to_list(self, length: int | None = None) -> list[Any]:
            aggregation = self._aggregation
            documents = await read(aggregation._collection, self._operation, aggregation._session)
            if documents is not None:
                return documents if length is None else documents[:length]
            self._engine_cursor = engine_build(aggregation, self._operation)
            return list(await self._engine_cursor.to_list(length))

        async def close(self) -> None:
            if self._engine_cursor is not None and callable(getattr(self._engine_cursor, "close", None)):
                await self._engine_cursor.close()

    def build(self: Any, operation: Any) -> Any:
        if covers(self._collection, operation):
            return ModelCursor(self, operation)
        return engine_build(self, operation)

    AsyncAggregationCursor._build_pushdown_cursor = build  # type: ignore[method-assign]
    _PUSHDOWN_INSTALLED = True


def storage_chunks(storage: Any) -> Any:
    """Yield ``(chunk, stored values)`` for each chunk of a stored collection, in natural order.

    mongoeco's collection is persistent: a write replaces only the chunk (of at most 128 documents)
    it touches, so a chunk that is the same object in two versions holds the same documents.
    """
    from mongoeco.engines._memory_collection import _DELETED, _NO_CHUNK

    chunks, chunk_id = storage._chunks, storage._head_chunk
    while chunk_id != _NO_CHUNK:
        chunk = chunks[chunk_id]
        yield chunk, [item[1] for item in chunk.items if item is not _DELETED]
        chunk_id = chunk.following


def memory_storage_internals() -> Any:
    """mongoeco's persistent collection and index-map module (load snapshots: workbook/snapshot.py)."""
    from mongoeco.engines import _memory_collection

    return _memory_collection


# --- the bulk loader (workbook/bulkload.py): first loads built in one pass, checked as inserts are ---

CODEC_MARKER = "$mongoeco"
"""The key mongoeco's codec reserves for tagged values (a document holding it takes the codec's path)."""


def compile_validator(options: Any) -> Any:
    """The engine's compiled validator for a collection's options, or None when it has none."""
    from mongoeco.compat import MONGODB_DIALECT_70
    from mongoeco.core.schema_validation import compile_collection_validator

    return compile_collection_validator(options, dialect=MONGODB_DIALECT_70)


def validates(compiled: Any, document: Any) -> bool:
    """Whether the engine's compiled validator lets ``document`` in (a "warn" validator always does)."""
    from mongoeco.compat import MONGODB_DIALECT_70

    if compiled.validation_action == "warn":
        return True
    result = compiled.validate_document(document, original_document=None, is_upsert_insert=False,
                                        dialect=MONGODB_DIALECT_70)  # fmt: skip
    return bool(result.valid)


def enforce_validation(document: Any, options: Any) -> None:
    """Raise the engine's own DocumentValidationFailure (code 121, with errInfo) if ``document`` fails."""
    from mongoeco.compat import MONGODB_DIALECT_70
    from mongoeco.engines.semantic_core import enforce_collection_document_validation

    enforce_collection_document_validation(document, options=options, original_document=None,
                                           dialect=MONGODB_DIALECT_70)  # fmt: skip


def document_codec() -> Any:
    """mongoeco's document codec (the engine's stored form of documents)."""
    from mongoeco.core.codec import DocumentCodec

    if DocumentCodec._MARKER != CODEC_MARKER:
        raise AttributeError(f"mongoeco's codec marker is {DocumentCodec._MARKER!r}, not {CODEC_MARKER!r}")
    return DocumentCodec


def shared_borrow(engine: Any) -> Any:
    """``engine._borrow_public_storage_document``, whose first decode of a stored document shares with its
    payload every subdocument and array that holds no tagged value (the codec would copy them, equal).

    The engine caches the decoded form on the stored document and treats both as read-only, so a part
    that decodes to itself is held once instead of twice; a tagged value (a date, an Int64...) and every
    container above one are decoded by the codec itself, as before.
    """
    borrow = engine._borrow_public_storage_document
    codec = document_codec()
    if not uses_codec(engine, codec):
        return borrow
    from mongoeco.engines.memory import _StoredDocument

    tagged, decode = codec._is_tagged_value, codec.decode

    def shared(value: Any) -> Any:
        kind = type(value)
        if kind is dict:
            if tagged(value):
                return decode(value, preserve_bson_wrappers=True)
            out = {key: shared(item) for key, item in value.items()}
            return value if all(out[key] is item for key, item in value.items()) else out
        if kind is list:
            items = [shared(item) for item in value]
            return value if all(a is b for a, b in zip(items, value, strict=True)) else items
        if isinstance(value, dict | list):
            return decode(value, preserve_bson_wrappers=True)
        return value

    def borrow_shared(stored: Any) -> Any:
        if type(stored) is _StoredDocument and stored.decoded_wrapped is None:
            stored.decoded_wrapped = shared(stored.payload)
        return borrow(stored)

    return borrow_shared


def uses_codec(engine: Any, codec: Any) -> bool:
    """Whether ``engine`` stores documents with ``codec`` (else the bulk loader encodes through the engine)."""
    return getattr(engine, "_codec", None) is codec


def stored_payload(engine: Any, document: Any) -> Any:
    """``document`` in the engine's stored form, through the engine (size and depth limits included)."""
    return engine._encode_storage_document(document).payload


def storage_key_function(engine: Any) -> Any:
    """The engine's function from an ``_id`` to its storage key."""
    return engine._storage_key


def check_root_id(identifier: Any) -> None:
    """Raise the engine's error (code 53) for an ``_id`` that cannot be one (an array, a regex)."""
    from mongoeco.core.identity import assert_valid_root_document_id

    assert_valid_root_document_id(identifier)


def decoder(engine: Any) -> Any:
    """A function from a stored payload to the document the engine's index builds read."""
    return lambda payload: engine._borrow_storage_document(payload)


def index_keys(engine: Any, document: Any, fields: list[str]) -> Any:
    """The keys an index over ``fields`` holds for ``document``, as the engine computes them."""
    return engine._index_keys(document, fields)


def unique_index_keys(engine: Any, document: Any, fields: list[str]) -> Any:
    """The keys a unique index over ``fields`` compares for ``document``."""
    return engine._unique_index_keys(document, fields)


def check_compound_shape(engine: Any, document: Any, record: Any) -> None:
    """Raise the engine's error for a compound index over more than one array in ``document``."""
    engine._validate_compound_multikey_shape(document, record)


def index_duplicate_error(namespace: str, record: Any, document: Any, conflict: Any) -> Exception:
    """The engine's E11000 for a unique index build that meets a repeated key."""
    error: Exception = index_helpers()[3](namespace=namespace, index=record, document=document, conflict=conflict)
    return error


def plain_index(record: Any) -> bool:
    """Whether an index record is a plain ascending/descending index the bulk loader builds itself."""
    from mongoeco._types.indexes import is_ordered_index_spec

    return bool(
        is_ordered_index_spec(record.key)
        and not record.sparse
        and record.collation is None
        and record.partial_filter_expression is None
        and record.expire_after_seconds is None
        and not record.weights
    )


async def collection_state(engine: Any, db_name: str, coll_name: str) -> tuple[Any, list[Any]]:
    """A collection's options and index records (on the engine's loop); it must exist and be empty."""
    import copy

    async with engine._get_lock(db_name, coll_name):
        if engine._storage.get(db_name, {}).get(coll_name):
            raise ValueError(f"{db_name}.{coll_name} is not empty: the bulk loader fills empty collections only")
        options = copy.deepcopy(engine._collection_options.get(db_name, {}).get(coll_name) or None)
        return options, list(engine._indexes.get(db_name, {}).get(coll_name, []))


async def swap_in(
    engine: Any, db_name: str, coll_name: str, collection: Any, indexes: dict[str, Any], records: list[Any]
) -> None:
    """Install a built collection and its index maps into the empty collection, under its lock."""
    async with engine._get_lock(db_name, coll_name):
        with engine._meta_lock:
            if engine._storage.get(db_name, {}).get(coll_name):
                raise ValueError(f"{db_name}.{coll_name} was written to during the bulk load")
            if list(engine._indexes.get(db_name, {}).get(coll_name, [])) != list(records):
                raise ValueError(f"{db_name}.{coll_name}'s indexes changed during the bulk load")
            engine._storage.setdefault(db_name, {})[coll_name] = collection
            engine._index_data.setdefault(db_name, {}).setdefault(coll_name, {}).update(indexes)
            engine._collections.setdefault(db_name, set()).add(coll_name)


def datetime_payload() -> Any:
    """A function from a datetime to the codec's stored form (UTC, milliseconds, tagged), as its encode gives."""
    from mongoeco.core.bson_scalars import normalize_utc_bson_datetime
    from mongoeco.core.codec import DocumentCodec

    tagged = DocumentCodec._tagged_value
    return lambda value: tagged("datetime", normalize_utc_bson_datetime(value).isoformat())


def projection_executor(projection: Any, selector: Any, *, public: bool = True) -> Any:
    """A function applying ``projection`` (any form: ``$slice``, ``$elemMatch``, positional with ``selector``,
    the find's filter) to a decoded stored document, as the engine's find does (in the public form a find
    replies with, or, ``public=False``, in the internal form an aggregation stage reads)."""
    from mongoeco.core.projections import _ProjectionExecutor

    project = _ProjectionExecutor(projection, selector_filter=selector)
    if not public:
        return project
    to_public = document_codec().to_public
    return lambda document: to_public(project(document))

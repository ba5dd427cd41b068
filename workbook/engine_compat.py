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

import collections
import contextlib
import contextvars
import dataclasses
import datetime
import functools
import importlib
import inspect
import itertools
import operator
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from bson import Int64, ObjectId

from workbook.wire_form import INT64

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
_PROFILING = "mongoeco.engines.profiling"
_EXECUTOR = "mongoeco.wire.executor"
_PROXY = "mongoeco.wire.proxy"
_STORAGE = "mongoeco.engines._memory_collection"
_COLLECTION = "mongoeco.api._async.collection"
_AGGREGATION = "mongoeco.api._async.aggregation_cursor"
_RUNTIME = "mongoeco.api._async._collection_runtime"
_MODIFY = "mongoeco.api._async._collection_modify"
_HUB = "mongoeco._change_streams.hub"
_EXPRESSION_USERS = (
    "mongoeco.core.aggregation.stages",
    "mongoeco.core.aggregation.runtime_state",
    "mongoeco.core.aggregation.transform_stages",
    "mongoeco.core.aggregation.preparation",
    "mongoeco.core.aggregation.join_stages",
    "mongoeco.core.aggregation.grouping_stages",
    "mongoeco.core.aggregation.compiled_aggregation",
)
"""The mongoeco modules that import ``evaluate_expression`` by name (rebound to the patched one)."""

_PROJECT_USERS = ("mongoeco.core.aggregation.stages", "mongoeco.core.aggregation.compiled_pipeline")
"""The modules that import the ``$project`` stage function by name (rebound to the MongoDB rules)."""

_BUCKET_USERS = ("mongoeco.core.aggregation.stages", "mongoeco.core.aggregation.runtime_state")
"""The modules that import the ``$bucket`` and ``$count`` stage functions by name (rebound to the MongoDB rules)."""

_UNWIND_USERS = ("mongoeco.core.aggregation.stages", "mongoeco.core.aggregation.runtime_state")
"""The modules that import ``_apply_unwind`` by name (rebound to the one that copies each document once per element)."""

_UNION_USERS = ("mongoeco.core.aggregation.stages",)
"""The modules that import ``_apply_union_with`` by name (rebound to the one that copies once per pipeline)."""

_ACCUMULATOR_USERS = ("mongoeco.core.aggregation.grouping_stages", "mongoeco.core.aggregation")
"""The modules that import ``_apply_accumulators`` by name (rebound to the plain-scalar fast path)."""

_PATH_USERS = ("mongoeco.core.aggregation.transform_stages", "mongoeco.core.aggregation.runtime_state")
"""The modules whose ``set_document_value`` sets $addFields / $project computed fields (and $lookup's ``as``)."""

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
    PrivateName(
        "mongoeco.core.projections",
        "_project_inclusion_value",
        "an included value shared, not copied, in a find's reply (shared_projected_values)",
        ("source", "node"),
    ),
    PrivateName(
        "mongoeco.core.projections",
        "_slice_projection_array",
        "a negative $slice skip counted from the end (install_projection_fixes)",
        ("value", "operand"),
    ),
    PrivateName(
        "mongoeco.core.query_plan",
        "_compile_filter_strict",
        "rewrite $alwaysTrue/$alwaysFalse before mongoeco compiles a filter (install_always_operators)",
        ("filter_spec",),
    ),
    PrivateName(
        _MEMORY,
        "MemoryEngine._index_data_view",
        "the index maps a same-key or compound hashed index replaces (workbook.offline_indexes)",
        ("context",),
    ),
    PrivateName(
        _MEMORY,
        "MemoryEngine._rebuild_index_data_locked",
        "rebuild a same-key index's map for its real key pattern (workbook.offline_indexes)",
        ("db_name", "coll_name", "index", "index_data_view", "storage_view"),
    ),
    PrivateName(_MEMORY, "MemoryEngine._borrow_storage_document", "decode a stored document without copying"),
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
        _MEMORY,
        "MemoryEngine._profiler",
        "file each profiler entry under its command's namespace (offline_engine._profile_by_namespace)",
        instance_attribute=True,
    ),
    PrivateName(
        _PROFILING,
        "EngineProfiler.record",
        "the profiler's record, wrapped to set each entry's namespace and record each operation once",
        ("db_name", "op", "namespace", "command"),
    ),
    PrivateName(
        _PROFILING,
        "EngineProfiler._entries",
        "complete an operation's entry with the command's fields instead of adding a second entry",
        instance_attribute=True,
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
    PrivateName(_STORAGE, "_DELETED", "a deleted slot in a chunk (storage_chunks)"),
    PrivateName(_STORAGE, "_NO_CHUNK", "the end of the chunk chain (storage_chunks)"),
    PrivateName(
        _STORAGE, "_OrderChunk", "a chunk's items and its neighbours' ids (storage_chunks, same_chunk_chain, snapshot)"
    ),
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
    PrivateName(
        "mongoeco.wire.cursors",
        "WireCursorStore._state",
        "a cursor's remaining documents, to cut a getMore's batch at 16 MiB (workbook.offline_cursors)",
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
    # Missing fields left out of object expressions (install_object_expression_missing).
    PrivateName(
        "mongoeco.core.aggregation.runtime",
        "evaluate_expression",
        "object expressions omit missing fields (wrapped, and rebound where imported by name)",
        ("document", "expression", "variables", "dialect", "collation"),
    ),
    PrivateName(
        "mongoeco.core.aggregation.runtime",
        "_evaluate_expression_with_missing",
        "evaluate an object expression's field keeping 'missing' apart from null",
        ("document", "expression", "variables", "dialect"),
    ),
    PrivateName("mongoeco.core.aggregation.runtime", "_MISSING", "the evaluator's missing-value sentinel"),
    PrivateName("mongoeco.core.aggregation.runtime", "_REMOVE", "the evaluator's $$REMOVE sentinel"),
    PrivateName(
        "mongoeco.core.aggregation.grouping_stages",
        "_IncrementalGroup",
        "a one-field object $group key keeps MongoDB's missing -> null rule",
        ("spec",),
    ),
    PrivateName(
        "mongoeco.core.aggregation.compiled_aggregation",
        "CompiledGroup",
        "a one-field object $group key keeps MongoDB's missing -> null rule (compiled $group)",
        ("spec",),
    ),
    *(
        PrivateName(module, "evaluate_expression", "rebound to the object-expression fix (imported by name)")
        for module in _EXPRESSION_USERS
    ),
    PrivateName(
        _MEMORY,
        "_StoredDocument",
        "a stored document (restored in one pass; subclassed so a restore encodes a payload on first read)",
        ("payload",),
    ),
    *(
        PrivateName(
            _MEMORY,
            f"_StoredDocument.{cache}",
            "the engine's decoded copy of a stored document (shared with a document that decodes to itself)",
        )
        for cache in ("decoded_wrapped", "decoded_public")
    ),
    # $group's common accumulators over plain scalars (engine_aggregation._install_plain_accumulators).
    PrivateName(
        "mongoeco.core.aggregation.accumulators",
        "_apply_accumulators",
        "$sum/$count/$min/$max/$first/$last over plain scalars without numeric wrappers (wrapped, rebound)",
        ("bucket", "accumulator_specs", "document", "variables", "evaluate_expression"),
    ),
    PrivateName(
        "mongoeco.core.aggregation.accumulators",
        "_AccumulatorBucket",
        "the $group bucket whose values and flags the fast path updates",
        ("bucket_id", "values", "flags"),
    ),
    *(
        PrivateName(module, "_apply_accumulators", "rebound to the plain-scalar fast path (imported by name)")
        for module in _ACCUMULATOR_USERS
    ),
    PrivateName(
        "mongoeco.core.paths",
        "set_document_value",
        "computed $addFields/$project paths through arrays (wrapped, rebound where imported by name)",
        ("doc", "path", "value"),
    ),
    *(
        PrivateName(module, "set_document_value", "rebound to the computed-path fix (imported by name)")
        for module in _PATH_USERS
    ),
    PrivateName(
        "mongoeco.core.aggregation.transform_stages",
        "_apply_project",
        "$project with MongoDB's nested, numeric-flag and array rules (wrapped; workbook.offline_aggregation)",
        ("documents", "spec", "variables", "dialect", "deadline"),
    ),
    *(
        PrivateName(module, "_apply_project", "rebound to the $project fix (imported by name)")
        for module in _PROJECT_USERS
    ),
    PrivateName(
        "mongoeco.core.collation",
        "_pyuca_collation_key",
        "caseLevel adds case alone below strength 3",
        ("value", "collation"),
    ),
    PrivateName(
        "mongoeco.core.filtering",
        "QueryEngine._match_elem_match_candidate",
        "$elemMatch on an element that is an array (an object of numeric fields)",
        ("candidate", "condition"),
    ),
    PrivateName(
        "mongoeco.core.query_operators", "query_operator_keys", "which $elemMatch conditions are document-form"
    ),
    PrivateName(
        "mongoeco.core.aggregation.grouping_stages",
        "_apply_bucket",
        "$bucket sorted by _id under the collation, a default inside the boundaries refused",
        ("documents", "spec", "variables"),
    ),
    *(
        PrivateName(module, "_apply_bucket", "rebound to the $bucket fix (imported by name)")
        for module in _BUCKET_USERS
    ),
    PrivateName(
        "mongoeco.core.aggregation.grouping_stages",
        "_apply_bucket_auto",
        "$bucketAuto's buckets given as a long or an integral double (granularity_near_zero.js)",
        ("documents", "spec", "variables"),
    ),
    *(
        PrivateName(module, "_apply_bucket_auto", "rebound to the $bucketAuto fix (imported by name)")
        for module in _BUCKET_USERS
    ),
    PrivateName(
        "mongoeco.core.aggregation.grouping_stages",
        "_apply_count",
        "$count of nothing is no document",
        ("documents", "spec"),
    ),
    *(PrivateName(module, "_apply_count", "rebound to the $count fix (imported by name)") for module in _BUCKET_USERS),
    PrivateName(
        "mongoeco.core.aggregation.join_stages",
        "_apply_lookup",
        "$lookup looks up the localField's values as MongoDB extracts them",
        ("documents", "spec"),
    ),
    PrivateName("mongoeco.core.aggregation.stages", "_apply_lookup", "rebound to the $lookup fix (imported by name)"),
    PrivateName(
        "mongoeco.core.aggregation.runtime",
        "_apply_unwind",
        "$unwind copying each document once per element (not once per element with the whole array)",
        ("documents", "spec", "deadline"),
    ),
    *(
        PrivateName(module, "_apply_unwind", "rebound to the $unwind copies (imported by name)")
        for module in _UNWIND_USERS
    ),
    PrivateName("mongoeco.core.aggregation.runtime", "_require_unwind_spec", "$unwind's path and options", ("spec",)),
    PrivateName("mongoeco.core.aggregation.runtime", "DeadlineCheckpoint", "$unwind keeps maxTimeMS", ("deadline",)),
    PrivateName("mongoeco.core.aggregation.runtime", "BsonInt64", "$unwind's includeArrayIndex is a NumberLong"),
    PrivateName(
        "mongoeco.core.aggregation.join_stages",
        "_apply_union_with",
        "$unionWith not copying again the documents an earlier $unionWith of the pipeline returned",
        ("documents", "spec", "collection_resolver", "variables"),
    ),
    *(
        PrivateName(module, "_apply_union_with", "rebound to the $unionWith copies (imported by name)")
        for module in _UNION_USERS
    ),
    PrivateName(
        "mongoeco.core.aggregation.runtime",
        "_require_union_with_spec",
        "$unionWith's coll and pipeline, to tell whether it reads a collection or $documents",
        ("spec",),
    ),
    PrivateName(
        "mongoeco.core.aggregation.runtime",
        "_CURRENT_COLLECTION_RESOLVER_KEY",
        "$unionWith without coll reads the aggregated collection under this key",
    ),
    PrivateName(
        "mongoeco.core.aggregation.resources",
        "AggregationResources",
        "$unionWith asks its resolver (a lookup in the loaded collections) whether its source is loaded",
    ),
    PrivateName(
        "mongoeco.api._async.aggregation_cursor",
        "AsyncAggregationCursor._load_collection_documents",
        "a $lookup's foreign documents kept per version of the collection",
        ("collection_name",),
    ),
    PrivateName(
        "mongoeco.api._async.aggregation_cursor",
        "AsyncAggregationCursor._leading_search_stage",
        "$search pipelines (whose stages do not copy foreign documents) load them as before",
    ),
    PrivateName(
        "mongoeco.core.aggregation.join_stages",
        "build_bounded_lookup_hash_plan",
        "a $lookup's hash plan kept with its foreign documents",
        ("foreign", "foreign_field"),
    ),
    PrivateName("mongoeco.core.collation", "compare_with_collation", "compare $bucket ids under the collation"),
    PrivateName("mongoeco.core.query_plan", "_normalize_type_specifier", "$type codes 6 and 12", ("type_spec",)),
    PrivateName(
        "mongoeco.core.filtering", "QueryEngine._normalize_type_specifier", "$type codes 6 and 12", ("type_spec",)
    ),
    PrivateName(
        "mongoeco.core.collation", "_requires_icu_backend", "backwards (French) served by pyuca", ("collation",)
    ),
    PrivateName("mongoeco.core.collation", "_pyuca", "whether the pyuca backend is installed"),
    PrivateName("mongoeco.core.bson_scalars", "BsonInt64", "a $mod result that is a NumberLong, in the engine's form"),
    PrivateName("mongoeco.core.bson_scalars", "BsonInt32", "an arithmetic result that must stay a NumberLong"),
    PrivateName(
        "mongoeco.core.bson_scalars",
        "_wrap_numeric_result",
        "a NumberLong kept a NumberLong by $inc, $sum, $add (long op int is a long)",
        ("left", "right", "result"),
    ),
    PrivateName(
        "mongoeco.core.aggregation.extensions",
        "register_aggregation_expression_operator",
        "$expr as an aggregation expression",
        ("name", "handler"),
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
    PrivateName(
        "mongoeco.core.codec",
        "DocumentCodec.to_internal",
        "the command boundary, replaced by its one-walk equivalent (workbook.offline_codec)",
        ("data",),
    ),
    PrivateName("mongoeco.core.codec", "DocumentCodec.decode", "what the command boundary makes of one scalar"),
    PrivateName(
        _MEMORY,
        "MemoryEngine._change_payload",
        "build change payloads without copies _record_committed_change makes anyway (UncopiedChangePayloads)",
        ("operation_type", "db_name", "coll_name", "document_key", "full_document"),
    ),
    PrivateName(
        _MEMORY,
        "MemoryEngine._record_committed_change",
        "it copies a payload it keeps (so UncopiedChangePayloads need not)",
        ("context", "payload"),
    ),
    PrivateName(
        "mongoeco.wire.bson_bridge",
        "decode_wire_value",
        "replaced by its one-walk equivalent (workbook.offline_codec.install_fast_wire_decode)",
        ("value",),
    ),
    PrivateName("mongoeco.wire.protocol", "decode_wire_value", "the protocol's own binding of the same function"),
    PrivateName(
        "mongoeco.wire.bson_bridge",
        "encode_wire_value",
        "the engine's values as pymongo's (to_pymongo), and the fallback of the one-walk reply encoding",
        ("value",),
    ),
    PrivateName(
        "mongoeco.wire.protocol",
        "encode_wire_value",
        "its binding, replaced by the one-walk reply encoding (workbook.offline_codec.install_fast_wire_encode)",
    ),
    PrivateName(
        "mongoeco.api._async.raw_batch_cursor",
        "encode_wire_value",
        "the raw batch cursor's binding of the same function",
    ),
    PrivateName(
        "mongoeco.engines.adapter",
        "EngineSpiAdapter._deliver_committed_change",
        "deliver a change without building the hub's state (install_cheap_change_delivery)",
        ("sink", "change"),
    ),
    PrivateName(
        _HUB, "ChangeStreamHub._condition", "read the hub's next token under its lock", instance_attribute=True
    ),
    PrivateName(_HUB, "ChangeStreamHub._next_token", "the next change the hub expects", instance_attribute=True),
    PrivateName("mongoeco.core.codec", "_InternalBsonDocument", "the command boundary's documents (offline_codec)"),
    PrivateName("mongoeco.core.codec", "_InternalBsonArray", "the command boundary's arrays (offline_codec)"),
    PrivateName("mongoeco.core.codec", "_own_internal_bson", "the command boundary's wrap of one scalar"),
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
    # Numeric _id checks from a per-collection count (workbook/offline_ids.py, patches/numeric-id-inserts.md).
    PrivateName(
        _MEMORY, "id_contains_numeric_value", "switch mongoeco's per-write numeric _id scans off (module global)"
    ),
    PrivateName(_MEMORY, "MemoryEngine._storage_view", "the stored collections a write sees", ("context",)),
    PrivateName(_MEMORY, "MemoryEngine._unique_key_error", "the engine's own E11000 for a numeric _id duplicate"),
    PrivateName(_MEMORY, "MemoryEngine._storage_key", "the storage key of an _id (is {_id: v} stored under v's key?)"),
    PrivateName(
        _MEMORY,
        "MemoryEngine.merge_document",
        "a $merge's numeric _id check from the count; its scan for an equal _id skipped (skip_merge_id_scans)",
    ),
    # Bulk delete_many (workbook/offline_writes.py BulkDeletes, patches/change-log-rebuilt-per-write.md).
    *(
        PrivateName(_MEMORY, f"MemoryEngine.{method}", f"a bulk delete does what delete_with_operation does: {why}")
        for method, why in (
            ("_change_payload", "the change-log payload of one delete"),
            ("_record_committed_change", "record it in the write's publication frame"),
            ("_document_state_rollback_locked", "one rollback and publication scope per chunk"),
            ("_invalidate_search_runtime_cache", "forget search caches of the collection"),
            ("_purge_expired_documents_locked", "TTL purge before the candidates are listed"),
            ("_is_profile_namespace", "system.profile keeps mongoeco's own path"),
            ("_index_data_view", "the index maps a write sees"),
            ("_search_indexes_view", "the search index definitions a write sees"),
            ("_collections_view", "the registered collections a write sees"),
            ("_collection_options_view", "the collection options a write sees"),
        )
    ),
    PrivateName(_COLLECTION, "AsyncCollection._normalize_filter", "a delete statement's filter, as the API takes it"),
    PrivateName(
        _COLLECTION, "AsyncCollection._mongodb_dialect", "compile the delete's filter", instance_attribute=True
    ),
    PrivateName(_COLLECTION, "AsyncCollection._planning_mode", "compile the delete's filter", instance_attribute=True),
    PrivateName(_COLLECTION, "AsyncCollection._runtime", "the collection's change delivery", instance_attribute=True),
    *(
        PrivateName(_RUNTIME, f"CollectionRuntimeCoordinator.{method}", f"{why} around a bulk delete, as the API does")
        for method, why in (
            ("_prepare_engine_change_delivery", "prepare change delivery"),
            ("_dispatch_engine_changes", "deliver the recorded changes"),
        )
    ),
    PrivateName(_MODIFY, "_bind_execution_context", "bind a bulk delete's operation context as delete_many does"),
    PrivateName("mongoeco.wire._framing", "op_msg_flags", "a large request decoded off the loop: its reply policy"),
    PrivateName(_PROXY, "AsyncMongoEcoProxyServer._dispatch_wire_request", "decode a large request off the loop"),
    PrivateName(_PROXY, "AsyncMongoEcoProxyServer._decode_wire_context", "use the body decoded off the loop"),
    PrivateName(
        _STORAGE,
        "MemoryCollection.__setitem__",
        "keep numeric _id counts and unique keys current; queue new keys' order updates (offline_appends)",
    ),
    *(
        PrivateName(
            _STORAGE,
            f"MemoryCollection.{name}",
            "brought up to date from the queued appends before it is read or written (offline_appends)",
            instance_attribute=True,
        )
        for name in ("_chunks", "_ordinals", "_locations", "_head_chunk", "_tail_chunk", "_next_chunk", "_next_ordinal")
    ),
    *(
        PrivateName(_STORAGE, f"MemoryCollection.{name}", f"{why}, queued appends included (offline_appends)")
        for name, why in (("_snapshot_state", "a rollback's state"), ("_restore_state", "a rollback"))
    ),
    PrivateName(_STORAGE, "MemoryCollection.__delitem__", "keep numeric _id counts and unique keys current"),
    PrivateName(_STORAGE, "MemoryCollection.copy", "a transaction's copy carries its unique keys (offline_unique)"),
    PrivateName(
        "mongoeco.engines.virtual_indexes",
        "document_in_virtual_index",
        "which documents a partial or sparse unique index holds (offline_unique)",
        ("document", "index"),
    ),
    PrivateName(
        "mongoeco._types.documents",
        "EngineIndexRecord",
        "an index record marked non-unique for a check done by key (offline_unique)",
    ),
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
        _HUB: _change_stream_hub(),
        _PROFILING: getattr(engine, "_profiler", None),
        "WireCursorStore": getattr(proxy, "_cursor_store", None),
    }
    found = []
    for name in PRIVATE_NAMES:
        if name.instance_attribute:
            owner_name, _, attribute = name.attribute.rpartition(".")
            owner = owners.get(owner_name) if owner_name in owners else owners[name.module]
            if not hasattr(owner, attribute):
                found.append(f"{name.qualified} is not set on a live instance; used to {name.why}")
    return found


def _change_stream_hub() -> Any:
    """A fresh change stream hub (its instance attributes are checked like the engine's)."""
    from mongoeco.change_streams import ChangeStreamHub

    return ChangeStreamHub()


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
    """mongoeco's BSON equality key: equal for values MongoDB compares equal (1, 1.0, Int64(1)).

    A ``str`` and a naive datetime in whole milliseconds are answered here, as mongoeco answers them, without
    its eight type tests first (the index keys of a load: every review's and order's date is a new value).
    """
    kind = type(value)
    if kind is str:
        return ("str", value)
    if kind is datetime.datetime and value.tzinfo is None and value.microsecond % 1000 == 0:
        return ("datetime", value)
    return _equality_key()(value)


@functools.cache
def _equality_key() -> Callable[[Any], Any]:
    from mongoeco.core.bson_ordering import bson_equality_key as key

    return key


def id_contains_numeric_value(value: Any) -> bool:
    """Whether an _id holds a number anywhere (those need equality across numeric types)."""
    kind = type(value)
    if kind is str:  # the two common cases answered without mongoeco's walk (each insert asks twice)
        return False
    if kind is int and -(2**63) <= value < 2**63:  # wider ints: mongoeco raises its overflow error
        return True
    if kind is _object_id_types[0] or kind is _object_id_types[1]:
        return False
    from mongoeco.core.identity import id_contains_numeric_value as numeric

    return bool(numeric(value))


def engine_object_id() -> type:
    """mongoeco's ObjectId (a subclass of pymongo's), what the engine's documents hold."""
    from mongoeco.types import ObjectId

    return ObjectId


_object_id_types: tuple[type, type] = (ObjectId, ObjectId)
"""pymongo's ObjectId and mongoeco's (set on first use of the engine: :func:`install_object_id_types`)."""


def wire_scalars() -> frozenset[type]:
    """The value types pymongo's ``bson`` encodes as the wire sends them, as they are (:func:`sent_as_is`'s
    scalars: str, int, float, bool, None, datetime, Int64 and ObjectIds of both kinds)."""
    return _WIRE_SCALARS | frozenset(_object_id_types)


def install_object_id_types() -> None:
    """Let :func:`id_contains_numeric_value` answer ObjectIds of both kinds without mongoeco's walk."""
    global _object_id_types
    _object_id_types = (ObjectId, engine_object_id())


def to_pymongo(value: Any) -> Any:
    """An engine value (mongoeco's own BSON scalar types) as pymongo's ``bson`` types."""
    from mongoeco.wire.bson_bridge import encode_wire_value

    return encode_wire_value(value)


_WIRE_SCALARS = frozenset({str, int, float, bool, type(None), datetime.datetime, Int64})
"""Value types :func:`to_pymongo` gives back as they are (ObjectIds of both kinds are checked apart)."""


def sent_as_is(value: Any) -> bool:
    """Whether pymongo's ``bson`` encodes ``value`` to the bytes the wire sends for it, so a caller may
    skip :func:`to_pymongo`'s copy (a walk of a dozen type checks and a new object per value): plain
    dicts with string keys and lists of str, int, float, bool, None, datetimes, Int64 and ObjectIds
    of either kind. mongoeco's own scalar types (its Binary, Decimal128, Regex...) and SON: False.

    >>> sent_as_is({"tags": ["a", 1], "at": datetime.datetime(2024, 1, 2), "_id": ObjectId()})
    True
    >>> sent_as_is({"raw": b"x"}), sent_as_is([(1, 2)])
    (False, False)
    """
    kind = type(value)
    if kind in _WIRE_SCALARS or kind in _object_id_types:
        return True
    if kind is dict:
        return all(type(key) is str and sent_as_is(item) for key, item in value.items())
    if kind is list:
        return all(map(sent_as_is, value))
    return False


def bad_value(message: str, code: int = 2) -> Exception:
    """mongoeco's OperationFailure with MongoDB's code (2, BadValue, by default): the wire server replies with it."""
    from mongoeco.errors import OperationFailure

    return OperationFailure(message, code=code, details={"codeName": "BadValue"} if code == 2 else None)


_PLAIN_SCALARS = frozenset({str, int, float, bool, type(None), bytes})
"""Types no engine value hides behind: checked first, since most values of a document are one of them."""


@functools.cache
def _engine_scalar_types() -> tuple[type, ...]:
    from mongoeco._types._bson_values import Binary, DBRef, Decimal128, Regex, Timestamp

    return (Regex, Timestamp, DBRef, Decimal128, Binary)


def with_pymongo_scalars(document: Any) -> Any:
    """A decoded document with mongoeco's own Regex, Timestamp, DBRef, Decimal128 and Binary values (which
    its find replies with) as pymongo's ``bson`` types, which the planner model orders and matches; the
    same document when it holds none (the common case: no copy). One pass over the values.

    >>> plain = {"a": [1, {"b": "x"}]}
    >>> with_pymongo_scalars(plain) is plain
    True
    """
    return _pymongo_scalars(document, _engine_scalar_types())


def _pymongo_scalars(value: Any, engine_types: tuple[type, ...]) -> Any:
    if type(value) in _PLAIN_SCALARS:
        return value
    if isinstance(value, dict):
        changed: dict[Any, Any] | None = None
        for key, item in value.items():
            new = _pymongo_scalars(item, engine_types)
            if new is not item:
                changed = {} if changed is None else changed
                changed[key] = new
        if changed is None:
            return value
        return type(value)((key, changed.get(key, item)) for key, item in value.items())
    if isinstance(value, list):
        converted = [_pymongo_scalars(item, engine_types) for item in value]
        return converted if any(new is not old for new, old in zip(converted, value, strict=True)) else value
    return to_pymongo(value) if isinstance(value, engine_types) else value


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


_ALWAYS_INSTALLED = False


def without_always_operators(filter_spec: Any) -> Any:
    """A filter with MongoDB's ``{$alwaysTrue: 1}`` (dropped) and ``{$alwaysFalse: 1}`` (``{$nor: [{}]}``)
    spelled in operators mongoeco knows, inside ``$and``/``$or``/``$nor`` too; any other value is
    refused as MongoDB refuses it (FailedToParse, code 9). Other values come back unchanged."""
    if isinstance(filter_spec, list):
        return [without_always_operators(clause) for clause in filter_spec]
    if not isinstance(filter_spec, dict) or not any(
        k in ("$alwaysTrue", "$alwaysFalse", "$and", "$or", "$nor") for k in filter_spec
    ):
        return filter_spec
    from mongoeco.errors import OperationFailure

    out: dict[str, Any] = {}
    never = False
    for key, value in filter_spec.items():
        if key in ("$alwaysTrue", "$alwaysFalse"):
            if isinstance(value, bool) or value != 1:
                raise OperationFailure(f"{key} must be an integer value of 1", code=9)
            never = never or key == "$alwaysFalse"
        elif key in ("$and", "$or", "$nor"):
            out[key] = without_always_operators(value)
        else:
            out[key] = value
    return {"$and": [out, {"$nor": [{}]}]} if never else out


def install_cheap_change_delivery() -> None:
    """Deliver each committed change to a change stream hub without building the hub's whole state.

    mongoeco 4.11.0's ``EngineSpiAdapter._deliver_committed_change`` reads ``hub.state.next_token``
    per committed change: ``state`` builds a 17-field state document under the hub's lock, once per
    inserted document (7% of an ``insert_many``'s engine time, profiled). Here the hub's next token
    is read under the same lock; the rest (align, gap or publish) is mongoeco's own. Any sink that is
    not mongoeco's ``ChangeStreamHub`` keeps the original. Idempotent.
    """
    from mongoeco.change_streams import ChangeStreamHub
    from mongoeco.engines.adapter import EngineSpiAdapter

    original = EngineSpiAdapter._deliver_committed_change
    if getattr(original, "workbook_cheap", False):
        return

    def deliver(sink: Any, change: Any) -> None:
        if type(sink) is not ChangeStreamHub:
            original(sink, change)
            return
        with sink._condition:
            next_token = sink._next_token
        if change.sequence < next_token:
            return
        sink.align_commit_sequence(change.sequence)
        if change.is_gap:
            sink.mark_gap()
        elif change.payload is not None:
            sink.publish(**change.payload)

    deliver.workbook_cheap = True  # type: ignore[attr-defined]
    EngineSpiAdapter._deliver_committed_change = staticmethod(deliver)  # type: ignore[method-assign]


def install_always_operators() -> None:
    """Let filters use ``$alwaysTrue`` and ``$alwaysFalse`` (always_true_false.js): mongoeco 4.11.0
    refuses them as unsupported top-level operators. Rewritten before mongoeco compiles a filter.
    Idempotent; see patches/always-operators.md."""
    global _ALWAYS_INSTALLED
    if _ALWAYS_INSTALLED:
        return
    from mongoeco.core import query_plan

    strict = query_plan._compile_filter_strict

    def compile_strict(filter_spec: Any, **options: Any) -> Any:
        return strict(without_always_operators(filter_spec), **options)

    query_plan._compile_filter_strict = compile_strict
    _ALWAYS_INSTALLED = True


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
    """Yield ``(id, chunk)`` for each chunk of a stored collection, in natural order (:func:`chunk_values` gives
    its stored values).

    mongoeco's collection is persistent: a write replaces only the chunk (of at most 128 documents)
    it touches, so a chunk that is the same object in two versions holds the same documents.
    """
    from mongoeco.engines._memory_collection import _NO_CHUNK

    chunks, chunk_id = storage._chunks, storage._head_chunk
    while chunk_id != _NO_CHUNK:
        chunk = chunks[chunk_id]
        yield chunk_id, chunk
        chunk_id = chunk.following


def same_chunk_chain(storage: Any, ids: Sequence[int], chunks: Sequence[Any]) -> list[Any] | None:
    """The chunks of ``storage`` under ``ids``, in that order, when ``ids`` is still its whole chain (its first and
    last chunk, and every chunk replaced since ``chunks`` linked to the same neighbours); None when the chain changed.

    One lookup a chunk and no walk: a write that changed no chain (an update, a delete that left its chunk
    holding a document, an append to a tail with room) is found without following every chunk's link."""
    from mongoeco.engines._memory_collection import _NO_CHUNK

    head = ids[0] if ids else _NO_CHUNK
    tail = ids[-1] if ids else _NO_CHUNK
    if storage._head_chunk != head or storage._tail_chunk != tail:
        return None
    get = storage._chunks.get
    now = [get(chunk_id) for chunk_id in ids]
    for place in itertools.compress(range(len(now)), map(operator.is_not, now, chunks)):
        chunk, before = now[place], chunks[place]
        if chunk is None or chunk.previous != before.previous or chunk.following != before.following:
            return None
    return now


def chunk_values(chunk: Any) -> list[Any]:
    """The stored values of one chunk of :func:`storage_chunks`, in order (its deleted slots left out)."""
    from mongoeco.engines._memory_collection import _DELETED

    return [item[1] for item in chunk.items if item is not _DELETED]


def bound_delete_operation(collection: Any, filter_spec: Any, comment: Any, session: Any) -> Any:
    """A delete-many operation over ``filter_spec`` bound to its operation context, as the API's ``delete_many``."""
    from mongoeco.api._async._collection_modify import _bind_execution_context
    from mongoeco.api.operations import compile_update_operation

    operation = compile_update_operation(
        collection._normalize_filter(filter_spec),
        comment=comment,
        dialect=collection._mongodb_dialect,
        planning_mode=collection._planning_mode,
    )
    return _bind_execution_context(operation, collection, session=session, change_operation_type="delete")


Follower = Callable[[Any, Any, Any, Any, Any, Any], None]
"""``follower(state, before, after, key, old, new)``: one stored document's change, for state a collection carries."""

_FOLLOWERS: dict[str, Follower] = {}


def collection_followers() -> list[str]:
    """The attributes whose followers :func:`follow_collection_changes` calls (empty before the first)."""
    return list(_FOLLOWERS)


def follow_collection_changes(attribute: str, follower: Follower) -> None:
    """Call ``follower`` after every set and delete of a stored collection (mongoeco's ``MemoryCollection``)
    that carries state under ``attribute``, with that state, the collection's roots (``_values``) before
    and after, the storage key, its old value (None if new) and its new one (None for a delete).

    The workbench's per-collection indexes (:mod:`workbook.offline_ids`, :mod:`workbook.offline_unique`)
    keep themselves current this way; a collection carrying none pays one dict check per write.
    """
    if not _FOLLOWERS:
        collection_class: Any = memory_collection_class()
        original_set, original_delete = collection_class.__setitem__, collection_class.__delitem__
        attributes = _FOLLOWERS.keys()

        def notify(held: dict[str, Any], before: Any, after: Any, key: Any, old: Any, value: Any) -> None:
            for name, follow in list(_FOLLOWERS.items()):
                state = held.get(name)
                if state is not None:
                    follow(state, before, after, key, old, value)

        def __setitem__(self: Any, key: Any, value: Any) -> None:
            held, before = self.__dict__, self._values
            replaced = key in before
            if replaced:  # in place: its one chunk replaced (a new key is queued; the batch journals itself)
                chunks, location = self._chunks, self._locations.get(key)
            if held.keys().isdisjoint(attributes):  # no state carried: the write alone
                original_set(self, key, value)
            else:
                old = before.get(key)
                original_set(self, key, value)
                notify(held, before, self._values, key, old, value)
            if replaced and location is not None:
                journal(held, chunks, self._chunks, location[0], True)

        def __delitem__(self: Any, key: Any) -> None:
            held, chunks, location = self.__dict__, self._chunks, self._locations.get(key)
            if held.keys().isdisjoint(attributes):
                original_delete(self, key)
            else:
                before = self._values
                old = before.get(key)
                original_delete(self, key)
                notify(held, before, self._values, key, old, None)
            if location is not None:  # its chunk replaced, or gone when it held nothing else (the chain changed)
                after = self._chunks
                journal(held, chunks, after, location[0], location[0] in after)

        collection_class.__setitem__ = __setitem__
        collection_class.__delitem__ = __delitem__
    _FOLLOWERS[attribute] = follower


JOURNAL_ATTRIBUTE = "_workbench_journal"
"""Where a stored collection keeps its journal of writes (:func:`chunks_replaced_since`)."""
_JOURNAL_KEPT = 256
_JOURNAL_LOCK = threading.Lock()


def journal(held: dict[str, Any], before: Any, after: Any, chunk_id: int, same_chain: bool) -> None:
    """Record in the journal of the stored collection whose ``__dict__`` is ``held`` that its chunk map ``after``
    is ``before`` with the chunk ``chunk_id`` replaced (``same_chain``), or with its chain of chunks changed. The
    journal is the collection's own: it keeps the last :data:`_JOURNAL_KEPT` writes' maps alive with it, and goes
    with it when the collection is dropped. Its set and delete record themselves; the batched appends
    (:mod:`workbook.offline_appends`) record each flush."""
    if after is before:
        return
    with _JOURNAL_LOCK:
        entries = held.get(JOURNAL_ATTRIBUTE)
        if entries is None:
            entries = held[JOURNAL_ATTRIBUTE] = collections.OrderedDict()
        entries[id(after)] = (after, before, chunk_id if same_chain else None)
        if len(entries) > _JOURNAL_KEPT:
            entries.popitem(last=False)


def chunks_replaced_since(earlier: Any, storage: Any, now: Any) -> set[int] | None:
    """The ids of the chunks that writes to ``storage`` replaced between its chunk maps ``earlier`` (``_chunks`` of
    a version read before) and ``now``, every other chunk being the same object in the same chain; None when that
    is not known: a write changed the chain (a new or emptied chunk), or the two are not linked by the writes its
    journal holds (a rollback past them, a collection built whole, more than :data:`_JOURNAL_KEPT` writes).

    A read after a write then looks up only the chunks written, not every chunk of the collection (782 at
    100,000 documents), as :func:`same_chunk_chain` does."""
    replaced = set[int]()
    with _JOURNAL_LOCK:
        entries = storage.__dict__.get(JOURNAL_ATTRIBUTE)
        for _ in range(_JOURNAL_KEPT + 1):
            if now is earlier:
                return replaced
            entry = None if entries is None else entries.get(id(now))
            if entry is None or entry[0] is not now or entry[2] is None:
                return None
            replaced.add(entry[2])
            now = entry[1]
    return None


def wire_message_flags(payload: bytes) -> int:
    """The OP_MSG flag bits of ``payload`` (moreToCome: no reply)."""
    from mongoeco.wire._framing import op_msg_flags

    return int(op_msg_flags(payload))


def memory_collection_class() -> type:
    """mongoeco's persistent stored collection (``MemoryCollection``), whose set and delete offline_ids wraps."""
    collection_class: type = memory_storage_internals().MemoryCollection
    return collection_class


_MERGE_WITHOUT_ID_SCAN: contextvars.ContextVar[Any] = contextvars.ContextVar("workbench_merge_without_id_scan")
_MERGE_SCAN_SKIP: list[Any] = []


@contextlib.contextmanager
def merge_without_id_scan(collection: Any) -> Any:
    """Within the block (this task only), mongoeco's ``merge_document`` finds no other document of
    ``collection`` (a stored ``MemoryCollection``; None: no change) holding the merged ``_id``: the
    caller knows none does. Needs :func:`skip_merge_id_scans` installed."""
    token = _MERGE_WITHOUT_ID_SCAN.set(collection)
    try:
        yield
    finally:
        _MERGE_WITHOUT_ID_SCAN.reset(token)


def skip_merge_id_scans() -> bool:
    """Let :func:`merge_without_id_scan` skip ``MemoryEngine.merge_document``'s scan for an equal ``_id``
    (idempotent); False if that method no longer looks as it did (mongoeco 4.11.0), and nothing changes.

    When the merged document's ``_id`` is not stored under its own storage key, mongoeco 4.11.0 walks
    every stored document (``for ... in coll.items()``), decoding each, to find one whose ``_id`` equals
    it by value: one pass per merged document, so a ``$merge`` of n new documents costs O(n^2). The walk
    is the method's only ``items()`` call on the target collection: it is given no items when called
    from that method's own frame, for the collection the caller named.
    """
    if _MERGE_SCAN_SKIP:
        return True
    from mongoeco.engines.memory import MemoryEngine

    code = inspect.unwrap(MemoryEngine.merge_document).__code__
    if not {"items", "document_matches_root_id_lookup"} <= set(code.co_names):
        return False
    collection_class: Any = memory_collection_class()
    original_items = collection_class.items

    def items(self: Any) -> Any:
        if _MERGE_WITHOUT_ID_SCAN.get(None) is self:
            frame = inspect.currentframe()
            caller = frame.f_back if frame is not None else None
            if caller is not None and caller.f_code is code:
                return ()
        return original_items(self)

    collection_class.items = items
    _MERGE_SCAN_SKIP.append(original_items)
    return True


_NUMERIC_SCANS_SWITCH: list[Any] = []


def skip_numeric_id_scans_when(predicate: Any) -> None:
    """Make the memory engine's numeric ``_id`` scans (``id_contains_numeric_value`` in its module) answer
    False while ``predicate()`` holds: the caller then checks numeric ``_id`` equality itself. Idempotent."""
    if _NUMERIC_SCANS_SWITCH:
        return
    from mongoeco.engines import memory

    original = memory.id_contains_numeric_value

    def id_contains_numeric_value(value: Any) -> bool:
        kind = type(value)
        if kind is str or kind is _object_id_types[0] or kind is _object_id_types[1]:
            return False  # never numeric: answered without mongoeco's walk
        return False if predicate() else bool(original(value))

    module: Any = memory
    module.id_contains_numeric_value = id_contains_numeric_value
    _NUMERIC_SCANS_SWITCH.append(original)


def aggregation_cursor_class() -> type[Any]:
    """mongoeco's aggregation cursor (its foreign-collection loader, kept per version: engine_aggregation)."""
    from mongoeco.api._async.aggregation_cursor import AsyncAggregationCursor

    return AsyncAggregationCursor


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


def wire_decoders() -> tuple[Any, Any]:
    """mongoeco's wire BSON bridge and protocol modules (both hold ``decode_wire_value``)."""
    from mongoeco.wire import bson_bridge, protocol

    return bson_bridge, protocol


def wire_encoders() -> tuple[Any, ...]:
    """mongoeco's wire BSON bridge, protocol and raw batch cursor modules (each holds ``encode_wire_value``)."""
    from mongoeco.api._async import raw_batch_cursor
    from mongoeco.wire import bson_bridge, protocol

    return bson_bridge, protocol, raw_batch_cursor


def internal_bson() -> tuple[type, type, Any]:
    """``(document type, array type, wrap)`` of mongoeco's command boundary (``DocumentCodec.to_internal``)."""
    from mongoeco.core import codec

    return codec._InternalBsonDocument, codec._InternalBsonArray, codec._own_internal_bson


def uses_codec(engine: Any, codec: Any) -> bool:
    """Whether ``engine`` stores documents with ``codec`` (else the bulk loader encodes through the engine)."""
    return getattr(engine, "_codec", None) is codec


def stores_with_document_codec(engine: Any) -> bool:
    """Whether ``engine`` stores documents with mongoeco's own codec (whose round trip
    :func:`decodes_to_itself` knows)."""
    return uses_codec(engine, document_codec())


def payload_encoder(engine: Any) -> Any:
    """A function from a document the engine has accepted before to its stored payload: the engine's
    codec (one walk once :mod:`workbook.offline_codec` is installed), else the engine's own path."""
    if stores_with_document_codec(engine):
        return document_codec().encode
    return lambda document: stored_payload(engine, document)


_SELF_DECODING_SCALARS = frozenset({str, float, bool, type(None)})
"""The value types mongoeco's codec gives back as they are, whatever their value."""


def decodes_to_itself(value: Any) -> bool:
    """Whether mongoeco's codec gives ``value`` back as itself: encoded, then decoded with its wrappers
    kept and made public, an equal document of the same types (plain dicts and lists, str, float, bool,
    None, int within int64, naive datetimes in whole milliseconds), so the engine can read ``value``
    where it would read the decoded copy. An ObjectId, Int64, Decimal128, bytes, an aware or
    sub-millisecond date, a key that is not a string or the codec's marker key: False.

    >>> decodes_to_itself({"_id": 1, "tags": ["a", {"b": 2.5}], "at": datetime.datetime(2024, 1, 2)})
    True
    >>> decodes_to_itself({"_id": ObjectId()}), decodes_to_itself({"t": datetime.datetime(2024, 1, 2, 0, 0, 0, 5)})
    (False, False)
    """
    kind = type(value)
    if kind in _SELF_DECODING_SCALARS:
        return True
    if kind is dict:
        if CODEC_MARKER in value:
            return False
        for key, item in value.items():
            if type(key) is not str or (type(item) not in _SELF_DECODING_SCALARS and not decodes_to_itself(item)):
                return False
        return True
    if kind is list:
        return all(type(item) in _SELF_DECODING_SCALARS or decodes_to_itself(item) for item in value)
    if kind is int:
        return INT64[0] <= value <= INT64[1]
    if kind is datetime.datetime:
        return value.tzinfo is None and value.microsecond % 1000 == 0
    return False


_LAZY_LOCK = threading.Lock()


@functools.cache
def lazy_stored_class() -> Any:
    """mongoeco's ``_StoredDocument`` whose payload is encoded from the document on first read, and whose
    decoded forms are the document itself when it decodes to itself.

    A snapshot restore has every document already (decoded from the file's BSON in C); encoding each
    one into the engine's stored form was 40% of a restore and held a second copy of the data. The
    workbench's own reads take the documents (:func:`workbook.engine_reads.public_records`), so a
    payload is made only when the engine asks for it, by the same function the restore ran before
    (:func:`payload_encoder`), once per document, under a lock.

    The engine reads a document through its two decoded caches (``decoded_wrapped``, then
    ``decoded_public``), each a decode of the payload: two more copies of every document it ever
    scanned, and an encode and two decodes on the first scan after a restore. Built with
    ``shared=True`` (the engine stores with mongoeco's own codec), the first read of either cache
    checks once that the document decodes to itself (:func:`decodes_to_itself`) and then gives the
    document itself for both, so a scanned document is held once and no payload is made for a read.
    The engine and the workbench only read these (mongoeco copies a document before it changes it).
    """
    from mongoeco.engines.memory import _StoredDocument

    slot = _StoredDocument.__dict__["payload"]
    wrapped_slot = _StoredDocument.__dict__["decoded_wrapped"]
    public_slot = _StoredDocument.__dict__["decoded_public"]
    unchecked, refused, sharing = 0, 1, 2

    def cache_property(cache: Any) -> property:
        """One decoded cache read through :meth:`LazyStoredDocument._decoded`, written to its slot."""
        return property(lambda self: self._decoded(cache), lambda self, value: cache.__set__(self, value))

    class LazyStoredDocument(_StoredDocument):
        __slots__ = ("_encode", "_share", "_source")

        def __init__(self, source: Any, encode: Any, shared: bool = False) -> None:
            self._source, self._encode = source, encode
            self._share = unchecked if shared else refused
            wrapped_slot.__set__(self, None)
            public_slot.__set__(self, None)

        def _decoded(self, cache: Any) -> Any:
            value = cache.__get__(self, _StoredDocument)
            if value is None and self._share is unchecked:
                source = self._source
                if decodes_to_itself(source):
                    wrapped_slot.__set__(self, source)
                    public_slot.__set__(self, source)
                    value = source
                self._share = refused if value is None else sharing
                if value is None and self._encode is None:
                    self._source = None  # the payload is made: the engine decodes it, the document stays the reads'
            return value

        @classmethod
        def made(cls, source: Any, payload: Any) -> Any:
            """A stored document whose payload (``source`` encoded) is made already, sharing ``source``."""
            stored = cls(source, None, shared=True)
            slot.__set__(stored, payload)
            return stored

        decoded_wrapped = cache_property(wrapped_slot)
        decoded_public = cache_property(public_slot)

        @property
        def payload(self) -> Any:
            try:
                return slot.__get__(self, _StoredDocument)
            except AttributeError:
                with _LAZY_LOCK:
                    try:
                        return slot.__get__(self, _StoredDocument)
                    except AttributeError:
                        value = self._encode(self._source)
                        slot.__set__(self, value)
                        self._encode = None
                        if self._share is refused:
                            self._source = None  # the document stays the reads' alone
                        return value

        @payload.setter
        def payload(self, value: Any) -> None:
            slot.__set__(self, value)

        def encoded(self) -> bool:
            """Whether the payload has been made."""
            try:
                slot.__get__(self, _StoredDocument)
            except AttributeError:
                return False
            return True

        def shares(self) -> bool:
            """Whether the engine's decoded forms are the document itself (known after its first read)."""
            return self._share == sharing

    return LazyStoredDocument


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


def in_index(document: Any, record: Any) -> bool:
    """Whether the index of ``record`` holds ``document`` (its partial filter and sparseness), as the engine decides."""
    from mongoeco.engines.virtual_indexes import document_in_virtual_index

    return bool(document_in_virtual_index(document, record))


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


def internal_datetime() -> Any:
    """A function from a datetime to the engine's internal form (naive UTC, milliseconds, fold 0: its codec
    goes through the ISO text, which has no fold), as its codec gives."""
    from mongoeco.core.bson_scalars import normalize_utc_bson_datetime

    def internal(value: Any) -> Any:
        value = normalize_utc_bson_datetime(value)
        return value.replace(fold=0) if value.fold else value

    return internal


def projection_executor(projection: Any, selector: Any, *, public: bool = True) -> Any:
    """A function applying ``projection`` (any form: ``$slice``, ``$elemMatch``, positional with ``selector``,
    the find's filter) to a decoded stored document, as the engine's find does (in the public form a find
    replies with, or, ``public=False``, in the internal form an aggregation stage reads)."""
    from mongoeco.core.projections import _ProjectionExecutor

    install_projection_fixes()
    project = _ProjectionExecutor(projection, selector_filter=selector)
    if not public:
        return project
    to_public = document_codec().to_public
    id_paths = _id_subpaths_only(projection)
    id_exclusions = _id_subpath_exclusions(projection)
    if not id_paths and not id_exclusions:
        return lambda document: to_public(project(document))

    def project_ids(document: Any) -> Any:
        projected = to_public(project(document))
        if not isinstance(projected, dict):
            return projected
        if id_paths and not isinstance(document.get("_id"), dict):
            projected.pop("_id", None)  # {"_id.a": 1} reaches nothing in a scalar _id (id_partial_projection.js)
        if id_exclusions and isinstance(projected.get("_id"), dict):
            projected["_id"] = _without_paths(projected["_id"], id_exclusions)  # {"_id.a": 0}: mongoeco kept it
        return projected

    return project_ids


def _id_subpath_exclusions(projection: Any) -> list[list[str]]:
    """The sub-paths of _id an exclusion projection removes (``{"_id.a": 0}``), split at the dots."""
    if not isinstance(projection, dict):
        return []
    return [str(k).split(".")[1:] for k, v in projection.items() if str(k).startswith("_id.") and v in (0, False)]


def _without_paths(document: dict[str, Any], paths: list[list[str]]) -> dict[str, Any]:
    """A copy of a document without the (dotted, split) paths."""
    out = dict(document)
    for parts in paths:
        node: Any = out
        for part in parts[:-1]:
            child = node.get(part) if isinstance(node, dict) else None
            if not isinstance(child, dict):
                node = None
                break
            node[part] = dict(child)
            node = node[part]
        if isinstance(node, dict):
            node.pop(parts[-1], None)
    return out


def _id_subpaths_only(projection: Any) -> bool:
    """Whether an inclusion projection names sub-fields of _id but not _id itself."""
    if not isinstance(projection, dict) or "_id" in projection:
        return False
    subpaths = [k for k, v in projection.items() if str(k).startswith("_id.")]
    return bool(subpaths) and all(projection[k] in (1, True) for k in subpaths)


_PROJECTION_FIXES_INSTALLED = False


def install_projection_fixes() -> None:
    """``{$slice: [skip, limit]}`` with a negative skip counts the skip from the end, as MongoDB does
    (slice1.js: ``[-5, 10]`` on 11 elements is the last 5); mongoeco 4.11.0 sliced Python's way and
    returned nothing. Idempotent; see patches/always-operators.md (the projection section)."""
    global _PROJECTION_FIXES_INSTALLED
    if _PROJECTION_FIXES_INSTALLED:
        return
    from copy import deepcopy

    from mongoeco.core import projections

    def slice_array(value: list[Any], operand: object) -> list[Any]:
        if isinstance(operand, int):
            return deepcopy(value[:operand] if operand >= 0 else value[operand:])
        skip, limit = (int(n) for n in operand)  # type: ignore[attr-defined]
        start = skip if skip >= 0 else max(len(value) + skip, 0)
        return deepcopy(value[start : start + limit])

    projections._slice_projection_array = slice_array
    included = projections._project_inclusion_value

    def inclusion_value(source: Any, node: Any) -> Any:
        if node.include_value and _SHARED_VALUES.get():
            return True, source
        return included(source, node)  # its own recursion comes back through this module attribute

    projections._project_inclusion_value = inclusion_value
    _PROJECTION_FIXES_INSTALLED = True


_SHARED_VALUES: contextvars.ContextVar[bool] = contextvars.ContextVar("workbench_shared_values", default=False)


def sharing_projection(project: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``project`` (a :func:`projection_executor`) run within :func:`shared_projected_values`, one document at a
    time: for a reply's batches projected as they are sent, long after the find that made the cursor."""

    def run(document: Any) -> Any:
        with shared_projected_values():
            return project(document)

    return run


@contextlib.contextmanager
def shared_projected_values() -> Iterator[None]:
    """Within it, an inclusion projection (:func:`projection_executor`) gives the included values themselves,
    not deep copies: for a reply that is encoded and never changed, the stored documents are read only.

    mongoeco copies every included value (``{parts: 1}`` over 40,000 products: 38% of a find's time);
    the reply of a find without a projection already sends the stored documents uncopied. Exclusions
    and ``$slice`` still copy (they take the document apart).
    """
    token = _SHARED_VALUES.set(True)
    try:
        yield
    finally:
        _SHARED_VALUES.reset(token)

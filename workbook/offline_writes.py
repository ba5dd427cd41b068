"""Write paths of the offline default that cost the same whatever the collection's size.

mongoeco 4.11.0's memory engine keeps a change log (``_committed_changes``, up to 10,000 entries)
ordered by sequence number, and rebuilds it with a Python filter over every entry on each write
(``_prepare_committed_changes_locked``), on each delivery (``dispatch_committed_changes``) and on
each prune (``_prune_committed_changes_locked``). A ``delete_many({})`` deletes one document at a
time and its changes are acknowledged as it goes, so the log grows to the number of documents
deleted and every delete walks it: O(n^2) up to 10,000 documents (profiled: 3,000 deletes reach a
3,000-entry log; ``_prune_committed_changes_locked`` was the largest own-time entry). The mixin
below finds the cut with a bisection on the sequence numbers and slices: the same lists, O(log n)
Python work per write. See ``patches/change-log-rebuilt-per-write.md``.

It also yields to the engine's event loop before each single-document delete and update, so a
``delete_many`` of 50,000 documents (one engine call per document) lets other clients' commands,
``ping`` included, run between documents instead of waiting for the whole command.

A ``delete`` command that deletes every match (``delete_many``) is answered by :class:`BulkDeletes`
in one engine pass, :data:`BULK_CHUNK` documents per turn of the loop (mongoeco makes one full
engine call per document); the executor's ``insert`` stores :data:`BULK_INSERT_CHUNK` documents per
engine call, with a turn of the loop between pieces.

:data:`WRITE_WORK` counts the change-log entries each write walks in Python, the candidates each
query examines and the most documents written without a turn of the loop: guard tests check they
do not grow with the collection.
"""

from __future__ import annotations

import asyncio
import bisect
from datetime import UTC
from typing import Any

WRITE_WORK: dict[str, int] = {"writes": 0, "change_log_entries_walked": 0, "candidates": 0, "largest_step": 0}
"""Work done per write on the change log (entries touched in Python), for the scaling guard tests."""


def _sequence(change: Any) -> int:
    return int(change.sequence)


def _after(changes: list[Any], sequence: int) -> int:
    """Position of the first change with a sequence above ``sequence`` (the log is in sequence order)."""
    return bisect.bisect_right(changes, sequence, key=_sequence)


def change_log_mixin(committed_change: type) -> type:
    """A mixin for mongoeco's ``MemoryEngine`` whose change-log upkeep is O(log n) per write."""

    class ChangeLogByBisection:
        """The change log's three per-write rebuilds, as bisection and slicing (same results)."""

        _committed_changes: list[Any]
        _change_checkpoints: dict[str, int]
        _change_pruned_through: int
        _commit_sequence: int
        _change_log_max_entries: int
        _meta_lock: Any
        _change_dispatch: Any

        def _prune_committed_changes_locked(self) -> None:
            acknowledged_floor = min(self._change_checkpoints.values(), default=self._commit_sequence)
            capacity_floor = max(0, self._commit_sequence - self._change_log_max_entries)
            target = max(self._change_pruned_through, acknowledged_floor, capacity_floor)
            if target <= self._change_pruned_through:
                return
            self._committed_changes = self._committed_changes[_after(self._committed_changes, target) :]
            self._change_pruned_through = target

        def _prepare_committed_changes_locked(self, payloads: list[Any]) -> tuple[int, list[Any], int]:
            if not payloads:
                return self._commit_sequence, self._committed_changes, self._change_pruned_through
            WRITE_WORK["writes"] += 1
            sequence = self._commit_sequence + len(payloads)
            # A gap (a change nobody watches) followed by another change of the same write is not kept:
            # delivering the next one aligns a hub past it, recording the same gap range (an insert_many
            # into an unwatched collection keeps one entry per piece, not one per document). The change
            # copies its own payload (CommittedChange.__post_init__).
            last = len(payloads)
            new = [
                committed_change(sequence=self._commit_sequence + ordinal, payload=payload)
                for ordinal, payload in enumerate(payloads, start=1)
                if payload is not None or ordinal == last
            ]
            floor = max(
                self._change_pruned_through,
                min(self._change_checkpoints.values(), default=sequence),
                0,
                sequence - self._change_log_max_entries,
            )
            kept = self._committed_changes[_after(self._committed_changes, floor) :]
            return sequence, kept + [change for change in new if change.sequence > floor], floor

        def dispatch_committed_changes(self, consumer_id: str, consumer: Any) -> None:
            from mongoeco.errors import OperationFailure

            with self._change_dispatch.hold(consumer_id):
                with self._meta_lock:
                    if consumer_id not in self._change_checkpoints:
                        raise RuntimeError("change consumer must be registered before writes")
                    checkpoint = self._change_checkpoints[consumer_id]
                    if checkpoint < self._change_pruned_through:
                        raise OperationFailure("change consumer checkpoint is behind retained history")
                    changes = tuple(self._committed_changes[_after(self._committed_changes, checkpoint) :])
                WRITE_WORK["change_log_entries_walked"] += len(changes)
                try:
                    for change in changes:
                        consumer(change if change.is_gap else change.for_delivery())  # a gap holds nothing to copy
                        with self._meta_lock:
                            self._change_checkpoints[consumer_id] = max(
                                self._change_checkpoints[consumer_id], change.sequence
                            )
                finally:  # once per dispatch, not per change: the same cut (the floor only rises)
                    with self._meta_lock:
                        self._prune_committed_changes_locked()

    return ChangeLogByBisection


EXACT_ID_KINDS = ("str", "objectid")
"""Storage-key kinds of ``_id`` whose storage key is the only way to be equal (numbers: 1 == 1.0, other keys)."""


def exact_id_key(engine: Any, identifier: Any) -> Any | None:
    """The storage key ``identifier`` is stored under, where that key is the only one an equal ``_id`` can have
    (:data:`EXACT_ID_KINDS`); None for any other ``_id`` (a number, a document, a regex, null...)."""
    key = engine._storage_key(identifier)
    return key if isinstance(key, tuple) and key and key[0] in EXACT_ID_KINDS else None


class MissingIdIsEmpty:
    """A query on an ``_id`` that is not stored has no candidates (mongoeco scans the whole collection).

    mongoeco's ``_candidate_items_for_plan_locked`` looks ``{_id: v}`` up by storage key and, on a
    miss, falls back to every document: an upsert that inserts scanned the collection (31 ms at
    1,000 documents, 219 ms at 10,000). For a string or ObjectId ``_id`` without a collation the
    storage key is exact, so a miss means no document can match.
    """

    def _candidate_items_for_plan_locked(self, coll: Any, query_plan: Any, **kw: Any) -> Any:
        identifier = self._direct_id_lookup_from_plan(query_plan)  # type: ignore[attr-defined]
        if identifier is not None and kw.get("collation") is None:
            key = exact_id_key(self, identifier)
            if key is not None and key not in coll:
                return []
        return super()._candidate_items_for_plan_locked(coll, query_plan, **kw)  # type: ignore[misc]


class CountedCandidates:
    """Count the documents each query of a write examines (:data:`WRITE_WORK`), whichever path found them."""

    def _candidate_items_for_plan_locked(self, coll: Any, query_plan: Any, **kw: Any) -> Any:
        items = super()._candidate_items_for_plan_locked(coll, query_plan, **kw)  # type: ignore[misc]
        WRITE_WORK["candidates"] += len(items)
        return items


class YieldingWrites:
    """Single-document deletes and updates give the event loop a turn first (``*_many`` loop over them)."""

    async def delete_with_operation(self, *args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(0)  # other clients' commands run between the documents of a delete_many
        return await super().delete_with_operation(*args, **kwargs)  # type: ignore[misc]

    async def update_with_operation(self, *args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(0)
        return await super().update_with_operation(*args, **kwargs)  # type: ignore[misc]


BULK_CHUNK = 100
"""Documents a bulk delete removes per turn of the engine loop (then other clients' commands run)."""

BULK_INSERT_CHUNK = 200
"""Documents an ``insert`` command stores per turn of the engine loop (the executor's ``_insert_run``)."""

BULK_KEYS = frozenset({"delete", "deletes", "ordered", "comment", "writeConcern", "lsid", "$db", "$clusterTime"})
"""The ``delete`` command fields the bulk path understands; any other field takes mongoeco's own path."""


class UncopiedChangePayloads:
    """Engine mixin: a change payload holds the document key and document as they are, uncopied.

    mongoeco 4.11.0's ``_change_payload`` deep-copies both, and every caller hands the payload
    straight to ``_record_committed_change``, which deep-copies it again when it keeps it (a watched
    collection) and drops it otherwise (no watcher: only a gap is recorded). The first copies were
    an insert's largest deep copies (a dict and its ``_id`` per document), made to be thrown away.
    """

    @staticmethod
    def _change_payload(
        *,
        operation_type: str,
        db_name: str,
        coll_name: str,
        document_key: Any,
        full_document: Any = None,
    ) -> dict[str, Any]:
        return {
            "operation_type": operation_type,
            "db_name": db_name,
            "coll_name": coll_name,
            "document_key": document_key,  # copied by _record_committed_change when kept
            "full_document": full_document,
            "update_description": None,
        }


class BulkDeletes:
    """Engine mixin: delete every document a filter matches in chunks of :data:`BULK_CHUNK`, one pass.

    mongoeco's ``delete_many`` finds the matches, then deletes each with a full engine call (its own
    filter compilation, lock, TTL purge, candidate lookup, rollback and publication scopes, deep
    copies): about 1,500 documents a second, and one such call per document. Here the candidates are
    listed once under the collection lock, then deleted a chunk at a time, each chunk under the lock
    in one rollback and publication scope (its changes recorded in one frame), each document checked
    again against the filter (another client may have changed it between chunks, as between a
    MongoDB delete's yields). Between chunks the loop runs other commands, and the cyclic collector is
    paused inside a chunk (:mod:`workbook.gc_pause`), so no chunk stalls the server for long.
    :data:`WRITE_WORK` ``"largest_step"`` records the most documents deleted without yielding.
    ``delete_many({})`` that no change stream watches empties the collection and its index maps in one
    O(1) step instead (persistent maps: earlier copies keep their documents).
    """

    def _delete_everything_locked(
        self, db_name: str, coll_name: str, operation_context: Any, context: Any, coll: Any
    ) -> int:
        return _delete_everything_locked_impl(self, db_name, coll_name, operation_context, context, coll)

    async def delete_all_matching(self, db_name: str, coll_name: str, operation: Any, *, context: Any = None) -> int:
        from mongoeco.core.filtering import QueryEngine
        from mongoeco.core.query_plan import ensure_query_plan

        from workbook import gc_pause

        engine: Any = self
        operation_context = operation.context
        dialect, variables = operation_context.dialect, operation_context.expressions
        plan = ensure_query_plan(operation.filter_spec, operation.plan, dialect=dialect, variables=variables)

        def views() -> tuple[Any, Any, Any, Any]:
            storage = engine._storage_view(context)
            indexes, index_data = engine._indexes_view(context), engine._index_data_view(context)
            return storage, indexes, index_data, storage.get(db_name, {}).get(coll_name)

        emit = str(getattr(operation_context, "publication", "")) == "emit"  # a change stream is open
        async with engine._get_lock(db_name, coll_name):
            storage, indexes, index_data, coll = views()
            if coll is None:
                return 0
            engine._purge_expired_documents_locked(
                db_name,
                coll_name,
                context=context,
                indexes_view=indexes,
                index_data_view=index_data,
                storage_view=storage,
                now=variables.now.replace(tzinfo=UTC),
            )
            if not emit and not operation.filter_spec:  # {} matches everything: no need to list it
                return self._delete_everything_locked(db_name, coll_name, operation_context, context, coll)
            candidates = [
                key
                for key, _ in engine._candidate_items_for_plan_locked(
                    coll,
                    plan,
                    dialect=dialect,
                    indexes=indexes.get(db_name, {}).get(coll_name, []),
                    index_data=index_data.get(db_name, {}).get(coll_name, {}),
                    collation=None,
                )
            ]
        deleted = 0
        for start in range(0, len(candidates), BULK_CHUNK):
            await asyncio.sleep(0)  # other clients' commands, ping included, run between chunks
            chunk = candidates[start : start + BULK_CHUNK]
            WRITE_WORK["largest_step"] = max(WRITE_WORK["largest_step"], len(chunk))
            async with engine._get_lock(db_name, coll_name):
                storage, indexes, index_data, coll = views()
                if coll is None:
                    break
                with (
                    gc_pause.paused(),
                    engine._document_state_rollback_locked(
                        db_name,
                        coll_name,
                        storage=storage,
                        indexes=indexes,
                        index_data=index_data,
                        search_indexes=engine._search_indexes_view(context),
                        collections=engine._collections_view(context),
                        options=engine._collection_options_view(context),
                    ),
                ):
                    engine._invalidate_search_runtime_cache(db_name, coll_name)
                    in_chunk = 0
                    for key in chunk:
                        data = coll.get(key)
                        if data is None:
                            continue
                        document = engine._borrow_storage_document(data)
                        if not QueryEngine.match_plan(
                            document, plan, dialect=dialect, collation=None, variables=variables
                        ):
                            continue
                        engine._update_indexes_locked(
                            db_name,
                            coll_name,
                            key,
                            document,
                            action="delete",
                            index_data_view=index_data,
                            indexes_view=indexes,
                        )
                        engine._delete_storage_document_locked(coll, key)
                        deleted, in_chunk = deleted + 1, in_chunk + 1
                        if not emit:
                            continue
                        change = operation_context.derive(change_event_index=deleted - 1)
                        if "_id" not in document:
                            change = change.for_unpublishable_change()
                        engine._record_committed_change(
                            change,
                            engine._change_payload(
                                operation_type="delete",
                                db_name=db_name,
                                coll_name=coll_name,
                                document_key={"_id": document["_id"]} if "_id" in document else {},
                            ),
                        )
                    if in_chunk and not emit:  # nobody watches: the chunk is one gap in the change log
                        engine._record_committed_change(operation_context, _gap_payload(db_name, coll_name))
        return deleted


def _delete_everything_locked_impl(
    engine: Any, db_name: str, coll_name: str, operation_context: Any, context: Any, coll: Any
) -> int:
    """``delete_many({})`` that nobody watches: the collection and its index maps emptied in one step.

    The stored collection and the index maps are persistent maps: emptying one replaces its roots,
    O(1), and every earlier copy (a transaction's snapshot, the read layer's frozen view) keeps its
    documents. One gap goes to the change log, as for any write nobody watches.
    """
    from workbook import gc_pause

    storage = engine._storage_view(context)
    index_data = engine._index_data_view(context)
    count = len(coll)
    with (
        gc_pause.paused(),
        engine._document_state_rollback_locked(
            db_name,
            coll_name,
            storage=storage,
            indexes=engine._indexes_view(context),
            index_data=index_data,
            search_indexes=engine._search_indexes_view(context),
            collections=engine._collections_view(context),
            options=engine._collection_options_view(context),
        ),
    ):
        engine._invalidate_search_runtime_cache(db_name, coll_name)
        engine._record_committed_change(operation_context, _gap_payload(db_name, coll_name))
        coll.clear()
        for index_map in index_data.get(db_name, {}).get(coll_name, {}).values():
            index_map.clear()
    WRITE_WORK["largest_step"] = max(WRITE_WORK["largest_step"], 1)
    return count


def _gap_payload(db_name: str, coll_name: str) -> dict[str, Any]:
    """A change-log payload for changes nobody watches (recorded as a gap: the payload is dropped)."""
    return {"operation_type": "delete", "db_name": db_name, "coll_name": coll_name, "document_key": {}}


async def bulk_delete(executor: Any, context: Any) -> dict[str, Any] | None:
    """The reply to a ``delete`` command whose every statement deletes all matches (``limit: 0``) with a
    plain filter outside a transaction, deleted by :class:`BulkDeletes`; None for anything else
    (mongoeco's own path answers it)."""
    from workbook import engine_compat

    body = context.command_document
    deletes = body.get("deletes")
    session = context.session
    engine = executor.server.engine if executor.server is not None else None
    if (
        engine is None
        or not isinstance(body.get("delete"), str)
        or set(body) - BULK_KEYS
        or not isinstance(deletes, list)
        or not deletes
        or any(set(d) - {"q", "limit"} or d.get("limit", 0) != 0 or not isinstance(d.get("q"), dict) for d in deletes)
        or (session is not None and session.in_transaction)
        or engine._transactions.open  # a transaction holds documents: per-document deletes wait for it
        or engine._is_profile_namespace(body["delete"])
    ):
        return None
    collection = executor._client.get_database(context.db_name).get_collection(body["delete"])
    deleted = 0
    for statement in deletes:
        operation = engine_compat.bound_delete_operation(collection, statement["q"], body.get("comment"), session)
        runtime = collection._runtime
        runtime._prepare_engine_change_delivery(operation.context)
        deleted += await engine.delete_all_matching(
            context.db_name, body["delete"], operation, context=operation.context.session
        )
        runtime._dispatch_engine_changes(operation.context)
    return {"n": deleted, "ok": 1.0}

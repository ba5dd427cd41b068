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

:data:`WRITE_WORK` counts the change-log entries each write walks in Python: a guard test checks it
does not grow with the collection.
"""

from __future__ import annotations

import asyncio
import bisect
from copy import deepcopy
from typing import Any

WRITE_WORK: dict[str, int] = {"writes": 0, "change_log_entries_walked": 0, "candidates": 0}
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
            new = [
                committed_change(sequence=self._commit_sequence + ordinal, payload=deepcopy(payload))
                for ordinal, payload in enumerate(payloads, start=1)
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
                for change in changes:
                    consumer(change.for_delivery())
                    with self._meta_lock:
                        self._change_checkpoints[consumer_id] = max(
                            self._change_checkpoints[consumer_id], change.sequence
                        )
                        self._prune_committed_changes_locked()

    return ChangeLogByBisection


EXACT_ID_KINDS = ("str", "objectid")
"""Storage-key kinds of ``_id`` whose storage key is the only way to be equal (numbers: 1 == 1.0, other keys)."""


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
            key = self._storage_key(identifier)  # type: ignore[attr-defined]
            if isinstance(key, tuple) and key and key[0] in EXACT_ID_KINDS and key not in coll:
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

"""Numeric ``_id`` checks of the offline default in O(1) per write instead of one scan per write.

MongoDB compares ``_id`` values by value across numeric types (``5 == 5.0 == Int64(5) ==
Decimal128("5")``), while mongoeco 4.11.0 stores each type under its own storage key. To find an
equal numeric ``_id`` it walks the whole collection: ``_insert_documents_impl`` builds the set of
every stored ``_id``'s equality key per call, ``_ensure_unique_indexes`` compares the candidate with
every stored ``_id`` (upserts, replacements), and ``_candidate_items_for_plan_locked`` falls back to
every document when ``{_id: 5}`` is not stored under ``5``'s own key. Profiled (cProfile, 20
``insert_one`` with an integer ``_id`` into 10,000 documents): 200,230 ``bson_equality_key`` calls,
84% of the time; each ``insert_one`` cost 13x more at 10,000 documents than at 1,000.

Here each stored collection (mongoeco's ``MemoryCollection``, a persistent map) carries a count of its
numeric ``_id`` equality keys, :class:`NumericIds`:

- built on first use with one pass (counted in ``WORK_COUNTERS["id_documents_examined"]``);
- kept current by the collection's own ``__setitem__`` / ``__delitem__`` (wrapped by
  :func:`install_tracking`), but only while it is known to be current: it remembers the
  collection's root (``_values``, an immutable map whose identity changes on every change), and a
  change it did not see (a rollback restoring old roots, a snapshot load installing new ones)
  leaves the roots different, so the next use rebuilds it. Nothing can be stale, only rebuilt;
- copied collections (transaction snapshots) start without one and build their own.

:class:`NumericIdsByCount` (a mixin for the engine) then answers the three questions from it: an
insert batch with no numeric duplicate runs with mongoeco's scans switched off (a batch that has
one takes mongoeco's own path, so its error is the engine's own); a single-document check
(``_ensure_unique_indexes``) looks the key up; a query on a numeric ``_id`` that no document holds
has no candidates. See ``patches/numeric-id-inserts.md``.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

from bson import ObjectId

from workbook import engine_compat
from workbook.offline_limits import WORK_COUNTERS

ATTRIBUTE = "_workbench_numeric_ids"
"""The attribute a stored collection keeps its :class:`NumericIds` in."""

_checked: contextvars.ContextVar[bool] = contextvars.ContextVar("workbench_numeric_ids_checked", default=False)


def checked() -> bool:
    """Whether this task's write has its numeric ``_id`` checks done by :class:`NumericIds`."""
    return _checked.get()


@contextmanager
def checks_done() -> Iterator[None]:
    """Within the block, mongoeco's own numeric ``_id`` scans are skipped (this task only)."""
    token = _checked.set(True)
    try:
        yield
    finally:
        _checked.reset(token)


class NumericIds:
    """How many stored documents hold each numeric ``_id`` equality key, for one stored collection."""

    __slots__ = ("counts", "key_of", "root")

    def __init__(self, key_of: Callable[[Any], Any]) -> None:
        self.key_of = key_of  # stored payload -> equality key of its numeric _id, or None
        self.counts: dict[Any, int] = {}
        self.root: Any = None  # the collection's _values when ``counts`` was last known to match

    def rebuild(self, collection: Any) -> None:
        """Count every stored document's numeric ``_id`` (one pass)."""
        counts: dict[Any, int] = {}
        WORK_COUNTERS["id_documents_examined"] += len(collection)
        for data in collection.values():
            key = self.key_of(data)
            if key is not None:
                counts[key] = counts.get(key, 0) + 1
        self.counts, self.root = counts, collection._values

    def add(self, data: Any) -> None:
        key = self.key_of(data)
        if key is not None:
            self.counts[key] = self.counts.get(key, 0) + 1

    def discard(self, data: Any) -> None:
        key = self.key_of(data)
        if key is not None:
            left = self.counts.get(key, 0) - 1
            if left > 0:
                self.counts[key] = left
            else:
                self.counts.pop(key, None)

    def holders(self, key: Any, excluding: Any = None, collection: Any = None) -> int:
        """Stored documents whose numeric ``_id`` has equality ``key``, not counting storage key ``excluding``."""
        count = self.counts.get(key, 0)
        if count and excluding is not None and collection is not None:
            data = collection.get(excluding)
            if data is not None and self.key_of(data) == key:
                count -= 1
        return count


def id_key(identifier: Any) -> Any:
    """The key two numeric ``_id`` values share when MongoDB compares them equal; None if not numeric.

    A plain ``int`` is its own key; any other number is mongoeco's equality key with an integral
    value turned into that ``int`` (so 5, 5.0, Int64(5) and Decimal128("5.00") share the key 5).

    >>> from bson import Int64
    >>> [id_key(v) for v in (5, 5.0, Int64(5), 5.5 * 2, "5", True)]
    [5, 5, 5, 11, None, None]
    """
    if type(identifier) is int:
        return identifier
    if identifier is None or isinstance(identifier, str | bool) or not _is_numeric(identifier):
        return None
    key = _equality_key(identifier)
    if type(key) is tuple and len(key) == 2 and key[0] == "number" and isinstance(key[1], Decimal):
        number = key[1]
        if number.is_finite() and number == number.to_integral_value():
            return int(number)
    return key


def _is_numeric(identifier: Any) -> bool:
    return type(identifier) is int or engine_compat.id_contains_numeric_value(identifier)


def _equality_key(identifier: Any) -> Any:
    return engine_compat.bson_equality_key(identifier)


def only_id_index(engine: Any, kw: Mapping[str, Any], db_name: str, coll_name: str) -> bool:
    """Whether the collection, as the write ``kw`` sees it, has no index record: only the implicit ``_id`` index
    (mongoeco lists no record for it)."""
    view = kw.get("indexes_view")
    return not (engine._indexes if view is None else view).get(db_name, {}).get(coll_name)


def refuse_equal_numeric_id(engine: Any, db_name: str, coll_name: str, candidate: Any, kw: Mapping[str, Any]) -> bool:
    """Raise the engine's duplicate-key error if a stored document (other than the one the write replaces) holds an
    ``_id`` equal to ``candidate``'s numeric one; whether the count answered (False: no count for a collection that
    does not exist yet). For a write whose numeric ``_id`` checks are :func:`checked`."""
    storage = kw.get("storage_view") or engine._storage
    collection = storage.get(db_name, {}).get(coll_name, {})
    ids = numeric_ids(engine, collection)
    identifier = candidate.get("_id")
    if ids is not None and ids.holders(id_key(identifier), kw.get("exclude_storage_key"), collection):
        raise engine._unique_key_error(f"Duplicate key: _id={identifier}", f"{db_name}.{coll_name}", candidate)
    return ids is not None


def numeric_ids(engine: Any, collection: Any) -> NumericIds | None:
    """``collection``'s current :class:`NumericIds` (built or rebuilt if needed); None for a plain dict."""
    if not hasattr(collection, "_values"):  # a collection that does not exist is an empty dict
        return None
    ids: NumericIds | None = collection.__dict__.get(ATTRIBUTE)
    if ids is None:
        borrow = engine._borrow_storage_document

        def key_of(data: Any) -> Any:
            # The stored form's own _id first (an int, a str or a tagged ObjectId is read as it is
            # stored): decoding every inserted document only for its _id was a tenth of an insert.
            # A document kept as sent or restored (engine_compat.lazy_stored_class) is read before its payload,
            # which reading would encode.
            source = getattr(data, "_source", None)
            payload = source if type(source) is dict else getattr(data, "payload", data)
            stored: Any = payload.get("_id") if type(payload) is dict else None
            kind = type(stored)
            if kind is int:
                return stored
            if kind is str or isinstance(stored, ObjectId) or (kind is dict and _tag(stored) == "objectid"):
                return None
            document = borrow(data)
            return id_key(document.get("_id")) if isinstance(document, dict) else None

        ids = NumericIds(key_of)
        collection.__dict__[ATTRIBUTE] = ids
    if ids.root is not collection._values:
        ids.rebuild(collection)
    return ids


def _tag(stored: dict[str, Any]) -> Any:
    """The type name of a tagged value in the codec's stored form (``"objectid"``...), else None."""
    tagged = stored.get(engine_compat.CODEC_MARKER)
    return tagged.get("type") if len(stored) == 1 and type(tagged) is dict else None


def _follow(ids: NumericIds, before: Any, after: Any, key: Any, old: Any, new: Any) -> None:
    """Apply one stored document's change to ``ids`` if it was current before it (then it stays current)."""
    if ids.root is before:
        if old is not None:
            ids.discard(old)
        if new is not None:
            ids.add(new)
        ids.root = after


def install_tracking() -> None:
    """Keep each collection's :class:`NumericIds` current through its own set and delete (idempotent)."""
    engine_compat.follow_collection_changes(ATTRIBUTE, _follow)
    engine_compat.skip_numeric_id_scans_when(checked)
    engine_compat.skip_merge_id_scans()


_MISSING = object()


class NumericIdsByCount:
    """Engine mixin: numeric ``_id`` duplicates and lookups answered from :class:`NumericIds`."""

    def _numeric_ids_for(self, db_name: str, coll_name: str, context: Any) -> NumericIds | None:
        storage = self._storage_view(context)  # type: ignore[attr-defined]
        return numeric_ids(self, storage.get(db_name, {}).get(coll_name, {}))

    async def insert_documents(self, db_name: str, coll_name: str, documents: Any, **kw: Any) -> Any:
        numeric = [d["_id"] for d in documents if "_id" in d and _is_numeric(d["_id"])]
        if not numeric:
            return await super().insert_documents(db_name, coll_name, documents, **kw)  # type: ignore[misc]
        operation_context = kw.get("operation_context")
        context = operation_context.session if operation_context is not None else kw.get("context")
        ids = self._numeric_ids_for(db_name, coll_name, context)
        keys = [id_key(identifier) for identifier in numeric]
        stored = ids.counts if ids is not None else {}
        if len(set(keys)) < len(keys) or any(key in stored for key in keys):
            # A numeric duplicate: mongoeco's own path (one scan) reports it as the engine does.
            WORK_COUNTERS["id_documents_examined"] += len(
                self._storage_view(context).get(db_name, {}).get(coll_name, {})  # type: ignore[attr-defined]
            )
            return await super().insert_documents(db_name, coll_name, documents, **kw)  # type: ignore[misc]
        with checks_done():  # each document is still checked, under the lock, by _ensure_unique_indexes
            return await super().insert_documents(db_name, coll_name, documents, **kw)  # type: ignore[misc]

    async def update_with_operation(self, *args: Any, **kwargs: Any) -> Any:
        with checks_done():  # an upsert or replacement checks its numeric _id in _ensure_unique_indexes
            return await super().update_with_operation(*args, **kwargs)  # type: ignore[misc]

    async def merge_document(self, db_name: str, coll_name: str, document: Any, **kwargs: Any) -> Any:
        target = self._merge_without_holder(db_name, coll_name, document, kwargs)
        with checks_done(), engine_compat.merge_without_id_scan(target):
            # checks_done: a $merge's insert checks its numeric _id in _ensure_unique_indexes
            return await super().merge_document(db_name, coll_name, document, **kwargs)  # type: ignore[misc]

    def _merge_without_holder(self, db_name: str, coll_name: str, document: Any, kwargs: dict[str, Any]) -> Any:
        """The stored collection a merged ``document`` goes into when no document there can hold an ``_id``
        equal to its own under another storage key, so mongoeco's walk looking for one can be skipped;
        else None. Only a numeric value can be equal under another key (MongoDB compares numbers by
        value; every other ``_id`` is stored under the key of its exact value, as mongoeco's own insert
        path assumes), and the count says whether any stored ``_id`` equals a numeric one."""
        identifier = document.get("_id", _MISSING) if isinstance(document, dict) else _MISSING
        if identifier is _MISSING:
            return None
        operation_context = kwargs.get("operation_context")
        context = operation_context.session if operation_context is not None else kwargs.get("context")
        collection = self._storage_view(context).get(db_name, {}).get(coll_name)  # type: ignore[attr-defined]
        if collection is None or not hasattr(collection, "_values"):
            return None
        if _is_numeric(identifier):
            ids = numeric_ids(self, collection)
            if ids is None or ids.holders(id_key(identifier)):
                return None  # a document may hold an equal number: mongoeco's walk finds it
        return collection

    def _ensure_unique_indexes(self, db_name: str, coll_name: str, candidate: Any, **kw: Any) -> None:
        if checked() and kw.get("check_id_storage") and _is_numeric(candidate.get("_id")):
            refuse_equal_numeric_id(self, db_name, coll_name, candidate, kw)
            kw["scan_payload_id"] = False
        super()._ensure_unique_indexes(db_name, coll_name, candidate, **kw)  # type: ignore[misc]

    def _candidate_items_for_plan_locked(self, coll: Any, query_plan: Any, **kw: Any) -> Any:
        identifier = self._direct_id_lookup_from_plan(query_plan)  # type: ignore[attr-defined]
        if (
            identifier is not None
            and kw.get("collation") is None
            and not isinstance(identifier, bool)
            and _is_numeric(identifier)
            and self._storage_key(identifier) not in coll  # type: ignore[attr-defined]
        ):
            ids = numeric_ids(self, coll)
            if ids is None or not ids.holders(id_key(identifier)):
                return []
        return super()._candidate_items_for_plan_locked(coll, query_plan, **kw)  # type: ignore[misc]

"""Unique indexes of the offline default checked by key on every write, not by a scan of the collection.

mongoeco 4.11.0's ``_ensure_unique_indexes`` looks a new document's key up in the index map only
for a single-field unique index without collation. For any other unique index it compares the
document with every stored one: the followers dataset's ``{followerId, followedId}`` and the blog's
``{postId, userId}`` are compound, so one follow written into the 45,000 follows read all 45,000
(``_unique_index_keys`` twice per stored document), and notebook 12's workload spent 21 of its 27
profiled seconds there. A write got slower with every document the collection held.

Here each stored collection (mongoeco's ``MemoryCollection``) carries, for each such index, the
keys its documents hold (:class:`UniqueKeys`: key -> the storage keys holding it, in persistent
maps). It is kept the way :mod:`workbook.offline_ids` keeps its numeric ``_id`` counts:

- built with one pass over the collection on first use;
- kept current by the collection's own ``__setitem__`` / ``__delitem__`` (followed through
  :func:`workbook.engine_compat.follow_collection_changes`) only while the collection's root
  (``_values``, replaced by every change) is the one it last saw; a change it did not see (a
  rollback restoring old roots, a snapshot or bulk load installing new ones) leaves the roots
  different, and the next use rebuilds it. Nothing can be stale, only rebuilt;
- carried by the collection's copies (a transaction's snapshot), which share its persistent maps.

:class:`UniqueKeysByIndex` (an engine mixin) uses it as a filter in front of mongoeco's check: an
index none of whose keys in the new document another document holds is handed to mongoeco marked
non-unique, so its other checks (partial filter, compound multikey shape) still run in order; a
document that does collide takes mongoeco's own scan, so the duplicate-key error is the engine's
own, word for word. Which documents an index holds and which keys it compares are the engine's
own functions, so the filter and the scan cannot disagree. Collated unique indexes keep the scan
(their keys compare under the collation). See ``patches/unique-index-writes.md``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from workbook import engine_compat
from workbook.offline_limits import WORK_COUNTERS

KEYS_ATTRIBUTE = "_workbench_unique_keys"
"""The attribute a stored collection keeps its trackers in: index signature -> :class:`UniqueKeys`."""

Signature = tuple[str, tuple[str, ...], bool, str]


def signature(index: Any) -> Signature | None:
    """What identifies a unique index this module checks (name, fields, sparse, partial filter); None
    for one mongoeco checks by key itself (single field, no collation) or only by a scan (collated)."""
    if not index.get("unique") or index.get("collation") is not None or len(index["fields"]) < 2:
        return None
    return (
        str(index["name"]),
        tuple(index["fields"]),
        bool(index.get("sparse")),
        repr(index.get("partial_filter_expression")),
    )


class UniqueKeys:
    """The keys one unique index holds in one stored collection, and which documents hold each.

    Held compactly, since a unique index's key has one holder (it is a duplicate's to have two): ``holders``
    maps a key to that one storage key, and to a ``HashTrieSet`` only while several hold it; ``by_member``
    maps a storage key to a tuple of its keys. As a set per key and a frozenset per document, the 45,000
    follows' tracker held 31.6 MiB (memray).
    """

    __slots__ = ("by_member", "holders", "keys_of", "root")

    def __init__(self, keys_of: Callable[[Any], tuple[Any, ...]]) -> None:
        from rpds import HashTrieMap

        self.keys_of = keys_of  # stored payload -> the distinct keys the index holds for it (empty if not in it)
        self.holders: Any = HashTrieMap()  # key -> the storage key holding it, or a HashTrieSet of several
        self.by_member: Any = HashTrieMap()  # storage key -> its keys, so a replaced document needs no decode
        self.root: Any = None  # the collection's _values when these maps were last known to match

    def copy(self) -> UniqueKeys:
        """The same keys, shared (persistent maps): the copy and this one change apart from here on."""
        twin = UniqueKeys(self.keys_of)
        twin.holders, twin.by_member, twin.root = self.holders, self.by_member, self.root
        return twin

    def rebuild(self, collection: Any) -> None:
        """Read every stored document's keys (one pass)."""
        from rpds import HashTrieMap, HashTrieSet

        holders: dict[Any, Any] = {}
        members: dict[Any, tuple[Any, ...]] = {}
        WORK_COUNTERS["unique_documents_examined"] += len(collection)
        for member, data in collection.items():
            keys = self.keys_of(data)
            if keys:
                members[member] = keys
                for key in keys:
                    held = holders.get(key, _NONE)
                    if held is _NONE:
                        holders[key] = member
                    elif type(held) is list:
                        held.append(member)
                    else:
                        holders[key] = [held, member]
        self.holders = HashTrieMap(
            {key: HashTrieSet(held) if type(held) is list else held for key, held in holders.items()}
        )
        self.by_member = HashTrieMap(members)
        self.root = collection._values

    def add(self, member: Any, data: Any) -> None:
        from rpds import HashTrieSet

        keys = self.keys_of(data)
        if not keys:
            return
        holders = self.holders
        for key in keys:
            held = holders.get(key, _NONE)
            if held is _NONE:
                holders = holders.insert(key, member)
            elif type(held) is HashTrieSet:
                holders = holders.insert(key, held.insert(member))
            elif held != member:
                holders = holders.insert(key, HashTrieSet((held, member)))
        self.holders, self.by_member = holders, self.by_member.insert(member, keys)

    def discard(self, member: Any) -> None:
        from rpds import HashTrieSet

        keys = self.by_member.get(member)
        if keys is None:
            return
        holders = self.holders
        for key in keys:
            held = holders[key]
            if type(held) is not HashTrieSet:
                if held == member:
                    holders = holders.remove(key)
                continue
            left = held.discard(member)
            holders = holders.insert(key, next(iter(left)) if len(left) == 1 else left)
        self.holders, self.by_member = holders, self.by_member.remove(member)

    def colliders(self, keys: Iterable[Any], excluding: Any) -> set[Any]:
        """The storage keys of the documents other than ``excluding`` that hold one of ``keys``."""
        from rpds import HashTrieSet

        found: set[Any] = set()
        for key in keys:
            held = self.holders.get(key, _NONE)
            if type(held) is HashTrieSet:
                found.update(held)
            elif held is not _NONE:
                found.add(held)
        found.discard(excluding)
        return found


_NONE = object()
"""No holder (a storage key can be None-like, never this)."""


def unique_keys(engine: Any, collection: Any, index: Any, key: Signature) -> UniqueKeys | None:
    """``collection``'s current :class:`UniqueKeys` for ``index`` (built or rebuilt if needed); None for a
    collection that does not exist (a plain dict), which holds nothing to collide with."""
    if not hasattr(collection, "_values"):
        return None
    trackers: dict[Signature, UniqueKeys] | None = collection.__dict__.get(KEYS_ATTRIBUTE)
    if trackers is None:
        trackers = collection.__dict__[KEYS_ATTRIBUTE] = {}
    tracker = trackers.get(key)
    if tracker is None:
        tracker = trackers[key] = UniqueKeys(_keys_function(engine, index))
    if tracker.root is not collection._values:
        tracker.rebuild(collection)
    return tracker


def _keys_function(engine: Any, index: Any) -> Callable[[Any], tuple[Any, ...]]:
    """A function from a stored payload to the keys ``index`` holds for its document (the engine's own).

    For an index on top-level fields with no partial filter and not sparse, a document whose values
    there are plain scalars (or missing) has one key, the tuple of their equality keys (a missing
    field's being None's): built here without mongoeco's path walk (45,000 follows: 2.3 s under
    the profiler through it). Any other document (an array or a subdocument there) and any other
    index take the engine's functions.
    """
    fields = list(index["fields"])
    decode = engine_compat.decoder(engine)
    equality = engine_compat.bson_equality_key
    whole = not index.get("sparse") and index.get("partial_filter_expression") is None
    direct = whole and not any("." in field for field in fields)
    scalars = engine_compat.wire_scalars()
    missing = equality(None)

    def keys_of(data: Any) -> tuple[Any, ...]:
        document = decode(data)
        if direct and type(document) is dict:
            key = []
            for field in fields:
                if field not in document:
                    key.append(missing)
                elif type(document[field]) in scalars:
                    key.append(equality(document[field]))
                else:
                    break
            else:
                return (tuple(key),)
        if not whole and not engine_compat.in_index(document, index):
            return ()
        return tuple(set(engine_compat.unique_index_keys(engine, document, fields)))

    return keys_of


_COPY_INSTALLED: list[bool] = []


def install_key_tracking() -> None:
    """Keep each collection's :class:`UniqueKeys` current through its own set, delete and copy (idempotent)."""
    engine_compat.follow_collection_changes(KEYS_ATTRIBUTE, _follow)
    if _COPY_INSTALLED:
        return
    collection_class: Any = engine_compat.memory_collection_class()
    original_copy = collection_class.copy

    def copy(self: Any) -> Any:
        twin = original_copy(self)
        trackers = self.__dict__.get(KEYS_ATTRIBUTE)
        if trackers:
            twin.__dict__[KEYS_ATTRIBUTE] = {key: tracker.copy() for key, tracker in trackers.items()}
        return twin

    collection_class.copy = copy
    _COPY_INSTALLED.append(True)


def _follow(trackers: dict[Signature, UniqueKeys], before: Any, after: Any, member: Any, old: Any, value: Any) -> None:
    """Apply one stored document's change to the trackers that were current before it."""
    for tracker in trackers.values():
        if tracker.root is not before:
            continue
        try:
            tracker.discard(member)
            if value is not None:
                tracker.add(member, value)
        except Exception:  # noqa: BLE001 - a document the keys cannot be read from: rebuild on next use
            tracker.root = None  # (the engine's own check, which reads it again, reports what is wrong)
            continue
        tracker.root = after


class UniqueKeysByIndex:
    """Engine mixin: unique indexes mongoeco would check by a scan are checked by key first."""

    def _ensure_unique_indexes(self, db_name: str, coll_name: str, candidate: Any, **kw: Any) -> None:
        view = kw.get("indexes_view")
        indexes = (self._indexes if view is None else view).get(db_name, {}).get(coll_name, [])  # type: ignore[attr-defined]
        keys = [signature(index) for index in indexes]
        checked = self._cleared(db_name, coll_name, candidate, indexes, keys, kw) if any(keys) else None
        if checked is None:
            super()._ensure_unique_indexes(db_name, coll_name, candidate, **kw)  # type: ignore[misc]
            return
        cleared, first, colliders = checked
        if first is None:
            super()._ensure_unique_indexes(  # type: ignore[misc]
                db_name, coll_name, candidate, **{**kw, "indexes_view": {db_name: {coll_name: cleared}}}
            )
            return
        # mongoeco checks the indexes in order: those before the first collision as it would (and the _id), then
        # that index over only the documents holding its keys, in the collection's order, so its scan stops at the
        # same document and words the same error (scanning all of them made a duplicate cost a pass over the
        # collection: 0.5-0.9 s per refused follow in the 45,000 follows), then, had it not refused, the rest.
        super()._ensure_unique_indexes(  # type: ignore[misc]
            db_name, coll_name, candidate, **{**kw, "indexes_view": {db_name: {coll_name: cleared[:first]}}}
        )
        later = {"check_id_storage": False, "scan_payload_id": False}
        super()._ensure_unique_indexes(  # type: ignore[misc]
            db_name,
            coll_name,
            candidate,
            **{
                **kw,
                **later,
                "indexes_view": {db_name: {coll_name: [indexes[first]]}},
                "storage_view": {db_name: {coll_name: colliders}},
                "exclude_storage_key": None,
            },
        )
        super()._ensure_unique_indexes(  # type: ignore[misc]
            db_name,
            coll_name,
            candidate,
            **{**kw, **later, "indexes_view": {db_name: {coll_name: cleared[first + 1 :]}}},
        )

    def _cleared(
        self,
        db_name: str,
        coll_name: str,
        candidate: Any,
        indexes: list[Any],
        keys: list[Signature | None],
        kw: dict[str, Any],
    ) -> tuple[list[Any], int | None, dict[Any, Any]] | None:
        """``indexes`` with each checked one that ``candidate`` collides with nowhere marked non-unique, the
        position of the first one it collides with (None: none) and the colliding documents there (storage key
        -> stored document, in the collection's order); None if no index is marked and none collides."""
        storage = self._storage if kw.get("storage_view") is None else kw["storage_view"]  # type: ignore[attr-defined]
        collection = storage.get(db_name, {}).get(coll_name, {})
        excluding = kw.get("exclude_storage_key")
        if excluding is not None and excluding not in collection:
            excluding = self._storage_key(excluding)  # type: ignore[attr-defined]  # as mongoeco normalizes it
        cleared, changed = list(indexes), False
        for position, (index, key) in enumerate(zip(indexes, keys, strict=True)):
            if key is None:
                continue
            if engine_compat.in_index(candidate, index):
                tracker = unique_keys(self, collection, index, key)
                mine = frozenset(engine_compat.unique_index_keys(self, candidate, list(index["fields"])))
                found = tracker.colliders(mine, excluding) if tracker is not None else set()
                if found:
                    ordinals = collection._ordinals
                    return cleared, position, {k: collection[k] for k in sorted(found, key=ordinals.__getitem__)}
            cleared[position] = dataclasses.replace(index, unique=False)
            changed = True
        return (cleared, None, {}) if changed else None

"""New documents are appended to a stored collection in batches, not one persistent-map update at a time.

mongoeco 4.11.0 keeps each collection (its ``MemoryCollection``) in persistent maps so that a
transaction's snapshot shares them: the documents by storage key (``_values``), each key's insertion
ordinal (``_ordinals``) and place in the natural order (``_locations``), and the order itself as
chunks of 128 keys (``_chunks``, each chunk an immutable tuple). Every new document updated all four
maps, rebuilt its whole tail chunk (a tuple of up to 128 items copied) and made a new chunk object:
9.6 microseconds a document, about a quarter of an insert over the wire.

Here a new key goes into ``_values`` at once (every read, duplicate check and follower of the
collection sees it) and is queued. The order maps are brought up to date from the queue, in one
pass and with one bulk update per map, the first time anything reads or writes one of them (a
scan, a delete, a copy), or when the queue reaches :data:`QUEUE_LIMIT`. A rollback's snapshot of
the collection keeps the queue as it is (its object and length). So what any reader sees is exactly
what the one-at-a-time appends would have left; only the work is batched. The flush and the appends
share one lock, so a reader on another thread never races a writer's queue. 50,000 appends: 5.4
microseconds each, flushes included (9.6 before); a flush holds the server's loop 1-13 ms.
tests/test_offline_appends.py runs random writes against an unbatched collection and compares every
map. See ``patches/batched-appends.md``.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

from rpds import HashTrieMap

from workbook import engine_compat

_QUEUE = "_workbench_appends"
"""The instance attribute holding a collection's queued (key, value) appends, in order."""

DEFERRED = ("_ordinals", "_locations", "_chunks", "_head_chunk", "_tail_chunk", "_next_chunk", "_next_ordinal")
"""The collection's attributes that are brought up to date from the queue before any read or write of them."""

QUEUE_LIMIT = 2048
"""Appends queued at most. A flush updates the two key maps of a large collection at a few microseconds a key,
so it stays at about ten milliseconds: with no bound, inserting 50,000 documents queued them all and the first
delete that followed flushed them in one step that held the server's loop for 70 ms."""

_LOCK = threading.Lock()
_INSTALLED: list[Any] = []
"""mongoeco's own ``MemoryCollection.__setitem__``, once replaced."""


def batch_appends() -> None:
    """Batch the appends of every stored collection (idempotent). It must run before anything wraps ``__setitem__``
    (:mod:`workbook.offline_engine` runs it before the followers of :func:`engine_compat.follow_collection_changes`;
    after one, it is refused)."""
    if _INSTALLED:
        return
    if engine_compat.collection_followers():
        raise RuntimeError("batch_appends() must run before follow_collection_changes wraps __setitem__")
    collection_class: Any = engine_compat.memory_collection_class()
    internals = engine_compat.memory_storage_internals()
    chunk_class, no_chunk, chunk_size = internals._OrderChunk, internals._NO_CHUNK, internals._ORDER_CHUNK_SIZE
    original_set = collection_class.__setitem__

    def flush(held: dict[str, Any]) -> None:
        """Apply the queued appends to the order maps, as one-at-a-time appends would have left them."""
        queued: list[tuple[Any, Any]] | None = held.pop(_QUEUE, None)
        if not queued:
            return
        chunks, tail = held["_chunks"], held["_tail_chunk"]
        next_chunk, next_ordinal = held["_next_chunk"], held["_next_ordinal"]
        head = held["_head_chunk"]
        new_chunks: dict[int, Any] = {}
        locations: dict[Any, tuple[int, int]] = {}
        taken = 0
        if tail != no_chunk:  # fill the last chunk first, as an append would
            last = chunks[tail]
            room = chunk_size - len(last.items)
            if room > 0:
                piece = queued[:room]
                start = len(last.items)
                for offset, (key, _) in enumerate(piece, start):
                    locations[key] = (tail, offset)
                items, live = (*last.items, *piece), last.live_count + len(piece)
                new_chunks[tail] = chunk_class(last.previous, last.following, items, live)
                taken = len(piece)
        previous = tail
        while taken < len(queued):
            piece = queued[taken : taken + chunk_size]
            chunk_id, next_chunk = next_chunk, next_chunk + 1
            for offset, (key, _) in enumerate(piece):
                locations[key] = (chunk_id, offset)
            new_chunks[chunk_id] = chunk_class(previous, no_chunk, tuple(piece), len(piece))
            if previous == no_chunk:
                head = chunk_id
            else:
                linked = new_chunks.get(previous) or chunks[previous]
                new_chunks[previous] = chunk_class(linked.previous, chunk_id, linked.items, linked.live_count)
            previous = chunk_id
            taken += len(piece)
        ordinals = {key: ordinal for ordinal, (key, _) in enumerate(queued, next_ordinal)}
        held["_ordinals"] = _merged(held["_ordinals"], ordinals)
        held["_locations"] = _merged(held["_locations"], locations)
        held["_chunks"] = chunks.update(new_chunks)
        # the appends filled the tail chunk alone (its one chunk replaced), or added chunks (the chain changed)
        engine_compat.journal(held, chunks, held["_chunks"], tail, previous == tail != no_chunk)
        held["_head_chunk"], held["_tail_chunk"] = head, previous
        held["_next_chunk"], held["_next_ordinal"] = next_chunk, next_ordinal + len(queued)

    def deferred(name: str) -> property:
        def read(self: Any) -> Any:
            held = self.__dict__
            if _QUEUE in held:
                with _LOCK:
                    flush(held)
            try:
                return held[name]
            except KeyError:
                raise AttributeError(name) from None

        def write(self: Any, value: Any) -> None:
            held = self.__dict__
            if _QUEUE in held:
                with _LOCK:
                    flush(held)
            held[name] = value

        return property(read, write)

    def __setitem__(self: Any, key: Any, value: Any) -> None:
        values = self._values
        if key in values or "_next_ordinal" not in self.__dict__:  # a replacement, or during __init__
            original_set(self, key, value)
            return
        with _LOCK:
            held = self.__dict__
            queued = held.get(_QUEUE)
            if queued is None:
                held[_QUEUE] = [(key, value)]
            else:
                queued.append((key, value))
                if len(queued) >= QUEUE_LIMIT:
                    flush(held)
            self._values = values.insert(key, value)

    def _snapshot_state(self: Any) -> tuple[Any, ...]:
        """The collection's state for a rollback, queue included, without applying the queue: the engine takes
        one before every write (a flush per insert batch cost about a tenth of inserting the store's orders).
        The queue is append-only until a flush takes it away, so its object and length pin it."""
        held = self.__dict__
        with _LOCK:  # the maps and the queue of one moment: a flush on another thread moves appends between them
            queue = held.get(_QUEUE)
            return (self._values, *(held[name] for name in DEFERRED), queue, len(queue or ()))

    def _restore_state(self: Any, state: tuple[Any, ...]) -> None:
        held = self.__dict__
        with _LOCK:
            self._values = state[0]
            held.update(zip(DEFERRED, state[1:-2], strict=True))
            queue, length = state[-2:]
            held.pop(_QUEUE, None)
            if length:
                held[_QUEUE] = queue[:length]

    for name in DEFERRED:
        setattr(collection_class, name, deferred(name))
    collection_class.__setitem__ = __setitem__
    collection_class._snapshot_state = _snapshot_state
    collection_class._restore_state = _restore_state
    _INSTALLED.append(original_set)


def _merged(persistent: Any, added: dict[Any, Any]) -> Any:
    """``persistent`` (an rpds map, or a restored collection's view of one: :mod:`workbook.key_positions`) with
    ``added``'s new keys: an rpds map holding no more keys than ``added`` is built afresh (rpds builds a map from
    pairs five times faster than it updates one, but reads a map's own items back at 1.8 microseconds each),
    anything else updated; the same map either way."""
    if type(persistent) is HashTrieMap and len(persistent) <= len(added):
        return HashTrieMap(itertools.chain(persistent.items(), added.items()))
    return persistent.update(added)


def queued(collection: Any) -> int:
    """How many appends ``collection`` holds queued (for tests)."""
    return len(collection.__dict__.get(_QUEUE) or ())

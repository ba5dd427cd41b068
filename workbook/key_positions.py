"""A restored collection's documents, key ordinals and locations, looked up in its order instead of held in maps.

mongoeco 4.11.0 keeps three persistent maps over every storage key of a collection: its stored
document (``_values``), its insertion ordinal (``_ordinals``) and its chunk and offset in the natural
order (``_locations``). A collection restored from a snapshot or bulk-loaded is laid out in one pass,
so the last two are the key's position in that order (the location is ``divmod(position, chunk
size)``) and the first is the row at that position. Held as ``rpds`` maps they cost about 150 bytes a
key each, outside Python's allocator (tracemalloc never saw them), for 400,000 keys in notebook 01;
the order maps are read only by writes (a replacement, a delete, ``ordered_keys``), the documents by
a lookup of their key (a full scan reads the order's chunks).

:class:`KeyPositions` stands for either order map and :class:`KeyValues` for the documents: ``get``,
``[key]``, ``in`` and ``len`` answer from the rows and each key's position found by its hash (two arrays
per collection, made the first time a lookup asks: :class:`Positions`), and from a persistent map of the
keys written since;
``insert``, ``remove``, ``discard`` and ``update`` return a new view, as the persistent map does.
Reading one whole (``items``, iterating, comparing) walks the positions and the changes.
``MemoryCollection`` uses no other method of these maps (mongoeco 4.11), and the workbench reads
``_values`` only for its identity (a new one after every write, as the persistent map's);
tests/test_key_positions.py runs random writes against the maps mongoeco builds itself.
"""

from __future__ import annotations

import bisect
import threading
from array import array
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

NOT_HELD = object()
"""What a view's ``get`` gives for a key it does not hold, before the caller's default."""
GONE = object()
"""A key a write removed, in a view's changes."""


class HashOrder:
    """Places 0..n-1 found by their keys' hashes: the hashes sorted and each one's place, in two machine-integer
    arrays (12 bytes a key; a dict from each key was about 70). :meth:`places` gives the places with one hash; the
    caller compares its keys there, as a dict compares keys of equal hash. Searched with ``bisect``, which reads
    an array's items as ints: about half the time of numpy's ``searchsorted`` called for one key."""

    __slots__ = ("_hashes", "_places")

    def __init__(self, hashes: array) -> None:
        """``hashes``: each place's key hash, an ``array("q")`` in place order."""
        import numpy as np

        values = np.frombuffer(hashes, dtype=np.int64)
        order = np.argsort(values, kind="stable")  # equal hashes keep their places' order
        self._hashes = array("q", values[order].tobytes())
        self._places = array("i", order.astype(np.int32).tobytes())

    def places(self, key_hash: int) -> list[int]:
        """The places whose key hashes to ``key_hash``, in place order."""
        at = bisect.bisect_left(self._hashes, key_hash)
        return self._places[at : bisect.bisect_right(self._hashes, key_hash, lo=at)].tolist()


class Positions:
    """The (key, value) rows of a collection laid out in one pass, in its order, and each key's position in
    them, found by its hash (:class:`HashOrder`, made on first use).

    A dict of positions was 70 bytes a key (its entry and an int object per position), 7.2 MiB for the 103,000
    keys notebook 01's ``run_workload`` looks up in its three store shapes. A lookup is a binary search and one
    key comparison per equal hash (about 0.6 us, against the engine's write or one-key read of about a
    millisecond that asks for it).
    """

    __slots__ = ("_lock", "_order", "rows")

    def __init__(self, rows: Sequence[tuple[Any, Any]]) -> None:
        self.rows = rows
        self._order: HashOrder | None = None
        self._lock = threading.Lock()

    def _made(self) -> HashOrder:
        """The keys' hash order, made once, on the first call, from any thread."""
        order = self._order
        if order is None:
            with self._lock:
                if self._order is None:
                    self._order = HashOrder(array("q", [hash(key) for key, _ in self.rows]))
                order = self._order
        return order

    def position(self, key: Any) -> int | None:
        """Where ``key`` is laid out (None if it is not), as a dict of positions answers: equal hash, then equal key."""
        rows = self.rows
        for position in self._made().places(hash(key)):
            found = rows[position][0]
            if found is key or found == key:
                return position
        return None

    def __len__(self) -> int:
        return len(self.rows)


class MapView:
    """A view that stands for a persistent map: what it held to begin with (:meth:`_base`), and a persistent map
    of the keys written since (``changes``, a removed key as :data:`GONE`). ``get``, ``[key]`` and ``in`` for this
    module's views and :class:`workbook.snapshot.LazyTable`."""

    __slots__ = ()
    changes: Any

    def _base(self, key: Any) -> Any:
        """What the view held for ``key`` before any write (:data:`NOT_HELD` if nothing)."""
        raise NotImplementedError

    def get(self, key: Any, default: Any = None) -> Any:
        found = self.changes.get(key, NOT_HELD)
        if found is NOT_HELD:
            found = self._base(key)
        return default if found is NOT_HELD or found is GONE else found

    def __getitem__(self, key: Any) -> Any:
        found = self.get(key, NOT_HELD)
        if found is NOT_HELD:
            raise KeyError(key)
        return found

    def __contains__(self, key: object) -> bool:
        return self.get(key, NOT_HELD) is not NOT_HELD


class KeyPositions(MapView):
    """``_ordinals`` (``chunk`` None: the position) or ``_locations`` (the position's chunk and offset) of a
    collection laid out in one pass, as the ``rpds.HashTrieMap`` they stand for (see the module docstring)."""

    __slots__ = ("changes", "chunk", "positions", "size")

    def __init__(self, positions: Positions, chunk: int | None, changes: Any = None, size: int | None = None) -> None:
        if changes is None:
            from rpds import HashTrieMap

            changes = HashTrieMap()
        self.positions, self.chunk, self.changes = positions, chunk, changes
        self.size = len(positions) if size is None else size

    def _at(self, position: int) -> Any:
        """What the map holds for the key laid out at ``position``."""
        return position if self.chunk is None else divmod(position, self.chunk)

    def _base(self, key: Any) -> Any:
        position = self.positions.position(key)
        return NOT_HELD if position is None else self._at(position)

    def __len__(self) -> int:
        return self.size

    def _with(self, changes: Any, size: int) -> KeyPositions:
        return KeyPositions(self.positions, self.chunk, changes, size)

    def insert(self, key: Any, value: Any) -> KeyPositions:
        return self._with(self.changes.insert(key, value), self.size + (key not in self))

    def update(self, values: Mapping[Any, Any]) -> KeyPositions:
        new = sum(1 for key in values if key not in self)
        return self._with(self.changes.update(values), self.size + new)

    def remove(self, key: Any) -> KeyPositions:
        if key not in self:
            raise KeyError(key)
        return self._with(self.changes.insert(key, GONE), self.size - 1)

    def discard(self, key: Any) -> KeyPositions:
        return self.remove(key) if key in self else self

    def items(self) -> Iterator[tuple[Any, Any]]:
        changes = self.changes
        for position, (key, _) in enumerate(self.positions.rows):  # in order: no dict of positions needed
            if key not in changes:
                yield key, self._at(position)
        for key, value in changes.items():
            if value is not GONE:
                yield key, value

    def keys(self) -> Iterator[Any]:
        return (key for key, _ in self.items())

    def values(self) -> Iterator[Any]:
        return (value for _, value in self.items())

    def __iter__(self) -> Iterator[Any]:
        return self.keys()

    def __eq__(self, other: object) -> bool:
        items = getattr(other, "items", None)
        return callable(items) and dict(self.items()) == dict(items())

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"KeyPositions({dict(self.items())!r})"


class KeyValues(KeyPositions):
    """``_values`` of a collection laid out in one pass: each key's stored document, read from its row."""

    __slots__ = ()

    def __init__(self, positions: Positions, changes: Any = None, size: int | None = None) -> None:
        super().__init__(positions, None, changes, size)

    def _at(self, position: int) -> Any:
        return self.positions.rows[position][1]

    def _with(self, changes: Any, size: int) -> KeyValues:
        return KeyValues(self.positions, changes, size)

    def __repr__(self) -> str:
        return f"KeyValues({len(self)} documents)"

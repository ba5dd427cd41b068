"""Index specs and the keys an index holds for each document (one key per array element)."""

from __future__ import annotations

import bisect
import dataclasses
import datetime
import functools
import itertools
from array import array
from collections.abc import Iterable, Iterator, Mapping, MutableSequence, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np
from bson import Int64, ObjectId

from workbook.errors import ParallelArraysError
from workbook.planner.collation import collator, normalize
from workbook.planner.predicates import Predicate, matches_all, parse_filter
from workbook.planner.unsupported import not_modelled
from workbook.planner.values import MISSING, UNDEFINED, Collate, sort_key
from workbook.shard_hash import hash64


@dataclass(frozen=True)
class IndexDefinition:
    """One entry of ``list_indexes()``, read the way the planner needs it."""

    name: str
    fields: tuple[tuple[str, int], ...]
    unique: bool = False
    sparse: bool = False
    hidden: bool = False
    collation: Mapping[str, Any] | None = None
    partial: tuple[Predicate, ...] | None = None
    special: bool = False
    key: tuple[tuple[str, Any], ...] = ()
    """The key pattern as listed, special kinds ("hashed", "text", "2dsphere") included."""
    hashed: frozenset[str] = frozenset()
    """Paths of "hashed" fields: their keys are MongoDB's hash64 of the value (``workbook.shard_hash``)."""

    @classmethod
    def from_info(cls, info: Mapping[str, Any], default_collation: Mapping[str, Any] | None = None) -> IndexDefinition:
        """Read a ``list_indexes()`` document; an index listed without a collation has the collection's."""
        key = info["key"]
        pairs = list(key.items()) if isinstance(key, Mapping) else [tuple(p) for p in key]
        hashed = frozenset(f for f, d in pairs if d == "hashed")
        special = any(isinstance(d, bool) or not isinstance(d, int | float) for f, d in pairs if f not in hashed)
        fields = tuple((f, 1 if (not isinstance(d, int | float) or d >= 0) else -1) for f, d in pairs)
        pfe = info.get("partialFilterExpression")
        collation = info.get("collation", default_collation)
        return cls(
            name=info.get("name") or "_".join(f"{f}_{d}" for f, d in pairs),
            fields=fields,
            unique=bool(info.get("unique", False)) or [f for f, _ in fields] == ["_id"],
            sparse=bool(info.get("sparse", False)),
            hidden=bool(info.get("hidden", False)),
            collation=collation if normalize(collation) else None,
            partial=tuple(parse_filter(pfe)) if pfe else None,
            special=special,
            key=tuple(pairs),
            hashed=hashed,
        )

    def hinted_by(self, hint: Any) -> bool:
        """Whether a hint (an index name, or a key pattern as a dict or list of pairs) names this index."""
        if isinstance(hint, str):
            return hint == self.name
        try:
            pairs = list(hint.items()) if isinstance(hint, Mapping) else [tuple(p) for p in hint]
        except (TypeError, ValueError):
            return False
        return [(f, _direction(d)) for f, d in pairs] == [(f, _direction(d)) for f, d in self.key]

    @property
    def key_pattern(self) -> dict[str, int | str]:
        """The key pattern as explain prints it."""
        return {f: "hashed" if f in self.hashed else d for f, d in self.fields}

    @property
    def paths(self) -> list[str]:
        """The indexed field paths in key order."""
        return [f for f, _ in self.fields]

    @property
    def collate(self) -> Collate | None:
        """The index's string comparison key (None for the simple collation)."""
        return collator(self.collation)


def _direction(value: Any) -> Any:
    """A key-pattern direction compared as MongoDB does: 1 == 1.0, special kinds by name."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return 1 if value >= 0 else -1
    return value


DocumentKeys = tuple[Mapping[str, Any], "Entry | list[Entry]", list[AbstractSet[str]]]
"""What one document gave one index: the document itself, its entries (for a document with one key, most of
them, the :class:`Entry` alone: a list less per document and index), and the array prefixes met per indexed
path. Made from an index (:meth:`IndexData.memo`) so a rebuild after a write generates keys only for the
documents that changed, and takes their entries as they are held (:meth:`Entry.at`)."""

KeyMemo = dict[int, DocumentKeys]
"""Per-document index keys by ``id(document)`` (the document is kept in the value, so an id is never reused)."""


class Entry:
    """One index key: per-field sort keys (already collated), the raw values, and the record id.

    An index with the simple collation keeps only the values (a lone value bare, :func:`_lean_entry`): each
    sort key is ``sort_key(value)``, made again when read. Held, the sort keys and the two one-item tuples
    took a one-field index from 92 to 244 bytes a key (280 for dates, whose key holds their milliseconds);
    the ``_id`` index of a restored followers/referenced was 13.5 MiB for 5.2 MiB of documents' BSON. A
    collated index keeps its keys: they are made with its collation.
    """

    __slots__ = ("_keys", "_values", "rid")

    def __init__(self, keys: Any, values: Any, rid: int) -> None:
        """``keys`` and ``values`` as the properties give them, or as :func:`_lean_entry` holds them."""
        self._keys, self._values, self.rid = keys, values, rid

    @property
    def keys(self) -> tuple[tuple, ...]:
        keys = self._keys
        if keys is _ONE:
            return (sort_key(self._values),)
        if keys is None:
            return tuple(map(sort_key, self._values))
        return keys

    @property
    def values(self) -> tuple[Any, ...]:
        return (self._values,) if self._keys is _ONE else self._values

    def at(self, rid: int) -> Entry:
        """This key for the record id ``rid`` (itself when the id is the same), held as lean as it is."""
        return self if rid == self.rid else Entry(self._keys, self._values, rid)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Entry):
            return NotImplemented
        return (self.keys, self.values, self.rid) == (other.keys, other.values, other.rid)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Entry(keys={self.keys!r}, values={self.values!r}, rid={self.rid!r})"


_ONE = object()
"""An :class:`Entry`'s keys when it holds one value, bare, and no sort key."""


class _Block:
    """Up to :data:`_BLOCK` * 2 consecutive entries of :class:`Entries`, as columns (``keys`` None: the marker)."""

    __slots__ = ("keys", "rids", "values")

    def __init__(self, keys: list[Any] | None, values: list[Any], rids: array) -> None:
        self.keys, self.values, self.rids = keys, values, rids

    def copy(self) -> _Block:
        return _Block(None if self.keys is None else list(self.keys), list(self.values), array("q", self.rids))


_BLOCK = 2048
"""Entries a block of :class:`Entries` holds when made (a change copies one block, not the index)."""


class Entries(MutableSequence[Entry]):
    """An index's entries in index order, held as columns (each entry's held keys, values and record id) in blocks
    of about :data:`_BLOCK`; each read makes the :class:`Entry` it asks for.

    As :class:`Entry` objects, one a key, the explain model's indexes were the largest thing a notebook's kernel
    held after the documents: 41 MiB for the 770,000 keys of the parts dataset's three shapes (56 bytes an
    object and 8 a list slot), against 16 bytes a key here. The held keys are one shared marker when every
    entry has the same (a lean index: :func:`_lean_entry`), a column otherwise (a collated index).

    A copy shares the blocks; a change to either copies the block it changes first (copy on write), so an
    index updated after one write copies one block, not all its entries (0.4 ms at 100,000 keys). Changed
    only while :func:`update_index` makes a new index from an earlier one's copy; never once an index holds it.
    """

    __slots__ = ("_blocks", "_keys", "_owned", "_starts")

    def __init__(self, entries: Iterable[Entry] = ()) -> None:
        made = entries if isinstance(entries, list) else list(entries)
        held = [entry._keys for entry in made]
        first = held[0] if held else _NO_ENTRY
        alike = (first is _ONE or first is None) and all(keys is first for keys in held)
        self._keys: Any = first if alike or not held else _PER_ENTRY
        values, rids = [entry._values for entry in made], [entry.rid for entry in made]
        self._blocks = [
            _Block(
                None if alike else held[at : at + _BLOCK], values[at : at + _BLOCK], array("q", rids[at : at + _BLOCK])
            )
            for at in range(0, len(made), _BLOCK)
        ]
        self._owned = {id(block) for block in self._blocks}
        self._starts = list(itertools.accumulate((len(block.values) for block in self._blocks), initial=0))

    def __len__(self) -> int:
        return self._starts[-1]

    def _locate(self, index: int) -> tuple[int, int]:
        """(block, place in it) of entry ``index`` (negative from the end); IndexError outside."""
        length = self._starts[-1]
        if index < 0:
            index += length
        if not 0 <= index < length:
            raise IndexError("Entries index out of range")
        block = bisect.bisect_right(self._starts, index) - 1
        return block, index - self._starts[block]

    @overload
    def __getitem__(self, index: int) -> Entry: ...
    @overload
    def __getitem__(self, index: slice) -> list[Entry]: ...
    def __getitem__(self, index: int | slice) -> Entry | list[Entry]:
        if type(index) is slice:
            start, stop, step = index.indices(len(self))
            if step != 1:
                return [self[at] for at in range(start, stop, step)]
            return list(itertools.islice(self, start, max(start, stop)))
        place, at = self._locate(index)
        block = self._blocks[place]
        return Entry(self._keys if block.keys is None else block.keys[at], block.values[at], block.rids[at])

    def __iter__(self) -> Iterator[Entry]:
        marker = self._keys
        for block in self._blocks:
            held = itertools.repeat(marker) if block.keys is None else block.keys
            yield from map(Entry, held, block.values, block.rids)

    def walk(self, start: int, backward: bool = False) -> Iterator[Entry]:
        """The entries from ``start`` on, in order; ``backward``: from the ``start``-th from the end, towards the
        first (an index scan reads on from where it sought, one entry made at a time, without a search each)."""
        length = len(self)
        if not 0 <= start < length:
            return
        place, at = self._locate(length - 1 - start if backward else start)
        marker, blocks = self._keys, self._blocks
        held: Iterable[Any]
        if not backward:
            for block in blocks[place:]:
                held = itertools.repeat(marker) if block.keys is None else block.keys[at:]
                yield from map(Entry, held, block.values[at:], block.rids[at:])
                at = 0
            return
        for block in reversed(blocks[: place + 1]):
            end = len(block.values) if at < 0 else at + 1
            held = itertools.repeat(marker) if block.keys is None else reversed(block.keys[:end])
            yield from map(Entry, held, reversed(block.values[:end]), reversed(block.rids[:end]))
            at = -1

    def rid(self, index: int) -> int:
        """The record id of entry ``index``, with no :class:`Entry` made."""
        block, at = self._locate(index)
        return self._blocks[block].rids[at]

    def rids(self) -> np.ndarray:
        """Every entry's record id, in order (a copy)."""
        if not self._blocks:
            return np.empty(0, dtype=np.int64)
        return np.concatenate([np.frombuffer(block.rids, dtype=np.int64) for block in self._blocks])

    def _own(self, block: int) -> _Block:
        """Block ``block``, copied first unless this column set made it (a copy shares its blocks)."""
        held = self._blocks[block]
        if id(held) not in self._owned:
            held = self._blocks[block] = held.copy()
            self._owned.add(id(held))
        return held

    def _counted(self) -> None:
        self._starts = list(itertools.accumulate((len(block.values) for block in self._blocks), initial=0))

    def _held_keys(self, entry: Entry) -> None:
        """Make this column set able to hold ``entry``'s keys: a keys column for every block when they differ."""
        if self._keys is _NO_ENTRY and (entry._keys is _ONE or entry._keys is None):
            self._keys = entry._keys
        elif self._keys is not _PER_ENTRY and entry._keys is not self._keys:
            marker, self._keys = self._keys, _PER_ENTRY
            for place in range(len(self._blocks)):
                block = self._own(place)
                block.keys = [marker] * len(block.values)

    def insert(self, index: int, entry: Entry) -> None:
        """Put ``entry`` at ``index`` (what :func:`bisect.insort` calls)."""
        self._held_keys(entry)
        length = len(self)
        index = min(max(index + length if index < 0 else index, 0), length)
        if not self._blocks:
            self._blocks.append(_Block(None if self._keys is not _PER_ENTRY else [], [], array("q")))
            self._owned.add(id(self._blocks[0]))
            self._starts = [0, 0]
        place = len(self._blocks) - 1 if index == length else bisect.bisect_right(self._starts, index) - 1
        block = self._own(place)
        at = index - self._starts[place]
        if block.keys is not None:
            block.keys.insert(at, entry._keys)
        block.values.insert(at, entry._values)
        block.rids.insert(at, entry.rid)
        if len(block.values) > 2 * _BLOCK:  # split in two: both this column set's own
            half = len(block.values) // 2
            tail = _Block(
                None if block.keys is None else block.keys[half:], block.values[half:], array("q", block.rids[half:])
            )
            if block.keys is not None:
                del block.keys[half:]
            del block.values[half:]
            del block.rids[half:]
            self._blocks.insert(place + 1, tail)
            self._owned.add(id(tail))
            self._counted()
        else:
            for following in range(place + 1, len(self._starts)):
                self._starts[following] += 1

    @overload
    def __setitem__(self, index: int, entry: Entry) -> None: ...
    @overload
    def __setitem__(self, index: slice, entry: Iterable[Entry]) -> None: ...
    def __setitem__(self, index: int | slice, entry: Entry | Iterable[Entry]) -> None:
        if not isinstance(index, int) or not isinstance(entry, Entry):
            raise TypeError("Entries take one Entry at a position")
        position = index + len(self) if index < 0 else index
        self._locate(position)  # IndexError outside
        self.insert(position, entry)
        del self[position + 1]

    def __delitem__(self, index: int | slice) -> None:
        if not isinstance(index, int):
            raise TypeError("Entries delete one entry at a position")
        place, at = self._locate(index)
        block = self._own(place)
        if block.keys is not None:
            del block.keys[at]
        del block.values[at]
        del block.rids[at]
        if not block.values:
            del self._blocks[place]
            self._owned.discard(id(block))
            self._counted()
        else:
            for following in range(place + 1, len(self._starts)):
                self._starts[following] -= 1

    def copy(self) -> Entries:
        """A new column set with the same entries, sharing every block until one of the two changes it."""
        copied = Entries()
        copied._keys, copied._blocks, copied._starts = self._keys, list(self._blocks), list(self._starts)
        self._owned = set()  # shared now: this one copies a block before changing it too
        return copied

    def kept(self, now: Sequence[int] | np.ndarray) -> Entries:
        """The entries whose record id ``now`` maps to zero or more, each with that record id (-1: left out)."""
        at = np.asarray(now, dtype=np.int64)[self.rids()] if len(self) else np.empty(0, dtype=np.int64)
        keep = (at >= 0).tolist()
        kept_rids = at[at >= 0].tolist()
        entries = itertools.compress(self, keep)
        return Entries([Entry(entry._keys, entry._values, rid) for entry, rid in zip(entries, kept_rids, strict=True)])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Entries):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Entries({list(self)!r})"


_NO_ENTRY = object()
"""The held keys of :class:`Entries` that holds none yet (the first entry's decide)."""

_PER_ENTRY = object()
"""The held keys of :class:`Entries` whose entries' keys differ: each block holds a column of them."""


@dataclass
class IndexData:
    """An index's sorted entries and what it learned about arrays while building them."""

    spec: IndexDefinition
    entries: Entries
    multikey_paths: dict[str, list[str]] = field(default_factory=dict)
    documents: Sequence[Mapping[str, Any]] = field(default=(), repr=False)
    """The documents the entries' record ids number (the model's own list, not a copy)."""
    arrays: dict[int, list[AbstractSet[str]]] = field(default_factory=dict, repr=False)
    """The array prefixes per path of each document that met an array, by ``id(document)`` (the others met none)."""
    positions: np.ndarray | None = field(default=None, repr=False)
    """Each record id's position in ``documents`` (-1: its document is gone), or None where every record id is its
    position. An index updated after a delete keeps its entries' record ids, as a WiredTiger RecordId stays with
    its record: the delete moves the later documents' positions, which this one array says, instead of every
    later entry being made again (41 ms an index at 100,000 documents)."""
    record_ids: np.ndarray | None = field(default=None, repr=False)
    """The record id at each position of ``documents`` (the inverse of :attr:`positions`; None with it)."""

    def position(self, rid: int) -> int:
        """Where the document of the record id ``rid`` (an entry's) stands in :attr:`documents`."""
        return rid if self.positions is None else int(self.positions[rid])

    def record_id(self, position: int) -> int:
        """The record id of the document at ``position`` in :attr:`documents`."""
        return position if self.record_ids is None else int(self.record_ids[position])

    @property
    def is_multikey(self) -> bool:
        """Whether any document produced more than one key (an array on an indexed path)."""
        return any(self.multikey_paths.values())

    def memo(self) -> KeyMemo:
        """Each document's keys, for a rebuild after a write (see :func:`build_index`), made from the entries
        on each call: kept beside them, a dict entry and a tuple per document and index were an eighth of a
        restored followers/referenced (7.2 MiB of 57). A document that gave no key is not in it."""
        by_rid: dict[int, list[Entry]] = {}
        for entry in self.entries:
            found = by_rid.get(entry.rid)
            if found is None:
                by_rid[entry.rid] = [entry]
            else:
                found.append(entry)
        none, arrays, documents = _no_arrays(len(self.spec.paths)), self.arrays, self.documents
        memo: KeyMemo = {}
        for rid, entries in by_rid.items():
            document = documents[self.position(rid)]
            memo[id(document)] = (
                document,
                entries[0] if len(entries) == 1 else entries,
                arrays.get(id(document), none),
            )
        return memo


NO_ARRAYS: frozenset[str] = frozenset()
"""The array prefixes of a path that meets no array: one shared object, as the memo keeps one per document
and path (an empty ``set()`` each would be 216 bytes, more than most documents' keys)."""


def path_keys(document: Mapping[str, Any], path: str) -> tuple[list[Any], AbstractSet[str]]:
    """The key values one document yields for one indexed path, and the array prefixes met.

    >>> path_keys({"a": [1, 2, 2]}, "a")
    ([1, 2], {'a'})
    >>> path_keys({"a": [{"b": 1}, {"c": 2}]}, "a.b")
    ([1, None], {'a'})
    """
    parts = path.split(".")
    value: Any = document
    for part in parts:  # fast path: a path through subdocuments only, to a value that is not an array
        if not isinstance(value, Mapping) or isinstance(value, list):
            break
        value = value.get(part, MISSING)
        if value is MISSING:
            return [MISSING], NO_ARRAYS
    else:
        if not isinstance(value, list):
            return [value], NO_ARRAYS
    out: list[Any] = []
    arrays: set[str] = set()

    def walk(value: Any, i: int, prefix: str) -> None:
        if i == len(parts):
            if isinstance(value, list):
                arrays.add(prefix)
                out.extend(value if value else [UNDEFINED])
            else:
                out.append(value)
            return
        if isinstance(value, Mapping):
            nxt = f"{prefix}.{parts[i]}" if prefix else parts[i]
            if parts[i] in value:
                walk(value[parts[i]], i + 1, nxt)
            else:
                out.append(MISSING)
        elif isinstance(value, list) and parts[i].isdigit():
            # a numeric part is a position in the array, which is not expanded (array_match3.js)
            nxt = f"{prefix}.{parts[i]}" if prefix else parts[i]
            position = int(parts[i])
            if position < len(value):
                walk(value[position], i + 1, nxt)
            else:
                out.append(MISSING)
        elif isinstance(value, list):
            arrays.add(prefix)
            for element in value or [None]:
                if isinstance(element, Mapping):
                    walk(element, i, prefix)
                else:
                    out.append(MISSING)
        else:
            out.append(MISSING)

    walk(document, 0, "")
    unique: dict[tuple, Any] = {}
    for value in out:
        unique.setdefault(sort_key(None if value is MISSING else value), value)
    values = list(unique.values())
    if values == [MISSING]:
        return values, arrays or NO_ARRAYS
    return [None if v is MISSING else v for v in values], arrays or NO_ARRAYS


_EMPTY = object()
"""The one element an empty array is expanded to when generating compound keys."""


def compound_values(
    document: Mapping[str, Any], paths: Sequence[str], *, whole_positional_arrays: bool = False
) -> Iterator[tuple[Any, ...]]:
    """The value tuples one document gives a compound key pattern, as MongoDB's key generator makes
    them: paths through one shared array take their values from the same element (a.b and a.c of
    ``[{b: 1, c: 2}, {b: 3, c: 4}]`` give (1, 2) and (3, 4), not their cross product), and two paths
    meeting different arrays raise :class:`ParallelArraysError`. ``whole_positional_arrays``: an
    array reached by a position at the end of a path is one value (a sort key), not its elements.

    >>> list(compound_values({"a": [{"b": 1, "c": 2}, {"b": 3, "c": 4}]}, ["a.b", "a.c"]))
    [(1, 2), (3, 4)]
    >>> list(compound_values({"a": [1, 2], "x": 0}, ["a", "x"]))
    [(1, 0), (2, 0)]
    """
    states = [("walk", document, tuple(path.split("."))) for path in paths]
    return _compound(states, whole_positional_arrays)


def _advance(node: Any, parts: tuple[str, ...], whole_positional: bool) -> tuple[Any, ...]:
    """Follow a path through subdocuments (and positions in arrays): ``("value", v)`` where it ends,
    or ``("array", array, rest)`` where it meets an array it must expand (``rest`` empty at the leaf)."""
    i = 0
    while i < len(parts):
        if isinstance(node, list):
            if not parts[i].isdigit():
                return ("array", node, parts[i:])
            position = int(parts[i])
            if position >= len(node):
                return ("value", MISSING)
            node, i = node[position], i + 1
            if whole_positional and i == len(parts) and isinstance(node, list):
                return ("value", node)
        elif isinstance(node, Mapping):
            if parts[i] not in node:
                return ("value", MISSING)
            node, i = node[parts[i]], i + 1
        else:
            return ("value", MISSING)
    return ("array", node, ()) if isinstance(node, list) else ("value", node)


def _compound(states: list[tuple[Any, ...]], whole_positional: bool) -> Iterator[tuple[Any, ...]]:
    resolved = [_advance(s[1], s[2], whole_positional) if s[0] == "walk" else s for s in states]
    stops = [r for r in resolved if r[0] == "array"]
    if not stops:
        yield tuple(r[1] for r in resolved)
        return
    array = stops[0][1]
    if any(r[1] is not array for r in stops):
        raise ParallelArraysError
    for element in array or [_EMPTY]:
        following: list[tuple[Any, ...]] = []
        for r in resolved:
            if r[0] != "array":
                following.append(r)
            elif element is _EMPTY:
                following.append(("value", MISSING if r[2] else UNDEFINED))
            elif not r[2]:
                following.append(("value", element))  # an array inside the array is one value
            elif isinstance(element, Mapping):
                following.append(("walk", element, r[2]))
            else:
                following.append(("value", MISSING))
        yield from _compound(following, whole_positional)


def build_index(
    spec: IndexDefinition, documents: Sequence[Mapping[str, Any]], earlier: KeyMemo | None = None
) -> IndexData:
    """Generate every key of the index over the documents and sort them in index order.

    ``earlier`` (read, never changed) holds the keys of documents an earlier build of the same
    index saw; a document found there (the same object) is not walked again. The returned index's
    ``memo`` gives exactly the current documents' keys, for the next build.
    """
    collate = spec.collate
    # each entry beside its sort keys, for the sort: a lean entry makes them again when read, and they are made
    # here anyway (once per distinct value)
    keyed: list[tuple[tuple[tuple, ...], Entry]] = []
    multikey: dict[str, set[str]] = {path: set() for path in spec.paths}
    earlier = earlier or {}
    arrays_of: dict[int, list[AbstractSet[str]]] = {}
    scalars = _ScalarKeys(spec) if spec.partial is None and not spec.sparse and not spec.hashed else None
    no_arrays = scalars.no_arrays if scalars is not None else None
    append = keyed.append
    make = _entry_maker(spec)
    for rid, document in enumerate(documents):
        known = earlier.get(id(document))
        kept: Entry | list[Entry] | None = None
        if known is not None and known[0] is document:
            kept, arrays_per_path = known[1], known[2]
        elif scalars is not None and (short := scalars.keys(document)) is not None:
            keys_of_document, arrays_per_path = short
        else:
            keys_of_document, arrays_per_path = _document_keys(spec, document, collate)
        if arrays_per_path is not no_arrays and any(arrays_per_path):  # "no array on any path" adds nothing
            for path, arrays in zip(spec.paths, arrays_per_path, strict=True):
                multikey[path] |= arrays
            arrays_of[id(document)] = arrays_per_path
        if kept is not None:  # the memo's entries, for this record id
            if isinstance(kept, Entry):
                append((kept.keys, kept.at(rid)))
            else:
                keyed.extend((entry.keys, entry.at(rid)) for entry in kept)
        elif len(keys_of_document) == 1:  # most documents: one key, no generator
            keys, values = keys_of_document[0]
            append((keys, make(keys, values, rid)))
        else:
            keyed.extend((keys, make(keys, values, rid)) for keys, values in keys_of_document)
    # Stable multi-pass sort: equal keys stay in record-id order, as in a WiredTiger index.
    for position in reversed(range(len(spec.fields))):
        keyed.sort(key=functools.partial(_pair_key, position), reverse=spec.fields[position][1] < 0)
    entries = Entries(entry for _, entry in keyed)
    paths = {path: sorted(prefixes) for path, prefixes in multikey.items()}
    return IndexData(spec, entries, paths, documents, arrays_of)


_SCALAR_TYPES = frozenset({str, int, float, bool, type(None), datetime.datetime, ObjectId})
"""Exact types whose one key :class:`_ScalarKeys` makes itself (each is one key, never an array or document)."""


class _ScalarKeys:
    """:func:`_document_keys` for the common document: each indexed path goes through subdocuments
    (or stops at a missing field) to a value of an exact type in :data:`_SCALAR_TYPES`, except that
    at most one path may meet one array: an array of such values at its end (a multikey index on
    tags), or an array of subdocuments the rest of the path goes through to such values (an index on
    ``parts.partId``). Each distinct value's sort key is made once per build. Any other document (an
    empty or nested array, arrays on two paths, a document value, a subclass, a path through a scalar
    or by an array position) answers None and takes :func:`_document_keys`;
    tests/test_planner_keys_fast.py holds the two equal.
    """

    __slots__ = ("collate", "made", "multikey", "no_arrays", "paths", "singles", "top", "tops")

    def __init__(self, spec: IndexDefinition) -> None:
        self.paths = [tuple(path.split(".")) for path in spec.paths]
        self.tops = tuple(path[0] for path in self.paths) if all(len(path) == 1 for path in self.paths) else None
        """The fields of an index on top-level fields only (``_id``, ``{followedId, followerId}``): documents whose
        values there are all plain scalars take a shorter path."""
        self.top = self.tops[0] if self.tops is not None and len(self.tops) == 1 else None
        self.collate = spec.collate
        self.no_arrays = _no_arrays(len(self.paths))
        self.made: dict[type, dict[Any, tuple]] = {kind: {} for kind in _SCALAR_TYPES}
        self.singles: dict[int, tuple[tuple[tuple], tuple[Any]]] = {}
        """Each array element's (sort keys, values) pair by the element's id (:meth:`_single`)."""
        self.multikey: dict[tuple[int, str], list[AbstractSet[str]]] = {}
        """The array prefixes per path of a document whose path ``n`` met an array at ``prefix``: one
        shared list per (n, prefix), as :func:`_no_arrays` shares one for documents with no array."""

    def keys(
        self, document: Any
    ) -> tuple[list[tuple[tuple[tuple, ...], tuple[Any, ...]]], list[AbstractSet[str]]] | None:
        """The document's (sort keys, values) pairs and array prefixes per path, or None (the general walk)."""
        if type(document) is not dict:
            return None
        value: Any
        values: list[Any]
        if self.top is not None:
            value = document.get(self.top)  # a missing field's key is null, as below
            if type(value) in _SCALAR_TYPES:
                return [((self._key(value),), (value,))], self.no_arrays
        elif self.tops is not None:
            values = [document.get(top) for top in self.tops]
            for value in values:
                if type(value) not in _SCALAR_TYPES:
                    break
            else:
                return [(tuple(map(self._key, values)), tuple(values))], self.no_arrays
        values = []
        array_at, prefix = -1, ""
        for n, parts in enumerate(self.paths):
            value = document
            for i, part in enumerate(parts):
                kind = type(value)
                if kind is dict:
                    value = value.get(part, MISSING)
                    if value is MISSING:
                        value = None  # a missing field's key is null
                        break
                elif kind is list and array_at < 0 and not part.isdigit():
                    value = _through(value, parts[i:])
                    if value is None:
                        return None
                    array_at, prefix = n, ".".join(parts[:i])
                    break
                else:
                    return None  # a path through a scalar, a second array or by a position: the general walk
            else:
                if type(value) is list:
                    if array_at >= 0 or not value or any(type(item) not in _SCALAR_TYPES for item in value):
                        return None
                    array_at, prefix = n, ".".join(parts)
                elif type(value) not in _SCALAR_TYPES:
                    return None
            values.append(value)
        if array_at < 0:
            return [(tuple(map(self._key, values)), tuple(values))], self.no_arrays
        seen: dict[tuple, Any] = {}
        for element in values[array_at]:
            seen.setdefault(self._key(element), element)  # an element equal to an earlier one adds no key
        pairs: list[tuple[tuple[tuple, ...], tuple[Any, ...]]]
        if len(values) == 1:  # the index's one path ends in the array (tags, parts.partId)
            pairs = [self._single(key, element) for key, element in seen.items()]
        else:
            fixed: list[tuple] = [() if n == array_at else self._key(value) for n, value in enumerate(values)]
            pairs = []
            for key, element in seen.items():
                fixed[array_at], values[array_at] = key, element
                pairs.append((tuple(fixed), tuple(values)))
        arrays = self.multikey.get((array_at, prefix))
        if arrays is None:
            arrays = self.multikey[(array_at, prefix)] = [
                frozenset((prefix,)) if n == array_at else NO_ARRAYS for n in range(len(self.paths))
            ]
        return pairs, arrays

    def _single(self, key: tuple, element: Any) -> tuple[tuple[tuple], tuple[Any]]:
        """The (sort keys, values) pair of one array element's key, made once per element object and shared by
        every document holding that object: a restored dataset holds each distinct string once, so the 417,000
        part lines of parts/embedded make 5,000 pairs, not 834,000 one-item tuples (19 MiB per index)."""
        pair = self.singles.get(id(element))  # the pair holds the element: its id is not reused meanwhile
        if pair is None:
            pair = self.singles[id(element)] = ((key,), (element,))
        return pair

    def _key(self, value: Any) -> tuple:
        made = self.made[type(value)]
        key = made.get(value)
        if key is None:
            key = sort_key(value, self.collate)
            if value == value and value != 0:  # NaN never finds itself; 0.0 and -0.0 keep their own
                made[value] = key
        return key


def _through(array: list[Any], rest: tuple[str, ...]) -> list[Any] | None:
    """The values the rest of a path reaches in each subdocument of a non-empty array (null where a
    field is missing), or None when an element is not a subdocument or the path meets another array,
    a scalar or a value that is not a plain scalar."""
    if not array:
        return None
    out = []
    for element in array:
        value: Any = element
        for part in rest:
            if type(value) is not dict:
                return None
            value = value.get(part, MISSING)
            if value is MISSING:
                value = None
                break
        else:
            if type(value) not in _SCALAR_TYPES:
                return None
        out.append(value)
    return out


@dataclass(frozen=True, eq=False)
class Delta:
    """How one version of a collection's documents differs from an earlier one (by object identity).

    ``moved`` maps each earlier position to its new one (-1: the document is gone; a list or an int array), or
    is None when every earlier document kept its position; ``added`` lists the positions of documents that are
    new objects (inserted, or a new version written by an update), in order.
    """

    moved: list[int] | np.ndarray | None
    added: list[int]
    gone: frozenset[int] = frozenset()
    """``id()`` of the earlier documents that are no longer there."""
    replaced: frozenset[int] = frozenset()
    """Positions (with ``moved`` None) whose earlier document gave way to a new one in the same place (an
    update): their earlier keys go, and the rest of the index keeps its entries as they are."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Delta):
            return NotImplemented
        mine, theirs = (None if d.moved is None else list(d.moved) for d in (self, other))
        return (mine, self.added, self.gone, self.replaced) == (theirs, other.added, other.gone, other.replaced)

    __hash__ = None  # type: ignore[assignment]

    MAX_SHARE = 0.125
    """Past this share of changed documents, one sort of every key is cheaper than inserting each."""

    @classmethod
    def between(cls, earlier_ids: Sequence[int] | np.ndarray, ids: Sequence[int] | np.ndarray) -> Delta | None:
        """The delta from ``earlier_ids`` to ``ids`` (``id()`` of each document, in record order), or
        None when a rebuild is cheaper or the kept documents changed their relative order."""
        limit = max(64, cls.MAX_SHARE * len(ids))
        before, after = _int64s(earlier_ids), _int64s(ids)
        count = len(before)
        if count <= len(after) <= count + limit:
            changed_at = np.flatnonzero(before != after[:count])  # vectorized: 0.3 ms for 100,000, not 25
            if not len(changed_at):
                return cls(None, list(range(count, len(after))))  # appended only: the common case of an insert
            changed = changed_at.tolist()
            arriving = np.concatenate([after[changed_at], after[count:]])
            if 2 * len(changed) + len(after) - count <= limit and not _any_in(arriving, before):
                # updated in place (and perhaps appended): none of the new objects is an earlier document moved here
                added = changed + list(range(count, len(after)))
                return cls(None, added, frozenset(before[changed_at].tolist()), frozenset(changed))
        if len(after) < count + limit:
            removals = _removals(before, after, limit)
            if removals is not None:  # documents removed (and perhaps some appended), the rest in order
                removed, kept = removals
                moved = _ranks_without(count, removed)  # an array: a list of 100,000 ints took 3 ms
                return cls(moved, list(range(kept, len(after))), frozenset(before[removed].tolist()))
        return cls._matched(before.tolist(), after.tolist(), limit)

    @classmethod
    def _matched(cls, earlier: list[int], current_ids: list[int], limit: float) -> Delta | None:
        """:meth:`between` for any change, by sets of ids (what :func:`_removals` does not walk)."""
        earlier_set, current = set(earlier), set(current_ids)
        gone, new = earlier_set - current, current - earlier_set
        if len(gone) + len(new) > limit:
            return None
        position = dict(zip(current_ids, range(len(current_ids)), strict=True))
        moved = [position.get(i, -1) for i in earlier]
        kept = [r for r in moved if r >= 0]
        if any(a > b for a, b in itertools.pairwise(kept)):
            return None
        return cls(moved, sorted(position[i] for i in new), frozenset(gone))


_WALKED = 16
"""Up to this many removed documents are found by :func:`_removals`' walk (one vectorized pass each)."""


def _removals(before: np.ndarray, after: np.ndarray, limit: float) -> tuple[list[int], int] | None:
    """(the positions of ``before`` removed, how many of ``after`` are the rest in order) when ``after`` is
    ``before`` with some documents removed, in order, then perhaps new ones appended; None otherwise, or when
    over :data:`_WALKED` removals. Each removal is one comparison of the arrays from there on (at C speed): a
    delete in a collection of 100,000 found its place by sets and a dict of every id (about 40 ms)."""
    removed: list[int] = []
    at = kept = 0
    while at < len(before):
        span = min(len(before) - at, len(after) - kept)
        differ = np.flatnonzero(before[at : at + span] != after[kept : kept + span])
        if not len(differ):
            at, kept = at + span, kept + span
            break
        at, kept = at + int(differ[0]), kept + int(differ[0])
        removed.append(at)  # taken as removed; what follows must then match, or this is not a removal
        at += 1
        if len(removed) > _WALKED:
            return None
    removed.extend(range(at, len(before)))  # ``after`` ended first: the rest of ``before`` is gone
    if not removed or len(removed) + len(after) - kept > limit or _any_in(after[kept:], before):
        return None  # nothing removed, too many changes, or an appended document was there before (a move)
    return removed, kept


def _int64s(ids: Sequence[int] | np.ndarray) -> np.ndarray:
    """``ids`` as an int64 array: the model's own as it is, any other sequence copied."""
    if isinstance(ids, np.ndarray) and ids.dtype == np.int64:
        return ids
    return np.fromiter(ids, dtype=np.int64, count=len(ids))


_FEW = 32
"""Up to this many new objects are each looked for in the earlier ids by one vectorized pass; more, by one set."""


def _any_in(values: np.ndarray, ids: np.ndarray) -> bool:
    """Whether any of ``values`` is among ``ids``."""
    if len(values) <= _FEW:
        return any(bool((ids == value).any()) for value in values.tolist())
    return not set(ids.tolist()).isdisjoint(values.tolist())


class _Order:
    """An entry's place in index order: each field's key (descending fields reversed), then the record id."""

    __slots__ = ("entry", "descending")

    def __init__(self, entry: Entry, descending: tuple[bool, ...]) -> None:
        self.entry, self.descending = entry, descending

    def __lt__(self, other: _Order) -> bool:
        for mine, theirs, reverse in zip(self.entry.keys, other.entry.keys, self.descending, strict=True):
            if mine != theirs:
                return (mine > theirs) if reverse else (mine < theirs)
        return self.entry.rid < other.entry.rid


def update_index(earlier: IndexData, documents: Sequence[Mapping[str, Any]], delta: Delta) -> IndexData:
    """:func:`build_index` for documents that differ from ``earlier``'s by ``delta``: only the changed documents'
    keys are made, removed (found by bisection) and inserted. The kept entries keep their record ids, and
    :attr:`IndexData.positions` says where their documents now stand; should a new document stand before a
    kept one, or the ids in use grow past twice the documents, every entry is numbered by position again.
    Multikey paths stay set once set, as MongoDB's index metadata does until the index is rebuilt."""
    spec = earlier.spec
    descending = tuple(direction < 0 for _, direction in spec.fields)

    def order(entry: Entry) -> _Order:
        return _Order(entry, descending)

    count, moved, added = len(earlier.documents), delta.moved, delta.added
    arrays_of = earlier.arrays  # moved on, not copied: the earlier model never makes its memo again
    for gone in delta.gone:
        arrays_of.pop(gone, None)
    made = {position: _document_keys(spec, documents[position], spec.collate) for position in added}
    if moved is None and len(added) == len(delta.replaced) and _keys_unchanged(earlier, made):
        # updated in place without touching this index (most updates: the _id index, any index on other fields):
        # its entries as they are, shared (an entry list is never changed once made), not copied
        return dataclasses.replace(earlier, documents=documents, arrays=arrays_of)
    used = count if earlier.positions is None else len(earlier.positions)  # record ids given out so far
    kept = count if moved is None else count - len(delta.gone)
    # updated in place (a new version at the same position), or gone
    leaving = sorted(delta.replaced) if moved is None else np.flatnonzero(np.asarray(moved) < 0).tolist()
    appended = [position for position in added if position >= kept]
    # a new document before a kept one has no record id in order between theirs; ids spread thin are renumbered
    renumber = (moved is not None and len(appended) != len(added)) or used + len(appended) > 2 * len(documents) + 64
    removals = [(position, earlier.record_id(position)) for position in leaving]
    entries = _without(earlier, removals, order)
    positions, record_ids = earlier.positions, earlier.record_ids
    if renumber:  # every entry numbered by its position again, in one comprehension (38 ms for 100,000, not 75)
        now = _now_at(earlier, moved)
        entries = entries.kept(now)
        positions = record_ids = None
        new_ids = dict(zip(added, added, strict=True))
    else:
        if moved is not None:  # documents removed: the kept ones move up, their record ids stay
            positions = _ranked(earlier, [rid for _, rid in removals])
        new_ids = {position: used + i for i, position in enumerate(appended)}
        if positions is not None:
            positions = np.concatenate([positions, np.asarray(appended, dtype=np.int64)])
            record_ids = np.flatnonzero(positions >= 0)  # positions rise with record ids: the live ids, in order
        for position in added:
            if position not in new_ids:  # in place: the record id of the version it replaced
                new_ids[position] = earlier.record_id(position)
    multikey = {path: set(prefixes) for path, prefixes in earlier.multikey_paths.items()}

    make = _entry_maker(spec)
    for position in added:
        keys_of_document, arrays_per_path = made[position]
        if any(arrays_per_path):
            arrays_of[id(documents[position])] = arrays_per_path
        for path, arrays in zip(spec.paths, arrays_per_path, strict=True):
            multikey[path] |= arrays
        for keys, values in keys_of_document:
            bisect.insort(entries, make(keys, values, new_ids[position]), key=order)
    multikey_paths = {path: sorted(p) for path, p in multikey.items()}
    return IndexData(spec, entries, multikey_paths, documents, arrays_of, positions, record_ids)


def _keys_unchanged(earlier: IndexData, made: Mapping[int, tuple[list[Any], list[AbstractSet[str]]]]) -> bool:
    """Whether each document ``made`` has the keys of (by position) gives the index exactly the keys its earlier
    version gave: the same sort keys and the same values of the same types (an int that became an equal float
    changes what a covered query returns), no array on either side."""
    spec = earlier.spec
    for position, (after, arrays_after) in made.items():
        before, arrays_before = _document_keys(spec, earlier.documents[position], spec.collate)
        if any(arrays_before) or any(arrays_after) or len(before) != len(after):
            return False
        for (keys, values), (keys_now, values_now) in zip(before, after, strict=True):
            if keys != keys_now or not all(map(_same_scalar, values, values_now)):
                return False
    return True


def _same_scalar(value: Any, other: Any) -> bool:
    """Whether two index values are the same scalar: equal and of one type (a document or an array: not known)."""
    kind = type(value)
    return kind is type(other) and kind is not dict and kind is not list and value == other


def _ranked(earlier: IndexData, gone: list[int]) -> np.ndarray:
    """Where each of ``earlier``'s record ids stands once the record ids ``gone`` are (-1 for those), the others
    keeping their order from the first position: their ranks, by one running count (a gather through the
    positions an update moved was 1.1 ms for 100,000, a running count 0.3)."""
    if earlier.positions is None:  # every record id its position: the places removed are the record ids gone
        return _ranks_without(len(earlier.documents), sorted(gone))
    at = earlier.positions.copy()
    at[gone] = -1
    return _ranks(at >= 0)


_FEW_REMOVED = 16
"""Up to this many places removed, :func:`_ranks_without` moves the tail after each down by one."""


def _ranks_without(length: int, removed: Sequence[int]) -> np.ndarray:
    """:func:`_ranks` of ``length`` places less the places ``removed`` (ascending, distinct). For a few, the ranks
    are the places with the tail after each removed one moved down: at 100,000 places, a delete's ranks took
    0.2 ms by the running count (five passes over the places), about a fifth of that this way."""
    if len(removed) > _FEW_REMOVED:
        stays = np.ones(length, dtype=bool)
        stays[removed] = False
        return _ranks(stays)
    ranks = np.arange(length, dtype=np.int64)
    for place in reversed(removed):
        ranks[place + 1 :] -= 1
    ranks[list(removed)] = -1
    return ranks


def _ranks(stays: np.ndarray) -> np.ndarray:
    """Each place's rank among the places ``stays`` keeps (from 0), -1 for the others, as int64: one running count
    in 32 bits (numpy's 64-bit running count of 100,000 flags took 0.9 ms, the 32-bit one 0.06)."""
    return np.where(stays, np.cumsum(stays, dtype=np.int32) - 1, -1).astype(np.int64)


def _now_at(earlier: IndexData, moved: Sequence[int] | np.ndarray | None) -> np.ndarray:
    """Where each of ``earlier``'s record ids stands after ``moved`` (-1: gone), as an int64 array."""
    at = np.arange(len(earlier.documents), dtype=np.int64) if earlier.positions is None else earlier.positions
    if moved is None:
        return at
    moved = np.asarray(moved, dtype=np.int64)
    return np.where(at >= 0, moved[np.maximum(at, 0)], -1)


def _without(earlier: IndexData, removals: Sequence[tuple[int, int]], order: Any) -> Entries:
    """``earlier``'s entries less those of the documents ``removals`` names, each by (its position in
    ``earlier.documents``, its record id): deleted, or given way to a new version by an update.

    Each one's keys are made again from its earlier version and found by bisection (a few comparisons each, then
    one move of the list's tail in C), rather than every entry tested: 6.5 ms an index at 100,000 documents for
    one update. Should a key not be found where it was made (it always is), the entries are filtered instead."""
    entries = earlier.entries.copy()
    if not removals:
        return entries
    spec, documents, make = earlier.spec, earlier.documents, _entry_maker(earlier.spec)
    places: list[int] = []
    for position, rid in removals:
        for keys, values in _document_keys(spec, documents[position], spec.collate)[0]:
            wanted = make(keys, values, rid)
            place = bisect.bisect_left(entries, order(wanted), key=order)
            if place == len(entries) or entries.rid(place) != rid or entries[place].keys != wanted.keys:
                return _filtered(earlier.entries, removals)
            places.append(place)
    if len(set(places)) != len(places):  # two keys found at one entry: filter instead
        return _filtered(earlier.entries, removals)
    for place in sorted(places, reverse=True):
        del entries[place]
    return entries


def _filtered(entries: Entries, removals: Sequence[tuple[int, int]]) -> Entries:
    """``entries`` less those of the record ids ``removals`` names, tested one by one."""
    leaving = {rid for _, rid in removals}
    return Entries([entry for entry in entries if entry.rid not in leaving])


def _document_keys(
    spec: IndexDefinition, document: Mapping[str, Any], collate: Collate | None
) -> tuple[list[tuple[tuple[tuple, ...], tuple[Any, ...]]], list[AbstractSet[str]]]:
    """The distinct (sort keys, values) one document gives the index, and the array prefixes per path."""
    none = _no_arrays(len(spec.paths))
    if spec.partial is not None and not matches_all(spec.partial, document, None):
        return [], none
    per_field: list[list[Any]] = []
    array_fields: list[AbstractSet[str]] = []
    for path in spec.paths:
        values, arrays = path_keys(document, path)
        per_field.append(values)
        array_fields.append(arrays)
    if not any(array_fields):
        array_fields = _no_arrays(len(array_fields))  # one shared list per width, held by every such memo entry
    if spec.sparse and all(v == [MISSING] for v in per_field):
        return [], array_fields
    if spec.hashed:
        per_field = _hashed_values(spec, per_field, array_fields)
    _check_parallel_arrays(spec, array_fields)
    combos: Any = itertools.product(*per_field)
    if not spec.hashed and _share_an_array(array_fields):  # one element's values together, as MongoDB's keys
        try:
            combos = list(compound_values(document, spec.paths))
        except ParallelArraysError:
            raise not_modelled(
                f"parallel arrays (a document has arrays in two fields of index {spec.name!r}, "
                "which MongoDB refuses to store)"
            ) from None
    seen: set[tuple] = set()
    out: list[tuple[tuple[tuple, ...], tuple[Any, ...]]] = []
    for combo in combos:
        values_tuple = tuple(None if v is MISSING else v for v in combo)
        keys = tuple(sort_key(v, collate) for v in values_tuple)
        if keys not in seen:
            seen.add(keys)
            out.append((keys, values_tuple))
    return out, array_fields


def _share_an_array(array_fields: list[AbstractSet[str]]) -> bool:
    """Whether two fields of a key pattern meet the same array (their array prefixes intersect)."""
    with_arrays = [prefixes for prefixes in array_fields if prefixes]
    return any(first & second for first, second in itertools.combinations(with_arrays, 2))


def hashed_key(value: Any) -> Int64:
    """The key a hashed index holds for a value (a missing field hashes as null, as on MongoDB)."""
    return Int64(hash64(None if value is MISSING else value))


def _hashed_values(
    spec: IndexDefinition, per_field: list[list[Any]], array_fields: list[AbstractSet[str]]
) -> list[list[Any]]:
    if spec.collation is not None:
        raise not_modelled(f"the collated hashed index {spec.name!r} (its keys hash collation keys)")
    out: list[list[Any]] = []
    for path, values, arrays in zip(spec.paths, per_field, array_fields, strict=True):
        if path not in spec.hashed:
            out.append(values)
        elif arrays:  # MongoDB refuses to store the document ("hashed indexes do not currently support array values")
            raise not_modelled(f"an array on the hashed path {path!r} of index {spec.name!r} (MongoDB refuses it)")
        else:
            out.append([hashed_key(v) for v in values])
    return out


@functools.cache
def _no_arrays(width: int) -> list[AbstractSet[str]]:
    """The array prefixes of a document that meets no array on any of ``width`` paths (shared: read, never change)."""
    return [NO_ARRAYS] * width


def _pair_key(position: int, pair: tuple[tuple[tuple, ...], Entry]) -> tuple[Any, ...]:
    return pair[0][position]


def _entry_maker(spec: IndexDefinition) -> Any:
    """How an index's entries are made from (sort keys, values, record id): lean for the simple collation, where a
    key is ``sort_key`` of its value (:func:`_lean_entry`); with its keys for a collation (:class:`Entry`)."""
    return _lean_entry if spec.collate is None else Entry


def _lean_entry(keys: tuple[tuple, ...], values: tuple[Any, ...], rid: int) -> Entry:
    """An entry that holds its values (a lone value bare) and not ``keys``: :attr:`Entry.keys` makes them again."""
    return Entry(_ONE, values[0], rid) if len(values) == 1 else Entry(None, values, rid)


def _check_parallel_arrays(spec: IndexDefinition, array_fields: list[AbstractSet[str]]) -> None:
    with_arrays = [prefixes for prefixes in array_fields if prefixes]
    for first, second in itertools.combinations(with_arrays, 2):
        if not first & second:
            raise not_modelled(
                f"parallel arrays (a document has arrays in two fields of index {spec.name!r}, "
                "which MongoDB refuses to store)"
            )


def key_document(paths: Sequence[str], values: Sequence[Any], hashed: frozenset[str] = frozenset()) -> dict[str, Any]:
    """An index key rebuilt as a (nested) document, for covered filters and projections; a hashed
    field's key (a hash, not the value) is left out."""
    document: dict[str, Any] = {}
    for path, value in zip(paths, values, strict=True):
        if path in hashed:
            continue
        node = document
        parts = path.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return document

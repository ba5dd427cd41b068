"""Walking an index the way MongoDB's IXSCAN does, counting every key the cursor lands on.

Follows src/mongo/db/exec/index_scan.cpp (IndexScan::doWork, initIndexScan) and the
IndexBoundsChecker in src/mongo/db/query/index_bounds.cpp (checkKey, findIntervalForField,
spaceLeftToAdvance): a single-interval scan stops at an end position without examining the key
beyond it; any other scan examines the key that fails the bounds, then seeks past the gap.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from workbook.planner.bounds import OIL, Interval, orient, render_bounds, single_interval
from workbook.planner.keys import Entry, IndexData, key_document
from workbook.planner.predicates import Predicate, serialize_all
from workbook.planner.stages import ADVANCED, IS_EOF, NEED_TIME, Member, Stage

VALID, DONE, MUST_ADVANCE = "VALID", "DONE", "MUST_ADVANCE"
BEHIND, WITHIN, AHEAD = -1, 0, 1


def _sgn(a: tuple, b: tuple) -> int:
    return (a > b) - (a < b)


@dataclass
class SeekPoint:
    """Where to seek next: a prefix of the current key, then interval starts (IndexSeekPoint)."""

    prefix: tuple[tuple, ...]
    prefix_len: int
    prefix_exclusive: bool
    suffix: list[tuple]
    suffix_inclusive: list[bool]


class BoundsChecker:
    """IndexBoundsChecker: is a key inside the bounds, past them, or should the cursor seek?"""

    def __init__(self, oils: Sequence[OIL], directions: Sequence[int]) -> None:
        self.oils = oils
        self.directions = directions
        self.current = [0] * len(oils)

    def start_seek_point(self) -> SeekPoint | None:
        """The first interval start of every field; None when some field allows nothing."""
        if any(not oil for oil in self.oils):
            return None
        return SeekPoint(
            (), 0, False, [oil[0].start_key for oil in self.oils], [oil[0].start_inclusive for oil in self.oils]
        )

    def _location(self, interval: Interval, key: tuple, direction: int) -> int:
        cmp = _sgn(key, interval.start_key)
        if not (cmp == direction or (cmp == 0 and interval.start_inclusive)):
            return BEHIND
        cmp = _sgn(key, interval.end_key)
        if not (cmp == -direction or (cmp == 0 and interval.end_inclusive)):
            return AHEAD
        return WITHIN

    def _leftmost_problem(self, keys: tuple) -> tuple[int, int] | None:
        for i, oil in enumerate(self.oils):
            where = self._location(oil[self.current[i]], keys[i], self.directions[i])
            if where != WITHIN:
                return i, where
        return None

    def _find_interval(self, key: tuple, i: int) -> tuple[int, int]:
        oil, direction = self.oils[i], self.directions[i]
        lo, hi = 0, len(oil)
        while lo < hi:  # lower_bound: first interval the key is not ahead of
            mid = (lo + hi) // 2
            if self._location(oil[mid], key, direction) == AHEAD:
                lo = mid + 1
            else:
                hi = mid
        if lo == len(oil):
            return AHEAD, -1
        return self._location(oil[lo], key, direction), lo

    def _space_left(self, fields: int, keys: tuple) -> bool:
        for i in range(fields):
            if self.current[i] != len(self.oils[i]) - 1:
                return True
            interval = self.oils[i][self.current[i]]
            if not interval.end_inclusive:
                return True
            if -self.directions[i] == _sgn(keys[i], interval.end_key):
                return True
        return False

    def _seek_to_current(self, keys: tuple, first: int) -> SeekPoint:
        suffix = [self.oils[j][self.current[j]].start_key for j in range(len(self.oils))]
        inclusive = [self.oils[j][self.current[j]].start_inclusive for j in range(len(self.oils))]
        return SeekPoint(keys, first, False, suffix, inclusive)

    def check(self, keys: tuple) -> tuple[str, SeekPoint | None]:
        """checkKey: VALID, DONE, or MUST_ADVANCE with the point to seek to."""
        problem = self._leftmost_problem(keys)
        if problem is None:
            return VALID, None
        first, where = problem
        if where == BEHIND:
            for i in range(first, len(self.current)):
                self.current[i] = 0
            problem = self._leftmost_problem(keys)
            if problem is None:
                return VALID, None
            first, where = problem
        if where == BEHIND:
            return MUST_ADVANCE, self._seek_to_current(keys, first)
        while first < len(self.current):
            where, found = self._find_interval(keys[first], first)
            if where == WITHIN:
                self.current[first] = found
                first += 1
            elif where == BEHIND:
                self.current[first] = found
                for i in range(first + 1, len(self.current)):
                    self.current[i] = 0
                return MUST_ADVANCE, self._seek_to_current(keys, first)
            else:
                if not self._space_left(first, keys):
                    return DONE, None
                for i in range(first, len(self.current)):
                    self.current[i] = 0
                return MUST_ADVANCE, SeekPoint(keys, first, True, [], [])
        return VALID, None


class IndexScan(Stage):
    """IXSCAN over one index, with bounds, direction, optional key filter and deduplication."""

    stage_name = "IXSCAN"

    def __init__(
        self,
        index: IndexData,
        oils: Sequence[OIL],
        direction: int,
        *,
        key_filter: Sequence[Predicate] = (),
    ) -> None:
        super().__init__([])
        self.index = index
        self.direction = direction
        self.field_directions = [d for _, d in index.spec.fields]
        self.expected = [d * direction for d in self.field_directions]
        # oils arrive ascending; align each to its field's direction, then to the scan direction.
        self.oils = [orient(orient(oil, fd), direction) for oil, fd in zip(oils, self.field_directions, strict=True)]
        self.key_filter = list(key_filter)
        self.dedup = index.is_multikey
        self.positions = index.positions  # where each entry's record id stands (None: at its own number)
        # read from the end for a backward scan, not copied reversed: a copy was O(n) for every scan
        self.entries, self.backward = index.entries, direction < 0
        self.position = -1
        self.walker: Iterator[Entry] | None = None  # the entries from the last seek on, in this scan's direction
        self.state = "INITIALIZING"
        self.single = single_interval(self.oils)
        self.checker: BoundsChecker | None = None
        self.seek_point: SeekPoint | None = None
        self.keys_examined = self.seeks = self.dups_tested = self.dups_dropped = 0
        self.returned: set[int] = set()
        self.eof = False

    # --- cursor -----------------------------------------------------------------------------
    def _compare_scan(self, keys: tuple, bound: tuple) -> int:
        for i, b in enumerate(bound):
            c = _sgn(keys[i], b) * self.expected[i]
            if c:
                return c
        return 0

    def _before_seek(self, entry: Entry, point: SeekPoint) -> bool:
        keys = entry.keys
        for i in range(point.prefix_len):
            c = _sgn(keys[i], point.prefix[i]) * self.expected[i]
            if c:
                return c < 0
        if point.prefix_exclusive:
            return True
        for i in range(point.prefix_len, len(keys)):
            c = _sgn(keys[i], point.suffix[i]) * self.expected[i]
            if c:
                return c < 0
            if not point.suffix_inclusive[i]:
                return True
        return False

    def _first_not_before(self, before: Any) -> int:
        lo, hi = max(self.position, 0), len(self.entries)
        while lo < hi:
            mid = (lo + hi) // 2
            if before(self._entry(mid)):
                lo = mid + 1
            else:
                hi = mid
        return lo

    def _entry(self, position: int) -> Entry:
        """The entry at ``position`` in this scan's direction."""
        return self.entries[~position] if self.backward else self.entries[position]

    def _at(self, position: int) -> Entry | None:
        walker = self.walker if position == self.position + 1 else None
        self.position = position
        if position >= len(self.entries):
            return None
        if walker is None:  # a seek: read on from here
            walker = self.walker = self.entries.walk(position, self.backward)
        entry = next(walker)
        if self.single is not None:
            c = self._compare_scan(entry.keys, self.single.end)
            if c > 0 or (c == 0 and not self.single.end_inclusive):
                return None  # the cursor's end position: this key is never examined
        return entry

    def _init(self) -> Entry | None:
        self.seeks += 1
        if self.single is not None:
            start, inclusive = self.single.start, self.single.start_inclusive

            def before(entry: Entry) -> bool:
                c = self._compare_scan(entry.keys, start)
                return c < 0 or (c == 0 and not inclusive)

            return self._at(self._first_not_before(before))
        self.checker = BoundsChecker(self.oils, self.expected)
        point = self.checker.start_seek_point()
        if point is None:
            return None
        return self._at(self._first_not_before(lambda e: self._before_seek(e, point)))

    # --- PlanStage::work --------------------------------------------------------------------
    def do_work(self) -> tuple[str, Member | None]:
        if self.state == "HIT_END":
            return IS_EOF, None
        if self.state == "INITIALIZING":
            entry = self._init()
        elif self.state == "NEED_SEEK" and self.seek_point is not None:
            self.seeks += 1
            seek = self.seek_point
            entry = self._at(self._first_not_before(lambda e: self._before_seek(e, seek)))
        else:
            entry = self._at(self.position + 1)
        if entry is not None:
            self.keys_examined += 1
        if entry is not None and self.checker is not None:
            verdict, next_seek = self.checker.check(entry.keys)
            if verdict == DONE:
                entry = None
            elif verdict == MUST_ADVANCE:
                self.state, self.seek_point = "NEED_SEEK", next_seek
                return NEED_TIME, None
        if entry is None:
            self.state, self.eof = "HIT_END", True
            return IS_EOF, None
        self.state = "GETTING_NEXT"
        if self.dedup:
            self.dups_tested += 1
            if entry.rid in self.returned:
                self.dups_dropped += 1
                return NEED_TIME, None
        if self.key_filter and not self._key_passes(entry):
            return NEED_TIME, None
        if self.dedup:
            self.returned.add(entry.rid)
        return ADVANCED, Member(entry.rid if self.positions is None else int(self.positions[entry.rid]), entry=entry)

    def _key_passes(self, entry: Entry) -> bool:
        return all(
            p.matches(key_document(self.index.spec.paths, entry.values, self.index.spec.hashed), None)
            for p in self.key_filter
        )

    def is_eof(self) -> bool:
        return self.eof

    # --- explain ----------------------------------------------------------------------------
    def plan_fields(self) -> dict[str, Any]:
        spec = self.index.spec
        fields: dict[str, Any] = {}
        if self.key_filter:
            fields["filter"] = serialize_all(self.key_filter)
        fields |= {
            "keyPattern": spec.key_pattern,
            "indexName": spec.name,
        }
        if spec.collation:
            fields["collation"] = dict(spec.collation)
        fields |= {
            "isMultiKey": self.index.is_multikey,
            "multiKeyPaths": {k: list(v) for k, v in self.index.multikey_paths.items()},
            "isUnique": spec.unique,
            "isSparse": spec.sparse,
            "isPartial": spec.partial is not None,
            "indexVersion": 2,
            "direction": "forward" if self.direction > 0 else "backward",
            "indexBounds": render_bounds(spec.paths, self.oils, spec.collate),
        }
        return fields

    def stats_fields(self) -> dict[str, Any]:
        return {
            "keysExamined": self.keys_examined,
            "seeks": self.seeks,
            "dupsTested": self.dups_tested,
            "dupsDropped": self.dups_dropped,
        }

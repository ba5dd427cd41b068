"""Index bounds: the intervals a predicate allows on one index field, as MongoDB builds and prints them.

Follows src/mongo/db/query/index_bounds_builder.cpp (translate, simpleRegex, isSingleInterval) and
index_bounds.cpp (OrderedIntervalList::complement, reverse).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bson import Code, ObjectId, Regex, Timestamp

from workbook.planner.predicates import NEGATABLE, Predicate, is_nan
from workbook.planner.unsupported import not_modelled
from workbook.planner.values import (
    MAX_DATE_MS,
    MAX_KEY,
    MIN_DATE_MS,
    MIN_KEY,
    RANK_BOOL,
    RANK_CODE,
    RANK_CODE_WITH_SCOPE,
    RANK_DATE,
    RANK_MAXKEY,
    RANK_MINKEY,
    RANK_NULL,
    RANK_NUMBER,
    RANK_OBJECT,
    RANK_OBJECTID,
    RANK_STRING,
    RANK_TIMESTAMP,
    RANK_UNDEFINED,
    UNDEFINED,
    Collate,
    DateBound,
    regex_parts,
    render,
    sort_key,
    type_rank,
)

EXACT, INEXACT_COVERED, INEXACT_FETCH = "EXACT", "INEXACT_COVERED", "INEXACT_FETCH"


@dataclass(frozen=True)
class Interval:
    """One interval between two BSON values, with their (collated) sort keys."""

    start: Any
    end: Any
    start_inclusive: bool
    end_inclusive: bool
    start_key: tuple
    end_key: tuple

    @classmethod
    def of(cls, start: Any, end: Any, start_inc: bool, end_inc: bool, collate: Collate | None) -> Interval:
        """An interval whose keys are computed under the index collation."""
        return cls(start, end, start_inc, end_inc, sort_key(start, collate), sort_key(end, collate))

    def reversed(self) -> Interval:
        """The same interval walked the other way."""
        return Interval(self.end, self.start, self.end_inclusive, self.start_inclusive, self.end_key, self.start_key)

    @property
    def is_point(self) -> bool:
        """Whether the interval holds exactly one value."""
        return self.start_inclusive and self.end_inclusive and self.start_key == self.end_key

    def is_all_values(self) -> bool:
        """[MinKey, MaxKey] in either direction."""
        ends = {type_rank(self.start), type_rank(self.end)}
        return ends == {-1, 127} and self.start_inclusive and self.end_inclusive

    def render(self, collate: Collate | None) -> str:
        """The interval as explain prints it, e.g. ``(5, inf.0]``."""

        def bound(value: Any) -> str:
            if collate is not None and isinstance(value, str):
                return f"CollationKey(0x{collate(value).encode().hex()})"
            return render(value)

        left = "[" if self.start_inclusive else "("
        right = "]" if self.end_inclusive else ")"
        return f"{left}{bound(self.start)}, {bound(self.end)}{right}"


OIL = list[Interval]


def all_values(collate: Collate | None = None) -> OIL:
    """[MinKey, MaxKey]."""
    return [Interval.of(MIN_KEY, MAX_KEY, True, True, collate)]


def _point(value: Any, collate: Collate | None) -> Interval:
    return Interval.of(value, value, True, True, collate)


def _type_ends(value: Any) -> tuple[Any, Any]:
    """The lowest and highest values of the value's canonical type (type bracketing)."""
    rank = type_rank(value)
    if rank == RANK_NUMBER:
        return float("-inf"), float("inf")
    if rank == RANK_STRING:
        return "", {}
    if rank == RANK_DATE:
        return DateBound(MIN_DATE_MS), DateBound(MAX_DATE_MS)
    if rank == RANK_OBJECTID:
        return ObjectId("0" * 24), ObjectId("f" * 24)
    if rank == RANK_BOOL:
        return False, True
    if rank == RANK_OBJECT:
        return {}, []  # appendMaxForType(Object) is the smallest array
    if rank == RANK_TIMESTAMP:
        return Timestamp(0, 0), Timestamp(2**32 - 1, 2**32 - 1)
    if rank == RANK_CODE:  # JavaScript code sorts by its text; code with a scope comes next
        return Code(""), Code("", {})
    if rank == RANK_CODE_WITH_SCOPE:
        return Code("", {}), MAX_KEY
    raise not_modelled(f"range comparisons on values of type {type(value).__name__}")


def _collated(value: Any, collate: Collate | None) -> bool:
    return collate is not None and isinstance(value, str)


def translate(
    predicate: Predicate, collate: Collate | None, *, sparse: bool = False, multikey: bool = False
) -> tuple[OIL, str]:
    """Bounds (ascending) and tightness for one predicate on one index field."""
    op, value = predicate.op, predicate.value
    if op == "$eq":
        return _equality(value, collate)
    if op in ("$gt", "$gte", "$lt", "$lte"):
        special = _special_range(op, value, collate, multikey)
        if special is not None:
            return special
        low, high = _type_ends(value)
        if op in ("$gt", "$gte"):
            oil = [Interval.of(value, high, op == "$gte", type_rank(high) == type_rank(value), collate)]
        else:
            oil = [Interval.of(low, value, True, op == "$lte", collate)]
        return oil, INEXACT_FETCH if _collated(value, collate) else EXACT
    if op == "$in":
        return _in(value, collate)
    if op in ("$ne", "$nin"):
        positive, tightness = _equality(value, collate) if op == "$ne" else _in(value, collate)
        inexact = multikey or tightness != EXACT or value is None or (op == "$nin" and None in value)
        return complement(positive, collate), INEXACT_FETCH if inexact else EXACT
    if op == "$exists":
        if value:
            return all_values(collate), EXACT if sparse else INEXACT_FETCH
        return [_point(None, collate)], INEXACT_FETCH
    if op == "$regex":
        return _regex(value, collate)
    if op == "$type":
        return _type_bracket(value, collate)
    if op == "$mod":  # every number, each key checked (IndexBoundsBuilder::translate for MOD)
        return [Interval.of(float("nan"), float("inf"), True, True, collate)], INEXACT_COVERED
    if op == "$not":
        if not all(inner.op in NEGATABLE for inner in value):
            raise not_modelled("index bounds for $not of a regular expression or $type")
        if len(value) == 1 and value[0].op == "$exists":
            # {$not: {$exists: b}} is {$exists: !b}: the complement of $exists's loose bounds
            # ([MinKey, MaxKey] holds the missing field's null key too) would drop missing fields
            flipped = Predicate(predicate.path, "$exists", not value[0].value)
            return translate(flipped, collate, sparse=sparse, multikey=multikey)[0], INEXACT_FETCH
        positive = all_values(collate)
        for inner in value:
            positive = intersect(positive, translate(inner, collate, sparse=sparse, multikey=multikey)[0])
        return complement(positive, collate), INEXACT_FETCH
    raise not_modelled(f"index bounds for {op}")


def _special_range(op: str, value: Any, collate: Collate | None, multikey: bool) -> tuple[OIL, str] | None:
    """The cases IndexBoundsBuilder::translate handles before type bracketing: MinKey and MaxKey
    operands, NaN (only NaN is <= or >= NaN; nothing is < or > it) and null ($gte/$lte null is
    {$eq: null}; nothing is above or below null)."""
    rank = type_rank(value)
    exact = INEXACT_FETCH if collate is not None else EXACT
    if rank == RANK_MINKEY:
        if op == "$gte":
            return all_values(collate), exact
        if op == "$gt":
            return [Interval.of(MIN_KEY, MAX_KEY, multikey, True, collate)], (
                INEXACT_FETCH if collate is not None or multikey else EXACT
            )
        if op == "$lte":
            return [_point(MIN_KEY, collate)], exact
        return [], EXACT
    if rank == RANK_MAXKEY:
        if op == "$lte":
            return all_values(collate), exact
        if op == "$lt":
            return [Interval.of(MIN_KEY, MAX_KEY, True, multikey, collate)], (
                INEXACT_FETCH if collate is not None or multikey else EXACT
            )
        if op == "$gte":
            return [_point(MAX_KEY, collate)], exact
        return [], EXACT
    if rank == RANK_NUMBER and is_nan(value):
        return ([_point(value, collate)] if op in ("$gte", "$lte") else []), EXACT
    if rank in (RANK_NULL, RANK_UNDEFINED):
        if op in ("$gte", "$lte"):
            return _equality(None, collate)
        return [], EXACT
    return None


def _type_bracket(codes: Sequence[int | str], collate: Collate | None) -> tuple[OIL, str]:
    """Each type's whole bracket (IndexBoundsBuilder::translate for TYPE_OPERATOR); fetched to check the type."""
    brackets: list[Interval] = []
    for code in codes:
        if code == 4:  # an array's keys are its elements: any value
            return all_values(collate), INEXACT_FETCH
        ends = _TYPE_BRACKETS.get(code)
        if ends is None:
            return all_values(collate), INEXACT_FETCH
        low, high, high_inclusive = ends
        brackets.append(Interval.of(low, high, True, high_inclusive, collate))
    unique = {(i.start_key, i.end_key): i for i in brackets}
    return sorted(unique.values(), key=lambda i: i.start_key), INEXACT_FETCH


_TYPE_BRACKETS: dict[int | str, tuple[Any, Any, bool]] = {
    "number": (float("nan"), float("inf"), True),
    1: (float("nan"), float("inf"), True),
    16: (float("nan"), float("inf"), True),
    18: (float("nan"), float("inf"), True),
    19: (float("nan"), float("inf"), True),
    2: ("", {}, False),
    3: ({}, [], False),
    7: (ObjectId("0" * 24), ObjectId("f" * 24), True),
    8: (False, True, True),
    9: (DateBound(MIN_DATE_MS), DateBound(MAX_DATE_MS), True),
    10: (None, None, True),
}


def _equality(value: Any, collate: Collate | None) -> tuple[OIL, str]:
    if value is None:
        return [_point(UNDEFINED, collate), _point(None, collate)], INEXACT_FETCH
    if isinstance(value, list):
        # An array's index keys are its elements: look up the first element (undefined when empty)
        # and the array itself as a value inside an outer array, then check the document.
        first = value[0] if value else UNDEFINED
        points = {sort_key(p, collate): _point(p, collate) for p in (first, value)}
        return [points[k] for k in sorted(points)], INEXACT_FETCH
    return [_point(value, collate)], INEXACT_FETCH if _collated(value, collate) else EXACT


_TIGHTNESS_ORDER = {EXACT: 2, INEXACT_COVERED: 1, INEXACT_FETCH: 0}


def _in(values: Sequence[Any], collate: Collate | None) -> tuple[OIL, str]:
    """The equalities' points and each regex's bounds, unionized; the loosest tightness wins
    (IndexBoundsBuilder::translate for MATCH_IN, _mergeTightness)."""
    points: dict[tuple, Interval] = {}
    ranges: OIL = []
    tightness = EXACT
    for value in values:
        if isinstance(value, Regex | re.Pattern):
            oil, tight = _regex(value, collate)
            ranges.extend(oil)
        else:
            oil, tight = _equality(value, collate)
            for interval in oil:
                points.setdefault(interval.start_key, interval)
        if _TIGHTNESS_ORDER[tight] < _TIGHTNESS_ORDER[tightness]:
            tightness = tight
    if ranges:
        return unionize([*points.values(), *ranges]), tightness
    return [points[k] for k in sorted(points)], tightness


def unionize(oil: OIL) -> OIL:
    """Sorted, with overlapping or touching intervals merged (OrderedIntervalList unionize)."""
    ordered = sorted(oil, key=lambda i: (i.start_key, not i.start_inclusive))
    out: OIL = []
    for interval in ordered:
        if out:
            last = out[-1]
            touches = interval.start_key < last.end_key or (
                interval.start_key == last.end_key and (interval.start_inclusive or last.end_inclusive)
            )
            if touches:
                if (interval.end_key, interval.end_inclusive) > (last.end_key, last.end_inclusive):
                    out[-1] = Interval(
                        last.start,
                        interval.end,
                        last.start_inclusive,
                        interval.end_inclusive,
                        last.start_key,
                        interval.end_key,
                    )
                continue
        out.append(interval)
    return out


_METACHARACTERS = set("^$.[()+{")  # pcrepattern's metacharacters that end a literal prefix


def _ascii_alnum(c: str) -> bool:
    return c.isascii() and c.isalnum()


def _has_unescaped_pipe(pattern: str) -> bool:
    r"""Whether the regex holds an alternation '|'. A pipe counts as escaped only behind exactly one
    backslash, as MongoDB 8.0 reads it (index_bounds_pipe.js: ``/^\\\|/`` and ``/^\Q|\E/`` are not tight)."""
    for i, c in enumerate(pattern):
        if c == "|" and not (i >= 1 and pattern[i - 1] == "\\" and (i < 2 or pattern[i - 2] != "\\")):
            return True
    return False


def simple_regex_prefix(pattern: str, flags: str) -> tuple[str, bool]:
    r"""The literal prefix a rooted regex pins down, and whether that prefix is the whole regex.

    Follows IndexBoundsBuilder::simpleRegex: ``\Q...\E`` quotes literally, a backslash before an
    ASCII non-alphanumeric character (or any non-ASCII one, ``^\é``) stands for that character.

    >>> simple_regex_prefix("^abc", ""), simple_regex_prefix("^ab.c", ""), simple_regex_prefix("abc", "")
    (('abc', True), ('ab', False), ('', False))
    >>> simple_regex_prefix("^abc", "i"), simple_regex_prefix(r"^\Q[\Ewi\Qth]some?s\Eym", "")
    (('', False), ('[with]some?sym', True))
    """
    if pattern.startswith("\\A"):
        multiline_ok, rest = True, pattern[2:]
    elif pattern.startswith("^"):
        multiline_ok, rest = False, pattern[1:]
    else:
        return "", False
    if _has_unescaped_pipe(rest):
        return "", False
    extended = False
    for flag in flags:
        if flag == "m" and multiline_ok or flag == "s":
            continue
        if flag == "x":
            extended = True
            continue
        return "", False
    prefix: list[str] = []
    i = 0
    while i < len(rest):
        c = rest[i]
        i += 1
        if c in "*?":  # the only symbols that make the previous character optional
            if prefix:
                prefix.pop()
            return "".join(prefix), False
        if c == "\\":
            nxt = rest[i] if i < len(rest) else ""
            i += 1
            if nxt == "Q":  # \Q...\E: everything up to \E matches itself
                end = rest.find("\\E", i)
                quoted = rest[i:] if end < 0 else rest[i:end]
                prefix.extend(quoted)
                i = len(rest) if end < 0 else end + 2
                continue
            if not nxt or _ascii_alnum(nxt):  # \d, \w, \b...: a class, not a literal
                return "".join(prefix), False
            prefix.append(nxt)
            continue
        if c in _METACHARACTERS or (extended and c == "#"):
            return "".join(prefix), False
        if extended and c.isspace():
            continue
        prefix.append(c)
    return "".join(prefix), True


def _regex(value: Regex | re.Pattern, collate: Collate | None) -> tuple[OIL, str]:
    pattern, flags = regex_parts(value)
    regex_point = Interval.of(value, value, True, True, collate)
    if collate is not None:
        return [Interval.of("", {}, True, False, collate), regex_point], INEXACT_FETCH
    prefix, whole = simple_regex_prefix(pattern, flags)
    if prefix:
        upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        strings = Interval.of(prefix, upper, True, False, collate)
        return [strings, regex_point], EXACT if whole else INEXACT_COVERED
    return [Interval.of("", {}, True, False, collate), regex_point], INEXACT_COVERED


def intersect(left: OIL, right: OIL) -> OIL:
    """The intervals both lists allow (both ascending)."""
    out: OIL = []
    for a in left:
        for b in right:
            if (a.start_key, not a.start_inclusive) >= (b.start_key, not b.start_inclusive):
                start, start_key, start_inc = a.start, a.start_key, a.start_inclusive
            else:
                start, start_key, start_inc = b.start, b.start_key, b.start_inclusive
            if (a.end_key, a.end_inclusive) <= (b.end_key, b.end_inclusive):
                end, end_key, end_inc = a.end, a.end_key, a.end_inclusive
            else:
                end, end_key, end_inc = b.end, b.end_key, b.end_inclusive
            if start_key < end_key or (start_key == end_key and start_inc and end_inc):
                out.append(Interval(start, end, start_inc, end_inc, start_key, end_key))
    return sorted(out, key=lambda i: (i.start_key, not i.start_inclusive))


def complement(oil: OIL, collate: Collate | None) -> OIL:
    """Everything outside the intervals, from MinKey to MaxKey (OrderedIntervalList::complement)."""
    out: OIL = []
    boundary: Any = MIN_KEY
    boundary_inc = False
    boundary_key = sort_key(MIN_KEY)
    for interval in oil:
        provably_empty = boundary is UNDEFINED and boundary_inc and interval.start is None and interval.start_inclusive
        if (boundary_key != interval.start_key or (not boundary_inc and not interval.start_inclusive)) and (
            not provably_empty
        ):
            out.append(
                Interval(
                    boundary,
                    interval.start,
                    not boundary_inc,
                    not interval.start_inclusive,
                    boundary_key,
                    interval.start_key,
                )
            )
        boundary, boundary_inc, boundary_key = interval.end, interval.end_inclusive, interval.end_key
    max_key = sort_key(MAX_KEY)
    if boundary_key != max_key or not boundary_inc:
        out.append(Interval(boundary, MAX_KEY, not boundary_inc, True, boundary_key, max_key))
    return out


def orient(oil: OIL, direction: int) -> OIL:
    """An ascending list turned to run in ``direction`` (reverse order and swap ends when -1)."""
    if direction >= 0:
        return list(oil)
    return [interval.reversed() for interval in reversed(oil)]


def render_bounds(fields: Sequence[str], oils: Sequence[OIL], collate: Collate | None) -> dict[str, list[str]]:
    """indexBounds as explain prints them."""
    return {name: [i.render(collate) for i in oil] for name, oil in zip(fields, oils, strict=True)}


@dataclass(frozen=True)
class SingleInterval:
    """Bounds that reduce to one start key and one end key (IndexBoundsBuilder::isSingleInterval)."""

    start: tuple[tuple, ...]
    start_inclusive: bool
    end: tuple[tuple, ...]
    end_inclusive: bool


def single_interval(oils: Sequence[OIL]) -> SingleInterval | None:
    """Points, then at most one non-point interval, then only all-values intervals; else None."""
    start: list[tuple] = []
    end: list[tuple] = []
    start_inc = end_inc = True
    i = 0
    while i < len(oils) and len(oils[i]) == 1 and oils[i][0].is_point:
        start.append(oils[i][0].start_key)
        end.append(oils[i][0].end_key)
        i += 1
    if i == len(oils):
        return SingleInterval(tuple(start), start_inc, tuple(end), end_inc)
    if len(oils[i]) != 1:
        return None
    interval = oils[i][0]
    start.append(interval.start_key)
    end.append(interval.end_key)
    start_inc, end_inc = interval.start_inclusive, interval.end_inclusive
    i += 1
    min_key, max_key = sort_key(MIN_KEY), sort_key(MAX_KEY)
    for oil in oils[i:]:
        if len(oil) != 1 or not oil[0].is_all_values():
            return None
        ascending = oil[0].start_key == min_key
        low, high = (min_key, max_key) if ascending else (max_key, min_key)
        start.append(high if not start_inc else low)
        end.append(high if end_inc else low)
    return SingleInterval(tuple(start), start_inc, tuple(end), end_inc)

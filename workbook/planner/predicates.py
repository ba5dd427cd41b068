"""A find filter as a list of leaf predicates, and how each one matches a document."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bson import Regex

from workbook.planner.unsupported import not_modelled
from workbook.planner.values import (
    MISSING,
    RANK_NULL,
    RANK_UNDEFINED,
    UNDEFINED,
    Collate,
    compare,
    regex_parts,
    sort_key,
    to_json_value,
    type_rank,
)

COMPARISONS = ("$lt", "$lte", "$gt", "$gte")
# MatchExpression::MatchType order, which CanonicalQuery uses to sort the children of an $and.
_MATCH_TYPE_ORDER = {"$eq": 2, "$lte": 3, "$lt": 4, "$gt": 5, "$gte": 6, "$regex": 7, "$exists": 9, "$in": 10}
_NEGATIONS = {"$ne", "$nin"}


@dataclass(frozen=True)
class Predicate:
    """One leaf of the filter: ``path op value`` (all leaves are ANDed together)."""

    path: str
    op: str
    value: Any

    @property
    def sort_rank(self) -> int:
        """Where CanonicalQuery puts this leaf when it sorts an $and."""
        if self.op in _NEGATIONS or (self.op == "$exists" and not self.value):
            return 14
        return _MATCH_TYPE_ORDER[self.op]

    def serialize(self) -> dict:
        """The leaf as MongoDB prints it in parsedQuery and stage filters."""
        if self.op == "$ne":
            return {self.path: {"$not": {"$eq": to_json_value(self.value)}}}
        if self.op == "$nin":
            return {self.path: {"$not": {"$in": [to_json_value(v) for v in self.value]}}}
        if self.op == "$exists":
            return {self.path: {"$exists": True}} if self.value else {self.path: {"$not": {"$exists": True}}}
        if self.op == "$regex":
            pattern, flags = regex_parts(self.value)
            body: dict[str, Any] = {"$regex": pattern}
            if flags:
                body["$options"] = flags
            return {self.path: body}
        if self.op == "$in":
            return {self.path: {"$in": [to_json_value(v) for v in self.value]}}
        return {self.path: {self.op: to_json_value(self.value)}}

    def matches(self, document: Mapping[str, Any], collate: Collate | None = None) -> bool:
        """Whether the document satisfies this leaf (MongoDB semantics: arrays match by element)."""
        found = list(path_values(document, self.path))
        if self.op == "$ne":
            return not any(_equals(v, self.value, collate) for v in found)
        if self.op == "$nin":
            return not any(_in(v, self.value, collate) for v in found)
        if self.op == "$exists":
            return any(v is not MISSING for v in found) == bool(self.value)
        if self.op == "$eq":
            return any(_equals(v, self.value, collate) for v in found)
        if self.op == "$in":
            return any(_in(v, self.value, collate) for v in found)
        if self.op == "$regex":
            return any(_regex_matches(v, self.value) for v in found)
        return any(_compares(v, self.op, self.value, collate) for v in found)


def path_values(value: Any, path: str) -> Iterator[Any]:
    """Every value a dotted path reaches, traversing arrays as MongoDB does (MISSING if none)."""
    yield from _walk(value, path.split("."))


def _walk(value: Any, parts: list[str]) -> Iterator[Any]:
    if not parts:
        yield value
        if isinstance(value, list):
            yield from value
        return
    head, rest = parts[0], parts[1:]
    if isinstance(value, Mapping):
        yield from _walk(value[head], rest) if head in value else iter([MISSING])
    elif isinstance(value, list):
        reached = False
        if head.isdigit() and int(head) < len(value):
            reached = True
            yield from _walk(value[int(head)], rest)
        for element in value:
            if isinstance(element, Mapping):
                reached = True
                yield from _walk(element, parts)
        if not reached:
            yield MISSING
    else:
        yield MISSING


def _equals(candidate: Any, target: Any, collate: Collate | None) -> bool:
    if target is None:
        return candidate is None or candidate is MISSING or candidate is UNDEFINED
    if candidate is MISSING:
        return False
    if isinstance(target, Regex | re.Pattern):
        return _regex_matches(candidate, target)
    return sort_key(candidate, collate) == sort_key(target, collate)


def _in(candidate: Any, targets: Sequence[Any], collate: Collate | None) -> bool:
    return any(_equals(candidate, t, collate) for t in targets)


def _regex_matches(candidate: Any, target: Any) -> bool:
    if isinstance(candidate, Regex | re.Pattern):
        return regex_parts(candidate) == regex_parts(target)
    if not isinstance(candidate, str):
        return False
    pattern, flags = regex_parts(target)
    py_flags = 0
    for letter, bit in (("i", re.IGNORECASE), ("m", re.MULTILINE), ("s", re.DOTALL), ("x", re.VERBOSE)):
        if letter in flags:
            py_flags |= bit
    return re.search(python_pattern(pattern), candidate, py_flags) is not None


def python_pattern(pattern: str) -> str:
    r"""A PCRE pattern in Python's ``re`` dialect: ``\Q...\E`` quoting becomes escaped literals.

    >>> python_pattern(r"^\Q[a|b]\E+")
    '^\\[a\\|b\\]+'
    """
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("\\Q", i):
            end = pattern.find("\\E", i + 2)
            quoted = pattern[i + 2 :] if end < 0 else pattern[i + 2 : end]
            out.append(re.escape(quoted))
            i = len(pattern) if end < 0 else end + 2
        elif pattern[i] == "\\" and i + 1 < len(pattern):
            out.append(pattern[i : i + 2])
            i += 2
        else:
            out.append(pattern[i])
            i += 1
    return "".join(out)


def _compares(candidate: Any, op: str, target: Any, collate: Collate | None) -> bool:
    if candidate is MISSING:
        return False
    # Type bracketing: a comparison only matches values of the same canonical type.
    rank_c, rank_t = type_rank(candidate), type_rank(target)
    if {rank_c, rank_t} <= {RANK_NULL, RANK_UNDEFINED}:
        return op in ("$lte", "$gte")
    if rank_c != rank_t:
        return False
    order = compare(candidate, target, collate)
    return {"$lt": order < 0, "$lte": order <= 0, "$gt": order > 0, "$gte": order >= 0}[op]


_UNSUPPORTED_TOP = ("$or", "$nor", "$expr", "$text", "$where", "$jsonSchema", "$comment")


def parse_filter(query: Mapping[str, Any] | None) -> list[Predicate]:
    """Flatten a find filter into ANDed leaf predicates, sorted as CanonicalQuery sorts them."""
    leaves: list[Predicate] = []
    _collect(query or {}, leaves)
    return sorted(leaves, key=lambda p: (p.sort_rank, p.path))


def _collect(query: Mapping[str, Any], leaves: list[Predicate]) -> None:
    for key, condition in query.items():
        if key == "$and":
            for clause in condition:
                _collect(clause, leaves)
        elif key.startswith("$"):
            raise not_modelled(f"the top-level operator {key}" + (" (OR plans)" if key == "$or" else ""))
        elif isinstance(condition, Mapping) and condition and all(k.startswith("$") for k in condition):
            _collect_operators(key, condition, leaves)
        elif isinstance(condition, Regex | re.Pattern):
            leaves.append(Predicate(key, "$regex", condition))
        else:
            leaves.append(Predicate(key, "$eq", condition))


def _collect_operators(path: str, condition: Mapping[str, Any], leaves: list[Predicate]) -> None:
    options = condition.get("$options", "")
    for op, value in condition.items():
        if op == "$options":
            continue
        if op == "$regex":
            pattern = value.pattern if isinstance(value, Regex | re.Pattern) else value
            flags = options or (regex_parts(value)[1] if isinstance(value, Regex | re.Pattern) else "")
            leaves.append(Predicate(path, "$regex", Regex(pattern, flags)))
        elif op in ("$eq", "$ne", *COMPARISONS):
            if op in COMPARISONS and type_rank(value) in (RANK_NULL, RANK_UNDEFINED):
                raise not_modelled(f"{op} with null")
            if op == "$eq" and isinstance(value, Regex | re.Pattern):
                raise not_modelled("$eq with a regular expression value")
            leaves.append(Predicate(path, op, value))
        elif op in ("$in", "$nin"):
            if any(isinstance(v, Regex | re.Pattern) for v in value):
                raise not_modelled(f"{op} with regular expressions")
            leaves.append(Predicate(path, op, tuple(value)))
        elif op == "$exists":
            leaves.append(Predicate(path, "$exists", bool(value)))
        else:
            raise not_modelled(f"the query operator {op}")


def serialize_all(predicates: Sequence[Predicate]) -> dict:
    """Leaves as MongoDB prints a filter: one leaf alone, several under $and."""
    if not predicates:
        return {}
    if len(predicates) == 1:
        return predicates[0].serialize()
    return {"$and": [p.serialize() for p in predicates]}


def matches_all(predicates: Sequence[Predicate], document: Mapping[str, Any], collate: Collate | None) -> bool:
    """Whether a document satisfies every leaf."""
    return all(p.matches(document, collate) for p in predicates)

"""A find filter as a list of ANDed predicates, and how each one matches a document.

Most predicates are leaves (``path op value``); ``$or``/``$nor`` hold their branches (each a list
of ANDed predicates) and ``$elemMatch`` its inner predicates, as an :class:`ElemMatch`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from bson import Decimal128, Int64, Regex

from workbook.planner.unsupported import invalid_query, not_modelled
from workbook.planner.values import (
    MISSING,
    RANK_BINARY,
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
    RANK_REGEX,
    RANK_STRING,
    RANK_TIMESTAMP,
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
_MATCH_TYPE_ORDER = {
    "$or": 1,
    "$eq": 2,
    "$lte": 3,
    "$lt": 4,
    "$gt": 5,
    "$gte": 6,
    "$regex": 7,
    "$mod": 8,
    "$exists": 9,
    "$in": 10,
    "$nor": 16,
    "$elemMatch": 17,
    "$size": 19,
    "$type": 20,
}
_NOT = 15
_NEGATIONS = {"$ne", "$nin", "$not"}
INDEXABLE = frozenset(
    {"$eq", "$lt", "$lte", "$gt", "$gte", "$in", "$ne", "$nin", "$exists", "$regex", "$type", "$not", "$mod"}
)
NEGATABLE = frozenset({"$eq", "$lt", "$lte", "$gt", "$gte", "$in", "$exists"})
"""Operators whose ``$not`` has index bounds: the complement of theirs (a regex or type's does not)."""


def _negatable(predicate: Predicate) -> bool:
    """Whether the complement of the predicate's bounds is its negation's bounds: not for a regex
    (its bounds are loose) nor for an array (an array's bounds are its first element and itself,
    INEXACT_FETCH), which QueryPlannerIXSelect also refuses to index under a negation."""
    if predicate.op in COMPARISONS:
        return not isinstance(predicate.value, list | tuple)
    if predicate.op not in ("$eq", "$ne", "$in", "$nin"):
        return True
    values = predicate.value if predicate.op in ("$in", "$nin") else (predicate.value,)
    return not has_regex(values) and not any(isinstance(v, list | tuple) for v in values)


def has_regex(values: Any) -> bool:
    """Whether an $in/$nin list holds a regular expression."""
    return any(isinstance(v, Regex | re.Pattern) for v in values)


def indexable(predicate: Predicate) -> bool:
    """Whether a leaf translates to index bounds."""
    if predicate.op == "$not":
        return all(inner.op in NEGATABLE and _negatable(inner) for inner in predicate.value)
    if predicate.op in ("$ne", "$nin"):
        return _negatable(predicate)
    if predicate.op in COMPARISONS and isinstance(predicate.value, list | tuple):
        return False  # a range to a whole array (array_match4.js): no bounds, the document is checked
    return predicate.op in INDEXABLE


"""Leaf operators that translate to index bounds."""

# $type: BSON type codes and their aliases (https://www.mongodb.com/docs/manual/reference/operator/query/type/).
TYPE_ALIASES = {
    "double": 1,
    "string": 2,
    "object": 3,
    "array": 4,
    "binData": 5,
    "undefined": 6,
    "objectId": 7,
    "bool": 8,
    "date": 9,
    "null": 10,
    "regex": 11,
    "javascript": 13,
    "javascriptWithScope": 15,
    "int": 16,
    "timestamp": 17,
    "long": 18,
    "decimal": 19,
    "minKey": -1,
    "maxKey": 127,
}
NUMBER_CODES = frozenset({1, 16, 18, 19})


@dataclass(frozen=True)
class ElemMatch:
    """The inner predicates of an ``$elemMatch``: on each element's fields, or on the element itself."""

    predicates: tuple[Predicate, ...]
    on_objects: bool


@dataclass(frozen=True)
class Predicate:
    """One leaf of the filter: ``path op value`` (all leaves are ANDed together)."""

    path: str
    op: str
    value: Any

    @property
    def sort_rank(self) -> int:
        """Where CanonicalQuery puts this predicate when it sorts an $and."""
        if self.op in _NEGATIONS or (self.op == "$exists" and not self.value):
            return _NOT
        if self.op == "$elemMatch" and not self.value.on_objects:
            return 18
        return _MATCH_TYPE_ORDER[self.op]

    @property
    def branches(self) -> tuple[tuple[Predicate, ...], ...]:
        """The ANDed branches of an ``$or`` or ``$nor`` (empty for other predicates)."""
        return self.value if self.op in ("$or", "$nor") else ()

    def serialize(self) -> dict[str, Any]:
        """The predicate as MongoDB prints it in parsedQuery and stage filters."""
        if self.op in ("$or", "$nor"):
            return {self.op: [serialize_all(branch) for branch in self.value]}
        if self.op == "$elemMatch":
            inner = self.value.predicates
            if self.value.on_objects:
                return {self.path: {"$elemMatch": serialize_all(inner)}}
            body: dict[str, Any] = {}
            for leaf in inner:
                body.update(leaf.serialize()[""])
            return {self.path: {"$elemMatch": body}}
        if self.op == "$type":
            return {self.path: {"$type": list(self.value)}}
        if self.op == "$not":
            negated: dict[str, Any] = {}
            for inner in self.value:
                negated.update(inner.serialize()[self.path])
            return {self.path: {"$not": negated}}
        if self.op == "$size":
            return {self.path: {"$size": self.value}}
        if self.op == "$mod":
            return {self.path: {"$mod": [Int64(v) for v in self.value]}}
        if self.op == "$ne":
            return {self.path: {"$not": {"$eq": to_json_value(self.value)}}}
        if self.op == "$nin":
            return {self.path: {"$not": {"$in": [to_json_value(v) for v in self.value]}}}
        if self.op == "$exists":
            return {self.path: {"$exists": True}} if self.value else {self.path: {"$not": {"$exists": True}}}
        if self.op == "$regex":
            pattern, flags = regex_parts(self.value)
            regex: dict[str, Any] = {"$regex": pattern}
            if flags:
                regex["$options"] = flags
            return {self.path: regex}
        if self.op == "$in":
            return {self.path: {"$in": [to_json_value(v) for v in self.value]}}
        return {self.path: {self.op: to_json_value(self.value)}}

    def matches(self, document: Mapping[str, Any], collate: Collate | None = None) -> bool:
        """Whether the document satisfies this predicate (MongoDB semantics: arrays match by element)."""
        if self.op == "$or":
            return any(matches_all(branch, document, collate) for branch in self.value)
        if self.op == "$nor":
            return not any(matches_all(branch, document, collate) for branch in self.value)
        if self.op in ("$elemMatch", "$size"):
            # These look at the arrays the path reaches, not at arrays inside them (the leaf
            # array is not expanded: elemmatch_value.js, size.js).
            reached = list(path_values(document, self.path, expand_leaf=False)) if self.path else [document]
            if self.op == "$size":
                return any(isinstance(v, list) and len(v) == self.value for v in reached)
            return any(self._element_matches(e, collate) for v in reached if isinstance(v, list) for e in v)
        found = list(path_values(document, self.path)) if self.path else [document]
        if self.op == "$not":
            return not matches_all(self.value, document, collate)
        if self.op == "$type":
            return any(v is not MISSING and _has_type(v, self.value) for v in found)
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
        if self.op == "$mod":
            return any(_mod_matches(v, *self.value) for v in found)
        return any(_compares(v, self.op, self.value, collate) for v in found)

    def _element_matches(self, element: Any, collate: Collate | None) -> bool:
        # ElemMatchObjectMatchExpression takes any element that is a BSON object, arrays included
        # ({$elemMatch: {"0": "x"}} finds [["x"]]); ElemMatchValueMatchExpression matches each
        # element itself, never descending into a nested array (elemmatch_value.js).
        if self.value.on_objects:
            if isinstance(element, list):  # an array as a BSON object: fields "0", "1", ... (no traversal)
                element = {str(i): e for i, e in enumerate(element)}
            return isinstance(element, Mapping) and matches_all(self.value.predicates, element, collate)
        return all(leaf.matches_value(element, collate) for leaf in self.value.predicates)

    def matches_value(self, value: Any, collate: Collate | None = None) -> bool:
        """Whether one value (an array element, for ``$elemMatch``) satisfies this leaf as a single
        element (``matchesSingleElement``): an array element that is itself an array is compared
        whole, not traversed."""
        op, target = self.op, self.value
        if op == "$eq":
            return _equals(value, target, collate)
        if op == "$ne":
            return not _equals(value, target, collate)
        if op == "$in":
            return _in(value, target, collate)
        if op == "$nin":
            return not _in(value, target, collate)
        if op == "$exists":
            return bool(target)
        if op == "$regex":
            return _regex_matches(value, target)
        if op == "$type":
            return _has_type(value, target)
        if op == "$size":
            return isinstance(value, list) and len(value) == target
        if op == "$mod":
            return _mod_matches(value, *target)
        if op == "$not":
            return not all(inner.matches_value(value, collate) for inner in target)
        if op == "$elemMatch":
            return isinstance(value, list) and any(self._element_matches(e, collate) for e in value)
        if op in COMPARISONS:
            return _compares(value, op, target, collate)
        raise not_modelled(f"{op} inside $elemMatch on values")


def _has_type(value: Any, codes: Sequence[int | str]) -> bool:
    rank = type_rank(value)
    for code in codes:
        if code == "number" and rank == RANK_NUMBER:
            return True
        if code == 4 and isinstance(value, list):
            return True
        if code in NUMBER_CODES and rank == RANK_NUMBER:
            if _number_code(value) == int(code):
                return True
        elif isinstance(code, int) and code not in (4, *NUMBER_CODES) and _CODE_RANKS.get(code) == rank:
            return True
    return False


def _number_code(value: Any) -> int:
    """The BSON type a number is stored as: double 1, int 16, long 18 (an Int64, or an int beyond
    32 bits, as pymongo encodes it), decimal 19."""
    if isinstance(value, float):
        return 1
    if isinstance(value, Decimal128):
        return 19
    if isinstance(value, Int64) or not -(2**31) <= value < 2**31:
        return 18
    return 16


_CODE_RANKS = {
    -1: RANK_MINKEY,
    2: RANK_STRING,
    3: RANK_OBJECT,
    5: RANK_BINARY,
    6: RANK_UNDEFINED,
    7: RANK_OBJECTID,
    8: RANK_BOOL,
    9: RANK_DATE,
    10: RANK_NULL,
    11: RANK_REGEX,
    13: RANK_CODE,
    15: RANK_CODE_WITH_SCOPE,
    17: RANK_TIMESTAMP,
    127: RANK_MAXKEY,
}


def path_values(value: Any, path: str, *, expand_leaf: bool = True) -> Iterator[Any]:
    """Every value a dotted path reaches, traversing arrays as MongoDB does (MISSING if none);
    ``expand_leaf=False`` keeps an array at the end of the path whole, without its elements."""
    yield from _walk(value, path.split("."), expand_leaf)


def _walk(value: Any, parts: list[str], expand_leaf: bool = True) -> Iterator[Any]:
    if not parts:
        yield value
        if expand_leaf and isinstance(value, list):
            yield from value
        return
    head, rest = parts[0], parts[1:]
    if isinstance(value, Mapping):
        yield from _walk(value[head], rest, expand_leaf) if head in value else iter([MISSING])
    elif isinstance(value, list):
        reached = False
        if head.isdigit() and int(head) < len(value):
            reached = True
            yield from _walk(value[int(head)], rest, expand_leaf)
        for element in value:
            if isinstance(element, Mapping):
                reached = True
                yield from _walk(element, parts, expand_leaf)
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


def is_nan(value: Any) -> bool:
    """Whether a number is NaN (double or Decimal128)."""
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, Decimal128):
        return value.to_decimal().is_nan()
    return False


def _compares(candidate: Any, op: str, target: Any, collate: Collate | None) -> bool:
    """ComparisonMatchExpressionBase::compare (expression_leaf.cpp) for $lt/$lte/$gt/$gte.

    A missing path is EOO, whose canonical type is undefined's, so ``$gte: null`` matches it as
    ``{a: null}`` does; otherwise type bracketing, except that MinKey and MaxKey compare across
    types; NaN equals only NaN and is neither above nor below any number.
    """
    rank_c = RANK_UNDEFINED if candidate is MISSING else type_rank(candidate)
    rank_t = type_rank(target)
    if rank_c != rank_t:
        if rank_c + rank_t == RANK_NULL + RANK_UNDEFINED:
            return op in ("$lte", "$gte")
        if rank_t in (RANK_MINKEY, RANK_MAXKEY):
            order = compare(candidate, target, collate)
            return order < 0 if op in ("$lt", "$lte") else order > 0
        return False
    if rank_c == RANK_NUMBER and (is_nan(candidate) or is_nan(target)):
        return op in ("$lte", "$gte") and is_nan(candidate) and is_nan(target)
    order = compare(candidate, target, collate)
    return {"$lt": order < 0, "$lte": order <= 0, "$gt": order > 0, "$gte": order >= 0}[op]


def parse_filter(query: Mapping[str, Any] | None) -> list[Predicate]:
    """A find filter as ANDed predicates, sorted as CanonicalQuery sorts them."""
    if query is not None and not isinstance(query, Mapping):
        raise not_modelled(f"a filter that is not a document ({query!r})")
    predicates: list[Predicate] = []
    _collect(query or {}, predicates)
    return sorted(predicates, key=lambda p: (p.sort_rank, p.path))


def _collect(query: Mapping[str, Any], out: list[Predicate]) -> None:
    for key, condition in query.items():
        if key == "$and":
            for clause in _clauses(key, condition):
                _collect(clause, out)
        elif key in ("$or", "$nor"):
            branches = tuple(tuple(parse_filter(clause)) for clause in _clauses(key, condition))
            if key == "$or":
                branches = _or_to_in(branches)
            if key == "$or" and len(branches) == 1:
                out.extend(branches[0])  # a one-branch $or is its branch (MongoDB simplifies it too)
            else:
                out.append(Predicate("", key, tuple(sorted(branches, key=_branch_order))))
        elif key == "$comment":
            continue
        elif key in ("$alwaysTrue", "$alwaysFalse"):  # always_true_false.js
            if isinstance(condition, bool) or condition != 1:
                raise invalid_query(f"{key} must be an integer value of 1", 9)  # FailedToParse
            if key == "$alwaysFalse":
                out.append(Predicate("", "$nor", ((),)))  # NOT (an empty conjunction): matches nothing
        elif key.startswith("$"):
            raise not_modelled(f"the top-level operator {key}")
        elif isinstance(condition, Mapping) and condition and all(k.startswith("$") for k in condition):
            _collect_operators(key, condition, out)
        elif isinstance(condition, Regex | re.Pattern):
            out.append(Predicate(key, "$regex", condition))
        else:
            out.append(Predicate(key, "$eq", _frozen(condition)))


def _rewritable(branch: tuple[Predicate, ...]) -> bool:
    """A branch that is one equality or one regex: $or of these on one path is an $in."""
    if len(branch) != 1:
        return False
    leaf = branch[0]
    return leaf.op == "$regex" or (leaf.op == "$eq" and not isinstance(leaf.value, Regex | re.Pattern))


def _or_to_in(branches: tuple[tuple[Predicate, ...], ...]) -> tuple[tuple[Predicate, ...], ...]:
    """MongoDB 8.0's single-path $or rewrite (or_to_in.js): equalities and regexes on one path,
    two or more of them, become one $in; the other branches stay."""
    by_path: dict[str, list[Predicate]] = {}
    for branch in branches:
        if _rewritable(branch):
            by_path.setdefault(branch[0].path, []).append(branch[0])
    grouped = {path for path, leaves in by_path.items() if len(leaves) > 1}
    kept = [b for b in branches if not (_rewritable(b) and b[0].path in grouped)]
    for path in grouped:
        values = tuple(leaf.value for leaf in by_path[path])
        kept.append((_in_predicate(path, values),))
    return tuple(kept)


def _in_predicate(path: str, values: tuple[Any, ...]) -> Predicate:
    """An $in as InMatchExpression keeps it: equalities sorted and deduplicated, then regexes;
    an $in of one equality is that equality."""
    equalities: dict[tuple, Any] = {}
    regexes: list[Any] = []
    for value in values:
        if isinstance(value, Regex | re.Pattern):
            if regex_parts(value) not in [regex_parts(r) for r in regexes]:
                regexes.append(value)
        else:
            equalities.setdefault(sort_key(value), value)
    ordered = tuple(equalities[k] for k in sorted(equalities)) + tuple(regexes)
    if len(ordered) == 1 and not regexes:
        return Predicate(path, "$eq", ordered[0])
    return Predicate(path, "$in", ordered)


def _branch_order(branch: tuple[Predicate, ...]) -> tuple[int, str, str]:
    """Where CanonicalQuery's sortTree puts an $or branch: an $and (several leaves) first, then by
    match type and path."""
    if len(branch) != 1:
        return (0, "", "")
    return (branch[0].sort_rank, branch[0].path, repr(branch[0].serialize()))


def _clauses(operator: str, condition: Any) -> list[Mapping[str, Any]]:
    if not isinstance(condition, list | tuple) or not condition or not all(isinstance(c, Mapping) for c in condition):
        raise not_modelled(f"{operator} with anything but a non-empty list of documents (MongoDB refuses it too)")
    return list(condition)


def _frozen(value: Any) -> Any:
    """Lists kept as lists (equality to a whole array), everything else as given."""
    return list(value) if isinstance(value, tuple) else value


_NESTED_IN_OPERATORS = frozenset(
    {"$elemMatch", "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists", "$type", "$size", "$all"}
    | {"$regex", "$options", "$not", "$mod", "$where", "$and", "$or", "$nor", "$expr"}
)
"""Query operators that may not open a document inside $in/$nin (MongoDB: "cannot nest $ under $in")."""


def _collect_operators(path: str, condition: Mapping[str, Any], out: list[Predicate]) -> None:
    options = condition.get("$options", "")
    if "$options" in condition and "$regex" not in condition:
        raise invalid_query("$options needs a $regex")  # MongoDB's words (not2.js: {$not: {$options: "a"}})
    for op, value in condition.items():
        if op == "$options":
            continue
        if op == "$regex":
            if isinstance(value, Regex | re.Pattern) and regex_parts(value)[1] and "$options" in condition:
                first = next(k for k in condition if k in ("$regex", "$options"))
                raise invalid_query(  # regex.js: codes 51075 ($regex first) and 51074 ($options first)
                    "options set in both $regex and $options", 51075 if first == "$regex" else 51074
                )
            pattern_text = value.pattern if isinstance(value, Regex | re.Pattern) else value
            if isinstance(pattern_text, str) and "\0" in pattern_text + str(options):
                raise invalid_query("Regular expression cannot contain an embedded null byte", 51091)
            bad = sorted(set(str(options)) - set("imsxu"))
            if bad:  # MongoDB: error 51108, invalid flag in regex options
                raise not_modelled(
                    f"the regex option {''.join(bad)!r} (MongoDB refuses it too: valid are i, m, s, x, u)"
                )
            pattern = value.pattern if isinstance(value, Regex | re.Pattern) else value
            flags = options or (regex_parts(value)[1] if isinstance(value, Regex | re.Pattern) else "")
            out.append(Predicate(path, "$regex", Regex(pattern, flags)))
        elif op in ("$eq", "$ne", *COMPARISONS):
            if op == "$eq" and isinstance(value, Regex | re.Pattern):
                raise not_modelled("$eq with a regular expression value")
            if op == "$ne" and isinstance(value, Regex | re.Pattern):
                raise invalid_query("Can't have regex as arg to $ne.")  # ne3.js (BadValue)
            if op in COMPARISONS and isinstance(value, Regex | re.Pattern):  # ne3.js (BadValue)
                raise invalid_query(f"Can't have RegEx as arg to predicate over field '{path}'.")
            out.append(Predicate(path, op, value))
        elif op in ("$in", "$nin"):
            if not isinstance(value, list | tuple):
                raise not_modelled(f"{op} with a value that is not a list (MongoDB refuses it too)")
            if any(isinstance(v, Mapping) and v and str(next(iter(v))) in _NESTED_IN_OPERATORS for v in value):
                raise invalid_query(f"cannot nest $ under {op}")  # in7.js: {$in: [{$elemMatch: ...}]}
            if op == "$in" and value:
                out.append(_in_predicate(path, tuple(_frozen(v) for v in value)))
            else:
                out.append(Predicate(path, op, tuple(value)))
        elif op == "$exists":
            out.append(Predicate(path, "$exists", bool(value)))
        elif op == "$all":
            if not isinstance(value, list | tuple) or not value:
                raise not_modelled("$all with an empty or non-list value")
            elem_matches = [isinstance(v, Mapping) and list(v) == ["$elemMatch"] for v in value]
            if all(elem_matches):  # $all of $elemMatch clauses is their $and (all4.js, all5.js)
                out.extend(Predicate(path, "$elemMatch", _elem_match(v["$elemMatch"])) for v in value)
            elif any(elem_matches) or any(isinstance(v, Mapping) and "$elemMatch" in v for v in value):
                raise not_modelled("$all mixing $elemMatch with values (MongoDB refuses it too)")
            else:  # $all is an $and of equalities, a regex in it a $regex (regex5.js)
                out.extend(
                    Predicate(path, "$regex", v)
                    if isinstance(v, Regex | re.Pattern)
                    else Predicate(path, "$eq", _frozen(v))
                    for v in value
                )
        elif op == "$size":
            if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value) or value < 0:
                raise not_modelled(f"$size with {value!r} (it takes a non-negative whole number)")
            out.append(Predicate(path, "$size", int(value)))
        elif op == "$type":
            out.append(Predicate(path, "$type", _type_codes(value)))
        elif op == "$elemMatch":
            out.append(Predicate(path, "$elemMatch", _elem_match(value)))
        elif op == "$not":
            negated = _negated(path, value)
            if (
                len(negated) == 1 and negated[0].op == "$not"
            ):  # {$not: {$not: p}} is p (array_index_and_nonIndex_consistent.js)
                out.extend(negated[0].value)
            else:
                out.append(Predicate(path, "$not", negated))
        elif op == "$mod":
            out.append(Predicate(path, "$mod", _mod_operands(value)))
        else:
            raise not_modelled(f"the query operator {op}")


def _mod_operands(value: Any) -> tuple[int, int]:
    """(divisor, remainder) of ``{$mod: [d, r]}``, truncated to whole numbers, refused as MongoDB
    refuses them (expression_parser.cpp parseMOD, BadValue; NaN, infinities and values beyond 64 bits
    too: mod_special_values.js)."""
    if not isinstance(value, list | tuple):
        raise invalid_query("malformed mod, needs to be an array")
    if len(value) < 2:
        raise invalid_query("malformed mod, not enough elements")
    if len(value) > 2:
        raise invalid_query("malformed mod, too many elements")
    operands: list[int] = []
    for operand, name in zip(value, ("divisor", "remainder"), strict=True):
        if isinstance(operand, bool) or not isinstance(operand, int | float | Decimal128 | Decimal):
            raise invalid_query(f"malformed mod, {name} not a number")
        whole = _whole(operand)
        if whole is None:
            raise invalid_query(f"malformed mod, {name} value is invalid: it does not fit in a 64-bit integer")
        operands.append(whole)
    if operands[0] == 0:
        raise invalid_query("divisor cannot be 0")
    return operands[0], operands[1]


def _whole(value: Any) -> int | None:
    """A number truncated toward zero, as a 64-bit integer; None for NaN, infinities and values beyond 64 bits."""
    number = value.to_decimal() if isinstance(value, Decimal128) else value
    if isinstance(number, float) and not math.isfinite(number):
        return None
    if not isinstance(number, int | float) and not number.is_finite():
        return None
    whole = int(number)
    return whole if -(2**63) <= whole < 2**63 else None


def _mod_matches(value: Any, divisor: int, remainder: int) -> bool:
    """ModMatchExpression::matchesSingleElement: a number whose truncation leaves the remainder (C++ %);
    NaN, infinities and numbers beyond 64 bits never match."""
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal128 | Decimal):
        return False
    dividend = _whole(value)
    if dividend is None:
        return False
    result = abs(dividend) % abs(divisor)
    return (-result if dividend < 0 else result) == remainder


def _negated(path: str, value: Any) -> tuple[Predicate, ...]:
    if isinstance(value, Regex | re.Pattern):
        return (Predicate(path, "$regex", value),)
    if not isinstance(value, Mapping) or not value or not all(k.startswith("$") for k in value):
        raise not_modelled("$not with anything but operators or a regular expression (MongoDB refuses it too)")
    inner: list[Predicate] = []
    _collect_operators(path, value, inner)
    if len(inner) > 1 and any(p.op == "$not" for p in inner):
        raise not_modelled("$not over $not beside other operators")
    return tuple(inner)


def _type_codes(value: Any) -> tuple[int | str, ...]:
    codes: list[int | str] = []
    for item in value if isinstance(value, list | tuple) else [value]:
        if item == "number":
            codes.append("number")
        elif isinstance(item, str) and item in TYPE_ALIASES:
            codes.append(TYPE_ALIASES[item])
        elif isinstance(item, int | float) and not isinstance(item, bool) and int(item) in TYPE_ALIASES.values():
            codes.append(int(item))
        else:
            raise not_modelled(f"$type {item!r} (known: {', '.join(TYPE_ALIASES)}, number, or their codes)")
    return tuple(codes)


def _elem_match(value: Any) -> ElemMatch:
    if not isinstance(value, Mapping):
        raise invalid_query("$elemMatch needs an Object")
    if not value:  # {$elemMatch: {}}: any element that is a document or an array (elemmatch_object.js)
        return ElemMatch((), on_objects=True)
    if all(k.startswith("$") for k in value) and not any(k in ("$and", "$or", "$nor") for k in value):
        inner: list[Predicate] = []
        _collect_operators("", value, inner)
        return ElemMatch(tuple(inner), on_objects=False)
    return ElemMatch(tuple(parse_filter(value)), on_objects=True)


def serialize_all(predicates: Sequence[Predicate]) -> dict[str, Any]:
    """Leaves as MongoDB prints a filter: one leaf alone, several under $and."""
    if not predicates:
        return {}
    if len(predicates) == 1:
        return predicates[0].serialize()
    return {"$and": [p.serialize() for p in predicates]}


def matches_all(predicates: Sequence[Predicate], document: Mapping[str, Any], collate: Collate | None) -> bool:
    """Whether a document satisfies every leaf."""
    return all(p.matches(document, collate) for p in predicates)

"""A differential fuzz of the planner model's query semantics.

Seeded random documents mix BSON types (null, missing, int/Int64/double/Decimal128, NaN, strings,
dates, regexes, MinKey/MaxKey, arrays of arrays, subdocuments) and random filters, sorts and
projections. Two comparisons, either of which can fail:

(a) every candidate index, forced by hint, returns the same documents as the COLLSCAN
    (``hint({$natural: 1})``);
(b) the COLLSCAN's documents, order and projection equal an independent brute-force oracle written
    below from MongoDB's documentation: the BSON comparison order
    (https://www.mongodb.com/docs/manual/reference/bson-type-comparison-order/), array traversal,
    null matching missing, type bracketing, NaN equal only to NaN, and sort keys of arrays (the
    smallest element ascending, the largest descending).

The oracle shares no code with :mod:`workbook.planner`.
"""

from __future__ import annotations

import datetime
import math
import os
import random
import re
from collections.abc import Iterator, Mapping
from decimal import Decimal
from functools import cmp_to_key
from typing import Any

import pytest
from bson import Code, Decimal128, Int64, MaxKey, MinKey, Regex, Timestamp

from workbook.planner import CollectionModel, FindArgs, find_documents

SEED = int(os.environ.get("WORKBOOK_FUZZ_SEED", "20261201"))
N_DOCS = 40
N_QUERIES = 160
ID = {"v": 2, "key": {"_id": 1}, "name": "_id_"}
INDEXES = [
    {"v": 2, "key": {"a": 1}, "name": "a_1"},
    {"v": 2, "key": {"b": 1, "a": -1}, "name": "b_1_a_-1"},
    {"v": 2, "key": {"c.x": 1}, "name": "c.x_1"},
    {"v": 2, "key": {"b": -1}, "name": "b_-1"},
]

# --- the oracle ------------------------------------------------------------------------------------

ABSENT = object()
EMPTY = object()


def rank(v: Any) -> int:
    """Canonical BSON type order (bson-type-comparison-order)."""
    if isinstance(v, MinKey):
        return 0
    if v is EMPTY:  # an empty array's sort key: undefined, after MinKey and before null
        return 1
    if v is None or v is ABSENT:
        return 2
    if isinstance(v, bool):
        return 9
    if isinstance(v, int | float | Decimal128):
        return 3
    if isinstance(v, Code):  # JavaScript code (a str subclass): after regexes, before MaxKey
        return 12.5
    if isinstance(v, str):
        return 4
    if isinstance(v, Mapping):
        return 5
    if isinstance(v, list):
        return 6
    if isinstance(v, datetime.datetime):
        return 10
    if isinstance(v, Timestamp):
        return 11
    if isinstance(v, Regex):
        return 12
    if isinstance(v, MaxKey):
        return 13
    raise AssertionError(f"the oracle has no rank for {v!r}")


def num(v: Any) -> Decimal | float:
    return v.to_decimal() if isinstance(v, Decimal128) else v


def isnan(v: Any) -> bool:
    n = num(v)
    return n.is_nan() if isinstance(n, Decimal) else isinstance(n, float) and math.isnan(n)


def cmp(x: Any, y: Any) -> int:
    """Total BSON order: -1, 0, 1 (NaN below every number, numbers compared by value)."""
    rx, ry = rank(x), rank(y)
    if rx != ry:
        return -1 if rx < ry else 1
    if rx == 3:
        if isnan(x) or isnan(y):
            return (not isnan(x)) - (not isnan(y))
        a, b = num(x), num(y)
        a, b = (Decimal(a) if isinstance(a, float) else a), (Decimal(b) if isinstance(b, float) else b)
        if isinstance(a, Decimal) and a.is_infinite() or isinstance(b, Decimal) and b.is_infinite():
            a, b = float(a), float(b)
        return (a > b) - (a < b)
    if rx == 4:
        return (x > y) - (x < y)
    if rx == 5:
        for (kx, vx), (ky, vy) in zip(x.items(), y.items(), strict=False):
            for c in (rank(vx) - rank(vy), (kx > ky) - (kx < ky), cmp(vx, vy)):
                if c:
                    return -1 if c < 0 else 1
        return (len(x) > len(y)) - (len(x) < len(y))
    if rx == 6:
        for vx, vy in zip(x, y, strict=False):
            c = cmp(vx, vy)
            if c:
                return c
        return (len(x) > len(y)) - (len(x) < len(y))
    if rx in (9, 10, 11, 12.5):  # booleans (false < true), dates, timestamps, code by its text
        kx, ky = ((x.time, x.inc), (y.time, y.inc)) if rx == 11 else (str(x), str(y)) if rx == 12.5 else (x, y)
        return (kx > ky) - (kx < ky)
    if rx == 12:
        kx, ky = (x.pattern, int(x.flags)), (y.pattern, int(y.flags))
        return (kx > ky) - (kx < ky)
    return 0


def reach(value: Any, parts: list[str], expand: bool = True) -> Iterator[Any]:
    """Values at a dotted path; arrays along the way are traversed; ABSENT when nothing is there."""
    if not parts:
        yield value
        if expand and isinstance(value, list):
            yield from value
        return
    if isinstance(value, Mapping):
        yield from reach(value[parts[0]], parts[1:], expand) if parts[0] in value else [ABSENT]
    elif isinstance(value, list):
        got = False
        for element in value:
            if isinstance(element, Mapping):
                got = True
                yield from reach(element, parts, expand)
        if not got:
            yield ABSENT
    else:
        yield ABSENT


def equal(v: Any, target: Any) -> bool:
    if target is None:
        return v is None or v is ABSENT
    if v is ABSENT:
        return False
    if isinstance(target, re.Pattern | Regex):  # inside $in: a regex matches strings
        return regex_match(v, target)
    if rank(v) == 3 and rank(target) == 3 and (isnan(v) or isnan(target)):
        return isnan(v) and isnan(target)
    return cmp(v, target) == 0


def regex_match(v: Any, pattern: Any) -> bool:
    if isinstance(v, Regex):  # a stored regex matches a regex query with the same pattern and flags
        return (v.pattern, int(v.flags)) == (pattern.pattern, int(pattern.flags))
    if not isinstance(v, str):
        return False
    return re.search(pattern.pattern, v, int(pattern.flags) & re.I) is not None


def compares(v: Any, op: str, target: Any) -> bool:
    rv = 1 if v is ABSENT else rank(v)  # a missing field ranks as undefined, beside null
    rt = rank(target)
    if {rv, rt} == {1, 2}:
        return op in ("$gte", "$lte")
    if rt in (0, 13) and rv != rt:  # MinKey and MaxKey bracket every type
        return (rt == 13) == (op in ("$lt", "$lte"))
    if rv != rt:
        return False
    if rv == 3 and (isnan(v) or isnan(target)):
        return op in ("$gte", "$lte") and isnan(v) and isnan(target)
    c = cmp(v, target)
    return {"$lt": c < 0, "$lte": c <= 0, "$gt": c > 0, "$gte": c >= 0}[op]


TYPE_CODES = {
    "double": float, "string": str, "object": Mapping, "array": list, "null": type(None), "date": datetime.datetime,
}  # fmt: skip


TYPE_ALIASES = [
    *TYPE_CODES, "number", "int", "long", "decimal", "bool", "regex", "minKey", "maxKey", "timestamp", "javascript",
]  # fmt: skip


def mod_matches(v: Any, divisor: int, remainder: int) -> bool:
    """$mod from its documentation: numbers truncated toward zero, the remainder with the dividend's
    sign; NaN, infinities and values beyond 64 bits never match."""
    if isinstance(v, bool) or rank(v) != 3 or isnan(v):
        return False
    n = num(v)
    if n in (math.inf, -math.inf) or isinstance(n, Decimal) and n.is_infinite():
        return False
    whole = int(n)
    if not -(2**63) <= whole < 2**63:
        return False
    r = abs(whole) % abs(divisor)
    return (-r if whole < 0 else r) == remainder


def has_type(v: Any, alias: str) -> bool:
    """$type by alias, from the BSON spec's type codes (pymongo stores an int beyond 32 bits as a long)."""
    if isinstance(v, bool):
        return alias == "bool"
    if isinstance(v, int | float | Decimal128):
        if alias == "number":
            return True
        if isinstance(v, float):
            return alias == "double"
        if isinstance(v, Decimal128):
            return alias == "decimal"
        return alias == ("long" if isinstance(v, Int64) or not -(2**31) <= v < 2**31 else "int")
    kinds = {"regex": Regex, "minKey": MinKey, "maxKey": MaxKey, "timestamp": Timestamp, "javascript": Code}
    if alias in kinds:
        return isinstance(v, kinds[alias])
    if isinstance(v, Code):
        return False  # not a string
    return alias in TYPE_CODES and isinstance(v, TYPE_CODES[alias])


def single(v: Any, op: str, arg: Any) -> bool:
    """One operator on one value (no array traversal): $elemMatch's elements."""
    if op == "$eq":
        return equal(v, arg)
    if op == "$ne":
        return not equal(v, arg)
    if op in ("$lt", "$lte", "$gt", "$gte"):
        return compares(v, op, arg)
    if op == "$in":
        return any(equal(v, t) for t in arg)
    if op == "$nin":
        return not any(equal(v, t) for t in arg)
    if op == "$exists":
        return bool(arg)
    if op == "$type":
        return has_type(v, arg)
    if op == "$mod":
        return mod_matches(v, *arg)
    raise AssertionError(op)


def field_matches(doc: Any, path: str, op: str, arg: Any) -> bool:
    parts = path.split(".")
    values = list(reach(doc, parts))
    if op == "$eq":
        return any(equal(v, arg) for v in values)
    if op == "$ne":
        return not any(equal(v, arg) for v in values)
    if op in ("$lt", "$lte", "$gt", "$gte"):
        return any(compares(v, op, arg) for v in values)
    if op == "$in":
        return any(equal(v, t) for v in values for t in arg)
    if op == "$nin":
        return not any(equal(v, t) for v in values for t in arg)
    if op == "$exists":
        return any(v is not ABSENT for v in values) == arg
    if op == "$type":
        return any(v is not ABSENT and has_type(v, arg) for v in values)
    if op == "$regex":
        return any(regex_match(v, arg) for v in values)
    if op == "$mod":
        return any(mod_matches(v, *arg) for v in values)
    if op == "$all":
        return all(any(equal(v, t) for v in values) for t in arg)
    if op == "$size":
        return any(isinstance(v, list) and len(v) == arg for v in reach(doc, parts, expand=False))
    if op == "$elemMatch":
        arrays = [v for v in reach(doc, parts, expand=False) if isinstance(v, list)]
        if not arg:  # {$elemMatch: {}}: an element that is a document or an array
            return any(isinstance(e, Mapping | list) for arr in arrays for e in arr)
        if all(k.startswith("$") for k in arg):  # on values: each element as one value
            return any(all(single(e, o, a) for o, a in arg.items()) for arr in arrays for e in arr)
        # on documents: an element that is a document (an array counts, with fields "0", "1"...)
        elements = [dict(enumerate(e)) if isinstance(e, list) else e for arr in arrays for e in arr]
        return any(isinstance(e, Mapping) and oracle_match({str(k): v for k, v in e.items()}, arg) for e in elements)
    if op == "$not":
        return not all(field_matches(doc, path, o, a) for o, a in arg.items())
    raise AssertionError(op)


def oracle_match(doc: Mapping[str, Any], query: Mapping[str, Any]) -> bool:
    for key, cond in query.items():
        if key == "$or" and not any(oracle_match(doc, c) for c in cond):
            return False
        if key == "$and" and not all(oracle_match(doc, c) for c in cond):
            return False
        if key == "$nor" and any(oracle_match(doc, c) for c in cond):
            return False
        if key.startswith("$"):
            continue
        if isinstance(cond, Mapping) and cond and all(k.startswith("$") for k in cond):
            if not all(field_matches(doc, key, op, arg) for op, arg in cond.items()):
                return False
        elif isinstance(cond, Regex):
            if not field_matches(doc, key, "$regex", cond):
                return False
        elif not field_matches(doc, key, "$eq", cond):
            return False
    return True


def sort_key(doc: Mapping[str, Any], path: str, direction: int) -> Any:
    """The value a sort orders a document by: an array's smallest (ascending) or largest
    (descending) element, an empty array before null, a missing field as null."""
    values: list[Any] = []
    for v in reach(doc, path.split("."), expand=False):
        if isinstance(v, list):
            values.extend(v if v else [EMPTY])
        else:
            values.append(None if v is ABSENT else v)
    ordered = sorted(values, key=cmp_to_key(sort_cmp))
    return ordered[0] if direction > 0 else ordered[-1]


def sort_cmp(x: Any, y: Any) -> int:
    return cmp(x, y)


def oracle_order(docs: list[Mapping[str, Any]], sort: list[tuple[str, int]]) -> list[list[Any]]:
    def compare_docs(x: Mapping[str, Any], y: Mapping[str, Any]) -> int:
        for path, direction in sort:
            c = sort_cmp(sort_key(x, path, direction), sort_key(y, path, direction))
            if c:
                return c * direction
        return 0

    return [[sort_key(d, p, s) for p, s in sort] for d in sorted(docs, key=cmp_to_key(compare_docs))]


def oracle_project(doc: Mapping[str, Any], projection: Mapping[str, int]) -> dict[str, Any]:
    others = [v for k, v in projection.items() if k != "_id"]
    if any(others) or (not others and projection.get("_id")):
        out = {k: doc[k] for k in ("_id", *projection) if k in doc and projection.get(k, 1)}
        return {k: out[k] for k in doc if k in out}
    return {k: v for k, v in doc.items() if projection.get(k, 1)}


# --- random documents and queries -------------------------------------------------------------------

DATES = [datetime.datetime(2020, 1, d) for d in (1, 2, 3)]


def scalar(rng: random.Random) -> Any:
    return rng.choice(
        [
            None, 0, 1, -2, 2.5, 1.0, Int64(1), Int64(3), 2**40, Decimal128("1"), Decimal128("2.5"), math.nan,
            Decimal128("NaN"), math.inf, "", "a", "ab", "b", "B", DATES[0], DATES[2], True, False,
            Regex("^a", ""), MinKey(), MaxKey(), Timestamp(1, 1), Timestamp(2, 0), Code("x"), -7, 7.9,
        ]
    )  # fmt: skip


def field_a(rng: random.Random) -> Any:
    kind = rng.random()
    if kind < 0.45:
        return scalar(rng)
    if kind < 0.7:
        return [scalar(rng) for _ in range(rng.randint(0, 3))]
    if kind < 0.82:
        return [[scalar(rng) for _ in range(rng.randint(0, 2))], scalar(rng)]
    return {"x": scalar(rng)} if rng.random() < 0.5 else {}


def field_c(rng: random.Random) -> Any:
    kind = rng.random()
    if kind < 0.3:
        return {"x": scalar(rng)}
    if kind < 0.6:
        return [{"x": scalar(rng)}, {"x": scalar(rng)} if rng.random() < 0.7 else {}]
    if kind < 0.8:
        return {"x": [scalar(rng), scalar(rng)]}
    return None


def document(rng: random.Random, i: int) -> dict[str, Any]:
    doc: dict[str, Any] = {"_id": i}
    if rng.random() < 0.85:
        doc["a"] = field_a(rng)
    if rng.random() < 0.8:
        doc["b"] = scalar(rng)
    if rng.random() < 0.7:
        doc["c"] = field_c(rng)
    return doc


ORDERED_VALUES: list[Any] = [
    None, 0, 1, 2.5, Int64(1), Decimal128("2.5"), math.nan, "a", "ab", "B", DATES[1], MinKey(), MaxKey(), {},
    Timestamp(1, 5), Code("x"), [1],
]  # fmt: skip
EQ_VALUES: list[Any] = [*ORDERED_VALUES, [], [1], [None], True]


def leaf(rng: random.Random, path: str, depth: int = 0) -> dict[str, Any]:
    op = rng.choice(
        ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists", "$type", "$all", "$size",
         "$elemMatch", "$not", "$regex", "$mod", "plain"]
    )  # fmt: skip
    if op == "plain":
        return {path: rng.choice(EQ_VALUES)}
    if op in ("$eq", "$ne"):
        return {path: {op: rng.choice(EQ_VALUES)}}
    if op in ("$gt", "$gte", "$lt", "$lte"):
        return {path: {op: rng.choice(ORDERED_VALUES)}}
    if op in ("$in", "$nin"):
        values = rng.sample(EQ_VALUES, rng.randint(1, 3))
        if op == "$in" and rng.random() < 0.3:
            values.append(Regex("^a", ""))
        return {path: {op: values}}
    if op == "$exists":
        return {path: {op: rng.random() < 0.5}}
    if op == "$type":
        return {path: {op: rng.choice(TYPE_ALIASES)}}
    if op == "$all":
        return {path: {op: rng.sample([0, 1, "a", None, 2.5], rng.randint(1, 2))}}
    if op == "$size":
        return {path: {op: rng.randint(0, 2)}}
    if op == "$mod":
        return {path: {op: [rng.choice([2, 3, -2]), rng.choice([0, 1, -1])]}}
    if op == "$elemMatch" and rng.random() < 0.15:
        return {path: {"$elemMatch": {}}}
    if op == "$regex":
        return {path: Regex(rng.choice(["^a", "b", "^A"]), rng.choice(["", "i"]))}
    if op == "$elemMatch" and path == "c":  # documents in an array
        return {path: {"$elemMatch": leaf(rng, "x", depth + 1) if depth < 1 else {"x": rng.choice(EQ_VALUES)}}}
    if op == "$elemMatch":
        inner = rng.choice(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$type"])
        arg: Any = rng.choice(ORDERED_VALUES)
        if inner == "$in":
            arg = rng.sample(EQ_VALUES, 2)
        elif inner == "$type":
            arg = rng.choice(TYPE_ALIASES)
        return {path: {"$elemMatch": {inner: arg}}}
    inner_op = rng.choice(["$eq", "$gt", "$lte", "$in", "$exists"])
    inner_arg: Any = {"$in": rng.sample(EQ_VALUES, 2), "$exists": rng.random() < 0.5}.get(
        inner_op, rng.choice(ORDERED_VALUES)
    )
    return {path: {"$not": {inner_op: inner_arg}}}


def query(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    roll = rng.random()
    if depth < 2 and roll < 0.25:
        op = rng.choice(["$or", "$and", "$nor"])
        return {op: [query(rng, depth + 1) for _ in range(rng.randint(1, 3))]}
    out = leaf(rng, rng.choice(["a", "b", "c.x", "a", "c"]))
    if rng.random() < 0.3:
        out.update(leaf(rng, "b"))
    return out


def equal_docs(x: Any, y: Any) -> bool:
    """Document equality that takes NaN as equal to NaN."""
    if isinstance(x, Mapping) and isinstance(y, Mapping):
        return list(x) == list(y) and all(equal_docs(x[k], y[k]) for k in x)
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(equal_docs(a, b) for a, b in zip(x, y, strict=True))
    if rank(x) == 3 and rank(y) == 3 and isnan(x) and isnan(y):
        return True
    return type(x) is type(y) and cmp(x, y) == 0


# --- the fuzz --------------------------------------------------------------------------------------

RNG = random.Random(SEED)
DOCS = [document(RNG, i) for i in range(N_DOCS)]
QUERIES = [query(RNG) for _ in range(N_QUERIES)]
COLLECTION = CollectionModel(DOCS, [ID, *INDEXES])


def run(**args: Any) -> list[Any]:
    return find_documents(COLLECTION, "fuzz.c", FindArgs.of(**args))[1]


@pytest.mark.parametrize("number", range(N_QUERIES))
def test_filter_agrees_with_oracle_and_every_hint(number: int) -> None:
    filter_ = QUERIES[number]
    scanned = run(filter=filter_, hint={"$natural": 1})
    expected = [d["_id"] for d in DOCS if oracle_match(d, filter_)]
    assert [d["_id"] for d in scanned] == expected, filter_
    assert sorted(d["_id"] for d in run(filter=filter_)) == expected, filter_
    for spec in INDEXES:
        hinted = run(filter=filter_, hint=spec["name"])
        assert sorted(d["_id"] for d in hinted) == expected, (filter_, spec["name"])


RESTRICTED_INDEXES = [
    ID,
    {"v": 2, "key": {"b": 1}, "name": "b_sparse", "sparse": True},
    {"v": 2, "key": {"c.x": 1, "b": 1}, "name": "cx_b_sparse", "sparse": True},
    {"v": 2, "key": {"a": 1}, "name": "a_partial", "partialFilterExpression": {"b": {"$gt": 0}}},
]


@pytest.mark.parametrize("offset", [0, 1, 2])
def test_sparse_and_partial_indexes_never_change_the_answer(offset: int) -> None:
    """Unhinted, the planner may use a sparse or partial index only where it cannot miss a match
    (three seeds: the check is cheap)."""
    rng = random.Random(SEED + offset)
    docs = [document(rng, i) for i in range(N_DOCS)]
    queries = [query(rng) for _ in range(N_QUERIES)]
    collection = CollectionModel(docs, RESTRICTED_INDEXES)
    used = set()
    for filter_ in queries:
        explain, got = find_documents(collection, "fuzz.c", FindArgs.of(filter_))
        assert sorted(d["_id"] for d in got) == [d["_id"] for d in docs if oracle_match(d, filter_)], filter_
        used.update(_index_names(explain["queryPlanner"]["winningPlan"]))
    assert used - {"_id_"}, "no query used a sparse or partial index: the check says nothing"


def _index_names(stage: Mapping[str, Any]) -> set[str]:
    names = {stage["indexName"]} if "indexName" in stage else set()
    for child in [stage.get("inputStage"), *stage.get("inputStages", [])]:
        if child:
            names |= _index_names(child)
    return names


SORTS = [[("a", 1)], [("a", -1)], [("b", 1), ("_id", 1)], [("c.x", -1)], [("b", -1), ("a", 1)]]


@pytest.mark.parametrize("sort", SORTS, ids=[repr(s) for s in SORTS])
def test_sort_order_agrees_with_oracle(sort: list[tuple[str, int]]) -> None:
    for filter_ in QUERIES[:40]:
        expected_ids = {d["_id"] for d in DOCS if oracle_match(d, filter_)}
        want = oracle_order([d for d in DOCS if d["_id"] in expected_ids], sort)
        for hint in (None, {"$natural": 1}, *(s["name"] for s in INDEXES)):
            got = run(filter=filter_, sort=dict(sort), hint=hint)
            assert {d["_id"] for d in got} == expected_ids, (filter_, sort, hint)
            keys = [[sort_key(d, p, s) for p, s in sort] for d in got]
            assert len(keys) == len(want)
            assert all(cmp(x, y) == 0 for k, w in zip(keys, want, strict=True) for x, y in zip(k, w, strict=True)), (
                filter_,
                sort,
                hint,
            )


@pytest.mark.parametrize(("skip", "limit"), [(0, 3), (2, 5), (5, 0)])
def test_skip_and_limit_cut_the_oracle_order(skip: int, limit: int) -> None:
    sort = [("b", 1), ("_id", 1)]  # a total order: the page is one set of documents
    for filter_ in QUERIES[:40]:
        matching = [d for d in DOCS if oracle_match(d, filter_)]
        ordered = sorted(matching, key=cmp_to_key(lambda x, y: _doc_cmp(x, y, sort)))  # type: ignore[arg-type]
        want = [d["_id"] for d in ordered]
        page = want[skip : skip + limit] if limit else want[skip:]
        for hint in (None, "b_1_a_-1", "b_-1"):
            got = run(filter=filter_, sort=dict(sort), skip=skip or None, limit=limit or None, hint=hint)
            assert [d["_id"] for d in got] == page, (filter_, skip, limit, hint)


def _doc_cmp(x: Mapping[str, Any], y: Mapping[str, Any], sort: list[tuple[str, int]]) -> int:
    for path, direction in sort:
        c = sort_cmp(sort_key(x, path, direction), sort_key(y, path, direction))
        if c:
            return c * direction
    return 0


PROJECTIONS = [{"a": 1}, {"_id": 0, "b": 1}, {"b": 0}, {"a": 0, "c": 0}, {"_id": 1}]


@pytest.mark.parametrize("projection", PROJECTIONS, ids=[repr(p) for p in PROJECTIONS])
def test_projection_agrees_with_oracle(projection: dict[str, int]) -> None:
    for filter_ in QUERIES[:30]:
        got = run(filter=filter_, projection=projection, sort={"_id": 1})
        want = [oracle_project(d, projection) for d in DOCS if oracle_match(d, filter_)]
        assert equal_docs(got, want), (filter_, projection)


def test_the_fuzz_exercises_every_kind_of_answer() -> None:
    """The seeded queries are not all empty or all full: the comparisons above say something."""
    sizes = [sum(oracle_match(d, q) for d in DOCS) for q in QUERIES]
    assert sum(1 for s in sizes if 0 < s < N_DOCS) > N_QUERIES // 3
    assert any(s == 0 for s in sizes) and max(sizes) > N_DOCS // 2


def disagreements() -> list[dict[str, Any]]:
    """The seeded filters whose COLLSCAN result differs from the oracle's."""
    out = []
    scan_only = CollectionModel(DOCS, [ID])
    for filter_ in QUERIES:
        got = [d["_id"] for d in find_documents(scan_only, "fuzz.c", FindArgs.of(filter_))[1]]
        if got != [d["_id"] for d in DOCS if oracle_match(d, filter_)]:
            out.append(filter_)
    return out


def test_the_fuzz_catches_a_wrong_matcher(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison can fail: with the comparisons that ignore MongoDB's NaN and null rules (what
    the model had before), the seeded filters disagree with the oracle."""
    import workbook.planner.predicates as predicates

    def naive(candidate: Any, op: str, target: Any, collate: Any) -> bool:
        if candidate is predicates.MISSING or predicates.type_rank(candidate) != predicates.type_rank(target):
            return False
        order = predicates.compare(candidate, target, collate)
        return {"$lt": order < 0, "$lte": order <= 0, "$gt": order > 0, "$gte": order >= 0}[op]

    assert disagreements() == []
    monkeypatch.setattr(predicates, "_compares", naive)
    assert len(disagreements()) > 0


def test_the_oracle_can_disagree() -> None:
    """The oracle is not the model: a deliberately wrong expectation is caught."""
    doc = {"_id": 0, "a": [[1, 2]]}
    assert not oracle_match(doc, {"a": {"$elemMatch": {"$eq": 1}}})
    assert oracle_match(doc, {"a": [1, 2]})
    assert not oracle_match({"_id": 1, "a": math.nan}, {"a": {"$lt": 0}})
    assert oracle_match({"_id": 2}, {"a": {"$gte": None}})


def test_the_offline_default_over_the_wire_agrees_with_the_oracle(db: Any) -> None:
    """The same documents and filters sent over pymongo: what the offline server's find returns (the
    model's plan over the documents as the engine decodes them, or the engine's own answer where the
    model refuses) agrees with the oracle, unindexed and with the fuzz's indexes."""
    db.fuzz.insert_many([dict(d) for d in DOCS])
    for indexed in (False, True):
        if indexed:
            for spec in INDEXES:
                db.fuzz.create_index(list(spec["key"].items()), name=spec["name"])
        for filter_ in QUERIES[:80]:
            got = sorted(d["_id"] for d in db.fuzz.find(filter_, {"_id": 1}))
            assert got == [d["_id"] for d in DOCS if oracle_match(d, filter_)], (filter_, indexed)

"""Candidate plans for a find, their stage trees, and the multi-planner's trial and ranking.

Follows query_planner.cpp (one indexed solution per relevant index, a whole-index scan when only an
index can provide the sort, COLLSCAN only when no index applies), planner_analysis.cpp
(analyzeDataAccess: SORT, then SKIP, then PROJECTION / FETCH, then LIMIT), multi_plan.cpp and
plan_ranker.{h,cpp} (trial length, productivity, bonuses, tie-breaking heuristics).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from bson import MaxKey, MinKey

from workbook.gc_pause import paused
from workbook.planner.bounds import (
    EXACT,
    INEXACT_COVERED,
    INEXACT_FETCH,
    OIL,
    Interval,
    all_values,
    intersect,
    translate,
)
from workbook.planner.collation import normalize
from workbook.planner.keys import Delta, IndexData, IndexDefinition, build_index, hashed_key, update_index
from workbook.planner.predicates import Predicate, indexable
from workbook.planner.query import FindQuery
from workbook.planner.reading import FETCHING
from workbook.planner.scan import IndexScan
from workbook.planner.stages import (
    ADVANCED,
    IS_EOF,
    CollectionScan,
    Fetch,
    IdHack,
    Limit,
    Member,
    Or,
    Projection,
    Skip,
    Sort,
    SortMerge,
    Stage,
)
from workbook.planner.unsupported import not_modelled, unknown_hint
from workbook.planner.values import RANK_ARRAY, RANK_NULL, RANK_REGEX, RANK_STRING, RANK_UNDEFINED, compare, type_rank

PLAN_EVALUATION_WORKS = 10000  # internalQueryPlanEvaluationWorks
PLAN_EVALUATION_COLL_FRACTION = 0.3  # internalQueryPlanEvaluationCollFraction
PLAN_EVALUATION_MAX_RESULTS = 101  # internalQueryPlanEvaluationMaxResults
BONUS_EPSILON = 1e-4  # kBonusEpsilon in plan_ranker.h


class CollectionModel:
    """The documents and visible indexes of one collection, with index keys built on demand.

    ``previous`` is an earlier model of the same collection: an index whose definition is
    unchanged reuses the keys it generated for documents that are still the same objects, so a
    model rebuilt after a write walks only the documents the write changed.
    """

    def __init__(
        self,
        documents: Sequence[Mapping[str, Any]],
        indexes: Sequence[Mapping[str, Any]],
        collation: Mapping[str, Any] | None = None,
        *,
        previous: CollectionModel | None = None,
        ids: np.ndarray | None = None,
    ) -> None:
        self.documents = documents if isinstance(documents, Sequence) else list(documents)
        """The documents in record order (a sequence given is kept, not copied: never change it afterwards)."""
        self.collation = dict(collation) if collation is not None and normalize(collation) else None
        """The collection's default collation (None for simple): queries without one use it."""
        self.specs = [IndexDefinition.from_info(info, self.collation) for info in indexes]
        self._definitions = {spec.name: repr(info) for spec, info in zip(self.specs, indexes, strict=True)}
        self._key_definitions = {
            spec.name: repr({k: v for k, v in info.items() if k != "hidden"})
            for spec, info in zip(self.specs, indexes, strict=True)
        }
        """Each index's definition less ``hidden``, which changes no key: hiding an index and showing it
        again (``collMod``, as notebook 02 does) keeps the keys its documents gave it."""
        self._built: dict[str, IndexData] = {}
        self._memos: dict[str, IndexData] = {}
        """Earlier builds inherited from ``previous`` for indexes not built yet, whose memo gives their documents'
        keys (read-only, shared)."""
        self._ids = ids if ids is not None else np.fromiter(map(id, self.documents), np.int64, len(self.documents))
        """``id()`` of each document, in record order (:meth:`Delta.between`): 8 bytes each, not an int object (made
        by ``np.fromiter``: 6.7 ms for 100,000, against 24 for an ``array("q")`` filled from the same iterator),
        or ``ids`` as given (the offline read layer keeps them per storage chunk: a write makes one chunk's again)."""
        self._earlier: dict[str, IndexData] = {}
        """``previous``'s built indexes, updated by :attr:`_delta` instead of rebuilt (read-only, shared)."""
        self._delta: Delta | None = None
        if previous is not None and previous.collation == self.collation:
            same = {n for n in self._definitions if previous._definitions.get(n) == self._definitions[n]}
            earlier = {**previous._memos, **previous._built}
            same_keys = {n for n, d in self._key_definitions.items() if previous._key_definitions.get(n) == d}
            self._memos = {n: m for n, m in earlier.items() if n in same_keys}
            self._delta = Delta.between(previous._ids, self._ids)
            if self._delta is not None:
                self._earlier = {n: data for n, data in previous._built.items() if n in same}

    def index(self, spec: IndexDefinition) -> IndexData:
        """The index's sorted keys over the documents (built once)."""
        if spec.name not in self._built:
            earlier = self._earlier.pop(spec.name, None)
            with paused():  # hundreds of thousands of long-lived tuples: nothing for the collector to free
                if earlier is not None and self._delta is not None:
                    self._built[spec.name] = update_index(earlier, self.documents, self._delta)
                else:
                    inherited = self._memos.pop(spec.name, None)
                    memo = None if inherited is None else inherited.memo()
                    self._built[spec.name] = build_index(spec, self.documents, memo)
            self._memos.pop(spec.name, None)
        return self._built[spec.name]

    @property
    def visible(self) -> list[IndexDefinition]:
        """Indexes the planner may consider: not hidden, and of a kind the model understands."""
        return [s for s in self.specs if not s.hidden and not s.special]


@dataclass
class Candidate:
    """One candidate plan: its stage tree and what it was built from."""

    root: Stage
    scan: IndexScan | None = None
    access: Access | None = None
    results: list[Member] = field(default_factory=list)
    score: float = 0.0

    def fetches(self) -> bool:
        """Whether any stage reads documents (the noFetchBonus test)."""
        return any(self.root.has_stage(n) for n in FETCHING)

    def docs_examined(self) -> int:
        """Documents read so far by this plan."""
        return self.root.total("docs_examined")


# --- which predicates an index can answer ------------------------------------------------------


def _mentions_strings(value: Any) -> bool:
    rank = type_rank(value)
    if rank == RANK_STRING:
        return True
    if isinstance(value, Mapping):
        return any(_mentions_strings(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_mentions_strings(v) for v in value)
    return False


def _usable(predicate: Predicate, spec: IndexDefinition, query: FindQuery) -> bool:
    # String bounds are only meaningful if the index orders strings by the query's collation.
    if predicate.op == "$not":
        strings = any(_mentions_strings(inner.value) for inner in predicate.value if inner.op != "$regex")
    elif predicate.op == "$type":
        strings = 2 in predicate.value
    else:
        strings = predicate.op != "$regex" and _mentions_strings(predicate.value)
    return not (strings and normalize(spec.collation) != query.collation_id)


def _unusable_elem_matches(
    query: FindQuery, path: str, spec: IndexDefinition, index: IndexData, prefixes: set[str]
) -> set[int]:
    out: set[int] = set()
    for group, pred in enumerate(query.predicates):
        if pred.op != "$elemMatch" or pred.value.on_objects or pred.path != path:
            continue
        for leaf in pred.value.predicates:
            full = Predicate(path, leaf.op, leaf.value)
            if not indexable(leaf) or not _compatible(full, True, spec, index, prefixes):
                out.add(group)
    return out


def _in_elem_match_value(query: FindQuery, group: int | None) -> bool:
    return group is not None and not query.predicates[group].value.on_objects


def _negated_leaves(predicate: Predicate) -> tuple[Predicate, ...]:
    """What a negation negates: $ne x is NOT {$eq: x}, $nin is NOT {$in}, $not its operators."""
    if predicate.op == "$ne":
        return (Predicate(predicate.path, "$eq", predicate.value),)
    if predicate.op == "$nin":
        return (Predicate(predicate.path, "$in", predicate.value),)
    return tuple(predicate.value) if predicate.op == "$not" else ()


def _is_null(value: Any) -> bool:
    return type_rank(value) in (RANK_NULL, RANK_UNDEFINED)


def _compatible(
    predicate: Predicate, in_elem_match_value: bool, spec: IndexDefinition, index: IndexData, prefixes: set[str]
) -> bool:
    """QueryPlannerIXSelect::_compatible's rules for negations and sparse indexes
    (planner_ixselect.cpp, nodeIsSupportedBySparseIndex, isQueryNegatingEqualToNull)."""
    negated = _negated_leaves(predicate)
    # a negation of {$eq/$gte/$lte: null}: [] is keyed as undefined, so inverted bounds would miss
    # it; such a query cannot use a multikey path except inside $elemMatch
    negates_null = any(
        (leaf.op in ("$eq", "$gte", "$lte") and _is_null(leaf.value))
        or (leaf.op == "$in" and any(_is_null(v) for v in leaf.value))
        for leaf in negated
    )
    if negated:
        if index.is_multikey and any(
            (leaf.op == "$gt" and isinstance(leaf.value, MinKey))
            or (leaf.op == "$lt" and isinstance(leaf.value, MaxKey))
            for leaf in negated
        ):
            return False
        if negates_null and prefixes and not in_elem_match_value:
            return False
    if not spec.sparse:
        return True
    if negated:  # of the negations only {$ne: null} excludes every missing field, even in $elemMatch
        return len(negated) == 1 and negated[0].op == "$eq" and negated[0].value is None
    if predicate.op == "$exists" and not predicate.value:  # a negation too: {$not: {$exists: true}}
        return False
    if in_elem_match_value:  # equality to null inside $elemMatch means a literal null
        return True
    # A sparse index holds no key for a missing field: nothing that matches missing may use it.
    if predicate.op in ("$eq", "$gte", "$lte") and _is_null(predicate.value):
        return False
    if predicate.op == "$in" and any(_is_null(v) for v in predicate.value):
        return False
    # {$gt/$gte: MinKey} and {$lt/$lte: MaxKey} match a missing field too: the model keeps them off a
    # sparse index (nodeIsSupportedBySparseIndex does not list them; a sparse index would miss it)
    if (predicate.op in ("$gt", "$gte") and isinstance(predicate.value, MinKey)) or (
        predicate.op in ("$lt", "$lte") and isinstance(predicate.value, MaxKey)
    ):
        return False
    return not (predicate.op == "$exists" and not predicate.value)


_LOWER, _UPPER = ("$gt", "$gte"), ("$lt", "$lte")


def _implies(predicates: Sequence[Predicate], required: Predicate) -> bool:
    """Whether some query predicate guarantees the partial filter's predicate."""
    if required.op == "$or":  # some branch of the partial filter's $or is implied (index_partial_read_ops.js)
        return any(all(_implies(predicates, r) for r in branch) for branch in required.branches)
    for p in predicates:
        if p.path != required.path:
            continue
        if required.op == "$exists" and required.value:
            excludes_missing = not (
                p.op in ("$ne", "$nin", "$not")
                or (p.op == "$exists" and not p.value)
                or (p.op == "$eq" and p.value is None)
                or (p.op == "$in" and None in p.value)
            )
            if excludes_missing:
                return True
        if p.op == "$eq" and p.value is not None and required.matches({required.path: p.value}):
            return True
        if p.op == "$in" and p.value and all(v is not None and required.matches({required.path: v}) for v in p.value):
            return True
        for side in (_LOWER, _UPPER):
            if p.op in side and required.op in side and type_rank(p.value) == type_rank(required.value):
                c = compare(p.value, required.value) * (1 if side is _LOWER else -1)
                strict = p.op in ("$gt", "$lt") or required.op in ("$gte", "$lte")
                if c > 0 or (c == 0 and strict):
                    return True
    return False


def partial_usable(spec: IndexDefinition, query: FindQuery) -> bool:
    """Whether the query's filter implies the partial index's filter (else the index is skipped)."""
    return spec.partial is None or all(_implies(query.predicates, r) for r in spec.partial)


@dataclass
class Access:
    """How one index answers the filter: bounds per field, and what is left for filters."""

    index: IndexData
    oils: list[OIL]
    assigned: list[Predicate]
    key_filter: list[Predicate]
    fetch_filter: list[Predicate]

    @property
    def point_fields(self) -> set[str]:
        """Index fields pinned to one value (equality), which a sort may skip over."""
        return {
            path
            for path, oil in zip(self.index.spec.paths, self.oils, strict=True)
            if len(oil) == 1 and oil[0].is_point
        }


def index_access(index: IndexData, query: FindQuery, *, whole: bool = False) -> Access | None:
    """Bounds for the index from the filter; None when the index's first field has no predicate."""
    spec = index.spec
    collate = spec.collate
    oils: list[OIL] = []
    assigned: list[Predicate] = []
    tightness: dict[int, str] = {}
    used_prefixes: list[tuple[set[str], int | None]] = []
    derived = _elem_match_leaves(query.predicates)
    for position, path in enumerate(spec.paths):
        prefixes = set(index.multikey_paths.get(path, []))
        leaves = [(p, None) for p in query.predicates if p.path == path and indexable(p)]
        options = [(p, g) for p, g in leaves + derived.get(path, []) if _usable(p, spec, query)]
        options = [(p, g) for p, g in options if _compatible(p, _in_elem_match_value(query, g), spec, index, prefixes)]
        # an $elemMatch on values uses the index only if every one of its children can
        # (QueryPlannerIXSelect::_compatible for ELEM_MATCH_VALUE)
        unusable = _unusable_elem_matches(query, path, spec, index, prefixes)
        options = [(p, g) for p, g in options if g not in unusable]
        # multikey: no compound bounds on fields under one array, unless both come from one $elemMatch
        options = [
            (p, g) for p, g in options if not any(prefixes & up and (g is None or g != ug) for up, ug in used_prefixes)
        ]
        group = next((g for _, g in options if g is not None), None)
        if prefixes and group is not None and not _within_elem_match(prefixes, query.predicates[group].path):
            # an array below the $elemMatch path: the bounds of one element's values cannot be
            # intersected either (arrayfind9.js: {a: {$elemMatch: {b: {$gte: 1, $lte: 1}}}} on b: [0, 2])
            options = [o for o in options if o[1] == group][:1]
        elif prefixes and group is not None:
            options = [(p, g) for p, g in options if g == group]  # one element: its bounds intersect
        elif prefixes:
            options = options[:1]  # multikey: cannot intersect bounds on one array field
        if path in spec.hashed:
            options = [o for o in options if o[1] is None and _hashable_equality(o[0])][:1]
        preds = [p for p, _ in options]
        if position == 0 and not preds and not whole:
            return None
        oil = all_values(collate)
        for pred in preds if path in spec.hashed else ():
            oil = _hashed_points(pred)
            tightness[id(pred)] = INEXACT_FETCH  # two values may share a hash: the document is checked
            assigned.append(pred)
        for pred in preds if path not in spec.hashed else ():
            # $exists: true is EXACT only on a single-field sparse index: a compound sparse index
            # also holds documents missing this field (index_bounds_builder.cpp, EXISTS)
            exact_exists = spec.sparse and len(spec.paths) == 1
            pred_oil, tight = translate(pred, collate, sparse=exact_exists, multikey=bool(prefixes))
            oil = intersect(oil, pred_oil)
            tightness[id(pred)] = tight
            assigned.append(pred)
        if preds:
            used_prefixes.append((prefixes, options[0][1]))
        oils.append(oil)
    key_filter: list[Predicate] = []
    fetch_filter: list[Predicate] = []
    for pred in query.predicates:
        assigned_tightness = tightness.get(id(pred))
        if assigned_tightness == EXACT:
            continue
        multikey = bool(index.multikey_paths.get(pred.path))
        if assigned_tightness == INEXACT_COVERED and not multikey and spec.collation is None:
            key_filter.append(pred)
        else:
            fetch_filter.append(pred)
    return Access(index, oils, assigned, key_filter, fetch_filter)


def _hashable_equality(predicate: Predicate) -> bool:
    """Whether a hashed field can bound the predicate: an equality or $in of values that are no
    arrays or regexes (planner_ixselect.cpp: a hashed index answers only equality)."""
    if predicate.op == "$eq":
        values = [predicate.value]
    elif predicate.op == "$in":
        values = list(predicate.value)
    else:
        return False
    return all(type_rank(v) not in (RANK_ARRAY, RANK_REGEX) for v in values)


def _hashed_points(predicate: Predicate) -> OIL:
    """The hashes of an equality's (or $in's) values, as point intervals in key order."""
    values = [predicate.value] if predicate.op == "$eq" else list(predicate.value)
    keys = {hashed_key(v) for v in values}
    return [Interval.of(k, k, True, True, None) for k in sorted(keys)]


def _within_elem_match(prefixes: set[str], elem_path: str) -> bool:
    """Whether every array on the indexed path is at or above the $elemMatch's own path."""
    return all(elem_path == p or elem_path.startswith(p + ".") for p in prefixes)


def _elem_match_leaves(predicates: Sequence[Predicate]) -> dict[str, list[tuple[Predicate, int | None]]]:
    """Leaves inside each ``$elemMatch``, at their full paths, tagged with their $elemMatch.

    They give bounds (the $elemMatch itself stays a fetch filter, so they are never exact).
    """
    out: dict[str, list[tuple[Predicate, int | None]]] = {}
    for group, pred in enumerate(predicates):
        if pred.op != "$elemMatch":
            continue
        for leaf in pred.value.predicates:
            if not indexable(leaf):
                continue
            path = f"{pred.path}.{leaf.path}" if pred.value.on_objects else pred.path
            out.setdefault(path, []).append((Predicate(path, leaf.op, leaf.value), group))
    return out


def whole_index_access(index: IndexData, query: FindQuery) -> Access:
    """Bounds for the index even when its first field has no predicate (a whole-index scan)."""
    access = index_access(index, query, whole=True)
    if access is None:  # index_access returns None only when not asked for the whole index
        raise not_modelled(f"a scan of the whole index {index.spec.name!r}")
    return access


def sort_direction(access: Access, query: FindQuery) -> int | None:
    """1 or -1 if scanning the index in that direction yields the requested order, else None."""
    spec = access.index.spec
    if not query.sort:
        return 1
    if not _multikey_sort_allowed(access, query):
        return None
    if normalize(spec.collation) != query.collation_id:
        strings = string_bound_fields(access)
        if any(path in strings for path, _ in query.sort):
            return None
    if any(path in spec.hashed for path, _ in query.sort):
        return None  # a hashed key orders by hash, not by value
    points = access.point_fields
    wanted = [(p, d) for p, d in query.sort if p not in points]
    usable = list(itertools.takewhile(lambda f: f[0] not in spec.hashed or f[0] in points, spec.fields))
    for direction in (1, -1):
        provided = [(p, d * direction) for p, d in usable if p not in points]
        if wanted == provided[: len(wanted)]:
            return direction
    return None


def _all_values(oil: OIL) -> bool:
    return len(oil) == 1 and oil[0].is_all_values()


def _multikey_sort_allowed(access: Access, query: FindQuery) -> bool:
    """Whether the multikey paths in the sort leave the index able to provide it.

    A multikey path can be sorted on only with [MinKey, MaxKey] bounds, and only if no field with
    bounds shares one of its array prefixes (query_solution.cpp; MongoDB's sort_array.js).
    """
    spec, multikey = access.index.spec, access.index.multikey_paths
    bounded = [path for path, oil in zip(spec.paths, access.oils, strict=True) if not _all_values(oil)]
    for path, _ in query.sort:
        prefixes = set(multikey.get(path, []))
        if path not in spec.paths or not prefixes:
            continue
        if path in bounded or any(prefixes & set(multikey.get(other, [])) for other in bounded):
            return False
    return True


def string_bound_fields(access: Access) -> set[str]:
    """Index fields whose bounds may reach strings (or objects and arrays, which can hold strings).

    An index with a non-simple collation stores collation keys, not strings: such a field can
    neither cover nor order a query with another collation (IndexScanNode::getFieldsWithStringBounds).
    """
    out: set[str] = set()
    for path, oil in zip(access.index.spec.paths, access.oils, strict=True):
        for interval in oil:
            low, high = sorted((type_rank(interval.start), type_rank(interval.end)))
            if low <= RANK_ARRAY and high >= RANK_STRING:
                out.add(path)
    return out


def _provides(access: Access, paths: Sequence[str]) -> bool:
    """Whether the index key alone carries these fields (not multikey; no collated strings)."""
    index = access.index
    collated = string_bound_fields(access) if index.spec.collation is not None else set()
    hashed = index.spec.hashed
    return all(
        p in index.spec.paths and not index.multikey_paths.get(p) and p not in collated and p not in hashed
        for p in paths
    )


def _can_cover(access: Access, query: FindQuery) -> bool:
    if not query.projection or not query.projection_inclusive:
        return False
    needed = [p for p, v in query.projection.items() if v and p != "_id"]
    if query.projection.get("_id", 1):
        needed.append("_id")
    return _provides(access, needed)


def build_tree(collection: CollectionModel, query: FindQuery, access: Access | None, direction: int) -> Candidate:
    """The stage tree analyzeDataAccess builds over an index scan (or a collection scan)."""
    documents, collate = collection.documents, query.collate
    scan: IndexScan | None = None
    if access is None:
        root: Stage = CollectionScan(documents, query.predicates, collate, direction)
        return Candidate(finish_tree(collection, query, root, fetched=True, blocking=bool(query.sort)))
    blocking = sort_direction(access, query) is None
    exploded = explode_for_sort(access, query) if blocking and query.sort else None
    if exploded is not None:
        root = exploded
        blocking = False
    else:
        scan = IndexScan(access.index, access.oils, direction, key_filter=access.key_filter)
        root = scan
    fetched = False
    if access.fetch_filter:
        root, fetched = Fetch(root, documents, access.fetch_filter, collate), True
    return Candidate(
        finish_tree(collection, query, root, fetched=fetched, blocking=blocking, access=access), scan, access
    )


def finish_tree(
    collection: CollectionModel,
    query: FindQuery,
    root: Stage,
    *,
    fetched: bool,
    blocking: bool,
    access: Access | None = None,
) -> Stage:
    """SORT, then SKIP, then PROJECTION (covered, or over a FETCH), then LIMIT above a data access."""
    documents, collate = collection.documents, query.collate
    index_paths = access.index.spec.paths if access is not None else None
    if blocking and query.sort:
        sort_limit = (query.limit + (query.skip or 0)) if query.limit else None
        if not fetched and access is not None and _provides(access, [p for p, _ in query.sort]):
            root = Sort(root, query.sort, collate, sort_limit, index_paths=index_paths)
        else:
            if not fetched:
                root, fetched = Fetch(root, documents, [], collate), True
            root = Sort(root, query.sort, collate, sort_limit)
    if query.skip:
        root = Skip(root, query.skip)
    if query.projection:
        if not fetched and access is not None and _can_cover(access, query):
            # an index with a hashed field projects its key data through the general stage
            # (projection_with_hashed_index.js): still no FETCH
            kind = "PROJECTION_DEFAULT" if access.index.spec.hashed else "PROJECTION_COVERED"
            root = Projection(root, query.projection, kind, index_paths, hashed=access.index.spec.hashed)
        else:
            if not fetched:
                root, fetched = Fetch(root, documents, [], collate), True
            root = Projection(root, query.projection, query.projection_kind, sort=query.sort, collate=collate)
    elif not fetched:
        root = Fetch(root, documents, [], collate)
    if query.limit and not (blocking and query.sort):
        root = Limit(root, query.limit)
    return root


MAX_SCANS_TO_EXPLODE = 200  # internalQueryMaxScansToExplode


def explode_for_sort(access: Access, query: FindQuery) -> Stage | None:
    """One IXSCAN per combination of the point values before the sort fields, merged in sort order
    (QueryPlannerAnalysis::explodeForSort): ``{a: {$in: [1, 2]}}`` sorted on b over an index on
    (a, b) needs no blocking sort. None when the bounds or the index do not allow it."""
    index, spec = access.index, access.index.spec
    if any(path in spec.hashed for path, _ in query.sort):
        return None  # hashed keys carry no order of the values (hashed_index_sort.js explodes the others)
    if any(index.multikey_paths.get(path) for path, _ in query.sort):
        # a multikey sort field has no one key per document to merge on; multikey point fields are
        # fine, SORT_MERGE drops the record ids it has returned (explode_for_sort_equality_to_array.js)
        return None
    paths = spec.paths
    for prefix in range(1, len(paths)):
        head = access.oils[:prefix]
        if not all(oil and all(i.is_point for i in oil) for oil in head):
            return None
        combinations = 1
        for oil in head:
            combinations *= len(oil)
        if combinations > MAX_SCANS_TO_EXPLODE:
            return None
        # Would one scan, with each of those fields pinned to a single point, come out in sort order?
        one_point = [Interval.of(0, 0, True, True, None)]
        pinned = [one_point if position < prefix else oil for position, oil in enumerate(access.oils)]
        direction = sort_direction(
            Access(index, pinned, [], [], []), FindQuery([], query.sort, collation=query.collation)
        )
        if combinations == 1 or direction is None:
            continue
        children: list[Stage] = [
            IndexScan(index, [*([i] for i in combo), *access.oils[prefix:]], direction, key_filter=access.key_filter)
            for combo in itertools.product(*head)
        ]
        return SortMerge(children, query.sort, query.collate, [paths] * len(children))
    return None


# --- OR plans (index union) --------------------------------------------------------------------


def _branch_access(collection: CollectionModel, branch: FindQuery) -> Access | None:
    """The index one $or branch would use, chosen as the subplanner chooses (a trial among its
    indexed plans); None when some branch has no usable index (the whole query then scans)."""
    candidates = []
    for spec in collection.visible:
        if not partial_usable(spec, branch):
            continue
        access = index_access(collection.index(spec), branch)
        if access is not None:
            candidates.append(build_tree(collection, branch, access, 1))
    if not candidates:
        return None
    if len(candidates) > 1:
        works, results = trial_limits(collection, branch)
        run_trial(candidates, works, results)
        candidates = rank(candidates)
    return candidates[0].access


def or_candidate(collection: CollectionModel, query: FindQuery) -> Candidate | None:
    """OR over one index scan per branch of the query's $or, the other predicates fetched and
    filtered above it (QueryPlannerAccess::buildIndexedOr); None when a branch cannot use an index."""
    ors = [p for p in query.predicates if p.op == "$or"]
    if len(ors) != 1:
        return None
    rest = [p for p in query.predicates if p is not ors[0]]
    documents, collate = collection.documents, query.collate
    accesses: list[Access] = []
    for branch in ors[0].branches:
        if any(p.op == "$or" for p in branch):
            return None
        access = _branch_access(collection, FindQuery(list(branch), collation=query.collation))
        if access is None:
            return None
        accesses.append(access)
    # Every branch in sort order: merge them (buildIndexedOr's MERGE_SORT) instead of sorting after.
    directions = [sort_direction(a, FindQuery(a.assigned, query.sort, collation=query.collation)) for a in accesses]
    merged = bool(query.sort) and all(d is not None for d in directions)
    children: list[Stage] = []
    for access, direction in zip(accesses, directions, strict=True):
        child: Stage = IndexScan(access.index, access.oils, direction or 1, key_filter=access.key_filter)
        if access.fetch_filter:
            child = Fetch(child, documents, access.fetch_filter, collate)
        children.append(child)
    if merged:
        root: Stage = SortMerge(children, query.sort, collate, [a.index.spec.paths for a in accesses])
    else:
        root = Or(children)
    if rest or not all(isinstance(c, Fetch) for c in children):
        root = Fetch(root, documents, rest, collate)
    return Candidate(finish_tree(collection, query, root, fetched=True, blocking=bool(query.sort) and not merged))


# --- enumeration -------------------------------------------------------------------------------


def _hinted(collection: CollectionModel, hint: Any) -> IndexDefinition | None:
    """The hinted index; None for ``{$natural: 1}`` (a collection scan)."""
    if isinstance(hint, Mapping) and list(hint) == ["$natural"]:
        return None
    for spec in collection.visible:
        if spec.hinted_by(hint):
            return spec
    raise unknown_hint(hint, [s.name for s in collection.specs if not s.hidden])


def _natural_direction(hint: Mapping[str, Any]) -> int:
    """1 or -1 from ``{$natural: 1}`` / ``{$natural: -1}``."""
    value = hint["$natural"]
    if isinstance(value, bool) or not isinstance(value, int | float) or value == 0:
        raise not_modelled(f"the hint {{'$natural': {value!r}}} (it takes 1 or -1)")
    return 1 if value > 0 else -1


def _id_hack_value(collection: CollectionModel, query: FindQuery) -> Any:
    # isIdHackEligibleQuery: no hint or skip, and the collection's own collation (its _id index's)
    if query.hint is not None or query.skip or query.collation_id != normalize(collection.collation):
        return None
    if query.sort_key_fields:  # a {$meta: "sortKey"} projection needs the sort stage (sortl.js)
        return None
    if len(query.predicates) != 1:
        return None
    pred = query.predicates[0]
    # isSimpleIdQuery: an _id equality to a value that is no array, no regex and no document of
    # operators ({_id: {x: 2}} is IDHACK: idhack.js)
    if pred.path != "_id" or pred.op != "$eq" or isinstance(pred.value, list | tuple) or pred.value is None:
        return None
    if isinstance(pred.value, Mapping) and any(str(k).startswith("$") for k in pred.value):
        return None
    if not any(spec.paths == ["_id"] for spec in collection.specs):
        return None
    return pred.value


def may_bound(spec: IndexDefinition, bounded: set[str]) -> bool:
    """Whether :func:`index_access` can give the index bounds: only with a predicate on its first field.
    False spares building the keys of an index no predicate can use (the first query after a load)."""
    return spec.paths[0] in bounded


def may_order(spec: IndexDefinition, bounded: set[str], query: FindQuery) -> bool:
    """Whether a scan of the whole index can give the query's sort: not when no predicate touches its
    fields (none is a point) and it is led by a field other than the sort's first."""
    return spec.paths[0] == query.sort[0][0] or bool(bounded & set(spec.paths))


def enumerate_candidates(collection: CollectionModel, query: FindQuery) -> list[Candidate]:
    """Every plan the planner would race, in the order it generates them."""
    if query.hint is not None:
        hinted = _hinted(collection, query.hint)
        if hinted is None:
            return [build_tree(collection, query, None, _natural_direction(query.hint))]
        index = collection.index(hinted)
        forced = index_access(index, query) or whole_index_access(index, query)
        return [build_tree(collection, query, forced, sort_direction(forced, query) or 1)]
    id_value = _id_hack_value(collection, query)
    if id_value is not None:
        root: Stage = IdHack(collection.documents, id_value, query.collate)
        if query.projection:
            root = Projection(root, query.projection, query.projection_kind)
        if query.limit:
            root = Limit(root, query.limit)
        return [Candidate(root)]
    union = or_candidate(collection, query) if any(p.op == "$or" for p in query.predicates) else None
    if union is not None and len(query.predicates) == 1:  # a rooted $or: the subplanner's one plan
        return [union]
    candidates: list[Candidate] = []
    bounded = {p.path for p in query.predicates} | set(_elem_match_leaves(query.predicates))
    for spec in collection.visible:
        if not may_bound(spec, bounded) or not partial_usable(spec, query):
            continue
        access = index_access(collection.index(spec), query)
        if access is not None:
            candidates.append(build_tree(collection, query, access, sort_direction(access, query) or 1))
    if union is not None:
        candidates.append(union)
    if query.sort and not any(not c.root.has_stage("SORT") for c in candidates):
        for spec in collection.visible:
            if spec.sparse or not may_order(spec, bounded, query) or not partial_usable(spec, query):
                continue
            whole = whole_index_access(collection.index(spec), query)
            direction = sort_direction(whole, query)
            if direction is not None:
                candidates.append(build_tree(collection, query, whole, direction))
                break
    if not candidates:
        candidates.append(build_tree(collection, query, None, 1))
    return candidates


# --- multi-planner -----------------------------------------------------------------------------


def trial_limits(collection: CollectionModel, query: FindQuery) -> tuple[int, int]:
    """(works per plan, results that end the trial): MultiPlanStage::getTrialPeriod*."""
    works = max(PLAN_EVALUATION_WORKS, int(PLAN_EVALUATION_COLL_FRACTION * len(collection.documents)))
    results = PLAN_EVALUATION_MAX_RESULTS
    if query.limit:
        results = min(query.limit, results)
    return works, results


def run_trial(candidates: Sequence[Candidate], max_works: int, max_results: int) -> None:
    """Work every plan in round-robin until one hits EOF, returns enough results, or time runs out."""
    for _ in range(max_works):
        done = False
        for candidate in candidates:
            state, member = candidate.root.work()
            if state == ADVANCED and member is not None:
                candidate.results.append(member)
                if len(candidate.results) >= max_results:
                    done = True
            elif state == IS_EOF:
                done = True
        if done:
            return


def base_score(candidate: Candidate) -> float:
    """PlanScorer::calculateScore plus the EOF bonus of pickBestPlan."""
    root = candidate.root
    productivity = root.advanced / root.works if root.works else 0.0
    epsilon = min(1.0 / (10 * max(root.advanced, 1)), BONUS_EPSILON)
    no_fetch = 0.0 if candidate.fetches() else epsilon
    no_sort = 0.0 if root.has_stage("SORT") else epsilon
    no_ixisect = epsilon
    score = 1 + productivity + no_fetch + no_sort + no_ixisect
    return score + (1 if root.is_eof() else 0)


def _bounds_score(scan: IndexScan) -> tuple[int, int, int, int, int]:
    single = points = closed = length = 0
    for oil in scan.oils:
        if len(oil) == 1 and oil[0].is_all_values():
            break
        if length == single and len(oil) == 1 and oil[0].is_point:
            single += 1
        if length == points and all(i.is_point for i in oil):
            points += 1
        if length == closed and all(type_rank(i.start) == type_rank(i.end) for i in oil):
            closed += 1
        length += 1
    return (single, points, closed, length, -len(scan.oils))


def _shape(stage: Stage) -> list[str]:
    return [stage.stage_name] + [n for c in stage.children for n in _shape(c)]


def rank(candidates: list[Candidate]) -> list[Candidate]:
    """Candidates ordered best first, with MongoDB's tie-breaking heuristics applied."""
    for c in candidates:
        c.score = base_score(c)
    ordered = sorted(candidates, key=lambda c: -c.score)
    tied = [c for c in ordered if c.score == ordered[0].score]
    if len(tied) > 1:
        fewest = min(c.docs_examined() for c in tied)
        bonus = {id(c): (BONUS_EPSILON if c.docs_examined() == fewest else 0.0) for c in tied}
        shapes = {tuple(_shape(c.root)) for c in tied}
        if len(shapes) == 1 and all(c.scan is not None for c in tied):
            scores = [_bounds_score(c.scan) for c in tied]  # type: ignore[arg-type]
            best = max(scores)
            for c, s in zip(tied, scores, strict=True):
                if s == best:
                    bonus[id(c)] += 2 * BONUS_EPSILON
        for c in tied:
            c.score += bonus[id(c)]
        ordered = sorted(ordered, key=lambda c: -c.score)
    return ordered


def run_to_end(candidate: Candidate) -> list[Member]:
    """Keep working the chosen plan until EOF; trial results come first."""
    results = list(candidate.results)
    while True:
        state, member = candidate.root.work()
        if state == ADVANCED and member is not None:
            results.append(member)
        elif state == IS_EOF:
            return results


@dataclass
class PlanChoice:
    """What planning and running a find produced."""

    winner: Candidate
    rejected: list[Candidate]
    results: list[Member]
    trials: list[dict[str, Any]]
    """Each raced plan's stats at the end of the trial period, in the order the plans were generated."""


def _trial_stats(candidate: Candidate) -> dict[str, Any]:
    root = candidate.root
    return {
        "nReturned": root.advanced,
        "executionTimeMillisEstimate": 0,
        "totalKeysExamined": root.total("keys_examined"),
        "totalDocsExamined": root.total("docs_examined"),
        "executionStages": root.stats(),
    }


def choose_and_run(collection: CollectionModel, query: FindQuery) -> PlanChoice:
    """Enumerate, race if needed, and run the winner."""
    candidates = enumerate_candidates(collection, query)
    if len(candidates) == 1:
        return PlanChoice(candidates[0], [], run_to_end(candidates[0]), [])
    works, results = trial_limits(collection, query)
    run_trial(candidates, works, results)
    trials = [_trial_stats(c) for c in candidates]
    ordered = rank(candidates)
    winner = ordered[0]
    return PlanChoice(winner, ordered[1:], run_to_end(winner), trials)


def check_supported(collection: CollectionModel, query: FindQuery) -> None:
    """Refuse hints on index kinds the model does not build (text, 2dsphere, hashed...)."""
    if query.hint is None:
        return
    for spec in collection.specs:
        if spec.special and spec.hinted_by(query.hint):
            kinds = ", ".join(sorted({str(d) for _, d in spec.key if not isinstance(d, int | float)}))
            raise not_modelled(f"hinting the {kinds} index {spec.name!r} (the model builds no {kinds} keys)")

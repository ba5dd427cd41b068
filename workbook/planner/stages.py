"""Executable plan stages (COLLSCAN, FETCH, SORT, PROJECTION_*, SKIP, LIMIT, IDHACK) with MongoDB's
work()/advanced/needTime accounting, and their explain output."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbook.errors import ParallelArraysError
from workbook.facts import MAX_BLOCKING_SORT_BYTES
from workbook.planner.keys import compound_values, key_document, path_keys
from workbook.planner.predicates import Predicate, matches_all, serialize_all
from workbook.planner.unsupported import invalid_query
from workbook.planner.values import MISSING, Collate, sort_key

if TYPE_CHECKING:
    from workbook.planner.keys import Entry

ADVANCED, NEED_TIME, IS_EOF = "ADVANCED", "NEED_TIME", "IS_EOF"


@dataclass
class Member:
    """A working-set member: a record id, maybe an index key, maybe the fetched document."""

    rid: int
    entry: Entry | None = None
    doc: Mapping[str, Any] | None = None


class Stage:
    """A plan stage: each ``work()`` call is one unit of work, as in PlanStage::work."""

    stage_name = "STAGE"

    def __init__(self, children: Sequence[Stage]) -> None:
        self.children = list(children)
        self.works = self.advanced = self.need_time = 0

    def work(self) -> tuple[str, Member | None]:
        """Do one unit of work and count it."""
        self.works += 1
        state, member = self.do_work()
        if state == ADVANCED:
            self.advanced += 1
        elif state == NEED_TIME:
            self.need_time += 1
        return state, member

    def do_work(self) -> tuple[str, Member | None]:
        """The stage's own step (overridden)."""
        raise NotImplementedError

    def is_eof(self) -> bool:
        """Whether the stage will produce nothing more."""
        return self.children[0].is_eof()

    def plan_fields(self) -> dict[str, Any]:
        """Stage-specific fields shown in queryPlanner."""
        return {}

    def stats_fields(self) -> dict[str, Any]:
        """Stage-specific execution counters."""
        return {}

    def has_stage(self, name: str) -> bool:
        """Whether this subtree contains a stage of that name."""
        return self.stage_name == name or any(c.has_stage(name) for c in self.children)

    def plan(self) -> dict[str, Any]:
        """The stage tree as queryPlanner shows it (no counters)."""
        out: dict[str, Any] = {"stage": self.stage_name, **self.plan_fields()}
        if self.children:
            out["inputStage"] = self.children[0].plan()
        return out

    def stats(self) -> dict[str, Any]:
        """The stage tree with execution counters, as executionStats.executionStages shows it."""
        out: dict[str, Any] = {
            "stage": self.stage_name,
            **self.plan_fields(),
            "nReturned": self.advanced,
            "executionTimeMillisEstimate": 0,  # the model counts work, not time
            "works": self.works,
            "advanced": self.advanced,
            "needTime": self.need_time,
            "needYield": 0,
            "saveState": 0,
            "restoreState": 0,
            "isEOF": int(self.is_eof()),
            **self.stats_fields(),
        }
        if self.children:
            out["inputStage"] = self.children[0].stats()
        return out

    def total(self, counter: str) -> int:
        """Sum of a counter (keys_examined, docs_examined) over the subtree."""
        return getattr(self, counter, 0) + sum(c.total(counter) for c in self.children)


class CollectionScan(Stage):
    """COLLSCAN: read every document in natural order, applying the filter."""

    stage_name = "COLLSCAN"

    def __init__(
        self,
        documents: Sequence[Mapping[str, Any]],
        predicates: Sequence[Predicate],
        collate: Collate | None,
        direction: int = 1,
    ):
        super().__init__([])
        self.documents, self.predicates, self.collate = documents, list(predicates), collate
        self.direction = direction
        """1 for natural order, -1 for ``hint({$natural: -1})`` (the last inserted first)."""
        self.position = 0
        self.docs_examined = 0
        self.eof = False
        # read in order, not by position: the model's documents may be joined from chunks (found by bisection)
        self._reading = iter(documents) if direction >= 0 else reversed(documents)

    def do_work(self) -> tuple[str, Member | None]:
        doc = next(self._reading, None)
        if doc is None:  # no document is None
            self.eof = True
            return IS_EOF, None
        rid = self.position if self.direction >= 0 else len(self.documents) - 1 - self.position
        self.position += 1
        self.docs_examined += 1
        if matches_all(self.predicates, doc, self.collate):
            return ADVANCED, Member(rid, doc=doc)
        return NEED_TIME, None

    def is_eof(self) -> bool:
        return self.eof

    def plan_fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        if self.predicates:
            fields["filter"] = serialize_all(self.predicates)
        fields["direction"] = "forward" if self.direction >= 0 else "backward"
        return fields

    def stats_fields(self) -> dict[str, Any]:
        return {"docsExamined": self.docs_examined}


class IdHack(Stage):
    """IDHACK: the classic engine's direct _id lookup for ``{_id: <value>}``."""

    stage_name = "IDHACK"

    def __init__(self, documents: Sequence[Mapping[str, Any]], value: Any, collate: Collate | None = None) -> None:
        super().__init__([])
        self.documents, self.value, self.collate = documents, value, collate
        self.keys_examined = self.docs_examined = 0
        self.done = False

    def do_work(self) -> tuple[str, Member | None]:
        if self.done:
            return IS_EOF, None
        self.done = True
        target = sort_key(self.value, self.collate)
        for rid, doc in enumerate(self.documents):
            if "_id" in doc and sort_key(doc["_id"], self.collate) == target:
                self.keys_examined = self.docs_examined = 1
                return ADVANCED, Member(rid, doc=doc)
        return IS_EOF, None

    def is_eof(self) -> bool:
        return self.done

    def stats_fields(self) -> dict[str, Any]:
        return {"keysExamined": self.keys_examined, "docsExamined": self.docs_examined}


class Fetch(Stage):
    """FETCH: load the document for each index key, applying the residual filter."""

    stage_name = "FETCH"

    def __init__(
        self,
        child: Stage,
        documents: Sequence[Mapping[str, Any]],
        predicates: Sequence[Predicate],
        collate: Collate | None,
    ):
        super().__init__([child])
        self.documents, self.predicates, self.collate = documents, list(predicates), collate
        self.docs_examined = self.already_has_obj = 0

    def do_work(self) -> tuple[str, Member | None]:
        state, member = self.children[0].work()
        if state != ADVANCED or member is None:
            return state, None
        if member.doc is not None:  # an OR branch fetched it already
            self.already_has_obj += 1
        else:
            self.docs_examined += 1
        doc = self.documents[member.rid]
        if matches_all(self.predicates, doc, self.collate):
            return ADVANCED, Member(member.rid, entry=member.entry, doc=doc)
        return NEED_TIME, None

    def plan_fields(self) -> dict[str, Any]:
        return {"filter": serialize_all(self.predicates)} if self.predicates else {}

    def stats_fields(self) -> dict[str, Any]:
        return {"docsExamined": self.docs_examined, "alreadyHasObj": self.already_has_obj}


class Or(Stage):
    """OR: each input in turn, dropping record ids already returned (an index union)."""

    stage_name = "OR"

    def __init__(self, children: Sequence[Stage]) -> None:
        super().__init__(children)
        self.current = 0
        self.seen: set[int] = set()
        self.dups_tested = self.dups_dropped = 0

    def do_work(self) -> tuple[str, Member | None]:
        if self.current >= len(self.children):
            return IS_EOF, None
        state, member = self.children[self.current].work()
        if state == IS_EOF:
            self.current += 1
            return (IS_EOF, None) if self.current >= len(self.children) else (NEED_TIME, None)
        if state != ADVANCED or member is None:
            return state, None
        self.dups_tested += 1
        if member.rid in self.seen:
            self.dups_dropped += 1
            return NEED_TIME, None
        self.seen.add(member.rid)
        return ADVANCED, member

    def is_eof(self) -> bool:
        return self.current >= len(self.children)

    def plan(self) -> dict[str, Any]:
        return {"stage": self.stage_name, "inputStages": [c.plan() for c in self.children]}

    def stats(self) -> dict[str, Any]:
        out = super().stats()
        out.pop("inputStage", None)
        out["inputStages"] = [c.stats() for c in self.children]
        return out

    def stats_fields(self) -> dict[str, Any]:
        return {"dupsTested": self.dups_tested, "dupsDropped": self.dups_dropped}


def sort_value(
    member: Member, path: str, direction: int, collate: Collate | None, index_paths: Sequence[str] | None
) -> tuple:
    """The key a blocking sort orders by: for arrays, the smallest (asc) or largest (desc) element."""
    if member.doc is None and member.entry is not None and index_paths is not None:
        return sort_key(member.entry.values[list(index_paths).index(path)], collate)
    values, _ = path_keys(member.doc or {}, path)
    keys = [sort_key(None if v is MISSING else v, collate) for v in values]
    return min(keys) if direction > 0 else max(keys)


def sort_pattern_key(doc: Mapping[str, Any], pattern: Sequence[tuple[str, int]], collate: Collate | None) -> tuple:
    """The key a blocking sort on several paths orders a document by, as MongoDB's SortKeyGenerator
    makes it: the document's keys for the pattern are generated as a compound index's are (paths
    through one shared array take their values from the same element, jstests sort_dotted_paths.js),
    and the first of them in the pattern's order is the document's. Two paths that meet different
    arrays are refused, as MongoDB refuses them (BadValue: parallel arrays)."""
    try:
        combos = list(compound_values(doc, [path for path, _ in pattern], whole_positional_arrays=True))
    except ParallelArraysError:
        raise invalid_query("cannot sort with keys that are parallel arrays") from None
    keys = [tuple(sort_key(None if v is MISSING else v, collate) for v in values) for values in combos]
    if len(keys) == 1:
        return keys[0]

    def before(left: tuple, right: tuple) -> int:
        for mine, theirs, (_, direction) in zip(left, right, pattern, strict=True):
            if mine != theirs:
                return (-1 if mine < theirs else 1) * (1 if direction > 0 else -1)
        return 0

    return min(keys, key=functools.cmp_to_key(before))


def sort_value_of(doc: Mapping[str, Any], path: str, direction: int, collate: Collate | None) -> Any:
    """The value a sort orders a document by on one path: for arrays the smallest (asc) or largest
    (desc) element; None when missing."""
    values, _ = path_keys(doc, path)
    present = [None if v is MISSING else v for v in values]
    chosen = sorted(present, key=lambda v: sort_key(v, collate))
    return chosen[0] if direction > 0 else chosen[-1]


class SortMerge(Stage):
    """SORT_MERGE: inputs that each come out in sort order, merged into one ordered stream, with
    record ids already returned dropped (MergeSortStage)."""

    stage_name = "SORT_MERGE"

    def __init__(
        self,
        children: Sequence[Stage],
        pattern: Sequence[tuple[str, int]],
        collate: Collate | None,
        index_paths: Sequence[Sequence[str]],
    ) -> None:
        super().__init__(children)
        self.pattern, self.collate = list(pattern), collate
        self.index_paths = [list(paths) for paths in index_paths]
        self.waiting: list[Member | None] = [None] * len(children)
        self.eof = [False] * len(children)
        self.seen: set[int] = set()
        self.dups_tested = self.dups_dropped = 0

    def _key(self, position: int, member: Member) -> list[tuple[Any, ...]]:
        paths = self.index_paths[position]
        return [
            member.entry.keys[paths.index(path)]
            if member.entry is not None and path in paths
            else sort_value(member, path, direction, self.collate, None)
            for path, direction in self.pattern
        ]

    def _before(self, left: tuple[int, Member], right: tuple[int, Member]) -> bool:
        for a, b, (_, direction) in zip(self._key(*left), self._key(*right), self.pattern, strict=True):
            if a != b:
                return (a < b) == (direction > 0)
        return False

    def do_work(self) -> tuple[str, Member | None]:
        for position, child in enumerate(self.children):
            if self.waiting[position] is None and not self.eof[position]:
                state, member = child.work()
                if state == IS_EOF:
                    self.eof[position] = True
                elif state == ADVANCED and member is not None:
                    self.dups_tested += 1
                    if member.rid in self.seen:
                        self.dups_dropped += 1
                    else:
                        self.seen.add(member.rid)
                        self.waiting[position] = member
                return NEED_TIME, None
        ready = [(p, m) for p, m in enumerate(self.waiting) if m is not None]
        if not ready:
            return IS_EOF, None
        best = ready[0]
        for candidate in ready[1:]:
            if self._before(candidate, best):
                best = candidate
        self.waiting[best[0]] = None
        return ADVANCED, best[1]

    def is_eof(self) -> bool:
        return all(self.eof) and all(m is None for m in self.waiting)

    def plan(self) -> dict[str, Any]:
        return {"stage": self.stage_name, **self.plan_fields(), "inputStages": [c.plan() for c in self.children]}

    def stats(self) -> dict[str, Any]:
        out = super().stats()
        out.pop("inputStage", None)
        out["inputStages"] = [c.stats() for c in self.children]
        return out

    def plan_fields(self) -> dict[str, Any]:
        return {"sortPattern": dict(self.pattern)}

    def stats_fields(self) -> dict[str, Any]:
        return {"dupsTested": self.dups_tested, "dupsDropped": self.dups_dropped}


class Sort(Stage):
    """SORT: a blocking in-memory sort, optionally keeping only the top ``limit``."""

    stage_name = "SORT"

    def __init__(
        self,
        child: Stage,
        pattern: Sequence[tuple[str, int]],
        collate: Collate | None,
        limit: int | None,
        index_paths: Sequence[str] | None = None,
    ) -> None:
        super().__init__([child])
        self.pattern, self.collate, self.limit = list(pattern), collate, limit
        self.index_paths = index_paths
        self.buffer: list[Member] = []
        self.populated = False
        self.output: list[Member] = []

    def do_work(self) -> tuple[str, Member | None]:
        if not self.populated:
            state, member = self.children[0].work()
            if state == ADVANCED and member is not None:
                self.buffer.append(member)
                return NEED_TIME, None
            if state == IS_EOF:
                self._sort()
                self.populated = True
                return NEED_TIME, None
            return state, None
        if not self.output:
            return IS_EOF, None
        return ADVANCED, self.output.pop(0)

    def _sort(self) -> None:
        members = list(self.buffer)
        # one key per member, chosen among its compound keys (MongoDB's SortKeyGenerator); for one
        # path, the smallest (asc) or largest (desc) of its values
        chosen = {id(m): self._compound_key(m) for m in members}
        for position in reversed(range(len(self.pattern))):
            members.sort(key=lambda m: chosen[id(m)][position], reverse=self.pattern[position][1] < 0)
        self.output = members[: self.limit] if self.limit else members

    def _compound_key(self, member: Member) -> tuple[tuple, ...]:
        paths = [path for path, _ in self.pattern]
        if member.doc is None and member.entry is not None and self.index_paths is not None:
            positions = [list(self.index_paths).index(path) for path in paths]
            return tuple(sort_key(member.entry.values[p], self.collate) for p in positions)
        return sort_pattern_key(member.doc or {}, self.pattern, self.collate)

    def is_eof(self) -> bool:
        return self.populated and not self.output

    def plan_fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "sortPattern": dict(self.pattern),
            "memLimit": MAX_BLOCKING_SORT_BYTES,
        }
        if self.limit:
            fields["limitAmount"] = self.limit
        fields["type"] = "default" if self.index_paths is not None else "simple"
        return fields

    def stats_fields(self) -> dict[str, Any]:
        return {"usedDisk": False, "spills": 0}


def is_inclusion(projection: Mapping[str, Any]) -> bool:
    """Whether a projection lists the fields to keep: a 1 on a field, or ``{_id: 1}`` alone."""
    flags = {k: v for k, v in projection.items() if isinstance(v, int | bool)}
    others = [v for k, v in flags.items() if k != "_id"]
    return any(others) if others else bool(flags.get("_id", 0))


def apply_projection(doc: Mapping[str, Any], projection: Mapping[str, Any]) -> dict[str, Any]:
    """An inclusion or exclusion projection applied to a document."""
    if is_inclusion(projection):
        out: dict[str, Any] = {}
        if projection.get("_id", 1) and "_id" in doc:
            out["_id"] = doc["_id"]
        for path, flag in projection.items():
            if path == "_id" or not flag:
                continue
            _copy_path(doc, out, path.split("."))
        return out
    out = {k: v for k, v in doc.items()}
    for path, flag in projection.items():
        if not flag:
            _drop_path(out, path.split("."))
    return out


def _copy_path(source: Any, target: dict[str, Any], parts: list[str]) -> None:
    if not isinstance(source, Mapping) or parts[0] not in source:
        return
    value = source[parts[0]]
    if len(parts) == 1:
        target[parts[0]] = value
    elif isinstance(value, Mapping):
        _copy_path(value, target.setdefault(parts[0], {}), parts[1:])
    elif isinstance(value, list):  # a dotted inclusion reaches into the documents of an array
        target[parts[0]] = _copy_elements(value, parts[1:])


def _copy_elements(values: list[Any], parts: list[str]) -> list[Any]:
    out: list[Any] = []
    for element in values:
        if isinstance(element, Mapping):
            projected: dict[str, Any] = {}
            _copy_path(element, projected, parts)
            out.append(projected)
        elif isinstance(element, list):
            out.append(_copy_elements(element, parts))
    return out


def _drop_path(target: dict[str, Any], parts: list[str]) -> None:
    if len(parts) == 1:
        target.pop(parts[0], None)
    elif isinstance(target.get(parts[0]), Mapping):
        target[parts[0]] = dict(target[parts[0]])
        _drop_path(target[parts[0]], parts[1:])


class Projection(Stage):
    """PROJECTION_SIMPLE / PROJECTION_DEFAULT / PROJECTION_COVERED."""

    def __init__(
        self,
        child: Stage,
        projection: Mapping[str, Any],
        kind: str,
        index_paths: Sequence[str] | None = None,
        *,
        sort: Sequence[tuple[str, int]] = (),
        collate: Collate | None = None,
        hashed: frozenset[str] = frozenset(),
    ):
        super().__init__([child])
        self.projection, self.index_paths, self.hashed = dict(projection), index_paths, hashed
        self.stage_name = kind
        self.meta = [k for k, v in self.projection.items() if isinstance(v, Mapping)]
        self.fields = {k: v for k, v in self.projection.items() if k not in self.meta}
        self.sort, self.collate = list(sort), collate

    def do_work(self) -> tuple[str, Member | None]:
        state, member = self.children[0].work()
        if state != ADVANCED or member is None:
            return state, member
        if member.doc is None and member.entry is not None and self.index_paths is not None:
            source: Mapping[str, Any] = key_document(self.index_paths, member.entry.values, self.hashed)
        else:
            source = member.doc or {}
        projected = apply_projection(source, self.fields) if self.fields else dict(source)
        for name in self.meta:  # {$meta: "sortKey"}: the values the sort ordered by, as an array
            projected[name] = [sort_value_of(source, path, d, self.collate) for path, d in self.sort]
        return ADVANCED, Member(member.rid, entry=member.entry, doc=projected)

    def plan_fields(self) -> dict[str, Any]:
        return {"transformBy": self.projection}


class Skip(Stage):
    """SKIP: drop the first ``amount`` results."""

    stage_name = "SKIP"

    def __init__(self, child: Stage, amount: int) -> None:
        super().__init__([child])
        self.amount = self.left = amount

    def do_work(self) -> tuple[str, Member | None]:
        state, member = self.children[0].work()
        if state == ADVANCED and self.left > 0:
            self.left -= 1
            return NEED_TIME, None
        return state, member

    def plan_fields(self) -> dict[str, Any]:
        return {"skipAmount": self.amount}


class Limit(Stage):
    """LIMIT: stop after ``amount`` results."""

    stage_name = "LIMIT"

    def __init__(self, child: Stage, amount: int) -> None:
        super().__init__([child])
        self.amount = self.left = amount

    def do_work(self) -> tuple[str, Member | None]:
        if self.left == 0:
            return IS_EOF, None
        state, member = self.children[0].work()
        if state == ADVANCED:
            self.left -= 1
        return state, member

    def is_eof(self) -> bool:
        return self.left == 0 or self.children[0].is_eof()

    def plan_fields(self) -> dict[str, Any]:
        return {"limitAmount": self.amount}

"""Grading a loaded blog shape on live facts, each asked of the database, never of a stored answer.

1. Every hot operation (run at least :data:`~workbook.blog.workload.HOT_PER_SECOND` times a
   second) takes one round trip (pymongo's command monitoring counts them) and no read in it scans
   a whole collection (explain of every command it sent: the server's, or the model offline).
2. Every array is bounded: each top-level array field found in the data has a ``maxItems`` of at
   most :data:`ARRAY_LIMIT` in the collection's live ``$jsonSchema`` validator, and no document holds more.
3. No document is near the 16 MiB limit: the largest (``$bsonSize``) is under :data:`NEAR_LIMIT_BYTES`.
4. Every paged read is paged by the server: for the author (or post) with the most posts (or
   comments), pages 0 and 1 share no document and the bytes sent back are at most a quarter more
   than the pages' own, plus :data:`PAGE_OVERHEAD_BYTES` a round trip (not the whole list cut in Python).
5. Every field the shape adds to one of the blog's collections is declared, in ``Shape(copies=)``,
   as atomic with its source, as a copy that may be stale, or as the data's only home.

Facts 4 and 5 are seed 001's pre-ship checklist ("pagination"; "which changes must be atomic and
which copied values may be stale"); :func:`checklist` maps every checklist line to its facts.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import bson
import pandas as pd

from workbook.bounds import MAX_CALLS, check_count
from workbook.engine_reads import stored_documents
from workbook.errors import WorkbookError
from workbook.facts import MAX_BSON_SIZE
from workbook.sizes import largest_document_bytes

ARRAY_LIMIT = 250
"""Arrays above this many elements are flagged by MongoDB Compass's schema advice and by the
course's schema doctor (issue 14), following MongoDB's "Avoid Unbounded Arrays" guidance."""

NEAR_LIMIT_BYTES = MAX_BSON_SIZE // 2
"""A document at half of the 16 MiB limit has room for only one more doubling: 8 MiB."""

GRADED_CALLS = 5
"""Seeded calls of each hot operation the grade runs (the same arguments for every shape)."""


@dataclass(frozen=True)
class Fact:
    """One graded fact: what, about which operation or collection, pass or not, and the evidence."""

    rule: str
    subject: str
    passed: bool
    evidence: str


@dataclass(frozen=True)
class Grade:
    """The capstone's grade of one loaded shape: one row per fact."""

    dataset: str
    shape: str
    facts: tuple[Fact, ...]

    @property
    def passed(self) -> bool:
        """Whether every fact holds."""
        return all(fact.passed for fact in self.facts)

    def failed(self, rule: str | None = None) -> list[Fact]:
        """The facts that do not hold (only those of ``rule`` if given)."""
        return [f for f in self.facts if not f.passed and (rule is None or f.rule == rule)]

    def rule_passed(self, rule: str) -> bool:
        """Whether every fact of ``rule`` holds ("one round trip", "no collection scan", ...)."""
        return not self.failed(rule)

    def to_frame(self) -> pd.DataFrame:
        """One row per fact: rule, subject, pass/fail and the evidence."""
        return pd.DataFrame(
            [
                {"rule": f.rule, "subject": f.subject, "result": "pass" if f.passed else "FAIL", "evidence": f.evidence}
                for f in self.facts
            ]
        )

    def summary(self) -> str:
        """One line: how many facts hold."""
        held = sum(f.passed for f in self.facts)
        verdict = "passes" if self.passed else "does not pass yet"
        return f"The {self.dataset} {self.shape} shape {verdict}: {held} of {len(self.facts)} facts hold."

    def __repr__(self) -> str:
        return self.summary() + "\n" + self.to_frame().to_string(index=False)

    def _repr_html_(self) -> str:
        from workbook.display import table

        facts = self.to_frame().set_index(["result", "rule", "subject"])  # pass or FAIL first: the lesson
        return f"<p>{self.summary()}</p>" + table(facts)._repr_html_()


COPY_POLICIES = ("atomic", "may be stale", "only home")
"""What a field the shape adds can be: written with its source in one write or transaction, written
apart from it (wrong until a recount if a write between them fails), or the data itself, embedded."""

PAGED_BY = {"author_posts": ("posts", "authorId"), "comments_page": ("comments", "postId")}
"""Each paged blog read, and where its longest list is counted: the author with the most posts,
the post with the most comments (in the generated blog, the same for every shape)."""

PAGE_OVERHEAD_BYTES = 512
"""Reply bytes allowed per round trip (cursor id, namespace, ok), beyond the page's own documents
and a quarter more for projection differences."""

RULES = (
    "one round trip",
    "no collection scan",
    "pages cut by the server",
    "arrays bounded",
    "documents far from 16 MiB",
    "copies atomic or may be stale",
)
"""The rules, in the order the grade reports them."""


def grade(loaded: Any, *, calls: int = GRADED_CALLS, seed: int = 7, progress: bool = True) -> Grade:
    """Grade what ``workbook.load("blog", shape)`` returned on the capstone's live facts.

    A progress bar names each step as it runs (``progress=False`` hides it): a grade takes seconds.
    """
    from functools import partial

    from workbook.blog.workload import hot_operations
    from workbook.loaded import loaded_shapes
    from workbook.waiting import wait_bar

    check_count("calls", calls, most=MAX_CALLS, unit="seeded calls per hot operation")
    (shape,) = loaded_shapes(loaded, argument="loaded")
    if shape.dataset != "blog":
        raise WorkbookError(
            f"The capstone grades the blog dataset, not {shape.dataset}.",
            fix='Grade what workbook.load("blog", "mine") returned.',
        )
    steps = [(name, partial(_operation_facts, shape, name, calls, seed)) for name in hot_operations(shape.workload)]
    steps += [
        ("paged reads", partial(_page_facts, shape, seed)),
        ("arrays", partial(_array_facts, shape)),
        ("sizes", partial(_size_facts, shape)),
        ("copies", partial(_copy_facts, shape)),
    ]
    facts: list[Fact] = []
    bar = wait_bar(total=len(steps), desc=f"grade {shape.shape}", unit="step", progress=progress, delay=0)
    with bar:  # the widget alone, shown at once: no "0%" text left in the saved cell
        for step, check in steps:
            bar.set_postfix_str(step)
            facts += check()
            bar.update()
    order = {rule: i for i, rule in enumerate(RULES)}
    return Grade(shape.dataset, shape.shape, tuple(sorted(facts, key=lambda f: order[f.rule])))


def _operation_facts(shape: Any, name: str, calls: int, seed: int) -> list[Fact]:
    from workbook.calls import measure_call
    from workbook.explaining.work import explained_reads
    from workbook.workloads import Pools

    spec, pools = shape.workload.operation(name), Pools(shape.db)
    trips: list[int] = []
    scans: set[str] = set()
    unexplained: list[str] = []
    for call in range(calls):
        args, kwargs = spec.arguments(pools, random.Random(f"{seed}:grade:{name}:{call}"))
        work = measure_call(None, shape.ops.run, name, *args, **kwargs)  # explained below, read by read
        trips.append(work.round_trips)
        for collection, summary in explained_reads(shape.db, work.sent):
            if isinstance(summary, Exception):
                unexplained.append(f"{collection}: {summary}")
            elif "COLLSCAN" in summary["stages"] or any(
                not lookup.get("indexesUsed") for lookup in summary.get("lookups") or []
            ):
                scans.add(collection)
    most = max(trips)
    trip_fact = Fact(
        "one round trip",
        name,
        most == 1,
        f"{most} round trip{'s' if most != 1 else ''} at most in {calls} calls",
    )
    if unexplained:
        scan_fact = Fact("no collection scan", name, False, "could not explain: " + "; ".join(unexplained[:2]))
    elif scans:
        scan_fact = Fact("no collection scan", name, False, "collection scan on " + ", ".join(sorted(scans)))
    else:
        scan_fact = Fact("no collection scan", name, True, f"every read used an index in {calls} calls")
    return [trip_fact, scan_fact]


def array_lengths(collection: Any) -> dict[str, int]:
    """The longest length of each top-level array field in ``collection``.

    Measured by the server with an aggregation; on the offline default, read from the engine's
    storage (the same documents, without a pass of ``$objectToArray`` through the wire).
    """
    stored = stored_documents(collection.database, collection.name)
    if stored is not None:
        longest: dict[str, int] = {}
        for document in stored:
            for field, value in document.items():
                if isinstance(value, list):
                    longest[field] = max(longest.get(field, 0), len(value))
        return dict(sorted(longest.items()))
    pipeline = [
        {"$project": {"field": {"$objectToArray": "$$ROOT"}}},
        {"$unwind": "$field"},
        {"$match": {"field.v": {"$type": "array"}}},
        {"$group": {"_id": "$field.k", "longest": {"$max": {"$size": "$field.v"}}}},
        {"$sort": {"_id": 1}},
    ]
    return {row["_id"]: row["longest"] for row in collection.aggregate(pipeline)}


def declared_max_items(db: Any, collection: str) -> dict[str, int | None]:
    """Each top-level property's ``maxItems`` in the collection's live ``$jsonSchema`` validator."""
    info = next(iter(db.list_collections(filter={"name": collection})), None) or {}
    schema = (info.get("options", {}).get("validator") or {}).get("$jsonSchema") or {}
    return {name: rules.get("maxItems") for name, rules in (schema.get("properties") or {}).items()}


def _array_facts(shape: Any) -> list[Fact]:
    facts = []
    for collection in shape.collection_names:
        declared = declared_max_items(shape.db, collection)
        for field, longest in array_lengths(shape.db[collection]).items():
            bound = declared.get(field)
            subject = f"{collection}.{field}"
            if bound is None:
                facts.append(
                    Fact("arrays bounded", subject, False, f"no maxItems in the validator; longest holds {longest:,}")
                )
            elif bound > ARRAY_LIMIT or longest > bound:
                facts.append(
                    Fact(
                        "arrays bounded",
                        subject,
                        False,
                        f"maxItems {bound:,} (limit {ARRAY_LIMIT}); longest holds {longest:,}",
                    )
                )
            else:
                facts.append(Fact("arrays bounded", subject, True, f"maxItems {bound:,}; longest holds {longest:,}"))
    return facts


def _size_facts(shape: Any) -> list[Fact]:
    facts = []
    for collection in shape.collection_names:
        largest = largest_document_bytes(shape.db[collection])
        facts.append(
            Fact(
                "documents far from 16 MiB",
                collection,
                largest < NEAR_LIMIT_BYTES,
                f"largest document {largest:,} bytes ({largest / MAX_BSON_SIZE:.1%} of 16 MiB)",
            )
        )
    return facts


CHECKLIST: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "the important reads and updates, with their filters, sorts and pagination",
        ("one round trip", "no collection scan", "pages cut by the server"),
    ),
    ("a growth expectation and an explicit bound for every embedded array", ("arrays bounded",)),
    ("which changes must be atomic and which copied values may be stale", ("copies atomic or may be stale",)),
    (
        "representative reads and writes measured with their indexes and realistic sizes",
        ("no collection scan", "documents far from 16 MiB"),
    ),
)
"""Seed 001's pre-ship checklist, each line with the graded rules that check it."""


def checklist(graded: Grade | None = None) -> pd.DataFrame:
    """The pre-ship checklist, one row per line: the rules that check it (and, given a grade, how many facts hold)."""
    rows = []
    for line, rules in CHECKLIST:
        row: dict[str, Any] = {"before shipping": line, "graded by": ", ".join(rules)}
        if graded is not None:
            facts = [f for f in graded.facts if f.rule in rules]
            row["facts holding"] = f"{sum(f.passed for f in facts)} of {len(facts)}"
        rows.append(row)
    return pd.DataFrame(rows).set_index("before shipping")


def _busiest(shape: Any, collection: str, field: str) -> Any:
    """The value of ``field`` most frequent in the generated blog's ``collection`` (ties: the lowest)."""
    from workbook.datasets import generate

    blog = generate("blog", shape.report.scale, seed=shape.report.seed)
    counts = Counter(document[field] for document in blog.collections[collection])
    return min(counts.items(), key=lambda item: (-item[1], str(item[0])))[0]


def _page_facts(shape: Any, seed: int) -> list[Fact]:
    from workbook.monitor import capture

    facts = []
    for name, (collection, field) in PAGED_BY.items():
        if name not in shape.workload.names:
            continue
        subject = _busiest(shape, collection, field)
        pages, sent, shown, trips = [], 0, 0, 0
        for page in (0, 1):
            with capture() as work:
                result = list(shape.ops.run(name, subject, page=page))
            pages.append(result)
            sent += work.bytes_returned
            trips += work.round_trips
            shown += sum(len(bson.encode(document)) for document in result)
        first, second = ({repr(d.get("_id", d)) for d in page} for page in pages)
        allowed = shown + shown // 4 + PAGE_OVERHEAD_BYTES * trips
        sizes = f"pages 0 and 1 of {subject}: {len(pages[0])} and {len(pages[1])} documents"
        if not pages[0] or first & second:
            evidence = f"{sizes}; " + ("page 0 is empty" if not pages[0] else "they overlap")
            facts.append(Fact("pages cut by the server", name, False, evidence))
        else:
            cut = sent <= allowed
            evidence = f"{sizes}, {shown:,} bytes shown, {sent:,} bytes sent back" + (
                "" if cut else " (the whole list came back and was cut in Python)"
            )
            facts.append(Fact("pages cut by the server", name, cut, evidence))
    return facts


def field_names(collection: Any) -> set[str]:
    """Every top-level field name in ``collection`` (offline: from the engine's storage)."""
    stored = stored_documents(collection.database, collection.name)
    if stored is not None:
        return {name for document in stored for name in document}
    pipeline = [
        {"$project": {"field": {"$objectToArray": "$$ROOT"}}},
        {"$unwind": "$field"},
        {"$group": {"_id": "$field.k"}},
    ]
    return {row["_id"] for row in collection.aggregate(pipeline)}


def added_fields(shape: Any) -> list[str]:
    """The fields the shape stores in one of the blog's collections that the generated blog does not hold there."""
    from workbook.datasets import generate

    blog = generate("blog", shape.report.scale, seed=shape.report.seed)
    added = []
    for collection in shape.collection_names:
        if collection not in blog.collections:
            continue
        own = {name for document in blog.collections[collection] for name in document}
        added += [f"{collection}.{name}" for name in sorted(field_names(shape.db[collection]) - own)]
    return added


def copy_facts(loaded: Any, copies: Mapping[str, str] | None = None) -> list[Fact]:
    """The copies rule's facts for a loaded blog shape: against what it declared, or against ``copies`` given
    instead (``copies={}`` shows what a shape that forgot its declarations is graded)."""
    from workbook.loaded import loaded_shapes

    (shape,) = loaded_shapes(loaded, argument="loaded")
    return _copy_facts(shape, copies)


def _copy_facts(shape: Any, copies: Mapping[str, str] | None = None) -> list[Fact]:
    from workbook.blog.registration import declared_copies

    declared = declared_copies(shape.shape) if copies is None else dict(copies)
    facts = []
    for subject in added_fields(shape):
        policy = declared.get(subject)
        if policy in COPY_POLICIES:
            facts.append(Fact("copies atomic or may be stale", subject, True, f"declared {policy}"))
        elif policy is None:
            evidence = "not declared in Shape(copies=): atomic, may be stale, or only home?"
            facts.append(Fact("copies atomic or may be stale", subject, False, evidence))
        else:
            evidence = f"declared {policy!r}; say one of: {', '.join(COPY_POLICIES)}"
            facts.append(Fact("copies atomic or may be stale", subject, False, evidence))
    return facts

"""Grading a loaded blog shape on live facts, each asked of the database, never of a stored answer.

1. Every hot operation (run at least :data:`~workbook.blog.workload.HOT_PER_SECOND` times a
   second) takes one round trip (pymongo's command monitoring counts them) and no read in it scans
   a whole collection (explain of every command it sent: the server's, or the model offline).
2. Every array is bounded: each top-level array field found in the data has a ``maxItems`` of at
   most :data:`ARRAY_LIMIT` in the collection's live ``$jsonSchema`` validator, and no document holds more.
3. No document is near the 16 MiB limit: the largest (``$bsonSize``) is under :data:`NEAR_LIMIT_BYTES`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

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
        return f"<p>{self.summary()}</p>" + self.to_frame().to_html(index=False)


RULES = ("one round trip", "no collection scan", "arrays bounded", "documents far from 16 MiB")
"""The rules, in the order the grade reports them."""


def grade(loaded: Any, *, calls: int = GRADED_CALLS, seed: int = 7) -> Grade:
    """Grade what ``workbook.load("blog", shape)`` returned on the capstone's live facts."""
    from workbook.blog.workload import hot_operations
    from workbook.loaded import loaded_shapes

    check_count("calls", calls, most=MAX_CALLS, unit="seeded calls per hot operation")
    (shape,) = loaded_shapes(loaded, argument="loaded")
    if shape.dataset != "blog":
        raise WorkbookError(
            f"The capstone grades the blog dataset, not {shape.dataset}.",
            fix='Grade what workbook.load("blog", "mine") returned.',
        )
    facts: list[Fact] = []
    for name in hot_operations(shape.workload):
        facts += _operation_facts(shape, name, calls, seed)
    facts += _array_facts(shape)
    facts += _size_facts(shape)
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

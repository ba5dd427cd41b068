"""Differential check of the planner model against a real MongoDB server.

Seeded random small collections (integers, arrays, mixed numbers, strings in several letter cases),
random index sets and random finds (equality, ranges, ``$in``, sorts, projections, limits) run
through the server's explain and through the model on the same documents and ``list_indexes()``;
every difference in chosen index, stage shape, nReturned, totalKeysExamined or totalDocsExamined
is reported. Cases are pure data (:func:`generate_cases`), so the generator and the comparison
(:func:`explain_differences`) are tested without a server.

Only the learner's ``diffcheck`` workbench database is written to, and it is dropped at the end.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pymongo.collection import Collection
from pymongo.database import Database
from pymongo.errors import PyMongoError

from workbook.errors import DiffcheckNeedsServerError, WorkbookError
from workbook.planner import summarize

COMPARED = ("index", "stages", "nReturned", "totalKeysExamined", "totalDocsExamined")
"""What must agree between the server and the model, per case."""

# MongoDB 8.0 answers an equality on _id on its EXPRESS path where earlier versions (and the model)
# use IDHACK: the same index walk, counted the same, under another stage name.
_SAME_STAGE = {"EXPRESS_IXSCAN": "IDHACK", "EXPRESS_CLUSTERED_IXSCAN": "IDHACK"}

_WORDS = ("apple", "Apple", "APPLE", "banana", "Banana", "cherry", "Cherry", "date", "éclair", "Eclair")
_FIELDS = ("a", "b", "s", "n")  # a: small ints, b: ints or arrays, s: strings, n: ints and doubles
_SORTABLE = ("a", "s", "n", "_id")  # not b: sorting on an array field is its own lesson
_CASE_INSENSITIVE = {"locale": "en", "strength": 2}


@dataclass(frozen=True)
class Case:
    """One collection (documents and indexes) and one find on it."""

    number: int
    documents: list[dict[str, Any]]
    indexes: list[dict[str, Any]]  # {"key": [(field, direction), ...], "name": ..., optional "collation"}
    query: dict[str, Any]  # explain() keyword arguments: filter, projection, sort, limit, skip, collation

    def describe(self) -> str:
        """The find, as one short line."""
        parts = [repr(self.query.get("filter") or {})]
        parts += [f"{k}={v!r}" for k, v in self.query.items() if k != "filter" and v is not None]
        indexes = ", ".join(i["name"] for i in self.indexes) or "no index"
        return f"find({', '.join(parts)}) [{indexes}; {len(self.documents)} docs]"


@dataclass(frozen=True)
class Difference:
    """One compared figure on which the server and the model disagree."""

    what: str
    server: Any
    model: Any


@dataclass
class CaseResult:
    """A case with both sides' figures and their differences."""

    case: Case
    server: dict[str, Any] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=dict)
    differences: list[Difference] = field(default_factory=list)


@dataclass
class DiffReport:
    """Every case of one differential run, and the engine compared against."""

    engine: str
    seed: int
    results: list[CaseResult]

    @property
    def failures(self) -> list[CaseResult]:
        """The cases with at least one difference."""
        return [r for r in self.results if r.differences]

    def table(self) -> str:
        """A plain-text table of every difference, then a one-line verdict."""
        lines = [f"diffcheck: planner model vs {self.engine}, seed {self.seed}, {len(self.results)} cases"]
        if self.failures:
            lines.append(f"{'case':>5}  {'what':<18}  {'server':<28}  {'model':<28}  query")
            for result in self.failures:
                for d in result.differences:
                    lines.append(
                        f"{result.case.number:>5}  {d.what:<18}  {_cell(d.server):<28}  {_cell(d.model):<28}  "
                        f"{result.case.describe()}"
                    )
        lines.append(
            f"{len(self.failures)} of {len(self.results)} cases differ"
            + (" (exit 1)" if self.failures else ": the model agrees with the server on every case")
        )
        return "\n".join(lines)


def _cell(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 28 else text[:27] + "…"


def _document(rng: random.Random, number: int) -> dict[str, Any]:
    doc: dict[str, Any] = {"_id": number}
    roll = rng.random()
    if roll < 0.85:
        doc["a"] = rng.randint(0, 7)
    elif roll < 0.92:
        doc["a"] = None
    if rng.random() < 0.4:
        doc["b"] = [rng.randint(0, 7) for _ in range(rng.randint(0, 3))]
    else:
        doc["b"] = rng.randint(0, 7)
    if rng.random() < 0.9:
        doc["s"] = rng.choice(_WORDS)
    doc["n"] = rng.randint(0, 20) + (0.5 if rng.random() < 0.3 else 0)
    return doc


def _indexes(rng: random.Random) -> list[dict[str, Any]]:
    indexes: list[dict[str, Any]] = []
    for _ in range(rng.randint(0, 3)):
        fields = rng.sample(_FIELDS, rng.choice((1, 1, 2)))
        if rng.random() < 0.2 and len(fields) == 1:
            fields.append("_id")
        key = [(f, rng.choice((1, 1, -1))) for f in fields]
        if any(existing["key"] == key for existing in indexes):
            continue
        index: dict[str, Any] = {"key": key, "name": "_".join(f"{f}_{d}" for f, d in key)}
        if "s" in fields and rng.random() < 0.15:
            index["collation"] = dict(_CASE_INSENSITIVE)
            index["name"] += "_ci"
        indexes.append(index)
    return indexes


def _predicate(rng: random.Random, path: str) -> Any:
    if path == "s":
        words = sorted(set(_WORDS))
        return rng.choice((rng.choice(words), {"$in": rng.sample(words, 2)}, {"$gte": "B", "$lt": "c"}))
    if path == "n":
        low = rng.randint(0, 15)
        return rng.choice(({"$gt": low}, {"$lte": low + 0.5}, {"$gte": low, "$lt": low + 5}))
    if path == "_id":
        return rng.choice((rng.randint(0, 40), {"$lt": rng.randint(1, 40)}))
    low = rng.randint(0, 6)
    return rng.choice((low, {"$in": sorted(rng.sample(range(8), 2))}, {"$gte": low, "$lt": low + 2}, {"$gt": low}))


def _extended_predicate(rng: random.Random, path: str) -> Any:
    """The operators added to the model after the first differential runs ($or is built in _query)."""
    if path == "b":
        low = rng.randint(0, 5)
        return rng.choice(
            (
                {"$elemMatch": {"$gte": low, "$lt": low + 3}},
                {"$all": sorted(rng.sample(range(8), 2))},
                {"$size": rng.randint(0, 3)},
                {"$type": rng.choice(("array", "number"))},
                [low, low + 1],
            )
        )
    if path == "s":
        return rng.choice(({"$ne": rng.choice(_WORDS)}, {"$nin": rng.sample(_WORDS, 2)}, {"$exists": False}))
    low = rng.randint(0, 15)
    return rng.choice(({"$not": {"$gt": low}}, {"$ne": low}, {"$exists": True}))


def _query(rng: random.Random, indexes: Sequence[Mapping[str, Any]], extended: bool = False) -> dict[str, Any]:
    paths = rng.sample((*_FIELDS, "_id"), rng.choice((0, 1, 1, 2)))
    query: dict[str, Any] = {"filter": {path: _predicate(rng, path) for path in paths}}
    if extended:
        for path in rng.sample(("b", "s", "n"), rng.choice((0, 1, 1))):
            query["filter"][path] = _extended_predicate(rng, path)
        if rng.random() < 0.35:
            branches = rng.sample(_FIELDS, 2)
            query["filter"]["$or"] = [{path: _predicate(rng, path)} for path in branches]
    if rng.random() < 0.45:
        query["sort"] = [(f, rng.choice((1, -1))) for f in rng.sample(_SORTABLE, rng.choice((1, 1, 2)))]
    if rng.random() < 0.25 and indexes:
        covered = [f for f, _ in rng.choice(list(indexes))["key"] if f != "b"]
        if covered:
            query["projection"] = {f: 1 for f in covered} | ({} if "_id" in covered else {"_id": 0})
    if rng.random() < 0.3:
        query["limit"] = rng.randint(1, 10)
    if rng.random() < 0.1:
        query["skip"] = rng.randint(1, 5)
    if "s" in paths and rng.random() < 0.25:
        query["collation"] = dict(_CASE_INSENSITIVE)
    return query


def generate_cases(seed: int = 0, count: int = 50, *, extended: bool = False) -> list[Case]:
    """``count`` cases, the same for the same seed on every machine; ``extended`` adds $or, $elemMatch,
    $all, $size, $type, $not, $ne, $nin, $exists and equality to arrays to the queries."""
    rng = random.Random(seed)
    cases = []
    for number in range(count):
        documents = [_document(rng, i) for i in range(rng.randint(5, 40))]
        indexes = _indexes(rng)
        cases.append(Case(number, documents, indexes, _query(rng, indexes, extended)))
    return cases


def figures(explain: Mapping[str, Any]) -> dict[str, Any]:
    """The compared figures of one explain (server or model)."""
    summary = summarize(explain)
    return {
        "index": summary["index"] or summary["plan"],
        "stages": " > ".join(_SAME_STAGE.get(str(s), str(s)) for s in summary["stages"]),
        "nReturned": summary["nReturned"],
        "totalKeysExamined": summary["keysExamined"],
        "totalDocsExamined": summary["docsExamined"],
    }


def explain_differences(server: Mapping[str, Any], model: Mapping[str, Any]) -> list[Difference]:
    """Every compared figure on which two explains disagree (none when they agree)."""
    ours, theirs = figures(model), figures(server)
    return [Difference(what, theirs[what], ours[what]) for what in COMPARED if theirs[what] != ours[what]]


Explainer = Callable[..., Mapping[str, Any]]


def run_case(db: Database, case: Case, server_explain: Explainer, model_explain: Explainer) -> CaseResult:
    """Load one case into its own collection, explain it both ways, explain_differences, drop the collection."""
    from workbook.namespace import require_own_database

    require_own_database(db.name)  # it writes: only ever to the learner's own databases
    collection: Collection = db[f"case{case.number}"]
    collection.drop()
    result = CaseResult(case)
    try:
        if case.documents:
            collection.insert_many([dict(d) for d in case.documents])
        for index in case.indexes:
            options = {k: v for k, v in index.items() if k not in ("key",)}
            collection.create_index(index["key"], **options)
        sides: dict[str, Mapping[str, Any]] = {}
        for side, run in (("server", server_explain), ("model", model_explain)):
            try:
                sides[side] = run(collection, **case.query)
            except (WorkbookError, PyMongoError, ValueError) as error:
                setattr(result, side, {"error": str(error).splitlines()[0]})
        if len(sides) == 2:
            result.server, result.model = figures(sides["server"]), figures(sides["model"])
            result.differences = explain_differences(sides["server"], sides["model"])
        else:
            result.differences = [Difference("error", result.server.get("error"), result.model.get("error"))]
    finally:
        collection.drop()
    return result


def diffcheck(uri: str | None = None, *, seed: int = 0, cases: int = 50, extended: bool = False) -> DiffReport:
    """Run ``cases`` generated finds through a real server's explain and through the model."""
    import workbook
    from workbook.connection import resolve_uri
    from workbook.explain_model import model_find
    from workbook.explaining import explain

    if resolve_uri(uri) is None:
        raise DiffcheckNeedsServerError(
            "The differential check compares the planner model with a real MongoDB server, and none is configured.",
            fix="Start one (`docker compose up -d`) and set MONGODB_URI=mongodb://localhost:27017 "
            "(or pass --uri), then run `python -m workbook diffcheck` again.",
        )
    db = workbook.connect(uri, database="diffcheck", quiet=True)
    info = workbook.engine_info(db)
    if info.kind != "mongodb":
        raise DiffcheckNeedsServerError(
            f"The configured server is the {info.label}, not MongoDB.", fix="Point MONGODB_URI at a MongoDB server."
        )
    try:
        results = [
            run_case(db, case, lambda c, **q: explain(c, **q).raw, model_find)
            for case in generate_cases(seed, cases, extended=extended)
        ]
    finally:
        db.client.drop_database(db.name)
    return DiffReport(info.label, seed, results)


def main(uri: str | None = None, *, seed: int = 0, cases: int = 50, extended: bool = False) -> int:
    """``python -m workbook diffcheck``: print the table; 0 when the model agrees, 1 otherwise."""
    report = diffcheck(uri, seed=seed, cases=cases, extended=extended)
    print(report.table())
    return 1 if report.failures else 0

"""Design tasks: graded on live facts of the learner's own database, never on a stored answer.

A bank file names a checker and its parameters; the checker code lives here. Each checker asks
the database (an explain, the commands a page sends, a shape's declared validator) and returns a
:class:`Outcome` that says what it saw, with units.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pymongo.collection import Collection
from pymongo.database import Database

from workbook.calls import measure_call
from workbook.errors import UnknownChoiceError


@dataclass(frozen=True)
class Outcome:
    """What a checker found: pass or not, why (for the learner), and the facts it measured."""

    correct: bool
    feedback: str
    facts: dict[str, Any] = field(default_factory=dict)


Checker = Callable[..., Outcome]
CHECKERS: dict[str, Checker] = {}
"""Checker name (as written in bank files) -> function(db, answer, **params)."""

SETUPS: dict[str, Callable[..., str]] = {}
"""Setup name -> function(db, **params) that prepares the learner's database; returns what it did."""


def checker(name: str) -> Callable[[Checker], Checker]:
    """Register a design-task checker under ``name``."""

    def register(function: Checker) -> Checker:
        CHECKERS[name] = function
        return function

    return register


def setup(name: str) -> Callable[[Callable[..., str]], Callable[..., str]]:
    """Register a setup under ``name``."""

    def register(function: Callable[..., str]) -> Callable[..., str]:
        SETUPS[name] = function
        return function

    return register


# --- explain: the workbench's explain() when present, else the server's command or the planner model


def _find_arguments(params: Mapping[str, Any]) -> dict[str, Any]:
    """A query's find arguments from bank-file parameters (sort as ``[[field, direction], ...]``)."""
    arguments: dict[str, Any] = {}
    for name in ("filter", "projection", "limit", "skip", "hint"):
        if params.get(name) is not None:
            arguments[name] = params[name]
    if params.get("sort"):
        arguments["sort"] = [(str(key), int(direction)) for key, direction in params["sort"]]
    return arguments


def _explain_summary(collection: Collection, **find_args: Any) -> dict[str, Any]:
    """The explain summary of ``collection.find(**find_args)``: the server's on MongoDB, modelled offline."""
    from workbook.explaining import explain

    return explain(collection, **find_args).summary()


def _plan_facts(summary: Mapping[str, Any]) -> str:
    plan = summary["plan"] + (f" on index {summary['index']}" if summary.get("index") else "")
    sort = ", with an in-memory sort" if summary.get("inMemorySort") else ""
    return (
        f"{plan}{sort}: {summary['docsExamined']} documents examined, {summary['keysExamined']} index keys "
        f"examined, {summary['nReturned']} documents returned (explain, executionStats)"
    )


def _query_collection(db: Database, params: Mapping[str, Any]) -> Collection:
    return db[params["collection"]]


def _nothing_returned(summary: Mapping[str, Any], question_id: str | None) -> Outcome | None:
    if summary["nReturned"]:
        return None
    again = f' Run workbook.quiz.prepare("{question_id}") to load the data again.' if question_id else ""
    return Outcome(False, "The query returned no documents, so there is nothing to measure." + again, dict(summary))


@checker("examines-no-more-than-returns")
def examines_no_more_than_returns(
    db: Database, answer: Any = None, *, question_id: str | None = None, **params: Any
) -> Outcome:
    """Pass when the query examines no more documents than it returns (docsExamined <= nReturned) and
    needs no in-memory sort (the ESR rule: an index that filters but does not order is not enough)."""
    summary = _explain_summary(_query_collection(db, params), **_find_arguments(params))
    empty = _nothing_returned(summary, question_id)
    if empty:
        return empty
    facts = _plan_facts(summary)
    if summary["docsExamined"] <= summary["nReturned"] and summary.get("inMemorySort"):
        return Outcome(
            False,
            f"Almost: {facts}. The index finds the documents, but their order comes from an in-memory sort. "
            "Follow ESR: the equality field first, then the sort fields in the sort's order, then any range.",
            dict(summary),
        )
    if summary["docsExamined"] <= summary["nReturned"]:
        return Outcome(True, f"Yes: {facts}. Every document read is one the query returns.", dict(summary))
    hint = (
        " No index serves this query: MongoDB reads every document."
        if summary["plan"] == "COLLSCAN"
        else " The index narrows the search, but documents it selects are still filtered or sorted out."
    )
    return Outcome(False, f"Not yet: {facts}.{hint}", dict(summary))


@checker("query-is-covered")
def query_is_covered(db: Database, answer: Any = None, *, question_id: str | None = None, **params: Any) -> Outcome:
    """Pass when an index alone answers the query: no document is fetched (explain says covered)."""
    summary = _explain_summary(_query_collection(db, params), **_find_arguments(params))
    empty = _nothing_returned(summary, question_id)
    if empty:
        return empty
    facts = _plan_facts(summary)
    if summary["covered"]:
        return Outcome(True, f"Covered: {facts}. The index holds every field the query filters, sorts and returns.")
    why = (
        "no index is used"
        if not summary.get("index")
        else "a FETCH stage reads documents, so the index lacks a field the query filters on or returns"
    )
    return Outcome(False, f"Not covered: {facts}; {why}.", dict(summary))


# --- counting the reads a page sends, with pymongo command monitoring

_READ_COMMANDS = {"find", "aggregate", "getMore", "count", "distinct"}


def _unbounded_arrays(spec: Any, collection: str) -> list[str]:
    """Array fields of a declared collection whose validator sets no ``maxItems``."""
    validator = spec.collection(collection).validator or {}
    properties = validator.get("$jsonSchema", {}).get("properties", {})
    return sorted(
        name for name, rule in properties.items() if rule.get("bsonType") == "array" and "maxItems" not in rule
    )


@checker("product-page-one-read")
def product_page_one_read(
    db: Database, answer: Any = None, *, question_id: str | None = None, **params: Any
) -> Outcome:
    """Pass when the chosen shape's product page sends one read and its products stay bounded."""
    import workbook
    from workbook.namespace import shape_database_name
    from workbook.shapes import SHAPE_NAMES

    shape = str(answer or "")
    if shape not in SHAPE_NAMES:
        raise UnknownChoiceError("shape", answer, SHAPE_NAMES)
    dataset = workbook.generate(params.get("dataset", "store"), params.get("scale", "tiny"), params.get("seed", 7))
    shape_db = db.client[shape_database_name(dataset.name, shape, within=db.name)]
    loaded = workbook.load(dataset, shape, shape_db, progress=False)
    reviewed = Counter(review["productId"] for review in dataset.collections["reviews"])
    product_id = reviewed.most_common(1)[0][0]
    work = measure_call(None, loaded.ops.run, "product_page", product_id)
    counts = Counter(name for name in work.commands if name in _READ_COMMANDS)
    reads = sum(counts.values())
    unbounded = _unbounded_arrays(loaded.spec, "products")
    sent = ", ".join(f"{n} {name}" for name, n in sorted(counts.items()))
    facts = {"shape": shape, "product": product_id, "reads": reads, "commands": dict(counts), "unbounded": unbounded}
    read_text = f"the {shape} product page sent {reads} read command{'s' * (reads != 1)} ({sent}) for {product_id}"
    if reads != 1:
        return Outcome(False, f"Not this one: {read_text}, measured with pymongo command monitoring.", facts)
    if unbounded:
        fields = ", ".join(f"products.{name}" for name in unbounded)
        return Outcome(
            False,
            f"One read, yes ({read_text}), but {fields} has no maxItems in the shape's validator: "
            "it grows with every review, so the product document grows without bound.",
            facts,
        )
    return Outcome(True, f"Yes: {read_text}, and every array in its products is bounded by the validator.", facts)


@setup("store-products")
def store_products(db: Database, *, collection: str = "products", scale: str = "tiny", seed: int = 7) -> str:
    """Replace ``collection`` with the store's products, indexed on ``_id`` only."""
    import workbook
    from workbook.namespace import require_own_database

    require_own_database(db.name)
    products = workbook.generate("store", scale, seed).collections["products"]
    db.drop_collection(collection)
    db[collection].insert_many([dict(product) for product in products])
    where = f"{db.name}.{collection}"
    return f"Loaded {len(products)} store products ({scale}, seed {seed}) into {where}, indexed on _id only."


def run_checker(question: Mapping[str, Any], answer: Any, db: Database) -> Outcome:
    """Run a design question's checker on ``db``."""
    function = CHECKERS[question["checker"]]
    return function(db, answer, question_id=question["id"], **question["params"])


def run_setup(question: Mapping[str, Any], db: Database) -> str:
    """Prepare ``db`` for a design question (nothing to do if it has no setup)."""
    spec = question.get("setup")
    if not spec:
        return "This task needs no preparation."
    return SETUPS[spec["name"]](db, **spec.get("params", {}))

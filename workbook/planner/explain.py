"""The explain document for a modelled find, shaped like MongoDB's (``allPlansExecution`` verbosity;
:func:`at_verbosity` trims it)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from workbook.planner.labels import MODELLED_BY, MODELLED_FIELD
from workbook.planner.plans import CollectionModel, check_supported, choose_and_run
from workbook.planner.predicates import serialize_all
from workbook.planner.query import FindArgs, FindQuery, make_query
from workbook.planner.stages import Member

VERBOSITIES = ("queryPlanner", "executionStats", "allPlansExecution")


def run_find(collection: CollectionModel, namespace: str, query: FindQuery) -> tuple[dict[str, Any], list[Member]]:
    """Plan and run a find on the model; the explain document and the returned members."""
    started = time.perf_counter()
    check_supported(collection, query)
    outcome = choose_and_run(collection, query)
    elapsed_ms = (time.perf_counter() - started) * 1000
    root = outcome.winner.root
    query_planner: dict[str, Any] = {
        "namespace": namespace,
        "indexFilterSet": False,
        "parsedQuery": serialize_all(query.predicates),
        "maxIndexedOrSolutionsReached": False,
        "maxIndexedAndSolutionsReached": False,
        "maxScansToExplodeReached": False,
        "winningPlan": root.plan(),
        "rejectedPlans": [c.root.plan() for c in outcome.rejected],
    }
    if query.collation:
        query_planner["collation"] = dict(query.collation)
    explain = {
        "explainVersion": "1",
        "queryPlanner": query_planner,
        "executionStats": {
            "executionSuccess": True,
            "nReturned": root.advanced,
            "executionTimeMillis": 0,
            "modelTimeMillis": round(elapsed_ms, 3),
            "totalKeysExamined": root.total("keys_examined"),
            "totalDocsExamined": root.total("docs_examined"),
            "executionStages": root.stats(),
            "allPlansExecution": outcome.trials,
        },
        MODELLED_FIELD: MODELLED_BY,
    }
    return explain, outcome.results


def find_documents(
    collection: CollectionModel, namespace: str, args: FindArgs
) -> tuple[dict[str, Any], list[Mapping[str, Any]]]:
    """The explain of a find and the documents it returns, in order, as the model's chosen plan
    produced them (its projection applied by the plan's own PROJECTION stage).

    >>> c = CollectionModel([{"_id": 1, "a": 2}, {"_id": 2, "a": 1}], [{"key": {"_id": 1}, "name": "_id_"}])
    >>> find_documents(c, "db.c", FindArgs.of({"a": {"$gte": 1}}, {"_id": 0}, [("a", 1)]))[1]
    [{'a': 1}, {'a': 2}]
    """
    query = make_query(args, collection.collation)
    explain, members = run_find(collection, namespace, query)
    database, _, name = namespace.partition(".")
    explain["command"] = {**args.command(name), "$db": database}
    if query.projection:
        return explain, [dict(m.doc) if m.doc is not None else {} for m in members]
    return explain, [collection.documents[m.rid] for m in members]


def at_verbosity(explain: Mapping[str, Any], verbosity: str) -> dict[str, Any]:
    """The explain as MongoDB answers at ``verbosity``: queryPlanner alone, plus executionStats, plus
    every raced plan's trial stats (``allPlansExecution``)."""
    out = dict(explain)
    if verbosity == "queryPlanner":
        out.pop("executionStats", None)
    elif verbosity == "executionStats" and isinstance(out.get("executionStats"), Mapping):
        out["executionStats"] = {k: v for k, v in out["executionStats"].items() if k != "allPlansExecution"}
    if isinstance(out.get("stages"), list):
        out["stages"] = [_stage_at(stage, verbosity) for stage in out["stages"]]
    return out


def _stage_at(stage: Mapping[str, Any], verbosity: str) -> dict[str, Any]:
    if "$cursor" in stage:
        trimmed = {**stage, "$cursor": at_verbosity(stage["$cursor"], verbosity)}
        if verbosity == "queryPlanner":
            trimmed.pop("nReturned", None)
        return trimmed
    if verbosity == "queryPlanner":
        counters = ("nReturned", "totalDocsExamined", "totalKeysExamined", "collectionScans", "indexesUsed")
        return {k: v for k, v in stage.items() if k not in counters}
    return dict(stage)


def explain_find(
    documents: Sequence[Mapping[str, Any]],
    indexes: Sequence[Mapping[str, Any]],
    *,
    namespace: str,
    model: CollectionModel | None = None,
    **arguments: Any,
) -> dict[str, Any]:
    """Model ``find(...).explain()`` over these documents and ``list_indexes()``; ``arguments`` are
    :meth:`FindArgs.of`'s (filter, projection, sort, limit, skip, hint, collation).

    ``model``, a :class:`CollectionModel` built earlier from the same documents and indexes, saves
    rebuilding its index keys (``documents`` and ``indexes`` are then not read).
    """
    return explain_find_args(model or CollectionModel(documents, indexes), namespace, FindArgs.of(**arguments))


def explain_find_args(collection: CollectionModel, namespace: str, args: FindArgs) -> dict[str, Any]:
    """Model the explain of a find given as :class:`FindArgs` on a collection model."""
    explain, _ = run_find(collection, namespace, make_query(args, collection.collation))
    database, _, name = namespace.partition(".")
    explain["command"] = {**args.command(name), "$db": database}
    return explain


def find_records(collection: CollectionModel, namespace: str, args: FindArgs) -> tuple[dict[str, Any], list[int]]:
    """Plan and run a find on the model: its explain and the positions, in ``collection.documents``, of the
    documents the winning plan returns, in the order it returns them (what the offline default replies)."""
    explain, members = run_find(collection, namespace, make_query(args, collection.collation))
    return explain, [member.rid for member in members]

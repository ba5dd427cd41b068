"""The explain document for a modelled find, shaped like MongoDB's "executionStats" verbosity."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from workbook.planner.plans import Collection, check_supported, choose_and_run
from workbook.planner.predicates import serialize_all
from workbook.planner.query import FindQuery, make_query
from workbook.planner.stages import Member

MODELLED_BY = (
    "workbook planner model (offline default): MongoDB's classic query planner rules applied to the "
    "real documents and indexes; counts come from walking the modelled index keys, not from a server"
)


def run_find(collection: Collection, namespace: str, query: FindQuery) -> tuple[dict[str, Any], list[Member]]:
    """Plan and run a find on the model; the explain document and the returned members."""
    started = time.perf_counter()
    check_supported(collection, query)
    winner, rejected, results = choose_and_run(collection, query)
    elapsed_ms = (time.perf_counter() - started) * 1000
    root = winner.root
    explain: dict[str, Any] = {
        "explainVersion": "1",
        "queryPlanner": {
            "namespace": namespace,
            "indexFilterSet": False,
            "parsedQuery": serialize_all(query.predicates),
            "maxIndexedOrSolutionsReached": False,
            "maxIndexedAndSolutionsReached": False,
            "maxScansToExplodeReached": False,
            "winningPlan": root.plan(),
            "rejectedPlans": [c.root.plan() for c in rejected],
        },
        "executionStats": {
            "executionSuccess": True,
            "nReturned": root.advanced,
            "modelTimeMillis": round(elapsed_ms, 3),
            "totalKeysExamined": root.total("keys_examined"),
            "totalDocsExamined": root.total("docs_examined"),
            "executionStages": root.stats(),
        },
        "modelledBy": MODELLED_BY,
    }
    if query.collation:
        explain["queryPlanner"]["collation"] = dict(query.collation)
    return explain, results


def explain_find(
    documents: Sequence[Mapping[str, Any]],
    indexes: Sequence[Mapping[str, Any]],
    *,
    namespace: str,
    filter: Mapping[str, Any] | None = None,
    projection: Any = None,
    sort: Any = None,
    limit: int | None = None,
    skip: int | None = None,
    hint: Any = None,
    collation: Mapping[str, Any] | None = None,
    model: Collection | None = None,
) -> dict[str, Any]:
    """Model ``find(...).explain("executionStats")`` over these documents and ``list_indexes()``.

    ``model``, a :class:`Collection` built earlier from the same documents and indexes, saves
    rebuilding its index keys (``documents`` and ``indexes`` are then not read).
    """
    query = make_query(filter, projection, sort, limit, skip, hint, collation)
    explain, _ = run_find(model or Collection(documents, indexes), namespace, query)
    explain["command"] = _command(namespace, filter, projection, sort, limit, skip, hint, collation)
    return explain


def _command(
    namespace: str, filter: Any, projection: Any, sort: Any, limit: Any, skip: Any, hint: Any, collation: Any
) -> dict:
    command: dict[str, Any] = {"find": namespace.split(".", 1)[-1], "filter": dict(filter or {})}
    for name, value in (
        ("projection", projection),
        ("sort", sort),
        ("limit", limit),
        ("skip", skip),
        ("hint", hint),
        ("collation", collation),
    ):
        if value:
            command[name] = value
    command["$db"] = namespace.split(".", 1)[0]
    return command

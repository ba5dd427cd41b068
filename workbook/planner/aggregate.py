"""Modelled aggregate explain: a leading $match/$sort/$skip/$limit/$project pushed into the find
layer (the $cursor stage), then $lookup stages run per outer document against the foreign indexes.

MongoDB 5.0+ reports, per $lookup stage, totalDocsExamined, totalKeysExamined, collectionScans,
indexesUsed and nReturned; the model computes them by running each inner match.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from workbook.errors import ExplainError
from workbook.planner.explain import run_find
from workbook.planner.keys import path_keys
from workbook.planner.labels import MODELLED_BY, MODELLED_FIELD
from workbook.planner.plans import CollectionModel
from workbook.planner.query import FindArgs, make_query, normalize_projection
from workbook.planner.reading import COLLECTION_SCANS, index_name, walk
from workbook.planner.unsupported import not_modelled
from workbook.planner.values import MISSING, UNDEFINED


def _split_prefix(
    pipeline: Sequence[Mapping[str, Any]], collation: Mapping[str, Any] | None = None
) -> tuple[FindArgs, list[Mapping[str, Any]]]:
    """The find-layer part of the pipeline (what MongoDB pushes into $cursor) and the rest.

    A $limit or $skip after a leading $project still moves into the find layer: the projection
    changes no document count (pipeline_d.cpp pushes the limit down, so $cursor examines no more).
    """
    filters: list[Mapping[str, Any]] = []
    find: dict[str, Any] = {"sort": None, "skip": None, "limit": None, "projection": None, "collation": collation}
    for position, stage in enumerate(pipeline):
        if len(stage) != 1:
            raise not_modelled("a pipeline stage with more than one operator")
        ((name, spec),) = stage.items()
        later = [k for k in ("skip", "limit", "projection") if find[k] is not None]
        if not isinstance(spec, Mapping) and name in ("$match", "$sort", "$project"):
            raise not_modelled(f"a {name} stage whose argument is not a document")
        if name == "$match" and not later and find["sort"] is None:
            filters.append(spec)
        elif name == "$sort" and find["sort"] is None and not later:
            find["sort"] = spec
        elif name == "$skip" and find["skip"] is None and find["limit"] is None:
            find["skip"] = int(spec)
        elif name == "$limit" and find["limit"] is None:
            find["limit"] = int(spec)
        elif name == "$project" and find["projection"] is None and find["skip"] is None and find["limit"] is None:
            normalize_projection(spec)  # refuses what the model does not cover
            find["projection"] = dict(spec)
        else:
            return _args(filters, find), list(pipeline[position:])
    return _args(filters, find), []


def _args(filters: list[Mapping[str, Any]], find: dict[str, Any]) -> FindArgs:
    combined = {"$and": list(filters)} if len(filters) > 1 else (filters[0] if filters else None)
    return FindArgs.of(combined, **find)


def _lookup_spec(stage: Mapping[str, Any]) -> dict[str, Any]:
    ((name, spec),) = stage.items()
    if name != "$lookup":
        raise not_modelled(f"the stage {name} after the find-layer prefix")
    if "pipeline" in spec or not {"from", "localField", "foreignField", "as"} <= set(spec):
        raise not_modelled("$lookup with a pipeline (only localField/foreignField is modelled)")
    return dict(spec)


TRAILING_NOTE = (
    "not modelled: this stage works on the documents the stages before it return, so it examines "
    "no index keys or stored documents; its output count is not computed by the model"
)


def _split_lookups(rest: list[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[Mapping[str, Any]]]:
    """$lookup stages right after the find layer (modelled), then the rest (listed, not modelled).

    Stages such as $group or $unwind read only what reaches them, so the keys and documents a
    pipeline examines are all in the find layer and the lookups; a $lookup after them would read
    its foreign collection with inputs the model does not compute, so it is refused.
    """
    lookups: list[dict[str, Any]] = []
    for position, stage in enumerate(rest):
        if "$lookup" not in stage:
            trailing = rest[position:]
            if any("$lookup" in later or "$unionWith" in later or "$graphLookup" in later for later in trailing):
                raise not_modelled("a $lookup, $graphLookup or $unionWith after other stages")
            return lookups, trailing
        lookups.append(_lookup_spec(stage))
    return lookups, []


def _local_values(document: Mapping[str, Any], path: str) -> list[Any]:
    values, _ = path_keys(document, path)
    return [None if v is MISSING or v is UNDEFINED else v for v in values]


def explain_aggregate(
    collections: Mapping[str, tuple[Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]]] | CollectionModel],
    collection_name: str,
    pipeline: Sequence[Mapping[str, Any]],
    *,
    database: str = "test",
    collation: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Model ``aggregate(pipeline).explain("executionStats")``; collections map name -> (docs, indexes)
    or to a :class:`CollectionModel` model built earlier."""
    started = time.perf_counter()
    models = {
        name: source if isinstance(source, CollectionModel) else CollectionModel(*source)
        for name, source in collections.items()
    }
    if collection_name not in models:
        raise ExplainError(
            f"No collection {collection_name!r} among the models given.",
            fix=f"Choose from: {', '.join(sorted(models))}.",
        )
    find, rest = _split_prefix(pipeline, collation)
    lookups, trailing = _split_lookups(rest)
    query = make_query(find, models[collection_name].collation)
    namespace = f"{database}.{collection_name}"
    cursor_explain, members = run_find(models[collection_name], namespace, query)
    command = {"aggregate": collection_name, "pipeline": list(pipeline), "$db": database}
    if not lookups and not trailing:
        return {**cursor_explain, "command": command}
    outputs = [dict(m.doc or {}) for m in members]
    stages: list[dict[str, Any]] = [
        {
            "$cursor": {k: cursor_explain[k] for k in ("queryPlanner", "executionStats")},
            "nReturned": len(outputs),
        }
    ]
    for spec in lookups:
        stages.append(_run_lookup(models, database, spec, outputs))
    stages.extend({**dict(stage), "modelNote": TRAILING_NOTE} for stage in trailing)
    return {
        "explainVersion": "1",
        "stages": stages,
        "command": command,
        "modelTimeMillis": round((time.perf_counter() - started) * 1000, 3),
        MODELLED_FIELD: MODELLED_BY,
    }


def _run_lookup(
    models: dict[str, CollectionModel], database: str, spec: Mapping[str, Any], outputs: list[dict[str, Any]]
) -> dict[str, Any]:
    foreign = models.get(spec["from"]) or CollectionModel([], [])
    namespace = f"{database}.{spec['from']}"
    docs_examined = keys_examined = collection_scans = 0
    indexes_used: list[str] = []
    for document in outputs:
        values = _local_values(document, spec["localField"])
        condition = {"$eq": values[0]} if len(values) == 1 else {"$in": values}
        explain, members = run_find(
            foreign, namespace, make_query(FindArgs({spec["foreignField"]: condition}), foreign.collation)
        )
        stats = explain["executionStats"]
        docs_examined += stats["totalDocsExamined"]
        keys_examined += stats["totalKeysExamined"]
        for stage in walk(explain["queryPlanner"]["winningPlan"]):
            if stage["stage"] in COLLECTION_SCANS:
                collection_scans += 1
            name = index_name(stage)
            if name and name not in indexes_used:
                indexes_used.append(name)
        document[spec["as"]] = [dict(m.doc or {}) for m in members]
    return {
        "$lookup": {k: spec[k] for k in ("from", "as", "localField", "foreignField")},
        "totalDocsExamined": docs_examined,
        "totalKeysExamined": keys_examined,
        "collectionScans": collection_scans,
        "indexesUsed": indexes_used,
        "nReturned": len(outputs),
    }

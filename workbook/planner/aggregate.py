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
    pipeline: Sequence[Mapping[str, Any]],
    collation: Mapping[str, Any] | None = None,
    hint: str | Mapping[str, Any] | None = None,
) -> tuple[FindArgs, list[Mapping[str, Any]]]:
    """The find-layer part of the pipeline (what MongoDB pushes into $cursor) and the rest.

    A $limit or $skip after a leading $project still moves into the find layer: the projection
    changes no document count (pipeline_d.cpp pushes the limit down, so $cursor examines no more).
    A $match after the $sort moves ahead of it (DocumentSourceSort swaps with a following $match,
    split_match_and_swap_with_sort.js): the part of it that does not use $expr joins the scan's
    filter, and a part that does stays in the pipeline after the $sort.
    """
    filters: list[Mapping[str, Any]] = []
    find: dict[str, Any] = {"sort": None, "skip": None, "limit": None, "projection": None, "collation": collation}
    if hint is not None:
        find["hint"] = dict(hint) if isinstance(hint, Mapping) else hint
    for position, stage in enumerate(pipeline):
        if len(stage) != 1:
            raise not_modelled("a pipeline stage with more than one operator")
        ((name, spec),) = stage.items()
        later = [k for k in ("skip", "limit", "projection") if find[k] is not None]
        if not isinstance(spec, Mapping) and name in ("$match", "$sort", "$project"):
            raise not_modelled(f"a {name} stage whose argument is not a document")
        if name == "$match" and not later and find["sort"] is None:
            filters.append(spec)
        elif name == "$match" and not later:  # after the $sort: what can move ahead of it does
            movable, kept = split_expr(spec)
            filters.extend(movable)
            if kept:
                return _args(filters, find), [{"$match": _conjunction(kept)}, *pipeline[position + 1 :]]
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


def _conjuncts(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A $match filter as the list of filters it is the conjunction of (a one-branch $or is its branch)."""
    out: list[dict[str, Any]] = []
    for key, value in spec.items():
        if key in ("$and", "$or") and isinstance(value, list) and (key == "$and" or len(value) == 1):
            for branch in value:
                if not isinstance(branch, Mapping):
                    return [dict(spec)]  # malformed: left whole, for the find layer's own refusal
                out.extend(_conjuncts(branch))
        else:
            out.append({key: value})
    return out


def _uses_expr(value: Any) -> bool:
    if isinstance(value, Mapping):
        return any(key in ("$expr", "$where") or _uses_expr(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_uses_expr(item) for item in value)
    return False


def split_expr(spec: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A $match after a $sort split as MongoDB splits it: the conjuncts that may move ahead of the
    $sort, and those that use $expr (or $where), which stay behind it.

    >>> split_expr({"$or": [{"$and": [{"a": {"$ne": 2}}, {"$expr": {"$ne": ["$a", "$b"]}}]}]})
    ([{'a': {'$ne': 2}}], [{'$expr': {'$ne': ['$a', '$b']}}])
    """
    conjuncts = _conjuncts(spec)
    return [c for c in conjuncts if not _uses_expr(c)], [c for c in conjuncts if _uses_expr(c)]


def _conjunction(filters: list[dict[str, Any]]) -> dict[str, Any]:
    return filters[0] if len(filters) == 1 else {"$and": filters}


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
    its foreign collection with inputs the model does not compute, so it is refused. An $unwind of
    a $lookup's ``as`` field right after it is absorbed into the $lookup, as MongoDB does (its
    explain shows ``unwinding`` on the $lookup stage and no $unwind stage).
    """
    lookups: list[dict[str, Any]] = []
    position = 0
    while position < len(rest):
        stage = rest[position]
        if "$lookup" not in stage:
            trailing = rest[position:]
            if any("$lookup" in later or "$unionWith" in later or "$graphLookup" in later for later in trailing):
                raise not_modelled("a $lookup, $graphLookup or $unionWith after other stages")
            return lookups, trailing
        spec = _lookup_spec(stage)
        following = rest[position + 1] if position + 1 < len(rest) else None
        unwinding = _unwinding(following, spec["as"]) if following is not None else None
        if unwinding is not None:
            spec["unwinding"] = unwinding
            position += 1
        lookups.append(spec)
        position += 1
    return lookups, []


def _unwinding(stage: Mapping[str, Any], as_field: str) -> dict[str, Any] | None:
    """The ``unwinding`` a $lookup absorbs from the $unwind stage after it (None: not its ``as`` field)."""
    spec = stage.get("$unwind") if len(stage) == 1 else None
    options: Mapping[str, Any] = spec if isinstance(spec, Mapping) else {"path": spec}
    if options.get("path") != f"${as_field}" or not set(options) <= {
        "path",
        "preserveNullAndEmptyArrays",
        "includeArrayIndex",
    }:
        return None
    unwinding: dict[str, Any] = {"preserveNullAndEmptyArrays": bool(options.get("preserveNullAndEmptyArrays", False))}
    if isinstance(options.get("includeArrayIndex"), str):
        unwinding["includeArrayIndex"] = options["includeArrayIndex"]
    return unwinding


def _unwound(document: dict[str, Any], as_field: str, unwinding: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The documents an absorbed $unwind makes of one joined document (the matches sit under ``as_field``)."""
    matches = document.pop(as_field)
    index_field = unwinding.get("includeArrayIndex")
    if not matches:
        if not unwinding["preserveNullAndEmptyArrays"]:
            return []
        return [{**document, index_field: None} if index_field else dict(document)]
    out = []
    for index, match in enumerate(matches):
        unwound = {**document, as_field: match}
        if index_field:
            unwound[index_field] = index
        out.append(unwound)
    return out


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
    hint: str | Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Model ``aggregate(pipeline, hint=...).explain("executionStats")``; collections map name ->
    (docs, indexes) or to a :class:`CollectionModel` model built earlier. The hint is the find layer's."""
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
    find, rest = _split_prefix(pipeline, collation, hint)
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
        stage, outputs = _run_lookup(models, database, spec, outputs, find.collation)
        stages.append(stage)
    stages.extend({**dict(stage), "modelNote": TRAILING_NOTE} for stage in trailing)
    return {
        "explainVersion": "1",
        "stages": stages,
        "command": command,
        "modelTimeMillis": round((time.perf_counter() - started) * 1000, 3),
        MODELLED_FIELD: MODELLED_BY,
    }


def _run_lookup(
    models: dict[str, CollectionModel],
    database: str,
    spec: Mapping[str, Any],
    outputs: list[dict[str, Any]],
    collation: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One $lookup stage's explain and the documents it passes on (unwound if it absorbed an $unwind).

    Each inner match runs under the aggregate's collation (else the foreign collection's default),
    so an index whose collation differs is used only for values collation does not affect."""
    foreign = models.get(spec["from"]) or CollectionModel([], [])
    namespace = f"{database}.{spec['from']}"
    docs_examined = keys_examined = collection_scans = 0
    indexes_used: list[str] = []
    unwinding = spec.get("unwinding")
    passed: list[dict[str, Any]] = []
    for document in outputs:
        values = _local_values(document, spec["localField"])
        condition = {"$eq": values[0]} if len(values) == 1 else {"$in": values}
        args = FindArgs.of({spec["foreignField"]: condition}, collation=collation)
        explain, members = run_find(foreign, namespace, make_query(args, foreign.collation))
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
        passed.extend([document] if unwinding is None else _unwound(document, spec["as"], unwinding))
    shown = {k: spec[k] for k in ("from", "as", "localField", "foreignField")}
    if unwinding is not None:
        shown["unwinding"] = dict(unwinding)
    stage = {
        "$lookup": shown,
        "totalDocsExamined": docs_examined,
        "totalKeysExamined": keys_examined,
        "collectionScans": collection_scans,
        "indexesUsed": indexes_used,
        "nReturned": len(passed),
    }
    return stage, passed

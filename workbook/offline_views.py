"""Views on the offline default: mongoeco 4.11.0 stores ``create(viewOn=...)`` but reads it as an empty
collection. Reads of a view are rewritten here into an aggregation on its source (as MongoDB resolves
them); writes are refused with MongoDB's code 166. Pure functions over command documents."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

MAX_VIEW_DEPTH = 20
"""MongoDB's limit on views defined on views."""

WIRE_KEYS = ("$db", "lsid", "$readPreference", "$clusterTime", "txnNumber", "autocommit", "startTransaction")
"""Keys of a command that belong to the wire, not to the command: carried over unchanged."""

ViewLookup = Callable[[str], "Mapping[str, Any] | None"]
"""``lookup(collection) -> its options`` (None when it does not exist) within one database."""


def resolve_view(lookup: ViewLookup, name: str) -> tuple[str, list[dict[str, Any]]] | None:
    """``(source collection, full pipeline)`` when ``name`` is a view (following views on views), else None."""
    pipeline: list[dict[str, Any]] = []
    source = name
    for _ in range(MAX_VIEW_DEPTH):
        options = lookup(source) or {}
        if not options.get("viewOn"):
            return None if source == name else (source, pipeline)
        pipeline = [*list(options.get("pipeline") or []), *pipeline]
        source = str(options["viewOn"])
    raise ValueError(f"view {name} is defined on views more than {MAX_VIEW_DEPTH} deep")


def find_as_aggregate(body: Mapping[str, Any], source: str, view_pipeline: list[dict[str, Any]]) -> dict[str, Any]:
    """A ``find`` on a view as the equivalent ``aggregate`` on the view's source."""
    pipeline = list(view_pipeline)
    if body.get("filter"):
        pipeline.append({"$match": body["filter"]})
    if body.get("sort"):
        pipeline.append({"$sort": body["sort"]})
    if body.get("skip"):
        pipeline.append({"$skip": body["skip"]})
    if body.get("limit"):
        pipeline.append({"$limit": abs(int(body["limit"]))})
    if body.get("projection"):
        pipeline.append({"$project": body["projection"]})
    cursor = {"batchSize": body["batchSize"]} if "batchSize" in body else {}
    rewritten: dict[str, Any] = {"aggregate": source, "pipeline": pipeline, "cursor": cursor}
    for key in ("collation", "hint", "comment", "let", "maxTimeMS", *WIRE_KEYS):
        if key in body:
            rewritten[key] = body[key]
    return rewritten


def aggregate_on_view(body: Mapping[str, Any], source: str, view_pipeline: list[dict[str, Any]]) -> dict[str, Any]:
    """An ``aggregate`` on a view as an ``aggregate`` on its source with the view's stages first."""
    return {**body, "aggregate": source, "pipeline": [*view_pipeline, *list(body.get("pipeline") or [])]}


def count_pipeline(body: Mapping[str, Any], view_pipeline: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The aggregation that answers ``count`` on a view: the view, the query, skip and limit, ``$count``."""
    pipeline = list(view_pipeline)
    if body.get("query"):
        pipeline.append({"$match": body["query"]})
    if body.get("skip"):
        pipeline.append({"$skip": body["skip"]})
    if body.get("limit"):
        pipeline.append({"$limit": abs(int(body["limit"]))})
    return [*pipeline, {"$count": "n"}]


def mark_views(reply: dict[str, Any]) -> dict[str, Any]:
    """``listCollections``: report views as ``type: view``, read-only, as MongoDB does."""
    batch = (reply.get("cursor") or {}).get("firstBatch")
    for entry in batch or []:
        if isinstance(entry, dict) and (entry.get("options") or {}).get("viewOn"):
            entry["type"] = "view"
            entry["info"] = {**dict(entry.get("info") or {}), "readOnly": True}
            entry.pop("idIndex", None)
    return reply


def with_default_collation(options: Mapping[str, Any], command: str, body: dict[str, Any]) -> dict[str, Any]:
    """An ``aggregate`` without a collation gets its collection's default one, as MongoDB applies it
    to every stage (collation_match.js: a ``$match`` after a ``$project`` too); ``options`` are the
    database's collection options by name. mongoeco applies it only where its own find runs."""
    target = body.get(command)
    if command != "aggregate" or not isinstance(target, str) or body.get("collation") is not None:
        return body
    collation = (options.get(target) or {}).get("collation")
    return {**body, "collation": dict(collation)} if isinstance(collation, Mapping) else body


WHERE_IN_MATCH = 2
"""BadValue: MongoDB refuses ``$where`` inside an aggregation ``$match`` (match.js)."""


def prepare_aggregate(options: Mapping[str, Any], command: str, body: dict[str, Any]) -> dict[str, Any]:
    """An ``aggregate`` as MongoDB runs it: the collection's default collation applied
    (:func:`with_default_collation`), and a ``$where`` in a ``$match`` refused with BadValue
    (mongoeco runs it)."""
    if command == "aggregate" and _where_in_match(body.get("pipeline")):
        from mongoeco.errors import OperationFailure

        raise OperationFailure("$where is not allowed inside of a $match aggregation expression", code=WHERE_IN_MATCH)
    unrun = _stages_not_run(body.get("pipeline")) if command == "aggregate" else []
    if unrun:
        from mongoeco.errors import OperationFailure

        raise OperationFailure(
            f"The offline default does not run the stage {unrun[0]}. Fix: run this pipeline on a real MongoDB "
            "server (docker compose up -d, then set MONGODB_URI).",
            code=NOT_RUN_STAGE,
        )
    return with_default_collation(options, command, body)


NOT_RUN_STAGE = 168
"""InvalidPipelineOperator: a stage the offline engine does not run (refused by name, with the fix)."""

STAGES_NOT_RUN = ("$graphLookup",)
"""Stages mongoeco 4.11.0 does not run."""


def _stages_not_run(pipeline: Any) -> list[str]:
    """The stages of a pipeline (and of its $facet / $lookup / $unionWith sub-pipelines) the engine does not run."""
    found: list[str] = []
    for stage in pipeline if isinstance(pipeline, list) else []:
        if not isinstance(stage, Mapping) or len(stage) != 1:
            continue
        ((name, spec),) = stage.items()
        if name in STAGES_NOT_RUN:
            found.append(name)
        elif name == "$facet" and isinstance(spec, Mapping):
            found.extend(n for p in spec.values() for n in _stages_not_run(p))
        elif name in ("$lookup", "$unionWith") and isinstance(spec, Mapping):
            found.extend(_stages_not_run(spec.get("pipeline")))
    return found


def _where_in_match(pipeline: Any) -> bool:
    """Whether a pipeline (or a $facet / $lookup / $unionWith sub-pipeline in it) has $where in a $match."""
    if not isinstance(pipeline, list):
        return False
    for stage in pipeline:
        if not isinstance(stage, Mapping) or len(stage) != 1:
            continue
        ((name, spec),) = stage.items()
        if name == "$match" and _mentions_where(spec):
            return True
        if name == "$facet" and isinstance(spec, Mapping) and any(_where_in_match(p) for p in spec.values()):
            return True
        if name in ("$lookup", "$unionWith") and isinstance(spec, Mapping) and _where_in_match(spec.get("pipeline")):
            return True
    return False


def _mentions_where(value: Any) -> bool:
    if isinstance(value, Mapping):
        return "$where" in value or any(_mentions_where(v) for k, v in value.items() if k in ("$and", "$or", "$nor"))
    if isinstance(value, list):
        return any(_mentions_where(v) for v in value)
    return False

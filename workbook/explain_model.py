"""Explain commands answered by the planner model: one function from a command document and the
models of the collections it reads to MongoDB's explain output, used by the offline server (native
explain) and by the differential check (on a real server's data)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pymongo.collection import Collection

from workbook import planner
from workbook.errors import ExplainError
from workbook.planner.explain import VERBOSITIES, at_verbosity
from workbook.planner.unsupported import not_modelled
from workbook.planner.writes import explain_delete, explain_update

EXPLAINABLE = ("find", "aggregate", "update", "delete")
"""Commands whose explain the model answers."""

PLAN_CHANGING_FIND_OPTIONS = ("min", "max", "returnKey", "showRecordId", "tailable", "awaitData")
"""find options that change the plan or its output in ways the model does not follow."""


def collections_read(command: Mapping[str, Any]) -> list[str]:
    """The collections an explained command reads: its own, then each $lookup's ``from``."""
    name = next(iter(command), None)
    own = command.get(name) if name else None
    if not isinstance(own, str):
        raise ExplainError(
            f"The explained command {dict(command)!r} names no collection.",
            fix='Explain a find or aggregate, e.g. {"find": "products", "filter": {...}}.',
        )
    names = [own]
    for stage in command.get("pipeline") or []:
        lookup = stage.get("$lookup") if isinstance(stage, Mapping) else None
        if isinstance(lookup, Mapping) and isinstance(lookup.get("from"), str):
            names.append(lookup["from"])
    return list(dict.fromkeys(names))


def check_verbosity(verbosity: Any) -> str:
    """The verbosity if MongoDB knows it (else the refusal MongoDB gives, naming the choices)."""
    if verbosity not in VERBOSITIES:
        raise ExplainError(f"Unknown explain verbosity {verbosity!r}.", fix=f"Choose from: {', '.join(VERBOSITIES)}.")
    return str(verbosity)


def model_explain(
    models: Mapping[str, planner.CollectionModel], database: str, command: Mapping[str, Any], verbosity: str
) -> dict[str, Any]:
    """The model's explain of ``command`` (find, aggregate, update, delete) at ``verbosity``, labelled as modelled."""
    name = next(iter(command), None)
    if name not in EXPLAINABLE:
        raise not_modelled(f"explain of the {name} command (it explains {', '.join(EXPLAINABLE)})")
    collection = str(command[name])
    if name == "find":
        unmodelled = [option for option in PLAN_CHANGING_FIND_OPTIONS if command.get(option)]
        if unmodelled:
            raise not_modelled(f"the find option(s) {', '.join(unmodelled)}")
        args = planner.FindArgs.from_command(command)
        explain = planner.explain_find_args(models[collection], f"{database}.{collection}", args)
    elif name == "update":
        explain = explain_update(models[collection], f"{database}.{collection}", command)
    elif name == "delete":
        explain = explain_delete(models[collection], f"{database}.{collection}", command)
    else:
        pipeline = command.get("pipeline")
        if not isinstance(pipeline, list):
            raise ExplainError("The aggregate command has no pipeline list.", fix="Pass pipeline=[{...}, ...].")
        collation = command.get("collation")
        explain = planner.explain_aggregate(
            models,
            collection,
            pipeline,
            database=database,
            collation=collation if isinstance(collation, Mapping) else None,
            hint=command.get("hint") or None,
        )
    explain = at_verbosity(explain, check_verbosity(verbosity))
    explain["command"] = {k: v for k, v in command.items() if k not in ("lsid", "$clusterTime", "$readPreference")}
    explain["command"]["$db"] = database
    return explain


def model_of(collection: Collection) -> planner.CollectionModel:
    """The planner's model of a pymongo collection on any server: its documents, indexes and collation."""
    options = collection.options()
    return planner.CollectionModel(list(collection.find()), list(collection.list_indexes()), options.get("collation"))


def model_find(collection: Collection, **arguments: Any) -> dict[str, Any]:
    """The model's explain of ``collection.find(**arguments)`` on the collection's current data (any server)."""
    command = planner.FindArgs.of(**arguments).command(collection.name)
    models = {collection.name: model_of(collection)}
    return model_explain(models, collection.database.name, command, "executionStats")

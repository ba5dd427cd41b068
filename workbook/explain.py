"""``explain()``: what the database did to answer a query, on real MongoDB or modelled offline.

On a MongoDB server the server's own explain (``executionStats`` verbosity) is returned as is,
except for what differs between server versions, normalised so one reader fits all:

- SBE plans (explainVersion "2", MongoDB 7.0+): ``winningPlan`` and each rejected plan hold the stage
  tree under ``queryPlan`` beside a ``slotBasedPlan``; the stage tree is lifted up to ``winningPlan``
  (and to each rejected plan), and the slot-based plans move to ``queryPlanner.slotBasedPlans``.
  ``executionStats.executionStages`` stays the server's (SBE stages, lower-case names).
- Replica-set gossip that is not part of the explain (``$clusterTime``, ``operationTime``) is removed.

Everything else (EXPRESS stages of 8.0, ``isCached``, string key patterns) is kept as the server
wrote it; the original is on ``Explain.original``. On the offline default the workbench's planner
model (``workbook.planner``) runs on the collection's actual documents and ``list_indexes()``.
"""

from __future__ import annotations

import copy
import html
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pymongo.collation import Collation
from pymongo.collection import Collection
from pymongo.errors import OperationFailure

from workbook import planner
from workbook.connection import OFFLINE, engine_info
from workbook.errors import ExplainError
from workbook.explain_draw import draw_plan, plan_svg
from workbook.monitor import GENERATIONS

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = ["Explain", "ExplainError", "draw_plan", "explain", "explain_aggregate", "summarize"]

MODELLED_LABEL = "modelled by the workbench on the actual data and indexes"
"""How explain output from the offline default is labelled wherever it is shown."""

_GOSSIP = ("$clusterTime", "operationTime")




def summarize(explain: Explain | Mapping[str, Any]) -> dict[str, Any]:
    """Winning index or COLLSCAN, returned/examined counts, covered, in-memory sort, multikey, lookups."""
    return planner.summarize(explain.raw if isinstance(explain, Explain) else explain)


class Explain(Mapping[str, Any]):
    """An explain document (``executionStats`` verbosity) with the engine that produced it.

    Reads like the dict MongoDB returns (``e["executionStats"]["nReturned"]``); shows itself as a
    summary table and the drawn plan in a notebook.
    """

    def __init__(
        self,
        raw: Mapping[str, Any],
        *,
        engine: str,
        modelled: bool,
        original: Mapping[str, Any] | None = None,
    ) -> None:
        self.raw: dict[str, Any] = dict(raw)
        self.engine = engine  # an EngineInfo label: 'MongoDB 8.0.4' or 'offline default (mongoeco 4.11.0)'
        self.modelled = modelled
        self.original = original  # the server's reply before normalising; None when modelled

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.raw)

    def __len__(self) -> int:
        return len(self.raw)

    @property
    def source(self) -> str:
        """Where the numbers come from, as shown under every summary and plan."""
        if self.modelled:
            return f"{MODELLED_LABEL} · {self.engine}"
        return f"reported by {self.engine}"

    def summary(self) -> dict[str, Any]:
        """The planner's summary of this explain (see :func:`summarize`)."""
        return summarize(self.raw)

    def draw(self) -> go.Figure:
        """The winning plan as a figure (see :func:`draw_plan`)."""
        return draw_plan(self)

    def rows(self) -> list[tuple[str, str]]:
        """The summary as (label, value) rows, for the text and HTML views."""
        s = self.summary()
        returned = s["nReturned"]
        per = s["docsExaminedPerReturned"]
        plan = s["plan"] or "?"
        if s["index"]:
            plan = f"{plan} on index {', '.join(s['indexes'])}"
        joined = " (including $lookup stages)" if s["lookups"] else ""
        rows = [
            ("winning plan", plan),
            ("stages (root first)", " ← ".join(str(n) for n in s["stages"])),
            ("nReturned", _plural(returned, "document")),
            ("totalKeysExamined", _plural(s["keysExamined"], "index key") + joined),
            ("totalDocsExamined", _plural(s["docsExamined"], "document") + joined),
            ("docs examined per returned", "n/a (nothing returned)" if per is None else f"{per:.2f}"),
            ("covered by the index", _yes_no(s["covered"])),
            ("in-memory (blocking) sort", _yes_no(s["inMemorySort"])),
            ("multikey index", _yes_no(s["multikey"])),
        ]
        later = [next(iter(stage), "?") for stage in self.raw.get("stages", [])[1:] if "$lookup" not in stage]
        if later:
            rows.append(("later pipeline stages", ", ".join(later)))
        for lookup in s["lookups"]:
            used = ", ".join(lookup.get("indexesUsed") or []) or "none (collection scan)"
            rows.append((f"$lookup from {lookup.get('from')}", f"indexes used: {used}"))
        return rows

    def __repr__(self) -> str:
        width = max(len(label) for label, _ in self.rows())
        lines = [f"Explain: {self.source}"]
        lines += [f"  {label:<{width}}  {value}" for label, value in self.rows()]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        cells = "".join(
            f"<tr><th style='text-align:left'>{html.escape(label)}</th>"
            f"<td style='text-align:left'>{html.escape(value)}</td></tr>"
            for label, value in self.rows()
        )
        badge = "#8a5a00" if self.modelled else "#1b5e20"
        return (
            "<div>"
            f"<div style='font-weight:bold;color:{badge};margin-bottom:4px'>Explain: {html.escape(self.source)}</div>"
            f"<table>{cells}</table>"
            f"<div style='margin-top:8px'>{plan_svg(self)}</div>"
            "</div>"
        )


def _plural(count: Any, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _yes_no(flag: bool) -> str:
    return "yes" if flag else "no"


def explain(
    collection: Collection,
    filter: Mapping[str, Any] | None = None,
    *,
    projection: Any = None,
    sort: Any = None,
    limit: int | None = None,
    skip: int | None = None,
    hint: Any = None,
    collation: Mapping[str, Any] | Collation | None = None,
) -> Explain:
    """Explain ``collection.find(filter, ...)`` with executionStats: the server's, or the model's offline.

    Arguments take the forms pymongo's ``find`` takes: ``sort`` and ``hint`` as a list of
    ``(field, direction)`` pairs or a dict (``hint`` also as an index name), ``projection`` as a dict
    or a list of field names, ``collation`` as a dict or a ``pymongo.collation.Collation``.
    """
    query = find_arguments(filter, projection, sort, limit, skip, hint, collation)
    info = engine_info(collection.database)
    if info.kind == OFFLINE:
        return Explain(model_find(collection, **query), engine=info.label, modelled=True)
    command: dict[str, Any] = {"find": collection.name, "filter": query["filter"]}
    command.update({name: value for name, value in query.items() if name != "filter" and value is not None})
    original = _server_explain(collection, command)
    return Explain(normalise_server_explain(original), engine=info.label, modelled=False, original=original)


def explain_aggregate(collection: Collection, pipeline: Sequence[Mapping[str, Any]]) -> Explain:
    """Explain ``collection.aggregate(pipeline)`` with executionStats: the server's, or the model's offline."""
    pipeline = [dict(stage) for stage in pipeline]
    info = engine_info(collection.database)
    if info.kind == OFFLINE:
        return Explain(model_aggregate(collection, pipeline), engine=info.label, modelled=True)
    command = {"aggregate": collection.name, "pipeline": pipeline, "cursor": {}}
    original = _server_explain(collection, command)
    return Explain(normalise_server_explain(original), engine=info.label, modelled=False, original=original)


_models: dict[tuple[int, str], tuple[Any, planner.Collection]] = {}


def collection_model(collection: Collection) -> planner.Collection:
    """The planner's model of a collection: its documents and indexes, with index keys built once.

    Kept until a workbench client writes to the collection (or changes its indexes): the model is
    rebuilt from the real data whenever it may differ from it.
    """
    indexes = list(collection.list_indexes())
    key = (id(collection.database.client), collection.full_name)
    stamp = (GENERATIONS.stamp(collection.database.name, collection.name), repr(indexes))
    cached = _models.get(key)
    if cached is None or cached[0] != stamp:
        model = planner.Collection(list(collection.find()), indexes)
        if GENERATIONS.stamp(collection.database.name, collection.name) == stamp[0]:  # no write meanwhile
            _models[key] = (stamp, model)
        return model
    return cached[1]


def model_find(collection: Collection, **query: Any) -> dict[str, Any]:
    """The planner model's explain of a find, on the collection's documents and indexes (any engine)."""
    model = collection_model(collection)
    try:
        return planner.explain_find((), (), namespace=collection.full_name, model=model, **find_arguments(**query))
    except planner.UnknownHint as error:
        raise _unknown_hint(query.get("hint"), list(collection.list_indexes()), str(error)) from None
    except planner.UnsupportedByModel as error:
        raise _unsupported(error) from None


def model_aggregate(collection: Collection, pipeline: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The planner model's explain of an aggregate, on the documents and indexes of every collection
    it reads (the collection and each ``$lookup``'s ``from``)."""
    names = [collection.name] + [
        stage["$lookup"]["from"]
        for stage in pipeline
        if isinstance(stage.get("$lookup"), Mapping) and "from" in stage["$lookup"]
    ]
    database = collection.database
    collections = {name: collection_model(database[name]) for name in dict.fromkeys(names)}
    try:
        return planner.explain_aggregate(collections, collection.name, pipeline, database=database.name)
    except planner.UnsupportedByModel as error:
        raise _unsupported(error) from None
    except planner.UnknownHint as error:
        raise ExplainError(str(error), fix="Hint an index that exists (see list_indexes()).") from None


def _unsupported(error: ValueError) -> ExplainError:
    message = str(error).split(" Run the query on a real MongoDB server")[0]  # the fix is restated below
    return ExplainError(
        message,
        fix="Run the query on a real MongoDB server: `docker compose up -d`, then set MONGODB_URI "
        "(or pass the URI to workbook.connect) and explain again.",
    )


def _unknown_hint(hint: Any, indexes: Sequence[Mapping[str, Any]], message: str) -> ExplainError:
    visible = [str(i.get("name")) for i in indexes if not i.get("hidden")]
    return ExplainError(
        f"The hint {hint!r} names no usable index on this collection ({message}).",
        fix=f"Hint one of: {', '.join(visible)} (by name, or by its key list), or drop the hint. "
        "Hidden indexes cannot be hinted.",
    )


def _server_explain(collection: Collection, command: Mapping[str, Any]) -> dict[str, Any]:
    try:
        return dict(collection.database.command("explain", dict(command), verbosity="executionStats"))
    except OperationFailure as error:
        reason = str(error.details.get("errmsg") if error.details else error)
        if "hint" in reason:
            indexes = list(collection.list_indexes())
            raise _unknown_hint(command.get("hint"), indexes, reason) from None
        raise ExplainError(
            f"MongoDB could not explain this query: {reason}",
            fix="Check the filter, sort and projection; the same query must also run with find()/aggregate().",
        ) from None


def normalise_server_explain(explain: Mapping[str, Any]) -> dict[str, Any]:
    """A server's explain with version differences evened out (see the module docstring)."""
    out = copy.deepcopy(dict(explain))
    for key in _GOSSIP:
        out.pop(key, None)
    _lift_query_plans(out.get("queryPlanner"))
    for stage in out.get("stages") or []:
        cursor = stage.get("$cursor") if isinstance(stage, Mapping) else None
        if isinstance(cursor, dict):
            _lift_query_plans(cursor.get("queryPlanner"))
    return out


def _lift_query_plans(query_planner: Any) -> None:
    """Move SBE's ``{queryPlan, slotBasedPlan}`` pairs to the classic shape, in place."""
    if not isinstance(query_planner, dict):
        return
    slot_based: dict[str, Any] = {}
    winning = query_planner.get("winningPlan")
    if isinstance(winning, Mapping) and "queryPlan" in winning:
        query_planner["winningPlan"] = dict(winning["queryPlan"])
        if "slotBasedPlan" in winning:
            slot_based["winningPlan"] = winning["slotBasedPlan"]
    rejected = []
    for position, plan in enumerate(query_planner.get("rejectedPlans") or []):
        if isinstance(plan, Mapping) and "queryPlan" in plan:
            rejected.append(dict(plan["queryPlan"]))
            if "slotBasedPlan" in plan:
                slot_based[f"rejectedPlans.{position}"] = plan["slotBasedPlan"]
        else:
            rejected.append(plan)
    if "rejectedPlans" in query_planner:
        query_planner["rejectedPlans"] = rejected
    if slot_based:
        query_planner["slotBasedPlans"] = slot_based


def find_arguments(
    filter: Mapping[str, Any] | None = None,
    projection: Any = None,
    sort: Any = None,
    limit: int | None = None,
    skip: int | None = None,
    hint: Any = None,
    collation: Mapping[str, Any] | Collation | None = None,
) -> dict[str, Any]:
    """pymongo ``find`` arguments in the forms a find command takes (dicts; an index name stays a name).

    >>> find_arguments({"a": 1}, ["a"], [("a", -1)], limit=-5, hint="a_1")
    {'filter': {'a': 1}, 'projection': {'a': 1}, 'sort': {'a': -1}, 'limit': 5, 'skip': None, \
'hint': 'a_1', 'collation': None}
    """
    if filter is not None and not isinstance(filter, Mapping):
        raise ExplainError(f"The filter must be a dict, not {type(filter).__name__}.", fix='Pass e.g. {"price": 5}.')
    return {
        "filter": dict(filter or {}),
        "projection": _projection(projection),
        "sort": _key_document(sort, "sort"),
        "limit": abs(int(limit)) or None if limit else None,
        "skip": int(skip) or None if skip else None,
        "hint": hint if isinstance(hint, str) else _key_document(hint, "hint"),
        "collation": _collation(collation),
    }


def _projection(projection: Any) -> dict[str, Any] | None:
    if projection is None:
        return None
    if isinstance(projection, Mapping):
        return dict(projection)
    if isinstance(projection, Sequence) and not isinstance(projection, str):
        return {str(name): 1 for name in projection}
    raise ExplainError(
        f"The projection {projection!r} is neither a dict nor a list of field names.",
        fix='Pass e.g. {"name": 1, "_id": 0} or ["name", "price"].',
    )


def _key_document(value: Any, what: str) -> dict[str, Any] | None:
    """A sort or hint given as a dict, a list of (field, direction) pairs, or one field name."""
    if value is None or (not value and not isinstance(value, str)):
        return None
    if isinstance(value, str):
        return {value: 1}
    try:
        pairs = list(value.items()) if isinstance(value, Mapping) else [(field, d) for field, d in value]
    except (TypeError, ValueError):
        pairs = []
    if not pairs or not all(isinstance(field, str) for field, _ in pairs):
        raise ExplainError(
            f"The {what} {value!r} is not a list of (field, direction) pairs.",
            fix='Pass e.g. [("price", 1), ("_id", 1)] or {"price": 1}'
            + (" or an index name such as 'category_price'." if what == "hint" else "."),
        )
    return dict(pairs)


def _collation(collation: Mapping[str, Any] | Collation | None) -> dict[str, Any] | None:
    if collation is None:
        return None
    if isinstance(collation, Collation):
        return dict(collation.document)
    if isinstance(collation, Mapping):
        return dict(collation)
    raise ExplainError(
        f"The collation {collation!r} is neither a dict nor a pymongo Collation.",
        fix='Pass e.g. {"locale": "en", "strength": 2} or Collation("en", strength=2).',
    )

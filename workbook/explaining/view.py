"""``explain()``: what the database did to answer a query, as the database itself reports it.

On a MongoDB server that is the server's explain; on the offline default it is the offline server's
native explain, which the workbench's planner model answers (:mod:`workbook.offline_explain`),
labelled ``modelledBy``. Either way the reply (``executionStats`` verbosity) is read the same way:
version differences are evened out (:func:`workbook.planner.reading.normalise_server_explain`: SBE's
``queryPlan`` nesting lifted, replica-set gossip removed), the original is kept on
``Explain.original``, and the summary, table and drawing are views of that one answer.
"""

from __future__ import annotations

import html
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pymongo.collation import Collation
from pymongo.collection import Collection
from pymongo.errors import OperationFailure

from workbook.connection import engine_info
from workbook.errors import ExplainError, UnknownHintError
from workbook.explain_draw import draw_plan, plan_svg
from workbook.offline_explain import error_from_reply
from workbook.planner import FindArgs
from workbook.planner.labels import MODELLED_LABEL
from workbook.planner.reading import is_modelled, normalise_server_explain, summarize

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = ["Explain", "ExplainError", "draw_plan", "explain", "explain_aggregate", "summarize"]

VERBOSITY = "executionStats"
"""What :func:`explain` asks for: the winning plan and its counts."""


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
        self.original = original  # the reply as the server (or the offline default's model) sent it

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
    """Explain ``collection.find(filter, ...)`` with executionStats, as the database reports it.

    Arguments take the forms pymongo's ``find`` takes: ``sort`` and ``hint`` as a list of
    ``(field, direction)`` pairs or a dict (``hint`` also as an index name), ``projection`` as a dict
    or a list of field names, ``collation`` as a dict or a ``pymongo.collation.Collation``.
    """
    _check_collection(collection)
    args = FindArgs.of(filter, projection, sort, limit, skip, hint, collation)
    return explain_command(collection, args.command(collection.name))


def explain_aggregate(collection: Collection, pipeline: Sequence[Mapping[str, Any]]) -> Explain:
    """Explain ``collection.aggregate(pipeline)`` with executionStats, as the database reports it."""
    _check_collection(collection)
    if isinstance(pipeline, Mapping | str) or not all(isinstance(stage, Mapping) for stage in pipeline):
        raise ExplainError(
            f"The pipeline must be a list of stage dicts, not {pipeline!r}.", fix='Pass e.g. [{"$match": {...}}].'
        )
    command = {"aggregate": collection.name, "pipeline": [dict(stage) for stage in pipeline], "cursor": {}}
    return explain_command(collection, command)


def explain_command(collection: Collection, command: Mapping[str, Any]) -> Explain:
    """Send ``explain`` for a find or aggregate command and wrap the reply (the one path for every engine)."""
    info = engine_info(collection.database)
    try:
        reply = dict(collection.database.command("explain", dict(command), verbosity=VERBOSITY))
    except OperationFailure as failure:
        raise _refusal(collection, command, failure) from None
    modelled = is_modelled(reply)
    return Explain(normalise_server_explain(reply), engine=info.label, modelled=modelled, original=reply)


def _check_collection(collection: Any) -> None:
    if not isinstance(collection, Collection) and not hasattr(collection, "database"):
        raise ExplainError(
            f"explain() needs a pymongo collection, not {type(collection).__name__}.",
            fix="Pass e.g. db.products (db from workbook.connect()).",
        )


def _refusal(collection: Collection, command: Mapping[str, Any], failure: OperationFailure) -> ExplainError:
    reason = str(failure.details.get("errmsg") if failure.details else failure)
    error = error_from_reply(reason, failure.code)
    if isinstance(error, UnknownHintError) and error.fix is None:
        visible = [str(i.get("name")) for i in collection.list_indexes() if not i.get("hidden")]
        return UnknownHintError(
            f"The hint {command.get('hint')!r} names no usable index on this collection ({reason}).",
            fix=f"Hint one of: {', '.join(visible)} (by name, or by its key list), or drop the hint. "
            "Hidden indexes cannot be hinted.",
        )
    if type(error) is ExplainError and error.fix == "Check the filter, sort and projection.":
        return ExplainError(
            f"MongoDB could not explain this query: {reason}",
            fix="Check the filter, sort and projection; the same query must also run with find()/aggregate().",
        )
    return error

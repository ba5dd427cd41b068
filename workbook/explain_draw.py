"""The winning plan drawn like Compass's explain view: one box per stage, leaves at the bottom.

One layout (:func:`plan_layout`) feeds two renderers: :func:`draw_plan` (a plotly figure: boxes are
rectangle shapes, their text annotations, edges line shapes) and :func:`plan_svg` (a static SVG for
an explain's HTML view, so a notebook shows the plan without loading plotly.js). Rejected plans are
not drawn.
"""

from __future__ import annotations

import html
import json
import textwrap
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeGuard

from workbook.planner.labels import MODELLED_LABEL
from workbook.planner.reading import (
    CHILD_FIELDS,
    CLUSTERED_SCANS,
    COLLECTION_SCANS,
    INDEX_SCANS,
    children,
    find_layer,
    index_name,
    is_modelled,
    winning_plan,
)

if TYPE_CHECKING:
    import plotly.graph_objects as go

_INDEXED = INDEX_SCANS | CLUSTERED_SCANS  # drawn green: the plan walks an index
_WRAP = 40  # characters per line inside a box

# Fill colours: index scans green, full scans and blocking sorts amber (worth a second look), the rest grey.
_FILL = {"index": "#e3f2e1", "warn": "#fdebd0", "other": "#eef1f5", "pipeline": "#e8eaf6"}
_LINE = {"index": "#2e7d32", "warn": "#b9770e", "other": "#5f6b7a", "pipeline": "#3949ab"}

BOX_WIDTH = 0.9  # of a slot
X_PIXELS = 300  # one slot (one leaf's column)
LINE_PIXELS = 16  # one line of text in a box
MIN_WIDTH = 480


@dataclass
class DrawnStage:
    """One stage of the winning plan as drawn: its name, detail lines, counts and inputs."""

    name: str
    details: list[str]
    counts: list[str]
    kind: str
    raw: dict[str, Any]
    children: list[DrawnStage] = field(default_factory=list)
    x: float = 0.0
    level: int = 0

    @property
    def lines(self) -> list[str]:
        """All text lines in the box: name first."""
        return [self.name, *self.details, *self.counts]

    def walk(self) -> Iterator[DrawnStage]:
        """This stage and every stage below it, root first."""
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass
class PlanLayout:
    """Positioned stages (x in slots, level 0 = root at the top) and the title."""

    root: DrawnStage | None
    title: str
    slots: int
    levels: int

    @property
    def stages(self) -> list[DrawnStage]:
        """Every stage, root first."""
        return list(self.root.walk()) if self.root else []


def _escape(text: str) -> str:
    """Escape for plotly and SVG text: <, > and & only (plotly shows &quot; literally)."""
    return html.escape(text, quote=False)


def _compact(value: Any) -> str:
    """A key pattern, sort or projection as a short mongosh-like string: {a: 1, b: -1}."""
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {_compact(v)}" for k, v in value.items()) + "}"
    if isinstance(value, str):
        return value if value.startswith("{") else json.dumps(value)
    return json.dumps(value, default=str)


def _wrap(text: str, limit: int = 2) -> list[str]:
    """Wrap at ", " rather than inside "field: value" (a no-break space keeps those together)."""
    lines = textwrap.wrap(text.replace(": ", ":\u00a0"), _WRAP, break_long_words=True) or [""]
    if len(lines) > limit:
        lines = lines[:limit]
        lines[-1] = lines[-1][: _WRAP - 1] + "…"
    return lines


def _kind(name: str) -> str:
    if name in _INDEXED:
        return "index"
    if name in COLLECTION_SCANS or name == "SORT":
        return "warn"
    return "pipeline" if name.startswith("$") else "other"


def _classic_stage(stage: Mapping[str, Any], with_counts: bool) -> DrawnStage:
    name = str(stage.get("stage", "?"))
    details: list[str] = []
    if stage.get("indexName") or name in _INDEXED:
        index = index_name(stage) or stage.get("indexName") or "?"
        details.append(f"index {index}" + (" (multikey)" if stage.get("isMultiKey") else ""))
        if "keyPattern" in stage:
            details += _wrap(_compact(stage["keyPattern"]))
    if name == "SORT" and "sortPattern" in stage:
        details += _wrap(f"sort {_compact(stage['sortPattern'])} in memory")
    if "transformBy" in stage:
        details += _wrap(_compact(stage["transformBy"]), 1)
    if stage.get("filter"):
        details += _wrap(f"filter {_compact(stage['filter'])}", 1)
    for key in ("limitAmount", "skipAmount"):
        if key in stage:
            details.append(f"{key.removesuffix('Amount')} {stage[key]}")
    counts: list[str] = []
    if with_counts:
        if "nReturned" in stage:
            counts.append(f"nReturned {stage['nReturned']}")
        examined = [f"{key} {stage[key]}" for key in ("keysExamined", "docsExamined") if key in stage]
        if examined:
            counts.append(" · ".join(examined))
    raw = {k: v for k, v in stage.items() if k not in (*CHILD_FIELDS, "inputStages")}
    node = DrawnStage(name, details, counts, _kind(name), raw)
    node.children = [_classic_stage(child, with_counts) for child in children(stage)]
    return node


def _is_classic(tree: Any) -> TypeGuard[Mapping[str, Any]]:
    """Whether an executionStages tree uses the query-solution stage names (SBE's are lower case)."""
    return isinstance(tree, Mapping) and str(tree.get("stage", "")).isupper()


def _find_tree(query_planner: Mapping[str, Any], stats: Mapping[str, Any]) -> DrawnStage | None:
    stages = stats.get("executionStages")
    if isinstance(stages, Mapping) and _is_classic(stages):
        return _classic_stage(stages, with_counts=True)
    plan = winning_plan(query_planner)
    if "stage" not in plan:
        return None
    root = _classic_stage(plan, with_counts=False)
    # SBE reports counts for its own stages only: show the totals on the plan's root.
    root.counts = [
        f"nReturned {stats.get('nReturned', '?')} (total)",
        f"keysExamined {stats.get('totalKeysExamined', '?')} · docsExamined {stats.get('totalDocsExamined', '?')}",
    ]
    return root


def _pipeline_stage(stage: Mapping[str, Any], below: DrawnStage | None) -> DrawnStage:
    name = next((k for k in stage if k.startswith("$")), "?")
    spec = stage.get(name)
    details: list[str] = []
    if name == "$lookup" and isinstance(spec, Mapping):
        details.append(f"from {spec.get('from')} as {spec.get('as')}")
        if "localField" in spec:
            details += _wrap(f"{spec.get('localField')} = {spec.get('foreignField')}", 1)
        used = ", ".join(stage.get("indexesUsed") or []) or "none (collection scans)"
        details += _wrap(f"indexes used: {used}", 1)
    elif spec is not None:
        details += _wrap(_compact(spec), 2)
    if "modelNote" in stage:
        details.append("(not counted by the model)")
    counts = []
    if "nReturned" in stage:
        counts.append(f"nReturned {stage['nReturned']}")
    if "totalKeysExamined" in stage or "totalDocsExamined" in stage:
        counts.append(
            f"keysExamined {stage.get('totalKeysExamined', 0)} · docsExamined {stage.get('totalDocsExamined', 0)}"
        )
    return DrawnStage(name, details, counts, "pipeline", dict(stage), [below] if below else [])


def plan_tree(explain: Mapping[str, Any]) -> DrawnStage | None:
    """The winning plan of a find or aggregate explain as a DrawnStage tree (root = last stage)."""
    query_planner, stats, later = find_layer(explain)
    node = _find_tree(query_planner, stats)
    for stage in later:
        node = _pipeline_stage(stage, node)
    return node


def _place(stage: DrawnStage, level: int, next_slot: list[int]) -> None:
    """Leaves take consecutive slots left to right; a parent sits centred over its inputs."""
    stage.level = level
    if not stage.children:
        stage.x = next_slot[0]
        next_slot[0] += 1
        return
    for child in stage.children:
        _place(child, level + 1, next_slot)
    stage.x = (stage.children[0].x + stage.children[-1].x) / 2


def _title(explain: Mapping[str, Any]) -> str:
    engine = getattr(explain, "engine", None)
    raw = getattr(explain, "raw", explain)
    modelled = is_modelled(raw)
    if engine is None:
        version = (raw.get("serverInfo") or {}).get("version")
        engine = "offline default" if modelled else (f"MongoDB {version}" if version else "MongoDB")
    source = f"{engine}, {MODELLED_LABEL}" if modelled else f"{engine}, reported by the server"
    return f"Winning plan · {source}"


def plan_layout(explain: Mapping[str, Any]) -> PlanLayout:
    """Position the winning plan's stages: root at level 0 (top), inputs one level further down."""
    raw = getattr(explain, "raw", explain)
    root = plan_tree(raw)
    if root is None:
        return PlanLayout(None, _title(explain), 1, 1)
    next_slot = [0]
    _place(root, 0, next_slot)
    levels = 1 + max(s.level for s in root.walk())
    return PlanLayout(root, _title(explain), next_slot[0], levels)


@dataclass(frozen=True)
class _Geometry:
    """Pixel sizes shared by both renderers: one slot is X_PIXELS wide, one level ``level_px`` high."""

    box_px: float
    level_px: float
    width_px: int
    height_px: int


def _geometry(layout: PlanLayout) -> _Geometry:
    most = max((len(s.lines) for s in layout.stages), default=1)
    box_px = most * LINE_PIXELS + 18
    level_px = box_px + 44
    return _Geometry(box_px, level_px, max(layout.slots * X_PIXELS, MIN_WIDTH), int(layout.levels * level_px))


def draw_plan(explain: Mapping[str, Any]) -> go.Figure:
    """The winning plan as a plotly figure: a box per stage (name, index, counts), leaves at the bottom."""
    import plotly.graph_objects as go

    layout = plan_layout(explain)
    geometry = _geometry(layout)
    half_w, half_h = BOX_WIDTH / 2, geometry.box_px / geometry.level_px / 2
    shapes: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    xs, ys, hovers = [], [], []
    for stage in layout.stages:
        for child in stage.children:
            shapes.append(
                dict(
                    type="line",
                    x0=child.x,
                    y0=-child.level + half_h,
                    x1=stage.x,
                    y1=-stage.level - half_h,
                    line=dict(color="#5f6b7a", width=2),
                    layer="below",
                )
            )
    for stage in layout.stages:
        y = -stage.level
        shapes.append(
            dict(
                type="rect",
                x0=stage.x - half_w,
                x1=stage.x + half_w,
                y0=y - half_h,
                y1=y + half_h,
                fillcolor=_FILL[stage.kind],
                line=dict(color=_LINE[stage.kind], width=2),
                layer="below",
                name=stage.name,
            )
        )
        text = "<br>".join(
            [f"<b>{_escape(stage.name)}</b>", *(_escape(d) for d in stage.details)]
            + [f"<i>{_escape(c)}</i>" for c in stage.counts]
        )
        annotations.append(dict(x=stage.x, y=y, text=text, showarrow=False, font=dict(size=12), align="center"))
        xs.append(stage.x)
        ys.append(y)
        hovers.append("<br>".join(_escape(line) for line in json.dumps(stage.raw, default=str, indent=1).split("\n")))
    figure = go.Figure(
        go.Scatter(
            x=xs, y=ys, mode="markers", marker=dict(size=40, opacity=0), hovertext=hovers, hoverinfo="text", name=""
        )
    )
    x_units = geometry.width_px / X_PIXELS
    x_centre = (layout.slots - 1) / 2
    title, _, source = layout.title.partition(" · ")
    figure.update_layout(
        title=dict(text=f"{title}<br><sup>{_escape(source)}</sup>", font=dict(size=15), x=0.02),
        shapes=shapes,
        annotations=annotations,
        showlegend=False,
        plot_bgcolor="white",
        width=geometry.width_px + 40,
        height=geometry.height_px + 90,
        margin=dict(l=20, r=20, t=70, b=20),
        xaxis=dict(visible=False, range=[x_centre - x_units / 2, x_centre + x_units / 2], fixedrange=True),
        yaxis=dict(visible=False, range=[-layout.levels + 0.5, 0.5], fixedrange=True),
    )
    return figure


def plan_svg(explain: Mapping[str, Any]) -> str:
    """The same drawing as :func:`draw_plan`, as a static SVG string (no JavaScript needed)."""
    layout = plan_layout(explain)
    geometry = _geometry(layout)
    width, height = geometry.width_px + 20, geometry.height_px + 40
    box_w, box_h = BOX_WIDTH * X_PIXELS, geometry.box_px
    x_offset = (geometry.width_px - layout.slots * X_PIXELS) / 2 + 10

    def centre(stage: DrawnStage) -> tuple[float, float]:
        return (stage.x + 0.5) * X_PIXELS + x_offset, (stage.level + 0.5) * geometry.level_px + 30

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="12">',
        f'<text x="10" y="18" font-size="14">{_escape(layout.title)}</text>',
    ]
    for stage in layout.stages:
        x, y = centre(stage)
        for child in stage.children:
            cx, cy = centre(child)
            parts.append(
                f'<line x1="{cx}" y1="{cy - box_h / 2}" x2="{x}" y2="{y + box_h / 2}" '
                'stroke="#5f6b7a" stroke-width="2"/>'
            )
    for stage in layout.stages:
        x, y = centre(stage)
        parts.append(
            f'<rect x="{x - box_w / 2}" y="{y - box_h / 2}" width="{box_w}" height="{box_h}" rx="4" '
            f'fill="{_FILL[stage.kind]}" stroke="{_LINE[stage.kind]}" stroke-width="2"/>'
        )
        lines = stage.lines
        top = y - (len(lines) - 1) * LINE_PIXELS / 2
        for position, line in enumerate(lines):
            weight = ' font-weight="bold"' if position == 0 else ""
            style = ' font-style="italic"' if position >= 1 + len(stage.details) else ""
            parts.append(
                f'<text x="{x}" y="{top + position * LINE_PIXELS + 4}" text-anchor="middle"{weight}{style}>'
                f"{_escape(line)}</text>"
            )
    parts.append("</svg>")
    return "".join(parts)

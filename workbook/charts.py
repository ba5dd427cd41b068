"""Charts: one function per chart, each takes a DataFrame and returns a plotly Figure.

Every chart names its units in the axis titles and the engine in the subtitle, because
timings from the in-process offline default are not a server's timings.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import cast

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from workbook import workload_cost
from workbook.bounds import check_frame
from workbook.errors import WorkbookError
from workbook.facts import MAX_BSON_SIZE
from workbook.shapes import SHAPE_NAMES
from workbook.workloads import Workload

SHAPE_COLORS = {"embedded": "#d62728", "referenced": "#1f77b4", "hybrid": "#2ca02c"}
WORK_METRICS = {
    "round_trips": "round trips",
    "docs_examined": "documents examined",
    "keys_examined": "index keys examined",
    "bytes_returned": "bytes returned",
}


def _titled(figure: go.Figure, title: str, subtitle: str, legend: str = "shape") -> go.Figure:
    figure.update_layout(
        title={"text": title, "subtitle": {"text": subtitle}},
        legend_title_text=legend,
        margin={"t": 90},
        template="plotly_white",
    )
    return figure


def _engine(frame: pd.DataFrame) -> str:
    engines = sorted(set(frame["engine"])) if "engine" in frame else []
    return ", ".join(engines) or "engine unknown"


def log_ticks(values: Iterable[float]) -> tuple[list[float], list[str]]:
    """Tick positions 1-2-5 per decade over ``values`` and their full labels, for a log axis.

    plotly labels a log axis's in-between ticks with a bare "2" and "5", which reads as 2 and 5
    where it means 20 and 50; every tick here carries its whole value.

    >>> log_ticks([3, 180])
    ([2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0], ['2', '5', '10', '20', '50', '100', '200'])
    """
    positive = [float(v) for v in values if v is not None and math.isfinite(v) and v > 0]
    if not positive:
        return [], []
    low, high = min(positive), max(positive)
    ticks: list[float] = []
    for decade in range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1):
        for step in (1, 2, 5):
            ticks.append(float(f"{step * 10.0**decade:.12g}"))
    below = [t for t in ticks if t <= low]
    above = [t for t in ticks if t >= high]
    first, last = (below[-1] if below else ticks[0]), (above[0] if above else ticks[-1])
    chosen = [t for t in ticks if first <= t <= last]
    return chosen, [f"{t:,.12g}" for t in chosen]


def _shape_boxes(frame: pd.DataFrame, x: str, y: str, y_label: str, **options: object) -> go.Figure:
    """Box plots of ``y`` per ``x``, one colour per shape, on a log axis labelled with whole values."""
    figure = px.box(
        frame,
        x=x,
        y=y,
        color="shape",
        category_orders={"shape": list(SHAPE_NAMES)},
        color_discrete_map=SHAPE_COLORS,
        log_y=True,
        labels={y: y_label},
        **options,
    )
    tickvals, ticktext = log_ticks(frame[y]) if y in frame else ([], [])
    if tickvals:
        figure.update_yaxes(tickmode="array", tickvals=tickvals, ticktext=ticktext)
    return figure


def latency_chart(runs: pd.DataFrame) -> go.Figure:
    """Latency of each operation in each shape (box per shape: median, quartiles, outliers)."""
    check_frame("runs", runs, ("shape", "operation", "latency_ms"), made_by="workbook.run_workload(...)")
    figure = _shape_boxes(runs, "operation", "latency_ms", "latency (ms, log scale)")
    runs_per = int(runs.groupby(["shape", "operation"]).size().median()) if len(runs) else 0
    return _titled(
        figure, "Latency by shape and operation", f"{_engine(runs)} · {runs_per} timed runs each, warm-up excluded"
    )


def drawn_medians(figure: go.Figure) -> pd.DataFrame:
    """The medians a box chart draws, read back from its traces: one row per x category, one column per shape."""
    rows = [
        {"x": x, "shape": trace.name, "median": median}
        for trace in figure.data
        for x, median in pd.Series(list(trace.y), index=list(trace.x)).groupby(level=0, sort=False).median().items()
    ]
    if not rows:
        raise WorkbookError(
            "The figure draws no boxes.", fix="Pass a chart such as workbook.charts.latency_chart(runs)."
        )
    table = pd.DataFrame(rows).pivot(index="x", columns="shape", values="median")
    return table[[name for name in SHAPE_NAMES if name in table.columns]].rename_axis(index=None, columns=None)


def drawn_ranking(figure: go.Figure) -> pd.Series:
    """Per x category of a box chart, its shapes from the lowest median to the highest ("hybrid < embedded < ...")."""
    medians = drawn_medians(figure)
    return pd.Series(
        {x: " < ".join(row.dropna().sort_values().index) for x, row in medians.iterrows()}, name="lowest median first"
    )


def work_chart(runs: pd.DataFrame) -> go.Figure:
    """Mean work per call, by shape and operation: round trips, documents and keys examined, bytes."""
    check_frame("runs", runs, ("shape", "operation", *WORK_METRICS), made_by="workbook.run_workload(...)")
    means = runs.groupby(["shape", "operation"], sort=False)[list(WORK_METRICS)].mean().reset_index()
    long = means.melt(id_vars=["shape", "operation"], var_name="metric", value_name="per call")
    long["metric"] = long["metric"].map(WORK_METRICS)
    figure = px.bar(
        long,
        x="operation",
        y="per call",
        color="shape",
        barmode="group",
        facet_row="metric",
        category_orders={"shape": list(SHAPE_NAMES), "metric": list(WORK_METRICS.values())},
        color_discrete_map=SHAPE_COLORS,
        height=900,
    )
    figure.update_yaxes(matches=None, title_text="per call")
    figure.for_each_annotation(lambda a: a.update(text=a.text.split("=")[-1]))
    return _titled(
        figure, "Work per call, by shape", f"{_engine(runs)} · mean over timed runs; examined counts from explain"
    )


def size_chart(documents: pd.DataFrame, collection: str | None = None) -> go.Figure:
    """Distribution of document sizes (bytes, log scale) per shape, one box per collection."""
    made_by = "workbook.sizes.document_size_frame(shapes)"
    check_frame("documents", documents, ("shape", "collection", "bytes"), made_by=made_by)
    data = documents if collection is None else documents[documents["collection"] == collection]
    figure = _shape_boxes(data, "collection", "bytes", "document size (bytes of BSON, log scale)", points=False)
    return _titled(
        figure,
        "Document sizes by shape",
        f"{len(data):,} documents, sizes from $bsonSize · 16 MiB = {MAX_BSON_SIZE:,} bytes",
    )


def growth_chart(projection: pd.DataFrame, days: int | None = None) -> go.Figure:
    """Projected size of the fastest-growing documents, day by day, against the 16 MiB limit."""
    check_frame("projection", projection, ("days_to_limit",), made_by="workbook.sizes.growth_projection(...)")
    horizon = days or max(1, int(projection["days_to_limit"].max() * 1.2))
    rows = []
    for doc_id, row in projection.iterrows():
        # Each line ends where its document hits the limit: no write can make it bigger.
        last = min(float(horizon), row["days_to_limit"])
        points = [*range(int(last) + 1), last]
        rows += [
            {"document": str(doc_id), "day": day, "MiB": (row["bytes"] + day * row["bytes_per_day"]) / 2**20}
            for day in points
        ]
    figure = px.line(
        pd.DataFrame(rows),
        x="day",
        y="MiB",
        color="document",
        labels={"day": "days from now", "MiB": "document size (MiB)"},
    )
    figure.add_hline(
        y=MAX_BSON_SIZE / 2**20, line_dash="dash", line_color="black", annotation_text="16 MiB: writes fail"
    )
    figure.update_xaxes(range=[0, horizon])
    return _titled(
        figure,
        "Growth towards the 16 MiB limit",
        "new entries shared out by the dataset's skew; each at its document's average entry size",
        legend="document",
    )


def workload_cost_chart(
    runs: pd.DataFrame,
    workload: Workload,
    metric: str = "cost",
    *,
    rates: dict[str, float] | None = None,
    weights: dict[str, float] | None = None,
) -> go.Figure:
    """What the whole workload costs each shape per second, one bar per shape stacked by operation
    (rate x work per call), ranked cheapest first. ``metric`` is ``"cost"`` (the weighted work of
    :func:`workbook.workload_cost.call_cost`) or one count of :data:`workbook.workload_cost.WORK`."""
    check_frame("runs", runs, ("shape", "operation"), made_by="workbook.run_workload(...)")
    if metric == workload_cost.COST:
        per_second = workload_cost.cost_per_second(runs, workload, rates=rates, weights=weights)
        label = "work units"
        how = "work units: " + workload_cost.weights_text(weights)
    else:
        bill = workload_cost.daily_work(runs, workload, metric, rates=rates)
        per_second = cast("pd.DataFrame", bill["per day"]) / 86400
        label = WORK_METRICS.get(metric, metric.replace("_", " "))
        how = f"mean {label} per call x the operation's rate"
    order = list(per_second.sum().sort_values(kind="stable").index)
    stacked = cast("pd.Series", per_second.rename_axis(index="operation", columns="shape").stack())
    long = stacked.rename("per second").reset_index()
    figure = px.bar(
        long,
        x="shape",
        y="per second",
        color="operation",
        category_orders={"shape": order, "operation": list(per_second.index)},
        labels={"per second": f"{label} per second", "shape": "shape (cheapest first)"},
        hover_data={"per second": ":,.0f"},
    )
    totals = per_second.sum()
    for rank, shape in enumerate(order, start=1):
        figure.add_annotation(
            x=shape, y=totals[shape], text=f"#{rank}: {totals[shape]:,.0f}", showarrow=False, yshift=12
        )
    changed = "" if not rates else " · rates changed by you"
    figure.update_yaxes(range=[0, totals.max() * 1.12])  # room above the tallest bar for its label
    figure = _titled(
        figure,
        f"Workload cost per shape: {label} per second",
        f"{_engine(runs)} · per call x calls per second{changed}<br>{how}",
        legend="operation",  # the bars are stacked by operation; the shapes are on the x axis
    )
    return figure.update_layout(margin={"t": 110})  # the subtitle has two lines


TYPE_COLORS = {
    "string": "#1f77b4",
    "int": "#2ca02c",
    "long": "#98df8a",
    "double": "#17becf",
    "bool": "#9467bd",
    "date": "#8c564b",
    "object": "#ff7f0e",
    "array": "#d62728",
    "objectId": "#7f7f7f",
    "null": "#c7c7c7",
    "missing": "#eeeeee",
}
"""A colour per BSON type in :func:`schema_chart` (grey for documents that lack the field)."""


def schema_chart(frame: pd.DataFrame) -> go.Figure:
    """Per collection and field, a bar of the shares of its types and of documents missing it
    (a frame from ``workbook.schema_view``); array lengths and counts in the hover."""
    rows = frame.copy()
    rows["label"] = rows["collection"] + " · " + rows["field"]
    missing = rows.drop_duplicates("label")[["collection", "field", "label", "missing", "read"]].copy()
    missing = missing[missing["missing"] > 0]
    missing = missing.assign(type="missing", documents=missing["missing"])
    missing["share_pct"] = (100 * missing["missing"] / missing["read"]).round(1)
    bars = pd.concat([rows, missing], ignore_index=True)
    lengths = bars["min_length"].notna()
    bars["lengths"] = ""
    bars.loc[lengths, "lengths"] = (
        "array length "
        + bars.loc[lengths, "min_length"].astype(int).astype(str)
        + " to "
        + bars.loc[lengths, "max_length"].astype(int).astype(str)
        + ", mean "
        + bars.loc[lengths, "mean_length"].astype(str)
    )
    bars["text"] = ""
    bars.loc[lengths, "text"] = (
        "length "
        + bars.loc[lengths, "min_length"].astype(int).astype(str)
        + "-"
        + bars.loc[lengths, "max_length"].astype(int).astype(str)
    )
    order = list(dict.fromkeys(rows["label"]))
    figure = px.bar(
        bars,
        text="text",
        x="share_pct",
        y="label",
        color="type",
        orientation="h",
        color_discrete_map=TYPE_COLORS,
        category_orders={"label": order},
        hover_data={"documents": ":,", "lengths": True, "label": False},
        labels={"share_pct": "share of the documents read (%)", "label": "", "type": "type"},
    )
    figure.update_traces(textposition="inside", insidetextanchor="start")
    figure.update_layout(barmode="stack", height=max(300, 26 * len(order) + 150), width=900)
    figure.update_xaxes(range=[0, 100])
    collections = ", ".join(sorted(set(rows["collection"])))
    read = ", ".join(f"{c}: {n:,}" for c, n in rows.drop_duplicates("collection")[["collection", "read"]].values)
    return _titled(
        figure,
        f"Field types per collection ({collections})",
        f"documents read per collection: {read}; grey: documents without the field; arrays: lengths min-max",
        legend="type",
    )

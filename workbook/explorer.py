"""The shape explorer: pick a dataset, a shape and an operation; see its plan, sizes and latency.

It explores what ``load()`` returned, the loaded shapes of one or more datasets, and datasets given by
name: those it loads itself, in every shape, into databases of its own, when the learner picks them, and
it holds one of them at a time (picking another drops the last one's databases), so a kernel that
offers every dataset holds only those it was given and the one on show. An operation is
measured on all the dataset's shapes the first time it is shown, and only it (not the whole workload);
runs passed in, or already made by ``run_workload`` on the same loaded shapes in this process, are
shown instead of measuring again. Toggling between shapes only shows another chart: each operation's
chart is drawn once per shape (that shape highlighted), all stacked in one place, and a toggle only
changes which one is visible, so the browser draws nothing on a click. A wait shows a progress bar
with the time left. Every control is a traitlet-backed ipywidget: tests drive it by setting
``.value`` and read what it shows from ``.summary``, ``.sizes``, ``.figure``, and what it measured
from ``.measured``.
"""

from __future__ import annotations

import html
import random
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, cast

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
from pymongo.database import Database

from workbook import charts
from workbook.calls import measure_call
from workbook.dataset_parts import workload
from workbook.datasets.registry import DATASETS, check_scale
from workbook.errors import UnknownChoiceError, WorkbookError
from workbook.loaded import Loadable, LoadedShape, loaded_shapes
from workbook.measure import explained_reads, run_workload, runs_made, summarize_runs
from workbook.shapes import SHAPE_NAMES
from workbook.sizes import size_table
from workbook.workloads import Pools

MIME = pio.renderers["plotly_mimetype"]
"""Plotly's renderer for JupyterLab (and VS Code): a chart as the mimebundle its plotly extension draws."""


Explorable = Loadable | Iterable[LoadedShape | Database | str]
"""What the explorer takes: what ``load()`` returned, and dataset names (loaded when picked), in a list."""


class ShapeExplorer(widgets.VBox):
    """Dataset, shape and operation controls over cached measurements of every shape."""

    def __init__(
        self,
        shapes: Explorable,
        *,
        dataset: str | None = None,
        repeat: int = 10,
        warmup: int = 2,
        measure: Callable[..., pd.DataFrame] = run_workload,
        runs: pd.DataFrame | None = None,
        scale: str | None = None,
    ) -> None:
        given, named = _given_and_named(shapes)
        self.loaded: dict[str, dict[str, LoadedShape]] = {}
        """The loaded shapes of each dataset held now: those given, and the one named dataset on show."""
        for shape in loaded_shapes(given, one_dataset=False) if given else []:
            self.loaded.setdefault(shape.dataset, {})[shape.shape] = shape
        twice = [name for name in named if name in self.loaded]
        if twice:
            raise WorkbookError(
                f"The {twice[0]} dataset was given to the explorer both loaded and by name.",
                fix=f"Pass either what workbook.load() returned for {twice[0]} or the name {twice[0]!r}, not both.",
            )
        self.named = named
        """The datasets given by name: the explorer loads each when picked, and holds one of them at a time."""
        self.offered = [*self.loaded, *named]
        """Every dataset the dataset menu offers: those given loaded, then those given by name."""
        from workbook.loading import course_scale

        self.scale = check_scale(scale) if scale is not None else course_scale()
        """The scale a dataset given by name is loaded at (the course's, unless told)."""
        dataset = dataset if dataset is not None else self.offered[0]
        if dataset not in self.offered:
            raise UnknownChoiceError("dataset given to the explorer", dataset, self.offered)
        self._measure = measure
        from workbook.bounds import MAX_REPEAT, check_count

        check_count("repeat", repeat, most=MAX_REPEAT, unit="timed calls per operation")
        check_count("warmup", warmup, most=MAX_REPEAT, unit="warm-up calls per operation", least=0)
        self._repeat, self._warmup = repeat, warmup
        self._runs: dict[tuple[str, str], pd.DataFrame] = {}
        if runs is not None:
            for name, rows in runs.groupby("operation", sort=False):
                self._runs[(dataset, str(name))] = rows
        self.measured: list[tuple[str, str]] = []
        """(dataset, operation) of every measurement the explorer made itself, in order."""
        self._sizes: dict[str, pd.DataFrame] = {}
        self._stats: dict[tuple[str, str], pd.DataFrame] = {}
        self._plans: dict[tuple[str, str, str], str] = {}
        self._figures: dict[tuple[str, str], dict[str, go.Figure]] = {}
        self._outputs: dict[tuple[str, str], dict[str, widgets.Output]] = {}
        self.redraws = 0
        self.figure: go.Figure | None = None
        self.dataset = widgets.Dropdown(options=self.offered, value=dataset, description="dataset")
        self.shape = widgets.ToggleButtons(description="shape")
        self._switching = False
        self.operation = widgets.Dropdown(options=workload(dataset).names, description="operation")
        self.status = widgets.HTML()
        self.progress = widgets.FloatProgress(value=0.0, min=0.0, max=1.0, layout=widgets.Layout(display="none"))
        self.summary = widgets.HTML()
        self.sizes = widgets.HTML()
        self.chart = widgets.GridBox(layout=widgets.Layout(grid_template_columns="minmax(0, 1fr)"))
        """Every chart drawn (per operation shown, one per shape), stacked in one grid cell; one is visible."""
        self._hold(dataset)
        self._set_shapes(dataset)
        self.dataset.observe(self._dataset_changed, names="value")
        self.shape.observe(self._redraw, names="value")
        self.operation.observe(self._redraw, names="value")
        controls = widgets.HBox([self.dataset, self.operation])
        self.summary.layout.margin = "0 2em 0 0"
        panels = widgets.HBox([self.summary, self.sizes])
        super().__init__([controls, self.shape, self.status, self.progress, panels, self.chart])
        self._redraw()

    @property
    def controls(self) -> tuple[widgets.DOMWidget, ...]:
        """The widgets a learner changes (disabled while the explorer is busy)."""
        return (self.dataset, self.shape, self.operation)

    @contextmanager
    def busy(self, message: str) -> Iterator[None]:
        """Show ``message`` and disable the controls for the block, so a click never looks ignored."""
        previous = self.status.value
        for control in self.controls:
            control.disabled = True
        self.status.value = _busy_html(f"{message}…")
        try:
            yield
        except BaseException:
            self.status.value = previous
            raise
        finally:
            self.progress.layout.display = "none"
            for control in self.controls:
                control.disabled = False

    @contextmanager
    def steps(self, message: str, total: int, unit: str) -> Iterator[Callable[[int, int], None]]:
        """Busy with ``message``, and a bar over ``total`` steps: ``step(done, total)`` moves it and
        estimates the time left from the steps done so far."""
        started = time.perf_counter()

        def step(done: int, total: int) -> None:
            self.progress.value = done / total if total else 1.0
            left = time_left(done, total, time.perf_counter() - started)
            self.status.value = _busy_html(f"{message}: {done} of {total} {unit}, {left}")

        with self.busy(message):
            self.progress.value = 0.0
            self.progress.layout.display = None
            step(0, total)
            yield step

    def runs(self, dataset: str, operation: str) -> pd.DataFrame:
        """Measurements of ``operation`` on every loaded shape of ``dataset``: the runs given or already
        made on these shapes, else measured now (only this operation), then cached."""
        key = (dataset, operation)
        if key not in self._runs:
            shapes = list(self.loaded[dataset].values())
            made = runs_made(shapes, operation)
            if made is not None:
                self._runs[key] = made
            else:
                calls = (self._repeat + self._warmup) * len(shapes)
                message = f"measuring {operation} on the {len(shapes)} shapes of {dataset}"
                with self.steps(message, calls, "calls") as step:
                    self._runs[key] = self._measure(
                        shapes,
                        operations=[operation],
                        repeat=self._repeat,
                        warmup=self._warmup,
                        progress=False,
                        on_call=step,
                    )
                self.measured.append(key)
        return self._runs[key]

    def visit(self, dataset: str) -> dict[str, Any]:
        """Pick ``dataset`` as a learner would, and return what the explorer then shows."""
        if dataset not in self.offered:
            raise UnknownChoiceError("dataset given to the explorer", dataset, self.offered)
        self.dataset.value = dataset
        return {
            "operations": list(self.operation.options),
            "operation": self.operation.value,
            "shapes": list(self.shape.options),
            "drawn": [trace.name for trace in self.figure.data] if self.figure is not None else [],
            "status": self.status.value,
            "summary": self.summary.value,
        }

    def _set_shapes(self, dataset: str) -> None:
        """The shape buttons: the dataset's loaded shapes, hybrid first chosen when loaded."""
        names = [name for name in SHAPE_NAMES if name in self.loaded[dataset]]
        self._switching = True  # no redraw until the dataset's shapes and operations are both set
        try:
            self.shape.options = names
            self.shape.value = "hybrid" if "hybrid" in names else names[0]
        finally:
            self._switching = False

    def _hold(self, dataset: str) -> None:
        """Hold ``dataset``'s shapes: a dataset given by name is loaded now, each shape into the explorer's
        own database, after dropping the databases of the named dataset held before (if any)."""
        if dataset in self.loaded:
            return
        from workbook.connection import connect
        from workbook.loading import load
        from workbook.namespace import database_name, shape_database_name

        for held in [name for name in self.named if name in self.loaded]:
            for loaded in self.loaded.pop(held).values():
                loaded.db.client.drop_database(loaded.db.name)
        own = database_name(EXPLORER_DATABASE)
        shapes: dict[str, LoadedShape] = {}
        with self.steps(f"loading {dataset} at {self.scale} in every shape", len(SHAPE_NAMES), "shapes") as step:
            for done, shape in enumerate(SHAPE_NAMES, 1):
                db = connect(database=shape_database_name(dataset, shape, within=own), quiet=True)
                shapes[shape] = load(dataset, shape, db, scale=self.scale, progress=False)
                step(done, len(SHAPE_NAMES))
        self.loaded[dataset] = shapes

    def _dataset_changed(self, change: dict[str, Any]) -> None:
        names = workload(change["new"]).names
        self._hold(change["new"])
        self._set_shapes(change["new"])
        # Options first, then the value, with redraws held: inside hold_trait_notifications the old
        # value was validated against the new options and refused (TraitError for followers and parts).
        self._switching = True
        try:
            self.operation.options = names
            self.operation.value = names[0]
        finally:
            self._switching = False
        self._redraw()

    def _redraw(self, change: dict[str, Any] | None = None) -> None:
        if self._switching:
            return
        dataset, shape, operation = self.dataset.value, self.shape.value, self.operation.value
        runs = self.runs(dataset, operation)
        missing = [name for name in self.loaded[dataset] if (dataset, name, operation) not in self._plans]
        if missing:  # once per operation: later toggles only redraw
            with self.steps(f"explaining {operation} on every shape", len(missing), "shapes") as step:
                for done, name in enumerate(missing, 1):
                    self.plan(name, operation)
                    step(done, len(missing))
        if (dataset, operation) not in self._outputs:
            with self.busy(f"drawing {operation} on every shape"):
                self._draw(dataset, runs, operation)
            # added, never replaced: a chart taken out of the page and put back was not drawn again in JupyterLab
            self.chart.children = (*self.chart.children, *self._outputs[(dataset, operation)].values())
        shown = self._outputs[(dataset, operation)][shape]
        for output in self.chart.children:  # the one change a toggle sends the browser
            output.layout.visibility = "visible" if output is shown else "hidden"
        self.figure = self._figures[(dataset, operation)][shape]
        self.summary.value = self._summary_html(dataset, runs, shape, operation)
        self.sizes.value = self._sizes_html(dataset, shape)
        self.status.value = (
            f"<b>{html.escape(dataset)}</b> · shape <b class='workbook-shape'>{html.escape(shape)}</b> · "
            f"operation <b>{html.escape(operation)}</b> · {html.escape(runs['engine'].iloc[0])}"
        )
        self.redraws += 1

    def _draw(self, dataset: str, runs: pd.DataFrame, operation: str) -> None:
        """The latency chart of one operation, once per shape with that shape highlighted, each in an
        Output of its own (hidden until its shape is picked)."""
        base = charts.latency_chart(runs)
        base.update_layout(height=420)
        figures, outputs = {}, {}
        for shape in self.loaded[dataset]:
            figure = go.Figure(base)
            figure.update_layout(title_text=f"Latency of {operation}: {shape} highlighted")
            for trace in figure.data:
                trace.opacity = 1.0 if trace.name == shape else 0.35
            bundle = {"text/plain": f"<the {shape} chart>", **MIME.to_mimebundle(figure.to_dict())}
            output = widgets.Output(layout=widgets.Layout(grid_area="1 / 1", visibility="hidden"))
            output.outputs = ({"output_type": "display_data", "data": bundle, "metadata": {}},)
            figures[shape], outputs[shape] = figure, output
        self._figures[(dataset, operation)], self._outputs[(dataset, operation)] = figures, outputs

    def _summary_html(self, dataset: str, runs: pd.DataFrame, shape: str, operation: str) -> str:
        if (dataset, operation) not in self._stats:
            self._stats[(dataset, operation)] = summarize_runs(runs)
        row = cast(pd.Series, self._stats[(dataset, operation)].loc[(shape, operation)])
        plan = self.plan(shape, operation)
        lines = [
            ("winning plan", plan),
            ("latency p50 / p95", f"{row['p50_ms']:.2f} / {row['p95_ms']:.2f} ms ({int(row['runs'])} runs)"),
            ("round trips", f"{row['round_trips']:.1f}"),
            ("documents examined", f"{row['docs_examined']:.0f}"),
            ("index keys examined", f"{row['keys_examined']:.0f}"),
            ("documents returned", f"{row['docs_returned']:.1f}"),
            ("bytes returned", f"{row['bytes_returned']:,.0f}"),
        ]
        cells = "".join(f"<tr><th style='text-align:left'>{k}</th><td>{html.escape(v)}</td></tr>" for k, v in lines)
        return f"<h4>{html.escape(operation)} · {html.escape(shape)}</h4><table>{cells}</table>"

    def plan(self, shape: str, operation: str) -> str:
        """The winning plan of each read the operation sends once (explain of its first call; cached)."""
        key = (self.dataset.value, shape, operation)
        if key not in self._plans:
            self._plans[key] = self._explain_once(*key)
        return self._plans[key]

    def _explain_once(self, dataset: str, shape: str, operation: str) -> str:
        loaded = self.loaded[dataset][shape].check()
        spec = workload(dataset).operation(operation)
        if spec.kind == "write":
            return "a write: see its round trips and the work of the query that finds its target"
        args, kwargs = spec.arguments(Pools(loaded.db), random.Random(f"explorer:{operation}"))
        work = measure_call(None, loaded.ops.run, operation, *args, **kwargs)  # explained below, read by read
        plans = []
        for collection, summary in explained_reads(loaded.db, work.sent):
            if isinstance(summary, Exception):
                reason = summary.message if isinstance(summary, WorkbookError) else str(summary)
                plans.append(f"{collection}: not modelled ({reason})")
            else:
                plans.append(f"{collection}: {summary['plan']} {summary['index'] or 'COLLSCAN'}")
        return "; ".join(plans) or "no reads"

    def _sizes_html(self, dataset: str, shape: str) -> str:
        if dataset not in self._sizes:
            with self.busy(f"reading the document sizes of {dataset}"):  # once per dataset
                self._sizes[dataset] = size_table(list(self.loaded[dataset].values()))
        table = pd.DataFrame(self._sizes[dataset].loc[shape, ["documents", "p50_bytes", "p95_bytes", "max_bytes"]])
        shown: pd.DataFrame = table.loc[self.loaded[dataset][shape].collection_names].round(0).astype(int)
        return "<h4>document sizes (bytes)</h4>" + shown.to_html(index_names=False)


EXPLORER_DATABASE = "explorer"
"""The explorer's own databases are ``workbench_<learner>_explorer_<dataset>_<shape>``: those it loads a named
dataset into, and drops when another is picked (never the learner's own loads)."""


def _given_and_named(shapes: Explorable) -> tuple[Loadable | list[Any], list[str]]:
    """``shapes`` split into what ``load()`` returned (as given) and the dataset names among its items (checked)."""
    if isinstance(shapes, str):
        items: list[Any] = [shapes]
    elif isinstance(shapes, Iterable) and not isinstance(shapes, Mapping | bytes | Database | LoadedShape):
        items = list(shapes)
    else:
        return shapes, []
    named = [item for item in items if isinstance(item, str)]
    for name in named:
        if name not in DATASETS:
            raise UnknownChoiceError("dataset for the explorer to load", name, DATASETS)
    if len(set(named)) < len(named):
        twice = next(name for name in named if named.count(name) > 1)
        raise WorkbookError(f"The dataset {twice!r} was given to the explorer twice.", fix="Name each dataset once.")
    return [item for item in items if not isinstance(item, str)], named


def time_left(done: int, total: int, elapsed: float) -> str:
    """The time a task of ``total`` steps still needs, estimated from ``done`` steps in ``elapsed`` seconds.

    >>> time_left(0, 36, 0.0)
    'estimating the time left'
    >>> time_left(12, 36, 4.0)
    'about 8 s left'
    >>> time_left(35, 36, 3.5)
    'under a second left'
    >>> time_left(10, 100, 20.0)
    'about 3 min left'
    """
    if done <= 0:
        return "estimating the time left"
    left = elapsed / done * max(total - done, 0)
    if left < 1:
        return "under a second left"
    return f"about {left:.0f} s left" if left < 90 else f"about {left / 60:.0f} min left"


def _busy_html(message: str) -> str:
    return f"<span class='workbook-busy'>&#8987; <i>{html.escape(message)}</i></span>"


def explore(
    shapes: Explorable,
    *,
    runs: pd.DataFrame | None = None,
    dataset: str | None = None,
    repeat: int = 10,
    warmup: int = 2,
    scale: str | None = None,
) -> ShapeExplorer:
    """The shape explorer over what ``load()`` returned (the shapes of one or more datasets), and over
    datasets named in the list (``[*store_shapes, "parts", "followers"]``): a named dataset is loaded in
    every shape at ``scale`` (the course's unless told) when first picked, into the explorer's own
    databases, and only one named dataset is held at a time, so offering every dataset costs the kernel
    the memory of one.

    ``runs`` (from ``run_workload``) are shown for the first dataset instead of measuring again, as are
    runs ``run_workload`` already made on these loaded shapes; any other operation is measured on its
    dataset's shapes the first time you pick it (only that operation, with a progress bar).
    """
    return ShapeExplorer(shapes, dataset=dataset, runs=runs, repeat=repeat, warmup=warmup, scale=scale)

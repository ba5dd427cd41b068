"""A workload's daily bill: each operation's measured work per call multiplied by how often it runs.

A shape is judged by what the whole workload costs it in a day, not by its rarest query: the
store's monthly report examines every order of a month, but it runs once a day; the product page
examines one document, two thousand times a second. :func:`daily_work` makes that comparison from
``run_workload`` rows; :func:`revisit` puts the measured work back beside the workload table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from workbook.errors import UnknownChoiceError
from workbook.workload_cost import (
    COST,
    COST_WEIGHTS,
    WORK,
    _check_measure,
    call_cost,
    cost_per_second,
    cost_ranking,
    crossover_rate,
    daily_work,
    day_totals,
    operation_work,
    per_call,
    weights_text,
)
from workbook.workloads import Workload

if TYPE_CHECKING:
    from workbook.loaded import LoadedShape

__all__ = [
    "COST",
    "COST_WEIGHTS",
    "WORK",
    "call_cost",
    "cost_per_second",
    "cost_ranking",
    "crossover_rate",
    "daily_work",
    "day_totals",
    "operation_work",
    "per_call",
    "revisit",
    "schema_table",
    "weights_text",
    "what_if",
]


def schema_table(loaded: LoadedShape) -> pd.DataFrame:
    """A loaded shape's collections and indexes, each with the reason it exists (the schema beside the workload)."""
    rows = [
        {
            "collection": collection.name,
            "index": index.name,
            "keys": ", ".join(f"{field}: {direction}" for field, direction in index.keys),
            "why": index.why,
        }
        for collection in loaded.spec.collections
        for index in collection.indexes
    ]
    return pd.DataFrame(rows).set_index(["collection", "index"])


def what_if(runs: pd.DataFrame, workload: Workload, measure: str = COST, *, chart: bool = True) -> Any:
    """Sliders for each operation's rate (per second, log scale); below them the shapes ranked by what
    the whole workload costs at those rates (``measure``: the weighted ``"cost"`` or one count of
    :data:`WORK`) and the cost chart, both redrawn when a slider is let go."""
    import ipywidgets as widgets

    from workbook.display import table

    if measure != COST:
        _check_measure(measure)
    names = list(dict.fromkeys(runs["operation"]))
    sliders = {
        name: widgets.FloatLogSlider(
            value=workload.operation(name).per_second,
            base=10,
            min=-6,
            max=5,
            step=0.1,
            description=name,
            continuous_update=False,
            style={"description_width": "12em"},
            layout={"width": "36em"},
            readout_format=",.3g",
        )
        for name in names
    }
    reset = widgets.Button(description="back to the workload's rates", layout={"width": "auto"})
    shown = widgets.Output()

    def ranking(rates: dict[str, float]) -> pd.DataFrame:
        if measure == COST:
            return cost_ranking(runs, workload, rates=rates)
        totals = day_totals(runs, workload, measure, rates=rates).sort_values(kind="stable")
        ranked = (totals / 86400).rename(f"{measure} per second").to_frame()
        ranked.insert(0, "rank", range(1, len(ranked) + 1))
        return ranked

    holding: list[bool] = []

    def redraw(_change: Any = None) -> None:
        if holding:
            return
        rates = {n: s.value for n, s in sliders.items()}
        changed = {n: r for n, r in rates.items() if r != workload.operation(n).per_second}
        ranked = ranking(rates)
        box.ranking = ranked
        shown.clear_output(wait=True)
        with shown:
            from IPython.display import display

            display(table(ranked, caption="the shapes at these rates, cheapest first"))
            if chart:
                from workbook.charts import workload_cost_chart

                display(workload_cost_chart(runs, workload, measure, rates=changed or None))

    def back(_button: Any = None) -> None:
        holding.append(True)  # one redraw for the whole reset, not one per slider
        try:
            for name, slider in sliders.items():
                slider.value = workload.operation(name).per_second
        finally:
            holding.clear()
        redraw()

    box = widgets.VBox([widgets.HTML("<b>Rates, calls per second</b>"), *sliders.values(), reset, shown])
    box.ranking = pd.DataFrame()  # the ranking on show, kept for tests and for the curious
    box.sliders = sliders
    box.reset = back
    for slider in sliders.values():
        slider.observe(redraw, names="value")
    reset.on_click(back)
    redraw()
    return box


def revisit(runs: pd.DataFrame, workload: Workload, shape: str) -> pd.DataFrame:
    """The workload table again, beside what ``shape`` measured per call: round trips and documents
    examined and returned (one round trip, no more documents examined than returned: a direct read)."""
    mine = runs[runs["shape"] == shape]
    if mine.empty:
        raise UnknownChoiceError("shape in these runs", shape, sorted(set(runs["shape"])))
    measured = mine.groupby("operation", sort=False)[["round_trips", "docs_examined", "docs_returned"]].mean()
    table = workload.table()[["type", "rate"]].join(measured, how="inner")
    return table.join(workload.table()["needs"])

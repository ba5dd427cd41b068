"""A workload's daily bill: each operation's measured work per call multiplied by how often it runs.

A shape is judged by what the whole workload costs it in a day, not by its rarest query: the
store's monthly report examines every order of a month, but it runs once a day; the product page
examines one document, two thousand times a second. :func:`daily_work` makes that comparison from
``run_workload`` rows; :func:`revisit` puts the measured work back beside the workload table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import pandas as pd

from workbook.errors import UnknownChoiceError
from workbook.workloads import Workload

if TYPE_CHECKING:
    from workbook.loaded import LoadedShape

WORK = ("docs_examined", "keys_examined", "round_trips", "bytes_returned")
"""Work counts that ``run_workload`` measures and that do not depend on the engine's speed."""


def _check_measure(measure: str) -> None:
    if measure not in WORK:
        raise UnknownChoiceError("measure of work", measure, WORK)


def per_call(runs: pd.DataFrame, measure: str = "docs_examined") -> pd.DataFrame:
    """Mean ``measure`` per call, one row per operation, one column per shape (workload order kept)."""
    _check_measure(measure)
    frame = runs.groupby(["operation", "shape"], sort=False)[measure].mean().unstack("shape")
    return frame.reindex(columns=list(dict.fromkeys(runs["shape"])), index=list(dict.fromkeys(runs["operation"])))


def daily_work(
    runs: pd.DataFrame, workload: Workload, measure: str = "docs_examined", *, rates: dict[str, float] | None = None
) -> pd.DataFrame:
    """Per operation: runs a day, then ``measure`` per call, per day, and as a % of the shape's day,
    one column per shape in each group. ``rates`` (per second) overrides the workload's."""
    calls = per_call(runs, measure)
    per_second = {name: workload.operation(name).per_second for name in calls.index} | (rates or {})
    rate = pd.Series({name: per_second[name] * 86400 for name in calls.index}, name="runs_per_day")
    day = calls.mul(rate, axis=0)
    frame = pd.concat({"per call": calls, "per day": day, "% of day": 100 * day / day.sum()}, axis=1)
    frame.insert(0, ("runs_per_day", ""), rate)
    return frame


def day_totals(
    runs: pd.DataFrame, workload: Workload, measure: str = "docs_examined", *, rates: dict[str, float] | None = None
) -> pd.Series:
    """The whole workload's ``measure`` per day, one value per shape: the number that ranks shapes."""
    totals = cast("pd.Series", daily_work(runs, workload, measure, rates=rates)["per day"].sum())
    return totals.rename(f"{measure} per day")


def operation_work(runs: pd.DataFrame, operation: str) -> pd.DataFrame:
    """One operation's mean work per call in each shape: round trips, documents and keys examined, bytes."""
    mine = runs[runs["operation"] == operation]
    if mine.empty:
        raise UnknownChoiceError("operation in these runs", operation, sorted(set(runs["operation"])))
    return mine.groupby("shape", sort=False)[["round_trips", "docs_examined", "keys_examined", "bytes_returned"]].mean()


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


def what_if(runs: pd.DataFrame, workload: Workload, measure: str = "bytes_returned") -> Any:
    """Sliders for each operation's rate (per second, log scale) and the day's totals per shape, ranked,
    redrawn as the rates change."""
    import ipywidgets as widgets

    from workbook.display import table

    names = list(dict.fromkeys(runs["operation"]))
    sliders = {
        name: widgets.FloatLogSlider(
            value=workload.operation(name).per_second,
            base=10,
            min=-6,
            max=4,
            step=0.1,
            description=name,
            style={"description_width": "12em"},
            layout={"width": "36em"},
            readout_format=".3g",
        )
        for name in names
    }
    shown = widgets.Output()

    def redraw(_change: Any = None) -> None:
        totals = day_totals(runs, workload, measure, rates={n: s.value for n, s in sliders.items()})
        ranked = totals.sort_values().to_frame()
        ranked["rank"] = range(1, len(ranked) + 1)
        shown.clear_output(wait=True)
        with shown:
            from IPython.display import display

            display(table(ranked, caption=f"{measure} per day at these rates, least first"))

    for slider in sliders.values():
        slider.observe(redraw, names="value")
    redraw()
    return widgets.VBox([widgets.HTML("<b>Rates, per second</b>"), *sliders.values(), shown])


def revisit(runs: pd.DataFrame, workload: Workload, shape: str) -> pd.DataFrame:
    """The workload table again, beside what ``shape`` measured per call: round trips and documents
    examined and returned (one round trip, no more documents examined than returned: a direct read)."""
    mine = runs[runs["shape"] == shape]
    if mine.empty:
        raise UnknownChoiceError("shape in these runs", shape, sorted(set(runs["shape"])))
    measured = mine.groupby("operation", sort=False)[["round_trips", "docs_examined", "docs_returned"]].mean()
    table = workload.table()[["type", "rate"]].join(measured, how="inner")
    return table.join(workload.table()["needs"])

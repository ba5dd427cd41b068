"""What a workload costs each shape: measured work per call times how often each operation runs.

The computations under :mod:`workbook.daily` and :func:`workbook.charts.workload_cost_chart`: pure
pandas over ``run_workload`` rows, no widgets and no charts, so both can import it.
"""

from __future__ import annotations

from typing import cast

import pandas as pd

from workbook.errors import UnknownChoiceError
from workbook.workloads import Workload

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


COST_WEIGHTS: dict[str, float] = {
    "round_trips": 10.0,
    "docs_examined": 1.0,
    "keys_examined": 0.2,
    "bytes_returned": 1 / 1024,
}
"""Work units per unit of each count, one unit being one document examined. These are stated
assumptions, not measurements: a round trip is a command parsed, authorised, planned and answered
with two network messages (about ten cached documents' worth); an index key is a step along a sorted
index with no document fetched (a fifth of one); a KiB sent back is serialised and sent (about one).
Pass other ``weights`` to see how much the ranking depends on them."""

COST = "cost"
"""The name of the weighted measure (work units) beside the raw counts in :data:`WORK`."""


def _weights(weights: dict[str, float] | None) -> dict[str, float]:
    chosen = COST_WEIGHTS | (weights or {})
    for name in chosen:
        _check_measure(name)
    return chosen


_UNIT_NAMES = {
    "round_trips": "round trip",
    "docs_examined": "document examined",
    "keys_examined": "index key examined",
    "bytes_returned": "KiB returned",
}


def weights_text(weights: dict[str, float] | None = None) -> str:
    """The weights in words: "10 per round trip, 1 per document examined, ..." (bytes per KiB)."""
    chosen = _weights(weights)
    return ", ".join(
        f"{chosen[name] * (1024 if name == 'bytes_returned' else 1):g} per {unit}" for name, unit in _UNIT_NAMES.items()
    )


def _rates(workload: Workload, operations: list[str], rates: dict[str, float] | None) -> pd.Series:
    for name in rates or {}:
        if name not in operations:
            raise UnknownChoiceError("operation in these runs", name, operations)
    per_second = {name: workload.operation(name).per_second for name in operations} | (rates or {})
    return pd.Series({name: float(per_second[name]) for name in operations}, name="per_second")


def call_cost(runs: pd.DataFrame, weights: dict[str, float] | None = None) -> pd.DataFrame:
    """Weighted work per call (work units, see :data:`COST_WEIGHTS`), one row per operation, one column
    per shape: round trips, documents and keys examined and bytes returned, each times its weight."""
    first, *rest = (per_call(runs, name) * weight for name, weight in _weights(weights).items())
    return sum(rest, start=first)


def cost_per_second(
    runs: pd.DataFrame,
    workload: Workload,
    *,
    rates: dict[str, float] | None = None,
    weights: dict[str, float] | None = None,
) -> pd.DataFrame:
    """Each operation's weighted work per second in each shape: its rate times its work per call.
    ``rates`` (calls per second) override the workload's."""
    calls = call_cost(runs, weights)
    return calls.mul(_rates(workload, list(calls.index), rates), axis=0)


def cost_ranking(
    runs: pd.DataFrame,
    workload: Workload,
    *,
    rates: dict[str, float] | None = None,
    weights: dict[str, float] | None = None,
) -> pd.DataFrame:
    """The shapes ranked by the whole workload's weighted work per second, cheapest first, with each
    shape's cost as a multiple of the cheapest."""
    totals = cost_per_second(runs, workload, rates=rates, weights=weights).sum().sort_values(kind="stable")
    frame = totals.rename("work units per second").to_frame()
    frame["times the cheapest"] = frame["work units per second"] / frame["work units per second"].iloc[0]
    frame.insert(0, "rank", range(1, len(frame) + 1))
    frame.index.name = "shape"
    return frame


def crossover_rate(
    runs: pd.DataFrame,
    workload: Workload,
    operation: str,
    shape: str,
    rival: str,
    *,
    rates: dict[str, float] | None = None,
    weights: dict[str, float] | None = None,
) -> float | None:
    """The rate of ``operation`` (calls per second, the other rates kept) at which ``shape`` and
    ``rival`` cost the same; None if they never do (the operation costs both the same per call, or
    the crossing would need a negative rate)."""
    calls = call_cost(runs, weights)
    for name in (shape, rival):
        if name not in calls.columns:
            raise UnknownChoiceError("shape in these runs", name, list(calls.columns))
    if operation not in calls.index:
        raise UnknownChoiceError("operation in these runs", operation, list(calls.index))
    others = cost_per_second(runs, workload, rates=rates, weights=weights).drop(index=operation).sum()
    row = cast("dict[str, float]", calls.loc[operation].to_dict())
    slope = row[shape] - row[rival]
    if slope == 0:
        return None
    rate = (float(others[rival]) - float(others[shape])) / slope
    return float(rate) if rate >= 0 else None


def operation_work(runs: pd.DataFrame, operation: str) -> pd.DataFrame:
    """One operation's mean work per call in each shape: round trips, documents and keys examined, bytes."""
    mine = runs[runs["operation"] == operation]
    if mine.empty:
        raise UnknownChoiceError("operation in these runs", operation, sorted(set(runs["operation"])))
    return mine.groupby("shape", sort=False)[["round_trips", "docs_examined", "keys_examined", "bytes_returned"]].mean()

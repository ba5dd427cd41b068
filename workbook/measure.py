"""Run a workload against each loaded shape and measure it: time, and the work behind the time.

``run_workload`` returns a tidy DataFrame, one row per timed call: latency from a monotonic clock (warm-up
calls excluded), and work counts that do not depend on the engine's speed: round trips and reply
bytes (pymongo command monitoring), documents returned, and keys and documents examined (explain
of every command the call sent: the server's on MongoDB, the workbench's model offline).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any
from weakref import WeakKeyDictionary

import numpy as np
import pandas as pd

from workbook.bounds import MAX_REPEAT, check_count
from workbook.calls import measure_call
from workbook.errors import ArgumentTypeError, OperationRejectedError, WorkbookError
from workbook.explaining.work import explained_reads as explained_reads  # re-exported for the explorer
from workbook.explaining.work import work_examined
from workbook.loaded import Loadable, LoadedShape, loaded_shapes
from workbook.waiting import wait_bar
from workbook.workloads import Pools

COLUMNS = [
    "shape",
    "operation",
    "run",
    "latency_ms",
    "docs_returned",
    "docs_examined",
    "keys_examined",
    "bytes_returned",
    "round_trips",
    "ok",
    "engine",
]

_MADE: WeakKeyDictionary[LoadedShape, dict[str, pd.DataFrame]] = WeakKeyDictionary()
"""Per loaded shape and operation, the rows of the last run of it in this process (``runs_made``)."""


def _count(name: str, value: Any, minimum: int) -> int:
    """``value`` if it is a whole number >= ``minimum``, else a WorkbookError naming the expected type."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentTypeError(name, value, f"a whole number (>= {minimum}) such as {max(minimum, 3)}")
    if value < minimum:
        raise WorkbookError(f"{name} must be >= {minimum} (got {value}).", fix="Use e.g. repeat=20, warmup=3.")
    return value


def run_workload(
    shapes: Loadable,
    *,
    operations: Iterable[str] | None = None,
    repeat: int = 20,
    warmup: int = 3,
    mix: bool = False,
    explain_runs: int = 3,
    seed: int = 7,
    progress: bool = True,
    on_call: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """Run the dataset's workload on each loaded shape: each operation timed ``repeat`` times (or, with
    ``mix=True``, the weighted mix), one row per timed call.

    ``shapes`` is what ``load()`` returned: one loaded shape, or a list or dict of them. The same
    seeded arguments are replayed against each shape. ``warmup`` calls per operation run first and
    are not recorded. Keys and documents examined come from explaining the commands of the first
    ``explain_runs`` timed calls of each operation (explain is far slower than the call); other
    rows leave them empty. A progress bar appears once a run passes one second (``progress=False``
    hides it); ``on_call(done, total)`` is called after every call, for a progress display of your own.
    Each run is remembered per loaded shape and operation (``runs_made`` hands it back).
    """
    from workbook.connection import engine_info

    _count("repeat", repeat, 1)
    _count("warmup", warmup, 0)
    _count("explain_runs", explain_runs, 0)
    check_count("repeat", repeat, most=MAX_REPEAT, unit="timed calls per operation")
    check_count("warmup", warmup, most=MAX_REPEAT, unit="warm-up calls per operation", least=0)
    check_count("explain_runs", explain_runs, most=MAX_REPEAT, unit="explained calls per operation", least=0)
    if isinstance(operations, str):
        fix = f"operations=[{operations!r}]"
        raise ArgumentTypeError("operations", operations, "a list of operation names", fix=fix)
    loaded = loaded_shapes(shapes)
    spec = loaded[0].workload
    names = list(operations) if operations is not None else spec.names
    for name in names:
        spec.operation(name)  # unknown names fail before anything runs
    rows: list[dict[str, Any]] = []
    calls = len(_plan(spec, names, repeat, warmup, mix, seed)) * len(loaded)  # speed: a bar for runs over 1 s
    bar = wait_bar(total=calls, desc=f"run {spec.dataset}", unit="call", progress=progress)
    done = 0
    for shape in loaded:
        engine = engine_info(shape.db).label
        ops, pools = shape.ops, Pools(shape.db)
        timed_so_far: Counter[str] = Counter()
        for index, (name, timed) in enumerate(_plan(spec, names, repeat, warmup, mix, seed)):
            args, kwargs = spec.operation(name).arguments(pools, random.Random(f"{seed}:{name}:{index}"))
            row, commands = _timed_call(ops, name, args, kwargs)
            if timed:
                row.update(shape=shape.shape, operation=name, run=timed_so_far[name], engine=engine)
                if timed_so_far[name] < explain_runs:
                    row.update(work_examined(shape.db, commands))
                timed_so_far[name] += 1
                rows.append(row)
            bar.update(1)
            done += 1
            if on_call is not None:
                on_call(done, calls)
    bar.close()
    frame = pd.DataFrame(rows, columns=COLUMNS)
    if not mix:  # a mix's calls per operation follow the weights, not repeat: not a run of each operation
        for shape in loaded:
            made = _MADE.setdefault(shape, {})
            for name in names:
                made[name] = frame[(frame["shape"] == shape.shape) & (frame["operation"] == name)]
    return frame


def runs_made(shapes: Iterable[LoadedShape], operation: str) -> pd.DataFrame | None:
    """The rows of the last ``run_workload`` of ``operation`` on every one of ``shapes`` in this process, or
    None if one of them has not been run (the explorer shows these instead of measuring again)."""
    frames = []
    for shape in shapes:
        frame = _MADE.get(shape, {}).get(operation)
        if frame is None or frame.empty:
            return None
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else None


def _plan(spec: Any, names: list[str], repeat: int, warmup: int, mix: bool, seed: int) -> list[tuple[str, bool]]:
    """The calls to make: (operation, timed?) in order."""
    if not mix:
        return [(name, i >= warmup) for name in names for i in range(warmup + repeat)]
    weights = spec.weights()
    chosen = random.Random(f"{seed}:mix").choices(names, weights=[weights[n] for n in names], k=warmup + repeat)
    return [(name, i >= warmup) for i, name in enumerate(chosen)]


def _timed_call(
    ops: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Call one operation, timing it with a monotonic clock; its row and the commands it sent."""

    def attempt() -> bool:
        try:
            ops.run(name, *args, **kwargs)
        except OperationRejectedError:  # e.g. out of stock: still a measured call
            return False
        return True

    work = measure_call(None, attempt)  # explained later, for the first explain_runs calls only
    row = {
        "latency_ms": work.latency_ms,
        "docs_returned": work.docs_returned,
        "docs_examined": work.docs_examined,
        "keys_examined": work.keys_examined,
        "bytes_returned": work.bytes_returned,
        "round_trips": work.round_trips,
        "ok": work.result,
    }
    return row, work.sent


def summarize_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """Per shape and operation: p50/p95/p99 latency, spread (IQR) and mean work counts."""

    def stats(group: pd.DataFrame) -> pd.Series:
        latency = group["latency_ms"].to_numpy()
        p25, p50, p75, p95, p99 = np.percentile(latency, [25, 50, 75, 95, 99])
        return pd.Series(
            {
                "runs": len(group),
                "p50_ms": p50,
                "p95_ms": p95,
                "p99_ms": p99,
                "iqr_ms": p75 - p25,
                "docs_examined": group["docs_examined"].mean(),
                "keys_examined": group["keys_examined"].mean(),
                "docs_returned": group["docs_returned"].mean(),
                "round_trips": group["round_trips"].mean(),
                "bytes_returned": group["bytes_returned"].mean(),
                "engine": group["engine"].iloc[0],
            }
        )

    return pd.DataFrame(frame.groupby(["shape", "operation"], sort=False).apply(stats))

"""Waits the learner can see: a bar that appears before a wait reaches a second and is gone when done.

Issue 25: nothing a learner runs may sit silent for over a second. Two shapes of wait:

- work that can count its steps (collections, calls, documents) uses :func:`wait_bar`, a tqdm bar
  with ``delay`` and ``leave=False``, as :mod:`workbook.loading` does;
- one call that cannot count (starting the engine, generating a dataset, one big write) runs
  under :func:`busy`: the same bar, moved by the clock from a helper thread, showing the time
  spent and the usual time.

(Waits on the database, a cell's ``find_one`` or index build, are shown by :mod:`workbook.engine_waits`.)

Both stay hidden below ``delay`` and disappear when done. In a notebook the delay counts from the
cell's start (:func:`cell_delay`): a wait that begins after half a second of other work shows
0.2 s later, so the cell is silent for under a second (:data:`DELAY_S`, with room for the
widget's trip). In a notebook the bar is displayed as a widget only, without the text copy tqdm
adds: a saved notebook then holds no text for it, so a cell whose outputs nbval compares gives
the same outputs whether the bar appeared or not (nbval skips
``application/vnd.jupyter.widget-view+json``, the widget's only output).
"""

from __future__ import annotations

import sys
import threading
import time
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from tqdm.auto import tqdm

DELAY_S = 0.55
"""How long a wait stays silent before its bar shows (issue 25: nothing silent over a second). Under a
second, because the widget takes a moment to reach the screen: a kernel busy with its first cell's
imports delivered a bar set for 1.0 s at 1.22 s, and a database bar set for 0.6 s into its commands
reached notebook 07's screen 1.02 s into the cell. At 0.7 s, generating the parts (Python busy the whole
time) reached notebook 02's screen at 0.84-0.9 s, the benchmark's goal with its 30% margin (0.84 s)."""

MIN_DELAY_S = 0.1
"""The shortest delay a bar gets, however late in its cell it starts (a bar never flashes for less)."""

TICK_S = 0.2
"""How often :func:`busy` moves its bar: often enough to look alive, rare enough to cost nothing."""

_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

OPEN_BARS: weakref.WeakSet[Any] = weakref.WeakSet()
"""The bars made by :func:`wait_bar` and not closed yet (one already says the learner is waiting)."""

_open_lock = threading.RLock()
"""Re-entrant: a bar dropped unclosed is closed by its finalizer (``tqdm.__del__``), which the collector may run on
any thread at any allocation, this lock's holder included. With a plain lock, a collection inside
:func:`another_bar_open` deadlocked the engine-waits thread on itself, and the kernel with it (a CI run of
notebook 07 hung there)."""


def another_bar_open(than: Any = None) -> bool:
    """Whether a :func:`wait_bar` other than ``than`` is open (safe from any thread)."""
    with _open_lock:
        while True:
            try:
                bars = list(OPEN_BARS)
            except RuntimeError:  # a finalizer on this thread closed a bar while the set was read: read it again
                continue
            return any(bar is not than for bar in bars)


class _ShowsOnTime:
    """A tqdm bar that shows at its ``delay`` even when no step ends then (tqdm checks only at steps).

    A bar over coarse steps (a collection's model: 2 s each) would otherwise first show at the
    first step after the delay. A timer shows it on time; closing cancels the timer.
    """

    disable: bool
    refresh: Any

    def arm(self, delay: float) -> None:
        """Start the timer that shows the bar ``delay`` seconds from now, unless closed by then."""
        self._guard = threading.Lock()
        self._timer = threading.Timer(delay, self._show_now)
        self._timer.daemon = True
        self._timer.start()

    def _show_now(self) -> None:
        with self._guard:
            if not self.disable:
                self.refresh()

    def close(self) -> None:
        with _open_lock:
            OPEN_BARS.discard(self)
        timer = getattr(self, "_timer", None)
        if timer is None:
            super().close()  # type: ignore[misc]
            return
        timer.cancel()
        with self._guard:
            super().close()  # type: ignore[misc]


_cell_started: list[float] = []
"""When the running notebook cell began (``time.monotonic()``), kept by an IPython ``pre_run_cell`` hook."""


def _watch_cells() -> None:
    """Have IPython note when each cell starts, from the next cell on (once per kernel)."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None and not _cell_started:
        _cell_started.append(0.0)  # unknown for the cell running now
        shell.events.register("pre_run_cell", lambda *_: _cell_started.__setitem__(0, time.monotonic()))


def _requested() -> float:
    """When the running cell was asked for (its request's date, on the monotonic clock), or 0.0.

    For the first cell with a bar, whose start the ``pre_run_cell`` hook missed. A cell queued
    behind others (Run All) was asked for before it began: its bars show sooner, never later.
    """
    from datetime import UTC, datetime

    from IPython import get_ipython

    header = (getattr(get_ipython(), "parent_header", None) or {}).get("header") or {}
    date = header.get("date")
    if isinstance(date, str):
        try:
            date = datetime.fromisoformat(date)
        except ValueError:
            return 0.0
    if not isinstance(date, datetime) or date.tzinfo is None:
        return 0.0
    age = (datetime.now(UTC) - date).total_seconds()
    return time.monotonic() - age if 0 <= age < 3600 else 0.0


def cell_delay() -> float:
    """How long a new bar waits before it shows, so its cell is silent for :data:`DELAY_S` at most.

    A wait that begins 0.6 s into a cell (after a restore, say) shows 0.1 s later, not 0.7 s later;
    never sooner than :data:`MIN_DELAY_S`. Outside a kernel, or when the cell's start is not
    known, :data:`DELAY_S`.
    """
    if not in_kernel():
        return DELAY_S
    _watch_cells()
    started = (_cell_started[0] if _cell_started else 0.0) or _requested()
    if not started:
        return DELAY_S
    return min(DELAY_S, max(MIN_DELAY_S, DELAY_S - (time.monotonic() - started)))


def in_kernel() -> bool:
    """Whether bars here are Jupyter widgets (tqdm.auto chose its notebook bar: we run in a kernel)."""
    notebook = sys.modules.get("tqdm.notebook")  # imported by tqdm.auto only inside a kernel
    return notebook is not None and issubclass(tqdm, notebook.tqdm)


@cache
def _bar_class() -> type[Any]:
    """tqdm's class for here, shown on time: in a Jupyter kernel, its widget bar without a text copy."""
    notebook = sys.modules.get("tqdm.notebook")
    if notebook is None or not in_kernel():  # a terminal or a script: text on stderr

        class TextBar(_ShowsOnTime, tqdm):  # type: ignore[misc]
            """tqdm's text bar, shown at its delay."""

        return TextBar
    from IPython.display import display  # here, not in a helper thread's first tick

    class WidgetOnlyBar(_ShowsOnTime, notebook.tqdm):  # type: ignore[name-defined]
        """tqdm's notebook bar, displayed as the widget alone (no ``text/plain`` for nbval to compare)."""

        displayed: bool
        delay: float | None
        container: Any

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, display=False, **kwargs)  # shown by display() below, never by tqdm's own

        def display(
            self,
            msg: str | None = None,
            pos: int | None = None,
            close: bool = False,
            bar_style: str | None = None,
            check_delay: bool = True,
        ) -> None:
            if check_delay and not self.displayed:
                # the widget's view alone (no text/plain copy for nbval to compare), as ipywidgets 8's
                # own mimebundle writes it: widget protocol 2.0 and the model's id
                view = {"version_major": 2, "version_minor": 0, "model_id": self.container.model_id}
                display({_WIDGET_VIEW: view}, raw=True)
                self.displayed = True
            super().display(msg, pos, close=close, bar_style=bar_style, check_delay=False)

    return WidgetOnlyBar


def wait_bar(
    iterable: Iterable[Any] | None = None,
    *,
    total: float | None = None,
    desc: str,
    unit: str = "step",
    progress: bool = True,
    delay: float | None = None,
    **options: Any,
) -> tqdm:
    """A tqdm bar that shows only once the wait passes ``delay`` seconds and is removed when closed.

    ``delay`` defaults to :func:`cell_delay`: :data:`DELAY_S` from the cell's start, at most.

    ``progress=False`` turns it off. ``options`` go to tqdm (e.g. ``bar_format``).
    """
    if delay is None:
        delay = cell_delay()
    bar = _bar_class()(
        iterable, total=total, desc=desc, unit=unit, delay=delay, leave=False, disable=not progress, **options
    )
    if progress:
        with _open_lock:
            OPEN_BARS.add(bar)
    if progress:  # delay 0 too: tqdm itself would first draw the bar when the first step ends
        bar.arm(max(delay, 0.0))
    return bar


@contextmanager
def busy(
    desc: str,
    *,
    estimate_s: float | None = None,
    progress: bool = True,
    delay: float | None = None,
) -> Iterator[tqdm]:
    """Run the ``with`` block under a bar that, past ``delay`` seconds, shows the time spent so far.

    ``estimate_s`` is the usual time (the bar fills towards it and says "usually about N s"); the
    bar never claims to be done before the block is. For a block that cannot count its steps.
    """
    if estimate_s is not None and estimate_s <= 0:
        estimate_s = None
    usual = f" (usually about {_seconds(estimate_s)})" if estimate_s else ""
    bar = wait_bar(
        total=estimate_s,
        desc=desc,
        unit="s",
        progress=progress,
        delay=delay,
        bar_format="{desc}: {elapsed}" + usual,
    )
    started = time.monotonic()
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(TICK_S):
            elapsed = time.monotonic() - started
            target = elapsed if estimate_s is None else min(elapsed, 0.99 * estimate_s)
            bar.update(target - bar.n)  # shows the bar once ``delay`` has passed (tqdm checks it)

    ticker = threading.Thread(target=tick, name="workbook-busy", daemon=True)
    if progress:
        ticker.start()
    try:
        yield bar
    finally:
        stop.set()
        if progress:
            ticker.join()
        if estimate_s is not None:
            bar.n = estimate_s  # complete: a notebook bar closed short of its total stays, in red
        bar.close()


def _seconds(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds >= 2 else f"{seconds:.1f} s"

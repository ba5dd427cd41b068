"""A bar for the learner's waits on the database: a cell whose commands keep it busy past a second.

A cell such as ``coll.find_one(...)`` or ``coll.create_index(...)`` is one driver call: nothing in
the workbench runs between its start and its reply to say it is still working. pymongo's command
monitoring sees every command a :func:`workbook.connect` client sends, in the thread that sends it;
:data:`ENGINE_WAITS` notes when each starts and ends, and a helper thread shows a bar once one
stretch of commands (one long command, or many with gaps under :data:`GAP_S`) has lasted
:data:`SHOW_AT_S`: the command running, how many so far, the time spent. The bar is gone when the
stretch or its cell ends, and never shows beside another workbench bar (a load's, a workload
run's) that already says so. Only inside a Jupyter kernel: scripts and tests print nothing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pymongo import monitoring

from workbook import waiting

GAP_S = 0.3
"""A pause between commands longer than this ends a stretch (the cell is doing other work, or is done)."""

POLL_S = 0.1
"""How often the helper thread looks at the stretch while commands run (it sleeps when none do)."""

SHOW_AT_S = 0.5
"""How far into a stretch its bar shows: before :data:`workbook.waiting.DELAY_S`, since the cell ran
a little before its first command and the widget takes a moment to reach the screen."""

_QUIET = {"hello", "isMaster", "ismaster", "endSessions", "ping", "saslStart", "saslContinue", "buildInfo"}


@dataclass
class _Stretch:
    """Commands the learner is waiting on: since when, in which cell, how many, the latest one."""

    started: float
    cell: object
    commands: int = 0
    latest: str = ""


def _cell() -> object:
    """Which notebook cell runs now (IPython's execution count): a new cell starts a new stretch."""
    from IPython import get_ipython

    shell = get_ipython()
    return getattr(shell, "execution_count", None)


def _after_each_cell(callback: Callable[..., None]) -> None:
    """Have IPython call ``callback`` after every cell (in a kernel; elsewhere, nothing)."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None:
        shell.events.register("post_run_cell", callback)


def _describe(event: Any) -> str:
    """'find on follows', from a command started event."""
    target = event.command.get(event.command_name) if hasattr(event.command, "get") else None
    return f"{event.command_name} on {target}" if isinstance(target, str) else str(event.command_name)


class EngineWaits(monitoring.CommandListener):
    """Times stretches of commands and shows a bar for any that passes ``delay`` (see the module)."""

    def __init__(
        self,
        *,
        delay: float = SHOW_AT_S,
        enabled: Callable[[], bool] = waiting.in_kernel,
        cell: Callable[[], object] = _cell,
        after_each_cell: Callable[[Callable[..., None]], None] = _after_each_cell,
    ) -> None:
        self.delay = delay
        self._enabled = enabled
        self._cell = cell
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._in_flight: dict[tuple[int, Any], float] = {}
        self._last_end = self._last_start = 0.0
        self._stretch: _Stretch | None = None
        self._thread: threading.Thread | None = None
        self._after_each_cell = after_each_cell
        self._bar_lock = threading.Lock()
        self._bar: Any = None
        self._shown: _Stretch | None = None

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        if event.command_name in _QUIET or not self._enabled():
            return
        now, cell = time.monotonic(), self._cell()
        with self._lock:
            stretch = self._stretch
            idle = not self._in_flight and now - self._last_end > GAP_S
            if stretch is None or idle or stretch.cell != cell:
                stretch = self._stretch = _Stretch(now, cell)
            stretch.commands += 1
            stretch.latest = _describe(event)
            self._in_flight[event.request_id, event.connection_id] = self._last_start = now
            first = self._thread is None
            if first:
                self._thread = threading.Thread(target=self._watch, name="workbook-engine-waits", daemon=True)
                self._thread.start()
        if first:
            self._after_each_cell(self.cell_done)
        self._wake.set()

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        self._ended(event)

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        self._ended(event)

    def _ended(self, event: Any) -> None:
        with self._lock:
            if self._in_flight.pop((event.request_id, event.connection_id), None) is not None:
                self._last_end = time.monotonic()

    def _watch(self) -> None:
        """The helper thread: shows, moves and closes the bar of the current stretch."""
        while True:
            self._wake.wait()
            with self._lock:
                due = self._stretch.started + self.delay - time.monotonic() if self._stretch else POLL_S
            time.sleep(POLL_S if self._bar is not None else min(POLL_S, max(due, 0.01)))
            now = time.monotonic()
            with self._lock:
                stretch = self._stretch
                if not self._in_flight and (stretch is None or now - self._last_end > GAP_S):
                    self._stretch = stretch = None
                    self._wake.clear()
                busy_now = bool(self._in_flight) or now - self._last_start <= POLL_S  # not a stretch's trailing gap
                latest, commands = (stretch.latest, stretch.commands) if stretch else ("", 0)
            with self._bar_lock:
                another = waiting.another_bar_open(than=self._bar)  # a load's, a run's: enough
                if self._bar is not None and (stretch is not self._shown or another):
                    self._close_bar()
                if stretch is None or now - stretch.started < self.delay or (self._bar is None and not busy_now):
                    continue
                if another:
                    continue
                if self._bar is None:
                    self._bar = waiting.wait_bar(
                        desc="waiting for the database", unit="s", delay=0, bar_format="{desc}: {elapsed}{postfix}"
                    )
                    self._shown = stretch
                plural = "s" if commands != 1 else ""
                self._bar.set_postfix_str(f"{commands:,} command{plural}, now {latest}", refresh=False)
                self._bar.update(now - stretch.started - self._bar.n)

    def cell_done(self, *_: object) -> None:
        """After each cell (IPython's ``post_run_cell``): its stretch is over and its bar gone, before the next."""
        with self._lock:
            self._stretch = None
        with self._bar_lock:
            self._close_bar()

    def _close_bar(self) -> None:
        if self._bar is not None:
            self._bar.close()
        self._bar = self._shown = None


ENGINE_WAITS = EngineWaits()
"""Registered on every client :func:`workbook.connect` makes, next to :data:`workbook.monitor.COMMANDS`."""

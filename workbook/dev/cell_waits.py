"""How long a learner waits on each notebook cell before it shows anything (a maintainer's tool).

A cell that runs for seconds is fine when it says so: a progress bar, a "measuring..." line with an
estimate, a first result. What the course must never do is sit silent for more than a second. This
runs a notebook in a fresh kernel (nbclient, as nbval does) and times, for each code cell, the
stretch from the cell's start to the first thing the learner sees: printed text, a display (a
table, a chart, a progress widget) or a widget update. A cell that finishes without any output
waits its whole run in silence.

``python -m workbook bench`` reports the longest such wait of the course; ``silent_waits`` gives the
cells one by one.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest.mock import patch

VISIBLE = frozenset({"stream", "display_data", "update_display_data", "execute_result", "error", "comm_msg"})
"""Kernel messages a learner sees in the notebook (``comm_msg``: a widget such as a progress bar moving,
counted only for a widget on the screen: see :class:`_Screen`)."""

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

SILENT_LIMIT_S = 1.0
"""The longest a cell may run before showing anything (issue 25: nothing silent over a second)."""

SHOW_LATENCY_S = 0.2
"""How late a bar set to appear at :data:`SILENT_LIMIT_S` may reach the screen and still count as in
time (its next tick, the kernel's message): a ``delay=1.0`` bar shows at 1.0-1.1 s."""


class _Screen:
    """Which widgets are on the screen: displayed ones and the widgets inside them.

    A widget made but not displayed (a progress bar waiting out its ``delay``) still sends
    ``comm_msg`` updates; the learner sees none of them, so they do not end a silent wait.
    """

    def __init__(self) -> None:
        self.displayed: set[str] = set()
        self.parent: dict[str, str] = {}

    def sees(self, msg: dict[str, Any]) -> bool:
        """Whether the learner sees this kernel message (and remember what it says about widgets)."""
        kind, content = msg.get("msg_type"), msg.get("content") or {}
        if kind in ("comm_open", "comm_msg"):
            state = (content.get("data") or {}).get("state") or {}
            children = state.get("children")
            for child in children if isinstance(children, list) else []:
                if isinstance(child, str):
                    self.parent[child.removeprefix("IPY_MODEL_")] = str(content.get("comm_id"))
        view = (content.get("data") or {}).get(WIDGET_VIEW) if kind != "comm_msg" else None
        if isinstance(view, dict) and "model_id" in view:
            self.displayed.add(str(view["model_id"]))
        if kind == "comm_msg":
            return self.on_screen(str(content.get("comm_id")))
        return kind in VISIBLE

    def on_screen(self, model_id: str) -> bool:
        """Whether the widget ``model_id`` is displayed, or inside one that is."""
        seen: set[str] = set()
        while model_id not in seen:
            if model_id in self.displayed:
                return True
            seen.add(model_id)
            if model_id not in self.parent:
                return False
            model_id = self.parent[model_id]
        return False


@dataclass(frozen=True)
class CellWait:
    """One code cell: where it is, how long it ran, and how long it showed nothing first."""

    notebook: str
    index: int
    source: str
    seconds: float
    silent_seconds: float

    @property
    def too_silent(self) -> bool:
        """Whether the learner saw nothing for over :data:`SILENT_LIMIT_S` (plus :data:`SHOW_LATENCY_S`)."""
        return self.silent_seconds > SILENT_LIMIT_S + SHOW_LATENCY_S


def silent_waits(notebook: Path | str, *, timeout: int = 600, env: dict[str, str] | None = None) -> list[CellWait]:
    """Run ``notebook`` top to bottom in a fresh kernel and time each code cell's silent start.

    The notebook file is not changed. ``env`` is the kernel's environment (e.g. ``WORKBOOK_SCALE``).
    """
    import nbformat
    from nbclient import NotebookClient

    from workbook.dev.kernel_client import nbclient_config

    path = Path(notebook)
    document = nbformat.read(path, as_version=4)
    waits: list[CellWait] = []
    screen = _Screen()

    class _Timed(NotebookClient):
        started: float = 0.0
        first_seen: float | None = None

        def process_message(self, msg: dict[str, Any], cell: Any, cell_index: int) -> Any:
            if screen.sees(msg) and self.first_seen is None:
                self.first_seen = time.perf_counter()
            return super().process_message(msg, cell, cell_index)

    def on_start(cell: Any, cell_index: int) -> None:
        client.started, client.first_seen = time.perf_counter(), None

    def on_done(cell: Any, cell_index: int, execute_reply: Any = None) -> None:
        if cell.cell_type != "code":
            return
        end = time.perf_counter()
        seen = client.first_seen if client.first_seen is not None else end
        source = "".join(cell.source).strip().splitlines()
        waits.append(
            CellWait(path.name, cell_index, source[0] if source else "", end - client.started, seen - client.started)
        )

    client = _Timed(
        document,
        config=nbclient_config(),  # waits that survive a lost zmq wakeup (workbook/dev/kernel_client.py)
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        on_cell_start=on_start,
        on_cell_executed=on_done,
        allow_errors=True,
    )
    with patch.dict(os.environ, env or {}):  # the kernel inherits this process's environment
        client.execute()
    return waits

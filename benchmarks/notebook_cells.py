"""Time every code cell of notebooks as they run, and name the cells over a second that show no progress.

Run: PYTHONPATH=$PWD WORKBOOK_SCALE=small .venv/bin/python benchmarks/notebook_cells.py notebooks/04_*.ipynb
(executes each notebook in a fresh kernel with nbclient, writes nothing back; prints numbers, asserts
nothing). A cell counts as showing progress when it displayed a progress bar (a tqdm widget or text bar)
or printed something before it finished; quote the load average with any time, as the bench does.
"""

from __future__ import annotations

import json
import os
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

SILENT_AFTER_SECONDS = 1.0
"""Issue 25's goal: no cell runs longer than this without showing progress."""


def _seconds(execution: dict[str, str]) -> float:
    started = datetime.fromisoformat(execution["iopub.execute_input"].replace("Z", "+00:00"))
    ended = datetime.fromisoformat(execution["shell.execute_reply"].replace("Z", "+00:00"))
    return (ended - started).total_seconds()


def _shows_progress(outputs: list[Any]) -> bool:
    text = json.dumps(outputs)
    return "%|" in text or "widget-view" in text and ("it/s" in text or "s]" in text or "waits" in text)


def cell_times(path: Path) -> list[tuple[int, float, bool, str]]:
    """(cell index, seconds, showed progress, first line) for each code cell, in the order they ran."""
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook, timeout=600, record_timing=True, resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    rows = []
    for index, cell in enumerate(notebook.cells):
        execution = cell.get("metadata", {}).get("execution")
        if cell.cell_type != "code" or not execution:
            continue
        first = next((line for line in cell.source.splitlines() if not line.startswith("#")), "")
        rows.append((index, _seconds(execution), _shows_progress(cell.get("outputs", [])), first[:70]))
    return rows


def main(paths: list[str]) -> None:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"load average {load:.1f} at the start; a cell is silent if it shows no progress for {SILENT_AFTER_SECONDS:g} s"
    )
    for name in paths:
        started = time.perf_counter()
        rows = cell_times(Path(name))
        silent = [row for row in rows if row[1] > SILENT_AFTER_SECONDS and not row[2]]
        print(f"{name}: {time.perf_counter() - started:.1f} s, {len(silent)} silent cells over a second")
        for index, seconds, _, first in sorted(silent, key=lambda row: -row[1]):
            print(f"  cell {index:>3}  {seconds:6.1f} s  {first}")


if __name__ == "__main__":
    main(sys.argv[1:])

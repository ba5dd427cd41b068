"""List the code cells of executed notebooks that ran over a second without showing progress.

Reads the timings nbconvert stores in each cell's ``metadata.execution`` (so it times the run that
made the stored outputs, at the learner's scale). A cell counts as showing progress when one of its
outputs is a progress widget or a stderr stream (tqdm's text form).

Run: .venv/bin/python benchmarks/silent_cells.py notebooks/0*.ipynb   (prints numbers; asserts nothing)
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

SLOW_S = 1.0
"""Issue 25: nothing silent over a second."""


def _when(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def cell_times(path: Path) -> list[tuple[int, float, bool, str]]:
    """(cell index, seconds, showed progress, last source line) for every executed code cell."""
    rows = []
    for index, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        run = cell.get("metadata", {}).get("execution", {})
        if cell["cell_type"] != "code" or "iopub.execute_input" not in run:
            continue
        seconds = (_when(run["shell.execute_reply"]) - _when(run["iopub.execute_input"])).total_seconds()
        shown = any(
            output.get("name") == "stderr" or "application/vnd.jupyter.widget-view+json" in output.get("data", {})
            for output in cell["outputs"]
        )
        last = ("".join(cell["source"]).splitlines() or [""])[-1]
        rows.append((index, seconds, shown, last))
    return rows


def main(paths: list[str]) -> None:
    for name in paths:
        rows = cell_times(Path(name))
        silent = [row for row in rows if row[1] > SLOW_S and not row[2]]
        longest = max((row[1] for row in silent), default=0.0)
        print(
            f"{name}: {sum(row[1] for row in rows):6.1f} s in {len(rows)} cells; {len(silent)} silent over {SLOW_S:g} s"
        )
        for index, seconds, _, last in silent:
            print(f"    cell {index:>3}  {seconds:5.1f} s  {last[:80]}")
        if silent:
            print(f"    longest silent: {longest:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])

"""The silent-wait timer: a cell that sleeps before printing is silent that long, one that prints first is not."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from workbook.dev.cell_waits import SILENT_LIMIT_S, silent_waits


@pytest.fixture
def notebook(tmp_path: Path) -> Path:
    cells = [
        "import time",
        "time.sleep(1.3)\nprint('done')",  # silent for 1.3 s, then a result
        "print('working...', flush=True)\ntime.sleep(1.3)",  # says so first, then works
        "time.sleep(1.2)",  # silent the whole way
        "x = 1",
    ]
    document = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    path = tmp_path / "waits.ipynb"
    nbformat.write(document, path)
    return path


def test_silent_starts_are_timed_to_the_first_output(notebook: Path) -> None:
    waits = silent_waits(notebook, timeout=60)
    assert [w.index for w in waits] == [0, 1, 2, 3, 4]
    sleeps_then_prints, prints_then_sleeps, silent, quick = waits[1:]
    assert sleeps_then_prints.silent_seconds >= 1.3 and sleeps_then_prints.too_silent
    assert prints_then_sleeps.seconds >= 1.3 and prints_then_sleeps.silent_seconds < 1.0
    assert not prints_then_sleeps.too_silent
    assert silent.silent_seconds == pytest.approx(silent.seconds) and silent.silent_seconds >= 1.2
    assert not quick.too_silent and quick.silent_seconds < SILENT_LIMIT_S
    assert nbformat.read(notebook, as_version=4).cells[1].outputs == []  # the file is left as it was


def test_the_bench_names_the_longest_silent_cell(notebook: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from workbook.dev import bench

    monkeypatch.setattr(bench, "notebooks_dir", lambda: notebook.parent)
    longest, count = bench.bench_silent_waits()
    assert longest.value >= 1.3 and longest.ok is False and "waits.ipynb cell 1" in longest.note
    assert count.value == 2 and count.ok is False  # cells 1 and 3; cell 2 printed first


def test_a_widget_counts_only_once_it_is_on_the_screen(tmp_path: Path) -> None:
    cells = [
        "import time\nimport ipywidgets as w\nshown = w.HBox([w.IntProgress()])",
        "hidden = w.IntProgress()\nfor i in range(6):\n    hidden.value = i\n    time.sleep(0.25)",  # never displayed
        "shown",  # displayed here
        "time.sleep(0.3)\nfor i in range(6):\n    shown.children[0].value = i\n    time.sleep(0.25)",  # moves on screen
    ]
    document = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    path = tmp_path / "widgets.ipynb"
    nbformat.write(document, path)
    hidden, _, moving = silent_waits(path, timeout=60)[1:]
    assert hidden.silent_seconds >= 1.5 and hidden.too_silent  # its updates reached no screen
    assert moving.seconds >= 1.8 and 0.3 <= moving.silent_seconds < SILENT_LIMIT_S  # a child of a shown widget

"""A bar for a cell's stretch of database commands: shown past its delay, not before, never between cells.

Events are made by hand where a slow command is needed (the engine has no sleep), and the real
offline engine where many quick commands make one long stretch.
"""

from __future__ import annotations

import io
import time
from pathlib import Path
from types import SimpleNamespace

import nbformat

from workbook import engine_waits, waiting
from workbook.dev.cell_waits import silent_waits


def event(request_id: int, name: str = "find", target: str = "follows") -> SimpleNamespace:
    return SimpleNamespace(request_id=request_id, connection_id=("127.0.0.1", 1), command_name=name,
                           command={name: target})  # fmt: skip


def test_a_long_command_shows_a_bar_naming_it(shown: io.StringIO) -> None:
    waits = engine_waits.EngineWaits(delay=0.3, enabled=lambda: True, cell=lambda: 1)
    waits.started(event(1))
    time.sleep(0.8)
    waits.succeeded(event(1))
    time.sleep(engine_waits.GAP_S + 3 * engine_waits.POLL_S)
    assert "waiting for the database: 00:00, 1 command, now find on follows" in shown.getvalue()


def test_a_quick_command_and_a_new_cell_show_nothing(shown: io.StringIO) -> None:
    cell = [1]
    waits = engine_waits.EngineWaits(delay=0.5, enabled=lambda: True, cell=lambda: cell[0])
    waits.started(event(1))
    time.sleep(0.2)
    waits.succeeded(event(1))
    cell[0] = 2  # the next cell: its commands start a stretch of their own
    waits.started(event(2))
    time.sleep(0.25)  # 0.45 s since the first command, 0.25 s into this cell's
    waits.succeeded(event(2))  # and its trailing pause is no command: no bar at 0.5 s either
    time.sleep(engine_waits.GAP_S + 3 * engine_waits.POLL_S)
    assert shown.getvalue() == ""


def test_outside_a_kernel_nothing_is_watched(shown: io.StringIO) -> None:
    waits = engine_waits.EngineWaits(delay=0.1)  # enabled: only in a Jupyter kernel, which pytest is not
    waits.started(event(1))
    time.sleep(0.4)
    waits.succeeded(event(1))
    assert shown.getvalue() == "" and waits._thread is None


def test_in_a_notebook_a_stretch_of_commands_shows_a_bar_and_saves_no_text(tmp_path: Path) -> None:
    from nbclient import NotebookClient

    cells = [
        "import time, workbook\ndb = workbook.connect(database='engine_waits_test', quiet=True)\n"
        "db.c.insert_one({'_id': 1}); print('ready')",
        "for i in range(30):\n    db.c.find_one({'_id': 1}); time.sleep(0.05)\nprint('done')",  # one stretch, 1.5 s+
        "for i in range(3):\n    db.c.find_one({'_id': 1}); time.sleep(0.05)\nprint('done')",  # quick
        "for i in range(4):\n    db.c.find_one({'_id': 1}); time.sleep(0.45)\nprint('done')",  # the gaps are the wait
    ]
    path = tmp_path / "engine.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in cells]), path)
    stretch, quick, gaps = silent_waits(path, timeout=120)[1:]
    assert stretch.seconds >= 1.5 and not stretch.too_silent
    assert quick.silent_seconds >= 0.15 and gaps.silent_seconds >= 1.5  # nothing shown for either

    document = nbformat.read(path, as_version=4)
    NotebookClient(document, timeout=120, kernel_name="python3").execute()
    for cell in document.cells[1:]:
        assert [o.get("text") for o in cell.outputs if o.output_type == "stream"] == ["done\n"]
        assert all(set(o.data) == {waiting._WIDGET_VIEW} for o in cell.outputs if o.output_type == "display_data")
    assert [len(cell.outputs) for cell in document.cells[1:]] == [2, 1, 1]  # a bar, then "done", in the first


def test_no_engine_bar_beside_another_bar_that_says_so(shown: io.StringIO) -> None:
    waits = engine_waits.EngineWaits(delay=0.2, enabled=lambda: True, cell=lambda: 1)
    with waiting.wait_bar(total=1, desc="load", delay=30):  # a load's bar, open (and not yet shown)
        waits.started(event(1))
        time.sleep(0.6)
        waits.succeeded(event(1))
    time.sleep(engine_waits.GAP_S + 3 * engine_waits.POLL_S)
    assert shown.getvalue() == ""

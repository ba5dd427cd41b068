"""Waits the learner sees: a bar appears once a wait passes its delay, never before, and leaves no text.

The slow calls are made slow on purpose (a sleep, a slow fake), and the delays shortened, so each
test is about what shows, not about this machine's speed.
"""

from __future__ import annotations

import io
import time
from pathlib import Path

import nbformat
import pytest

from workbook import waiting
from workbook.dev.cell_waits import silent_waits


def text_bar_output(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """Send the (terminal) bars to a buffer instead of stderr."""
    buffer = io.StringIO()
    real = waiting.wait_bar

    def to_buffer(*args, **kwargs):
        return real(*args, file=buffer, **kwargs)

    monkeypatch.setattr(waiting, "wait_bar", to_buffer)
    return buffer


def test_busy_shows_the_time_spent_once_a_wait_passes_its_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    shown = text_bar_output(monkeypatch)
    with waiting.busy("slow thing", estimate_s=5, delay=0.3):
        time.sleep(0.9)
    assert "slow thing: 00:00 (usually about 5 s)" in shown.getvalue()


def test_busy_stays_silent_below_its_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    shown = text_bar_output(monkeypatch)
    with waiting.busy("quick thing", estimate_s=5, delay=1.0):
        time.sleep(0.2)
    assert shown.getvalue() == ""


def test_busy_without_progress_shows_nothing_and_runs_the_block(monkeypatch: pytest.MonkeyPatch) -> None:
    shown = text_bar_output(monkeypatch)
    with waiting.busy("slow thing", delay=0.1, progress=False) as bar:
        time.sleep(0.4)
        ran = True
    assert ran and bar.disable and shown.getvalue() == ""


def test_busy_never_claims_done_before_the_block_is(monkeypatch: pytest.MonkeyPatch) -> None:
    text_bar_output(monkeypatch)
    with waiting.busy("over its estimate", estimate_s=0.2, delay=0.0) as bar:
        time.sleep(0.7)
        assert 0 < bar.n < 0.2  # past the estimate, the bar waits just short of full
    assert bar.n == 0.2  # done: full, then closed


def test_a_failing_block_still_closes_its_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    text_bar_output(monkeypatch)
    with pytest.raises(ZeroDivisionError), waiting.busy("fails", delay=0.0) as bar:
        time.sleep(0.3)
        _ = 1 / 0
    time.sleep(2 * waiting.TICK_S)
    assert bar.disable  # closed: no ticker left moving it


def test_a_bar_over_coarse_steps_shows_at_its_delay_not_at_the_next_step() -> None:
    shown = io.StringIO()
    bar = waiting.wait_bar(total=2, desc="coarse", delay=0.3, file=shown)
    time.sleep(0.8)  # no step has ended yet
    assert "coarse:   0%" in shown.getvalue()
    bar.update(2)
    bar.close()


def test_a_bar_closed_before_its_delay_never_shows() -> None:
    shown = io.StringIO()
    with waiting.wait_bar(total=2, desc="quick", delay=0.3, file=shown) as bar:
        bar.update(2)
    time.sleep(0.6)  # past the delay: the timer was cancelled
    assert shown.getvalue() == ""


def test_a_bar_waits_out_what_is_left_of_its_cells_first_second(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(waiting, "in_kernel", lambda: True)
    monkeypatch.setattr(waiting, "_watch_cells", lambda: None)
    now = time.monotonic()
    monkeypatch.setattr(waiting, "_cell_started", [now - 0.4])
    assert waiting.DELAY_S - 0.45 <= waiting.cell_delay() <= waiting.DELAY_S - 0.4  # 0.4 s of the cell gone
    monkeypatch.setattr(waiting, "_cell_started", [now - 30])
    assert waiting.cell_delay() == waiting.MIN_DELAY_S  # late in a long cell: never a flash
    monkeypatch.setattr(waiting, "_cell_started", [0.0])
    assert waiting.cell_delay() == waiting.DELAY_S  # the first cell: its start unknown
    monkeypatch.setattr(waiting, "in_kernel", lambda: False)
    monkeypatch.setattr(waiting, "_cell_started", [now - 0.6])
    assert waiting.cell_delay() == waiting.DELAY_S  # a script: no cells


def test_the_first_cell_with_a_bar_counts_from_its_request(monkeypatch: pytest.MonkeyPatch) -> None:
    from datetime import UTC, datetime, timedelta
    from types import SimpleNamespace

    import IPython

    asked = SimpleNamespace(parent_header={"header": {"date": datetime.now(UTC) - timedelta(seconds=0.5)}})
    monkeypatch.setattr(IPython, "get_ipython", lambda: asked)
    assert waiting._requested() == pytest.approx(time.monotonic() - 0.5, abs=0.05)
    asked.parent_header = {"header": {"date": "not a date"}}
    assert waiting._requested() == 0.0  # unknown: the bar keeps its full delay
    monkeypatch.setattr(IPython, "get_ipython", lambda: None)
    assert waiting._requested() == 0.0


@pytest.fixture
def notebook(tmp_path: Path) -> Path:
    """Cells a learner might run, timed and saved as a kernel runs them."""
    cells = [
        "import time\nfrom workbook import waiting",
        "with waiting.busy('slow', estimate_s=3):\n    time.sleep(1.6)\nprint('done')",
        "with waiting.busy('quick', estimate_s=3):\n    time.sleep(0.2)\nprint('done')",
        "for _ in waiting.wait_bar(range(2), desc='steps'):\n    time.sleep(0.9)\nprint('done')",  # no step ends at 1 s
        "time.sleep(0.7)\nwith waiting.busy('late'):\n    time.sleep(1.2)\nprint('done')",  # a wait 0.7 s into its cell
        "for _ in waiting.wait_bar(range(2), desc='at once', delay=0):\n    time.sleep(1.3)\nprint('done')",
    ]
    document = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    path = tmp_path / "waits.ipynb"
    nbformat.write(document, path)
    return path


def test_in_a_notebook_bars_show_within_a_second_and_save_no_text(notebook: Path) -> None:
    from nbclient import NotebookClient

    waits = silent_waits(notebook, timeout=120)
    slow, quick, steps, late, at_once = waits[1:]
    assert slow.seconds >= 1.6 and not slow.too_silent  # the bar showed at about 1 s, not 1.6
    assert steps.seconds >= 1.8 and not steps.too_silent
    assert quick.silent_seconds >= 0.2  # nothing showed before its "done"
    assert late.seconds >= 1.9 and not late.too_silent  # shown a second into the cell, not into the wait
    assert at_once.seconds >= 2.6 and at_once.silent_seconds < 0.5  # delay=0: at once, not when a step ends

    document = nbformat.read(notebook, as_version=4)
    NotebookClient(document, timeout=120, kernel_name="python3").execute()
    outputs = [cell.outputs for cell in document.cells[1:]]
    for cell in outputs:  # what nbval compares: the printed "done", nothing of the bars
        assert [o.get("text") for o in cell if o.output_type == "stream"] == ["done\n"]
        assert all(set(o.data) == {waiting._WIDGET_VIEW} for o in cell if o.output_type == "display_data")
    shown = [o for cell in outputs for o in cell if o.output_type == "display_data"]
    assert len(shown) == 4  # the slow, steps, late and at-once cells' bars; the quick cell's never showed


def test_the_bar_view_is_what_ipywidgets_own_mimebundle_shows() -> None:
    """waiting.py writes the widget-view bundle itself (public model_id): it must stay ipywidgets' own."""
    import ipywidgets

    box = ipywidgets.HBox()
    own = box._repr_mimebundle_()["application/vnd.jupyter.widget-view+json"]
    assert own == {"version_major": 2, "version_minor": 0, "model_id": box.model_id}


def test_a_load_without_progress_generates_without_a_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    """``load(name, shape, progress=False)`` passes it on to the generation it starts (no bar there either)."""
    import workbook

    asked: list[tuple[str, bool]] = []
    real = waiting.busy

    def recording(description: str, *args, progress: bool = True, **kwargs):  # type: ignore[no-untyped-def]
        asked.append((description, progress))
        return real(description, *args, progress=progress, **kwargs)

    monkeypatch.setattr(waiting, "busy", recording)
    monkeypatch.setenv("WORKBOOK_SNAPSHOTS", "0")
    workbook.load("followers", "embedded", scale="tiny", progress=False)
    generations = [progress for description, progress in asked if description.startswith("generate")]
    assert generations == [False], asked


@pytest.mark.parametrize("when", ["before the read", "during the read"])
def test_a_bar_closed_by_its_finalizer_while_the_open_bars_are_read_does_not_deadlock(monkeypatch, when):
    """The collector may run a dropped bar's ``tqdm.__del__`` (which closes it) on the thread that is reading the
    open bars, inside the lock: a plain lock deadlocked the engine-waits thread, and the kernel, on itself. During
    the read, the set changes size under it: it is read again."""
    import threading
    import weakref

    from workbook import waiting

    monkeypatch.setattr(waiting, "_open_lock", type(waiting._open_lock)())  # a deadlock here holds only this lock
    closing = waiting.wait_bar(total=1, desc="dropped", progress=False)
    staying = waiting.wait_bar(total=1, desc="open", progress=False)
    finalized: list[bool] = []

    class Collecting(weakref.WeakSet):
        """Reading it runs a finalizer, as a collection at an allocation there would."""

        def __iter__(self):
            items = super().__iter__()
            if when == "before the read" and not finalized:
                finalized.append(True)
                closing.close()  # what tqdm.__del__ does: same thread, lock held
            for position, item in enumerate(items):
                yield item
                if when == "during the read" and position == 0 and not finalized:
                    finalized.append(True)
                    closing.close()

    monkeypatch.setattr(waiting, "OPEN_BARS", Collecting([closing, staying]))
    answers: list[bool] = []
    reader = threading.Thread(target=lambda: answers.append(waiting.another_bar_open(than=closing)), daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert not reader.is_alive(), "another_bar_open deadlocked on a bar closed by its finalizer"
    assert finalized and answers == [True] and closing not in waiting.OPEN_BARS and staying in waiting.OPEN_BARS
    staying.close()

"""The benchmark's mechanics (figures, goals, table, JSON, CLI); its numbers are printed, never asserted."""

from __future__ import annotations

import itertools
import json
from typing import Any

from workbook.__main__ import main as cli
from workbook.dev import bench


def test_a_figure_holds_its_goal_or_says_it_missed():
    assert bench.Figure("g", "load", 2.0, "s", at_most=3.0).ok is True
    assert bench.Figure("g", "load", 4.0, "s", at_most=3.0).ok is False
    assert bench.Figure("g", "ratio", 99.0, "x", at_least=100).ok is False
    assert bench.Figure("g", "info", 1.0, "s").ok is None
    # 30% margin: "<= 3 s" holds at 2.1 s at most, ">= 100 x" at 143 x at least
    assert bench.Figure("g", "load", 2.1, "s", at_most=3.0).ok is True
    assert bench.Figure("g", "load", 2.5, "s", at_most=3.0).ok is False
    assert bench.Figure("g", "ratio", 120.0, "x", at_least=100).ok is False
    assert bench.Figure("g", "ratio", 143.0, "x", at_least=100).ok is True
    assert bench.Figure("g", "load", 2.0, "s", at_most=3.0).goal == "<= 3 s"
    assert bench.Figure("g", "ratio", 120.0, "x", at_least=100).goal == ">= 100 x"


def test_the_table_names_the_machine_and_every_goal():
    run = bench.BenchRun("quick", bench.machine())
    run.figures = [
        bench.Figure("load at small", "store/hybrid, again in this process", 0.01, "s", at_most=1.0),
        bench.Figure("engine", "collection scan / indexed point query", 42.0, "x", at_least=100),
    ]
    table = run.table()
    assert f"{run.machine['cores']} cores" in table and "Python " in table and "mongoeco" in table
    assert "<= 1 s" in table and ">= 100 x" in table and "MISSED" in table
    assert "1 goal(s) missed" in table
    data = run.to_json()
    assert data["figures"][1]["ok"] is False and data["figures"][0]["goal"] == "<= 1 s"
    assert set(data["machine"]) >= {"cores", "python", "engine", "when", "calibration_s"}
    assert data["machine"]["calibration_s"] > 0 and "calibration " in table and "30% margin" in table


def test_the_cli_prints_the_table_and_writes_json(tmp_path, monkeypatch, capsys):
    def fake_measure(full):
        run = bench.BenchRun("full" if full else "quick", bench.machine())
        run.figures = [bench.Figure("explorer", "toggle", 12.0, "ms", at_most=200)]
        return run

    monkeypatch.setattr(bench, "measure", fake_measure)
    target = tmp_path / "last.json"
    assert cli(["bench", "--json", str(target)]) == 0
    printed = capsys.readouterr().out
    assert "toggle" in printed and "every goal holds" in printed and str(target) in printed
    assert json.loads(target.read_text())["figures"][0]["value"] == 12.0


def test_a_slow_side_is_stopped_and_projected():
    measured = bench.bench_insert_ids(count=100, budget=0.0)  # no time at all: one batch each, then projected
    ints = next(f for f in measured if "integer _ids" in f.name)
    assert ints.note.startswith("stopped after 10 documents") and ints.value > 0


def test_the_run_figure_uses_the_workload_notebooks_counts(tmp_path, monkeypatch):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    cell = {"cell_type": "code", "source": ["runs = workbook.run_workload(shapes, repeat=3, warmup=0, explain_runs=2)"]}
    cells = [{"cell_type": "markdown", "source": []}, cell]
    (folder / bench.WORKLOAD_NOTEBOOK).write_text(json.dumps({"cells": cells}))
    monkeypatch.setattr(bench, "notebooks_dir", lambda: folder)
    assert bench.notebook_counts() == {"repeat": 3, "warmup": 0, "explain_runs": 2}
    (folder / bench.WORKLOAD_NOTEBOOK).unlink()
    assert bench.notebook_counts() == {
        "repeat": bench.NOTEBOOK_REPEAT, "warmup": bench.NOTEBOOK_WARMUP, "explain_runs": bench.NOTEBOOK_EXPLAIN_RUNS
    }  # fmt: skip


def test_every_printed_figure_carries_the_load_average_and_its_steps_calibration():
    run = bench.BenchRun("quick", bench.machine())
    run.figures = [bench.Figure("engine", "scan", 3.0, "x", at_least=100, load_average=7.5, calibration_s=0.241)]
    assert "load  7.5 cal 0.241" in run.table() and "load average at the end" in run.table()
    assert "calibration at the end" in run.table()
    assert run.to_json()["figures"][0]["calibration_s"] == 0.241


def test_the_readme_table_is_rewritten_from_the_recorded_run(tmp_path):
    import pytest

    from workbook.errors import WorkbookError

    run = bench.BenchRun("full", bench.machine())
    run.figures = [
        bench.Figure("load at small", "parts/hybrid, first on this machine", 2.0, "s", at_most=3.0, load_average=1.0),
        bench.Figure(
            "notebooks (nbval, small)", "04_unbounded_arrays.ipynb", 31.0, "s", at_most=20.0, calibration_s=0.2
        ),
    ]
    recorded = tmp_path / "last.json"
    recorded.write_text(json.dumps(run.to_json()))
    readme = tmp_path / "README.md"
    readme.write_text(f"# Title\n\nbefore\n{bench.README_START}\nold table\n{bench.README_END}\nafter\n")
    bench.update_readme(str(recorded), str(readme))
    text = readme.read_text()
    assert "old table" not in text and text.startswith("# Title\n\nbefore\n") and text.endswith("after\n")
    assert "| load at small | parts/hybrid, first on this machine | 2 s | <= 3 s | yes | 1.0 |" in text
    assert "04_unbounded_arrays.ipynb | 31 s | <= 20 s | **no**" in text and text.count("| 0.2 |") == 1
    assert "| load | calibration |" in text
    assert "`full` mode" in text and f"{run.machine['cores']} cores" in text
    assert f"calibration {run.machine['calibration_s']:g} s" in text  # runs on two machines compare as ratios
    readme.write_text("# no markers\n")
    with pytest.raises(WorkbookError, match="markers"):
        bench.update_readme(str(recorded), str(readme))


def test_the_repository_readme_has_the_speed_table_markers():
    folder = bench.notebooks_dir()
    assert folder is not None
    text = (folder.parent / "README.md").read_text()
    assert text.index(bench.README_START) < text.index(bench.README_END)


def _checkout(tmp_path, monkeypatch):
    """A fake checkout: notebooks/ (how the bench finds one) and where the browser test writes its result."""
    (tmp_path / "notebooks").mkdir()
    monkeypatch.setattr(bench, "notebooks_dir", lambda: tmp_path / "notebooks")
    return tmp_path / bench.BROWSER_TOGGLE_RESULT


def test_the_browser_toggle_row_reports_the_browser_tests_measurement(tmp_path, monkeypatch):
    import time

    result = _checkout(tmp_path, monkeypatch)
    result.parent.mkdir(parents=True)
    clicks = [250.0, 180.0, 262.5, 240.0, 199.0, 300.0, 255.0, 270.0, 230.0]
    report = {"clicks_ms": clicks, "median_ms": 250.0, "slowest_ms": 300.0, "over_200_ms": 7}
    result.write_text(json.dumps({**report, "load_average": 1.6, "measured_at": time.time()}))
    ran = []
    monkeypatch.setattr(bench.subprocess, "run", lambda *args, **kwargs: ran.append(args))
    median, slowest = bench.bench_browser_toggle()
    assert ran == []  # a fresh measurement is read, not repeated
    assert (median.value, slowest.value, median.at_most) == (250.0, 300.0, 200)
    assert median.ok is False and "median of 9" in median.name and "7 of 9 over 200 ms" in median.note
    assert median.load_average == 1.6  # the load when the browser measured, not now


def test_the_browser_toggle_row_runs_the_browser_test_when_there_is_no_measurement(tmp_path, monkeypatch):
    result = _checkout(tmp_path, monkeypatch)
    ran = []

    def run(command, **kwargs):
        ran.append((command, kwargs["cwd"]))
        result.parent.mkdir(parents=True)
        result.write_text(json.dumps({"clicks_ms": [120.0] * 9, "median_ms": 120.0, "slowest_ms": 130.0}))

    monkeypatch.setattr(bench.subprocess, "run", run)
    median, slowest = bench.bench_browser_toggle()
    assert [(cmd[cmd.index("pytest") + 1], cwd) for cmd, cwd in ran] == [(bench.BROWSER_TOGGLE_TEST, tmp_path)]
    assert median.ok is True and slowest.value == 130.0

    monkeypatch.setattr(bench.subprocess, "run", lambda *args, **kwargs: result.unlink())  # skipped: no file
    assert bench.bench_browser_toggle(full=True) == []


def test_the_class_server_is_a_server_of_its_own_process_and_stops_after(tmp_path, monkeypatch):
    """The memory-per-learner row runs kernels against this stand-in for the workshop's MongoDB: it must
    answer a client with credentials, hold the data in another process, and be gone when the row is done."""
    import os

    from pymongo import MongoClient
    from pymongo.errors import PyMongoError

    monkeypatch.setenv("WORKBOOK_CACHE_DIR", str(tmp_path))
    os.chmod(tmp_path, 0o700)
    with bench._class_server() as uri:
        with MongoClient(uri, serverSelectionTimeoutMS=20_000) as client:
            assert client.admin.command("ping")["ok"] == 1.0
            assert client.admin.command("hello")["isWritablePrimary"]
            client.workbench_bench_probe.c.insert_one({"_id": 1})
            assert client.workbench_bench_probe.c.count_documents({}) == 1
        from workbook.engine_reads import is_offline

        assert not is_offline(MongoClient(uri).workbench_bench_probe)  # not this process's engine
    try:
        MongoClient(uri, serverSelectionTimeoutMS=1_000).admin.command("ping")
        answered = True
    except PyMongoError:
        answered = False
    assert not answered, "the class server outlived its row"


def test_memory_per_learner_counts_learners_from_the_heaviest_kernel_and_never_passes_a_failed_run(
    tmp_path, monkeypatch
):
    import contextlib

    monkeypatch.setattr(bench, "notebooks_dir", lambda: tmp_path)
    monkeypatch.setattr(bench, "_server_rss", lambda: 100 * 2**20)
    monkeypatch.setattr(bench, "_class_server", lambda: contextlib.nullcontext("mongodb://stand-in"))
    peaks = {("01_workload.ipynb", True): 250, ("02_embed_reference_hybrid.ipynb", True): 300}

    def kernel(path, uri=None):
        return peaks.get((path.name, uri is not None), 2_000) * 2**20

    monkeypatch.setattr(bench, "_kernel_rss_after", kernel)
    figures = {f.name: f for f in bench.bench_memory_per_learner()}
    learners = figures["learners a 32 GiB machine holds"]
    assert learners.value == (32 - 6) * 1024 // 400 and learners.ok  # 100 MiB server + the 300 MiB kernel
    assert figures["server + kernel peak, class server, 02_embed_reference_hybrid.ipynb"].value == 400
    peaks[("02_embed_reference_hybrid.ipynb", True)] = 0  # the notebook failed: nothing may pass
    figures = {f.name: f for f in bench.bench_memory_per_learner()}
    assert figures["learners a 32 GiB machine holds"].value == 0
    assert not figures["learners a 32 GiB machine holds"].ok
    assert figures["server + kernel peak, class server, 02_embed_reference_hybrid.ipynb"].ok is None


def test_the_engine_start_is_timed_to_serving_not_to_the_childs_exit(monkeypatch):
    # a child that serves at once and then takes 3 s to exit (as pymongo's monitor threads make it wait)
    slow_exit = "import atexit, time; atexit.register(time.sleep, 3); " + bench.ENGINE_START_CODE
    monkeypatch.setattr(bench, "ENGINE_START_CODE", slow_exit)
    (figure,) = bench.bench_engine_start()
    assert figure.name.endswith("(python start to serving)") and figure.at_most == 1.5
    assert 0 < figure.value < 3  # the exit's 3 s are not in it
    assert figure.note == "RFC 3987 grammar not imported"


def test_the_update_many_rows_time_real_updates_and_hold_linearity_to_two_x():
    import workbook

    db = workbook.connect(database="bench_update_rows", quiet=True)
    fills = []

    def fill(size: int) -> None:
        fills.append(size)
        db.client.drop_database(db.name)
        db.big.insert_many([{"_id": i} for i in range(size)])

    try:
        throughput, ratio = bench._update_many(db, fill, 300)
        assert fills == [30, 300]
        assert db.big.count_documents({"touched": True}) == 300  # the last fill, every document updated
        assert throughput.name == "update_many({}) of 300 over the wire" and throughput.unit == "doc/s"
        assert throughput.value > 0 and throughput.goal == ""
        assert ratio.name == "  its cost per document: of 300 / of 30" and ratio.value > 0 and ratio.goal == "<= 2 x"
    finally:
        db.client.drop_database(db.name)


def test_the_idle_server_is_read_once_its_memory_settles(monkeypatch: Any) -> None:
    """A server read at its first answer is still starting (103-136 MiB, then 83): the reading that counts is the
    first that agrees with the one before it, within 1 MiB; a reading that never settles gives the last at the limit."""
    slept: list[float] = []
    monkeypatch.setattr(bench.time, "sleep", slept.append)
    readings = iter(mib * 2**20 for mib in (120, 95, 83, 83.5, 60))
    assert bench._settled(lambda: next(readings)) == int(83.5 * 2**20) and slept == [0.5, 0.5, 0.5]
    climbing = iter(range(0, 100 * 2**20, 4 * 2**20))
    slept.clear()
    assert bench._settled(lambda: next(climbing), limit=2.0) == 16 * 2**20 and len(slept) == 4


def test_the_reads_after_writes_rows_time_a_write_and_a_read_at_both_sizes():
    figures = bench.bench_reads_after_writes(writes=3, sizes=(30, 300))
    names = [figure.name for figure in figures]
    assert len(figures) == 3 * 2 * 3  # three writes, two reads, three figures each
    assert "delete_one then a find by an indexed field: at 300 / at 30" in names
    assert "update_one then a find by _id, at 300 documents (CPU)" in names
    assert all(figure.value > 0 for figure in figures)
    ratios = [figure for figure in figures if figure.unit == "x"]
    assert len(ratios) == 6 and all(figure.goal == "<= 2 x" for figure in ratios)


def test_each_step_stamps_its_figures_with_the_calibration_measured_before_it(monkeypatch):
    speeds = itertools.chain([0.1, 0.2], itertools.repeat(0.3))
    monkeypatch.setattr(bench, "calibration", lambda repeat=3: next(speeds))
    machine = {"cores": 2, "load_average": [0.5], "python": "3", "engine": "e", "pymongo": "p", "scale": "small"}
    monkeypatch.setattr(bench, "machine", lambda: {**machine, "when": "now", "calibration_s": 0})
    first = [bench.Figure("g", "first", 1.0, "s")]
    second = [bench.Figure("g", "second", 1.0, "s"), bench.Figure("g", "own", 1.0, "s", calibration_s=9.0)]
    monkeypatch.setattr(bench, "bench_loads", lambda full: first)
    monkeypatch.setattr(bench, "bench_memory_per_shape", lambda: second)
    others = ["bench_sizes", "bench_explorer", "bench_browser_toggle", "bench_overhead", "bench_insert_ids"]
    others += ["bench_point_query", "bench_lookup", "bench_write_costs", "bench_reads_after_writes"]
    for name in [*others, "bench_write_throughput", "bench_engine_start"]:
        monkeypatch.setattr(bench, name, lambda *args: [])
    monkeypatch.setattr(bench, "bench_run", lambda: ([], None))
    run = bench.measure(full=False)
    assert [(f.name, f.calibration_s) for f in run.figures] == [("first", 0.1), ("second", 0.2), ("own", 9.0)]


def test_the_loads_beside_a_sibling_restore_each_later_shape_with_the_first_held(monkeypatch, tmp_path):
    """Each dataset's referenced and hybrid shapes are restored from their files while its embedded shape is
    held, and each such restore walks a held shape for its shared values."""
    from workbook import snapshot

    monkeypatch.setenv("WORKBOOK_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(bench, "SCALE", "tiny")
    monkeypatch.setattr(bench, "DATASETS", ("followers",))
    for shape in bench.SHAPES:  # the files a learner's machine has
        bench._loader("followers", shape)()
    snapshot.flush()
    walked: list[str] = []
    original = snapshot._sibling_values

    def counting(key: str) -> dict[Any, Any]:
        values = original(key)
        walked.append(f"{snapshot.family(key)}: {len(values) > 0}")
        return values

    monkeypatch.setattr(snapshot, "_sibling_values", counting)
    try:
        figures = bench._loads_beside_a_sibling()
    finally:
        snapshot.forget()
    assert [figure.name for figure in figures] == [
        "followers/referenced, again on this machine, embedded held",
        "followers/hybrid, again on this machine, embedded held",
    ]
    assert all(figure.goal == "<= 1 s" and figure.value > 0 for figure in figures)
    assert walked == ["followers-tiny-7: False", "followers-tiny-7: True", "followers-tiny-7: True"]

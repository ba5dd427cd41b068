"""Guard rails on scale: the offline default refuses ``large`` unless forced, and estimates ``medium`` first."""

from __future__ import annotations

import pytest

import workbook
from workbook import scales
from workbook.errors import ScaleRefusedError


def test_large_is_refused_on_the_offline_default_with_the_fix_and_before_any_work(monkeypatch):
    import workbook.datasets

    def never(*args, **kwargs):
        raise AssertionError("generated two million documents before refusing")

    monkeypatch.setattr(workbook.datasets, "generate", never)
    with pytest.raises(ScaleRefusedError) as refused:
        workbook.load("store", "hybrid", scale="large", progress=False)
    error = refused.value
    assert "2,000,000 documents" in error.message and "offline default" in error.message
    assert "MONGODB_URI" in error.fix and "scale='medium'" in error.fix and "force=True" in error.fix


@pytest.fixture
def empty_cache(tmp_path, monkeypatch):
    """No measured loads and no benchmark results: only the built-in figures."""
    monkeypatch.setenv("WORKBOOK_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr("workbook.scales.bench_results_path", lambda: None)
    return tmp_path


def test_medium_with_nothing_measured_says_its_estimate_is_a_guess(empty_cache, capsys):
    scales.check_offline_load("parts", "embedded", "medium")
    said = capsys.readouterr().out
    expected = scales.estimate_seconds("parts", "embedded", "medium")
    assert "488,000 documents" in said and f"about {scales._duration(expected)} the first time" in said
    assert "a guess: nothing measured on this machine yet" in said
    assert expected == pytest.approx(10 * scales.estimate_seconds("parts", "embedded", "small"))
    assert expected == pytest.approx(488_000 / scales.GUESS_DOCUMENTS_PER_SECOND)  # one rate, no per-shape table


def test_medium_is_estimated_from_this_machines_own_loads(empty_cache, capsys):
    scales.record_load("parts", "embedded", "small", 30.0)  # this machine, loaded: 30 s at small
    scales.check_offline_load("parts", "embedded", "medium")
    said = capsys.readouterr().out
    assert "about 5 min the first time (scaled from a load at small measured on this machine (30 s, x10" in said
    scales.record_load("parts", "embedded", "medium", 72.0)  # a medium load measured here wins
    scales.check_offline_load("parts", "embedded", "medium")
    said = capsys.readouterr().out
    assert "about 72 s the first time (measured on this machine" in said
    assert (empty_cache / scales.LOAD_TIMES_FILE).is_file()


def test_a_real_load_records_its_time_for_the_next_estimate(empty_cache, monkeypatch):
    monkeypatch.setenv("WORKBOOK_SNAPSHOTS", "0")
    db = workbook.connect(database="scales_rec", quiet=True)
    try:
        loaded = workbook.load("followers", "embedded", db, scale="tiny", progress=False)
        assert scales.measured_loads()["followers/embedded/tiny"] == pytest.approx(loaded.report.seconds, abs=1e-3)
    finally:
        db.client.drop_database(db.name)


def test_small_says_nothing_and_large_can_be_forced(capsys):
    scales.check_offline_load("store", "hybrid", "small")
    scales.check_offline_load("store", "hybrid", "large", force=True)
    assert "Loading store at large" in capsys.readouterr().out


def test_the_course_scale_refuses_large_offline(monkeypatch):
    monkeypatch.delenv("MONGODB_URI", raising=False)
    monkeypatch.setenv("WORKBOOK_SCALE", "large")
    with pytest.raises(ScaleRefusedError, match="WORKBOOK_SCALE=large"):
        workbook.course_scale()
    monkeypatch.setenv("WORKBOOK_FORCE_SCALE", "1")
    assert workbook.course_scale() == "large"

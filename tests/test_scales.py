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


def test_medium_prints_an_estimate_from_the_measured_small_load(capsys):
    scales.check_offline_load("parts", "embedded", "medium")
    said = capsys.readouterr().out
    expected = scales.estimate_seconds("parts", "embedded", "medium")
    assert "488,000 documents" in said and f"about {scales._duration(expected)} the first time" in said
    assert expected == pytest.approx(10 * scales.estimate_seconds("parts", "embedded", "small"))


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

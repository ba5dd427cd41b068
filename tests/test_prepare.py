"""``python -m workbook prepare``: the course's snapshot files made once, so the lessons restore them."""

from __future__ import annotations

from pathlib import Path

import pytest

import workbook
from workbook import prepare, snapshot
from workbook.shapes import SHAPE_NAMES


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("WORKBOOK_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("WORKBOOK_SNAPSHOTS", raising=False)
    monkeypatch.delenv("MONGODB_URI", raising=False)
    snapshot.forget()
    return tmp_path


def test_prepare_makes_every_course_shape_once_and_a_lesson_then_restores_it(cache: Path) -> None:
    said: list[str] = []
    built = prepare.prepare_course("tiny", progress=False, say=said.append)
    expected = [(dataset, shape) for dataset in prepare.COURSE_DATASETS for shape in SHAPE_NAMES]
    expected.append(("store", "applications"))  # notebook 01's two applications
    assert [(p.dataset, p.shape) for p in built] == expected
    assert prepare.missing("tiny") == []
    assert len(list(cache.glob("snapshot-*-tiny-7-*.bson"))) == len(expected)
    assert prepare.prepare_course("tiny", progress=False, say=said.append) == [], "nothing left to make"
    assert "ready" in said[-1]
    snapshot.forget()  # as a new kernel: only the files are left
    store = workbook.generate("store", scale="tiny", seed=7)  # as the notebooks generate it
    assert snapshot.find(store, "hybrid", scale="tiny", seed=7) is not None, "the lesson's load restores it"
    assert snapshot.find(store, "applications", scale="tiny", seed=7) is not None, "and notebook 01's applications"


def test_prepare_remakes_a_shape_whose_file_is_gone(cache: Path) -> None:
    prepare.prepare_course("tiny", progress=False, say=lambda _: None)
    (gone,) = cache.glob("snapshot-parts-tiny-7-referenced-*.bson")
    gone.unlink()
    assert prepare.missing("tiny") == [("parts", "referenced")]
    built = prepare.prepare_course("tiny", progress=False, say=lambda _: None)
    assert [(p.dataset, p.shape) for p in built] == [("parts", "referenced")]


def test_prepare_does_nothing_against_a_server_or_with_snapshots_off(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    said: list[str] = []
    assert prepare.prepare_course("tiny", uri="mongodb://localhost:1/", progress=False, say=said.append) == []
    assert "MONGODB_URI" in said[-1]
    monkeypatch.setenv("WORKBOOK_SNAPSHOTS", "0")
    assert prepare.prepare_course("tiny", progress=False, say=said.append) == []
    assert "WORKBOOK_SNAPSHOTS=0" in said[-1]
    assert not list(cache.iterdir())


def test_the_command_line_prepares_and_the_lab_command_prepares_before_opening(
    cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from workbook import launch
    from workbook.__main__ import main

    assert main(["prepare", "--scale", "tiny"]) == 0
    assert "done in" in capsys.readouterr().out
    calls: list[str] = []
    monkeypatch.setattr("workbook.check.main", lambda uri: calls.append("check") or 0)
    monkeypatch.setattr("workbook.prepare.prepare_course", lambda **kw: calls.append("prepare") or [])
    monkeypatch.setattr(launch.subprocess, "call", lambda arguments, cwd: calls.append(arguments[-1]) or 0)
    assert launch.run_course_command("lab") == 0
    assert calls == ["check", "prepare", launch.FIRST_NOTEBOOK]
    calls.clear()
    assert launch.run_course_command("test") == 0
    assert calls == ["check", "pytest"]


def test_a_bad_scale_is_refused_before_any_work_with_the_choices(cache: Path) -> None:
    from workbook.errors import ScaleRefusedError, UnknownChoiceError

    with pytest.raises(UnknownChoiceError, match="tiny"):
        prepare.prepare_course("huge", progress=False, say=lambda _: None)
    with pytest.raises(ScaleRefusedError, match="WORKBOOK_SCALE=medium"):
        prepare.prepare_course("large", progress=False, say=lambda _: None)
    assert not list(cache.iterdir()), "nothing was made"


def test_a_cache_folder_it_cannot_use_stops_it_with_the_reason_and_the_course_still_opens(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = cache / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # others could plant files: snapshots refuse it (CacheFolderError, with the fix)
    monkeypatch.setenv("WORKBOOK_CACHE_DIR", str(shared))
    said: list[str] = []
    assert prepare.prepare_course("tiny", progress=False, say=said.append) == []
    assert "stopped at store/embedded" in said[-1] and "chmod" in said[-1], said[-1]
    assert "The lessons will make what is missing." in said[-1]
    monkeypatch.setattr(snapshot, "_write_plain", lambda *args: None)  # a full disk: the writer gives up
    monkeypatch.setenv("WORKBOOK_CACHE_DIR", str(cache / "full"))
    assert prepare.prepare_course("tiny", progress=False, say=said.append) == []
    assert "could not be written" in said[-1]

"""The sample class: seeded progress files in a folder of their own, never the learner's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbook.quiz import class_view, sample_class
from workbook.quiz.progress import Progress, progress_path


@pytest.fixture
def progress_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("WORKBOOK_PROGRESS_DIR", str(tmp_path))
    return tmp_path


def test_the_sample_is_seeded_and_in_its_own_folder(progress_folder: Path) -> None:
    folder = sample_class.write_sample_class(4, seed=7)
    assert folder == progress_folder / sample_class.SAMPLE_FOLDER
    first = {p.name: p.read_bytes() for p in folder.glob("*.json")}
    assert sorted(first) == [f"sample-{n}.json" for n in (1, 2, 3, 4)]
    sample_class.write_sample_class(4, seed=7)
    assert {p.name: p.read_bytes() for p in folder.glob("*.json")} == first  # rewritten, not accumulated
    sample_class.write_sample_class(4, seed=8)
    assert {p.name: p.read_bytes() for p in folder.glob("*.json")} != first


def test_the_learners_own_progress_and_other_files_are_left_alone(progress_folder: Path) -> None:
    mine = Progress.load("ada")
    mine.record("nb00-1", True)
    before = progress_path("ada").read_bytes()
    folder = sample_class.sample_folder()
    folder.mkdir(parents=True)
    (folder / "instructor-notes.json").write_text("{}")
    rows = sample_class.sample_rows(3, seed=1)
    assert progress_path("ada").read_bytes() == before
    assert (folder / "instructor-notes.json").read_text() == "{}"
    assert set(rows["learner"]) == {"sample-1", "sample-2", "sample-3"}
    assert "ada" not in set(class_view.class_rows(folder)["learner"])


def test_the_sample_reads_like_a_class(progress_folder: Path) -> None:
    rows = sample_class.sample_rows(4, seed=7)
    where = class_view.where_learners_are(rows)
    assert list(where.index) == ["sample-1", "sample-2", "sample-3", "sample-4"]
    assert (where["solved"] > 0).all()
    missed = class_view.most_missed(rows)
    assert missed["wrong_attempts"].is_monotonic_decreasing
    document = json.loads((sample_class.sample_folder() / "sample-1.json").read_text())
    solved = [e for e in document["questions"].values() if e["solved"]]
    assert all(e["solved_at_attempt"] == e["attempts"] for e in solved)


def test_too_many_sample_learners_is_refused(progress_folder: Path) -> None:
    with pytest.raises(Exception, match="learners"):
        sample_class.write_sample_class(500)

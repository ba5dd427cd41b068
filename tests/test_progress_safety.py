"""Progress is never lost and never a dead button: concurrent writers, broken files, failing saves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from tests.quiz_fixture import build_fixture
from workbook.quiz.progress import Progress, ProgressFileError, ProgressFileWarning, progress_path
from workbook.quiz.widgets import QuestionWidget


@pytest.fixture(autouse=True)
def progress_dir(tmp_path, monkeypatch):
    folder = tmp_path / "progress"
    monkeypatch.setenv("WORKBOOK_PROGRESS_DIR", str(folder))
    monkeypatch.setenv("WORKBOOK_LEARNER", "ada")
    return folder


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    return build_fixture(tmp_path_factory.mktemp("bank"))


RECORDER = """
import sys
from workbook.quiz.progress import Progress
for n in range(int(sys.argv[1])):
    Progress.load().record(f"q-{n % 3}", n % 2 == 0)
"""


def test_two_processes_recording_for_one_learner_lose_nothing(progress_dir):
    attempts = 60
    started = time.monotonic()
    workers = [
        subprocess.Popen([sys.executable, "-c", RECORDER, str(attempts)], env=os.environ, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    for worker in workers:
        assert worker.wait(timeout=120) == 0, worker.stderr.read() if worker.stderr else ""
    elapsed = time.monotonic() - started
    questions = Progress.load().questions
    assert sum(entry["attempts"] for entry in questions.values()) == 2 * attempts
    assert sum(entry["correct"] for entry in questions.values()) == attempts
    print(f"2 processes x {attempts} attempts recorded in {elapsed:.2f} s, none lost")


def test_a_stale_object_saving_does_not_drop_newer_attempts(progress_dir):
    stale = Progress.load()
    Progress.load().record("q-1", True)
    Progress.load().record("q-1", False)
    stale.questions["q-2"] = {"attempts": 1, "correct": 0, "solved": False}
    stale.save()
    saved = Progress.load().questions
    assert saved["q-1"]["attempts"] == 2 and saved["q-2"]["attempts"] == 1


BROKEN = {
    "not utf-8": b'{"format": 1, "questions": {"q\xff": {}}}',
    "not json": b"{not json",
    "attempts not a number": json.dumps(
        {"format": 1, "questions": {"q-1": {"attempts": "x", "correct": 0, "solved": False}}}
    ).encode(),
    "questions a list": json.dumps({"format": 1, "questions": []}).encode(),
    "solved not a bool": json.dumps(
        {"format": 1, "questions": {"q-1": {"attempts": 1, "correct": 0, "solved": "no"}}}
    ).encode(),
    "a newer format": json.dumps({"format": 99, "questions": {}}).encode(),
    "not an object": b"[1, 2]",
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_an_unreadable_file_is_moved_aside_with_a_message_and_a_new_one_started(case, progress_dir):
    progress_dir.mkdir()
    path = progress_path()
    path.write_bytes(BROKEN[case])
    with pytest.warns(ProgressFileWarning, match="moved aside") as caught:
        progress = Progress.load()
    assert progress.questions == {}
    aside = [p for p in progress_dir.iterdir() if ".unreadable-" in p.name]
    assert len(aside) == 1 and aside[0].read_bytes() == BROKEN[case]  # kept byte for byte
    assert str(aside[0]) in str(caught[0].message)
    progress.record("q-1", True)
    assert Progress.load().questions["q-1"]["attempts"] == 1


def test_the_class_report_reader_refuses_a_newer_format_without_touching_it(progress_dir):
    from workbook.quiz.progress import read_progress_file

    progress_dir.mkdir()
    path = progress_path()
    path.write_bytes(BROKEN["a newer format"])
    with pytest.raises(ProgressFileError, match="format 99"):
        read_progress_file(path)
    assert path.read_bytes() == BROKEN["a newer format"]


def test_leftover_temporary_files_are_cleaned_up(progress_dir):
    progress_dir.mkdir()
    leftover = progress_dir / ".ada.json.abc123.tmp"
    leftover.write_text("{half")
    other = progress_dir / ".bob.json.abc123.tmp"  # another learner's: not ours to touch
    other.write_text("{half")
    Progress.load().record("q-1", True)
    assert not leftover.exists() and other.exists()


def test_check_button_shows_the_grade_when_saving_fails(bank):
    def failing(_result):
        raise TypeError("read-only folder")  # any error, not only OSError and WorkbookError

    w = QuestionWidget(bank["fx-choice"], record=failing)
    w.answer.value = "b"
    w.check_button.click()
    assert "✓ Correct" in w.feedback.value and "Progress not saved" in w.feedback.value
    assert "read-only folder" in w.feedback.value


def test_check_button_with_a_broken_progress_file_grades_and_says_where_it_went(bank, progress_dir):
    from workbook.quiz import _record

    progress_dir.mkdir()
    progress_path().write_bytes(BROKEN["not utf-8"])
    w = QuestionWidget(bank["fx-choice"], record=_record(None))
    w.answer.value = "b"
    w.check_button.click()
    assert "✓ Correct" in w.feedback.value and "moved aside" in w.feedback.value
    assert Progress.load().questions["fx-choice"]["attempts"] == 1


def test_check_button_never_silently_does_nothing(bank, monkeypatch):
    import workbook.quiz.widgets as widgets_module

    def crashing(*_args):
        raise ArithmeticError("a grader bug")

    monkeypatch.setattr(widgets_module, "grade_answer", crashing)
    w = QuestionWidget(bank["fx-choice"], record=lambda _r: None)
    w.answer.value = "b"
    w.check_button.click()
    assert "Could not grade" in w.feedback.value and "a grader bug" in w.feedback.value


def test_quiz_check_returns_the_grade_when_saving_fails(monkeypatch):
    import workbook.quiz
    import workbook.quiz.progress as progress_module

    def failing(*_args, **_kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(progress_module, "write_atomically", failing)
    first = workbook.quiz.questions()[0]
    question = workbook.quiz.bank.question(first)
    answer = question["options"][0]["id"] if "options" in question else "1"
    with pytest.warns(ProgressFileWarning, match="disk full"):
        result = workbook.quiz.check(first, answer)
    assert result.question_id == first

"""Progress files: recorded per attempt, atomic under a crash, reloaded after a restart; the class report."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

import workbook.quiz.progress as progress_module
from workbook.quiz.progress import Progress, progress_path
from workbook.quiz.report import class_chart, class_report, write_class_report


@pytest.fixture(autouse=True)
def progress_dir(tmp_path, monkeypatch):
    folder = tmp_path / "progress"
    monkeypatch.setenv("WORKBOOK_PROGRESS_DIR", str(folder))
    monkeypatch.setenv("WORKBOOK_LEARNER", "Ada Lovelace")
    return folder


def test_progress_file_lives_under_the_configured_folder(progress_dir):
    assert progress_path() == progress_dir / "ada-lovelace.json"


def test_record_then_reload_in_a_fresh_object(progress_dir):
    progress = Progress.load()
    progress.record("q-1", False)
    progress.record("q-1", True)
    progress.record("q-2", False)
    again = Progress.load()
    assert again.questions["q-1"]["attempts"] == 2 and again.questions["q-1"]["solved"]
    assert again.questions["q-1"]["solved_at_attempt"] == 2
    assert again.questions["q-2"] == {**again.questions["q-2"], "attempts": 1, "correct": 0, "solved": False}
    frame = again.to_frame()
    assert list(frame.index) == ["q-1", "q-2"] and frame.loc["q-1", "correct"] == 1


def test_check_records_and_survives_a_new_process(progress_dir):
    import workbook.quiz

    first = workbook.quiz.questions()[0]
    question = workbook.quiz.bank.question(first)
    answer = question["options"][0]["id"] if "options" in question else "1"
    workbook.quiz.check(first, answer)
    code = "import workbook.quiz, json; print(json.dumps(workbook.quiz.my_progress().questions))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ, check=True)
    assert json.loads(out.stdout)[first]["attempts"] == 1


def test_a_crash_while_writing_leaves_the_previous_file_whole(progress_dir, monkeypatch):
    progress = Progress.load()
    progress.record("q-1", True)
    before = progress_path().read_text()

    def half_written(document, stream, **kwargs):
        stream.write('{"format": 1, "questions": {"q-1": ')  # then the process "dies"
        raise KeyboardInterrupt

    with monkeypatch.context() as patch, pytest.raises(KeyboardInterrupt):
        patch.setattr(progress_module.json, "dump", half_written)
        progress.record("q-2", True)
    assert progress_path().read_text() == before
    assert [p for p in progress_dir.iterdir() if p.suffix != ".lock"] == [progress_path()]  # no temporary file left
    assert set(Progress.load().questions) == {"q-1"}


def test_a_failing_rename_leaves_the_previous_file_whole(progress_dir, monkeypatch):
    Progress.load().record("q-1", True)
    before = progress_path().read_text()

    def failing_replace(source, target):
        raise OSError("disk gone")

    with monkeypatch.context() as patch, pytest.raises(OSError, match="disk gone"):
        patch.setattr(progress_module.os, "replace", failing_replace)
        Progress.load().record("q-1", False)
    assert progress_path().read_text() == before
    assert [p for p in progress_dir.iterdir() if p.suffix != ".lock"] == [progress_path()]


def test_progress_command_summarises(progress_dir, capsys):
    from workbook.__main__ import main

    assert main(["progress"]) == 0
    assert "no answers recorded yet" in capsys.readouterr().out
    Progress.load().record("q-1", False)
    Progress.load().record("q-1", True)
    assert main(["progress"]) == 0
    out = capsys.readouterr().out
    assert "ada-lovelace: 1 of 1 questions solved, all done, 2 attempts" in out and "q-1" in out


def _fake_class(folder):
    folder.mkdir()
    learners = {
        "ada": {"q-1": (1, True), "q-2": (3, True)},
        "bob": {"q-1": (2, True), "q-2": (1, False)},
        "cy": {"q-1": (1, False)},
    }
    for learner, answers in learners.items():
        questions = {
            q: {"attempts": n, "correct": int(ok), "solved": ok, **({"solved_at_attempt": n} if ok else {})}
            for q, (n, ok) in answers.items()
        }
        (folder / f"{learner}.json").write_text(json.dumps({"format": 1, "learner": learner, "questions": questions}))
    (folder / "notes.json").write_text("not json")


def test_class_report_from_a_folder_of_three(tmp_path):
    _fake_class(tmp_path / "class")
    report = class_report(tmp_path / "class")
    rows = report.set_index("question")
    assert rows.loc["q-1", ["learners", "attempted", "solved", "attempts"]].tolist() == [3, 3, 2, 4]
    assert rows.loc["q-1", "percent_solved"] == pytest.approx(66.7)
    assert rows.loc["q-2", ["attempted", "solved", "percent_solved"]].tolist() == [2, 1, pytest.approx(33.3)]
    assert rows.loc["q-1", "attempts_per_solver"] == 1.5
    bar = class_chart(report).data[0]
    assert list(bar.x) == ["q-1", "q-2"] and list(bar.y) == [pytest.approx(66.7), pytest.approx(33.3)]
    assert bar.text[0] == "67% (2/3)"


def test_class_report_command_writes_the_csv(tmp_path, capsys):
    from workbook.__main__ import main

    _fake_class(tmp_path / "class")
    out = tmp_path / "report.csv"
    assert main(["class-report", str(tmp_path / "class"), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "skipped:" in captured.err and "notes.json" in captured.err
    csv = pd.read_csv(out)
    assert list(csv.columns) == [
        "question",
        "learners",
        "attempted",
        "solved",
        "percent_solved",
        "attempts",
        "attempts_per_solver",
    ]
    assert csv["solved"].tolist() == [2, 1]


def test_class_report_of_an_empty_folder(tmp_path):
    (tmp_path / "empty").mkdir()
    report, skipped = write_class_report(tmp_path / "empty")
    assert report.empty and skipped == []


def test_progress_counts_against_the_whole_bank(tmp_path):
    from workbook.quiz.bank import all_questions

    progress = Progress("ada", tmp_path / "ada.json")
    progress.record("reading-1", True)
    in_bank = sum(1 for q in all_questions().values() if q["bank"] == "reading")
    assert in_bank > 1
    assert f"1 of {in_bank} questions solved" in progress.summary()
    assert f"1 of {in_bank} questions solved" in progress._repr_html_()

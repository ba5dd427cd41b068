"""The instructor's class view and grade exports (workbook/quiz/class_view.py), on a folder of progress files."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from workbook.quiz import class_view


def write(folder: Path, learner: str, questions: dict) -> None:
    (folder / f"{learner}.json").write_text(json.dumps({"format": 1, "learner": learner, "questions": questions}))


def entry(attempts: int, correct: int, solved_at: int | None) -> dict:
    return {"attempts": attempts, "correct": correct, "solved": solved_at is not None, "solved_at_attempt": solved_at}


@pytest.fixture
def rows(tmp_path):
    write(tmp_path, "ana", {"nb00-1": entry(1, 1, 1), "nb00-2": entry(2, 1, 2), "nb03-1": entry(4, 0, None)})
    write(tmp_path, "ben", {"nb00-1": entry(3, 1, 3), "nb03-1": entry(1, 1, 1)})
    write(tmp_path, "li--c16667", {"nb00-2": entry(5, 0, None)})
    return class_view.class_rows(tmp_path)


def test_where_each_learner_is_and_how_many_they_solved(rows):
    where = class_view.where_learners_are(rows)
    assert where.loc["ana"].tolist() == ["03", 2]
    assert where.loc["ben"].tolist() == ["03", 2]
    assert where.loc["li--c16667"].tolist() == ["00", 0]


def test_most_missed_puts_the_question_with_most_wrong_attempts_first(rows):
    missed = class_view.most_missed(rows)
    assert list(missed.index[:2]) == ["nb00-2", "nb03-1"]  # 1 + 5 wrong, then 4 + 0
    assert missed.loc["nb00-2"].tolist() == [6, 1, 2]
    assert missed.loc["nb03-1"].tolist() == [4, 1, 2]


def test_gradebook_csv_has_one_row_per_learner_and_one_column_per_bank(rows, tmp_path):
    book, scores = class_view.export_grades(rows, tmp_path / "out")
    with book.open() as stream:
        table = list(csv.DictReader(stream))
    assert [row["learner"] for row in table] == ["ana", "ben", "li--c16667"]
    assert {"nb00", "nb03", "reading"} <= set(table[0]) and "nb00-1" not in table[0]
    assert (table[0]["nb00"], table[0]["nb03"], table[1]["nb03"], table[2]["nb00"]) == ("2", "0", "1", "0")
    with scores.open() as stream:
        graded = list(csv.DictReader(stream))
    assert set(graded[0]) == {"student", "notebook", "grade_id", "score", "max_score"}
    assert len(graded) == 6
    by_key = {(row["student"], row["grade_id"]): float(row["score"]) for row in graded}
    assert by_key[("ana", "nb03-1")] == 0.0 and by_key[("ben", "nb03-1")] == 1.0


def test_the_charts_show_the_same_counts(rows):
    on_notebook, solved, missed = class_view.charts(rows)
    assert list(on_notebook.data[0].x) == ["nb00", "nb03"] and list(on_notebook.data[0].y) == [1, 2]
    assert list(solved.data[0].y) == [2, 2, 0]
    assert list(missed.data[0].x)[0] == "nb00-2"


def test_class_grades_command_writes_both_files(rows, tmp_path):
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "workbook", "class-grades", str(tmp_path), "--out", str(tmp_path / "grades")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "grades" / "gradebook.csv").read_text().splitlines()[0].startswith("learner,")
    assert "nbgrader-scores.csv" in result.stdout


def test_the_live_widget_holds_the_three_charts(tmp_path):
    write(tmp_path, "ana", {"nb01-1": entry(2, 1, 2)})
    box = class_view.show(tmp_path, refresh_s=3600)
    try:
        assert len(box.children) == 3
        assert all(type(child).__name__ == "Output" for child in box.children)  # one Output widget per chart
    finally:
        box.stop()

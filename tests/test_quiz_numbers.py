"""Numeric answers written the way the course prints numbers: "161,000", "10 000", "1e4"; messages name the title."""

from __future__ import annotations

import pytest

from tests.quiz_fixture import build_fixture, write_answers
from workbook.errors import AnswerError
from workbook.quiz.authoring import build_bank
from workbook.quiz.bank import all_questions
from workbook.quiz.grading import grade_answer, plain_number
from workbook.quiz.widgets import QuestionWidget

COUNTS = {
    "bank": "fx-numbers",
    "title": "Numbers",
    "questions": [
        {"id": "fx-161k", "type": "numeric", "title": "Documents read", "prompt": "How many?",
         "unit": "documents", "answer": 161000},
        {"id": "fx-10k", "type": "numeric", "title": "Inserts", "prompt": "How many?", "unit": "inserts",
         "answer": 10000, "tolerance": 100},
        {"id": "fx-mib", "type": "numeric", "title": "A size", "prompt": "How big?", "unit": "MiB",
         "answer": 1234.5, "step": 0.1},
    ],
}  # fmt: skip


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    folder = tmp_path_factory.mktemp("numbers")
    built = build_bank(write_answers(folder, COUNTS), folder / "numbers.json")
    return {question["id"]: question for question in built["questions"]}


@pytest.mark.parametrize(
    "answer", ["161,000", "161000", "161 000", "161\u202f000", "161_000", "1.61e5", "161,000 documents", " 161,000 "]
)
def test_the_count_as_the_course_prints_it_is_right(bank, answer):
    assert grade_answer(bank["fx-161k"], answer).correct


@pytest.mark.parametrize(("answer", "correct"), [("10,000", True), ("1e4", True), ("10 149", True), ("9,849", False)])
def test_grouped_numbers_keep_the_tolerance(bank, answer, correct):
    assert grade_answer(bank["fx-10k"], answer).correct is correct


def test_grouping_with_a_decimal_part(bank):
    assert grade_answer(bank["fx-mib"], "1,234.5 MiB").correct and not grade_answer(bank["fx-mib"], "1,234").correct


@pytest.mark.parametrize("answer", ["16,1000", "1,61,000", "161, 000", "161,000,0", "161 000,000"])
def test_groups_that_are_not_threes_are_refused_not_guessed(bank, answer):
    with pytest.raises(AnswerError, match='"Documents read" takes a number in documents'):
        grade_answer(bank["fx-161k"], answer)


def test_a_decimal_comma_is_refused_with_the_fix(bank):
    with pytest.raises(AnswerError, match="comma does not group thousands") as caught:
        grade_answer(bank["fx-mib"], "2,5")
    assert "decimal point as a dot" in caught.value.fix and "fx-mib" not in caught.value.message


def test_plain_number_leaves_what_is_not_grouped_alone():
    assert [plain_number(t) for t in ("2.5", "1e4", "-3", "lots")] == ["2.5", "1e4", "-3", "lots"]


def test_error_messages_name_the_title_not_the_id(tmp_path):
    questions = build_fixture(tmp_path)
    for question_id, answer in (("fx-num", "lots"), ("fx-choice", None), ("fx-text", "  ")):
        with pytest.raises(AnswerError) as caught:
            grade_answer(questions[question_id], answer)
        assert question_id not in caught.value.message
        assert f'"{questions[question_id]["title"]}"' in caught.value.message


def test_every_bank_numeric_answer_accepts_the_comma_grouped_form_of_a_number():
    """Each numeric bank question reads "12,345" as the same number as "12345" (graded alike, right or not)."""
    numeric = [q for q in all_questions().values() if q["type"] == "numeric"]
    assert numeric
    for question in numeric:
        assert grade_answer(question, "12,345").answer == grade_answer(question, "12345").answer == "12345"


def test_the_widget_grades_a_grouped_answer(bank):
    w = QuestionWidget(bank["fx-161k"])
    w.answer.value = "161,000"
    w.check_button.click()
    assert "✓ Correct" in w.feedback.value

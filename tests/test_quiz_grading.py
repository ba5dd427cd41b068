"""Grading each question type: right, wrong, normalised variants, tolerance edges, feedback."""

from __future__ import annotations

import pytest

from tests.quiz_fixture import build_fixture
from workbook.errors import UnknownChoiceError
from workbook.quiz.grading import AnswerError, grade_answer


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    return build_fixture(tmp_path_factory.mktemp("bank"))


def test_choice_by_id_or_text_with_option_feedback(bank):
    question = bank["fx-choice"]
    right = grade_answer(question, "b")
    assert right.correct and "FEEDBACK-BANANAS" in right.feedback and "EXPLAIN-CHOICE" in right.feedback
    assert grade_answer(question, "  bananas! ").correct  # option text, normalised
    wrong = grade_answer(question, "a")
    assert not wrong.correct and wrong.feedback == "FEEDBACK-APPLES" and "EXPLAIN" not in wrong.feedback
    assert not grade_answer(question, "c").correct  # no feedback filed: the generic one
    with pytest.raises(UnknownChoiceError, match="Choose from: a, b, c"):
        grade_answer(question, "z")


def test_many_needs_the_whole_set_in_any_order(bank):
    question = bank["fx-many"]
    for answer in (["five", "seven"], ("seven", "five", "five"), "seven, five", ["5", "7"]):
        assert grade_answer(question, answer).correct, answer
    result = grade_answer(question, ["five", "seven"])
    assert "EXPLAIN-MANY" in result.feedback and "FEEDBACK-FIVE" in result.feedback
    partial = grade_answer(question, ["five"])
    assert not partial.correct and "FEEDBACK-FIVE" in partial.feedback and "EXPLAIN" not in partial.feedback
    assert not grade_answer(question, ["four", "five", "seven"]).correct
    assert "FEEDBACK-FOUR" in grade_answer(question, ["four"]).feedback


@pytest.mark.parametrize(
    ("answer", "correct"),
    [
        (2.5, True),
        ("2.5 MiB", True),
        ("2.3", True),  # exactly the tolerance below
        (2.7, True),  # exactly the tolerance above
        (2.74, True),  # rounds to 2.7 on the 0.1 grid
        (2.75, False),  # rounds (half up) to 2.8
        (2.25, True),  # rounds half up to 2.3
        (2.24, False),
        (-2.5, False),
        (25, False),
    ],
)
def test_numeric_tolerance_edges_on_the_grid(bank, answer, correct):
    assert grade_answer(bank["fx-num"], answer).correct is correct


def test_numeric_feedback_and_errors(bank):
    assert "EXPLAIN-NUM" in grade_answer(bank["fx-num"], 2.4).feedback  # any accepted value unlocks the explanation
    assert grade_answer(bank["fx-num"], "3.5").feedback == "FEEDBACK-MISTAKE-NUM"
    with pytest.raises(AnswerError, match="takes a number in MiB"):
        grade_answer(bank["fx-num"], "lots")
    exact = bank["fx-exact"]  # no tolerance, step defaults to the answer's precision (1)
    assert (
        grade_answer(exact, 16).correct
        and grade_answer(exact, "16.4").correct
        and not grade_answer(exact, 16.5).correct
    )
    assert not grade_answer(exact, 15).correct


def test_text_normalises_case_whitespace_and_punctuation(bank):
    question = bank["fx-text"]
    for answer in ("subset", "SUBSET", "  Subset   Pattern. ", "subset-pattern", "«Subset»"):
        assert grade_answer(question, answer).correct, answer
    assert "EXPLAIN-TEXT" in grade_answer(question, "subset").feedback
    assert grade_answer(question, "Bucket!").feedback == "FEEDBACK-MISTAKE-TEXT"
    assert not grade_answer(question, "sub set").correct
    with pytest.raises(AnswerError):
        grade_answer(question, "   ")


def test_result_reads_well(bank):
    result = grade_answer(bank["fx-choice"], "b")
    assert bool(result) and repr(result).startswith("fx-choice: ✓ correct")
    assert "✗ Not yet" in grade_answer(bank["fx-choice"], "a")._repr_html_()


def test_committed_closed_questions_have_exactly_one_right_answer():
    """Checked without knowing the answers: exactly one option, or one set of options, grades right."""
    from itertools import combinations

    from workbook.quiz.bank import all_questions

    for question in all_questions().values():
        ids = [option["id"] for option in question.get("options", [])]
        if question["type"] == "choice":
            assert sum(grade_answer(question, i).correct for i in ids) == 1, question["id"]
        elif question["type"] == "many":
            subsets = [list(c) for n in range(1, len(ids) + 1) for c in combinations(ids, n)]
            assert sum(grade_answer(question, s).correct for s in subsets) == 1, question["id"]


def test_capital_option_letters_are_accepted(tmp_path):
    question = build_fixture(tmp_path)["fx-choice"]
    ids = [option["id"] for option in question["options"]]
    assert grade_answer(question, ids[1].upper()).correct
    assert grade_answer(question, f" {ids[1].upper()} ").answer == ids[1]


def test_megabytes_for_mebibytes_are_accepted_with_a_note(tmp_path):
    question = build_fixture(tmp_path)["fx-num"]  # unit MiB, answer 2.5
    result = grade_answer(question, "2.5MB")
    assert result.correct and "1 MiB = 1,048,576 bytes" in result.feedback
    assert "Note" not in grade_answer(question, "2.5 MiB").feedback
    assert not grade_answer(question, "9 MB").correct


def test_the_outlier_answer_to_the_subset_question_gets_specific_feedback():
    from workbook.quiz.bank import question

    result = grade_answer(question("reading-6"), "the Outlier pattern")
    assert not result.correct and "subset pattern" in result.feedback and "Not yet" not in result.feedback

"""Widgets driven from code, as a learner drives them: set .value, .click(), read the feedback."""

from __future__ import annotations

import pytest

from tests.quiz_fixture import build_fixture
from workbook.quiz import design
from workbook.quiz.widgets import ChoiceCheckboxes, QuestionWidget


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    return build_fixture(tmp_path_factory.mktemp("bank"))


def widget(question, **kwargs):
    recorded = []
    return QuestionWidget(question, record=recorded.append, **kwargs), recorded


def test_choice_widget_gives_feedback_per_option_and_allows_retries(bank):
    w, recorded = widget(bank["fx-choice"])
    w.answer.value = "a"
    w.check_button.click()
    assert "Not yet" in w.feedback.value and "FEEDBACK-APPLES" in w.feedback.value and w.result is not None
    w.answer.value = "b"
    w.check_button.click()
    assert "✓ Correct" in w.feedback.value and "(attempt 2)" in w.feedback.value
    assert [r.correct for r in recorded] == [False, True]


def test_check_without_an_answer_asks_for_one_and_records_nothing(bank):
    w, recorded = widget(bank["fx-choice"])
    w.check_button.click()
    assert "needs an answer" in w.feedback.value and recorded == [] and w.attempts == 0


def test_many_widget_checkboxes_follow_value_both_ways(bank):
    w, _ = widget(bank["fx-many"])
    assert isinstance(w.answer, ChoiceCheckboxes)
    w.answer.value = ("five", "seven")
    ticked = {box.description: box.value for box in w.answer.children}  # shown shuffled: look boxes up by text
    assert [ticked[text] for text in ("4", "5", "6", "7")] == [False, True, False, True]
    w.check_button.click()
    assert "✓ Correct" in w.feedback.value
    next(box for box in w.answer.children if box.description == "4").value = True  # a learner ticks "4"
    assert sorted(w.answer.value) == ["five", "four", "seven"]
    w.check_button.click()
    assert "Not yet" in w.feedback.value and "FEEDBACK-FOUR" in w.feedback.value


def test_numeric_and_text_widgets(bank):
    number, _ = widget(bank["fx-num"])
    assert "MiB" in number.answer.placeholder
    number.answer.value = "2.6 MiB"
    number.check_button.click()
    assert "✓ Correct" in number.feedback.value
    number.answer.value = "many"
    number.check_button.click()
    assert "takes a number" in number.feedback.value
    text, _ = widget(bank["fx-text"])
    text.answer.value = "THE subset PATTERN"
    text.check_button.click()
    assert "Not yet" in text.feedback.value  # "the" is not one of the accepted answers
    text.answer.value = "Subset."
    text.check_button.click()
    assert "EXPLAIN-TEXT" in text.feedback.value


def test_design_widget_checks_the_database(bank, db):
    design.SETUPS["store-products"](db)
    w, recorded = widget(bank["fx-design"], database=lambda: db)
    assert w.answer is None and w.check_button.description == "Check my database"
    w.check_button.click()
    assert "COLLSCAN" in w.feedback.value
    db.products.create_index([("category._id", 1), ("price", 1)])  # filters, but the _id tie-break sorts in memory
    w.check_button.click()
    assert "ESR" in w.feedback.value
    db.products.create_index([("category._id", 1), ("price", 1), ("_id", 1)])
    w.check_button.click()
    assert "✓ Correct" in w.feedback.value and [r.correct for r in recorded] == [False, False, True]


def test_show_records_progress_for_the_learner(tmp_path, monkeypatch):
    import workbook.quiz

    monkeypatch.setenv("WORKBOOK_PROGRESS_DIR", str(tmp_path))
    first = next(q for q in workbook.quiz.questions() if workbook.quiz.bank.question(q)["type"] == "choice")
    w = workbook.quiz.show(first, learner="widget-tester")
    w.answer.value = w.answer.options[0][1]
    w.check_button.click()
    assert workbook.quiz.my_progress("widget-tester").questions[first]["attempts"] == 1
    assert (tmp_path / "widget-tester.json").exists()

"""quiz-build checks the whole bank before it writes anything; numeric answers out of range get a clear error."""

from __future__ import annotations

import copy
import json

import pytest

from tests.quiz_fixture import ANSWERS, build_fixture, write_answers
from workbook.quiz.authoring import build_bank
from workbook.quiz.bank import all_questions
from workbook.quiz.grading import AnswerError, grade_answer
from workbook.quiz.lines import QuizFileError

YAML_QUESTION = "  - id: {id}\n    type: numeric\n    title: t\n    prompt: p\n    unit: ms\n    answer: {answer}\n"


def yaml_file(tmp_path, body, name="answers.yaml"):
    path = tmp_path / name
    path.write_bytes(body if isinstance(body, bytes) else body.encode())
    return path


@pytest.fixture
def out(tmp_path):
    """An existing bank file that a failed build must leave exactly as it was."""
    build_fixture(tmp_path)
    path = tmp_path / "fixture.json"
    return path, path.read_bytes()


def assert_untouched(out):
    path, before = out
    assert path.read_bytes() == before
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == []  # no temporary left


def with_design(**changes):
    answers = copy.deepcopy(ANSWERS)
    design = answers["questions"][-1]
    for key, value in changes.items():
        if value is None:
            design.pop(key, None)
        elif isinstance(value, dict) and key in design:
            design[key] = {**design[key], **value}
        else:
            design[key] = value
    return answers


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"checker": "examines-less"}, "Unknown design-task checker 'examines-less'"),
        ({"setup": {"name": "store-prodcts"}}, "Unknown design-task setup 'store-prodcts'"),
        ({"params": {"database": "bad name!"}}, "may only use letters"),
        ({"params": {"database": "x" * 60}}, "longer than MongoDB's 63 bytes"),
    ],
)
def test_design_tasks_are_checked_before_writing(changes, problem, out, tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    with pytest.raises(QuizFileError, match=problem) as caught:
        build_bank(write_answers(source, with_design(**changes)), out[0])
    assert caught.value.line is not None
    assert_untouched(out)


def test_an_id_used_by_another_bank_is_refused(out, tmp_path):
    taken = sorted(all_questions())[0]
    answers = copy.deepcopy(ANSWERS)
    answers["questions"][0]["id"] = taken
    source = tmp_path / "src"
    source.mkdir()
    with pytest.raises(QuizFileError, match=f"question id '{taken}' is already used in") as caught:
        build_bank(write_answers(source, answers), out[0])
    assert caught.value.line == 6
    assert_untouched(out)


def test_an_id_used_by_a_neighbouring_bank_is_refused(out, tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    answers = copy.deepcopy(ANSWERS)
    answers["bank"] = "other"
    with pytest.raises(QuizFileError, match="fx-choice' is already used in .*fixture.json"):
        build_bank(write_answers(source, answers), out[0].parent / "other.json")
    assert not (out[0].parent / "other.json").exists()


def test_rebuilding_the_same_bank_is_not_a_collision(out, tmp_path):
    build_bank(write_answers(tmp_path), out[0])


@pytest.mark.parametrize(
    ("body", "line", "problem"),
    [
        ("bank: b\nbank: c\ntitle: t\nquestions: []\n", 2, "the key 'bank' appears twice"),
        (
            "bank: b\ntitle: t\nquestions:\n" + YAML_QUESTION.format(id="q-x", answer=1) + "    answer: 2\n",
            10,
            "the key 'answer' appears twice",
        ),
        ("bank: b\ntitle: t\nquestions:\n" + YAML_QUESTION.format(id="q-x", answer=".inf"), 9, "not a finite number"),
        ("bank: b\ntitle: t\nquestions:\n" + YAML_QUESTION.format(id="q-x", answer=".nan"), 9, "not a finite number"),
        (b"bank: b\ntitle: caf\xe9\nquestions: []\n", 2, "not UTF-8"),
    ],
)
def test_yaml_answer_files_are_read_strictly(body, line, problem, out, tmp_path):
    path = yaml_file(tmp_path, body)
    with pytest.raises(QuizFileError, match=problem) as caught:
        build_bank(path, out[0])
    assert caught.value.line == line
    assert_untouched(out)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"bank": "b", "bank": "c", "title": "t", "questions": []}', "the key 'bank' appears twice"),
        ('{"bank": "b", "title": "t", "questions": [{"id": "q", "type": "numeric", "title": "t", "prompt": "p", '
         '"unit": "ms", "answer": NaN}]}', "not a finite number"),
        ('{"bank": "b", "title": "t", "questions": [{"id": "q", "type": "numeric", "title": "t", "prompt": "p", '
         '"unit": "ms", "answer": 1e400}]}', "not a finite number"),
    ],
)  # fmt: skip
def test_json_answer_files_are_read_strictly(text, problem, out, tmp_path):
    path = tmp_path / "answers.json"
    path.write_text(text)
    with pytest.raises(QuizFileError, match=problem):
        build_bank(path, out[0])
    assert_untouched(out)


def test_the_command_reports_the_problem_and_writes_nothing(out, tmp_path, capsys):
    from workbook.__main__ import main

    path = yaml_file(tmp_path, b"bank: b\ntitle: \xff\nquestions: []\n")
    assert main(["quiz-build", str(path), "--out", str(out[0])]) == 2
    assert "not UTF-8" in capsys.readouterr().err
    assert_untouched(out)


@pytest.mark.parametrize("answer", ["1E400", "9" * 5000, "-1e16", "1e999999999"])
def test_numeric_answers_out_of_range_get_a_clear_error(answer, tmp_path):
    question = build_fixture(tmp_path)["fx-num"]
    with pytest.raises(AnswerError, match="takes a number in range") as caught:
        grade_answer(question, answer)
    assert len(str(caught.value)) < 400  # a 5,000-digit paste is not echoed back


def test_the_widget_says_so_too(tmp_path):
    from workbook.quiz.widgets import QuestionWidget

    w = QuestionWidget(build_fixture(tmp_path)["fx-num"], record=lambda _r: None)
    w.answer.value = "1E400"
    w.check_button.click()
    assert "number in range" in w.feedback.value


def test_a_built_bank_has_no_nan_or_infinity(tmp_path):
    bank = build_bank(write_answers(tmp_path), tmp_path / "fixture.json")
    json.loads(json.dumps(bank), parse_constant=lambda constant: pytest.fail(constant))

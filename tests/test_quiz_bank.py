"""The bank as data: hashed only, valid against the schema, errors that name the file and line."""

from __future__ import annotations

import copy
import json

import pytest

from tests.quiz_fixture import ANSWERS, PLAINTEXT, build_fixture, write_answers
from workbook.quiz import hashing
from workbook.quiz.authoring import build_bank
from workbook.quiz.bank import bank_files, bank_schema, read_bank
from workbook.quiz.lines import QuizFileError, schema_errors


def test_every_committed_bank_file_validates():
    files = bank_files()
    assert files, "no bank files in workbook/quiz/questions"
    for path in files:
        bank = read_bank(path)
        assert bank["hashing"] == hashing.SCHEME


def test_builder_leaves_no_plaintext_answer_or_feedback(tmp_path):
    build_fixture(tmp_path)
    text = (tmp_path / "fixture.json").read_text()
    for plaintext in PLAINTEXT:
        assert plaintext not in text, plaintext
    assert "Apples" in text  # option texts are the question, not the answer


def test_sealed_feedback_has_one_length_per_question(tmp_path):
    for question in build_fixture(tmp_path).values():
        lengths = {len(sealed) for sealed in question.get("feedback", {}).values()}
        assert len(lengths) <= 1, question["id"]


def test_rebuilding_keeps_salts_and_hashes(tmp_path):
    first = (build_fixture(tmp_path), (tmp_path / "fixture.json").read_text())
    build_fixture(tmp_path)
    assert (tmp_path / "fixture.json").read_text() == first[1]


@pytest.mark.parametrize("field", ["answer", "correct", "answers", "explanation"])
def test_schema_rejects_plaintext_fields(tmp_path, field):
    bank = json.loads(json.dumps({"bank": "fixture", "title": "t", "hashing": hashing.SCHEME, "questions": []}))
    question = build_fixture(tmp_path)["fx-choice"]
    bank["questions"] = [{**question, field: "b"}]
    assert schema_errors(bank, bank_schema())


def test_schema_rejects_a_hash_that_is_not_one(tmp_path):
    question = build_fixture(tmp_path)["fx-text"]
    bank = {"bank": "fixture", "title": "t", "hashing": hashing.SCHEME, "questions": [question]}
    bank["questions"][0] = {**question, "answer_hashes": ["subset"]}
    assert schema_errors(bank, bank_schema())


def test_broken_json_bank_names_file_and_line(tmp_path):
    build_fixture(tmp_path)
    path = tmp_path / "fixture.json"
    path.write_text(path.read_text().replace('"title": "Fixture questions",', '"title": "Fixture questions"'))
    with pytest.raises(QuizFileError, match="not valid JSON") as caught:
        read_bank(path)
    assert caught.value.path == path and caught.value.line == 4  # where the missing comma is noticed
    assert f"{path}:" in str(caught.value)


def test_schema_error_in_a_bank_names_the_line_of_the_key(tmp_path):
    build_fixture(tmp_path)
    path = tmp_path / "fixture.json"
    text = path.read_text().replace('"type": "numeric"', '"type": "numbers"', 1)
    path.write_text(text)
    expected = next(n for n, line in enumerate(text.splitlines(), 1) if '"numbers"' in line)
    with pytest.raises(QuizFileError) as caught:
        read_bank(path)
    assert caught.value.line == expected and "numbers" in caught.value.problem


def test_unknown_checker_names_the_line_and_the_choices(tmp_path):
    build_fixture(tmp_path)
    path = tmp_path / "fixture.json"
    text = path.read_text().replace("examines-no-more-than-returns", "examines-less")
    path.write_text(text)
    with pytest.raises(QuizFileError, match=r"Choose from: .*examines-no-more-than-returns") as caught:
        read_bank(path)
    assert caught.value.line == next(n for n, line in enumerate(text.splitlines(), 1) if "examines-less" in line)


def test_answer_file_errors_name_the_line_in_yaml(tmp_path):
    path = tmp_path / "answers.yaml"
    path.write_text(
        "bank: fixture\ntitle: t\nquestions:\n"
        "  - id: q-1\n    type: choice\n    title: t\n    prompt: p\n    options:\n"
        "      - text: one\n        correct: true\n      - text: two\n        correct: true\n"
    )
    with pytest.raises(QuizFileError, match="exactly one correct option, not 2") as caught:
        build_bank(path)
    assert caught.value.line == 8  # the "options:" line
    path.write_text(path.read_text().replace("    title: t\n", "    titel: t\n"))
    with pytest.raises(QuizFileError) as caught:
        build_bank(path)
    assert caught.value.line is not None and 4 <= caught.value.line <= 6
    path.write_text("bank: fixture\ntitle: [unclosed\n")
    with pytest.raises(QuizFileError, match="not valid YAML") as caught:
        build_bank(path)
    assert caught.value.line is not None


def test_answer_file_errors_name_the_line_in_json(tmp_path):
    answers = copy.deepcopy(ANSWERS)
    answers["questions"][2]["tolerance"] = 0.25  # not a whole number of 0.1 steps
    path = write_answers(tmp_path, answers)
    with pytest.raises(QuizFileError, match="not a whole number of steps") as caught:
        build_bank(path)
    assert '"tolerance"' in path.read_text().splitlines()[caught.value.line - 1]
    path.write_text('{"bank": "fixture",\n "title": "t"\n "questions": []}')
    with pytest.raises(QuizFileError, match="not valid JSON") as caught:
        build_bank(path)
    assert caught.value.line == 3


def test_design_options_may_not_carry_an_answer(tmp_path):
    answers = copy.deepcopy(ANSWERS)
    answers["questions"][-1]["options"] = [{"id": "x", "text": "x", "correct": True}, {"id": "y", "text": "y"}]
    with pytest.raises(QuizFileError, match="graded by their checker"):
        build_bank(write_answers(tmp_path, answers))


def test_quiz_build_command(tmp_path, capsys):
    from workbook.__main__ import main

    out = tmp_path / "questions" / "fixture.json"
    assert main(["quiz-build", str(write_answers(tmp_path)), "--out", str(out)]) == 0
    assert "6 questions" in capsys.readouterr().out and read_bank(out)["bank"] == "fixture"
    broken = tmp_path / "broken.json"
    broken.write_text('{"bank": "x"}')
    assert main(["quiz-build", str(broken), "--out", str(out)]) == 2
    assert f"{broken}:1" in capsys.readouterr().err


def test_hashing_helpers():
    salt = hashing.new_salt()
    assert len(salt) == 32 and salt != hashing.new_salt()
    assert hashing.answer_hash(salt, "x") != hashing.lookup_key(salt, "x")
    assert hashing.set_key(["b", "a", "b"]) == hashing.set_key(("a", "b"))
    sealed = hashing.seal(salt, "k", "message", width=64)
    assert hashing.unseal(salt, "k", sealed) == "message" and hashing.unseal(salt, "other", sealed) != "message"
    assert hashing.grid_cell("-0.05", "0.1") == -1 and hashing.tolerance_steps("0.3", "0.1") == 3
    with pytest.raises(ValueError):
        hashing.tolerance_steps("0.25", "0.1")
    with pytest.raises(ValueError):
        hashing.to_decimal(True)

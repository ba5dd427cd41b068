"""Authoring: an instructor's plaintext answer file in, a hashed bank file out.

The answer file (JSON or YAML, see ``answers_schema.json``) stays outside the repository; only
the bank it becomes, with salted hashes and sealed feedback, is committed. Rebuilding keeps each
question's salt from the existing bank file, so an unchanged question gives an unchanged diff.
"""

from __future__ import annotations

import json
import string
from decimal import Decimal
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from workbook.quiz import hashing
from workbook.quiz.bank import bank_schema, read_bank
from workbook.quiz.lines import QuizFileError, check_schema, line_of, read_document


@cache
def answers_schema() -> dict[str, Any]:
    """The JSON Schema (Draft 2020-12) of a plaintext answer file."""
    return json.loads((resources.files("workbook.quiz") / "answers_schema.json").read_text(encoding="utf-8"))


class _Builder:
    """Turns one validated answer file into a bank document; errors point at the file's lines."""

    def __init__(self, path: Path, text: str, salts: dict[str, str]) -> None:
        self.path, self.text, self.salts = path, text, salts

    def fail(self, at: list[str | int], problem: str) -> QuizFileError:
        return QuizFileError(self.path, line_of(self.text, at), problem)

    def build(self, document: dict[str, Any]) -> dict[str, Any]:
        seen: set[str] = set()
        questions = []
        for index, question in enumerate(document["questions"]):
            if question["id"] in seen:
                raise self.fail(["questions", index, "id"], f"question id {question['id']!r} is used twice")
            seen.add(question["id"])
            questions.append(self.question(question, ["questions", index]))
        return {"bank": document["bank"], "title": document["title"], "hashing": hashing.SCHEME, "questions": questions}

    def question(self, question: dict[str, Any], at: list[str | int]) -> dict[str, Any]:
        base = {key: question[key] for key in ("id", "type", "title", "prompt")}
        if question["type"] == "design":
            return self.design(question, base, at)
        salt = self.salts.get(question["id"]) or hashing.new_salt()
        messages: dict[str, str] = {}

        def file_feedback(key: str, message: str | None) -> None:
            if message:
                messages[key] = message

        explanation = question.get("explanation")
        built: dict[str, Any] = {**base}
        if question["type"] in ("choice", "many"):
            options = self.options(question, at)
            built["options"] = [{"id": o["id"], "text": o["text"]} for o in options]
            right = [o["id"] for o in options if o.get("correct")]
            if question["type"] == "choice" and len(right) != 1:
                raise self.fail(
                    [*at, "options"], f"a choice question needs exactly one correct option, not {len(right)}"
                )
            if not right:
                raise self.fail([*at, "options"], "a many-choice question needs at least one correct option")
            single = question["type"] == "choice"
            answer = hashing.choice_key(right[0]) if single else hashing.set_key(right)
            for option in options:
                note = option.get("feedback")
                if single and option["id"] == right[0] and explanation:
                    note = f"{note}\n{explanation}" if note else explanation
                file_feedback(hashing.choice_key(option["id"]), note)
            if not single:
                file_feedback(answer, explanation)
            built.update(salt=salt, answer_hash=hashing.answer_hash(salt, answer))
        elif question["type"] == "numeric":
            step, tolerance = self.grid(question, at)
            cell = hashing.grid_cell(question["answer"], step)
            file_feedback(hashing.cell_key(cell), explanation)
            for n, mistake in enumerate(question.get("mistakes", [])):
                wrong = hashing.grid_cell(mistake["answer"], step)
                if abs(wrong - cell) <= hashing.tolerance_steps(tolerance, step):
                    raise self.fail([*at, "mistakes", n], f"the mistake {mistake['answer']} would be accepted as right")
                file_feedback(hashing.cell_key(wrong), mistake["feedback"])
            built.update(unit=question["unit"], step=_number(step), tolerance=_number(tolerance))
            built.update(salt=salt, answer_hash=hashing.answer_hash(salt, hashing.cell_key(cell)))
        else:
            accepted = sorted({hashing.text_key(answer) for answer in question["answers"]})
            if any(key == "text:" for key in accepted):
                raise self.fail([*at, "answers"], "an accepted answer is empty once punctuation is removed")
            for key in accepted:
                file_feedback(key, explanation)
            for n, mistake in enumerate(question.get("mistakes", [])):
                if hashing.text_key(str(mistake["answer"])) in accepted:
                    raise self.fail(
                        [*at, "mistakes", n], f"the mistake {mistake['answer']!r} is also an accepted answer"
                    )
                file_feedback(hashing.text_key(str(mistake["answer"])), mistake["feedback"])
            if question.get("placeholder"):
                built["placeholder"] = question["placeholder"]
            built.update(salt=salt, answer_hashes=sorted(hashing.answer_hash(salt, key) for key in accepted))
        width = hashing.sealed_width(messages.values())
        sealed = {hashing.lookup_key(salt, key): hashing.seal(salt, key, text, width) for key, text in messages.items()}
        built["feedback"] = dict(sorted(sealed.items()))
        return built

    def options(self, question: dict[str, Any], at: list[str | int]) -> list[dict[str, Any]]:
        options = []
        for n, option in enumerate(question["options"]):
            options.append({**option, "id": option.get("id") or string.ascii_lowercase[n]})
        ids = [o["id"] for o in options]
        if len(set(ids)) != len(ids):
            raise self.fail([*at, "options"], f"option ids repeat: {', '.join(ids)}")
        return options

    def grid(self, question: dict[str, Any], at: list[str | int]) -> tuple[Decimal, Decimal]:
        answer = hashing.to_decimal(question["answer"])
        tolerance = hashing.to_decimal(question.get("tolerance", 0))
        if "step" in question:
            step = hashing.to_decimal(question["step"])
        elif tolerance > 0:
            step = tolerance
        else:  # the answer's own last decimal place: 16 -> 1, 2.5 -> 0.1
            step = Decimal(1).scaleb(min(0, int(answer.as_tuple().exponent)))  # finite: the exponent is a number
        if step <= 0:
            raise self.fail([*at, "step"], "the step must be greater than 0")
        try:
            hashing.tolerance_steps(tolerance, step)
        except ValueError as error:
            raise self.fail([*at, "tolerance"], str(error)) from None
        return step, tolerance

    def design(self, question: dict[str, Any], base: dict[str, Any], at: list[str | int]) -> dict[str, Any]:
        built = {**base, "checker": question["checker"], "params": question["params"]}
        if "setup" in question:
            built["setup"] = question["setup"]
        if "options" in question:
            for n, option in enumerate(question["options"]):
                if "correct" in option or "feedback" in option:
                    raise self.fail(
                        [*at, "options", n], "design tasks are graded by their checker: options take only id and text"
                    )
            built["options"] = [{"id": o["id"], "text": o["text"]} for o in self.options(question, at)]
        return built


def _number(value: Decimal) -> int | float:
    return int(value) if value == value.to_integral_value() else float(value)


def _existing_salts(out: Path | None) -> dict[str, str]:
    if out is None or not out.exists():
        return {}
    try:
        return {q["id"]: q["salt"] for q in read_bank(out)["questions"] if "salt" in q}
    except QuizFileError:
        return {}


def build_bank(answers_file: Path | str, out: Path | str | None = None) -> dict[str, Any]:
    """The hashed bank for a plaintext answer file; written to ``out`` (and re-validated) if given."""
    path = Path(answers_file)
    document, text = read_document(path)
    check_schema(path, document, text, answers_schema(), fix="See workbook/quiz/answers_schema.json.")
    target = Path(out) if out is not None else None
    bank = _Builder(path, text, _existing_salts(target)).build(document)
    check_schema(path, bank, json.dumps(bank, indent=2), bank_schema())
    if target is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(bank, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        read_bank(target)  # design checkers and setups must exist
    return bank

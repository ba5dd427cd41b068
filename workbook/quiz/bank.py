"""The question bank: JSON files in ``workbook/quiz/questions/``, each validated by ``schema.json``.

Nothing is read at import; the first lookup reads and validates every bank file once.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from workbook.errors import UnknownChoiceError
from workbook.quiz.lines import QuizFileError, check_schema, line_of, read_document

Question = dict[str, Any]

QUESTIONS_DIR = Path(str(resources.files("workbook.quiz") / "questions"))
"""Where the committed, hashed bank files live."""


@cache
def bank_schema() -> dict[str, Any]:
    """The JSON Schema (Draft 2020-12) every bank file follows."""
    return json.loads((resources.files("workbook.quiz") / "schema.json").read_text(encoding="utf-8"))


def read_bank(path: Path | str) -> dict[str, Any]:
    """One bank file, parsed and validated; errors name the file and line."""
    path = Path(path)
    document, text = read_document(path)
    check_schema(path, document, text, bank_schema(), fix="Rebuild it with `python -m workbook quiz-build`.")
    from workbook.quiz.design import CHECKERS, SETUPS

    for index, question in enumerate(document["questions"]):
        if question["type"] != "design":
            continue
        for kind, name, known, at in (
            ("checker", question["checker"], CHECKERS, ["checker"]),
            ("setup", question.get("setup", {}).get("name"), SETUPS, ["setup", "name"]),
        ):
            if name is not None and name not in known:
                error = UnknownChoiceError(f"design-task {kind}", name, known)
                raise QuizFileError(path, line_of(text, ["questions", index, *at]), error.message)
    return document


def bank_files(directory: Path | None = None) -> list[Path]:
    """The bank files in ``directory`` (default: the package's), sorted by name."""
    return sorted((directory or QUESTIONS_DIR).glob("*.json"))


@cache
def all_questions() -> dict[str, Question]:
    """Every committed question by id, each tagged with the bank it came from."""
    questions: dict[str, Question] = {}
    for path in bank_files():
        for question in read_bank(path)["questions"]:
            if question["id"] in questions:
                raise QuizFileError(path, None, f"question id {question['id']!r} is also in another bank file")
            questions[question["id"]] = {**question, "bank": path.stem}
    return questions


def question(question_id: str) -> Question:
    """The question called ``question_id`` (an error lists the valid ids)."""
    questions = all_questions()
    if question_id not in questions:
        raise UnknownChoiceError("question", question_id, questions)
    return questions[question_id]

"""A small answer file for the quiz tests: its plaintext answers are test data, not the course's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ANSWERS: dict[str, Any] = {
    "bank": "fixture",
    "title": "Fixture questions",
    "questions": [
        {
            "id": "fx-choice",
            "type": "choice",
            "title": "Fruit",
            "prompt": "Which fruit is yellow?",
            "explanation": "EXPLAIN-CHOICE",
            "options": [
                {"text": "Apples", "feedback": "FEEDBACK-APPLES"},
                {"text": "Bananas", "correct": True, "feedback": "FEEDBACK-BANANAS"},
                {"text": "Cherries"},
            ],
        },
        {
            "id": "fx-many",
            "type": "many",
            "title": "Primes",
            "prompt": "Tick the primes.",
            "explanation": "EXPLAIN-MANY",
            "options": [
                {"id": "four", "text": "4", "feedback": "FEEDBACK-FOUR"},
                {"id": "five", "text": "5", "correct": True, "feedback": "FEEDBACK-FIVE"},
                {"id": "six", "text": "6"},
                {"id": "seven", "text": "7", "correct": True},
            ],
        },
        {
            "id": "fx-num",
            "type": "numeric",
            "title": "A measure",
            "prompt": "How much?",
            "unit": "MiB",
            "answer": 2.5,
            "step": 0.1,
            "tolerance": 0.2,
            "explanation": "EXPLAIN-NUM",
            "mistakes": [{"answer": 3.5, "feedback": "FEEDBACK-MISTAKE-NUM"}],
        },
        {"id": "fx-exact", "type": "numeric", "title": "Exact", "prompt": "Exactly?", "unit": "ms", "answer": 16},
        {
            "id": "fx-text",
            "type": "text",
            "title": "A pattern",
            "prompt": "Which pattern?",
            "answers": ["Subset pattern", "subset"],
            "explanation": "EXPLAIN-TEXT",
            "mistakes": [{"answer": "bucket", "feedback": "FEEDBACK-MISTAKE-TEXT"}],
        },
        {
            "id": "fx-design",
            "type": "design",
            "title": "Index it",
            "prompt": "Make the listing cheap.",
            "checker": "examines-no-more-than-returns",
            "params": {
                "collection": "products",
                "filter": {"category._id": "cat-08"},
                "sort": [["price", 1], ["_id", 1]],
                "limit": 20,
            },
            "setup": {"name": "store-products", "params": {"scale": "tiny", "seed": 7}},
        },
    ],
}

PLAINTEXT = ["EXPLAIN", "FEEDBACK", '"correct"', '"answer"', "Subset pattern", "bucket", "2.5"]
"""Strings from the answer file that must not appear in the bank built from it."""


def write_answers(folder: Path, document: dict[str, Any] | None = None) -> Path:
    """The fixture answer file (JSON, indented) in ``folder``."""
    path = folder / "answers.json"
    path.write_text(json.dumps(document or ANSWERS, indent=2))
    return path


def build_fixture(folder: Path) -> dict[str, dict[str, Any]]:
    """Build the fixture bank in ``folder``; its questions by id."""
    from workbook.quiz.authoring import build_bank

    bank = build_bank(write_answers(folder), folder / "fixture.json")
    return {question["id"]: question for question in bank["questions"]}

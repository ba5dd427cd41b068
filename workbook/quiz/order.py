"""The order a question's options are shown in: shuffled with a fixed seed, right answers spread evenly.

Bank files keep options in the author's order (the right one was second in 20 of 26 choice
questions), so the widget shows them in another order, the same for every learner and every run:

- each choice question's right option goes to a target position, and the targets of all questions
  with the same number of options are a seeded shuffle of ``0, 1, ..., n-1, 0, 1, ...``, so no
  position holds more than its share (``ceil(k / n)`` of ``k`` questions with ``n`` options);
- the other options (and every option of a many-choice question) are shuffled with a seed made
  from the question's id, so the order depends on nothing but the bank.

Options keep their ids, so grading, and the feedback filed under each option, follow the option
wherever it is shown. Design tasks keep the author's order: their options name shapes in the
order the course teaches them, and their checker grades the database, not the pick.

The right option is found by hashing each option, as grading does: this reveals nothing a learner
cannot learn by clicking each option (see ``hashing.py``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from functools import cache
from typing import Any

from workbook.quiz import hashing
from workbook.quiz.bank import all_questions

SEED = "workbook-quiz-order-v1"
"""Changing this reshuffles every question (and every notebook's widget state): change it deliberately."""

SHUFFLED_TYPES = ("choice", "many")
"""The question types whose options are shown shuffled."""


def right_option(question: Mapping[str, Any]) -> str | None:
    """The id of a choice question's right option, found by hashing each one (``None`` for other types)."""
    if question["type"] != "choice":
        return None
    for option in question["options"]:
        if hashing.answer_hash(question["salt"], hashing.choice_key(option["id"])) == question["answer_hash"]:
            return str(option["id"])
    return None


def _targets(questions: Mapping[str, Mapping[str, Any]]) -> dict[str, int]:
    """Where each choice question's right option goes: per option count, a shuffled even spread."""
    by_size: dict[int, list[str]] = {}
    for question_id in sorted(questions):
        asked = questions[question_id]
        if asked["type"] == "choice" and right_option(asked) is not None:
            by_size.setdefault(len(asked["options"]), []).append(question_id)
    targets: dict[str, int] = {}
    for size, ids in sorted(by_size.items()):
        positions = [index % size for index in range(len(ids))]
        random.Random(f"{SEED}:targets:{size}").shuffle(positions)
        targets.update(zip(ids, positions, strict=True))
    return targets


@cache
def _bank_targets() -> dict[str, int]:
    return _targets(all_questions())


def shown_options(question: Mapping[str, Any], targets: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """The question's options in the order the widget shows them (see the module docstring)."""
    options = [dict(option) for option in question.get("options", [])]
    if question["type"] not in SHUFFLED_TYPES:
        return options
    rng = random.Random(f"{SEED}:{question['id']}")
    right = right_option(question)
    target = (_bank_targets() if targets is None else targets).get(question["id"])
    if right is None or target is None:
        rng.shuffle(options)
        return options
    others = [option for option in options if option["id"] != right]
    rng.shuffle(others)
    others.insert(target, next(option for option in options if option["id"] == right))
    return others

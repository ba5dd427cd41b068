"""Grading in the kernel: an answer and a question in, a :class:`Result` out.

Closed questions are graded by hashing the learner's normalised answer (see ``hashing.py``);
design tasks by their checker on the learner's database (see ``design.py``).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from pymongo.database import Database

from workbook.errors import AnswerError, UnknownChoiceError
from workbook.quiz import hashing

RIGHT = "Correct."
NOT_YET = "Not yet. Have another go: you can retry as often as you like."


def named(question: Mapping[str, Any]) -> str:
    """How a message names a question: by the title the learner sees above it, not its internal id.

    >>> named({"id": "nb02-2", "title": "Renaming the most-used part"})
    '"Renaming the most-used part"'
    """
    return f'"{question["title"]}"' if question.get("title") else str(question["id"])


@dataclass(frozen=True)
class Result:
    """One graded attempt: right or not, the feedback, and any facts a design checker measured."""

    question_id: str
    correct: bool
    feedback: str
    answer: Any = None
    facts: dict[str, Any] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return self.correct

    def __repr__(self) -> str:
        mark = "✓ correct" if self.correct else "✗ not yet"
        return f"{self.question_id}: {mark}\n{self.feedback}"

    def _repr_html_(self) -> str:
        colour, mark = ("#1b5e20", "✓ Correct") if self.correct else ("#8a1c1c", "✗ Not yet")
        return (
            f"<div style='border-left:4px solid {colour};padding:4px 10px'>"
            f"<b style='color:{colour}'>{mark}</b> <span style='color:#666'>({html.escape(self.question_id)})</span>"
            f"<div style='white-space:pre-wrap'>{html.escape(self.feedback)}</div></div>"
        )


def _sealed(question: Mapping[str, Any], key: str) -> str | None:
    """The feedback filed under answer ``key``, unsealed, if the bank has any."""
    sealed = question["feedback"].get(hashing.lookup_key(question["salt"], key))
    return None if sealed is None else hashing.unseal(question["salt"], key, sealed)


def option_id(question: Mapping[str, Any], answer: Any) -> str:
    """The option an answer names: its id, or its text (compared normalised)."""
    options = question["options"]
    for option in options:
        if answer == option["id"] or (isinstance(answer, str) and answer.strip().lower() == option["id"].lower()):
            return option["id"]
    wanted = hashing.normalise_text(str(answer))
    for option in options:
        if hashing.normalise_text(option["text"]) == wanted:
            return option["id"]
    raise UnknownChoiceError(f"option of {named(question)}", answer, [option["id"] for option in options])


def _option_ids(question: Mapping[str, Any], answer: Any) -> list[str]:
    if answer is None:
        return []
    if isinstance(answer, str):
        answer = [part for part in re.split(r"\s*,\s*", answer.strip()) if part]
    if not isinstance(answer, Iterable):
        raise AnswerError(f"{named(question)} takes a list of options, not {answer!r}.", fix='Pass e.g. ["a", "c"].')
    return sorted({option_id(question, item) for item in answer})


def grade_choice(question: Mapping[str, Any], answer: Any) -> Result:
    """One right option."""
    chosen = option_id(question, answer)
    key = hashing.choice_key(chosen)
    correct = hashing.answer_hash(question["salt"], key) == question["answer_hash"]
    feedback = _sealed(question, key) or (RIGHT if correct else NOT_YET)
    return Result(question["id"], correct, feedback, chosen)


def grade_many(question: Mapping[str, Any], answer: Any) -> Result:
    """A set of right options: right only when the whole set is."""
    chosen = _option_ids(question, answer)
    key = hashing.set_key(chosen)
    correct = hashing.answer_hash(question["salt"], key) == question["answer_hash"]
    texts = {option["id"]: option["text"] for option in question["options"]}
    lines = []
    for option in chosen:
        note = _sealed(question, hashing.choice_key(option))
        if note:
            lines.append(f"• {texts[option]}: {note}")
    if correct:
        lines.insert(0, _sealed(question, key) or RIGHT)
    else:
        lines.insert(0, "Not yet: the set you picked is not the right one (one may be missing, or one too many).")
    return Result(question["id"], correct, "\n".join(lines), chosen)


MAX_ANSWER = Decimal(10) ** 15
"""Numeric answers are compared up to this size: every quantity in the course is far smaller."""

MAX_ANSWER_CHARS = 64
"""A numeric answer longer than this is not read (a 5,000-digit paste is a mistake, not an answer)."""


def _shown(answer: Any) -> str:
    text = repr(answer)
    return text if len(text) <= 40 else f"{text[:30]}... ({len(str(answer))} characters)"


UNIT_ALIASES = {"MiB": ("MB",), "KiB": ("KB", "kB"), "GiB": ("GB",)}
"""Units learners write for the binary one a question asks for; accepted, with :func:`unit_note`."""


def _written_unit(question: Mapping[str, Any], answer: Any) -> tuple[str, str]:
    """The number part of an answer and the unit it was written with ("" if none)."""
    text = str(answer).strip()
    unit = question.get("unit", "")
    for written in (unit, *UNIT_ALIASES.get(unit, ())):
        if written and text.lower().endswith(written.lower()):
            return text[: -len(written)].strip(), text[-len(written) :]
    return text, ""


def unit_note(question: Mapping[str, Any], answer: Any) -> str:
    """A note when an answer used a decimal unit for the binary one asked for ("16MB" for MiB), else "".

    >>> unit_note({"unit": "MiB"}, "16MB")
    'Note: you wrote MB; the question is in MiB (1 MiB = 1,048,576 bytes, 1 MB = 1,000,000 bytes).'
    """
    unit = question.get("unit", "")
    _, written = _written_unit(question, answer)
    if not written or written.lower() == unit.lower():
        return ""
    power = {"KiB": 1, "MiB": 2, "GiB": 3}[unit]
    return (
        f"Note: you wrote {written}; the question is in {unit} "
        f"(1 {unit} = {1024**power:,} bytes, 1 {written} = {1000**power:,} bytes)."
    )


GROUP_SEPARATORS = ",  \u00a0\u202f_'"
"""What may group a number's digits in threes: the comma every table in the course prints, a space (also
no-break and narrow no-break, as some locales print it), Python's underscore, the Swiss apostrophe."""

_GROUPED = re.compile(r"[+-]?\d{1,3}(?P<sep>[" + re.escape(GROUP_SEPARATORS) + r"])\d{3}(?:(?P=sep)\d{3})*(?:\.\d+)?")
_DECIMAL_COMMA = re.compile(r"[+-]?\d+,\d+")


def plain_number(text: str) -> str:
    """A number as the course prints it ("161,000", "10 000", "1e4") as a plain decimal string; ``text`` if not one.

    Groups of three digits after the first group are joined; one separator throughout. A comma that
    cannot be a thousands separator ("2,5") raises ValueError: it reads as a decimal comma, and
    guessing would grade the wrong number.

    >>> [plain_number(t) for t in ("161,000", "10 000", "1,234.5", "1e4", "10_000", "-2,500")]
    ['161000', '10000', '1234.5', '1e4', '10000', '-2500']
    """
    text = text.strip()
    if _GROUPED.fullmatch(text):
        return "".join(ch for ch in text if ch not in GROUP_SEPARATORS)
    if _DECIMAL_COMMA.fullmatch(text):
        raise ValueError(f"{text!r} has a comma that does not group thousands")
    return text


def parse_number(question: Mapping[str, Any], answer: Any) -> str:
    """A numeric answer as a decimal string; a trailing unit (the question's, or "MB" for MiB) is allowed.

    >>> parse_number({"id": "q", "unit": "MiB", "step": 0.1}, " 2.5 MiB")
    '2.5'
    >>> parse_number({"id": "q", "unit": "MiB", "step": 0.1}, "16MB")
    '16'
    """
    unit = question.get("unit", "")
    written, _ = _written_unit(question, answer)
    shown = f" in {unit}" if unit else ""
    try:
        text = plain_number(written)
    except ValueError:
        raise AnswerError(
            f"{named(question)} takes a number{shown}: in {_shown(answer)} the comma does not group thousands.",
            fix="Write the decimal point as a dot (2.5), and group thousands by three (10,000) or not at all (10000).",
        ) from None
    try:
        value = hashing.to_decimal(text) if len(text) <= MAX_ANSWER_CHARS else None
    except ValueError:
        raise AnswerError(
            f"{named(question)} takes a number{shown}, not {_shown(answer)}.",
            fix="Type a number as the course prints it, e.g. 3, 2.5 or 10,000.",
        ) from None
    try:
        in_range = value is not None and abs(value) <= MAX_ANSWER
        if in_range:
            hashing.grid_cell(text, question.get("step", 1))  # the grid must hold it too
    except (ArithmeticError, ValueError):  # decimal.InvalidOperation and friends
        in_range = False
    if not in_range:
        raise AnswerError(
            f"{named(question)} takes a number in range (at most {MAX_ANSWER:,.0f} either way){shown}: "
            f"{_shown(answer)} is not one.",
            fix="Type the number as the course prints it, e.g. 3, 2.5 or 10,000.",
        )
    return text


def grade_numeric(question: Mapping[str, Any], answer: Any) -> Result:
    """A number, accepted when it rounds (to the question's step) to within the tolerance."""
    value = parse_number(question, answer)
    salt, step, tolerance = question["salt"], question["step"], question["tolerance"]
    cell = hashing.matching_cell(salt, question["answer_hash"], value, step, tolerance)
    note = unit_note(question, answer)
    if cell is not None:
        feedback = _sealed(question, hashing.cell_key(cell)) or RIGHT
        return Result(question["id"], True, f"{feedback}\n{note}" if note else feedback, value)
    mistake = _sealed(question, hashing.cell_key(hashing.grid_cell(value, step))) or NOT_YET
    return Result(question["id"], False, f"{mistake}\n{note}" if note else mistake, value)


def grade_text(question: Mapping[str, Any], answer: Any) -> Result:
    """Short text, compared without case, punctuation or extra whitespace."""
    if not isinstance(answer, str) or not answer.strip():
        raise AnswerError(f"{named(question)} takes a short text answer, not {answer!r}.", fix='Pass e.g. "a word".')
    key = hashing.text_key(answer)
    correct = hashing.answer_hash(question["salt"], key) in question["answer_hashes"]
    return Result(question["id"], correct, _sealed(question, key) or (RIGHT if correct else NOT_YET), answer)


def grade_design(question: Mapping[str, Any], answer: Any, db: Database) -> Result:
    """A design task: the checker looks at the learner's database."""
    from workbook.quiz.design import run_checker

    if question.get("options") and answer is not None:
        answer = option_id(question, answer)
    outcome = run_checker(question, answer, db)
    return Result(question["id"], outcome.correct, outcome.feedback, answer, outcome.facts)


def grade_answer(question: Mapping[str, Any], answer: Any, db: Database | None = None) -> Result:
    """Grade ``answer`` to ``question`` (design tasks look at ``db``)."""
    kind = question["type"]
    if kind == "design":
        if db is None:
            raise AnswerError(f"{named(question)} is graded on a database; none was given.", fix="Pass db=...")
        return grade_design(question, answer, db)
    if answer is None or answer == "" or answer == ():
        raise AnswerError(f"{named(question)} needs an answer first.", fix="Pick an option or type your answer.")
    graders = {"choice": grade_choice, "many": grade_many, "numeric": grade_numeric, "text": grade_text}
    return graders[kind](question, answer)

"""Answers as salted hashes, feedback sealed under the answer it belongs to.

The bank files hold no plaintext answer: each closed question has its own random salt and the
sha256 of ``salt, purpose, normalised answer``. The kernel grades by hashing what the learner gave.

Feedback is *sealed*: XOR-ed with a SHA-256 keystream derived from the salt and the answer it
belongs to, and filed under a separate lookup hash. Reading a bank file therefore tells you neither
which option is right nor what the feedback says; only giving an answer unlocks that answer's
feedback (the explanation is filed under the right answer, so it appears once you have it).

What this is not: encryption against a determined learner. A question with four options has four
possible answers, and anyone can hash all four, exactly as anyone can click all four in the widget
(retries are allowed on purpose). The aim is that opening a file, a notebook or the repository
spoils nothing, and that no answer key exists to leak.

Numeric answers with a tolerance cannot be hashed as one value, so they live on a grid: the author
gives a ``step`` (the precision answers are compared at) and a tolerance that is a whole number of
steps. The bank stores the hash of the answer's grid cell ``round(answer / step)``; a learner's
value is rounded to its cell ``j`` and accepted if any of ``j - n .. j + n`` hashes to the stored
cell, where ``n = tolerance / step``. So a value is accepted exactly when, rounded to the step,
it is within the tolerance.

>>> normalise_text("  Read  Often, Write-Rarely! ")
'read often write rarely'
>>> grid_cell("16.004", "0.01"), grid_cell(16.005, "0.01")
(1600, 1601)
>>> unseal("s", "answer:a", seal("s", "answer:a", "Right: the workload."))
'Right: the workload.'
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import unicodedata
from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

SCHEME = "sha256-v1"
"""The hashing scheme's name, written into every bank file."""

MAX_TOLERANCE_STEPS = 1000
"""A tolerance may span at most this many grid steps either side (each is one hash to try)."""


def new_salt() -> str:
    """A fresh random salt for one question: 16 bytes, hex."""
    return secrets.token_hex(16)


def _digest(salt: str, purpose: str, text: str) -> str:
    return hashlib.sha256(f"{salt}\x00{purpose}\x00{text}".encode()).hexdigest()


def answer_hash(salt: str, answer: str) -> str:
    """The stored hash of a normalised answer."""
    return _digest(salt, "answer", answer)


def lookup_key(salt: str, answer: str) -> str:
    """Where the feedback for ``answer`` is filed (a different hash from :func:`answer_hash`)."""
    return _digest(salt, "lookup", answer)


def _keystream(salt: str, answer: str, length: int) -> bytes:
    key = hashlib.sha256(f"{salt}\x00seal\x00{answer}".encode()).digest()
    blocks = (hashlib.sha256(key + i.to_bytes(8, "big")).digest() for i in range(length // 32 + 1))
    return b"".join(blocks)[:length]


def seal(salt: str, answer: str, message: str, width: int = 0) -> str:
    """``message`` made unreadable except to someone who gives ``answer``, padded to ``width`` bytes.

    A question's sealed messages are padded to one width, so their lengths do not point at the
    right answer (whose message is the longest: it carries the explanation).
    """
    data = message.encode().ljust(width, b"\0")
    return base64.b64encode(
        bytes(a ^ b for a, b in zip(data, _keystream(salt, answer, len(data)), strict=True))
    ).decode()


def unseal(salt: str, answer: str, sealed: str) -> str:
    """The message sealed under ``answer`` (garbage, replaced, under any other answer)."""
    data = base64.b64decode(sealed)
    plain = bytes(a ^ b for a, b in zip(data, _keystream(salt, answer, len(data)), strict=True))
    return plain.rstrip(b"\0").decode(errors="replace")


def normalise_text(text: str) -> str:
    """Short-text answers compared without case, punctuation or extra whitespace."""
    folded = unicodedata.normalize("NFKC", str(text)).casefold()
    no_punctuation = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in folded)
    return " ".join(no_punctuation.split())


def choice_key(option_id: str) -> str:
    """A single-choice answer: the option's id."""
    return f"option:{option_id}"


def set_key(option_ids: Iterable[str]) -> str:
    """A many-choice answer: the sorted set of option ids (order and repeats do not matter)."""
    return "set:" + ",".join(sorted(set(option_ids)))


def text_key(text: str) -> str:
    """A short-text answer, normalised."""
    return f"text:{normalise_text(text)}"


def cell_key(cell: int) -> str:
    """A numeric answer's grid cell."""
    return f"cell:{cell}"


def to_decimal(value: object) -> Decimal:
    """A number (int, float or numeric string) as an exact Decimal; ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a number")
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        raise ValueError(f"{value!r} is not a number") from None
    if not number.is_finite():
        raise ValueError(f"{value!r} is not a finite number")
    return number


def grid_cell(value: object, step: object) -> int:
    """The grid cell of ``value``: ``value / step`` rounded half up to a whole number."""
    return int((to_decimal(value) / to_decimal(step)).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def tolerance_steps(tolerance: object, step: object) -> int:
    """The tolerance as a whole number of steps; ValueError if it is not one."""
    ratio = to_decimal(tolerance) / to_decimal(step)
    if ratio != ratio.to_integral_value() or ratio < 0:
        raise ValueError(f"the tolerance {tolerance} is not a whole number of steps of {step}")
    if ratio > MAX_TOLERANCE_STEPS:
        raise ValueError(f"the tolerance {tolerance} spans more than {MAX_TOLERANCE_STEPS} steps of {step}")
    return int(ratio)


def matching_cell(salt: str, stored: str, value: object, step: object, tolerance: object) -> int | None:
    """The answer's grid cell if ``value`` is within the tolerance of it (on the grid), else None."""
    cell, spread = grid_cell(value, step), tolerance_steps(tolerance, step)
    for offset in sorted(range(-spread, spread + 1), key=abs):
        if answer_hash(salt, cell_key(cell + offset)) == stored:
            return cell + offset
    return None


def sealed_width(messages: Iterable[str], block: int = 64) -> int:
    """The width all of a question's sealed messages are padded to: the longest, rounded up to ``block``."""
    longest = max((len(m.encode()) for m in messages), default=0)
    return -(-longest // block) * block

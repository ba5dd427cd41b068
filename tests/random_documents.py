"""Random nested values, and a form of a value that ``==`` compares by types and key order too: for tests that
hold a faster engine path to mongoeco's own (tests/test_unwind.py, tests/test_union_with.py)."""

from __future__ import annotations

import random
from typing import Any


def random_value(rng: random.Random, depth: int) -> Any:
    """A scalar, an array or a subdocument, nested at most three deep."""
    roll = rng.random()
    if depth > 2 or roll < 0.4:
        return rng.choice([1, 2.5, "s", None, True, [], {}])
    if roll < 0.7:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {f"f{i}": random_value(rng, depth + 1) for i in range(rng.randrange(4))}


def comparable(value: Any) -> Any:
    """A value with its types and its keys' order made comparable by ``==``."""
    if isinstance(value, dict):
        return [(key, comparable(item)) for key, item in value.items()]
    if isinstance(value, list):
        return ["list", [comparable(item) for item in value]]
    return (type(value).__name__, value)

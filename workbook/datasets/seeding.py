"""Seeded random streams and integer-only sampling, identical on every machine.

Only integer operations of `random.Random` reach the data (`randrange`, `choice`,
`shuffle`, ...): no floats from libm, so the same seed gives the same bytes everywhere.
"""

from __future__ import annotations

import hashlib
import random
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

# Weights are scaled integers so that 1/k stays precise without floats.
_WEIGHT_SCALE = 10**12


def stream(seed: int, label: str) -> random.Random:
    """Return a Random for one named sub-stream, independent of every other label."""
    digest = hashlib.sha256(f"{seed}:{label}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def zipf_cumulative(n: int, offset: int = 0) -> list[int]:
    """Return cumulative integer weights for ranks 1..n, weight_k = C // (k + offset)."""
    return list(accumulate(_WEIGHT_SCALE // (rank + offset) for rank in range(1, n + 1)))


def weighted_index(rng: random.Random, cumulative: Sequence[int]) -> int:
    """Draw an index with probability proportional to its weight, using integers only."""
    return bisect_right(cumulative, rng.randrange(cumulative[-1]))


def weighted_counts(rng: random.Random, cumulative: Sequence[int], draws: int) -> list[int]:
    """Return how many of `draws` weighted draws landed on each index (a multinomial)."""
    counts = [0] * len(cumulative)
    total = cumulative[-1]
    randrange = rng.randrange
    for _ in range(draws):
        counts[bisect_right(cumulative, randrange(total))] += 1
    return counts


def distinct_indices(rng: random.Random, n: int, k: int) -> list[int]:
    """Return k distinct indices from range(n) in random order (sparse Fisher-Yates).

    >>> sorted(distinct_indices(stream(7, "example"), 5, 5))
    [0, 1, 2, 3, 4]
    """
    if not 0 <= k <= n:
        raise ValueError(f"Cannot draw {k} distinct indices from {n}.")
    swapped: dict[int, int] = {}
    picked = []
    for i in range(k):
        j = rng.randrange(i, n)
        picked.append(swapped.get(j, j))
        swapped[j] = swapped.get(i, i)
    return picked


def ranks(rng: random.Random, n: int) -> list[int]:
    """Return a random permutation: ranks(...)[rank] is the item holding that rank."""
    order = list(range(n))
    rng.shuffle(order)
    return order


@dataclass(frozen=True)
class Weighted[T]:
    """A fixed table of values with integer weights, drawn from without floats."""

    values: tuple[T, ...]
    cumulative: tuple[int, ...]

    @classmethod
    def of(cls, pairs: Sequence[tuple[T, int]]) -> Weighted[T]:
        """Build a table from (value, integer weight) pairs."""
        return cls(tuple(value for value, _ in pairs), tuple(accumulate(w for _, w in pairs)))

    def draw(self, rng: random.Random) -> T:
        """Draw one value."""
        return self.values[bisect_right(self.cumulative, rng.randrange(self.cumulative[-1]))]

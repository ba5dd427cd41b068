"""The named dataset generators and `generate`, the one way to call them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from workbook.datasets.dataset import Dataset
from workbook.datasets.followers import SIZES as FOLLOWERS_SIZES
from workbook.datasets.followers import generate_followers
from workbook.datasets.parts import SIZES as PARTS_SIZES
from workbook.datasets.parts import generate_parts
from workbook.datasets.store import SIZES as STORE_SIZES
from workbook.datasets.store import generate_store
from workbook.errors import UnknownChoiceError

# Bump when a generator's output changes on purpose, so stale samples are easy to spot.
GENERATOR_VERSION = 1
SCALES = ("tiny", "small", "medium", "large")


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset generator, what it models, and how big it is at each scale."""

    description: str
    sizes: Mapping[str, Any]
    build: Callable[[Any, int], dict[str, list[dict[str, Any]]]]


DATASETS: dict[str, DatasetSpec] = {
    "followers": DatasetSpec(
        "Users and who follows whom; a few accounts are followed by a large share of users.",
        FOLLOWERS_SIZES,
        generate_followers,
    ),
    "parts": DatasetSpec(
        "Parts, products built from shared parts, and the occasional part rename.", PARTS_SIZES, generate_parts
    ),
    "store": DatasetSpec(
        "An online store: categories, products, reviews, customers and orders.", STORE_SIZES, generate_store
    ),
}


def check_name(name: str) -> str:
    """Return `name` if it is a known dataset, else raise UnknownChoiceError."""
    if name not in DATASETS:
        raise UnknownChoiceError("dataset", name, sorted(DATASETS))
    return name


def check_scale(scale: str) -> str:
    """Return `scale` if it is a known scale, else raise UnknownChoiceError."""
    if scale not in SCALES:
        raise UnknownChoiceError("scale", scale, SCALES)
    return scale


def sizes(name: str, scale: str = "small") -> dict[str, int]:
    """Return how many of each entity `generate(name, scale)` makes (targets, before caps)."""
    return asdict(DATASETS[check_name(name)].sizes[check_scale(scale)])


def generate(name: str, scale: str = "small", seed: int = 7) -> Dataset:
    """Generate a dataset: the same name, scale and seed give the same bytes on every machine.

    >>> generate("followers", "tiny").counts()
    {'users': 60, 'follows': 300}
    """
    spec = DATASETS[check_name(name)]
    check_scale(scale)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an integer such as 7, not {seed!r}.")
    return Dataset(name, scale, seed, spec.build(spec.sizes[scale], seed))

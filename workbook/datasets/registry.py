"""The one registry of datasets: each name with what it models, its sizes and its generator (pure).

What is built on a dataset (its shapes, operations and workload) is registered one layer up, in
:mod:`workbook.dataset_parts`: those modules look datasets up here, so this module imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from workbook.datasets.blog import SIZES as BLOG_SIZES
from workbook.datasets.blog import generate_blog
from workbook.datasets.dataset import Dataset
from workbook.datasets.followers import SIZES as FOLLOWERS_SIZES
from workbook.datasets.followers import generate_followers
from workbook.datasets.parts import SIZES as PARTS_SIZES
from workbook.datasets.parts import generate_parts
from workbook.datasets.store import SIZES as STORE_SIZES
from workbook.datasets.store import generate_store
from workbook.errors import ArgumentTypeError, UnknownChoiceError

# Bump when a generator's output changes on purpose, so stale samples are easy to spot.
GENERATOR_VERSION = 1
SCALES = ("tiny", "small", "medium", "large")


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset: what it models, how big it is at each scale, and its generator."""

    name: str
    description: str
    sizes: Mapping[str, Any]
    build: Callable[[Any, int], dict[str, list[dict[str, Any]]]]


DATASETS: dict[str, DatasetSpec] = {
    "followers": DatasetSpec(
        "followers",
        "Users and who follows whom; a few accounts are followed by a large share of users.",
        FOLLOWERS_SIZES,
        generate_followers,
    ),
    "parts": DatasetSpec(
        "parts",
        "Parts, products built from shared parts, and the occasional part rename.",
        PARTS_SIZES,
        generate_parts,
    ),
    "store": DatasetSpec(
        "store",
        "An online store: categories, products, reviews, customers and orders.",
        STORE_SIZES,
        generate_store,
    ),
}


CAPSTONE_DATASETS: dict[str, DatasetSpec] = {
    "blog": DatasetSpec(
        "blog",
        "A blog: users, posts, comments and likes; a few posts go viral. Shapes: three references and yours.",
        BLOG_SIZES,
        generate_blog,
    ),
}
"""Datasets registered like the built-ins but kept out of ``DATASETS`` (no committed samples, not in
the explorer): the capstone's blog, whose shapes include the ones learners register."""


def _known() -> dict[str, DatasetSpec]:
    return {**DATASETS, **CAPSTONE_DATASETS}


def check_name(name: str) -> str:
    """Return `name` if it is a known dataset, else raise UnknownChoiceError."""
    if not isinstance(name, str):
        raise ArgumentTypeError("dataset", name, "a dataset name such as 'store'", choices=sorted(_known()))
    if name not in _known():
        raise UnknownChoiceError("dataset", name, sorted(_known()))
    return name


def dataset_spec(name: str) -> DatasetSpec:
    """Everything registered for the dataset called ``name`` (errors list the valid names)."""
    return _known()[check_name(name)]


def check_scale(scale: str) -> str:
    """Return `scale` if it is a known scale, else raise UnknownChoiceError."""
    if not isinstance(scale, str):
        raise ArgumentTypeError("scale", scale, "a scale name such as 'small'", choices=SCALES)
    if scale not in SCALES:
        raise UnknownChoiceError("scale", scale, SCALES)
    return scale


def sizes(name: str, scale: str = "small") -> dict[str, int]:
    """Return how many of each entity `generate(name, scale)` makes (targets, before caps)."""
    return asdict(dataset_spec(name).sizes[check_scale(scale)])


GENERATED_DOCUMENTS_PER_SECOND = 40_000
"""About how fast the generators make documents (0.5-1.2 s for the 31,500-50,025 documents of each
dataset at ``small``, measured 2026-12-02 at load 1.5-3): the estimate on :func:`generate`'s bar."""


def generate(name: str, scale: str = "small", seed: int = 7, *, progress: bool = True) -> Dataset:
    """Generate a dataset: the same name, scale and seed give the same bytes on every machine.

    A bar shows the time spent once generating passes a second (``progress=False``: none).

    >>> generate("followers", "tiny").counts()
    {'users': 60, 'follows': 300}
    """
    from workbook.waiting import busy

    spec = dataset_spec(name)
    check_scale(scale)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ArgumentTypeError("seed", seed, "an integer such as 7")
    usual = sum(sizes(name, scale).values()) / GENERATED_DOCUMENTS_PER_SECOND
    with busy(f"generate {name} at {scale}", estimate_s=usual, progress=progress):
        documents = spec.build(spec.sizes[scale], seed)
    return Dataset(name, scale, seed, documents)

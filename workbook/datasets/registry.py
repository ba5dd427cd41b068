"""The one registry of datasets: each name with its generator, sizes, shapes, operations and workload.

Generators and shapes are pure (no server); operations and workloads talk to a database. Both are
registered here, side by side, and the database side is imported only when first asked for, so the
pure layer never imports the database layer and nothing imports in a circle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from workbook.operations.base import Operations
    from workbook.shapes.spec import ShapeSpec
    from workbook.workloads import Workload

# Bump when a generator's output changes on purpose, so stale samples are easy to spot.
GENERATOR_VERSION = 1
SCALES = ("tiny", "small", "medium", "large")


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset: what it models, how big it is at each scale, and every part registered for it."""

    name: str
    description: str
    sizes: Mapping[str, Any]
    build: Callable[[Any, int], dict[str, list[dict[str, Any]]]]
    shapes: Callable[[], dict[str, ShapeSpec]]
    """Its three declared shapes (pure)."""
    operations: Callable[[], dict[str, type[Operations]]]
    """Shape name -> the class implementing its operations in that shape (database layer)."""
    workload: Callable[[], Workload]
    """Its operations' frequencies and argument pickers (database layer)."""


def _store_shapes() -> dict[str, ShapeSpec]:
    from workbook.shapes.store import shapes

    return shapes()


def _store_operations() -> dict[str, type[Operations]]:
    from workbook.operations.store import OPERATIONS

    return dict(OPERATIONS)


def _store_workload() -> Workload:
    from workbook.workloads import store_workload

    return store_workload()


def _followers_shapes() -> dict[str, ShapeSpec]:
    from workbook.shapes.followers import shapes

    return shapes()


def _followers_operations() -> dict[str, type[Operations]]:
    from workbook.operations.followers import OPERATIONS

    return dict(OPERATIONS)


def _followers_workload() -> Workload:
    from workbook.workloads import followers_workload

    return followers_workload()


def _parts_shapes() -> dict[str, ShapeSpec]:
    from workbook.shapes.parts import shapes

    return shapes()


def _parts_operations() -> dict[str, type[Operations]]:
    from workbook.operations.parts import OPERATIONS

    return dict(OPERATIONS)


def _parts_workload() -> Workload:
    from workbook.workloads import parts_workload

    return parts_workload()


DATASETS: dict[str, DatasetSpec] = {
    "followers": DatasetSpec(
        "followers",
        "Users and who follows whom; a few accounts are followed by a large share of users.",
        FOLLOWERS_SIZES,
        generate_followers,
        _followers_shapes,
        _followers_operations,
        _followers_workload,
    ),
    "parts": DatasetSpec(
        "parts",
        "Parts, products built from shared parts, and the occasional part rename.",
        PARTS_SIZES,
        generate_parts,
        _parts_shapes,
        _parts_operations,
        _parts_workload,
    ),
    "store": DatasetSpec(
        "store",
        "An online store: categories, products, reviews, customers and orders.",
        STORE_SIZES,
        generate_store,
        _store_shapes,
        _store_operations,
        _store_workload,
    ),
}


def _blog_shapes() -> dict[str, ShapeSpec]:
    from workbook.capstone.registration import shape_specs

    return shape_specs()


def _blog_operations() -> dict[str, type[Operations]]:
    from workbook.capstone.registration import operation_classes

    return operation_classes()


def _blog_workload() -> Workload:
    from workbook.capstone.workload import blog_workload

    return blog_workload()


CAPSTONE_DATASETS: dict[str, DatasetSpec] = {
    "blog": DatasetSpec(
        "blog",
        "A blog: users, posts, comments and likes; a few posts go viral. Shapes: three references and yours.",
        BLOG_SIZES,
        generate_blog,
        _blog_shapes,
        _blog_operations,
        _blog_workload,
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


def generate(name: str, scale: str = "small", seed: int = 7) -> Dataset:
    """Generate a dataset: the same name, scale and seed give the same bytes on every machine.

    >>> generate("followers", "tiny").counts()
    {'users': 60, 'follows': 300}
    """
    spec = dataset_spec(name)
    check_scale(scale)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ArgumentTypeError("seed", seed, "an integer such as 7")
    return Dataset(name, scale, seed, spec.build(spec.sizes[scale], seed))

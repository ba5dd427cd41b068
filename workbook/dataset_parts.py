"""What is built on each dataset: its three declared shapes, its operations in each shape, its workload.

One layer above :mod:`workbook.shapes`, :mod:`workbook.operations`, :mod:`workbook.workloads` and the
capstone's blog: this module imports them (each when first asked for, so a pure caller never loads
the database layer), and none of them imports this module, so nothing imports in a circle. The
datasets themselves (name, sizes, generator) are :mod:`workbook.datasets.registry`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pymongo.database import Database

from workbook.datasets.registry import check_name
from workbook.errors import ArgumentTypeError, UnknownChoiceError
from workbook.shapes import check_shape

if TYPE_CHECKING:
    from workbook.operations.base import Operations
    from workbook.shapes.spec import ShapeSpec
    from workbook.workloads import Workload


@dataclass(frozen=True)
class DatasetParts:
    """Every part registered for one dataset, each built when first asked for."""

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


def _blog_shapes() -> dict[str, ShapeSpec]:
    from workbook.blog.registration import shape_specs

    return shape_specs()


def _blog_operations() -> dict[str, type[Operations]]:
    from workbook.blog.registration import operation_classes

    return operation_classes()


def _blog_workload() -> Workload:
    from workbook.blog.workload import blog_workload

    return blog_workload()


REGISTERED: dict[str, DatasetParts] = {
    "followers": DatasetParts(_followers_shapes, _followers_operations, _followers_workload),
    "parts": DatasetParts(_parts_shapes, _parts_operations, _parts_workload),
    "store": DatasetParts(_store_shapes, _store_operations, _store_workload),
    "blog": DatasetParts(_blog_shapes, _blog_operations, _blog_workload),
}
"""Each dataset of :mod:`workbook.datasets.registry` (built-in and capstone) with its parts."""


def dataset_parts(dataset: str) -> DatasetParts:
    """Everything built on the dataset called ``dataset`` (errors list the valid names)."""
    return REGISTERED[check_name(dataset)]


def shape_spec(dataset: str, shape: str) -> ShapeSpec:
    """The declared shape ``shape`` of ``dataset`` (errors list the valid names)."""
    shapes = dataset_parts(dataset).shapes()
    if isinstance(shape, str) and shape in shapes:  # the three, or a shape a learner registered (capstone)
        return shapes[shape]
    check_shape(shape)
    raise UnknownChoiceError(f"shape of the {dataset} dataset", shape, list(shapes))


def operations(dataset: str, shape: str, db: Database) -> Operations:
    """The operations of ``dataset`` in ``shape``, bound to ``db`` (one of the learner's databases).

    Learners get these from what ``load()`` returns: ``loaded.ops``.
    """
    classes = dataset_parts(dataset).operations()
    if not isinstance(db, Database):
        raise ArgumentTypeError("db", db, "a pymongo Database", fix="Use what workbook.load() returned: loaded.ops.")
    if isinstance(shape, str) and shape in classes:  # the three, or a shape a learner registered (capstone)
        return classes[shape](db)
    return classes[check_shape(shape)](db)


def workload(dataset: str) -> Workload:
    """The workload of ``dataset``: its operations with their rates and argument pickers."""
    if not isinstance(dataset, str) or dataset not in REGISTERED:
        raise UnknownChoiceError("workload", dataset, sorted(REGISTERED))
    return REGISTERED[dataset].workload()

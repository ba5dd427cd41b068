"""Document shapes: each dataset declared as embedded, referenced and hybrid."""

from __future__ import annotations

from workbook.errors import ArgumentTypeError, UnknownChoiceError
from workbook.shapes.spec import SHAPE_NAMES, CollectionSpec, IndexSpec, ShapeSpec


def check_shape(shape: str) -> str:
    """Return ``shape`` if it is one of the three shape names, else raise (the error lists them)."""
    if not isinstance(shape, str):
        raise ArgumentTypeError("shape", shape, "one shape name such as 'hybrid'", choices=SHAPE_NAMES)
    if shape not in SHAPE_NAMES:
        raise UnknownChoiceError("shape", shape, SHAPE_NAMES)
    return shape


def shape_spec(dataset: str, shape: str) -> ShapeSpec:
    """The declared shape ``shape`` of ``dataset`` (errors list the valid names)."""
    from workbook.datasets.registry import dataset_spec

    shapes = dataset_spec(dataset).shapes()
    if isinstance(shape, str) and shape in shapes:  # the three, or a shape a learner registered (capstone)
        return shapes[shape]
    check_shape(shape)
    raise UnknownChoiceError(f"shape of the {dataset} dataset", shape, list(shapes))


__all__ = ["SHAPE_NAMES", "CollectionSpec", "IndexSpec", "ShapeSpec", "check_shape", "shape_spec"]

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


__all__ = ["SHAPE_NAMES", "CollectionSpec", "IndexSpec", "ShapeSpec", "check_shape"]

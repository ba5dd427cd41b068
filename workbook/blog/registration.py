"""The blog's shapes: the three references and those learners register, looked up by the dataset registry."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbook.errors import ArgumentTypeError, WorkbookError

if TYPE_CHECKING:
    from workbook.blog.authoring import Shape
    from workbook.operations.base import Operations
    from workbook.shapes.spec import ShapeSpec

_REGISTERED: dict[str, Shape] = {}
"""Shapes learners registered in this Python process, by name."""


def _all() -> dict[str, Shape]:
    from workbook.blog.reference import reference_shapes

    return {**reference_shapes(), **_REGISTERED}


def register(shape: Shape) -> ShapeSpec:
    """Register your blog shape so ``workbook.load("blog", shape.name)`` can load it; returns its declaration.

    Registering again under the same name replaces the earlier version (edit the cell, run it again).
    """
    from workbook.blog.authoring import Shape
    from workbook.shapes.spec import SHAPE_NAMES

    if not isinstance(shape, Shape):
        raise ArgumentTypeError("shape", shape, "a workbook.capstone.Shape", fix='Write mine = Shape("mine", ...).')
    if shape.name in SHAPE_NAMES:
        raise WorkbookError(f"{shape.name!r} is one of the reference shapes' names.", fix="Call yours e.g. 'mine'.")
    missing = shape.missing()
    if missing:
        raise WorkbookError(
            f"The shape {shape.name!r} is not complete yet: it lacks {', '.join(missing)}.",
            fix="Write what is missing in the cells above, run them, then register again.",
        )
    spec = shape.shape_spec()  # checks names and indexes now, not at load time
    _REGISTERED[shape.name] = shape
    return spec


def unregister(name: str) -> None:
    """Forget a registered shape (the reference shapes stay)."""
    _REGISTERED.pop(name, None)


def declared_copies(name: str) -> dict[str, str]:
    """What the blog shape called ``name`` declared about the fields it adds (see ``Shape.copies``)."""
    shape = _all().get(name)
    return dict(shape.copies) if shape is not None else {}


def shape_specs() -> dict[str, ShapeSpec]:
    """Every blog shape's declaration, references first."""
    return {name: shape.shape_spec() for name, shape in _all().items()}


def operation_classes() -> dict[str, type[Operations]]:
    """Every blog shape's operations class."""
    return {name: shape.operations_class() for name, shape in _all().items()}

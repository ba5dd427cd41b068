"""Document shapes: each dataset declared as embedded, referenced and hybrid."""

from __future__ import annotations

from importlib import import_module

from workbook.errors import UnknownChoiceError
from workbook.shapes.spec import SHAPE_NAMES, CollectionSpec, IndexSpec, ShapeSpec

_MODULES = {
    "store": "workbook.shapes.store",
    "followers": "workbook.shapes.followers",
    "parts": "workbook.shapes.parts",
}
"""Dataset name -> module whose ``shapes()`` returns its three ShapeSpecs."""


def shape_spec(dataset: str, shape: str) -> ShapeSpec:
    """The declared shape ``shape`` of ``dataset`` (errors list the valid names)."""
    if dataset not in _MODULES:
        raise UnknownChoiceError("dataset", dataset, _MODULES)
    if shape not in SHAPE_NAMES:
        raise UnknownChoiceError("shape", shape, SHAPE_NAMES)
    return import_module(_MODULES[dataset]).shapes()[shape]


__all__ = ["SHAPE_NAMES", "CollectionSpec", "IndexSpec", "ShapeSpec", "shape_spec"]

"""A document shape, declared: its collections, their indexes and validators, and a pure builder."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbook.datasets import Dataset

SHAPE_NAMES = ("embedded", "referenced", "hybrid")
"""Every dataset comes in these three shapes."""

Document = dict[str, Any]


@dataclass(frozen=True)
class IndexSpec:
    """One index: its keys in order, a name, and why the shape has it (shown to learners)."""

    keys: tuple[tuple[str, int], ...]
    name: str
    why: str
    unique: bool = False

    def as_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for pymongo's ``create_index``."""
        return {"keys": list(self.keys), "name": self.name, "unique": self.unique}


@dataclass(frozen=True)
class CollectionSpec:
    """A collection of a shape: indexes beyond ``_id`` and a ``$jsonSchema`` validator."""

    name: str
    indexes: tuple[IndexSpec, ...] = ()
    validator: Document | None = None


@dataclass(frozen=True)
class ShapeSpec:
    """A dataset in one document shape: declared collections plus a pure builder of their documents."""

    dataset: str
    name: str
    description: str
    collections: tuple[CollectionSpec, ...]
    build: Callable[[Dataset], dict[str, list[Document]]] = field(repr=False)

    def collection(self, name: str) -> CollectionSpec:
        """The declared collection called ``name``."""
        from workbook.errors import UnknownChoiceError

        for spec in self.collections:
            if spec.name == name:
                return spec
        raise UnknownChoiceError(f"collection of the {self.dataset} {self.name} shape", name, self.collection_names)

    @property
    def collection_names(self) -> list[str]:
        """Names of the shape's collections, in declaration order."""
        return [spec.name for spec in self.collections]


def json_schema(required: list[str], properties: dict[str, Any], **extra: Any) -> Document:
    """A ``$jsonSchema`` validator document for an object with these required fields."""
    return {"$jsonSchema": {"bsonType": "object", "required": required, "properties": properties, **extra}}

"""A document shape, declared: its collections, their indexes and validators, and a pure builder."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

if TYPE_CHECKING:
    from workbook.datasets import Dataset

SHAPE_NAMES = ("embedded", "referenced", "hybrid")
"""Every dataset comes in these three shapes."""

Document = dict[str, Any]


class Made(Sequence[Document]):
    """A shape's documents, each made from its source document when it is read.

    A shape that copies data into every document (a product holding its parts, a user holding its
    followers) would otherwise exist whole before the first one is stored: loading the parts dataset
    embedded to a server took the kernel from 75 to 211 MiB before a document was sent. Made one
    batch at a time, they never all exist at once where they are only sent. Each read makes a new
    document (equal, not the same object): take ``list()`` of it to keep them.
    """

    def __init__(self, source: Sequence[Document], make: Callable[[Document], Document]) -> None:
        self._source = source
        self._make = make

    def __len__(self) -> int:
        return len(self._source)

    def __iter__(self) -> Iterator[Document]:
        return map(self._make, self._source)

    @overload
    def __getitem__(self, index: int) -> Document: ...
    @overload
    def __getitem__(self, index: slice) -> list[Document]: ...
    def __getitem__(self, index: int | slice) -> Document | list[Document]:
        if isinstance(index, slice):
            return [self._make(document) for document in self._source[index]]
        return self._make(self._source[index])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{len(self)} documents made as they are read>"


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
    build: Callable[[Dataset], Mapping[str, Sequence[Document]]] = field(repr=False)
    """The shape's documents by collection: lists, or :class:`Made` where each is made as it is read."""

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

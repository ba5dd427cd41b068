"""Writing a blog shape in a notebook: collections, indexes, a validator, a builder and the operations.

A shape is declared, then filled in with two decorators, then registered::

    mine = Shape("mine", "what it stores where, in one line", [
        Collection("users"),
        Collection("posts", indexes=[Index({"authorId": 1, "publishedAt": -1})]),
    ])

    @mine.builder
    def build(blog):                      # blog.collections["posts"], ["comments"], ["likes"], ["users"]
        return {"users": ..., "posts": ...}

    @mine.operation
    def post_page(db, post_id):           # one function per operation, the database first
        return db.posts.find_one({"_id": post_id})

    register(mine)                        # then workbook.load("blog", "mine")

The built-in reference shapes (:mod:`workbook.blog.reference`) are written exactly this way.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbook.errors import ArgumentTypeError, WorkbookError
from workbook.shapes.spec import CollectionSpec, Document, IndexSpec, ShapeSpec

if TYPE_CHECKING:
    from workbook.datasets import Dataset
    from workbook.operations.base import Operations

REQUIRED_COLLECTIONS = ("users", "posts")
"""Every blog shape keeps these (the workload draws user and post ids from them)."""

Builder = Callable[["Dataset"], dict[str, list[Document]]]


@dataclass(frozen=True)
class Index:
    """An index as you would pass it to ``create_index``: ``Index({"postId": 1, "createdAt": -1})``."""

    keys: Mapping[str, int]
    unique: bool = False
    why: str = ""

    def spec(self) -> IndexSpec:
        """The workbench's declaration of this index (named as MongoDB names it: ``postId_1_createdAt_-1``)."""
        if not isinstance(self.keys, Mapping) or not self.keys:
            raise ArgumentTypeError("Index keys", self.keys, 'a dict of field -> 1 or -1, such as {"postId": 1}')
        for name, direction in self.keys.items():
            if not isinstance(name, str) or direction not in (1, -1):
                raise ArgumentTypeError(f"Index direction of {name!r}", direction, "1 (ascending) or -1 (descending)")
        pairs = tuple((name, int(direction)) for name, direction in self.keys.items())
        name = "_".join(f"{field}_{direction}" for field, direction in pairs)
        return IndexSpec(pairs, name, self.why or "declared by the shape", unique=self.unique)


@dataclass(frozen=True)
class Collection:
    """A collection of the shape: its indexes beyond ``_id`` and an optional ``$jsonSchema`` validator."""

    name: str
    indexes: Iterable[Index] = ()
    validator: Document | None = None

    def spec(self) -> CollectionSpec:
        """The workbench's declaration of this collection."""
        if not isinstance(self.name, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", self.name):
            raise ArgumentTypeError("Collection name", self.name, "letters, digits and '_', such as 'comments'")
        indexes = list(self.indexes)
        for index in indexes:
            if not isinstance(index, Index):
                raise ArgumentTypeError(f"an index of {self.name}", index, 'an Index, such as Index({"postId": 1})')
        if self.validator is not None and "$jsonSchema" not in self.validator:
            raise WorkbookError(
                f"The validator of {self.name} is not a $jsonSchema document.",
                fix="Write it with json_schema(required=[...], properties={...}).",
            )
        return CollectionSpec(self.name, tuple(index.spec() for index in indexes), self.validator)


@dataclass
class Shape:
    """A blog shape written by hand: its collections, then ``@shape.builder`` and ``@shape.operation``."""

    name: str
    description: str
    collections: list[Collection]
    build: Builder | None = field(default=None, repr=False)
    operations: dict[str, Callable[..., Any]] = field(default_factory=dict, repr=False)
    copies: dict[str, str] = field(default_factory=dict)
    """Each field the shape adds that the blog's data does not hold ("posts.likeCount"), with what
    it is: "atomic" (written in one write or transaction with its source), "may be stale" (written
    apart from its source, so a failure between the writes leaves it wrong until a recount) or
    "only home" (the data itself, embedded: no other copy exists). The grade checks every one."""

    def builder(self, function: Builder) -> Builder:
        """Decorator: ``function(blog)`` returns ``{collection name: [documents]}`` for every collection."""
        self.build = function
        return function

    def operation(self, function: Callable[..., Any]) -> Callable[..., Any]:
        """Decorator: ``function(db, ...)`` implements the blog operation of the same name in this shape."""
        from workbook.blog.operations import BlogOperations

        name = getattr(function, "__name__", "")
        if name not in BlogOperations.NAMES:
            from workbook.errors import UnknownChoiceError

            raise UnknownChoiceError("blog operation (the function's name)", name, BlogOperations.NAMES)
        _check_parameters(function, getattr(BlogOperations, name))
        self.operations[name] = function
        return function

    def missing(self) -> list[str]:
        """What still has to be written before the shape can be registered (empty when complete)."""
        from workbook.blog.operations import BlogOperations

        missing = [] if self.build else ["a builder (@shape.builder)"]
        missing += [f"operation {name}" for name in BlogOperations.NAMES if name not in self.operations]
        names = [c.name for c in self.collections]
        missing += [f"collection {name}" for name in REQUIRED_COLLECTIONS if name not in names]
        return missing

    def shape_spec(self) -> ShapeSpec:
        """The declared shape the loader reads: collections, indexes, validators and the checked builder."""
        if not isinstance(self.name, str) or not re.fullmatch(r"[a-z][a-z0-9_]{0,19}", self.name):
            raise ArgumentTypeError(
                "Shape name", self.name, "lower-case letters, digits and '_' (up to 20), such as 'mine'"
            )
        collections = tuple(c.spec() for c in self.collections)
        declared = [c.name for c in collections]
        if len(set(declared)) != len(declared):
            raise WorkbookError(f"The shape {self.name!r} declares a collection twice: {declared}.")
        return ShapeSpec(
            "blog", self.name, self.description, collections, _checked_builder(self.name, self.build, declared)
        )

    def operations_class(self) -> type[Operations]:
        """An operations class for this shape: each method calls your function with the shape's database."""
        from workbook.blog.operations import BlogOperations

        methods: dict[str, Any] = {"shape": self.name}
        for name, function in self.operations.items():
            methods[name] = _as_method(function)
        return type(f"Blog{self.name.title().replace('_', '')}Operations", (BlogOperations,), methods)


def _as_method(function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def method(self: Operations, *args: Any, **kwargs: Any) -> Any:
        return function(self.db, *args, **kwargs)

    return method


def _check_parameters(function: Callable[..., Any], declared: Callable[..., Any]) -> None:
    """Refuse an operation whose parameters differ from the declaration (the error shows the right line)."""
    parameters = list(inspect.signature(declared).parameters.values())[1:]
    wanted = ["db", *(p.name for p in parameters)]
    try:
        got = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        got = []
    if got != wanted:
        shown = ", ".join(p.name if p.default is p.empty else f"{p.name}={p.default!r}" for p in parameters)
        raise WorkbookError(
            f"{declared.__name__}() takes ({', '.join(wanted)}), not ({', '.join(got)}).",
            fix=f"Write it as: def {declared.__name__}(db, {shown}):",
        )


def _checked_builder(shape: str, build: Builder | None, declared: list[str]) -> Builder:
    if build is None:
        raise WorkbookError(f"The shape {shape!r} has no builder.", fix="Decorate a function with @shape.builder.")

    @functools.wraps(build)
    def checked(dataset: Dataset) -> dict[str, list[Document]]:
        built = build(dataset)
        if not isinstance(built, Mapping) or sorted(built) != sorted(declared):
            got = sorted(built) if isinstance(built, Mapping) else type(built).__name__
            raise WorkbookError(
                f"The builder of {shape!r} returned {got}; the shape declares {sorted(declared)}.",
                fix="Return a dict with one list of documents per declared collection.",
            )
        return {name: list(documents) for name, documents in built.items()}

    return checked

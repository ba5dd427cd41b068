"""A find request normalized for the planner: predicates, sort, projection, limits, hint, collation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbook.planner.collation import collator, normalize
from workbook.planner.predicates import Predicate, parse_filter
from workbook.planner.unsupported import UnsupportedByModel
from workbook.planner.values import Collate


@dataclass
class FindQuery:
    """The parts of a find command the planner reasons about."""

    predicates: list[Predicate]
    sort: list[tuple[str, int]] = field(default_factory=list)
    projection: dict[str, Any] | None = None
    limit: int | None = None
    skip: int | None = None
    hint: Any = None
    collation: Mapping[str, Any] | None = None

    @property
    def collate(self) -> Collate | None:
        """The query's string comparison key (None for simple)."""
        return collator(self.collation)

    @property
    def collation_id(self) -> tuple | None:
        """The query collation, comparable with an index's."""
        return normalize(self.collation)

    @property
    def projection_inclusive(self) -> bool:
        """Whether the projection lists the fields to keep (rather than to drop)."""
        return any(bool(v) for k, v in (self.projection or {}).items() if k != "_id")

    @property
    def projection_kind(self) -> str:
        """PROJECTION_SIMPLE for top-level fields only, PROJECTION_DEFAULT with dotted paths."""
        assert self.projection is not None
        return "PROJECTION_DEFAULT" if any("." in k for k in self.projection) else "PROJECTION_SIMPLE"


def normalize_sort(sort: Any) -> list[tuple[str, int]]:
    """A sort given as a dict, SON or list of pairs, as (path, 1|-1) pairs."""
    if not sort:
        return []
    pairs = list(sort.items()) if isinstance(sort, Mapping) else [tuple(p) for p in sort]
    out: list[tuple[str, int]] = []
    for path, direction in pairs:
        if path == "$natural" or not isinstance(direction, int | float):
            raise UnsupportedByModel(f"the sort {{{path!r}: {direction!r}}}")
        out.append((path, 1 if direction >= 0 else -1))
    return out


def normalize_projection(projection: Any) -> dict[str, Any] | None:
    """An inclusion/exclusion projection, or None; expressions are not modelled."""
    if not projection:
        return None
    if isinstance(projection, Sequence) and not isinstance(projection, str | Mapping):
        projection = {name: 1 for name in projection}
    out: dict[str, Any] = {}
    for path, value in projection.items():
        if isinstance(value, bool) or (isinstance(value, int | float) and value in (0, 1)):
            out[path] = int(value)
        else:
            raise UnsupportedByModel(f"the projection expression {{{path!r}: {value!r}}}")
    kinds = {v for k, v in out.items() if k != "_id"}
    if len(kinds) > 1:
        raise UnsupportedByModel("a projection mixing inclusion and exclusion (MongoDB rejects it too)")
    return out


def make_query(
    filter: Mapping[str, Any] | None = None,
    projection: Any = None,
    sort: Any = None,
    limit: int | None = None,
    skip: int | None = None,
    hint: Any = None,
    collation: Mapping[str, Any] | None = None,
) -> FindQuery:
    """Normalize the arguments of a find into a FindQuery."""
    if limit is not None and limit < 0:
        limit = -limit
    return FindQuery(
        predicates=parse_filter(filter),
        sort=normalize_sort(sort),
        projection=normalize_projection(projection),
        limit=limit or None,
        skip=skip or None,
        hint=hint,
        collation=collation if normalize(collation) else None,
    )

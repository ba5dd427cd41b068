"""A find request: :class:`FindArgs` as a find command carries it, :class:`FindQuery` as the planner
reasons about it (leaf predicates, sort pairs, projection, limits, hint, collation)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pymongo.collation import Collation

from workbook.errors import ExplainError
from workbook.planner.collation import collator, normalize
from workbook.planner.predicates import Predicate, parse_filter
from workbook.planner.stages import is_inclusion
from workbook.planner.unsupported import invalid_query, not_modelled
from workbook.planner.values import Collate

_FIND_FIELDS = ("projection", "sort", "limit", "skip", "hint", "collation")


@dataclass(frozen=True)
class FindArgs:
    """The arguments of one find, in the forms a find command carries them (dicts; a hint may be a name).

    Build one from pymongo-style arguments with :meth:`of`, from a find command with
    :meth:`from_command`; :meth:`command` gives the command back.

    >>> FindArgs.of({"a": 1}, ["a"], [("a", -1)], limit=-5, hint="a_1")
    FindArgs(filter={'a': 1}, projection={'a': 1}, sort={'a': -1}, limit=5, skip=None, hint='a_1', collation=None)
    """

    filter: dict[str, Any] = field(default_factory=dict)
    projection: dict[str, Any] | None = None
    sort: dict[str, Any] | None = None
    limit: int | None = None
    skip: int | None = None
    hint: str | dict[str, Any] | None = None
    collation: dict[str, Any] | None = None

    @classmethod
    def of(
        cls,
        filter: Mapping[str, Any] | None = None,
        projection: Any = None,
        sort: Any = None,
        limit: int | None = None,
        skip: int | None = None,
        hint: Any = None,
        collation: Mapping[str, Any] | Collation | None = None,
    ) -> FindArgs:
        """Arguments in the forms pymongo's ``find`` takes them (lists of pairs, Collation objects...)."""
        if filter is not None and not isinstance(filter, Mapping):
            raise ExplainError(
                f"The filter must be a dict, not {type(filter).__name__}.", fix='Pass e.g. {"price": 5}.'
            )
        return cls(
            filter=dict(filter or {}),
            projection=_projection(projection),
            sort=_key_document(sort, "sort"),
            limit=_count(limit, "limit"),
            skip=_count(skip, "skip"),
            hint=hint if isinstance(hint, str) else _key_document(hint, "hint"),
            collation=_collation(collation),
        )

    @classmethod
    def from_command(cls, command: Mapping[str, Any]) -> FindArgs:
        """The arguments of a ``find`` command document (or of a write's query, given as a find)."""
        return cls.of(command.get("filter"), **{name: command.get(name) for name in _FIND_FIELDS})

    def command(self, collection: str) -> dict[str, Any]:
        """The find command these arguments make (unset fields left out)."""
        out: dict[str, Any] = {"find": collection, "filter": dict(self.filter)}
        for name in _FIND_FIELDS:
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out


def _count(value: Any, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise ExplainError(f"The {what} must be a whole number, not {value!r}.", fix=f"Pass e.g. {what}=10.")
    if abs(int(value)) > MAX_SKIP_LIMIT:
        raise ExplainError(
            f"The {what} {int(value):,} is beyond {MAX_SKIP_LIMIT:,} (2**31 - 1): more documents than any "
            "collection here can hold, so it is a mistake rather than a plan to explain.",
            fix=f"Pass e.g. {what}=10.",
        )
    return abs(int(value)) or None


MAX_SKIP_LIMIT = 2**31 - 1
"""The largest skip or limit explained (the largest 32-bit int; beyond it no course collection has documents)."""


def _sort_direction(name: str, direction: Any) -> None:
    """Refuse a sort direction MongoDB refuses: only 1, -1 or {"$meta": ...} (code 15975, BadValue)."""
    if isinstance(direction, Mapping) and "$meta" in direction:
        return
    if not isinstance(direction, bool) and isinstance(direction, int | float) and direction in (1, -1):
        return
    raise ExplainError(
        f"The sort direction {direction!r} for {name!r} is not one MongoDB accepts: a sort key ordering must be "
        "1 (ascending) or -1 (descending) (MongoDB refuses it with code 15975, BadValue).",
        fix=f'Pass e.g. sort=[("{name}", 1)] or [("{name}", -1)].',
    )


def _projection(projection: Any) -> dict[str, Any] | None:
    if projection is None:
        return None
    if isinstance(projection, Mapping):
        return dict(projection)
    if isinstance(projection, Sequence) and not isinstance(projection, str):
        return {str(name): 1 for name in projection}
    raise ExplainError(
        f"The projection {projection!r} is neither a dict nor a list of field names.",
        fix='Pass e.g. {"name": 1, "_id": 0} or ["name", "price"].',
    )


def _key_document(value: Any, what: str) -> dict[str, Any] | None:
    """A sort or hint given as a dict, a list of (field, direction) pairs, or one field name."""
    if value is None or (not value and not isinstance(value, str)):
        return None
    if isinstance(value, str):
        return {value: 1}
    try:
        pairs = list(value.items()) if isinstance(value, Mapping) else [(name, d) for name, d in value]
    except (TypeError, ValueError):
        pairs = []
    if not pairs or not all(isinstance(name, str) for name, _ in pairs):
        raise ExplainError(
            f"The {what} {value!r} is not a list of (field, direction) pairs.",
            fix='Pass e.g. [("price", 1), ("_id", 1)] or {"price": 1}'
            + (" or an index name such as 'category_price'." if what == "hint" else "."),
        )
    if what == "sort":
        for name, direction in pairs:
            _sort_direction(name, direction)
    return dict(pairs)


def _collation(collation: Mapping[str, Any] | Collation | None) -> dict[str, Any] | None:
    if collation is None:
        return None
    if isinstance(collation, Collation):
        return dict(collation.document)
    if isinstance(collation, Mapping):
        return dict(collation)
    raise ExplainError(
        f"The collation {collation!r} is neither a dict nor a pymongo Collation.",
        fix='Pass e.g. {"locale": "en", "strength": 2} or Collation("en", strength=2).',
    )


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
    sort_key_fields: tuple[str, ...] = ()
    """Projected fields holding ``{$meta: "sortKey"}``."""

    @property
    def collate(self) -> Collate | None:
        """The query's string comparison key (None for simple)."""
        return collator(self.collation)

    @property
    def collation_id(self) -> tuple[Any, ...] | None:
        """The query collation, comparable with an index's."""
        return normalize(self.collation)

    @property
    def projection_inclusive(self) -> bool:
        """Whether the projection lists the fields to keep (rather than to drop)."""
        return is_inclusion(self.projection or {})

    @property
    def projection_kind(self) -> str:
        """PROJECTION_SIMPLE for top-level fields only, PROJECTION_DEFAULT with dotted paths or $meta."""
        paths = list(self.projection or {})
        if self.sort_key_fields or any("." in k for k in paths):
            return "PROJECTION_DEFAULT"
        return "PROJECTION_SIMPLE"


def _natural_sort(sort: Any, hint: Any) -> tuple[Any, Any]:
    """(sort, hint) with a ``{$natural: d}`` sort read as the collection scan it asks for (natural.js):
    alone, it is the hint ``{$natural: d}``; beside other sort fields or a hint of an index, MongoDB refuses it."""
    if not sort:
        return sort, hint
    pairs = list(sort.items()) if isinstance(sort, Mapping) else [tuple(p) for p in sort]
    if not any(pair[0] == "$natural" for pair in pairs):
        return sort, hint
    if len(pairs) > 1:
        raise invalid_query("Cannot sort on $natural together with other fields")
    hint_pairs = list(hint.items()) if isinstance(hint, Mapping) else None
    if hint is not None and (hint_pairs is None or [k for k, _ in hint_pairs] != ["$natural"]):
        raise invalid_query("A $natural sort cannot be combined with a hint of an index")
    return None, hint if hint is not None else {"$natural": pairs[0][1]}


def normalize_sort(sort: Any) -> list[tuple[str, int]]:
    """A sort given as a dict, SON or list of pairs, as (path, 1|-1) pairs."""
    if not sort:
        return []
    pairs = list(sort.items()) if isinstance(sort, Mapping) else [tuple(p) for p in sort]
    out: list[tuple[str, int]] = []
    for path, direction in pairs:
        if path == "$natural" or isinstance(direction, bool) or not isinstance(direction, int | float):
            raise not_modelled(f"the sort {{{path!r}: {direction!r}}}")
        out.append((path, 1 if direction >= 0 else -1))
    return out


def asks_sort_key(projection: Any) -> bool:
    """Whether a find's projection asks for ``{$meta: "sortKey"}`` (sortl.js): the engine cannot project it,
    and ``returnKey`` keeps it beside the key (return_key.js) where it drops every other projection."""
    return isinstance(projection, Mapping) and any(
        isinstance(v, Mapping) and v.get("$meta") == "sortKey" for v in projection.values()
    )


def normalize_projection(projection: Any) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
    """An inclusion/exclusion projection (or None) and its ``{$meta: "sortKey"}`` fields."""
    if not projection:
        return None, ()
    if isinstance(projection, Sequence) and not isinstance(projection, str | Mapping):
        projection = {name: 1 for name in projection}
    out: dict[str, Any] = {}
    meta: list[str] = []
    for path, value in projection.items():
        if isinstance(value, bool) or (isinstance(value, int | float) and value in (0, 1)):
            out[path] = int(value)
        elif isinstance(value, Mapping) and dict(value) == {"$meta": "sortKey"}:
            meta.append(path)
        else:
            raise not_modelled(f"the projection expression {{{path!r}: {value!r}}}")
    kinds = {v for k, v in out.items() if k != "_id"}
    if len(kinds) > 1:
        raise not_modelled("a projection mixing inclusion and exclusion (MongoDB rejects it too)")
    full = {**out, **{path: {"$meta": "sortKey"} for path in meta}}
    return full or None, tuple(meta)


def make_query(args: FindArgs, default_collation: Mapping[str, Any] | None = None) -> FindQuery:
    """The planner's view of a find; a query without a collation takes the collection's default."""
    collation = args.collation if args.collation is not None else default_collation
    projection, meta = normalize_projection(args.projection)
    if meta and not args.sort:
        raise ExplainError(
            "A {$meta: 'sortKey'} projection needs a sort (MongoDB refuses the query too).",
            fix='Add a sort, e.g. sort=[("price", 1)].',
        )
    sort, hint = _natural_sort(args.sort, args.hint)
    return FindQuery(
        predicates=parse_filter(args.filter),
        sort=normalize_sort(sort),
        projection=projection,
        limit=args.limit or None,
        skip=args.skip or None,
        hint=hint,
        collation=collation if normalize(collation) else None,
        sort_key_fields=meta,
    )

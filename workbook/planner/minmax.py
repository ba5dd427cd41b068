"""``find().min(...).max(...)``: a hinted index scanned from one key to another, as MongoDB answers it.

MongoDB reads the hinted index from the ``min`` key (inclusive) to the ``max`` key (exclusive) in the
index's own order (a descending field's values run high to low), fetches those documents, and applies
the filter, the sort, skip and limit to them (``jstests/core/query/minmax.js``). The bounds name the
index's fields in its order; a key is compared with them field by field, by BSON order under the
index's collation. This module finds that range in the model's sorted entries of the index and
intersects it with the records the same find returns without bounds, so the filter, sort and
projection rules are the model's own. Its explain is refused by name (the model builds no scan
between two compound keys); the refusals below are MongoDB's codes (``query_planner.cpp``).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from workbook.planner.explain import find_records
from workbook.planner.keys import Entry, IndexDefinition, _Order
from workbook.planner.plans import CollectionModel, _hinted
from workbook.planner.query import FindArgs
from workbook.planner.unsupported import invalid_query, not_modelled
from workbook.planner.values import sort_key

NO_HINT = 51173
NOT_THE_INDEX = 51174
EMPTY_RANGE = 51175
DIFFERENT_FIELDS = 51176
NO_QUERY_EXECUTION_PLANS = 291


def bounded_records(
    collection: CollectionModel, namespace: str, args: FindArgs, minimum: Any, maximum: Any
) -> tuple[str, list[int]]:
    """The hinted index's name and the positions of the documents a find with ``min`` and/or ``max``
    (None: not given) returns, in order.

    Raises :class:`~workbook.errors.InvalidQueryError` with MongoDB's code for bounds it refuses, and
    :class:`~workbook.errors.UnsupportedByModelError` for an index kind whose keys the model does not order.
    """
    given = [bound for bound in (minimum, maximum) if bound is not None]
    if any(not isinstance(bound, Mapping) for bound in given):
        raise invalid_query("min and max must be objects naming the hinted index's fields", code=2)
    if len(given) == 2 and list(minimum) != list(maximum):
        raise invalid_query("min() and max() must have the same field names", code=DIFFERENT_FIELDS)
    if args.hint is None:
        raise invalid_query("When using min()/max() a hint of which index to use must be provided", code=NO_HINT)
    spec = _hinted(collection, args.hint)
    if spec is None:
        raise invalid_query(
            "error processing query: planner returned error :: caused by :: min and max are incompatible with $natural",
            code=NO_QUERY_EXECUTION_PLANS,
        )
    if spec.special or spec.hashed:
        raise not_modelled(f"min()/max() over the {'hashed' if spec.hashed else 'special'} index {spec.name!r}")
    if any(list(bound) != list(spec.paths) for bound in given):
        raise invalid_query("The index chosen is not valid for satisfying the min/max query", code=NOT_THE_INDEX)
    descending = tuple(direction < 0 for _, direction in spec.fields)
    lower, upper = (None if bound is None else _position(spec, bound, descending) for bound in (minimum, maximum))
    if lower is not None and upper is not None and not lower < upper:  # (both at rid -1: equal keys are not <)
        raise invalid_query(
            "The value provided for min() does not come before the value provided for max() in the hinted index",
            code=EMPTY_RANGE,
        )
    data = collection.index(spec)
    entries = data.entries

    def place(entry: Entry) -> _Order:
        return _Order(entry, descending)

    start = 0 if lower is None else bisect_left(entries, lower, key=place)
    end = len(entries) if upper is None else bisect_left(entries, upper, key=place)
    in_range = list(dict.fromkeys(data.position(entry.rid) for entry in entries[start:end]))  # a multikey record once
    matching = find_records(collection, namespace, replace(args, projection=None, skip=None, limit=None))[1]
    if args.sort:  # the bounds choose the records; the sort orders them
        kept = set(in_range)
        ordered = [rid for rid in matching if rid in kept]
    else:  # in the order the bounded scan reads them
        matched = set(matching)
        ordered = [rid for rid in in_range if rid in matched]
    ordered = ordered[args.skip or 0 :]
    return spec.name, ordered[: args.limit] if args.limit else ordered


def _position(spec: IndexDefinition, bound: Mapping[str, Any], descending: tuple[bool, ...]) -> _Order:
    """A bound's place in the index's order: its values' sort keys under the index's collation, before every
    entry with equal keys (record id -1), so a bisection finds the first key at or past it."""
    keys = tuple(sort_key(value, spec.collate) for value in bound.values())
    return _Order(Entry(keys, tuple(bound.values()), -1), descending)

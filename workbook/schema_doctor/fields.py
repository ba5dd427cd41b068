"""A schema view like Compass's Schema tab: per collection, each field's types and their shares,
array lengths, and how many documents lack it.

It reads the same per-field summary the doctor reads (:meth:`Context.sample`: the offline
engine's memory, or the ``$sample`` + ``$project`` pipeline on a server), top-level fields and
the fields of top-level subdocuments, read-only and bounded in time like the doctor.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pandas as pd

from workbook.schema_doctor.context import Context
from workbook.schema_doctor.readonly import Budget, ReadOnlyDatabase
from workbook.schema_doctor.thresholds import DEFAULT_THRESHOLDS, SAMPLE_SIZE, TIME_LIMIT

COLUMNS = [
    "collection",
    "field",
    "type",
    "documents",
    "share_pct",
    "missing",
    "min_length",
    "mean_length",
    "max_length",
    "read",
]


def schema_view(target: Any, collections: list[str] | None = None, *, sample_size: int = SAMPLE_SIZE) -> pd.DataFrame:
    """One row per collection, field and type: documents with that type, their share of the documents
    read, documents missing the field, and (arrays) the lengths; ``target`` a loaded shape, a database
    or a collection."""
    from pymongo.collection import Collection

    from workbook.errors import UnknownChoiceError
    from workbook.schema_doctor.examine import database_of

    if isinstance(target, Collection):
        database, collections = target.database, [target.name]
    else:
        database = database_of(target)
    budget = Budget(TIME_LIMIT)
    context = Context(
        ReadOnlyDatabase(database, budget),
        budget,
        DEFAULT_THRESHOLDS,
        sample_size,
        False,
        lambda _: None,
        source=database,
    )
    known = context.collections()
    names = known if collections is None else list(collections)
    for name in names:
        if name not in known:
            raise UnknownChoiceError("collection", name, known)
    rows = [row for name in names for row in _field_rows(context, name)]
    return pd.DataFrame(rows, columns=COLUMNS)


def _field_rows(context: Context, collection: str) -> list[dict[str, Any]]:
    sample = context.sample(collection)
    read = len(sample.documents)
    types: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    lengths: dict[tuple[str, str], list[int]] = defaultdict(list)
    present: dict[str, int] = defaultdict(int)
    order: dict[str, int] = {}
    for document in sample.documents:
        for stat in (*document.fields, *document.nested):
            order.setdefault(stat.name, len(order))
            present[stat.name] += 1
            types[stat.name][stat.type] += 1
            if stat.length is not None:
                lengths[(stat.name, stat.type)].append(stat.length)
    rows = []
    for name in sorted(order, key=lambda n: (n.split(".")[0] != "_id", order[n.split(".")[0]], order[n])):
        for kind, count in sorted(types[name].items(), key=lambda item: -item[1]):
            sizes = lengths.get((name, kind))
            rows.append(
                {
                    "collection": collection,
                    "field": name,
                    "type": kind,
                    "documents": count,
                    "share_pct": round(100 * count / read, 1) if read else 0.0,
                    "missing": read - present[name],
                    "min_length": min(sizes) if sizes else None,
                    "mean_length": round(sum(sizes) / len(sizes), 1) if sizes else None,
                    "max_length": max(sizes) if sizes else None,
                    "read": read,
                }
            )
    return rows

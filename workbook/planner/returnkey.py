"""``find(..., return_key=True)``: the index keys the winning plan read, instead of the documents.

MongoDB returns, for each result, the key of the index the plan scanned (``{a: 3}`` for an index on
``a``; every field of a compound key; ``{_id: ...}`` for an ``_id`` lookup) and an empty document when
the plan read no index; a regular projection is ignored (``jstests/core/query/return_key.js``). The
model's plan keeps each record's index entry, so this runs the same plan as the find and reads the
key from the entry. Refused by name where the model's key is not MongoDB's: a hashed index (MongoDB
returns the hash), a collated one (the collation key), a plan reading two indexes, a key holding a
value BSON cannot carry (an empty array's ``undefined``), and ``{$meta: "sortKey"}`` beside it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import bson

from workbook.planner.explain import run_find
from workbook.planner.plans import CollectionModel
from workbook.planner.query import FindArgs, asks_sort_key, make_query
from workbook.planner.reading import walk, winning_plan
from workbook.planner.unsupported import not_modelled


def returned_keys(
    collection: CollectionModel, namespace: str, args: FindArgs
) -> tuple[list[str], list[dict[str, Any]]]:
    """The indexes the find's winning plan read (by name) and, for each result in order, its index key."""
    if asks_sort_key(args.projection):
        raise not_modelled('returnKey beside a {$meta: "sortKey"} projection')
    explain, members = run_find(collection, namespace, make_query(replace(args, projection=None), collection.collation))
    stages = list(walk(winning_plan(explain["queryPlanner"])))
    if any(stage.get("stage") == "IDHACK" for stage in stages):
        return ["_id_"], [{"_id": collection.documents[member.rid]["_id"]} for member in members]
    names = [str(stage["indexName"]) for stage in stages if stage.get("stage") == "IXSCAN"]
    if not names:
        return [], [{} for _ in members]  # no index read: MongoDB returns empty documents
    if len(set(names)) > 1:
        raise not_modelled("returnKey over a plan that reads several indexes ($or)")
    spec = next(spec for spec in collection.specs if spec.name == names[0])
    if spec.hashed or spec.collation is not None:
        kind = "hashed" if spec.hashed else "collated"
        raise not_modelled(f"returnKey over the {kind} index {spec.name!r} (MongoDB returns its {kind} keys)")
    keys = []
    for member in members:
        if member.entry is None:
            raise not_modelled("returnKey over a plan that loses the index entry")
        key = dict(zip(spec.paths, member.entry.values, strict=True))
        try:
            bson.encode(key)
        except (TypeError, bson.errors.InvalidDocument) as error:
            raise not_modelled(f"returnKey for the key {key!r} (a value BSON cannot carry)") from error
        keys.append(key)
    return names[:1], keys

"""Reading a collection straight from the offline engine's storage, for the workbench's own bookkeeping.

The workbench sometimes needs every document of a collection for itself, not for the learner:
the ids to draw workload arguments from, the review counts that weight popular products. Asking
the offline server for them runs a query through the wire and decodes every document again;
reading the engine's storage hands back the documents it already decoded, in natural order, in
milliseconds. What the learner measures (operations, explain, latency) always goes through the
wire like any client's command. On a real server :func:`stored_documents` returns None and the
caller asks the server.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pymongo.database import Database


def stored_documents(db: Database, collection: str) -> list[Mapping[str, Any]] | None:
    """The committed documents of ``db[collection]`` from the offline engine (None on a real server).

    The documents are the engine's own decoded copies: read them, never change them.
    """
    from workbook.connection import engine_info
    from workbook.offline import offline_server

    if engine_info(db).kind != "offline":
        return None
    engine = offline_server().engine
    storage = engine._storage.get(db.name, {}).get(collection)
    if storage is None:
        return []
    borrow = engine._borrow_storage_document
    return [borrow(stored) for stored in storage.copy().values()]  # copy(): O(1), a consistent version


_MISSING = object()


def field_values(document: Mapping[str, Any], path: str) -> list[Any]:
    """What ``{$project: {v: "$<path>"}}, {$unwind: "$v"}`` yields for one document, as a list.

    A path through an array of subdocuments collects the field of each element (as ``$a.b``
    does); the array that results is unwound one level. Missing fields yield nothing.
    """
    value: Any = document
    for part in path.split("."):
        if isinstance(value, Mapping):
            value = value.get(part, _MISSING)
        elif isinstance(value, list):
            value = [element[part] for element in value if isinstance(element, Mapping) and part in element]
        else:
            value = _MISSING
        if value is _MISSING:
            return []
    return list(value) if isinstance(value, list) else [value]

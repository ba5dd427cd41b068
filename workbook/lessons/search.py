"""Notebook 07: finding a customer whatever the case, three ways, measured side by side.

1. a regex with the ``i`` flag on the plain field (the index, if any, is scanned end to end);
2. an index with a case-insensitive collation (strength 2), used only by queries naming that collation;
3. a normalised lower-case copy of the field with its own plain index (an exact match, tight bounds).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pandas as pd
from pymongo.collection import Collection

from workbook.errors import ArgumentTypeError, WorkbookError
from workbook.facts import bson_size
from workbook.waiting import busy

CASE_INSENSITIVE = {"locale": "en", "strength": 2}
"""A collation that compares letters without their case (strength 2: base letters and accents)."""


def exact_regex(text: str) -> dict[str, str]:
    """A case-insensitive ``$regex`` condition matching exactly ``text`` (anchored, special characters escaped).

    >>> exact_regex("Ann.Lee@Example.org")
    {'$regex': '^Ann\\\\.Lee@Example\\\\.org$', '$options': 'i'}
    """
    if not isinstance(text, str) or not text:
        raise ArgumentTypeError("text", text, "the non-empty text a learner types, e.g. 'Ann.Lee@Example.org'")
    return {"$regex": f"^{re.escape(text)}$", "$options": "i"}


def normalised_name(field: str) -> str:
    """The name of a field's lower-case copy: ``email`` -> ``emailLower``.

    >>> normalised_name("email"), normalised_name("name")
    ('emailLower', 'nameLower')
    """
    return f"{field}Lower"


def add_normalised_field(collection: Collection, field: str, *, progress: bool = True) -> int:
    """Store a lower-case copy of ``field`` in every document and index it; returns the bytes added.

    The application must write the copy on every insert and on every change of ``field`` too
    (here, one pipeline update sets it for the documents already there). It rewrites every document
    (about 2 s for the 5,000 customers at ``small`` on the offline default), so a bar shows the wait.
    """
    lower = normalised_name(field)
    with busy(f"add {lower} to every document", progress=progress):
        before = sum(bson_size(d) for d in collection.find())
        collection.update_many({field: {"$type": "string"}}, [{"$set": {lower: {"$toLower": f"${field}"}}}])
        collection.create_index([(lower, 1)], name=lower)
        return sum(bson_size(d) for d in collection.find()) - before


def add_collation_index(collection: Collection, field: str, collation: Mapping[str, Any] = CASE_INSENSITIVE) -> str:
    """Index ``field`` under a case-insensitive collation; returns the index name (``<field>_ci``)."""
    name = f"{field}_ci"
    collection.create_index([(field, 1)], name=name, collation=dict(collation))
    return name


def _row(method: str, explained: Any, found: int) -> dict[str, Any]:
    s = explained.summary()
    return {
        "method": method,
        "found": found,
        "plan": s["plan"],
        "index": s["index"] or "-",
        "keysExamined": s["keysExamined"],
        "docsExamined": s["docsExamined"],
    }


def compare_lookups(collection: Collection, field: str, typed: str) -> pd.DataFrame:
    """The three case-insensitive lookups of ``typed`` in ``field``: documents found and the work each did.

    Needs the collation index and the normalised field (``add_collation_index``, ``add_normalised_field``);
    methods whose index is missing are measured anyway, on whatever plan the server picks.
    """
    from workbook.explaining import explain

    if not isinstance(collection, Collection):
        raise ArgumentTypeError("collection", collection, "a pymongo Collection such as loaded['customers']")
    regex = {field: exact_regex(typed)}
    lower = {normalised_name(field): typed.lower()}
    rows = [
        _row("regex with the i flag", explain(collection, regex), collection.count_documents(regex)),
        _row(
            "collation index (strength 2)",
            explain(collection, {field: typed}, collation=CASE_INSENSITIVE),
            collection.count_documents({field: typed}, collation=CASE_INSENSITIVE),
        ),
        _row("normalised lower-case field", explain(collection, lower), collection.count_documents(lower)),
    ]
    return pd.DataFrame(rows).set_index("method")


def collation_matters(collection: Collection, field: str, typed: str) -> pd.DataFrame:
    """The same equality on ``field`` with no collation, the index's collation, and another one."""
    from workbook.explaining import explain

    variants: dict[str, Mapping[str, Any] | None] = {
        "no collation (simple, binary)": None,
        "the index's: en, strength 2": CASE_INSENSITIVE,
        "another: en, strength 1": {"locale": "en", "strength": 1},
    }
    rows = []
    for label, collation in variants.items():
        explained = explain(collection, {field: typed}, collation=collation)
        found = collection.count_documents({field: typed}, collation=dict(collation) if collation else None)
        rows.append(_row(label, explained, found))
    return pd.DataFrame(rows).set_index("method").rename_axis("query collation")


def storage_cost(collection: Collection, field: str, added_bytes: int) -> pd.DataFrame:
    """What each method stores beyond the plain field: bytes added to documents, extra index entries."""
    if added_bytes < 0:
        raise WorkbookError(f"added_bytes is {added_bytes}; it is what add_normalised_field returned.")
    documents = collection.count_documents({})
    with_field = collection.count_documents({field: {"$type": "string"}})
    has = {ix["name"] for ix in collection.list_indexes()}
    rows = [
        {"method": "regex with the i flag", "document bytes added": 0, "extra index entries": 0},
        {
            "method": "collation index (strength 2)",
            "document bytes added": 0,
            "extra index entries": documents if f"{field}_ci" in has else 0,
        },
        {
            "method": "normalised lower-case field",
            "document bytes added": added_bytes,
            "extra index entries": documents if normalised_name(field) in has else 0,
        },
    ]
    frame = pd.DataFrame(rows).set_index("method")
    frame["bytes per document"] = (frame["document bytes added"] / max(with_field, 1)).round(1)
    return frame

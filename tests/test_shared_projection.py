"""A find's reply on the offline default takes the included values of the stored documents themselves
(engine_compat.shared_projected_values): no deep copy of what is only encoded and sent. Outside that
context, and for exclusions, the engine's projection copies as before; nothing stored is ever changed."""

from __future__ import annotations

import copy
from typing import Any

from pymongo.database import Database

from workbook import engine_compat

STORED: dict[str, Any] = {"_id": 1, "a": {"x": [1, 2], "y": {"z": 3}}, "b": [{"c": 1, "d": 2}, {"c": 3}], "e": "s"}


def test_inclusions_share_within_the_context_and_copy_outside_it() -> None:
    document = copy.deepcopy(STORED)
    project = engine_compat.projection_executor({"a": 1, "b.c": 1}, None)
    with engine_compat.shared_projected_values():
        shared = project(document)
    copied = project(document)
    assert shared == copied == {"_id": 1, "a": {"x": [1, 2], "y": {"z": 3}}, "b": [{"c": 1}, {"c": 3}]}
    assert shared["a"] is document["a"], "the included subdocument itself"
    assert copied["a"] is not document["a"] and copied["a"]["x"] is not document["a"]["x"]
    assert shared["b"] is not document["b"], "a path into an array builds its own elements"


def test_an_exclusion_in_the_context_leaves_the_stored_document_whole() -> None:
    document = copy.deepcopy(STORED)
    with engine_compat.shared_projected_values():
        for spec in ({"a": 0}, {"a.y": 0, "b": 0}, {"b": {"$slice": 1}}):
            engine_compat.projection_executor(spec, None)(document)
    assert document == STORED


def test_a_projected_find_returns_the_same_and_changes_nothing(db: Database) -> None:
    documents = [{**copy.deepcopy(STORED), "_id": i, "n": i} for i in range(300)]  # past the first batch
    db.items.insert_many(documents)
    for spec in ({"a": 1}, {"a.y": 1, "n": 1}, {"b": 1, "_id": 0}, {"a": 0}):
        got = list(db.items.find({}, spec))
        again = list(db.items.find({}, spec))
        assert got == again and len(got) == 300, spec
    assert list(db.items.find({}).sort("_id", 1)) == documents

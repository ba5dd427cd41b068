"""``$unwind``: one document per array element, each independent, fields in their places.

The offline default copies each document once per element (not once per element with the whole
array, as mongoeco does: workbook/engine_aggregation.py ``_install_unwind_copies``). The wire tests
also run against a real server when ``MONGODB_URI`` is set; the comparison with mongoeco's own
``$unwind`` runs on random documents.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from pymongo.database import Database

from tests.random_documents import comparable, random_value


def _unwound(db: Database, documents: list[dict[str, Any]], *stages: dict[str, Any]) -> list[dict[str, Any]]:
    db.u.delete_many({})
    db.u.insert_many(documents)
    return list(db.u.aggregate([{"$sort": {"_id": 1}}, *stages]))


def test_each_element_gets_its_own_document_with_the_fields_in_their_places(db: Database) -> None:
    rows = _unwound(
        db, [{"_id": 1, "a": 0, "items": [{"p": 1}, {"p": 2}, {"p": 3}], "z": "last"}], {"$unwind": "$items"}
    )
    assert [list(row) for row in rows] == [["_id", "a", "items", "z"]] * 3
    assert [row["items"] for row in rows] == [{"p": 1}, {"p": 2}, {"p": 3}]


def test_a_nested_path_with_its_index_and_kept_empties(db: Database) -> None:
    documents = [
        {"_id": 1, "o": {"k": "x", "list": [10, 20], "after": True}},
        {"_id": 2, "o": {"k": "y", "list": []}},
        {"_id": 3, "o": {"k": "z"}},
        {"_id": 4, "o": {"k": "w", "list": 7}},
    ]
    spec = {"path": "$o.list", "includeArrayIndex": "i", "preserveNullAndEmptyArrays": True}
    rows = _unwound(db, documents, {"$unwind": spec})
    assert rows == [
        {"_id": 1, "o": {"k": "x", "list": 10, "after": True}, "i": 0},
        {"_id": 1, "o": {"k": "x", "list": 20, "after": True}, "i": 1},
        {"_id": 2, "o": {"k": "y"}, "i": None},
        {"_id": 3, "o": {"k": "z"}, "i": None},
        {"_id": 4, "o": {"k": "w", "list": 7}, "i": None},
    ]
    assert [list(row["o"]) for row in rows[:2]] == [["k", "list", "after"]] * 2


def test_a_change_to_one_unwound_document_leaves_the_others_alone(db: Database) -> None:
    rows = _unwound(
        db,
        [{"_id": 1, "meta": {"n": 0}, "tags": ["a", "b", "c"]}],
        {"$unwind": "$tags"},
        {"$set": {"meta.n": {"$cond": [{"$eq": ["$tags", "b"]}, 99, "$meta.n"]}}},
    )
    assert [(row["tags"], row["meta"]["n"]) for row in rows] == [("a", 0), ("b", 99), ("c", 0)]


@pytest.mark.parametrize("seed", range(25))
def test_the_faster_unwind_gives_what_mongoeco_gives(seed: int) -> None:
    from mongoeco.core.aggregation import runtime

    from workbook.offline import offline_server

    offline_server()  # the engine's fixes installed
    faster = runtime._apply_unwind
    original = faster.__wrapped__
    rng = random.Random(seed)
    documents = [
        {"_id": n, "a": random_value(rng, 0), "b": {"c": random_value(rng, 1), "d": n}, "e": n} for n in range(20)
    ]
    for spec in ("$a", "$b.c", {"path": "$b.c", "includeArrayIndex": "i", "preserveNullAndEmptyArrays": True}):
        ours, theirs = faster(documents, spec), original(documents, spec)
        assert [comparable(d) for d in ours] == [comparable(d) for d in theirs], spec

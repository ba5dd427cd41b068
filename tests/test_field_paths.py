"""Field path expressions (``"$a.b"``) on the offline default: the fast walk through subdocuments
(workbook/engine_aggregation.py ``field_path_value``) answers exactly what mongoeco's own evaluator
answers, on random documents and paths; anything else still goes to mongoeco."""

from __future__ import annotations

import datetime
import random
from typing import Any

import pytest
from bson import DBRef, Int64, ObjectId
from pymongo.database import Database

from workbook import engine_aggregation

_NAMES = ["a", "b", "c", "", "0", "1"]


def _value(rng: random.Random, depth: int) -> Any:
    choice = rng.randrange(10 if depth < 4 else 5)
    if choice == 0:
        return None
    if choice == 1:
        return rng.randrange(-5, 5)
    if choice == 2:
        return rng.choice(["x", "", "$a", 1.5, Int64(7), True, datetime.datetime(2025, 1, 2)])
    if choice == 3:
        return ObjectId(b"123456789012")
    if choice == 4:
        return DBRef("c", 1)
    if choice in (5, 6, 7):
        return {rng.choice(_NAMES): _value(rng, depth + 1) for _ in range(rng.randrange(4))}
    return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]


def _path(rng: random.Random) -> str:
    expression = "$" + ".".join(rng.choice(_NAMES[:3] + ["0", "z"]) for _ in range(1 + rng.randrange(4)))
    return expression + rng.choice(["", "", "", "."])


@pytest.mark.parametrize("seed", range(20))
def test_the_fast_walk_answers_as_mongoecos_evaluator(seed: int) -> None:
    from mongoeco.core.aggregation import runtime

    engine_aggregation.install_object_expression_missing()
    patched = runtime.evaluate_expression
    original = patched.__wrapped__
    rng = random.Random(seed)
    walked = 0
    for _ in range(300):
        document = {name: _value(rng, 1) for name in rng.sample(_NAMES[:3], rng.randrange(4))}
        for expression in [_path(rng) for _ in range(5)] + ["$", "$$ROOT", "$$CURRENT.a", "plain", "$a..b"]:
            expected = original(document, expression, None)
            assert patched(document, expression, None) == expected, (document, expression)
            assert type(patched(document, expression, None)) is type(expected)
            walked += engine_aggregation.field_path_value(document, expression) is not engine_aggregation._ENGINE
    assert walked > 300  # the fast walk answered many of them (not only the fallback)


def test_a_group_over_unwound_subdocuments_with_missing_and_array_paths(db: Database) -> None:
    db.g.delete_many({})
    db.g.insert_many(
        [
            {"_id": 1, "items": [{"p": "x", "q": 2, "price": 1.5}, {"p": "y", "q": 1}]},
            {"_id": 2, "items": [{"p": "x", "q": Int64(3), "price": 2}, {"p": "x", "tags": [{"q": 5}]}]},
            {"_id": 3, "items": []},
        ]
    )
    rows = list(
        db.g.aggregate(
            [
                {"$unwind": "$items"},
                {
                    "$group": {
                        "_id": "$items.p",
                        "units": {"$sum": "$items.q"},
                        "revenue": {"$sum": {"$multiply": ["$items.price", "$items.q"]}},
                        "names": {"$push": "$items.p"},
                        "last": {"$last": "$items.nothing"},
                    }
                },
                {"$sort": {"_id": 1}},
            ]
        )
    )
    assert rows == [
        {"_id": "x", "units": 5, "revenue": 9.0, "names": ["x", "x", "x"], "last": None},
        {"_id": "y", "units": 1, "revenue": 0, "names": ["y"], "last": None},
    ]

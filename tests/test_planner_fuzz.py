"""Seeded random finds (all the operators the model covers, $or included) on random collections:
the model must neither crash nor return another count than the offline engine's own find()."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from pymongo.database import Database

import workbook
from workbook.errors import UnsupportedByModelError
from workbook.planner import explain_find

INDEXES = [[("a", 1)], [("b", 1)], [("a", 1), ("c", 1)], [("o.x", 1), ("o.y", 1)], [("c", -1)]]


def _document(rng: random.Random, number: int) -> dict[str, Any]:
    document: dict[str, Any] = {"_id": number, "a": rng.randint(0, 9), "c": rng.randint(0, 5)}
    document["b"] = rng.randint(0, 9) if rng.random() < 0.5 else [rng.randint(0, 9) for _ in range(rng.randint(0, 3))]
    if rng.random() < 0.5:
        document["o"] = [{"x": rng.randint(0, 4), "y": rng.randint(0, 4)} for _ in range(rng.randint(1, 3))]
    return document


def _leaf(rng: random.Random) -> dict[str, Any]:
    path, value, kind = rng.choice(["a", "b", "c", "o.x"]), rng.randint(0, 9), rng.random()
    choices: list[dict[str, Any]] = [
        {path: value},
        {path: {rng.choice(["$gt", "$gte", "$lt", "$lte"]): value}},
        {path: {"$in": rng.sample(range(10), 3)}},
        {path: {"$ne": value}},
        {path: {"$nin": [value, value + 1]}},
        {path: {"$exists": rng.random() < 0.7}},
        {"b": {"$all": rng.sample(range(10), 2)}},
        {"b": {"$size": rng.randint(0, 3)}},
        {"b": {"$elemMatch": {"$gt": rng.randint(0, 5), "$lt": rng.randint(4, 9)}}},
        {"o": {"$elemMatch": {"x": rng.randint(0, 4), "y": {"$gte": rng.randint(0, 4)}}}},
        {path: {"$type": rng.choice(["number", "array", "int"])}},
        {"b": [rng.randint(0, 9), rng.randint(0, 9)]},
        {path: {"$not": {rng.choice(["$gt", "$lte"]): value}}},
    ]
    return choices[int(kind * len(choices))]


def _filter(rng: random.Random) -> dict[str, Any]:
    shape = rng.random()
    if shape < 0.4:
        return {"$or": [_leaf(rng) for _ in range(rng.randint(2, 3))]}
    if shape < 0.55:
        return {**_leaf(rng), "$or": [_leaf(rng), _leaf(rng)]}
    combined: dict[str, Any] = {}
    for _ in range(rng.randint(1, 2)):
        combined.update(_leaf(rng))
    return combined


@pytest.fixture
def db(monkeypatch: pytest.MonkeyPatch) -> Iterator[Database]:
    monkeypatch.delenv("MONGODB_URI", raising=False)
    database = workbook.connect(database=f"t{uuid.uuid4().hex[:10]}", quiet=True)
    yield database
    database.client.drop_database(database.name)


@pytest.mark.parametrize("seed", range(4))
def test_random_finds_match_the_engines_counts(db: Database, seed: int) -> None:
    rng = random.Random(seed)
    checked = 0
    for case in range(8):
        collection = db[f"c{case}"]
        documents = [_document(rng, i) for i in range(rng.randint(5, 60))]
        collection.insert_many([dict(d) for d in documents])
        for key in rng.sample(INDEXES, rng.randint(0, 4)):
            collection.create_index(key)
        indexes = list(collection.list_indexes())
        for _ in range(5):
            query, sort = _filter(rng), rng.choice([None, [("a", 1)], [("c", -1)], [("_id", 1)]])
            limit = rng.choice([None, None, 3])
            try:
                e = explain_find(documents, indexes, namespace="t.c", filter=query, sort=sort, limit=limit)
            except UnsupportedByModelError:
                continue
            expected = len(list(collection.find(query, sort=sort, limit=limit or 0)))
            assert e["executionStats"]["nReturned"] == expected, (query, sort, limit, indexes)
            checked += 1
    assert checked >= 30  # the generator stays inside what the model covers

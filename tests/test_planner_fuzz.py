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


def _timeless(value: Any) -> Any:
    """An explain document without its wall-clock fields."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if "Millis" not in k}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


@pytest.mark.parametrize("seed", range(6))
def test_skipping_indexes_that_cannot_serve_changes_no_plan(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The planner builds no keys for an index without a predicate on its first field, nor for one
    that cannot give the sort (plans.may_bound, may_order): every explain is the one built with all
    indexes considered, and the pruning does skip some."""
    from workbook.planner import plans

    rng = random.Random(seed)
    skipped = compared = 0
    pruned_bound, pruned_order = plans.may_bound, plans.may_order

    def counting_bound(*args: Any) -> bool:
        nonlocal skipped
        answer = pruned_bound(*args)
        skipped += not answer
        return answer

    for _ in range(10):
        documents = [_document(rng, i) for i in range(rng.randint(5, 40))]
        indexes = [{"v": 2, "key": {"_id": 1}, "name": "_id_"}] + [
            {"v": 2, "key": dict(key), "name": "_".join(f"{f}_{d}" for f, d in key)}
            for key in rng.sample(INDEXES, rng.randint(1, 5))
        ]
        for _ask in range(6):
            query, sort = _filter(rng), rng.choice([None, [("a", 1)], [("c", -1)], [("_id", 1)], [("o.x", 1)]])
            explains = []
            for prune in (True, False):
                with monkeypatch.context() as patched:
                    if prune:
                        patched.setattr(plans, "may_bound", counting_bound)
                    else:
                        patched.setattr(plans, "may_bound", lambda *args: True)
                        patched.setattr(plans, "may_order", lambda *args: True)
                    try:
                        explains.append(
                            _timeless(explain_find(documents, indexes, namespace="t.c", filter=query, sort=sort))
                        )
                    except UnsupportedByModelError as error:
                        explains.append(str(error))
            assert explains[0] == explains[1], (query, sort, indexes)
            compared += 1
    assert pruned_order is plans.may_order
    assert compared == 60 and skipped > 20


def test_an_index_whose_later_field_is_a_point_still_gives_that_sort() -> None:
    """Why may_order keeps an index a predicate touches: {a: 1, c: 1} scanned whole with c in [3, 3]
    returns {c: 3} already in c order, so the model picks it over a blocking sort."""
    documents = [{"_id": i, "a": i % 3, "c": i % 4} for i in range(20)]
    indexes = [{"v": 2, "key": {"_id": 1}, "name": "_id_"}, {"v": 2, "key": {"a": 1, "c": 1}, "name": "a_1_c_1"}]
    explained = explain_find(documents, indexes, namespace="t.c", filter={"c": 3}, sort=[("c", -1)])
    plan = explained["queryPlanner"]["winningPlan"]
    assert plan["stage"] == "FETCH" and plan["inputStage"]["indexName"] == "a_1_c_1", plan

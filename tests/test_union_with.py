"""``$unionWith``: the gathered documents, then the foreign ones, each independent of what is stored.

The offline default copies each document once per pipeline, not once per ``$unionWith`` after it, as
mongoeco does (workbook/engine_aggregation.py ``_install_union_with_copies``). The comparison with
mongoeco's own ``$unionWith`` runs on random documents and pipelines; the stored documents are read
back over the wire after pipelines that change what the union returned; the copies are counted.
MongoDB's own answers come from jstests/aggregation/sources/unionWith/unionWith_basic.js (all 4 assertions)
and unionWith.js (the unions, sub-pipelines, $group, $sort/$limit, getMore and missing/empty collection
assertions; its memory-limit and spilling parameters have no offline counterpart and are left out).
"""

from __future__ import annotations

import copy
import gc
import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pymongo.database import Database

from tests.random_documents import comparable, random_value

COLLECTIONS = ("a", "b", "c")


@pytest.fixture(scope="module")
def installed() -> tuple[Callable[..., Any], Callable[..., Any]]:
    """(the installed ``_apply_union_with``, mongoeco's own)."""
    from mongoeco.core.aggregation import join_stages, stages

    from workbook.offline import offline_server

    offline_server()  # the engine's fixes installed
    faster = join_stages._apply_union_with
    assert stages._apply_union_with is faster  # the stage table's module calls the installed one
    return faster, faster.__wrapped__


@pytest.fixture
def wire_db() -> Iterator[Database]:
    import workbook

    database = workbook.connect(database="unionwith_test", quiet=True)
    database.client.drop_database(database.name)
    yield database
    database.client.drop_database(database.name)


def _random_document(rng: random.Random, number: int) -> dict[str, Any]:
    return {"_id": number, "n": rng.randrange(10), "o": {"f0": random_value(rng, 1), "k": number}, "v": [number]}


def _changing_stage(rng: random.Random) -> dict[str, Any]:
    """A stage that changes (or drops) documents, their subdocuments and arrays included."""
    return rng.choice(
        [
            {"$set": {"o.k": "changed", "o.seen": True}},
            {"$addFields": {"n": {"$add": [{"$ifNull": ["$n", 0]}, 1]}, "v": {"$concatArrays": [[0], "$v"]}}},
            {"$unset": ["o.f0", "v"]},
            {"$project": {"n": 1, "o": 1}},
            {"$match": {"n": {"$gte": rng.randrange(10)}}},
            {"$replaceWith": {"$mergeObjects": ["$$ROOT", {"r": "$o"}]}},
        ]
    )


def _random_union(rng: random.Random, missing_left: list[int]) -> dict[str, Any]:
    sub = [_changing_stage(rng) for _ in range(rng.randrange(3))]
    coll = rng.choice(COLLECTIONS)
    roll = rng.random()
    if roll < 0.03 and missing_left[0]:  # not loaded: mongoeco unions the gathered documents with themselves
        missing_left[0] -= 1
        return {"$unionWith": "missing"}
    if roll < 0.3:
        return {"$unionWith": coll}
    if roll < 0.5:
        return {"$unionWith": {"coll": coll}}
    if roll < 0.75:
        return {"$unionWith": {"coll": coll, "pipeline": sub}}
    if roll < 0.9:
        literal = [_random_document(rng, 100 + i) for i in range(rng.randrange(3))]
        return {"$unionWith": {"pipeline": [{"$documents": literal}, *sub]}}
    return {"$unionWith": {"pipeline": sub}}  # the aggregated collection itself


def _random_pipeline(rng: random.Random) -> list[dict[str, Any]]:
    pipeline: list[dict[str, Any]] = []
    missing_left = [2]
    for _ in range(rng.randint(1, 60)):
        if rng.random() < 0.1:
            pipeline.append(_changing_stage(rng))
        pipeline.append(_random_union(rng, missing_left))
    return pipeline + [_changing_stage(rng) for _ in range(rng.randrange(1, 4))]


def _run(stored: dict[str, list[dict[str, Any]]], pipeline: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """mongoeco's pipeline over ``stored`` (the aggregated collection is ``main``), as the cursor runs it."""
    from mongoeco.core.aggregation.resources import AggregationResources
    from mongoeco.core.aggregation.stages import apply_pipeline

    resources = AggregationResources(documents=stored, collection="main")
    return apply_pipeline(list(stored["main"]), pipeline, collection_resolver=resources)


@pytest.mark.parametrize("seed", range(30))
def test_the_union_gives_what_mongoeco_gives(
    seed: int, installed: tuple[Callable[..., Any], Callable[..., Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from mongoeco.core.aggregation import stages

    from workbook import engine_aggregation

    _faster, original = installed
    rng = random.Random(seed)
    stored = {
        name: [_random_document(rng, 10 * index + i) for i in range(rng.randrange(1, 5))]
        for index, name in enumerate(("main", *COLLECTIONS))
    }
    before = copy.deepcopy(stored)
    pipeline = _random_pipeline(rng)
    ours = _run(stored, pipeline)
    gc.collect()  # a stage's closure may hold the pipeline's variables in a cycle
    assert not engine_aggregation._union_outputs  # nothing kept once the pipeline is over
    assert [comparable(d) for d in stored.values()] == [
        comparable(d) for d in before.values()
    ]  # the stored ones untouched
    monkeypatch.setattr(stages, "_apply_union_with", original)
    theirs = _run(stored, pipeline)
    assert [comparable(d) for d in ours] == [comparable(d) for d in theirs], pipeline


def test_only_the_list_the_union_returned_goes_on_uncopied(
    installed: tuple[Callable[..., Any], Callable[..., Any]],
) -> None:
    from mongoeco.core.aggregation.evaluation_environment import aggregation_environment
    from mongoeco.core.aggregation.resources import AggregationResources

    faster, _original = installed
    stored = {"main": [{"_id": 1, "o": {"k": 1}}], "a": [{"_id": 2, "o": {"k": 2}}]}
    resources = AggregationResources(documents=stored, collection="main")
    variables = aggregation_environment(None)  # one per pipeline, as apply_pipeline makes it

    def shared(left: list[Any], right: list[Any]) -> int:
        return sum(x is y or x["o"] is y["o"] for x, y in zip(left, right, strict=False))

    borrowed = list(stored["main"])
    first = faster(borrowed, "a", resources, variables)
    assert shared(first, borrowed) == 0 and shared(first[1:], stored["a"]) == 0  # borrowed: copied as mongoeco does
    second = faster(first, "a", resources, variables)
    assert shared(second, first) == 2 and shared(second[2:], stored["a"]) == 0  # its own list: not again
    assert shared(faster(first, "a", resources, variables), first) == 0  # handed on once: copied the second time
    third = faster(list(second), "a", resources, variables)  # an equal list, not the one returned
    assert shared(third, second) == 0
    assert shared(faster(third, "a", resources, aggregation_environment(None)), third) == 0  # another pipeline
    assert shared(faster(third, "a", resources, None), third) == 0  # no pipeline (a direct call)
    assert [d["_id"] for d in third] == [1, 2, 2, 2]


def test_stored_documents_are_unchanged_by_what_follows_the_union(wire_db: Database) -> None:
    stored = {
        name: [{"_id": i, "o": {"k": name, "list": [{"x": i}]}, "v": [i, i + 1]} for i in range(3)]
        for name in ("main", *COLLECTIONS)
    }
    for name, documents in stored.items():
        wire_db[name].insert_many(copy.deepcopy(documents))
    unions: list[dict[str, Any]] = [
        {"$unionWith": "a"},
        {"$unionWith": {"coll": "b", "pipeline": [{"$match": {"_id": {"$gte": 1}}}]}},
        {"$unionWith": {"pipeline": [{"$documents": [{"_id": 9, "o": {"k": "literal"}, "v": [9]}]}]}},
        {"$unionWith": {"pipeline": []}},  # main again
        {"$unionWith": "c"},
        {"$unionWith": "a"},
    ]
    changes: list[dict[str, Any]] = [
        {"$set": {"o.k": "changed", "o.list.x": -1, "o.added": True}},
        {"$addFields": {"v": {"$concatArrays": ["$v", [99]]}, "o.more": 1}},
        {"$unset": ["o.list", "_id"]},
    ]
    for _ in range(2):  # a second time over the foreign documents the engine kept from the first
        rows = list(wire_db.main.aggregate([*unions, *changes]))
        assert len(rows) == 3 + 3 + 2 + 1 + 3 + 3 + 3
        assert all(row["o"]["k"] == "changed" and "list" not in row["o"] and row["v"][-1] == 99 for row in rows)
        unwound = list(wire_db.main.aggregate([*unions, {"$unwind": "$o.list"}, {"$set": {"o.list.x": -5}}]))
        assert len(unwound) == 17 and {row["o"]["list"]["x"] for row in unwound} == {-5}
    for name, documents in stored.items():
        assert list(wire_db[name].find({}, sort=[("_id", 1)])) == documents, name


def _count_copies(db: Database, monkeypatch: pytest.MonkeyPatch, stages: int) -> tuple[int, int]:
    """(``deepcopy`` calls of mongoeco's join stages, documents returned) for ``stages`` ``$unionWith`` stages
    over one-document collections, as notebook 11 merges its daily collections."""
    from mongoeco.core.aggregation import join_stages

    for number in range(stages + 1):
        db[f"day{number}"].insert_one({"_id": number, "at": {"hour": number}})
    calls = [0]
    real = join_stages.deepcopy

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(join_stages, "deepcopy", counted)
    pipeline = [{"$unionWith": {"coll": f"day{n}", "pipeline": [{"$set": {"day": n}}]}} for n in range(1, stages + 1)]
    rows = list(db.day0.aggregate(pipeline))
    monkeypatch.undo()
    return calls[0], len(rows)


def test_each_document_is_copied_once_per_pipeline(wire_db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    copies, returned = _count_copies(wire_db, monkeypatch, 50)
    assert returned == 51
    assert copies == 51  # linear: mongoeco's own copies all gathered so far at each stage, 1,325 here


# --- MongoDB's own answers: jstests/aggregation/sources/unionWith/unionWith_basic.js and unionWith.js ---------
# The same collections and pipelines as the jstests, with their expected results; a multiset comparison where the
# jstest uses anyEq (no order promised), an exact one where it sorts; field order is compared too (an inner
# sub-pipeline's $addFields runs first, so its field comes first). Run on every engine (``db`` fixture).


def _four(db: Database) -> dict[str, list[dict[str, Any]]]:
    """unionWith.js's collections A-D, five documents each, and what a plain find returns from each."""
    fields = {
        "A": ("a", lambda i: i),
        "B": ("b", lambda i: i * 2),
        "C": ("c", lambda i: 10 - i),
        "D": ("d", lambda i: i * 3),
    }
    for name, (field, value) in fields.items():
        db[name].insert_many([{field: i, "val": value(i), "groupKey": i} for i in range(5)])
    return {name: list(db[name].find()) for name in fields}


def _multiset(documents: list[dict[str, Any]]) -> list[Any]:
    return sorted(repr(comparable(document)) for document in documents)


def _with(documents: list[dict[str, Any]], **added: Any) -> list[dict[str, Any]]:
    return [{**document, **added} for document in documents]


def test_unionwith_basic_empty_sources_sorted_results_and_nesting(db: Database) -> None:
    assert list(db.A.aggregate([{"$unionWith": {"coll": "B", "pipeline": []}}])) == []
    db.A.insert_many([{"_id": "A_1"}, {"_id": "A_2"}])
    db.B.insert_many([{"_id": "B_1"}, {"_id": "B_2"}])
    everything = [{"_id": "A_1"}, {"_id": "A_2"}, {"_id": "B_1"}, {"_id": "B_2"}]
    assert list(db.A.aggregate([{"$unionWith": {"coll": "B", "pipeline": []}}, {"$sort": {"_id": 1}}])) == everything
    matched = [{"$unionWith": {"coll": "B", "pipeline": [{"$match": {"_id": "B_2"}}]}}, {"$sort": {"_id": 1}}]
    assert list(db.A.aggregate(matched)) == [{"_id": "A_1"}, {"_id": "A_2"}, {"_id": "B_2"}]
    assert list(db.A.aggregate([{"$unionWith": {"coll": "B", "pipeline": [{"$unionWith": "C"}]}}])) == everything


def test_unionwith_sequential_and_nested_unions_of_four_collections(db: Database) -> None:
    found = _four(db)
    assert _multiset(list(db.A.aggregate([{"$unionWith": "B"}]))) == _multiset(found["A"] + found["B"])
    every = _multiset(found["A"] + found["B"] + found["C"] + found["D"])
    sequential = [{"$unionWith": "B"}, {"$unionWith": "C"}, {"$unionWith": "D"}]
    assert _multiset(list(db.A.aggregate(sequential))) == every
    nested = [
        {"$unionWith": {"coll": "B", "pipeline": [{"$unionWith": {"coll": "C", "pipeline": [{"$unionWith": "D"}]}}]}}
    ]
    assert _multiset(list(db.A.aggregate(nested))) == every


def test_unionwith_sub_pipelines_change_only_their_own_documents(db: Database) -> None:
    found = _four(db)
    once = [{"$unionWith": {"coll": "B", "pipeline": [{"$addFields": {"x": 3}}]}}]
    assert _multiset(list(db.A.aggregate(once))) == _multiset(found["A"] + _with(found["B"], x=3))
    nested = [
        {
            "$unionWith": {
                "coll": "B",
                "pipeline": [
                    {
                        "$unionWith": {
                            "coll": "C",
                            "pipeline": [
                                {"$unionWith": {"coll": "D", "pipeline": [{"$addFields": {"z": 5}}]}},
                                {"$addFields": {"y": 4}},
                            ],
                        }
                    },
                    {"$addFields": {"x": 3}},
                ],
            }
        }
    ]
    expected = found["A"] + _with(found["B"], x=3) + _with(found["C"], y=4, x=3) + _with(found["D"], z=5, y=4, x=3)
    assert _multiset(list(db.A.aggregate(nested))) == _multiset(expected)
    side_by_side = [
        {
            "$unionWith": {
                "coll": "B",
                "pipeline": [
                    {"$unionWith": {"coll": "C", "pipeline": [{"$addFields": {"y": 4}}]}},
                    {"$unionWith": {"coll": "D", "pipeline": [{"$addFields": {"z": 5}}]}},
                    {"$addFields": {"x": 3}},
                ],
            }
        }
    ]
    expected = found["A"] + _with(found["B"], x=3) + _with(found["C"], y=4, x=3) + _with(found["D"], z=5, x=3)
    assert _multiset(list(db.A.aggregate(side_by_side))) == _multiset(expected)


def _sums(*values: int) -> list[dict[str, int]]:
    """``{_id: k, sum: values[k]}`` per group key k, as the jstest writes its expected groups."""
    return [{"_id": key, "sum": value} for key, value in enumerate(values)]


def test_unionwith_groups_over_the_union_and_inside_the_sub_pipeline(db: Database) -> None:
    found = _four(db)
    outer = [{"$unionWith": "B"}, {"$group": {"_id": "$groupKey", "sum": {"$sum": "$val"}}}]
    assert _multiset(list(db.A.aggregate(outer))) == _multiset(_sums(0, 3, 6, 9, 12))
    both = [
        {
            "$unionWith": {
                "coll": "B",
                "pipeline": [
                    {"$group": {"_id": "$groupKey", "val": {"$sum": "$val"}}},
                    {"$addFields": {"groupKey": 1}},
                ],
            }
        },
        {"$group": {"_id": "$groupKey", "sum": {"$sum": "$val"}}},
    ]
    assert _multiset(list(db.A.aggregate(both))) == _multiset(_sums(0, 21, 2, 3, 4))
    inner = [{"$unionWith": {"coll": "B", "pipeline": [{"$group": {"_id": "$groupKey", "sum": {"$sum": "$val"}}}]}}]
    assert _multiset(list(db.A.aggregate(inner))) == _multiset(found["A"] + _sums(0, 2, 4, 6, 8))


def test_unionwith_sort_and_limit_in_the_sub_pipeline_and_results_across_get_mores(db: Database) -> None:
    found = _four(db)
    limited = [{"$unionWith": {"coll": "B", "pipeline": [{"$sort": {"b": 1}}, {"$limit": 2}]}}]
    first_two = list(db.B.find().sort("b", 1).limit(2))
    assert _multiset(list(db.A.aggregate(limited))) == _multiset(found["A"] + first_two)
    assert len(list(db.A.aggregate([{"$unionWith": "D"}], batchSize=2))) == 10
    added = [{"$unionWith": {"coll": "D", "pipeline": [{"$addFields": {"x": 3}}]}}]
    assert len(list(db.A.aggregate(added, batchSize=2))) == 10  # a getMore before A is exhausted
    assert len(list(db.A.aggregate(added, batchSize=6))) == 10  # and after


def test_unionwith_missing_and_empty_collections(db: Database) -> None:
    found = _four(db)
    a = _multiset(found["A"])
    assert _multiset(list(db.A.aggregate([{"$unionWith": "nonExistentCollectionAlpha"}]))) == a
    beta = [{"$unionWith": {"coll": "nonExistentCollectionBeta", "pipeline": [{"$addFields": {"ted": 5}}]}}]
    assert _multiset(list(db.A.aggregate(beta))) == a
    assert _multiset(list(db.nonExistentCollectionCharlie.aggregate([{"$unionWith": "A"}]))) == a
    db.create_collection("emptyCollection")
    assert _multiset(list(db.emptyCollection.aggregate([{"$unionWith": "A"}]))) == a
    empty = [{"$unionWith": {"coll": "emptyCollection", "pipeline": [{"$addFields": {"ted": 5}}]}}]
    assert _multiset(list(db.A.aggregate(empty))) == a

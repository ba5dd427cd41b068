"""``$group`` on the offline default: the plain-scalar fast paths (workbook/engine_aggregation.py
``plain_arithmetic`` and ``_install_plain_accumulators``) give exactly what mongoeco's own
accumulators and evaluator give, on random documents of every awkward value; anything else still
goes to mongoeco."""

from __future__ import annotations

import datetime
import math
import random
from typing import Any

import pytest
from bson import Decimal128, Int64
from pymongo.database import Database

from workbook import engine_aggregation

_VALUES: list[Any] = [
    0, 1, -1, 2, 7, 2**31 - 1, 2**31, 2**62, 2**63 - 1, -(2**63), 1.5, -0.0, 0.0, 2.25, float("nan"),
    float("inf"), -float("inf"), 1e308, True, False, None, "", "a", "b", "é", "日本", "Z",
    datetime.datetime(2025, 1, 2), datetime.datetime(2024, 5, 6, 7, 8, 9, 123000),
    datetime.datetime(2025, 1, 2, tzinfo=datetime.UTC), Int64(3), Int64(2**40), Decimal128("1.1"),
    [1, 2], [], {"x": 1}, {},
]  # fmt: skip
_EXPRESSIONS: list[Any] = [
    "$v", "$w", "$d.v", "$missing", 1, 2.5, {"$multiply": ["$v", "$w"]}, {"$add": ["$v", "$w", 1]},
    {"$multiply": ["$v", 2]}, {"$add": ["$d.v", "$v"]}, {"$multiply": ["$v", "$w", "$v"]}, "$$REMOVE",
]  # fmt: skip
_ACCUMULATORS = ["$sum", "$min", "$max", "$first", "$last", "$avg", "$push", "$addToSet"]


def _document(rng: random.Random, at: int) -> dict[str, Any]:
    document: dict[str, Any] = {"_id": at, "g": rng.randrange(3)}
    for name in ("v", "w"):
        if rng.random() < 0.85:
            document[name] = rng.choice(_VALUES)
    if rng.random() < 0.5:
        document["d"] = {"v": rng.choice(_VALUES)} if rng.random() < 0.8 else [{"v": 1}]
    return document


def _same(left: Any, right: Any) -> bool:
    """Equal values of the same types, NaN equal to NaN, -0.0 apart from 0.0."""
    if type(left) is not type(right):
        return False
    if isinstance(left, float):
        if math.isnan(left) or math.isnan(right):
            return math.isnan(left) and math.isnan(right)
        return left == right and math.copysign(1, left) == math.copysign(1, right)
    if isinstance(left, dict):
        return list(left) == list(right) and all(_same(left[k], right[k]) for k in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(map(_same, left, right))
    return bool(left == right)


def _group(spec: dict[str, Any], documents: list[dict[str, Any]]) -> Any:
    from mongoeco.core.aggregation.grouping_stages import _IncrementalGroup

    group = _IncrementalGroup(spec)
    try:
        group.consume(documents)
    except Exception as error:  # noqa: BLE001  # the error is part of the answer compared
        return ("error", type(error).__name__, str(error))
    return group.finish()


@pytest.mark.parametrize("seed", range(25))
def test_the_fast_accumulators_answer_as_mongoecos(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from mongoeco.core.aggregation import grouping_stages

    engine_aggregation.install_aggregation_semantics()
    fast = grouping_stages._apply_accumulators
    original = fast.__wrapped__
    rng = random.Random(seed)
    for _ in range(40):
        documents = [_document(rng, at) for at in range(rng.randrange(1, 12))]
        fields = {f"f{n}": {rng.choice(_ACCUMULATORS): rng.choice(_EXPRESSIONS)} for n in range(rng.randrange(1, 5))}
        fields["n"] = {"$count": {}}
        spec = {"_id": "$g", **fields}
        answered = _group(spec, documents)
        with monkeypatch.context() as patched:
            patched.setattr(grouping_stages, "_apply_accumulators", original)
            expected = _group(spec, documents)
        assert _same(answered, expected), (spec, documents, answered, expected)


_EDGES = [
    [float("nan"), 1.5], [1.5, float("nan")], [-0.0, 0.0], [0.0, -0.0], ["b", "é"], ["日本", "Z", "a"],
    [datetime.datetime(2025, 1, 2), datetime.datetime(2024, 1, 2)], [1, 1.0], [1.0, 1], [2**63 - 1, 1],
    [True, False], [None, 2], [2, None], [Int64(1), 2], [2.5, Decimal128("1")],
]  # fmt: skip


@pytest.mark.parametrize("values", _EDGES, ids=repr)
@pytest.mark.parametrize("accumulator", _ACCUMULATORS)
def test_edge_values_in_order(values: list[Any], accumulator: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from mongoeco.core.aggregation import grouping_stages

    engine_aggregation.install_aggregation_semantics()
    documents = [{"_id": at, "v": value} for at, value in enumerate(values)]
    spec = {"_id": None, "out": {accumulator: "$v"}, "twice": {accumulator: {"$add": ["$v", "$v"]}}}
    answered = _group(spec, documents)
    with monkeypatch.context() as patched:
        patched.setattr(grouping_stages, "_apply_accumulators", grouping_stages._apply_accumulators.__wrapped__)
        expected = _group(spec, documents)
    assert _same(answered, expected), (answered, expected)


def test_the_fast_paths_answer_most_plain_cases() -> None:
    """The comparison above is not only of fallbacks: plain numbers take the fast paths."""
    engine_aggregation.install_aggregation_semantics()
    assert engine_aggregation.plain_arithmetic({"p": 2, "q": 3}, {"$multiply": ["$p", "$q"]}) == 6
    assert engine_aggregation.plain_arithmetic({"p": 2**62}, {"$multiply": ["$p", 4]}) is engine_aggregation._ENGINE
    from mongoeco.core.aggregation.accumulators import _AccumulatorBucket

    bucket = _AccumulatorBucket(bucket_id=1, values={"s": 0, "m": None})
    assert engine_aggregation.accumulate_plain(bucket, ("s", "$sum", "$v"), 2)
    assert engine_aggregation.accumulate_plain(bucket, ("s", "$sum", "$v"), 0.5)
    assert engine_aggregation.accumulate_plain(bucket, ("m", "$max", "$v"), "b")
    assert engine_aggregation.accumulate_plain(bucket, ("m", "$max", "$v"), "a")
    assert not engine_aggregation.accumulate_plain(bucket, ("m", "$max", "$v"), 1)  # mixed types: mongoeco's
    assert bucket.values == {"s": 2.5, "m": "b"}


def test_a_monthly_report_over_the_wire(db: Database) -> None:
    """The store's report shape through pymongo: units, revenue, names, with ints, floats, a long and a
    missing price, grouped and sorted as MongoDB does."""
    db.report.delete_many({})
    db.report.insert_many(
        [
            {"_id": 1, "items": [{"p": "x", "q": 2, "price": 1.5, "name": "X"}, {"p": "y", "q": 1, "price": 4}]},
            {"_id": 2, "items": [{"p": "x", "q": Int64(3), "price": 2.0, "name": "X2"}, {"p": "y", "q": 2}]},
            {"_id": 3, "items": [{"p": "z", "q": 1, "price": Decimal128("2.5"), "name": "Z"}]},
        ]
    )
    rows = list(
        db.report.aggregate(
            [
                {"$unwind": "$items"},
                {
                    "$group": {
                        "_id": "$items.p",
                        "name": {"$max": "$items.name"},
                        "units": {"$sum": "$items.q"},
                        "revenue": {"$sum": {"$multiply": ["$items.price", "$items.q"]}},
                        "first": {"$first": "$items.price"},
                    }
                },
                {"$sort": {"_id": 1}},
            ]
        )
    )
    assert rows == [
        {"_id": "x", "name": "X2", "units": 5, "revenue": 9.0, "first": 1.5},
        {"_id": "y", "name": None, "units": 3, "revenue": 4, "first": 4},
        {"_id": "z", "name": "Z", "units": 1, "revenue": Decimal128("2.5"), "first": Decimal128("2.5")},
    ]
    assert type(rows[0]["units"]) is Int64  # 2 + NumberLong(3) is a long, as MongoDB keeps it

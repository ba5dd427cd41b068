"""Number types through arithmetic, as MongoDB keeps them: a NumberLong stays a NumberLong.

MongoDB's rule (the manual's "$inc" and "$add" pages, and pymongo's own test_custom_types.py, which
decodes longs with a custom decoder): the result of an arithmetic operation has the widest type of
its operands, int < long < double < decimal, and an int result that no longer fits in 32 bits
becomes a long. Every test also runs against a real server when ``MONGODB_URI`` is set.
"""

from __future__ import annotations

from typing import Any

import pytest
from bson import Int64
from pymongo import ReturnDocument
from pymongo.database import Database


def _type_of(db: Database, value: Any) -> str:
    db.n.delete_many({})
    db.n.insert_one({"_id": 1, "x": value})
    return db.n.aggregate([{"$project": {"t": {"$type": "$x"}}}]).next()["t"]


@pytest.mark.parametrize(
    ("start", "update", "expected"),
    [
        (Int64(1), {"$inc": {"x": 1}}, "long"),  # long + int: a long, though 2 fits in 32 bits
        (Int64(5), {"$inc": {"x": -3}}, "long"),
        (Int64(2), {"$mul": {"x": 3}}, "long"),
        (1, {"$inc": {"x": Int64(1)}}, "long"),
        (1, {"$inc": {"x": 1}}, "int"),
        (2**31 - 1, {"$inc": {"x": 1}}, "long"),  # an int past 32 bits becomes a long
        (Int64(1), {"$inc": {"x": 0.5}}, "double"),
    ],
)
def test_an_update_keeps_the_widest_number_type(
    db: Database, start: Any, update: dict[str, Any], expected: str
) -> None:
    db.n.insert_one({"_id": 1, "x": start})
    after = db.n.find_one_and_update({"_id": 1}, update, return_document=ReturnDocument.AFTER)
    assert db.n.aggregate([{"$project": {"t": {"$type": "$x"}}}]).next()["t"] == expected
    assert isinstance(after["x"], Int64) == (expected == "long")


def test_sums_and_sums_of_longs_are_longs(db: Database) -> None:
    db.q.insert_many([{"qty": Int64(1)}, {"qty": Int64(10)}, {"qty": Int64(10)}])
    grouped = db.q.aggregate([{"$group": {"_id": None, "total": {"$sum": "$qty"}}}]).next()
    assert grouped["total"] == 21 and isinstance(grouped["total"], Int64)
    added = db.q.aggregate([{"$limit": 1}, {"$project": {"a": {"$add": ["$qty", 1]}, "b": {"$subtract": ["$qty", 1]}}}])
    first = added.next()
    assert isinstance(first["a"], Int64) and isinstance(first["b"], Int64)
    db.p.insert_many([{"qty": 1}, {"qty": 2}])
    ints = db.p.aggregate([{"$group": {"_id": None, "total": {"$sum": "$qty"}}}]).next()["total"]
    assert ints == 3 and not isinstance(ints, Int64)  # ints stay ints


def test_a_stored_long_reads_back_as_a_long(db: Database) -> None:
    assert _type_of(db, Int64(7)) == "long"
    assert _type_of(db, 7) == "int"

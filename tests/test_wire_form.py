"""wire_form: a document as BSON round-trips it, or a refusal; never a different form."""

from __future__ import annotations

import datetime
import re
import uuid
from typing import Any

import bson
import pytest
from bson import Binary, Code, Decimal128, Int64, ObjectId, Regex, Timestamp
from bson.son import SON

from tests.test_snapshot import _same_form
from workbook.errors import NotPlain
from workbook.wire_form import wire_form

PLAIN: list[Any] = [
    None, True, False, 0, -1, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**62, Int64(5), 1.5, -0.0,
    float("inf"), "", "é李", [], {}, [1, [2, [3]]], {"a": {"b": [{"c": 1}]}}, ObjectId("65a1b2c3d4e5f60718293a4b"),
    datetime.datetime(2024, 1, 2, 3, 4, 5, 678000), Decimal128("1.5"), [2**40, "x", None],
    # aware: pymongo reads the same instant back, naive in UTC
    datetime.datetime(2024, 1, 2, tzinfo=datetime.UTC), datetime.datetime(2024, 1, 2, 3, 4, 5, 678000, datetime.UTC),
    datetime.datetime(2024, 1, 2, 1, 30, tzinfo=datetime.timezone(datetime.timedelta(hours=5, minutes=30))),
    datetime.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=datetime.timezone(-datetime.timedelta(hours=9))),
]  # fmt: skip
REFUSED: list[Any] = [
    datetime.datetime(2024, 1, 2, 3, 4, 5, 678901),  # microseconds: BSON keeps milliseconds
    datetime.datetime(2024, 1, 2, 3, 4, 5, 678901, datetime.UTC),  # aware, with microseconds
    (1, 2), b"\x00", Binary(b"x", 4), uuid.UUID(int=5), Regex("a"), re.compile("a"), Code("f"),
    Timestamp(1, 2), SON([("a", 1)]), 2**63, {1: "not a string key"},
]  # fmt: skip


@pytest.mark.parametrize("value", PLAIN, ids=repr)
def test_plain_values_come_back_as_bson_gives_them_with_their_leaves_shared(value: Any) -> None:
    document = {"_id": 1, "v": value, "nested": {"list": [value, {"v": value}]}}
    formed = wire_form(document)
    assert _same_form(formed, bson.decode(bson.encode(document)))
    assert formed is not document and formed["nested"] is not document["nested"]  # containers are new
    if isinstance(value, str):
        assert formed["v"] is value  # leaves are shared


@pytest.mark.parametrize("value", REFUSED, ids=repr)
def test_anything_else_is_refused_so_the_caller_decodes_the_bson(value: Any) -> None:
    with pytest.raises(NotPlain):
        wire_form({"_id": 1, "deep": [{"v": value}]})


def test_an_aware_datetime_reads_back_as_its_instant_in_naive_utc() -> None:
    tokyo = datetime.timezone(datetime.timedelta(hours=9))
    formed = wire_form({"_id": 1, "at": datetime.datetime(2024, 1, 2, 9, 0, tzinfo=tokyo)})
    assert formed["at"] == datetime.datetime(2024, 1, 2, 0, 0) and formed["at"].tzinfo is None


def test_a_learners_change_to_the_original_does_not_reach_the_stored_form() -> None:
    original = {"_id": 1, "tags": ["a"], "info": {"n": 1}}
    formed = wire_form(original)
    original["tags"].append("b")
    original["info"]["n"] = 2
    assert formed == {"_id": 1, "tags": ["a"], "info": {"n": 1}}

"""A document as a server stores it and pymongo reads it back: ``bson.decode(bson.encode(document))``,
made by copying containers and sharing every leaf.

The bulk loader stores each generated document in this form (as a real ``insert_many`` would: the
driver sends BSON, the server keeps what it decoded), and the offline reads are seeded with the same
objects, so nothing decodes the engine's stored form again. Decoding the BSON itself gives the
same form but fresh strings: the documents a learner's notebook still holds (``store =
workbook.generate(...)``) would then be held twice over (notebook 01 peaked 536 MiB higher).

:func:`wire_form` walks the plain values (dict, list, str, bool, None, float, int, ObjectId, naive
datetime at millisecond precision, Decimal128, Int64): new dicts and lists, the same leaves, an int
outside int32 as ``Int64`` (as BSON's int64 decodes), an aware datetime at millisecond precision as the
same instant in naive UTC (as pymongo's default options decode it: the generated store's and followers'
dates are aware, and their round trip through BSON was about a tenth of their first loads). Anything
else, or a key that is not a string, raises :class:`NotPlain`, and the caller decodes that document's BSON instead.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.objectid import ObjectId

from workbook.errors import NotPlain

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)
_SHARED = frozenset({str, bool, float, ObjectId, Decimal128, Int64, type(None)})
"""Leaves BSON gives back as an equal value of the same type: shared, never copied."""


def wire_form(document: Mapping[str, Any]) -> dict[str, Any]:
    """``document`` as ``bson.decode(bson.encode(document))`` gives it, its leaves shared (see the module)."""
    if type(document) is not dict:
        raise NotPlain
    return _document(document)


def _document(value: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, item in value.items():
        if type(key) is not str:
            raise NotPlain
        out[key] = item if type(item) in _SHARED else _value(item)
    return out


def _value(value: Any) -> Any:
    kind = type(value)
    if kind in _SHARED:
        return value
    if kind is int:
        low, high = INT32
        if low <= value <= high:
            return value
        if INT64[0] <= value <= INT64[1]:
            return Int64(value)
        raise NotPlain  # BSON cannot hold it: encoding raised already
    if kind is dict:
        return _document(value)
    if kind is list:
        return [item if type(item) in _SHARED else _value(item) for item in value]
    if kind is datetime.datetime and value.microsecond % 1000 == 0:
        if value.tzinfo is None:
            return value  # BSON datetimes are milliseconds, naive in pymongo's default options
        return _naive_utc(value)
    raise NotPlain


def _naive_utc(value: datetime.datetime) -> datetime.datetime:
    """An aware datetime as pymongo's default options read it back: the same instant in UTC, naive."""
    offset = value.utcoffset()
    if offset is None:
        raise NotPlain  # a tzinfo without an offset: left to BSON
    try:
        return (value - offset).replace(tzinfo=None)
    except OverflowError:
        raise NotPlain from None  # out of datetime's range in UTC: BSON says what it does

"""BSON values as the planner sees them: the cross-type sort order, and how explain prints them."""

from __future__ import annotations

import datetime
import math
import re
import uuid
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from bson import Binary, Code, DBRef, Decimal128, MaxKey, MinKey, ObjectId, Regex, Timestamp

from workbook.planner.unsupported import not_modelled


class _Undefined:
    """BSON undefined: the key an empty array produces, and half of the bounds of ``{a: null}``."""

    _instance: _Undefined | None = None

    def __new__(cls) -> _Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "undefined"


UNDEFINED = _Undefined()
MIN_KEY = MinKey()
MAX_KEY = MaxKey()
MISSING = object()
"""A path that is absent from a document (distinct from an explicit null)."""

MAX_DATE_MS = 9223372036854775807
MIN_DATE_MS = -9223372036854775808

# Canonical type ranks from MongoDB's canonicalizeBSONType (bsontypes.h), the BSON comparison order:
# https://www.mongodb.com/docs/manual/reference/bson-type-comparison-order/
RANK_MINKEY, RANK_UNDEFINED, RANK_NULL, RANK_NUMBER, RANK_STRING = -1, 0, 5, 10, 15
RANK_OBJECT, RANK_ARRAY, RANK_BINARY, RANK_OBJECTID, RANK_BOOL = 20, 25, 30, 35, 40
RANK_DATE, RANK_TIMESTAMP, RANK_REGEX, RANK_MAXKEY = 45, 47, 50, 127
RANK_CODE, RANK_CODE_WITH_SCOPE = 60, 65  # JavaScript code sorts after regexes, code with a scope after code

Collate = Callable[[str], str]


class DateBound:
    """A date bound beyond Python's datetime range (MongoDB brackets date ranges at +/-2**63 ms)."""

    def __init__(self, millis: int) -> None:
        self.millis = millis

    def __repr__(self) -> str:
        return f"new Date({self.millis})"


def type_rank(value: Any) -> int:
    """The canonical BSON type rank of a Python value (MinKey < null < numbers < strings < ...)."""
    rank = _RANK_OF_TYPE.get(type(value))  # the common exact types first (bool before int: exact match)
    if rank is not None:
        return rank
    if isinstance(value, MinKey):
        return RANK_MINKEY
    if isinstance(value, MaxKey):
        return RANK_MAXKEY
    if value is None or value is MISSING:
        return RANK_NULL
    if value is UNDEFINED:
        return RANK_UNDEFINED
    if isinstance(value, Code):  # a str subclass: before the string check
        return RANK_CODE if value.scope is None else RANK_CODE_WITH_SCOPE
    if isinstance(value, DBRef):  # stored as the document {$ref, $id[, $db]}
        return RANK_OBJECT
    if isinstance(value, bool):
        return RANK_BOOL
    if isinstance(value, int | float | Decimal128 | Decimal):
        return RANK_NUMBER
    if isinstance(value, str):
        return RANK_STRING
    if isinstance(value, Mapping):
        return RANK_OBJECT
    if isinstance(value, list | tuple):
        return RANK_ARRAY
    if isinstance(value, bytes | Binary):
        return RANK_BINARY
    if isinstance(value, ObjectId):
        return RANK_OBJECTID
    if isinstance(value, datetime.datetime | DateBound):
        return RANK_DATE
    if isinstance(value, Timestamp):
        return RANK_TIMESTAMP
    if isinstance(value, Regex | re.Pattern):
        return RANK_REGEX
    if isinstance(value, uuid.UUID):
        return RANK_BINARY  # stored as BinData subtype 4
    raise not_modelled(f"values of the BSON type {type(value).__name__}")


_RANK_OF_TYPE: dict[type, int] = {
    str: RANK_STRING,
    int: RANK_NUMBER,
    float: RANK_NUMBER,
    bool: RANK_BOOL,
    type(None): RANK_NULL,
    dict: RANK_OBJECT,
    list: RANK_ARRAY,
    datetime.datetime: RANK_DATE,
    ObjectId: RANK_OBJECTID,
}
"""Exact Python types and their rank, looked up before the general checks (subclasses take the long way)."""


def _number(value: Any) -> float | int | Decimal:
    return value.to_decimal() if isinstance(value, Decimal128) else value


def date_millis(value: datetime.datetime | DateBound) -> int:
    """Milliseconds since the epoch, as BSON stores a date."""
    if isinstance(value, DateBound):
        return value.millis
    delta = value - (_EPOCH if value.tzinfo is None else _EPOCH_UTC)  # a naive date is UTC, as BSON's
    return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000


_EPOCH, _EPOCH_UTC = datetime.datetime(1970, 1, 1), datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def regex_parts(value: Any) -> tuple[str, str]:
    """(pattern, flags) of a bson Regex or compiled Python pattern."""
    flags = value.flags
    return value.pattern, "".join(sorted(flags)) if isinstance(flags, str) else _flags(flags)


def _flags(flags: int) -> str:
    out = ""
    for letter, bit in (("i", re.IGNORECASE), ("m", re.MULTILINE), ("s", re.DOTALL), ("x", re.VERBOSE)):
        if flags & bit:
            out += letter
    return out


def sort_key(value: Any, collate: Collate | None = None) -> tuple:
    """A tuple that orders like MongoDB's BSON comparison (woCompare), strings optionally collated.

    >>> sort_key(None) < sort_key(3) < sort_key("a") < sort_key({}) < sort_key([]) < sort_key(True)
    True
    """
    kind = type(value)  # the two commonest exact types first: an index's keys are made again when read
    if kind is str:
        return (RANK_STRING, collate(value) if collate else value)
    if kind is int:
        return (RANK_NUMBER, value, 1)
    rank = type_rank(value)
    if rank == RANK_NUMBER:
        number = _number(value)
        if (isinstance(number, float) and math.isnan(number)) or (isinstance(number, Decimal) and number.is_nan()):
            return (rank, -math.inf, 0)  # NaN (double or decimal, either sign) sorts below every number
        return (rank, number, 1)
    if rank == RANK_STRING:
        return (rank, collate(value) if collate else value)
    if rank == RANK_OBJECT:
        if isinstance(value, DBRef):
            value = value.as_doc()
        return (rank, tuple((type_rank(v), k, sort_key(v, collate)) for k, v in value.items()))
    if rank == RANK_ARRAY:
        return (rank, tuple(sort_key(v, collate) for v in value))
    if rank == RANK_BINARY:
        if isinstance(value, uuid.UUID):
            value = Binary(value.bytes, 4)
        data = bytes(value)
        subtype = value.subtype if isinstance(value, Binary) else 0
        return (rank, len(data), subtype, data)
    if rank == RANK_OBJECTID:
        return (rank, value.binary)
    if rank == RANK_BOOL:
        return (rank, bool(value))
    if rank == RANK_DATE:
        return (rank, date_millis(value))
    if rank == RANK_TIMESTAMP:
        return (rank, value.time, value.inc)
    if rank == RANK_REGEX:
        return (rank, *regex_parts(value))
    if rank == RANK_CODE:
        return (rank, str(value))
    if rank == RANK_CODE_WITH_SCOPE:
        return (rank, str(value), sort_key(dict(value.scope or {}), collate))
    return (rank,)


def compare(left: Any, right: Any, collate: Collate | None = None) -> int:
    """-1, 0 or 1 as MongoDB orders two values across types."""
    a, b = sort_key(left, collate), sort_key(right, collate)
    return (a > b) - (a < b)


def _double(value: float) -> str:
    if math.isnan(value):
        return "nan.0"
    if math.isinf(value):
        return "inf.0" if value > 0 else "-inf.0"
    text = format(value, ".16g")
    if not any(c in text for c in ".eni"):
        text += ".0"
    return text


def render(value: Any) -> str:
    """A value as MongoDB's BSONElement::toString(false) prints it inside index bounds.

    >>> [render(v) for v in (5, 5.0, float("inf"), "a", MIN_KEY, {}, None)]
    ['5', '5.0', 'inf.0', '"a"', 'MinKey', '{}', 'null']
    """
    rank = type_rank(value)
    if rank == RANK_MINKEY:
        return "MinKey"
    if rank == RANK_MAXKEY:
        return "MaxKey"
    if rank == RANK_UNDEFINED:
        return "undefined"
    if rank == RANK_NULL:
        return "null"
    if rank == RANK_BOOL:
        return "true" if value else "false"
    if rank == RANK_NUMBER:
        if isinstance(value, float):
            return _double(value)
        if isinstance(value, Decimal128 | Decimal):
            return f"NumberDecimal({value})"
        return str(value)
    if rank == RANK_STRING:
        return f'"{value}"'  # verbatim: index_bounds_pipe.js prints a backslash bound as ["\", "]")
    if rank == RANK_OBJECT:
        if isinstance(value, DBRef):
            value = value.as_doc()
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{k}: {render(v)}" for k, v in value.items()) + " }"
    if rank == RANK_ARRAY:
        if not value:
            return "[]"
        return "[ " + ", ".join(render(v) for v in value) + " ]"
    if rank == RANK_OBJECTID:
        return f"ObjectId('{value}')"
    if rank == RANK_DATE:
        return f"new Date({date_millis(value)})"
    if rank == RANK_TIMESTAMP:
        return f"Timestamp({value.time}, {value.inc})"
    if rank == RANK_REGEX:
        pattern, flags = regex_parts(value)
        return f"/{pattern}/{flags}"
    if rank == RANK_BINARY:
        if isinstance(value, uuid.UUID):
            return f'UUID("{value}")'
        return f"BinData({value.subtype if isinstance(value, Binary) else 0}, {bytes(value).hex().upper()})"
    return repr(value)


def to_json_value(value: Any) -> Any:
    """A value made printable in an explain document (filters keep their Python values otherwise)."""
    if value is UNDEFINED:
        return None
    if isinstance(value, re.Pattern):
        return Regex(value.pattern, _flags(value.flags))
    return value

"""MongoDB's hashed shard key and hashed index value: md5 over the BSON element, first 8 bytes.

Ported from mongodb/mongo ``src/mongo/db/hasher.cpp`` (``BSONElementHasher::hash64``) and the
canonical type numbers of ``src/mongo/bson/bsontypes.h`` (``canonicalizeBSONType``); the test
vectors in tests/test_shard_hash.py come from ``src/mongo/db/hasher_test.cpp``. The seed is 0, as
for every hashed index and hashed shard key.
"""

from __future__ import annotations

import datetime
import hashlib
import math
import re
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import bson
from bson.binary import Binary
from bson.code import Code
from bson.datetime_ms import DatetimeMS
from bson.dbref import DBRef
from bson.int64 import Int64
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.regex import Regex
from bson.timestamp import Timestamp

from workbook.errors import WorkbookError

HASH_SEED = 0
"""The seed MongoDB uses for hashed indexes and hashed shard keys."""

_LLONG_MAX = 2**63 - 1
_LLONG_MIN = -(2**63)

# canonicalizeBSONType: numbers share one type, so 42, 42.0 and Int64(42) hash alike.
_MINKEY, _NULL_OR_UNDEFINED, _NULL, _NUMBER, _STRING, _OBJECT, _ARRAY = -1, 0, 5, 10, 15, 20, 25
_BINARY, _OBJECTID, _BOOL, _DATE, _MAXKEY = 30, 35, 40, 45, 127
# hasher_test.cpp asserts a Timestamp hashes like the Date with the same 8 bytes: one canonical type.
_TIMESTAMP, _REGEX, _DBPOINTER, _CODE, _CODE_W_SCOPE = _DATE, 50, 55, 60, 65


@dataclass(frozen=True)
class DBPointer:
    """BSON's deprecated type 12 (``BSONDBRef`` in MongoDB's C++): a namespace and an ObjectId.

    pymongo cannot write this type (a ``bson.DBRef`` is stored as the document ``{$ref, $id}`` and
    hashes as that document); it is here so the hash of old data holding it can be computed.
    """

    namespace: str
    id: ObjectId


def hash64(value: Any, seed: int = HASH_SEED) -> int:
    """Return MongoDB's 64-bit hash of one value, as ``convertShardKeyToHashed`` would."""
    digest = hashlib.md5(struct.pack("<i", seed))
    _hash_element(digest, value, field_name=None)
    return struct.unpack("<q", digest.digest()[:8])[0]


def _hash_element(digest: Any, value: Any, field_name: str | None) -> None:
    """Feed one element (canonical type, optional field name, value) to the digest."""
    canonical, payload, children = _canonical(value)
    digest.update(struct.pack("<i", canonical))
    if field_name is not None:
        digest.update(field_name.encode() + b"\x00")
    if canonical == _CODE_W_SCOPE:
        digest.update(payload)  # the code's bytes, then the scope's elements as a document's
    elif children is None:
        digest.update(payload)
        return
    assert children is not None
    for name, child in children:
        _hash_element(digest, child, field_name=name)
    # the end-of-object element: canonical type 0; its field name and value are empty (0 bytes)
    digest.update(struct.pack("<i", 0))


def _canonical(value: Any) -> tuple[int, bytes, list[tuple[str, Any]] | None]:
    """Return (canonical type, value bytes, sub-elements or None) for a Python value."""
    if isinstance(value, Code):  # before str: bson.Code is a str subclass, but its own BSON type
        raw = str(value).encode() + b"\x00"
        if value.scope is None:
            return _CODE, struct.pack("<i", len(raw)) + raw, None
        return _CODE_W_SCOPE, raw, [(str(name), child) for name, child in value.scope.items()]
    if isinstance(value, bool):
        return _BOOL, b"\x01" if value else b"\x00", None
    if isinstance(value, (int, Int64, float)):
        return _NUMBER, struct.pack("<q", _number_for_hash(value)), None
    if isinstance(value, str):
        raw = value.encode()
        return _STRING, struct.pack("<i", len(raw) + 1) + raw + b"\x00", None
    if value is None:
        return _NULL, b"", None
    if isinstance(value, ObjectId):
        return _OBJECTID, value.binary, None
    if isinstance(value, (datetime.datetime, DatetimeMS)):
        millis = int(value if isinstance(value, DatetimeMS) else DatetimeMS(value))  # as pymongo encodes it
        return _DATE, struct.pack("<q", millis), None
    if isinstance(value, Binary):
        return _BINARY, struct.pack("<i", len(value)) + bytes([value.subtype]) + bytes(value), None
    if isinstance(value, Timestamp):  # little-endian increment, then seconds: the 8 bytes BSON stores
        return _TIMESTAMP, struct.pack("<II", value.inc, value.time), None
    if isinstance(value, (Regex, re.Pattern)):
        return _REGEX, _bson_value(value), None  # pattern and sorted flags, each NUL-terminated
    if isinstance(value, DBPointer):
        namespace = value.namespace.encode() + b"\x00"
        return _DBPOINTER, struct.pack("<i", len(namespace)) + namespace + value.id.binary, None
    if isinstance(value, DBRef):  # pymongo stores a DBRef as the document {$ref, $id[, $db], ...}
        return _OBJECT, b"", [(str(name), child) for name, child in value.as_doc().items()]
    if isinstance(value, Mapping):
        return _OBJECT, b"", [(str(name), child) for name, child in value.items()]
    if isinstance(value, (list, tuple)):
        return _ARRAY, b"", [(str(index), child) for index, child in enumerate(value)]
    if isinstance(value, MinKey):
        return _MINKEY, b"", None
    if isinstance(value, MaxKey):
        return _MAXKEY, b"", None
    raise WorkbookError(
        f"Cannot hash a value of type {type(value).__name__} like MongoDB does.",
        fix=(
            "Use a string, number, boolean, null, ObjectId, date, timestamp, binary, regex, code, "
            "DBRef, document or array."
        ),
    )


def _bson_value(value: Any) -> bytes:
    """The value bytes of one element exactly as pymongo encodes it (after type byte and name)."""
    encoded = bson.encode({"": value})
    return encoded[6:-1]  # skip the length, type byte and empty name; drop the document's end byte


def _number_for_hash(value: float | int) -> int:
    """MongoDB's safeNumberLongForHash: truncate toward zero, NaN is 0, clamp to 64 bits."""
    if isinstance(value, float):
        if math.isnan(value):
            return 0
        if value >= 2.0**63:
            return _LLONG_MAX
        if value < -(2.0**63):
            return _LLONG_MIN
        return int(value)
    return max(_LLONG_MIN, min(_LLONG_MAX, int(value)))

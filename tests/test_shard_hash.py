"""MongoDB's hashed-key function, checked against the test vectors of mongodb/mongo's hasher_test.cpp."""

from __future__ import annotations

import datetime

import pytest
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
from workbook.shard_hash import DBPointer, hash64

INT_MIN, INT_MAX, DOUBLE_MAX = -(2**31), 2**31 - 1, 1.7976931348623157e308

OID_1 = ObjectId("010203040506070809101112")

# (value, hash) pairs from src/mongo/db/hasher_test.cpp (seed 0)
VECTORS = [
    (42, -944302157085130861),
    (42.123, -944302157085130861),
    (Int64(42), -944302157085130861),
    (0, 4854801880128277513),
    (0.456, 4854801880128277513),
    (float("nan"), 4854801880128277513),
    (1, 5902408780260971510),
    (1.987, 5902408780260971510),
    (-1, 1140205862565771219),
    (-1.789, 1140205862565771219),
    (INT_MIN, 6165898260261354870),
    (float(INT_MIN), 6165898260261354870),
    (INT_MAX, 1143184177162245883),
    (DOUBLE_MAX, 921523596458303250),
    (Int64(2**63 - 1), 921523596458303250),
    (-DOUBLE_MAX, 4532067210535695462),
    (Int64(-(2**63)), 4532067210535695462),
    (MinKey(), 7961148599568647290),
    (MaxKey(), 5504842513779440750),
    ("abc", 8478485326885698097),
    ("", 2049396243249673340),
    ({"a": "abc", "b": Int64(123)}, 4771603801758380216),
    ({}, 7980500913326740417),
    (["bar", "baz", "qux"], -2938911267422831539),
    ([], 8849948234993459283),
    (Binary(bytes([0, 1, 2, 3, 4, 6]), 0), 7252465090394235301),
    (Binary(bytes([0, 1, 2, 3, 4, 6]), 0x80), 5736670452907618262),
    (Binary(bytes(range(16)), 4), 6084661258071355978),
    (ObjectId("010203040506070809101112"), -5588663249627035708),
    (ObjectId("000000000000000000000000"), -4293118519463489418),
    (True, 6405873908747105701),
    (False, 6289544573401934092),
    (datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC), -1178696894582842035),
    # HashTimeStamp: a Timestamp hashes like the Date with the same 8 bytes
    (Timestamp(0x55667788, 0x11223344), 4476222765095560467),
    (Timestamp(0, 0), -1178696894582842035),
    # HashRegEx
    (Regex("mongodb"), -7275792090268217043),
    (Regex(".*", "i"), 7095855029187981886),
    # HashDBRef: MongoDB's BSONDBRef is BSON type 12 (DBPointer), which pymongo cannot write
    (DBPointer("c", OID_1), 940175826736461384),
    (DBPointer("db.c", OID_1), 2426768198104018194),
    # HashCode and HashCodeWScope
    (Code("func f() { return 1; }"), 6861638109178014270),
    (Code("func f() { return 1; }", {"c": True}), 501342939894575968),
]


@pytest.mark.parametrize(("value", "expected"), VECTORS, ids=[repr(v)[:30] for v, _ in VECTORS])
def test_hash64_matches_mongodb(value, expected):
    assert hash64(value) == expected


def test_a_date_hashes_by_its_milliseconds():
    assert hash64(DatetimeMS(0x5566778811223344)) == 4476222765095560467


def test_the_seed_changes_the_hash():
    assert hash64("abc", seed=1) != hash64("abc")


def test_an_unhashable_value_says_which_types_work():
    with pytest.raises(WorkbookError, match="Cannot hash a value of type set"):
        hash64({1, 2})


def test_code_is_not_hashed_as_the_string_it_subclasses():
    assert hash64(Code("func f() { return 1; }")) != hash64("func f() { return 1; }")


def test_a_dbref_hashes_as_the_document_pymongo_stores():
    ref = DBRef("c", OID_1, "db")
    assert hash64(ref) == hash64({"$ref": "c", "$id": OID_1, "$db": "db"})
    assert hash64(ref) != hash64(DBPointer("db.c", OID_1))

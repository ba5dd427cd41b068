"""The offline default's one-walk codec (workbook.offline_codec) against mongoeco's own functions."""

from __future__ import annotations

import copy
import datetime
import uuid
from typing import Any

import pytest
from bson import SON, Decimal128, Int64, ObjectId

from workbook import engine_compat, offline_codec
from workbook.offline import offline_server

ODD_VALUES: list[Any] = [
    None, True, False, 0, -1, 2**31, -(2**31) - 1, 2**40, 2**63 - 1, -(2**63), 1.5, -0.0, float("nan"),
    float("inf"), "", "x", [], {}, [1, [2]], (1, 2), ["a", 1, 2.5, None, [{"b": [3]}]], {"a": {"b": 1}},
    datetime.datetime(2024, 1, 2, 3, 4, 5, 678901), ObjectId("65a1b2c3d4e5f60718293a4b"),
    datetime.datetime(2024, 1, 2, tzinfo=datetime.timezone(datetime.timedelta(hours=2))),
    datetime.datetime(2024, 12, 31, 23, 59, 59, 999999), datetime.datetime(1, 1, 1),
    datetime.datetime(1969, 12, 31, 23, 59, 59, 999, tzinfo=datetime.UTC),
    Decimal128("1.5"), Int64(7), b"\x00\x01", bytearray(b"\x02"), uuid.UUID(int=5), SON([("z", 1), ("a", 2)]),
    {"$mongoeco": {"type": "datetime", "value": "x"}}, {"$mongoeco": 1, "other": 2}, {"$ref": "c", "$id": 1},
]  # fmt: skip
"""Values of every kind the walks take themselves or hand to mongoeco (tagged-looking dicts included)."""

REFUSED: list[Any] = [2**63, -(2**63) - 1, {1: "a"}, {"a": {2: "b"}}, {"s": {1, 2}}, [frozenset()], {"a": [2**64]}]
"""Values mongoeco's codec refuses: the walks must raise its error, not one of their own."""


@pytest.fixture(scope="module")
def originals() -> tuple[Any, Any]:
    """mongoeco's own encode and to_internal (the server installs the fast ones at start)."""
    offline_server()
    assert offline_codec.ORIGINALS, "the offline engine did not install the one-walk codec"
    codec = engine_compat.document_codec()
    assert codec.encode is not offline_codec.ORIGINALS["encode"]

    def pristine(name: str) -> Any:
        """mongoeco's own function with its own recursion (its inner calls go through the class attribute)."""

        def call(value: Any) -> Any:
            fast = {key: getattr(codec, key) for key in offline_codec.ORIGINALS}
            for key, function in offline_codec.ORIGINALS.items():
                setattr(codec, key, staticmethod(function))
            try:
                return offline_codec.ORIGINALS[name](value)
            finally:
                for key, function in fast.items():
                    setattr(codec, key, staticmethod(function))

        return call

    return pristine("encode"), pristine("to_internal")


def _documents() -> list[Any]:
    documents: list[Any] = []
    for position, value in enumerate([*ODD_VALUES, engine_compat.engine_object_id()("65a1b2c3d4e5f60718293a4c")]):
        documents.append({"_id": position, "v": value, "nested": {"list": [value, {"v": value}]}})
        documents.append([value, [value]])
        documents.append(value)
    return documents


def _same(got: Any, expected: Any) -> None:
    assert repr(got) == repr(expected)
    assert type(got) is type(expected)
    if isinstance(got, dict):
        for key in got:
            _same(got[key], expected[key])
    elif isinstance(got, list):
        for mine, theirs in zip(got, expected, strict=True):
            _same(mine, theirs)


def test_the_one_walk_encode_gives_mongoecos_stored_form(originals: tuple[Any, Any]) -> None:
    encode, _ = originals
    codec = engine_compat.document_codec()
    for value in _documents():
        _same(codec.encode(copy.deepcopy(value)), encode(copy.deepcopy(value)))


def test_the_one_walk_to_internal_gives_mongoecos_internal_form(originals: tuple[Any, Any]) -> None:
    _, to_internal = originals
    codec = engine_compat.document_codec()
    for value in _documents():
        _same(codec.to_internal(copy.deepcopy(value)), to_internal(copy.deepcopy(value)))
        internal = to_internal(copy.deepcopy(value))  # the stored form of what an insert hands the engine
        _same(codec.encode(internal), originals[0](internal))


def test_refused_values_raise_mongoecos_own_error(originals: tuple[Any, Any]) -> None:
    codec = engine_compat.document_codec()
    for value in REFUSED:
        for fast, original in zip((codec.encode, codec.to_internal), originals, strict=True):
            with pytest.raises(Exception) as expected:
                original({"_id": 1, "v": value})
            with pytest.raises(type(expected.value)) as got:
                fast({"_id": 1, "v": value})
            assert str(got.value) == str(expected.value)


def test_the_walks_call_nothing_per_plain_value(originals: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """A plain document never reaches mongoeco's functions (the point of the walks); nor do ObjectIds and
    datetimes on encode; a Decimal128 does, once."""
    calls: list[Any] = []
    encode, to_internal = originals

    def counted(value: Any) -> Any:
        calls.append(value)
        return encode(value)

    codec = type("Codec", (), {"encode": staticmethod(counted), "to_internal": staticmethod(to_internal),
                               "decode": engine_compat.document_codec().decode,
                               "_tagged_value": engine_compat.document_codec()._tagged_value})  # fmt: skip
    fast_encode, fast_internal = offline_codec.fast_codec_functions(codec)
    plain = {"_id": 1, "pad": "x" * 40, "n": [1, 2.5, None, {"a": True}]}
    fast_encode(plain), fast_internal(plain)
    assert calls == []
    fast_encode({"_id": ObjectId(), "n": [1, engine_compat.engine_object_id()()]})  # ObjectIds: tagged here
    assert calls == []
    fast_encode({"_id": 1, "when": datetime.datetime(2024, 1, 2)})  # dates: tagged here (a snapshot restore's
    assert calls == []  # payloads held 63,767 of them for followers/hybrid: 0.65 s through mongoeco's encode)
    price = Decimal128("9.99")
    fast_encode({"_id": 1, "price": price})
    assert calls == [price]


def test_the_one_walk_wire_decode_gives_mongoecos_engine_values() -> None:
    """What pymongo decodes from a wire message (every BSON type) becomes what mongoeco's bridge makes of it."""
    import bson
    from bson import Binary, Code, DBRef, MaxKey, MinKey, Regex, Timestamp

    offline_server()
    assert offline_codec.WIRE_ORIGINAL, "the offline engine did not install the one-walk wire decode"
    original = offline_codec.WIRE_ORIGINAL[0]
    _, protocol = engine_compat.wire_decoders()
    fast = protocol.decode_wire_value
    assert fast is not original
    values: list[Any] = [
        *(v for v in ODD_VALUES if not isinstance(v, tuple | bytearray | uuid.UUID | SON)),
        Binary(b"\x01" * 16, 4), Binary(b"ab", 0), Regex("^a", "i"), Timestamp(5, 1), Code("x"), Code("y", {"a": 1}),
        DBRef("c", 1, "db", extra=2), MinKey(), MaxKey(), SON([("b", 1), ("a", [Int64(2)])]),
    ]  # fmt: skip
    bridge, _ = engine_compat.wire_decoders()

    def pristine(value: Any) -> Any:  # mongoeco's with its own recursion (through its module's name)
        bridge.decode_wire_value = original
        try:
            return original(value)
        finally:
            bridge.decode_wire_value = fast

    for value in values:
        raw = bson.encode({"v": value, "nested": {"list": [value, {"v": value}]}})
        for options in (bson.DEFAULT_CODEC_OPTIONS, bson.CodecOptions(document_class=SON)):
            decoded = bson.decode(raw, codec_options=options)
            _same(fast(copy.deepcopy(decoded)), pristine(copy.deepcopy(decoded)))

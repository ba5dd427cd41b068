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
    datetime.datetime(2024, 11, 3, 1, 30, fold=1),
    Decimal128("1.5"), Int64(7), b"\x00\x01", bytearray(b"\x02"), uuid.UUID(int=5), SON([("z", 1), ("a", 2)]),
    {"$mongoeco": {"type": "datetime", "value": "x"}}, {"$mongoeco": 1, "other": 2}, {"$ref": "c", "$id": 1},
]  # fmt: skip
"""Values of every kind the walks take themselves or hand to mongoeco (tagged-looking dicts included)."""

REFUSED: list[Any] = [
    2**63, -(2**63) - 1, {1: "a"}, {"a": {2: "b"}}, {"s": {1, 2}}, [frozenset()], {"a": [2**64]},
    datetime.datetime(1, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=5))),  # before year 1 in UTC
]  # fmt: skip
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
    fast_internal({"_id": 1, "when": datetime.datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=datetime.UTC)})
    assert calls == []  # an inserted date: converted here (each store order has one: 40% of its conversion)
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


def test_the_wire_decode_converts_a_message_in_place() -> None:
    """A message's documents are pymongo's fresh decode: converted where they are, not copied (the store's
    orders decoded in 4.2 us each instead of 6.8); an ObjectId at any depth becomes the engine's."""
    import bson

    offline_server()
    _, protocol = engine_compat.wire_decoders()
    document = bson.decode(bson.encode({"_id": ObjectId(), "items": [{"ref": ObjectId(), "n": 1}], "at": None}))
    items, first = document["items"], document["items"][0]
    decoded = protocol.decode_wire_value(document)
    assert decoded is document and decoded["items"] is items and decoded["items"][0] is first
    engine_id = engine_compat.engine_object_id()
    assert type(decoded["_id"]) is engine_id and type(first["ref"]) is engine_id
    assert decoded["at"] is None and first["n"] == 1


def _engine_values() -> list[Any]:
    """The engine's own value types a reply can hold (mongoeco's wrappers and scalars), beside pymongo's."""
    import decimal

    from bson import Binary, Code, MaxKey, MinKey, Regex, Timestamp
    from mongoeco import types as engine
    from mongoeco.core.bson_scalars import BsonDecimal128, BsonDouble, BsonInt32, BsonInt64

    return [
        BsonInt64(2**40), BsonInt32(7), BsonDouble(2.5), BsonDecimal128(decimal.Decimal("1.25")),
        engine.Decimal128("9.99"), engine.Binary(b"ab", 0), engine.Binary(b"\x01" * 16, 4), engine.Regex("^a", "i"),
        engine.Timestamp(5, 1), engine.DBRef("c", BsonInt64(3), "db"), engine.UndefinedType(),
        engine.ObjectId("65a1b2c3d4e5f60718293a4c"), engine.SON([("b", BsonInt32(1)), ("a", 2)]),
        decimal.Decimal("2.5"), Binary(b"x", 0), Regex("^b"), Timestamp(1, 2), Code("x"), Code("y", {"a": 1}),
        MinKey(), MaxKey(), Int64(9),
    ]  # fmt: skip


def test_the_one_walk_reply_encoding_sends_mongoecos_bytes() -> None:
    """Every reply the fast encoding makes BSON-encodes to the bytes mongoeco's own makes, for every
    value type in any position (top level, nested, in arrays, after plain values), and refuses what
    mongoeco's refuses."""
    import bson

    offline_server()
    assert offline_codec.WIRE_ENCODE_ORIGINAL, "the offline engine did not install the one-walk reply encoding"
    original = offline_codec.WIRE_ENCODE_ORIGINAL[0]
    senders = engine_compat.wire_encoders()[1:]
    fast = senders[0].encode_wire_value
    assert fast is not original and all(module.encode_wire_value is fast for module in senders)
    for value in [*ODD_VALUES, *_engine_values()]:
        document = {
            "ok": 1.0,
            "cursor": {"firstBatch": [{"_id": 1, "v": value}, {"a": [1, "x", value, {"v": [value, 2]}]}], "id": 0},
            "after": value,
        }
        kept = copy.deepcopy(document)
        try:
            expected = bson.encode(original(document))
        except Exception as error:
            with pytest.raises(type(error)):
                bson.encode(fast(document))
            continue
        assert bson.encode(fast(document)) == expected, value
        assert repr(document) == repr(kept), "the encoding changed its input"


def test_the_one_walk_reply_encoding_copies_nothing_plain() -> None:
    """A reply of plain values comes back as itself (no copy per document); one engine value deep in
    a list copies only the containers above it, and leaves the input as it was."""
    from mongoeco.core.bson_scalars import BsonInt64

    offline_server()
    fast = engine_compat.wire_encoders()[1].encode_wire_value
    plain = {"cursor": {"firstBatch": [{"_id": ObjectId(), "n": [1, 2.5, None], "at": datetime.datetime(2024, 1, 2)}]}}
    assert fast(plain) is plain
    inner = {"x": [1, BsonInt64(5), 3]}
    sibling = {"y": "plain"}
    reply = {"cursor": {"firstBatch": [sibling, inner]}, "ok": 1.0}
    sent = fast(reply)
    assert sent is not reply and sent["cursor"]["firstBatch"][0] is sibling
    assert sent["cursor"]["firstBatch"][1]["x"] == [1, Int64(5), 3]
    assert type(inner["x"][1]) is BsonInt64, "the input was changed"


def _internal_forms() -> list[Any]:
    """Values in mongoeco's internal form (its documents, arrays and wrappers), as its storage decodes them."""
    codec = engine_compat.document_codec()
    values = [*ODD_VALUES, *_engine_values()]
    forms: list[Any] = []
    for value in values:
        try:
            forms.append(codec.decode(offline_codec.ORIGINALS["encode"]({"v": value}), preserve_bson_wrappers=True))
        except Exception:  # noqa: BLE001 - a value the codec refuses has no internal form
            continue
    return forms


def test_the_one_walk_to_public_is_mongoecos() -> None:
    """The fast ``to_public`` gives what mongoeco's gives (equal values, the same types at every level,
    the same object where nothing changes) on every value type, plain and internal, nested anywhere."""
    offline_server()
    assert offline_codec.PUBLIC_ORIGINAL, "the offline engine did not install the one-walk to_public"
    original = offline_codec.PUBLIC_ORIGINAL[0]
    fast = engine_compat.document_codec().to_public
    assert fast is not original
    for value in [*ODD_VALUES, *_engine_values(), *_internal_forms()]:
        nested = {"l": [{"v": value}, 2], "n": {"v": value}}
        for document in (value, {"a": 1, "v": value}, [1, value, "x", value], nested):
            kept = repr(document)
            expected, got = original(document), fast(document)
            _same(got, expected)
            assert (got is document) == (expected is document), (value, type(document))
            assert repr(document) == kept, "to_public changed its input"

"""mongoeco's document codec in one walk per document (the offline default's inserts spent a third
of their engine time in it).

mongoeco 4.11.0's ``DocumentCodec.encode`` calls ``validate_bson_value`` on every dict it meets,
and that walks the dict's whole subtree, wrapping each number in a ``BsonInt32``/``BsonDouble``
only to drop it: a value is checked once per level above it. ``DocumentCodec.to_internal`` (the
command boundary every insert, update and filter crosses) encodes, decodes and wraps in three more
walks. Profiled on a 20,000-document ``insert_many`` over the wire (``{"_id": i, "pad": "x" * 40}``,
cProfile in the engine thread): 6 encode calls, 6 ``validate_bson_value`` walks, 9 number wraps and
122 ``isinstance`` calls from the codec per document, a third of the engine thread's time.

:func:`install_fast_codec` replaces ``encode`` and ``to_internal`` with one walk each over the plain
values of a document (dicts, lists, str, int within int64, float, bool, None, ObjectId, and for
``encode`` datetime), giving the same containers and values; every other value (Decimal128, SON,
Int64, dates for ``to_internal``, ...) goes to mongoeco's own functions. A document the walk is
not sure of (a key that is not a string, the codec's reserved key, an int outside int64, a value
mongoeco's function refuses) is handed whole to mongoeco's original, so errors are mongoeco's
own, raised in its order.
tests/test_offline_codec.py compares both with the originals on odd values. See
``patches/insert-throughput.md``.
"""

from __future__ import annotations

import datetime
from typing import Any

from bson import ObjectId

from workbook import engine_compat
from workbook.errors import CodecFallback

INT64_LOW, INT64_HIGH = -(2**63), 2**63 - 1


def fast_codec_functions(codec: Any) -> tuple[Any, Any]:
    """``(encode, to_internal)``: one-walk equivalents of ``codec``'s (mongoeco's, as found on ``codec`` now)."""
    original_encode, original_to_internal = codec.encode, codec.to_internal
    decode = codec.decode
    document_type, array_type, own = engine_compat.internal_bson()
    marker = engine_compat.CODEC_MARKER
    engine_object_id, tagged = engine_compat.engine_object_id(), codec._tagged_value
    a_datetime, stored_datetime = datetime.datetime, engine_compat.datetime_payload()
    internal_datetime = engine_compat.internal_datetime()

    def encode_value(value: Any) -> Any:
        kind = type(value)
        if kind is str or kind is float or kind is bool or value is None:
            return value
        if kind is int:
            if INT64_LOW <= value <= INT64_HIGH:
                return value
            raise CodecFallback  # mongoeco raises its overflow error
        if kind is dict or kind is document_type:
            if marker in value:
                raise CodecFallback  # mongoeco tags a dict that looks like a tagged value
            out = {}
            for key, item in value.items():
                if type(key) is not str:
                    raise CodecFallback
                inner = type(item)
                out[key] = (
                    item if inner is str or inner is float or inner is bool or item is None else encode_value(item)
                )
            return out
        if kind is list or kind is array_type:
            return [encode_value(item) for item in value]
        if kind is engine_object_id or kind is ObjectId:  # the codec's tagged hex string, as its encode gives
            return tagged("objectid", str(value))
        if kind is a_datetime:  # UTC, milliseconds, tagged: as its encode gives, without its checks' walk
            return stored_datetime(value)
        try:
            return original_encode(value)  # one scalar (or a tuple, a SON...): mongoeco's own, checks included
        except Exception as error:
            raise CodecFallback from error  # the whole document's check reports it, in mongoeco's order

    def encode(data: Any) -> Any:
        try:
            return encode_value(data)
        except CodecFallback:
            return original_encode(data)

    def internal_value(value: Any) -> Any:
        kind = type(value)
        if kind is str or kind is float or kind is bool or value is None:
            return value
        if kind is int:
            if INT64_LOW <= value <= INT64_HIGH:
                return value
            raise CodecFallback
        if kind is dict:
            if marker in value:
                raise CodecFallback
            out = {}
            for key, item in value.items():
                if type(key) is not str:
                    raise CodecFallback
                inner = type(item)
                out[key] = (
                    item if inner is str or inner is float or inner is bool or item is None else internal_value(item)
                )
            return document_type(out)
        if kind is list:
            return array_type([internal_value(item) for item in value])
        if kind is engine_object_id:  # decoding its tagged form gives an equal one (immutable: this one)
            return value
        if kind is ObjectId:
            return engine_object_id(value)
        if kind is a_datetime:  # naive UTC in milliseconds, as its walks give (one per store order: 40% of one)
            try:
                return internal_datetime(value)
            except Exception as error:  # out of range once in UTC: mongoeco's walks say so
                raise CodecFallback from error
        try:  # what mongoeco's three walks make of this one value
            return own(decode(original_encode(value), preserve_bson_wrappers=True))
        except Exception as error:
            raise CodecFallback from error

    def to_internal(data: Any) -> Any:
        if isinstance(data, document_type | array_type):
            return data
        try:
            return internal_value(data)
        except CodecFallback:
            return original_to_internal(data)

    return encode, to_internal


ORIGINALS: dict[str, Any] = {}
"""mongoeco's own ``encode`` and ``to_internal``, once replaced (tests/test_offline_codec.py compares with them)."""


def install_fast_codec() -> None:
    """Replace mongoeco's ``DocumentCodec.encode`` and ``to_internal`` with their one-walk equivalents (once)."""
    if ORIGINALS:
        return
    codec = engine_compat.document_codec()
    encode, to_internal = fast_codec_functions(codec)
    ORIGINALS.update(encode=codec.encode, to_internal=codec.to_internal)
    codec.encode = staticmethod(encode)
    codec.to_internal = staticmethod(to_internal)


WIRE_ORIGINAL: list[Any] = []
"""mongoeco's own ``decode_wire_value``, once replaced."""


def fast_wire_decode(original: Any, engine_object_id: type) -> Any:
    """A one-walk equivalent of mongoeco's ``decode_wire_value`` (pymongo's decoded values -> the engine's).

    mongoeco's tries a dozen ``isinstance`` checks on every value before returning a string or a
    number as it is (17 calls per store order, a third of an order's decode). Plain values, dicts,
    lists and ObjectIds are converted here exactly as mongoeco converts them; anything else (SON,
    Int64, Decimal128, Binary, Regex, DBRef...) goes to ``original``.

    mongoeco calls it only on what pymongo's ``bson`` has just decoded from a message (a fresh tree that
    nothing else holds), so a dict or list is changed in place, its converted values put back, rather than
    copied: the store's orders, decoded 6.8 -> 4.2 us each (13,000, three rounds alternating).
    """
    a_datetime = datetime.datetime
    kept = frozenset({str, int, float, bool, type(None), a_datetime})  # returned as they are

    def decode(value: Any) -> Any:
        kind = type(value)
        if kind is dict:  # pymongo's fresh decode, held by no one else: changed in place, not copied
            for key, item in value.items():
                if type(item) not in kept:
                    value[key] = decode(item)  # a value replaced: the dict's size and order stay
            return value
        if kind is list:
            for position, item in enumerate(value):
                if type(item) not in kept:
                    value[position] = decode(item)
            return value
        if kind in kept:
            return value
        if kind is ObjectId:
            return engine_object_id(str(value))
        return original(value)

    return decode


def install_fast_wire_decode() -> None:
    """Replace mongoeco's ``decode_wire_value`` (in its bridge and in the wire protocol that calls it), once."""
    if WIRE_ORIGINAL:
        return
    bridge, protocol = engine_compat.wire_decoders()
    WIRE_ORIGINAL.append(bridge.decode_wire_value)
    decode = fast_wire_decode(bridge.decode_wire_value, engine_compat.engine_object_id())
    bridge.decode_wire_value = decode
    protocol.decode_wire_value = decode


WIRE_ENCODE_ORIGINAL: list[Any] = []
"""mongoeco's own ``encode_wire_value``, once replaced."""


def fast_wire_encode(original: Any, plain: frozenset[type]) -> Any:
    """A one-walk equivalent of mongoeco's ``encode_wire_value`` (the engine's values -> what pymongo's
    ``bson`` encodes into a reply), giving the same bytes.

    mongoeco's tries two dozen ``isinstance`` checks on every value before returning a string or a
    number as it is, and copies every dict and list: reading 40,000 parts/hybrid products over the
    wire spent a third of its time there (769,901 calls). Every reply is BSON-encoded as soon as
    it is made, so a plain value (str, int, float, bool, None, datetime, Int64, an ObjectId of
    either kind: pymongo's ``bson`` encodes mongoeco's, a subclass, as its own) is returned as it
    is, and a dict or list whose values all are is returned itself, uncopied; any other value (SON,
    mongoeco's Int64, Decimal128, Binary, Regex, Code, DBRef...) goes to ``original``.
    ``plain``: those types (:func:`workbook.engine_compat.wire_scalars`). tests/test_offline_codec.py
    compares the bytes with mongoeco's on every BSON type.
    """

    def encode(value: Any) -> Any:
        kind = type(value)
        if kind in plain:
            return value
        if kind is dict:
            changed = None
            for key, item in value.items():
                if type(item) not in plain:
                    new = encode(item)
                    if new is not item:
                        if changed is None:
                            changed = dict(value)
                        changed[key] = new
            return value if changed is None else changed
        if kind is list:
            for position, item in enumerate(value):
                if type(item) not in plain:
                    new = encode(item)
                    if new is not item:
                        copied = value[:position]
                        copied.append(new)
                        copied.extend(encode(rest) for rest in value[position + 1 :])
                        return copied
            return value
        return original(value)

    return encode


def install_fast_wire_encode() -> None:
    """Replace mongoeco's ``encode_wire_value`` where replies are encoded (its wire protocol and its raw
    batch cursor), once. The bridge keeps its own: :func:`workbook.engine_compat.to_pymongo` converts
    with it, into new containers of pymongo's types, which its callers may keep or change."""
    if WIRE_ENCODE_ORIGINAL:
        return
    bridge, *senders = engine_compat.wire_encoders()
    WIRE_ENCODE_ORIGINAL.append(bridge.encode_wire_value)
    encode = fast_wire_encode(bridge.encode_wire_value, engine_compat.wire_scalars())
    for module in senders:
        module.encode_wire_value = encode


PUBLIC_ORIGINAL: list[Any] = []
"""mongoeco's own ``DocumentCodec.to_public``, once replaced."""


def fast_to_public(original: Any, scalars: frozenset[type]) -> Any:
    """An equivalent of mongoeco's ``DocumentCodec.to_public`` (the engine's internal form -> the public
    one every find and aggregate replies with) that answers a plain document in one walk.

    mongoeco's runs up to a dozen ``isinstance`` checks per value before it returns a plain one as it
    is (336,619 calls, 2.2 s under the profiler, for one read of 48,000 parts documents). A document
    made only of plain dicts and lists, str, int, float, bool, None, datetime, bytes, pymongo's Int64
    and ObjectIds is one it returns as itself, uncopied: so does this, after one walk of type checks.
    Anything else goes to ``original`` whole (its rules for internal documents, numeric wrappers,
    Binary, DBRef, Code and SON depend on where they sit). tests/test_offline_codec.py compares the
    two on every value type. ``scalars``: the plain value types (the wire's, and bytes).
    """

    def plain(value: Any) -> bool:
        kind = type(value)
        if kind is dict:  # loops, not all(): a generator per container costs more than the checks
            for item in value.values():  # noqa: SIM110
                if type(item) not in scalars and not plain(item):
                    return False
            return True
        if kind is list:
            for item in value:  # noqa: SIM110
                if type(item) not in scalars and not plain(item):
                    return False
            return True
        return kind in scalars

    def to_public(value: Any) -> Any:
        return value if plain(value) else original(value)

    return to_public


def install_fast_to_public() -> None:
    """Replace mongoeco's ``DocumentCodec.to_public`` with its one-walk equivalent (once)."""
    if PUBLIC_ORIGINAL:
        return
    codec = engine_compat.document_codec()
    PUBLIC_ORIGINAL.append(codec.to_public)
    scalars = engine_compat.wire_scalars() | {bytes}
    codec.to_public = staticmethod(fast_to_public(codec.to_public, scalars))

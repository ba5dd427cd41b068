"""On the offline default, the doctor reads documents from the engine's memory, not through ``$sample``.

The offline engine runs in this Python process, so there is no server to spare: reading a
collection's stored documents directly costs a few microseconds each, where the ``$sample`` +
``$project`` pipeline of :mod:`~workbook.schema_doctor.context` costs about a millisecond per
document in the engine's aggregation interpreter (measured at ``small``: store/hybrid read whole in
about 1 s from memory, 60-100 s through the pipeline). Every document is read, up to
:data:`READ_ALL_LIMIT` per collection; past that, a sample of ``sample_size`` chosen with a seeded
generator (the same documents every run). The per-field summary is the one the pipeline computes
on a server (``$type``, ``$size``, ``$bsonSize`` of ``{k: v}``), worked out from BSON's layout;
``tests/test_schema_doctor.py`` checks the two agree field by field.

Summaries of a whole collection are kept per version of its contents (mongoeco keeps a collection
as a persistent map whose root object changes on every write, as :mod:`workbook.sizes` uses), so a
second doctor run on unchanged collections reads nothing.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import bson
from bson.int64 import Int64
from bson.objectid import ObjectId
from pymongo.database import Database

from workbook.engine_compat import sent_as_is, to_pymongo
from workbook.engine_reads import local_storage, public_records
from workbook.gc_pause import paused
from workbook.schema_doctor.readonly import Budget
from workbook.schema_doctor.stats import DocumentStat, FieldStat

READ_ALL_LIMIT = 200_000
"""Collections up to this many documents are read whole from the offline engine's memory (about 4 s at most)."""

CACHED_COLLECTIONS = 16
"""Whole-collection summaries kept (least recently used dropped first)."""

_CHECK_EVERY = 2_000
"""Documents read between two looks at the time budget."""

BSON_TYPES = {
    0x01: "double",
    0x02: "string",
    0x03: "object",
    0x04: "array",
    0x05: "binData",
    0x06: "undefined",
    0x07: "objectId",
    0x08: "bool",
    0x09: "date",
    0x0A: "null",
    0x0B: "regex",
    0x0C: "dbPointer",
    0x0D: "javascript",
    0x0E: "symbol",
    0x0F: "javascriptWithScope",
    0x10: "int",
    0x11: "timestamp",
    0x12: "long",
    0x13: "decimal",
    0x7F: "maxKey",
    0xFF: "minKey",
}
"""BSON element type bytes and the names ``$type`` gives them (BSON spec, bsonspec.org)."""

_INT32 = range(-(2**31), 2**31)

_FIXED_LAYOUTS: dict[type, tuple[str, None, int]] = {
    bool: ("bool", None, 1),
    Int64: ("long", None, 8),
    float: ("double", None, 8),
    type(None): ("null", None, 0),
    datetime: ("date", None, 8),
    ObjectId: ("objectId", None, 12),
}
"""``value_layout`` of the scalar types whose BSON value has one size."""


@dataclass(frozen=True)
class MemoryRead:
    """Documents summarised from the engine's memory: how many the collection holds, and whether all were read."""

    count: int
    documents: tuple[DocumentStat, ...]
    whole_collection: bool

    @property
    def total_bytes(self) -> int:
        """Sum of the documents' BSON sizes (the collection's data size when the read was whole)."""
        return sum(d.bytes for d in self.documents)


_CACHE: OrderedDict[tuple[str, str], tuple[object, MemoryRead]] = OrderedDict()


def value_layout(value: Any, *, pymongo_value: bool = False) -> tuple[str, int | None, int]:
    """``$type`` name, array length (None if not an array) and BSON value bytes of one value.

    Plain scalars are sized from BSON's layout (string: 4-byte length, UTF-8, NUL; int32 4; int64,
    double and date 8; ObjectId 12; bool 1; null 0); anything else is converted to pymongo's type
    (unless ``pymongo_value`` says it is one already) and encoded once as ``{"": value}``.
    """
    kind = type(value)
    if kind is str:  # an ASCII string's UTF-8 bytes are its characters: no encoded copy to count
        return "string", None, (len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))) + 5
    fixed = _FIXED_LAYOUTS.get(kind)
    if fixed is not None:
        return fixed
    if kind is int:
        return ("int", None, 4) if value in _INT32 else ("long", None, 8)
    if isinstance(value, ObjectId):  # mongoeco's, a subclass of pymongo's
        return _FIXED_LAYOUTS[ObjectId]
    if not pymongo_value and not sent_as_is(value):  # mongoeco's own types (BsonInt64...): as the wire sends them
        return value_layout(to_pymongo(value), pymongo_value=True)
    raw = bson.encode({"": value})
    # {"": v} is: int32 total, type byte, "" and its NUL, the value, the document's closing NUL.
    return BSON_TYPES.get(raw[4], f"type {raw[4]:#x}"), len(value) if kind is list else None, len(raw) - 7


def _element(name: str, value_bytes: int) -> int:
    """Bytes of one element: type byte, the key as a C string, the value."""
    return 2 + (len(name) if name.isascii() else len(name.encode("utf-8"))) + value_bytes


_ID_AS_IS = frozenset({str, int, float, ObjectId})


def document_stat(document: Mapping[str, Any]) -> DocumentStat:
    """The per-field summary the server-side pipeline makes of one document as a find returns it (pymongo's
    types: :func:`workbook.engine_reads.public_records`), computed in Python."""
    fields = []
    nested = []
    total = 5  # int32 length + closing NUL
    for name, value in document.items():
        if type(value) is dict:
            inner = 5
            for sub, sub_value in value.items():
                sub_type, sub_length, sub_bytes = value_layout(sub_value, pymongo_value=True)
                element = _element(sub, sub_bytes)
                inner += element
                nested.append(FieldStat(f"{name}.{sub}", sub_type, sub_length, element + 5))
            kind, length, value_bytes = "object", None, inner
        else:
            kind, length, value_bytes = value_layout(value, pymongo_value=True)
        element = _element(name, value_bytes)
        total += element
        fields.append(FieldStat(name, kind, length, element + 5))  # $bsonSize of {name: value}
    identifier = document.get("_id")
    if type(identifier) in _ID_AS_IS:
        pass
    elif isinstance(identifier, ObjectId):  # mongoeco's: shown as pymongo's
        identifier = ObjectId(identifier.binary)
    else:
        identifier = to_pymongo(identifier)
    return DocumentStat(identifier, total, tuple(fields), tuple(nested))


def read_collection(
    db: Database[Any],
    collection: str,
    sample_size: int,
    full_scan: bool,
    budget: Budget,
    say: Callable[[str], None] = print,
) -> MemoryRead | None:
    """Summaries of ``collection``'s documents from the offline engine's memory, or None on a server.

    All of them when the collection holds at most :data:`READ_ALL_LIMIT` documents (or ``full_scan``),
    else ``sample_size`` chosen by a generator seeded with the collection's name. A whole read past
    :data:`READ_ALL_LIMIT` is announced through ``say`` first.
    """
    found = local_storage(db, collection)  # None on a server, or on another process's offline default
    if found is None:
        return None
    engine, storage = found
    version = getattr(storage, "_values", None)
    key = (db.name, collection)
    cached = _CACHE.get(key)
    if cached is not None and version is not None and cached[0] is version:
        _CACHE.move_to_end(key)
        return cached[1]
    # The documents as a find returns them, which a load or a restore holds already (decoding them from the
    # engine's stored form, one document at a time, was 40% of the read); read after the version was taken,
    # so a write in between gives a newer read, kept under an older version that no longer comes back.
    stored, _ = public_records(engine, db.name, collection)
    count = len(stored)
    whole = full_scan or count <= max(READ_ALL_LIMIT, sample_size)
    if whole:
        chosen = None
        if count > READ_ALL_LIMIT:  # past the quick size: say so before it starts, as a server scan does
            say(f"schema doctor: reading all {count:,} documents of {db.name}.{collection} from memory")
    else:
        chosen = set(random.Random(f"schema doctor:{db.name}.{collection}").sample(range(count), sample_size))
    documents = []
    with paused():  # a summary per document, all kept and acyclic: see workbook.gc_pause
        for position, document in enumerate(stored):
            if position % _CHECK_EVERY == 0:
                budget.check()
            if chosen is not None and position not in chosen:
                continue
            documents.append(document_stat(document))
    result = MemoryRead(count, tuple(documents), whole)
    if whole and version is not None:
        _CACHE[key] = (version, result)
        _CACHE.move_to_end(key)
        while len(_CACHE) > CACHED_COLLECTIONS:
            _CACHE.popitem(last=False)
    return result


def forget_reads() -> None:
    """Drop every cached summary (tests)."""
    _CACHE.clear()

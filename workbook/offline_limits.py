"""MongoDB's hard limits that mongoeco 4.11.0 does not enforce, checked for the offline default.

Notebook 05 shows each limit failing live; on the offline default the error must be MongoDB's own
code and message, so a lesson's assertion holds on both engines. Checked here (called from two
hooks in :mod:`workbook.offline`'s engine):

- nesting depth 100: code 15 (``Overflow``), ``cannot insert document because it exceeds 100
  levels of nesting`` (ported from ``validateDepth`` in mongodb/mongo ``src/mongo/db/ops/insert.cpp``:
  the document itself is level 1, and descending into a 101st level fails);
- 64 indexes per collection, ``_id`` included: code 67 (``CannotCreateIndex``), ``add index fails,
  too many indexes for <ns> key:<key>`` (``index_catalog_impl.cpp``, ``kMaxNumIndexesAllowed``);
- 32 fields in a compound index: code 13103, ``too many compound keys`` (the server's reason, as
  FerretDB/FerretDB#2819 quotes it);
- a compound index over two arrays of one document: code 171 (``CannotIndexParallelArrays``),
  ``cannot index parallel arrays [b] [a]`` (the later field first, as the server prints it).

Pure functions of their arguments: each returns the error to raise, or None.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import bson

from workbook import engine_compat
from workbook.facts import (
    CANNOT_CREATE_INDEX,
    MAX_COMPOUND_INDEX_FIELDS,
    MAX_INDEXES_PER_COLLECTION,
    MAX_NESTING_DEPTH,
    OVERFLOW,
    PARALLEL_ARRAYS,
    TOO_MANY_COMPOUND_KEYS,
)
from workbook.facts import bson_size as _plain_bson_size

WORK_COUNTERS: dict[str, int] = {"insert_calls": 0, "id_documents_examined": 0, "unique_documents_examined": 0}
"""Work done by the engine for writes: guard tests tell linear from quadratic writes with it."""


def engine_bson_size(document: Mapping[str, Any]) -> int:
    """Size in bytes of ``document`` encoded as BSON, as ``$bsonSize`` reports it, engine-side values included
    (:func:`workbook.facts.bson_size` takes pymongo values only)."""
    try:
        return _plain_bson_size(document)
    except (bson.errors.InvalidDocument, TypeError, ValueError):
        # Engine-side documents hold mongoeco's own scalar types (BsonInt64, Decimal128, DBRef...):
        # convert them to pymongo's, then let pymongo's encoder count.
        return len(bson.encode(engine_compat.to_pymongo(dict(document))))


def document_depth(document: Any) -> int:
    """Levels of documents and arrays in ``document``, the document itself being level 1.

    >>> document_depth({"a": 1}), document_depth({"a": {"b": [1]}})
    (1, 3)
    """
    deepest, stack = 0, [(document, 1)]
    leaves = _LEAVES
    while stack:
        value, level = stack.pop()
        if level > deepest:
            deepest = level
        for child in value.values() if type(value) is dict or isinstance(value, Mapping) else value:
            kind = type(child)
            if kind is dict or kind is list or (kind not in leaves and isinstance(child, Mapping | list | tuple)):
                stack.append((child, level + 1))  # plain containers and scalars: no ABC check
    return deepest


_LEAVES = frozenset({str, int, float, bool, type(None), bytes})
"""Types that are never a level of nesting: most values of a document, skipped without an ABC check."""


SHALLOW_BELOW_BYTES = 5 + 7 * MAX_NESTING_DEPTH
"""The fewest BSON bytes of a document nested deeper than 100 levels (705): 5 for the document itself
(its length and terminator) and 7 for each level below it (the element's type byte, an empty name's
NUL, the inner document's length and terminator). A smaller document cannot be too deep, so its
depth is not walked: every document the generators make at ``small`` is under it (the largest, an
order, is 666 bytes); a bigger one (an embedded shape's product with its reviews) is walked."""


ADDED_ID_BYTES = 17
"""The BSON bytes of the ``_id`` element the engine adds to a document sent without one: an ObjectId
(type 1 byte, name ``_id`` and its NUL 4, value 12)."""


def largest_wire_document(payload: bytes) -> int | None:
    """The length of the largest BSON document in an OP_MSG ``payload`` (flag bits, then sections: a body,
    and document sequences such as an insert's documents), or None if the sections do not parse.

    Each document of a request arrives with its BSON length in front, so an insert knows an upper
    bound on every document's size without encoding any of them again.

    >>> body, doc = bson.encode({"insert": "c"}), bson.encode({"_id": 1, "pad": "x" * 40})
    >>> sequence = b"documents" + bytes(1) + doc + doc
    >>> payload = bytes(4) + bytes([0]) + body + bytes([1]) + (4 + len(sequence)).to_bytes(4, "little") + sequence
    >>> largest_wire_document(payload) == len(doc), largest_wire_document(payload[:-3])
    (True, None)
    """
    size = len(payload)
    try:
        end = size - (4 if int.from_bytes(payload[:4], "little") & 1 else 0)  # checksumPresent: a CRC-32C at the end
        position, largest = 4, 0
        while position < end:
            kind = payload[position]
            position += 1
            if kind == 0:  # the body: one document
                length = int.from_bytes(payload[position : position + 4], "little", signed=True)
                largest, position = max(largest, length), position + length
            elif kind == 1:  # a document sequence: its size, a name, then documents to its end
                stop = position + int.from_bytes(payload[position : position + 4], "little", signed=True)
                position = payload.index(b"\x00", position + 4) + 1
                while position < stop:
                    length = int.from_bytes(payload[position : position + 4], "little", signed=True)
                    if length < 5:
                        return None
                    largest, position = max(largest, length), position + length
                if position != stop:
                    return None
            else:
                return None
        return largest if position == end else None
    except (IndexError, ValueError):
        return None


def depth_error(document: Mapping[str, Any], size: int | None = None) -> tuple[int, str] | None:
    """MongoDB's (code, message) for a document nested deeper than 100 levels, else None.

    ``size``, the document's BSON bytes when known: under :data:`SHALLOW_BELOW_BYTES`, the answer is None
    without a walk.
    """
    if size is not None and size < SHALLOW_BELOW_BYTES:
        return None
    if document_depth(document) > MAX_NESTING_DEPTH:
        return OVERFLOW, f"cannot insert document because it exceeds {MAX_NESTING_DEPTH} levels of nesting"
    return None


def _key_text(keys: Sequence[tuple[str, Any]]) -> str:
    return "{ " + ", ".join(f"{field}: {direction}" for field, direction in keys) + " }"


def new_index_error(
    namespace: str, keys: Sequence[tuple[str, Any]], existing: Sequence[Sequence[tuple[str, Any]]]
) -> tuple[int, str] | None:
    """MongoDB's (code, message) when an index on ``keys`` cannot be added beside ``existing`` (``_id`` included)."""
    if any(list(keys) == list(other) for other in existing):
        return None  # creating an existing index again is a no-op on MongoDB
    if len(keys) > MAX_COMPOUND_INDEX_FIELDS:
        return TOO_MANY_COMPOUND_KEYS, "too many compound keys"
    if len(existing) >= MAX_INDEXES_PER_COLLECTION:
        return CANNOT_CREATE_INDEX, f"add index fails, too many indexes for {namespace} key:{_key_text(keys)}"
    return None


def _first_array(document: Mapping[str, Any], path: str) -> str | None:
    """The prefix of ``path`` at which ``document`` first holds an array (``"o"`` for ``o.x``), or None."""
    value: Any = document
    walked = []
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
        walked.append(part)
        if isinstance(value, list):
            return ".".join(walked)
    return None


def parallel_arrays_error(documents: Iterable[Mapping[str, Any]], paths: Sequence[str]) -> tuple[int, str] | None:
    """MongoDB's (code, message) if a document has arrays in two of a compound index's ``paths``, else None."""
    if len(paths) < 2:
        return None
    for document in documents:
        # Paths through the same array ({o.x, o.y} over o: [{x, y}]) are fine; two different arrays are not.
        arrays = list(dict.fromkeys(a for a in (_first_array(document, path) for path in paths) if a is not None))
        if len(arrays) > 1:
            return PARALLEL_ARRAYS, f"cannot index parallel arrays [{arrays[1]}] [{arrays[0]}]"
    return None

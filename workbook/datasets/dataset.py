"""A generated dataset: named collections of canonical documents and their fingerprint."""

from __future__ import annotations

import datetime
import hashlib
import itertools
import threading
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast, overload

import bson
import bson.errors
from bson.codec_options import CodecOptions

from workbook.errors import WorkbookError

DECODE_OPTIONS: CodecOptions[dict[str, Any]] = CodecOptions(tz_aware=True, tzinfo=datetime.UTC)
"""How a dataset's documents are read back: dates aware, in UTC, as the generators make them."""

_BATCH = 1024
"""Documents decoded at a time while a collection is iterated."""


def _encoded(position: int, document: Mapping[str, Any]) -> bytes:
    """``document``'s BSON; a clear error, naming the document and the fix, for one BSON cannot hold."""
    try:
        return bson.encode(document)
    except (TypeError, ValueError, OverflowError, bson.errors.BSONError) as error:
        raise WorkbookError(
            f"document {position} of a dataset's collection cannot be stored as BSON ({error})",
            fix="give it a dict with string keys and BSON values (str, int, float, bool, None, datetime, ObjectId, "
            "lists and dicts of those): what MongoDB can store",
        ) from None


class _Documents(Sequence[dict[str, Any]]):
    """A sequence of documents read by runs of positions (``_read(start, stop)``, ``0 <= start < stop <= len``)."""

    __slots__ = ()

    def _read(self, start: int, stop: int) -> list[dict[str, Any]]:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return [self[position] for position in range(start, stop, step)]
            return self._read(start, stop) if start < stop else []
        position = index.__index__()
        if position < 0:
            position += len(self)
        if not 0 <= position < len(self):
            raise IndexError(f"document {index} of {len(self):,}")
        return self._read(position, position + 1)[0]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for start in range(0, len(self), _BATCH):
            yield from self._read(start, min(start + _BATCH, len(self)))


class EncodedDocuments(_Documents):
    """One collection's documents, held as their BSON bytes until read: a list of dicts decoded lazily.

    A generated dataset stays in a notebook for its whole length, beside the shapes loaded from it, and a load
    restored from the snapshot cache reads none of its documents (only their bytes, for the fingerprint). As
    dicts the parts dataset at ``small`` held 53 MiB (tracemalloc) for 12.7 MiB of BSON. A document read (by
    position, slice or loop) is decoded once and kept, so this reads and changes as the list of dicts it
    stands for: ``docs[0] is docs[0]``, and an edit to a document is seen by the next load (its fingerprint
    encodes the documents read again). Dates come back aware, in UTC, as the generators make them.
    """

    __slots__ = ("_data", "_ends", "_held", "_lock")

    def __init__(self, documents: Iterable[Mapping[str, Any]] = ()) -> None:
        encoded = [_encoded(position, document) for position, document in enumerate(documents)]
        self._data = b"".join(encoded)
        self._ends = array("q", itertools.accumulate(map(len, encoded)))
        self._held: list[dict[str, Any] | None] | None = None
        """Each document read so far, by position (None: never read, still only its bytes)."""
        self._lock = threading.Lock()

    @property
    def bson_bytes(self) -> int:
        """The BSON bytes of the documents as they were given."""
        return len(self._data)

    def read(self) -> int:
        """How many of the documents have been read (decoded and kept)."""
        held = self._held
        return 0 if held is None else sum(document is not None for document in held)

    def encoded(self) -> bytes:
        """Every document's BSON, in order, as it is now: the bytes held, each document read encoded again (it may
        have been changed since)."""
        held = self._held
        if held is None:
            return self._data
        return b"".join(
            self._bytes(position) if document is None else bson.encode(document)
            for position, document in enumerate(held)
        )

    def __len__(self) -> int:
        return len(self._ends)

    def _span(self, start: int, stop: int) -> memoryview:
        """The bytes of documents ``start`` to ``stop - 1`` (``0 <= start < stop <= len``)."""
        return memoryview(self._data)[self._ends[start - 1] if start else 0 : self._ends[stop - 1]]

    def _bytes(self, position: int) -> bytes:
        return bytes(self._span(position, position + 1))

    def _kept(self, start: int, stop: int) -> list[dict[str, Any]]:
        """Documents ``start`` to ``stop - 1``, each decoded once and kept (the same objects on every read)."""
        with self._lock:
            held = self._held
            if held is None:
                held = self._held = [None] * len(self)
            missing = [position for position in range(start, stop) if held[position] is None]
            if missing:
                first, last = missing[0], missing[-1] + 1
                for position, document in enumerate(bson.decode_all(self._span(first, last), DECODE_OPTIONS), first):
                    if held[position] is None:
                        held[position] = document
            return cast(list[dict[str, Any]], held[start:stop])

    _read = _kept

    def __reduce__(self) -> tuple[Any, ...]:
        """Copied or pickled as the documents they are now (edits included), held as BSON again."""
        return (EncodedDocuments, (list(self.unkept()),))

    def unkept(self) -> Sequence[dict[str, Any]]:
        """These documents for a reader that changes none: each document read before (edits and all) as it is
        kept, every other one decoded afresh and not kept (a loop over a collection holds one batch at a time)."""
        return _Unkept(self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EncodedDocuments):
            return len(self) == len(other) and self.encoded() == other.encoded()
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{len(self):,} documents, {self.bson_bytes:,} BSON bytes, {self.read():,} read>"


class _Unkept(_Documents):
    """:meth:`EncodedDocuments.unkept`: read without keeping what was not read before."""

    __slots__ = ("_of",)

    def __init__(self, of: EncodedDocuments) -> None:
        self._of = of

    def __reduce__(self) -> tuple[Any, ...]:
        return (_Unkept, (self._of,))

    def __len__(self) -> int:
        return len(self._of)

    def _decoded(self, start: int, stop: int) -> list[dict[str, Any]]:
        of = self._of
        fresh = bson.decode_all(of._span(start, stop), DECODE_OPTIONS)
        held = of._held
        if held is None:
            return fresh
        return [kept if kept is not None else document for kept, document in zip(held[start:stop], fresh, strict=True)]

    _read = _decoded


@dataclass(frozen=True)
class Dataset:
    """Canonical, normalized documents of one generated dataset, keyed by collection.

    Each collection is held as BSON until its documents are read (:class:`EncodedDocuments`), whatever sequence of
    documents it was given.
    """

    name: str
    scale: str
    seed: int
    collections: Mapping[str, Sequence[dict[str, Any]]]

    def __post_init__(self) -> None:
        held = {
            name: documents if isinstance(documents, EncodedDocuments) else EncodedDocuments(documents)
            for name, documents in self.collections.items()
        }
        object.__setattr__(self, "collections", held)

    def documents(self, collection: str) -> Sequence[dict[str, Any]]:
        """``collection``'s documents for a reader that changes none (:meth:`EncodedDocuments.unkept`): the
        workbench's own loops over a dataset (shapes built from it, counts) keep nothing of it."""
        return cast(EncodedDocuments, self.collections[collection]).unkept()

    @property
    def bson_bytes(self) -> int:
        """The BSON bytes of all its documents as they were given."""
        return sum(cast(EncodedDocuments, documents).bson_bytes for documents in self.collections.values())

    def counts(self) -> dict[str, int]:
        """Return the number of documents in each collection."""
        return {name: len(documents) for name, documents in self.collections.items()}

    def sha256(self) -> str:
        """Return the hex SHA-256 of the canonical BSON: collections by name, documents in order."""
        digest = hashlib.sha256()
        for name in sorted(self.collections):
            digest.update(name.encode() + b"\x00")
            digest.update(cast(EncodedDocuments, self.collections[name]).encoded())  # held as BSON: __post_init__
        return digest.hexdigest()

    def __repr__(self) -> str:
        """Show counts, not fifty thousand documents."""
        return f"Dataset({self.name!r}, scale={self.scale!r}, seed={self.seed}, counts={self.counts()})"

"""A generated dataset: named collections of canonical documents and their fingerprint."""

from __future__ import annotations

import datetime
import hashlib
import itertools
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast, overload

import bson
from bson.codec_options import CodecOptions

DECODE_OPTIONS: CodecOptions[dict[str, Any]] = CodecOptions(tz_aware=True, tzinfo=datetime.UTC)
"""How a dataset's documents are read back: dates aware, in UTC, as the generators make them."""

_BATCH = 1024
"""Documents decoded at a time while a collection is iterated: the whole list never exists for a loop."""


class EncodedDocuments(Sequence[dict[str, Any]]):
    """One collection's documents, held once as their BSON bytes; every read decodes new documents.

    A generated dataset stays in a notebook for its whole length, beside the shapes loaded from it. As
    Python dicts the parts dataset at ``small`` held 53 MiB (tracemalloc) for 12.7 MiB of BSON; as BSON it
    holds the BSON. Each read makes new documents (equal, not the same objects; dates aware, in UTC): take
    ``list()`` to keep them, and change a copy, not the dataset.
    """

    __slots__ = ("_data", "_ends")

    def __init__(self, documents: Iterable[Mapping[str, Any]] = ()) -> None:
        encoded = [bson.encode(document) for document in documents]
        self._data = b"".join(encoded)
        self._ends = array("q", itertools.accumulate(map(len, encoded)))

    @property
    def bson_bytes(self) -> int:
        """The BSON bytes of all the documents."""
        return len(self._data)

    def __len__(self) -> int:
        return len(self._ends)

    def _span(self, start: int, stop: int) -> memoryview:
        """The bytes of documents ``start`` to ``stop - 1`` (``0 <= start < stop <= len``)."""
        return memoryview(self._data)[self._ends[start - 1] if start else 0 : self._ends[stop - 1]]

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return [self[position] for position in range(start, stop, step)]
            return bson.decode_all(self._span(start, stop), DECODE_OPTIONS) if start < stop else []
        position = index.__index__()
        if position < 0:
            position += len(self)
        if not 0 <= position < len(self):
            raise IndexError(f"document {index} of {len(self):,}")
        return bson.decode(self._span(position, position + 1), DECODE_OPTIONS)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for start in range(0, len(self), _BATCH):
            yield from bson.decode_all(self._span(start, min(start + _BATCH, len(self))), DECODE_OPTIONS)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EncodedDocuments):
            return self._data == other._data
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{len(self):,} documents, {self.bson_bytes:,} BSON bytes>"


@dataclass(frozen=True)
class Dataset:
    """Canonical, normalized documents of one generated dataset, keyed by collection.

    Each collection is held as BSON (:class:`EncodedDocuments`), whatever sequence of documents it was given.
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

    def counts(self) -> dict[str, int]:
        """Return the number of documents in each collection."""
        return {name: len(documents) for name, documents in self.collections.items()}

    def sha256(self) -> str:
        """Return the hex SHA-256 of the canonical BSON: collections by name, documents in order."""
        digest = hashlib.sha256()
        for name in sorted(self.collections):
            digest.update(name.encode() + b"\x00")
            digest.update(cast(EncodedDocuments, self.collections[name])._data)  # held as BSON: __post_init__
        return digest.hexdigest()

    def __repr__(self) -> str:
        """Show counts, not fifty thousand documents."""
        return f"Dataset({self.name!r}, scale={self.scale!r}, seed={self.seed}, counts={self.counts()})"

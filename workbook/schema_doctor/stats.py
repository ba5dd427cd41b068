"""What one sampled document measured: its size and each top-level field's type, length and bytes.

Filled by the server-side sample in :mod:`workbook.schema_doctor.context` and by the offline
engine's memory read in :mod:`workbook.schema_doctor.memory`; read by every check.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, NamedTuple


class FieldStat(NamedTuple):
    """One top-level field of one sampled document (a tuple: the doctor makes one per field of every
    document it reads, and a tuple is made in half the time of a frozen dataclass)."""

    name: str
    type: str
    length: int | None
    bytes: int


@dataclass(frozen=True)
class DocumentStat:
    """One sampled document: its ``_id``, BSON size and top-level fields."""

    id: Any
    bytes: int
    fields: tuple[FieldStat, ...]
    nested: tuple[FieldStat, ...] = ()
    """Fields one level down (``stats.history``), for arrays kept inside a subdocument."""

    @functools.cached_property
    def largest(self) -> FieldStat | None:
        """The field that takes the most bytes (``_id`` aside); worked out once (each check asks for it)."""
        candidates = [f for f in self.fields if f.name != "_id"]
        return max(candidates, key=lambda f: f.bytes) if candidates else None

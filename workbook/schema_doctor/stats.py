"""What one sampled document measured: its size and each top-level field's type, length and bytes.

Filled by the server-side sample in :mod:`workbook.schema_doctor.context` and by the offline
engine's memory read in :mod:`workbook.schema_doctor.memory`; read by every check.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class FieldStat(NamedTuple):
    """One top-level field of one sampled document (a tuple: the doctor makes one per field of every
    document it reads, and a tuple is made in half the time of a frozen dataclass)."""

    name: str
    type: str
    length: int | None
    bytes: int


class DocumentStat(NamedTuple):
    """One sampled document: its ``_id``, BSON size and top-level fields (a tuple, as :class:`FieldStat` is:
    the doctor makes one for every document it reads, 50,000 for the follows at ``small``)."""

    id: Any
    bytes: int
    fields: tuple[FieldStat, ...]
    nested: tuple[FieldStat, ...] = ()
    """Fields one level down (``stats.history``), for arrays kept inside a subdocument."""

    @property
    def largest(self) -> FieldStat | None:
        """The field that takes the most bytes (``_id`` aside)."""
        candidates = [f for f in self.fields if f.name != "_id"]
        return max(candidates, key=lambda f: f.bytes) if candidates else None

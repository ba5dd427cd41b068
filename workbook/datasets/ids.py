"""Readable string `_id`s: a prefix and a zero-padded number, never a bare number."""

from __future__ import annotations


def id_width(minimum: int, count: int) -> int:
    """Return the digits needed so ids up to `count` sort as text in numeric order.

    >>> id_width(6, 2_000), id_width(6, 4_000_000)
    (6, 7)
    """
    return max(minimum, len(str(count)))


def make_id(prefix: str, number: int, width: int) -> str:
    """Return an id such as 'prod-000042'.

    >>> make_id("prod", 42, 6)
    'prod-000042'
    """
    return f"{prefix}-{number:0{width}d}"

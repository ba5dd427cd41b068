"""Collection families: names that differ only by an embedded date or id (``logs_2024_01_31``).

>>> name_pattern("logs_2024_01_31"), name_pattern("cust_5f1d7ac3b2e4f9a1c0d3e5f7"), name_pattern("orders")
('logs_<date>', 'cust_<id>', None)
"""

from __future__ import annotations

import re

DATE_PART = re.compile(r"(19|20)\d\d([-_.]?(0[1-9]|1[0-2])([-_.]?(0[1-9]|[12]\d|3[01]))?)?(?!\d)")
ID_PART = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"  # UUID
    r"|(?<![0-9a-z])[0-9a-f]{24}(?![0-9a-z])"  # ObjectId
    r"|(?<![0-9])\d{3,}(?![0-9])",  # a run of digits
    re.IGNORECASE,
)


def name_pattern(name: str) -> str | None:
    """The name with embedded dates and ids replaced by ``<date>``/``<id>``, or None if it has neither."""
    pattern = DATE_PART.sub("<date>", name)
    pattern = ID_PART.sub("<id>", pattern)
    return pattern if pattern != name else None

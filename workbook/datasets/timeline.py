"""Fixed points in time: every generated date is an integer offset from one epoch."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

EPOCH = datetime(2025, 1, 1, tzinfo=UTC)
DAY = 24 * 60 * 60
YEAR = 365 * DAY


def moment(seconds: int) -> datetime:
    """Return the UTC datetime `seconds` after (or before, if negative) the epoch."""
    return EPOCH + timedelta(seconds=seconds)

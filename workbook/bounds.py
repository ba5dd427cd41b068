"""Bounds on counts that set how long a call runs: refused with the bound and the reason, not run for hours.

>>> check_count("repeat", 20, most=MAX_REPEAT, unit="timed calls per operation")
20
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from workbook.errors import ArgumentOutOfRangeError, ArgumentTypeError, WorkbookError

MAX_REPEAT = 10_000
"""Most timed calls per operation: 10,000 calls of the slowest course operation (~50 ms) is about 8 minutes."""

MAX_CALLS = 10_000
"""Most calls per operation for graders and the doctor (same reason as :data:`MAX_REPEAT`)."""


def check_count(name: str, value: Any, *, most: int, unit: str, least: int = 1) -> int:
    """``value`` if it is a whole number in [least, most]; else an error naming the bound and why."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise ArgumentTypeError(name, value, f"a whole number of {unit}", fix=f"e.g. {name}={min(most, 20)}")
    if value < least:
        raise ArgumentOutOfRangeError(
            f"{name}={value} is below {least}: it counts {unit}.", fix=f"Use {name}={least} or more, e.g. {name}=20."
        )
    if value > most:
        raise ArgumentOutOfRangeError(
            f"{name}={value:,} is over the bound of {most:,} {unit}: each one is a real call to the database, "
            "so the run would take hours (or days) before showing anything.",
            fix=f"Use {name}={most:,} or fewer; a few dozen already give a stable median.",
        )
    return value


def check_frame(name: str, value: Any, columns: tuple[str, ...], *, made_by: str) -> pd.DataFrame:
    """``value`` if it is a non-empty DataFrame with ``columns``; else an error naming what makes one."""
    if not isinstance(value, pd.DataFrame):
        raise ArgumentTypeError(name, value, "a pandas DataFrame", fix=f"Pass what {made_by} returned.")
    missing = [column for column in columns if column not in value.columns]
    if missing:
        raise WorkbookError(
            f"{name} has no column {', '.join(map(repr, missing))} "
            f"(it has: {', '.join(map(str, value.columns)) or 'none'}).",
            fix=f"Pass what {made_by} returned.",
        )
    if value.empty:
        raise WorkbookError(
            f"{name} is empty: there is nothing to draw.", fix=f"Pass what {made_by} returned, with rows."
        )
    return value

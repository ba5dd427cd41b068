"""The errors raised when a query uses something the planner model does not cover (defined in ``errors``)."""

from __future__ import annotations

from workbook.errors import SUPPORTED_BY_MODEL as SUPPORTED
from workbook.errors import UnknownHint, UnsupportedByModel

__all__ = ["SUPPORTED", "UnknownHint", "UnsupportedByModel"]

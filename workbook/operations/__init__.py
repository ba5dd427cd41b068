"""Each dataset's operations, implemented once per document shape under the same names.

:func:`workbook.dataset_parts.operations` finds the class for a dataset and shape.
"""

from __future__ import annotations

from workbook.operations.base import Operations

__all__ = ["Operations"]

"""Each dataset's operations, implemented once per document shape under the same names."""

from __future__ import annotations

from pymongo.database import Database

from workbook.operations.base import Operations


def operations(dataset: str, shape: str, db: Database | None = None) -> Operations:
    """The operations of ``dataset`` in ``shape``, bound to ``db`` (default: the shape's own database)."""
    from workbook.connection import connect
    from workbook.shapes import shape_spec

    spec = shape_spec(dataset, shape)
    if db is None:
        db = connect(database=f"{dataset}_{shape}", quiet=True)
    return spec.operations(db)


__all__ = ["Operations", "operations"]

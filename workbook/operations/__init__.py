"""Each dataset's operations, implemented once per document shape under the same names."""

from __future__ import annotations

from pymongo.database import Database

from workbook.errors import ArgumentTypeError
from workbook.operations.base import Operations


def operations(dataset: str, shape: str, db: Database) -> Operations:
    """The operations of ``dataset`` in ``shape``, bound to ``db`` (one of the learner's databases).

    Learners get these from what ``load()`` returns: ``loaded.ops``.
    """
    from workbook.datasets.registry import dataset_spec
    from workbook.shapes import check_shape

    classes = dataset_spec(dataset).operations()
    if not isinstance(db, Database):
        raise ArgumentTypeError("db", db, "a pymongo Database", fix="Use what workbook.load() returned: loaded.ops.")
    if isinstance(shape, str) and shape in classes:  # the three, or a shape a learner registered (capstone)
        return classes[shape](db)
    return classes[check_shape(shape)](db)


__all__ = ["Operations", "operations"]

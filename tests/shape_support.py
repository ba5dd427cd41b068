"""Shared by the per-dataset tests: a dataset loaded in every shape, and the equal-answers check."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import workbook
from workbook.operations.base import Operations
from workbook.shapes import SHAPE_NAMES


def loaded_in_every_shape(engine: str | None, dataset: workbook.Dataset) -> Iterator[dict[str, Operations]]:
    """Each shape's operations over a fresh database holding ``dataset``; the databases are dropped after."""
    ops = {}
    for shape in SHAPE_NAMES:
        db = workbook.connect(engine, database=f"t{uuid.uuid4().hex[:8]}", quiet=True)
        ops[shape] = workbook.load(dataset, shape, db, progress=False).ops
    try:
        yield ops
    finally:
        for op in ops.values():
            op.db.client.drop_database(op.db.name)


def same_in_every_shape(ops: dict[str, Operations], name: str, *args, **kwargs):  # type: ignore[no-untyped-def]
    """Run one operation in every shape; assert the answers are equal; return one."""
    answers = {shape: op.run(name, *args, **kwargs) for shape, op in ops.items()}
    first = answers["referenced"]
    for shape, answer in answers.items():
        assert answer == first, f"{name}{args} differs in the {shape} shape: {answer} != {first}"
    return first

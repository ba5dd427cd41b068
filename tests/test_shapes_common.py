"""What every dataset's shapes promise alike: pure builders, and loads that give the same state again."""

from __future__ import annotations

import uuid

import pytest

import workbook
from tests.conftest import fingerprint
from workbook.dataset_parts import shape_spec
from workbook.shapes import SHAPE_NAMES

DATASETS = ["store", "followers", "parts"]


@pytest.fixture(scope="module", params=DATASETS)
def tiny(request):
    return workbook.generate(request.param, scale="tiny", seed=7)


def test_builders_do_not_mutate_the_dataset(tiny):
    before = tiny.sha256()
    for shape in SHAPE_NAMES:
        shape_spec(tiny.name, shape).build(tiny)
    assert tiny.sha256() == before


@pytest.mark.parametrize("shape", SHAPE_NAMES)
def test_load_is_idempotent(engine, tiny, shape):
    spec = shape_spec(tiny.name, shape)
    db = workbook.connect(engine, database=f"t{uuid.uuid4().hex[:8]}", quiet=True)
    try:
        first = workbook.load(tiny, shape, db, progress=False)
        loaded = fingerprint(db.client, db.name)
        for name in spec.collection_names:  # edit every collection of the shape
            db[name].delete_one({})
        assert fingerprint(db.client, db.name) != loaded
        second = workbook.load(tiny, shape, db, progress=False)
        assert fingerprint(db.client, db.name) == loaded
        assert first.to_frame().equals(second.to_frame())
        built = spec.build(tiny)
        assert second.to_frame()["documents"].to_dict() == {name: len(built[name]) for name in spec.collection_names}
    finally:
        db.client.drop_database(db.name)

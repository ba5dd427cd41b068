"""One registry per dataset: its generator, shapes, operations and workload agree with each other."""

from __future__ import annotations

import pytest

from workbook.dataset_parts import REGISTERED, dataset_parts
from workbook.datasets.registry import CAPSTONE_DATASETS, DATASETS, dataset_spec
from workbook.errors import UnknownChoiceError
from workbook.shapes import SHAPE_NAMES


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_each_dataset_registers_every_part_for_every_shape(name: str) -> None:
    spec, parts = dataset_spec(name), dataset_parts(name)
    shapes, operations, workload = parts.shapes(), parts.operations(), parts.workload()
    assert tuple(shapes) == SHAPE_NAMES and tuple(operations) == SHAPE_NAMES
    for shape in SHAPE_NAMES:
        assert (shapes[shape].dataset, shapes[shape].name) == (name, shape)
        assert (operations[shape].dataset, operations[shape].shape) == (name, shape)
        assert set(operations[shape].NAMES) == set(workload.names)  # every operation has a workload row
    assert workload.dataset == name and set(spec.sizes) == {"tiny", "small", "medium", "large"}


def test_unknown_datasets_list_the_registered_ones() -> None:
    with pytest.raises(UnknownChoiceError, match="Did you mean 'parts'"):
        dataset_spec("part")


def test_every_dataset_has_its_parts_registered_and_nothing_else() -> None:
    assert set(REGISTERED) == {*DATASETS, *CAPSTONE_DATASETS}


def test_unknown_datasets_have_no_parts() -> None:
    with pytest.raises(UnknownChoiceError, match="Did you mean 'store'"):
        dataset_parts("stor")

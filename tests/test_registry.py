"""One registry per dataset: its generator, shapes, operations and workload agree with each other."""

from __future__ import annotations

import pytest

from workbook.datasets.registry import DATASETS, dataset_spec
from workbook.errors import UnknownChoiceError
from workbook.shapes import SHAPE_NAMES


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_each_dataset_registers_every_part_for_every_shape(name: str) -> None:
    spec = dataset_spec(name)
    shapes, operations, workload = spec.shapes(), spec.operations(), spec.workload()
    assert tuple(shapes) == SHAPE_NAMES and tuple(operations) == SHAPE_NAMES
    for shape in SHAPE_NAMES:
        assert (shapes[shape].dataset, shapes[shape].name) == (name, shape)
        assert (operations[shape].dataset, operations[shape].shape) == (name, shape)
        assert set(operations[shape].NAMES) == set(workload.names)  # every operation has a workload row
    assert workload.dataset == name and set(spec.sizes) == {"tiny", "small", "medium", "large"}


def test_unknown_datasets_list_the_registered_ones() -> None:
    with pytest.raises(UnknownChoiceError, match="Did you mean 'parts'"):
        dataset_spec("part")

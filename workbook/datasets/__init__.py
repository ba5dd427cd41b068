"""Seeded, pure dataset generators: `generate("store", scale="small", seed=7)`."""

from workbook.datasets.dataset import Dataset
from workbook.datasets.registry import DATASETS, GENERATOR_VERSION, SCALES, generate, sizes
from workbook.datasets.samples import (
    SAMPLES_DIR,
    check_samples,
    read_manifest,
    read_sample,
    write_samples,
)

__all__ = [
    "DATASETS",
    "GENERATOR_VERSION",
    "SAMPLES_DIR",
    "SCALES",
    "Dataset",
    "check_samples",
    "generate",
    "read_manifest",
    "read_sample",
    "sizes",
    "write_samples",
]

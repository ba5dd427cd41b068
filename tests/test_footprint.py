"""Memory in proportion to the data: a loaded shape holds each document once, not one copy per layer."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import workbook
from workbook import snapshot
from workbook.footprint import shape_footprint
from workbook.planner.keys import NO_ARRAYS, Entry, IndexDefinition, build_index

HELD_PER_BSON_BYTE, HELD_FIXED = 32, 2**20
"""A generous bound on what a restored shape holds at ``tiny``: 32 bytes per BSON byte plus 1 MiB of fixed
costs (at ``tiny`` the fixed part weighs: 0.7 MiB for the 0.02 MiB of followers/embedded). Measured after
field names were shared and the index memo compacted: 0.72-2.12 MiB, at most 0.85 of the bound
(followers/referenced); before, followers/referenced and followers/hybrid held 2.63 and 2.86 MiB and failed
it, as would a second copy of the documents in any layer (engine, model or snapshot)."""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty cache folder and no snapshots in memory."""
    monkeypatch.setenv("WORKBOOK_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("WORKBOOK_SNAPSHOTS", raising=False)
    snapshot.forget()
    yield tmp_path
    snapshot.forget()


@pytest.mark.parametrize("shape", ["embedded", "referenced", "hybrid"])
@pytest.mark.parametrize("dataset", ["store", "followers", "parts"])
def test_a_restored_shape_holds_a_bounded_multiple_of_its_bson_bytes(cache: Path, dataset: str, shape: str) -> None:
    loaded = workbook.load(dataset, shape, scale="tiny", progress=False)  # writes the snapshot file
    try:
        footprint = shape_footprint(dataset, shape, scale="tiny", resident=False)
        assert footprint.bson_bytes == sum(c.bytes for c in loaded.report.collections) > 0
        assert footprint.traced_bytes > footprint.bson_bytes, "the documents themselves are held"
        assert footprint.traced_bytes <= HELD_PER_BSON_BYTE * footprint.bson_bytes + HELD_FIXED, footprint
    finally:
        loaded.db.client.drop_database(loaded.db.name)


def test_the_resident_memory_is_measured_in_a_fresh_process(cache: Path) -> None:
    """RSS read in this process, after other tests freed memory, reused it and read 0; a fresh process pays it."""
    loaded = workbook.load("parts", "embedded", scale="tiny", progress=False)
    try:
        footprint = shape_footprint("parts", "embedded", scale="tiny")
        assert footprint.rss_bytes > 0 and footprint.rss_ratio == footprint.rss_bytes / footprint.bson_bytes
    finally:
        loaded.db.client.drop_database(loaded.db.name)


def test_index_keys_of_documents_without_arrays_share_one_empty_prefix_set() -> None:
    spec = IndexDefinition.from_info({"name": "a_1_b_1", "key": {"a": 1, "b": 1}})
    documents = [{"_id": i, "a": i % 3, "b": {"c": i}} for i in range(50)] + [{"_id": 50, "a": [1, 2]}]
    index = build_index(spec, documents)
    prefixes = [arrays for _, _, per_path in index.memo().values() for arrays in per_path]
    assert sum(arrays is NO_ARRAYS for arrays in prefixes) == len(prefixes) - 1  # all but the array's path
    assert len({id(per_path) for _, _, per_path in index.memo().values() if not any(per_path)}) == 1  # one list
    assert index.multikey_paths == {"a": ["a"], "b": []}
    assert not hasattr(index.entries[0], "__dict__") and isinstance(index.entries[0], Entry)  # slotted


def _same_types(left: object, right: object) -> bool:
    """Equal and of the same types all the way down (1 == 1.0 == True would pass ``==`` alone)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        assert isinstance(right, dict)
        return list(left) == list(right) and all(_same_types(left[k], right[k]) for k in left)
    if isinstance(left, list):
        assert isinstance(right, list)
        return len(left) == len(right) and all(_same_types(a, b) for a, b in zip(left, right, strict=True))
    return bool(left == right) or left != left  # NaN is itself

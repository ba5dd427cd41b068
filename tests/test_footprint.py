"""Memory in proportion to the data: a loaded shape holds each document once, not one copy per layer."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import workbook
from workbook import snapshot
from workbook.footprint import shape_footprint
from workbook.planner.keys import NO_ARRAYS, Entry, IndexSpec, build_index

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
        footprint = shape_footprint(dataset, shape, scale="tiny")
        assert footprint.bson_bytes == sum(c.bytes for c in loaded.report.collections) > 0
        assert footprint.traced_bytes > footprint.bson_bytes, "the documents themselves are held"
        assert footprint.traced_bytes <= HELD_PER_BSON_BYTE * footprint.bson_bytes + HELD_FIXED, footprint
    finally:
        loaded.db.client.drop_database(loaded.db.name)


def test_restored_documents_share_one_string_per_field_name_and_value(cache: Path) -> None:
    loaded = workbook.load("store", "hybrid", scale="tiny", progress=False)
    try:
        found = snapshot.read(snapshot.snapshot_key("store", "tiny", 7, "hybrid"))
        assert found is not None
        payloads = [stored.payload for stored in found.collections["products"]["_storage"].values()]
        first, second = payloads[0], payloads[1]
        shared = [name for name in first if name in second]
        assert shared
        for name in shared:  # the same object, not an equal string decoded again for each document
            assert next(k for k in second if k == name) is next(k for k in first if k == name), name
        strings = [v for payload in payloads for v in payload.values() if type(v) is str]
        assert len(set(strings)) < len(strings), "some string values repeat (categories, names)"
        assert len({id(v) for v in strings}) == len(set(strings)), "each distinct value is one object"
    finally:
        loaded.db.client.drop_database(loaded.db.name)


def test_index_keys_of_documents_without_arrays_share_one_empty_prefix_set() -> None:
    spec = IndexSpec.from_info({"name": "a_1_b_1", "key": {"a": 1, "b": 1}})
    documents = [{"_id": i, "a": i % 3, "b": {"c": i}} for i in range(50)] + [{"_id": 50, "a": [1, 2]}]
    index = build_index(spec, documents)
    prefixes = [arrays for _, _, per_path in index.memo.values() for arrays in per_path]
    assert sum(arrays is NO_ARRAYS for arrays in prefixes) == len(prefixes) - 1  # all but the array's path
    assert len({id(per_path) for _, _, per_path in index.memo.values() if not any(per_path)}) == 1  # one list
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


@pytest.mark.parametrize("dataset", ["store", "followers", "parts"])
def test_the_shared_decoded_form_is_the_engines_decoded_form(cache: Path, dataset: str) -> None:
    """The model reads documents whose untagged parts are the payload's own: equal, type for type, to what the
    engine's codec decodes, and sharing the parts that hold no date (one copy, not two)."""
    from mongoeco.engines.memory import _StoredDocument

    from workbook.engine_reads import public_records
    from workbook.offline import offline_server

    engine = offline_server().engine
    loaded = workbook.load(dataset, "embedded", scale="tiny", progress=False)
    snapshot.forget()
    loaded = workbook.load(dataset, "embedded", scale="tiny", progress=False)  # restored: nothing decoded yet
    try:
        shared_parts = 0
        for each in loaded.report.collections:
            stored = [s for s in engine._storage[loaded.db.name][each.collection].values()]
            assert all(isinstance(s, _StoredDocument) for s in stored)
            fresh = [engine._decode_codec_payload(s.payload, preserve_bson_wrappers=True) for s in stored]
            documents, records = public_records(engine, loaded.db.name, each.collection)
            assert [id(r) for r in records] == [id(s) for s in stored]
            for document, record, expected in zip(documents, records, fresh, strict=True):
                assert _same_types(record.decoded_wrapped, expected)
                assert _same_types(document, engine._borrow_public_storage_document(record))
                payload = record.payload
                shared_parts += sum(
                    record.decoded_wrapped[k] is payload[k] for k in payload if isinstance(payload[k], dict | list)
                )
        assert shared_parts > 0, "subdocuments and arrays without dates are the payload's own"
    finally:
        loaded.db.client.drop_database(loaded.db.name)

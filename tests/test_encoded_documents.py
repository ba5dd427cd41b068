"""A dataset's collections are held as BSON (EncodedDocuments): every read gives the documents it was given."""

from __future__ import annotations

import datetime
import hashlib

import bson
import pytest

from workbook.datasets.dataset import Dataset, EncodedDocuments

UTC = datetime.UTC


def _documents(count: int) -> list[dict]:
    return [
        {
            "_id": f"d-{i:05d}",
            "n": i,
            "x": i / 3,
            "at": datetime.datetime(2025, 1, 1, i % 24, tzinfo=UTC),
            "tags": [i, {"k": "v"}],
        }
        for i in range(count)
    ]


def test_reads_give_the_documents_back_by_position_slice_and_loop() -> None:
    documents = _documents(2_500)  # more than one decoded batch
    held = EncodedDocuments(documents)
    assert len(held) == 2_500 and held.bson_bytes == sum(len(bson.encode(d)) for d in documents)
    assert list(held) == documents and held == documents and documents == held
    assert held[0] == documents[0] and held[-1] == documents[-1] and held[1_234] == documents[1_234]
    assert held[10:13] == documents[10:13] and held[-3:] == documents[-3:] and held[5:5] == []
    assert held[::700] == documents[::700] and held[::-1][:2] == documents[::-1][:2]
    assert held[0]["at"].tzinfo is UTC  # dates come back aware, as the generators make them
    with pytest.raises(IndexError):
        held[2_500]
    with pytest.raises(IndexError):
        held[-2_501]


def test_a_document_read_is_kept_so_edits_read_back_as_in_a_list() -> None:
    """A document is decoded once, when first read (by position, slice or loop), and kept: the same object on every
    read, an edit to it seen by every later read and in the bytes the fingerprint hashes; unread ones stay bytes."""
    documents = _documents(3_000)
    held = EncodedDocuments(documents)
    assert held.read() == 0 and held.encoded() == b"".join(bson.encode(d) for d in documents)
    first = held[0]
    first["n"] = -1
    assert held[0] is first and held[0]["n"] == -1 and held[:1][0] is first and held.read() == 1
    assert held.encoded() != held._data  # the edit is in the bytes as they are now
    assert held[2_999] is held[-1] and held.read() == 2
    assert next(iter(held)) is first and held.read() == 1_025  # a loop decodes a batch of 1,024 at a time
    for document in held:  # a loop keeps what it read, and edits through it stay
        document["x"] = 0
    assert all(document["x"] == 0 for document in held) and held.read() == 3_000
    assert held != EncodedDocuments(_documents(3_000)) and held == [held[i] for i in range(3_000)]
    assert EncodedDocuments() == [] and list(EncodedDocuments()) == [] and EncodedDocuments().encoded() == b""


def test_a_dataset_holds_what_it_is_given_as_bson_and_its_fingerprint_is_unchanged() -> None:
    documents = _documents(40)
    dataset = Dataset("demo", "tiny", 7, {"b": documents, "a": documents[:5]})
    assert all(isinstance(held, EncodedDocuments) for held in dataset.collections.values())
    assert dataset.counts() == {"b": 40, "a": 5}
    digest = hashlib.sha256()  # the fingerprint as documented: collections by name, each document's BSON in order
    for name, part in (("a", documents[:5]), ("b", documents)):
        digest.update(name.encode() + b"\x00")
        for document in part:
            digest.update(bson.encode(document))
    assert dataset.sha256() == digest.hexdigest()
    again = Dataset("demo", "tiny", 7, dict(dataset.collections))
    assert again.collections["b"] is dataset.collections["b"]  # held already: not encoded again


def test_the_workbenchs_own_reads_keep_nothing_but_see_a_learners_edits() -> None:
    """Dataset.documents (what shapes and counts read) decodes what was never read afresh and keeps nothing; a
    document the learner read and changed is read as changed. Copies and pickles carry the edits."""
    import copy
    import pickle

    documents = _documents(2_100)
    dataset = Dataset("demo", "tiny", 7, {"d": documents})
    held = dataset.collections["d"]
    assert isinstance(held, EncodedDocuments)
    assert list(dataset.documents("d")) == documents and held.read() == 0
    assert dataset.documents("d")[5] == documents[5] and dataset.documents("d")[-2:] == documents[-2:]
    assert held.read() == 0  # nothing kept by the workbench's reads
    held[7]["n"] = -7  # a learner's edit
    assert dataset.documents("d")[7]["n"] == -7 and [d["n"] for d in dataset.documents("d")][7] == -7
    assert held.read() == 1
    for again in (copy.deepcopy(held), copy.copy(held), pickle.loads(pickle.dumps(held))):
        assert isinstance(again, EncodedDocuments) and again[7]["n"] == -7 and list(again)[8] == documents[8]
    assert dataset.sha256() != Dataset("demo", "tiny", 7, {"d": documents}).sha256()  # the edit is in the fingerprint


@pytest.mark.parametrize("bad", [{"s": {1, 2}}, {1: "a non-string key"}, "not a document", {"n": 2**64}])
def test_a_document_bson_cannot_hold_is_refused_by_name_with_the_fix(bad: object) -> None:
    from workbook.errors import WorkbookError

    with pytest.raises(WorkbookError, match=r"document 1 of a dataset's collection cannot be stored as BSON") as raised:
        Dataset("demo", "tiny", 7, {"d": [{"_id": 0}, bad]})  # type: ignore[list-item]
    assert "Fix:" in str(raised.value) and "BSON values" in str(raised.value)


def test_a_datasets_bson_bytes_are_its_documents_bson_lengths() -> None:
    import bson

    from workbook.datasets import generate

    dataset = generate("followers", "tiny", 7)
    expected = sum(len(bson.encode(document)) for documents in dataset.collections.values() for document in documents)
    assert dataset.bson_bytes == expected > 0

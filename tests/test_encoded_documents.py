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


def test_each_read_is_a_new_document_and_the_dataset_stays_as_made() -> None:
    held = EncodedDocuments(_documents(3))
    first = held[0]
    first["n"] = -1
    assert held[0]["n"] == 0 and held[0] is not held[0]
    assert held != _documents(4) and held != EncodedDocuments(_documents(2)) and held == EncodedDocuments(_documents(3))
    assert EncodedDocuments() == [] and list(EncodedDocuments()) == []


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

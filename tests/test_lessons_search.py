"""workbook.lessons.search: the three case-insensitive lookups of notebook 07, on a hand-made collection."""

from __future__ import annotations

import pytest

from workbook.errors import ArgumentTypeError, WorkbookError
from workbook.lessons import search

NAMES = ["Ann Lee", "ann lee", "Bob Stone", "Cleo Park", "Dan Ray", "Eve Moss", "Finn Gray", "Gus Hale"]


@pytest.fixture
def people(db):  # type: ignore[no-untyped-def]
    db.people.insert_many(
        [{"_id": i, "name": name, "email": f"{name.replace(' ', '.')}{i}@Example.org"} for i, name in enumerate(NAMES)]
    )
    db.people.create_index([("email", 1)], name="email_1", unique=True)
    return db.people


def test_exact_regex_is_anchored_escaped_and_case_insensitive() -> None:
    assert search.exact_regex("a.b+c") == {"$regex": r"^a\.b\+c$", "$options": "i"}
    with pytest.raises(ArgumentTypeError):
        search.exact_regex("")


def test_regex_on_an_indexed_field_walks_every_key_but_fetches_only_matches(people) -> None:  # type: ignore[no-untyped-def]
    import workbook

    s = workbook.explain(people, {"email": search.exact_regex("ANN.LEE0@example.ORG")}).summary()
    assert s["nReturned"] == 1 and s["keysExamined"] == len(NAMES) and s["docsExamined"] == 1


def test_three_ways_find_the_same_documents_with_different_work(people) -> None:  # type: ignore[no-untyped-def]
    assert search.add_collation_index(people, "name") == "name_ci"
    added = search.add_normalised_field(people, "name")
    assert people.find_one({"_id": 0})["nameLower"] == "ann lee"
    table = search.compare_lookups(people, "name", "ANN LEE")
    assert list(table["found"]) == [2, 2, 2]
    assert table.loc["collation index (strength 2)", "index"] == "name_ci"
    assert table.loc["collation index (strength 2)", "keysExamined"] == 2
    assert table.loc["normalised lower-case field", "index"] == "nameLower"
    assert table.loc["normalised lower-case field", "docsExamined"] == 2
    assert table.loc["regex with the i flag", "docsExamined"] == len(NAMES)
    storage = search.storage_cost(people, "name", added)
    expected = sum(len(b"nameLower") + 1 + 1 + 4 + len(n.encode()) + 1 for n in NAMES)
    assert added == expected
    assert storage.loc["normalised lower-case field", "document bytes added"] == expected
    assert storage.loc["collation index (strength 2)", "extra index entries"] == len(NAMES)
    assert storage.loc["regex with the i flag", "extra index entries"] == 0


def test_only_the_same_collation_uses_the_index(people) -> None:  # type: ignore[no-untyped-def]
    search.add_collation_index(people, "name")
    table = search.collation_matters(people, "name", "ANN LEE")
    assert table.loc["the index's: en, strength 2", "index"] == "name_ci"
    assert table.loc["no collation (simple, binary)", "found"] == 0
    assert table.loc["another: en, strength 1", "index"] != "name_ci"
    assert table.loc["another: en, strength 1", "found"] == 2


def test_storage_cost_refuses_negative_bytes(people) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(WorkbookError):
        search.storage_cost(people, "name", -1)


def test_normalised_name() -> None:
    assert search.normalised_name("email") == "emailLower"

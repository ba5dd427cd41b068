"""The clinic's helpers plant each anti-pattern the schema doctor finds, and their fixes quiet it."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import timedelta

import pytest
from pymongo.database import Database

import workbook
from workbook import clinic
from workbook.schema_doctor import Thresholds


@pytest.fixture(scope="module")
def store() -> Iterator[workbook.LoadedShape]:
    loaded = workbook.load("store", "hybrid", scale="tiny", progress=False)
    yield loaded
    loaded.db.client.drop_database(loaded.db.name)


def test_over_indexing_is_found_and_quiet_once_the_prefixes_are_dropped(store: workbook.LoadedShape) -> None:
    added = clinic.over_index(store["products"])
    try:
        report = workbook.doctor(store, full_scan=True)
        wheres = sorted(f.where for f in report.of("unnecessary_indexes"))
        assert wheres == ["products", "products.brand", "products.category", "products.name"]
        assert clinic.redundant_index_names(report) == ["brand", "category", "name"]
        left = clinic.drop_indexes(store["products"], clinic.redundant_index_names(report))
        assert len(left) == 9 and not {"brand", "category", "name"} & set(left) and "category_price" in left
        assert workbook.doctor(store, full_scan=True).of("unnecessary_indexes") == []
    finally:
        for name in set(added) & set(store["products"].index_information()):
            store["products"].drop_index(name)


def test_daily_collections_are_found_and_quiet_once_merged(db: Database) -> None:
    names = clinic.daily_collections(db, 5, per_day=2)
    assert names[0] == "events_2020_01_01" and names[-1] == "events_2020_01_05"
    limits = Thresholds(collections=4)
    report = workbook.doctor(db, thresholds=limits, full_scan=True)
    assert sorted(f.where for f in report.of("many_collections")) == sorted([db.name, "events_<date>"])
    assert clinic.merge_daily_collections(db) == 5
    assert db.list_collection_names() == ["events"]
    days = sorted(db.events.distinct("day"))
    assert [d.strftime("%Y-%m-%d") for d in days] == [
        "2020-01-01",
        "2020-01-02",
        "2020-01-03",
        "2020-01-04",
        "2020-01-05",
    ]
    assert db.events.count_documents({}) == 10
    assert workbook.doctor(db, thresholds=limits, full_scan=True).findings == []
    assert "day_at" in db.events.index_information()


def test_merging_in_batches_keeps_every_event_with_its_day(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clinic, "MERGE_BATCH", 3)  # 7 days: batches of 3, 3 and 1
    names = clinic.daily_collections(db, 7, per_day=2)
    ids = {(name, doc["_id"]) for name in names for doc in db[name].find()}
    assert clinic.merge_daily_collections(db) == 7
    merged = list(db.events.find())
    assert {(doc["_id"]["collection"], doc["_id"]["id"]) for doc in merged} == ids  # every event once
    assert all(doc["_id"]["collection"] == "events_" + doc["day"].strftime("%Y_%m_%d") for doc in merged)
    assert clinic.merge_daily_collections(db) == 0 and db.events.count_documents({}) == 14


def test_notebook_11_says_how_many_collections_one_aggregation_reads() -> None:
    from pathlib import Path

    text = (Path(__file__).parent.parent / "notebooks" / "11_antipattern_clinic.ipynb").read_text()
    assert f"one aggregation reads {clinic.MERGE_BATCH} of them with `$unionWith`" in text


def test_the_regex_lookup_needs_both_the_collation_index_and_the_collation_query(
    store: workbook.LoadedShape,
) -> None:
    regex = clinic.email_lookup(store["customers"], regex=True)
    exact = clinic.email_lookup(store["customers"], regex=False)
    assert regex[0].call(store.db, 0)["_id"] == exact[0].call(store.db, 0)["_id"]  # same customer either way
    (finding,) = workbook.doctor(store, regex, full_scan=True).of("case_insensitive_regex")
    assert finding.severity.label == "warning"
    assert clinic.case_insensitive_email_index(store["customers"]) == "email_ci"
    assert [f.severity.label for f in workbook.doctor(store, regex, full_scan=True).of("case_insensitive_regex")] == [
        "info"
    ]
    assert workbook.doctor(store, exact, full_scan=True).of("case_insensitive_regex") == []


def test_a_fresh_database_is_the_learners_own_and_empty() -> None:
    first = clinic.fresh_database("clinic_fresh_test")
    first.leftover.insert_one({"_id": 1})
    again = clinic.fresh_database("clinic_fresh_test")
    assert again.name == first.name and again.name.startswith("workbench_")
    assert again.list_collection_names() == []


def test_the_clinic_writes_only_to_the_learners_databases() -> None:
    client = workbook.connect(quiet=True).client
    with pytest.raises(workbook.NamespaceError):
        clinic.daily_collections(client["someone_else"], 1)


def test_course_thresholds_are_the_defaults_except_at_tiny() -> None:
    assert clinic.course_thresholds("small") == Thresholds()
    assert clinic.course_thresholds("tiny").array_elements == 20


def test_a_unique_case_insensitive_index_is_built_in_one_pass_and_still_refuses_case_duplicates(
    db: Database,
) -> None:
    import time

    from pymongo.errors import DuplicateKeyError, OperationFailure

    db.people.insert_many([{"_id": i, "email": f"person{i}@example.org"} for i in range(3000)])
    started = time.perf_counter()
    db.people.create_index("email", name="email_ci", unique=True, collation=clinic.CASE_INSENSITIVE)
    assert time.perf_counter() - started < 20  # pairwise, 3,000 keys under a collation took minutes
    with pytest.raises(DuplicateKeyError):
        db.people.insert_one({"email": "PERSON7@Example.org"})

    db.pairs.insert_many([{"email": "Ana@x.org"}, {"email": "ana@X.ORG"}])
    with pytest.raises(OperationFailure) as refused:
        db.pairs.create_index("email", unique=True, collation=clinic.CASE_INSENSITIVE)
    assert refused.value.code == 11000 and "email_1" not in db.pairs.index_information()

    db.lists.insert_many([{"tags": ["A", "b"]}, {"tags": ["c"]}])  # an array key: the engine's own check decides
    db.lists.create_index("tags", unique=True, collation=clinic.CASE_INSENSITIVE)
    with pytest.raises(DuplicateKeyError):
        db.lists.insert_one({"tags": ["a"]})


def test_the_printed_merge_run_on_days_that_reuse_ids_keeps_every_event(db: Database) -> None:
    ran = clinic.run_printed_merge(db, days=3)
    assert ran["before"] == ran["after"] == 6
    assert len(set(ran["ids"])) == 6 and {i for _, i in ran["ids"]} == {1, 2}
    assert [d.strftime("%Y-%m-%d") for d in ran["days"]] == ["2020-01-01", "2020-01-02", "2020-01-03"]
    assert db.list_collection_names().count("events") == 1


# --- every printed fix that moves documents, run on a copy: nothing lost ---------------------------------


@pytest.mark.parametrize(
    ("dataset", "shape", "anti_pattern", "thresholds"),
    [
        ("store", "embedded", "unbounded_arrays", Thresholds(array_elements=20)),
        ("store", "embedded", "bloated_documents", Thresholds(array_elements=20, bloat_min_bytes=1024)),
        ("store", "referenced", "separated_data", Thresholds()),
        ("parts", "referenced", "lookup_on_hot_path", Thresholds()),
    ],
)
def test_each_printed_fix_run_on_a_copy_keeps_every_document_element_and_field(
    dataset: str, shape: str, anti_pattern: str, thresholds: Thresholds
) -> None:
    loaded = workbook.load(dataset, shape, scale="tiny", progress=False)
    workload = clinic.category_listing(loaded["products"]) if anti_pattern == "bloated_documents" else None
    report = workbook.doctor(loaded, workload, thresholds=thresholds, say=lambda _: None)
    findings = report.of(anti_pattern)
    assert findings, f"the doctor found no {anti_pattern} on {dataset}/{shape}"
    checked = clinic.try_fix_on_copy(loaded.db, findings[0], parents=12)
    assert checked.nothing_lost, checked.lost
    kept = {name: pair for name, pair in checked.counts.items() if "_details" not in name}
    assert all(before == after > 0 for before, after in kept.values()), checked.counts  # nothing vacuous either
    assert "nothing" in repr(checked) and "→" in repr(checked)
    copy = workbook.connect(database=clinic.FIX_CHECK_DATABASE, quiet=True)
    assert copy.name.endswith("_clinic_fix_check") and copy.name != loaded.db.name
    first = next(iter(checked.counts))
    assert loaded[first].count_documents({}) > 12, "the source was only read, and the copy is a part of it"


def test_a_printed_array_fix_that_capped_first_would_be_caught(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    from workbook.schema_doctor import arrays

    db.users.insert_many(
        [{"_id": "star", "followers": [{"u": i} for i in range(40)]}] + [{"_id": f"u{i}"} for i in range(3)]
    )
    (finding,) = workbook.doctor(db, thresholds=Thresholds(array_elements=20), say=lambda _: None).of(
        "unbounded_arrays"
    )
    assert clinic.try_fix_on_copy(db, finding).nothing_lost
    # the old printed fix: cap in place without copying the elements out first
    monkeypatch.setattr(
        arrays, "move_elements_pipeline", lambda name, child: [{"$match": {"_id": None}}, {"$merge": {"into": child}}]
    )
    old = dataclasses.replace(
        finding, command=finding.command + '\n[{$match: {_id: null}}, {$merge: {into: "users_followers"}}]'
    )
    checked = clinic.try_fix_on_copy(db, old)
    assert not checked.nothing_lost and checked.counts["followers elements, moved to users_followers"] == (40, 0)


def plant_huge_and_binary(db: Database) -> dict[str, object]:
    """Five files with a 40 kB binary payload and a 300 kB page: the two bloated findings no workload needs."""
    from bson import Binary

    db.files.insert_many([{"_id": i, "name": f"scan{i}.pdf", "data": Binary(bytes([i]) * 40_000)} for i in range(5)])
    db.pages.insert_many(
        [{"_id": 1, "title": "long", "body": "z" * 300_000}, {"_id": 2, "title": "short", "body": "x"}]
    )
    report = workbook.doctor(db, thresholds=Thresholds(large_document_bytes=200_000), say=lambda _: None)
    return {f.where: f for f in report.of("bloated_documents")}


def test_the_printed_huge_document_and_binary_payload_fixes_run_on_a_copy_lose_nothing(db: Database) -> None:
    found = plant_huge_and_binary(db)
    assert set(found) == {"files.data", "pages"}, found

    split = clinic.try_fix_on_copy(db, found["pages"], parents=2)
    assert split.nothing_lost, split.lost
    assert split.counts == {"pages": (2, 2), "pages_details": (0, 2)}  # the 300 kB body moved, title kept

    moved = clinic.try_fix_on_copy(db, found["files.data"], parents=5)
    assert moved.nothing_lost, moved.lost
    assert moved.counts == {"files": (5, 5), "data payloads, read back from GridFS": (5, 5)}
    copy = workbook.connect(database=clinic.FIX_CHECK_DATABASE, quiet=True)
    assert copy.files.count_documents({"data": {"$exists": True}}) == 0 and copy.files.count_documents({}) == 5
    assert db.files.count_documents({"data": {"$type": "binData"}}) == 5, "the source was only read"


def test_a_printed_binary_fix_that_unset_the_payload_without_keeping_its_file_would_be_caught(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbook.schema_doctor import documents

    monkeypatch.setattr(documents, "binary_move_update", lambda field, file_id: {"$unset": {field: ""}})
    finding = plant_huge_and_binary(db)["files.data"]
    checked = clinic.try_fix_on_copy(db, finding, parents=5)
    assert not checked.nothing_lost and checked.counts["data payloads, read back from GridFS"] == (5, 0)


def test_a_fix_that_moves_no_documents_is_refused_with_the_choices(db: Database) -> None:
    from workbook.errors import UnknownChoiceError

    db.c.insert_many([{"_id": i} for i in range(3)])

    class Finding:
        anti_pattern = "unnecessary_indexes"

    with pytest.raises(UnknownChoiceError, match="separated_data"):
        clinic.try_fix_on_copy(db, Finding())


def test_the_printed_index_fixes_run_on_a_copy_change_no_document(db: Database) -> None:
    """Unnecessary indexes and the case-insensitive regex: their printed fixes touch indexes only."""
    db.products.insert_many([{"_id": i, "brand": f"b{i % 3}", "price": i, "email": f"U{i}@X.ORG"} for i in range(30)])
    db.products.create_index("brand", name="brand")
    db.products.create_index([("brand", 1), ("price", 1)], name="brand_price")
    before = list(db.products.find().sort("_id", 1))
    (prefix,) = [
        f
        for f in workbook.doctor(db, say=lambda _: None, thresholds=Thresholds(index_stats_min_age=timedelta(0))).of(
            "unnecessary_indexes"
        )
        if f.evidence.get("covered_by")
    ]
    assert 'hideIndex("brand")' in prefix.command and 'dropIndex("brand")' in prefix.command
    db.products.database.command("collMod", "products", index={"name": "brand", "hidden": True})  # as printed
    db.products.drop_index("brand")
    db.products.create_index("email", collation=clinic.CASE_INSENSITIVE)  # the regex finding's printed index
    assert list(db.products.find().sort("_id", 1)) == before, "no document changed"
    assert db.products.count_documents({"email": "u3@x.org"}, collation=clinic.CASE_INSENSITIVE) == 1

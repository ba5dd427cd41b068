"""The schema doctor: each check fires on a crafted database and stays quiet once it is fixed;
nothing it does writes; the report renders as a table, a frame and JSON."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from bson import Binary
from pymongo import MongoClient, monitoring
from pymongo.database import Database

import workbook
from workbook.errors import UnknownChoiceError, WorkbookError
from workbook.monitor import COMMANDS
from workbook.schema_doctor import LESSONS, HotOperation, Report, Severity, Thresholds
from workbook.schema_doctor.access import embed_pipeline, extended_reference_pipeline
from workbook.schema_doctor.collections import family_merge_pipeline, name_pattern, to_mongosh
from workbook.schema_doctor.documents import split_pipeline, split_unset
from workbook.schema_doctor.lessons import (
    BLOATED_DOCUMENTS,
    CASE_INSENSITIVE_REGEX,
    LOOKUP_ON_HOT_PATH,
    MANY_COLLECTIONS,
    SEPARATED_DATA,
    UNBOUNDED_ARRAYS,
    UNNECESSARY_INDEXES,
)
from workbook.schema_doctor.readonly import ReadOnlyViolation


def examine(db: Any, workload: Any = None, **kwargs: Any) -> Report:
    """Run the doctor without printing announcements (they are collected in ``said``)."""
    said: list[str] = kwargs.pop("said", [])
    return workbook.doctor(db, workload, say=said.append, **kwargs)


def kinds(report: Report) -> set[str]:
    """The anti-patterns a report found."""
    return {f.anti_pattern for f in report.findings}


# 1. Unbounded arrays


def test_long_array_is_found_with_growth_and_quiet_once_capped(db: Database) -> None:
    start = datetime(2025, 1, 1)
    followers = [{"userId": f"u{i}", "createdAt": start + timedelta(days=i)} for i in range(300)]
    db.users.insert_many(
        [{"_id": "star", "followers": followers}] + [{"_id": f"u{i}", "followers": []} for i in range(20)]
    )
    report = examine(db)
    (finding,) = report.of(UNBOUNDED_ARRAYS)
    assert finding.where == "users.followers" and finding.severity == Severity.WARNING
    assert finding.evidence["max_elements"] == 300 and finding.evidence["longest_document_id"] == "star"
    assert finding.evidence["growth_per_30_days"] == pytest.approx(300 / 299 * 30, rel=0.01)
    assert "$slice" in finding.command and finding.lesson == LESSONS[UNBOUNDED_ARRAYS]

    # The fix: followers in their own collection, a capped subset on the user.
    db.follows.insert_many([{"followedId": "star", **f} for f in followers])
    db.users.update_one({"_id": "star"}, {"$push": {"followers": {"$each": [], "$slice": -5}}})
    assert examine(db).of(UNBOUNDED_ARRAYS) == []


def test_an_array_inside_a_subdocument_is_found(db: Database) -> None:
    history = [{"at": datetime(2025, 1, 1) + timedelta(hours=i), "v": i} for i in range(400)]
    db.sensors.insert_many([{"_id": "s1", "stats": {"history": history, "unit": "C"}}, {"_id": "s2", "stats": 7}])
    (finding,) = examine(db).of(UNBOUNDED_ARRAYS)
    assert finding.where == "sensors.stats.history" and finding.evidence["max_elements"] == 400
    assert finding.evidence["date_field"] == "stats.history.at" and finding.evidence["growth_per_30_days"] > 400


def test_an_outlier_far_above_the_average_is_reported_below_the_length_threshold(db: Database) -> None:
    db.posts.insert_many([{"_id": i, "tags": ["a"]} for i in range(30)] + [{"_id": "viral", "tags": ["a"] * 80}])
    (finding,) = examine(db).of(UNBOUNDED_ARRAYS)
    assert finding.severity == Severity.WARNING and "outlier" in finding.summary
    db.posts.update_one({"_id": "viral"}, {"$set": {"tags": ["a"]}})
    assert examine(db).of(UNBOUNDED_ARRAYS) == []


# 2. Bloated documents


def test_documents_far_bigger_than_the_hot_read_are_found_and_quiet_once_split(db: Database) -> None:
    db.products.insert_many(
        [{"_id": i, "name": f"p{i}", "price": i, "description": "x" * 20_000, "specs": "y" * 5_000} for i in range(20)]
    )

    def listing(d: Any, i: int) -> Any:
        return list(d.products.find({}, {"name": 1, "price": 1}).limit(10))

    hot = [HotOperation("listing", 600, listing)]
    (finding,) = examine(db, hot).of(BLOATED_DOCUMENTS)
    assert finding.evidence["ratio"] >= 10 and finding.evidence["operation"] == "listing"
    assert finding.evidence["cold_fields"][:2] == ["description", "specs"]
    assert "$merge" in finding.command and "products_details" in finding.command

    # run the printed fix, as printed, and count: every product and every moved field is kept
    fields = finding.evidence["cold_fields"]
    assert to_mongosh(split_pipeline("products", fields)) in finding.command
    assert to_mongosh(split_unset(fields)) in finding.command
    originals = {d["_id"]: d for d in db.products.find()}
    db.products.aggregate(split_pipeline("products", fields))
    db.products.update_many({}, split_unset(fields))
    details = {d["_id"]: d for d in db.products_details.find()}
    assert len(details) == db.products.count_documents({}) == len(originals) == 20
    for _id, original in originals.items():
        parent = db.products.find_one({"_id": _id})
        assert {**parent, **details[_id]} == original  # split in two, nothing lost, nothing added
    assert examine(db, hot).of(BLOATED_DOCUMENTS) == []


def test_huge_documents_and_binary_payloads_are_found(db: Database) -> None:
    db.files.insert_many([{"_id": i, "name": "scan.pdf", "data": Binary(b"\0" * 40_000)} for i in range(5)])
    db.pages.insert_one({"_id": 1, "body": "z" * 300_000})
    report = examine(db, thresholds=Thresholds(large_document_bytes=200_000))
    found = {f.where: f for f in report.of(BLOATED_DOCUMENTS)}
    assert found["files.data"].severity == Severity.WARNING and "GridFS" in found["files.data"].fix
    assert found["pages"].severity == Severity.CRITICAL and found["pages"].evidence["biggest_bytes"] > 300_000

    db.files.update_many({}, {"$set": {"dataFileId": "gridfs-id"}, "$unset": {"data": ""}})
    db.pages.update_one({"_id": 1}, {"$set": {"body": "short"}})
    assert examine(db, thresholds=Thresholds(large_document_bytes=200_000)).of(BLOATED_DOCUMENTS) == []


# 3. A massive number of collections


def test_many_collections_and_dated_names_are_found_and_quiet_once_merged(db: Database) -> None:
    for day in ("2024_01_01", "2024_01_02", "2024_01_03"):
        db[f"logs_{day}"].insert_one({"msg": "hello"})
    db.orders.insert_one({"_id": 1})
    report = examine(db, thresholds=Thresholds(collections=4))
    by_where = {f.where: f for f in report.of(MANY_COLLECTIONS)}
    assert by_where[db.name].severity == Severity.CRITICAL and by_where[db.name].evidence["collections"] == 4
    assert by_where["logs_<date>"].evidence["collections"] == 3 and '"logs"' in by_where["logs_<date>"].command

    for day in ("2024_01_01", "2024_01_02", "2024_01_03"):
        db.logs.insert_one({"day": day, "msg": "hello"})
        db.drop_collection(f"logs_{day}")
    assert examine(db, thresholds=Thresholds(collections=4)).of(MANY_COLLECTIONS) == []


def test_the_printed_merge_of_daily_collections_that_reuse_ids_loses_no_document(db: Database) -> None:
    days = ("2024_01_01", "2024_01_02", "2024_01_03")
    for day in days:
        db[f"logs_{day}"].insert_many([{"_id": 1, "msg": f"a {day}"}, {"_id": 2, "msg": f"b {day}"}])
    before = sum(db[f"logs_{day}"].count_documents({}) for day in days)
    (finding,) = [f for f in examine(db, thresholds=Thresholds(collections=10)).of(MANY_COLLECTIONS)]
    example = finding.evidence["examples"][0]
    # the printed command is this pipeline, written for mongosh
    assert to_mongosh(family_merge_pipeline(example, "logs")) in finding.command
    for name in finding.evidence["examples"]:  # "for each of the 3": run it on every member
        db[name].aggregate(family_merge_pipeline(name, "logs"))
    assert before == 6 and db.logs.count_documents({}) == 6  # the old {$merge: {into}} kept 2 of 6
    assert sorted(d["msg"] for d in db.logs.find()) == sorted(f"{m} {day}" for day in days for m in "ab")
    assert {d["day"] for d in db.logs.find()} == {datetime(2024, 1, n) for n in (1, 2, 3)}  # dates, not names
    for name in finding.evidence["examples"]:  # running it again changes nothing
        db[name].aggregate(family_merge_pipeline(name, "logs"))
    assert db.logs.count_documents({}) == 6


def test_of_a_big_family_of_alike_named_collections_a_few_are_examined(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbook.schema_doctor import thresholds

    monkeypatch.setattr(thresholds, "FAMILY_EXAMINED", 5)
    days = [f"logs_2024_01_{d:02d}" for d in range(1, 31)]
    for day in days:
        db[day].insert_one({"msg": "hello", "tags": ["t"] * (300 if day == days[-1] else 1)})
    db.orders.insert_one({"_id": 1, "items": ["i"] * 260})
    report = examine(db, thresholds=Thresholds(collections=20))
    assert report.of(MANY_COLLECTIONS)[0].evidence["collections"] == 31  # the count is of every collection
    assert "logs_<date>: indexes, arrays and documents checked in 5 of 30 collections named alike" in report.notes[0]
    # first and last of the family are among the five, and a collection of no family is always read
    assert sorted(f.where for f in report.of(UNBOUNDED_ARRAYS)) == ["logs_2024_01_30.tags", "orders.items"]
    read = [n for n in report.notes if "documents read" in n]
    assert len(read) == 6 and any(n.startswith("logs_2024_01_01:") for n in read)

    whole = examine(db, thresholds=Thresholds(collections=20), full_scan=True)
    assert len([n for n in whole.notes if "documents read" in n]) == 31
    assert not any("named alike" in n for n in whole.notes)


def test_name_patterns() -> None:
    assert name_pattern("events_20240131") == "events_<date>"
    assert name_pattern("tenant_4f3c2a1b-0d9e-4c7b-8a6f-1e2d3c4b5a69") == "tenant_<id>"
    assert name_pattern("device_1042") == "device_<id>"
    assert name_pattern("products") is None and name_pattern("v2_items") is None


# 4. Unnecessary indexes


def test_prefix_redundant_and_too_many_indexes_are_found_and_quiet_once_dropped(db: Database) -> None:
    db.orders.insert_many(
        [{"customerId": i % 5, "createdAt": datetime(2025, 1, 1 + i % 20), "s": i} for i in range(40)]
    )
    db.orders.create_index("customerId", name="customer")
    db.orders.create_index([("customerId", 1), ("createdAt", -1)], name="customer_newest")
    for extra in ("s", "createdAt"):
        db.orders.create_index(extra)
    report = examine(db, thresholds=Thresholds(indexes_per_collection=4))
    found = {f.where: f for f in report.of(UNNECESSARY_INDEXES)}
    assert found["orders.customer"].evidence["covered_by"] == "customer_newest"
    assert 'hideIndex("customer")' in found["orders.customer"].command
    assert found["orders.customer"].summary == "customer {customerId: 1} is a prefix of customer_newest " + (
        "{customerId: 1, createdAt: -1}"
    )
    assert found["orders"].evidence["indexes"] == 5

    db.orders.drop_index("customer")
    assert examine(db, thresholds=Thresholds(indexes_per_collection=4)).of(UNNECESSARY_INDEXES) == []


def test_unique_ttl_and_id_indexes_are_never_suggested_without_saying_what_they_enforce(db: Database) -> None:
    db.users.insert_many([{"email": f"u{i}@x.org", "seen": datetime(2025, 1, 1), "n": i} for i in range(10)])
    db.users.create_index("email", name="email_unique", unique=True)
    db.users.create_index([("email", 1), ("n", 1)], name="email_n")
    db.users.create_index("seen", name="expire", expireAfterSeconds=3600)
    db.users.create_index("n", name="plain")
    # Offline, $indexStats never counts uses: with no minimum age every index but _id_ reads as unused.
    report = examine(db, thresholds=Thresholds(index_stats_min_age=timedelta(0)))
    found = report.of(UNNECESSARY_INDEXES)
    assert all("_id_" not in f.where for f in found)
    by_where: dict[str, list[Any]] = {}
    for f in found:
        by_where.setdefault(f.where, []).append(f)
    for unique in by_where["users.email_unique"]:
        assert unique.severity == Severity.INFO and "enforces uniqueness of email" in unique.fix
    (ttl,) = by_where["users.expire"]
    assert ttl.severity == Severity.INFO and "TTL" in ttl.fix
    (plain,) = by_where["users.plain"]
    assert plain.severity == Severity.WARNING and plain.evidence["ops"] == 0
    assert 'hideIndex("plain")' in plain.command

    db.users.drop_index("plain")
    db.users.create_index("n", name="plain", hidden=True)  # hidden earlier, being watched: now only the drop is left
    (hidden,) = [
        f
        for f in examine(db, thresholds=Thresholds(index_stats_min_age=timedelta(0))).of(UNNECESSARY_INDEXES)
        if f.where == "users.plain"
    ]
    assert hidden.evidence["hidden"] and hidden.command == 'db.users.dropIndex("plain")'


def test_young_index_counters_are_not_judged(db: Database) -> None:
    db.items.insert_one({"a": 1})
    db.items.create_index("a")
    report = examine(db)
    assert report.of(UNNECESSARY_INDEXES) == []
    assert any("not judged unused yet" in note and "a_1" in note for note in report.notes)


# 5. Separating data that is read together


def test_same_key_from_several_collections_on_every_call_is_found_and_quiet_once_embedded(db: Database) -> None:
    db.users.insert_many([{"_id": f"u{i}", "name": f"user {i}"} for i in range(5)])
    db.profiles.insert_many([{"userId": f"u{i}", "bio": "hi"} for i in range(5)])

    def split(d: Any, i: int) -> Any:
        extra = d.settings.find_one({"userId": f"u{i}"}) if i == 1 else None  # only sometimes: not reported
        return d.users.find_one({"_id": f"u{i}"}), d.profiles.find_one({"userId": f"u{i}"}), extra

    (finding,) = examine(db, [HotOperation("profile_page", 800, split)]).of(SEPARATED_DATA)
    assert finding.evidence["collections"] == ["profiles", "users"]
    assert finding.evidence["round_trips_per_call"] == pytest.approx(7 / 3, abs=0.01)  # 2, 3 and 2 round trips
    assert finding.severity == Severity.WARNING
    assert 'into: "users"' in finding.command

    # run the printed migration, as printed, on a copy and count: every user kept, every profile embedded
    assert to_mongosh(embed_pipeline("profiles", "userId", "users")) in finding.command
    for name in ("users", "profiles"):
        db[f"copy_{name}"].insert_many(list(db[name].find()))
    db.copy_profiles.insert_one({"userId": "nobody", "bio": "orphan"})
    users_before = {d["_id"]: d for d in db.copy_users.find()}
    db.copy_profiles.aggregate(embed_pipeline("copy_profiles", "userId", "copy_users"))
    after = {d["_id"]: d for d in db.copy_users.find()}
    assert after.keys() == users_before.keys() and db.copy_profiles.count_documents({}) == 6  # nothing deleted
    assert sum(len(d["copy_profiles"]) for d in after.values()) == 5  # the orphan has no parent to join
    assert all({k: v for k, v in d.items() if k != "copy_profiles"} == users_before[i] for i, d in after.items())

    def embedded(d: Any, i: int) -> Any:
        return d.users.find_one({"_id": f"u{i}"})

    assert examine(db, [HotOperation("profile_page", 800, embedded)]).of(SEPARATED_DATA) == []


def test_a_second_read_on_only_some_calls_is_not_reported(db: Database) -> None:
    db.users.insert_many([{"_id": f"u{i}", "outlier": i == 1} for i in range(5)])
    db.follows.insert_many([{"followedId": "u1"}])

    def page(d: Any, i: int) -> Any:
        user = d.users.find_one({"_id": f"u{i}"})
        return d.follows.find_one({"followedId": user["_id"]}) if user["outlier"] else user

    assert examine(db, [HotOperation("page", 300, page)]).of(SEPARATED_DATA) == []


# 6. Case-insensitive regex without a collation index


def test_case_insensitive_regex_is_found_and_quiet_once_served_by_a_collation_index(db: Database) -> None:
    db.users.insert_many([{"email": f"User{i}@Example.com"} for i in range(20)])

    def login_regex(d: Any, i: int) -> Any:
        return d.users.find_one({"email": re.compile(r"^user3@example\.com$", re.IGNORECASE)})

    (finding,) = examine(db, [HotOperation("login", 50, login_regex)]).of(CASE_INSENSITIVE_REGEX)
    assert finding.where == "users.email" and finding.severity == Severity.WARNING
    assert "strength: 2" in finding.command and finding.evidence["collation_index"] is None

    db.users.create_index("email", name="email_ci", collation={"locale": "en", "strength": 2})
    (still,) = examine(db, [HotOperation("login", 50, login_regex)]).of(CASE_INSENSITIVE_REGEX)
    assert still.severity == Severity.INFO and "cannot serve $regex" in still.fix

    def login_collation(d: Any, i: int) -> Any:
        return d.users.find_one({"email": "user3@example.com"}, collation={"locale": "en", "strength": 2})

    assert examine(db, [HotOperation("login", 50, login_collation)]).of(CASE_INSENSITIVE_REGEX) == []


def test_regex_written_as_an_operator_is_seen_too(db: Database) -> None:
    db.users.insert_one({"name": "Ana"})

    def search(d: Any, i: int) -> Any:
        return list(d.users.aggregate([{"$match": {"name": {"$regex": "^an", "$options": "i"}}}]))

    assert [f.where for f in examine(db, [HotOperation("search", 5, search)]).of(CASE_INSENSITIVE_REGEX)] == [
        "users.name"
    ]


def test_the_profiler_is_read_when_it_is_on(db: Database) -> None:
    db.users.insert_many([{"_id": i, "email": f"U{i}@x.org"} for i in range(5)])
    db.command("profile", 2)  # test setup, as a DBA would; the doctor itself never changes it
    try:
        for i in range(3):
            db.users.find_one({"email": re.compile(f"^u{i}@", re.IGNORECASE)})
            list(
                db.users.aggregate(
                    [{"$lookup": {"from": "orders", "localField": "_id", "foreignField": "userId", "as": "o"}}]
                )
            )
        report = examine(db)
    finally:
        db.command("profile", 0)
    (regex,) = report.of(CASE_INSENSITIVE_REGEX)
    assert regex.where == "users.email" and regex.evidence["operation"].startswith("profiler: find users")
    assert [f.evidence["foreign_field"] for f in report.of(LOOKUP_ON_HOT_PATH)] == ["userId"]
    assert any(note.startswith("system.profile: the newest") for note in report.notes)


# 7. $lookup on hot paths


def test_lookups_are_ranked_by_frequency_and_an_unindexed_foreign_field_is_critical(db: Database) -> None:
    db.orders.insert_many([{"_id": i, "customerId": i % 3} for i in range(6)])
    db.items.insert_many([{"orderId": i % 6, "sku": f"s{i}"} for i in range(12)])
    db.customers.insert_many([{"_id": i, "name": f"c{i}"} for i in range(3)])

    def order_page(d: Any, i: int) -> Any:
        lookup = {"from": "items", "localField": "_id", "foreignField": "orderId", "as": "items"}
        return list(d.orders.aggregate([{"$match": {"_id": i}}, {"$lookup": lookup}]))

    def admin_report(d: Any, i: int) -> Any:
        lookup = {"from": "customers", "localField": "customerId", "foreignField": "_id", "as": "customer"}
        return list(d.orders.aggregate([{"$lookup": lookup}]))

    def nightly(d: Any, i: int) -> Any:
        raise AssertionError("a rare operation must not be run")

    workload = [
        HotOperation("admin_report", 2, admin_report),
        HotOperation("order_page", 500, order_page),
        HotOperation("nightly", 1 / 86400, nightly),
    ]
    report = examine(db, workload, thresholds=Thresholds(hot_per_second=1))
    ranked = sorted(report.of(LOOKUP_ON_HOT_PATH), key=lambda f: f.evidence["rank_by_frequency"])
    assert [f.evidence["operation"] for f in ranked] == ["order_page", "admin_report"]
    assert ranked[0].severity == Severity.CRITICAL and not ranked[0].evidence["foreign_field_indexed"]
    assert "createIndex({orderId: 1})" in ranked[0].command
    assert ranked[1].severity == Severity.WARNING and ranked[1].evidence["foreign_field_indexed"]  # on _id
    assert any("nightly" in note and "not run" in note for note in report.notes)

    # run the printed extended reference, as printed, on a copy and count: every order kept, each with its customer
    assert to_mongosh(extended_reference_pipeline("orders", "customerId", "customers", "_id")) in ranked[1].command
    db.copy_orders.insert_many(list(db.orders.find()))
    before = {d["_id"]: d for d in db.copy_orders.find()}
    db.copy_orders.aggregate(extended_reference_pipeline("copy_orders", "customerId", "customers", "_id"))
    after = {d["_id"]: d for d in db.copy_orders.find()}
    assert after.keys() == before.keys() and db.customers.count_documents({}) == 3
    for i, order in after.items():
        assert {k: v for k, v in order.items() if k != "copied"} == before[i]
        assert order["copied"] == [{"_id": i % 3, "name": f"c{i % 3}"}]

    db.items.create_index("orderId")
    order = [f for f in examine(db, workload).of(LOOKUP_ON_HOT_PATH) if f.evidence["operation"] == "order_page"]
    assert order[0].severity == Severity.WARNING

    def order_page_embedded(d: Any, i: int) -> Any:
        return d.orders.find_one({"_id": i})

    assert examine(db, [HotOperation("order_page", 500, order_page_embedded)]).of(LOOKUP_ON_HOT_PATH) == []


# Read-only, bounded, announced


class Recorder(monitoring.CommandListener):
    """Every command a client sends, with its body."""

    def __init__(self) -> None:
        self.commands: list[tuple[str, dict[str, Any]]] = []

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        self.commands.append((event.command_name, dict(event.command)))

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


WRITE_COMMANDS = {
    "insert",
    "update",
    "delete",
    "findAndModify",
    "create",
    "drop",
    "dropDatabase",
    "createIndexes",
    "dropIndexes",
    "collMod",
    "renameCollection",
    "profile",
    "bulkWrite",
}


def writes(recorder: Recorder) -> list[str]:
    """Commands that write, including aggregations ending in $out or $merge."""
    sent = [name for name, _ in recorder.commands if name in WRITE_COMMANDS]
    for name, body in recorder.commands:
        if name == "aggregate" and any("$out" in stage or "$merge" in stage for stage in body.get("pipeline", [])):
            sent.append("aggregate with $out/$merge")
    return sent


@pytest.fixture
def recorded() -> Any:
    """A client on the offline server that records every command (and carries the workbench listener)."""
    from workbook.offline import offline_server

    recorder = Recorder()
    client: MongoClient = MongoClient(offline_server().uri, event_listeners=[COMMANDS, recorder])
    yield client, recorder
    client.close()


def test_a_run_with_a_workload_sends_no_write_command(recorded: Any) -> None:
    client, recorder = recorded
    own = workbook.connect(database="doctor_readonly", quiet=True)
    workbook.load("store", "referenced", own, scale="tiny", progress=False)
    db = client[own.name]
    recorder.commands.clear()
    report = examine(db, "store")
    names = {name for name, _ in recorder.commands}
    assert {"aggregate", "find", "listCollections", "listIndexes"} <= names  # it did read, through this client
    assert writes(recorder) == []
    assert report.of(SEPARATED_DATA)  # and the workload was observed
    own.client.drop_database(own.name)


def test_an_operation_that_tries_to_write_is_stopped_before_sending(recorded: Any, db: Database) -> None:
    client, recorder = recorded
    db.users.insert_one({"_id": 1})
    target = client[db.name]

    def sneaky(d: Any, i: int) -> Any:
        return d.users.insert_one({"_id": 2})

    recorder.commands.clear()
    report = examine(target, [HotOperation("declared_write", 5, sneaky, kind="write")])
    assert any("declared_write: a write, not run" in note for note in report.notes)
    with pytest.raises(ReadOnlyViolation, match="read-only"):
        examine(target, [HotOperation("sneaky", 5, sneaky)])

    def merging(d: Any, i: int) -> Any:
        return d.users.aggregate([{"$match": {}}, {"$merge": {"into": "copy"}}])

    with pytest.raises(ReadOnlyViolation, match=r"\$merge"):
        examine(target, [HotOperation("merging", 5, merging)])

    def profiling(d: Any, i: int) -> Any:
        return d.command("profile", 2)

    with pytest.raises(ReadOnlyViolation, match="'profile' command"):
        examine(target, [HotOperation("profiling", 5, profiling)])
    assert writes(recorder) == [] and db.users.count_documents({}) == 1
    assert db.list_collection_names() == ["users"]


def test_big_collections_are_sampled_and_whole_reads_are_announced_first(
    recorded: Any, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbook.schema_doctor import memory

    monkeypatch.setattr(memory, "local_storage", lambda *args: None)  # read as from a server, through the wire
    client, recorder = recorded
    db.events.insert_many([{"n": i} for i in range(50)])
    recorder.commands.clear()
    said: list[str] = []
    examine(client[db.name], sample_size=10, said=said)
    pipelines = [
        body["pipeline"] for name, body in recorder.commands if name == "aggregate" and body["aggregate"] == "events"
    ]
    field_reads = [p for p in pipelines if any("$project" in s and "fields" in s["$project"] for s in p)]
    assert field_reads and all(p[0] == {"$sample": {"size": 10}} for p in field_reads)
    assert said == []

    said.clear()
    report = examine(client[db.name], sample_size=10, full_scan=True, said=said)
    assert said == [f"schema doctor: reading all 50 documents of {db.name}.events"]
    assert "events: all 50 documents read" in report.notes


def test_the_time_limit_stops_the_run_and_says_what_did_not_run(db: Database) -> None:
    db.items.insert_many([{"n": i} for i in range(10)])
    report = examine(db, time_limit=1e-6)
    assert not report.complete and "stopped at the time limit" in report.summary()
    assert any("not run" in note and "$lookup" in note for note in report.notes)


def test_findings_made_before_the_time_limit_are_kept(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    from workbook.schema_doctor import examine as examine_module
    from workbook.schema_doctor.readonly import OutOfTime

    def spent(*args: Any) -> Any:
        raise OutOfTime

    db.posts.insert_many([{"_id": i, "tags": ["t"] * 300} for i in range(2)])
    monkeypatch.setattr(examine_module, "check_documents", spent)
    report = examine(db)
    assert not report.complete and [f.anti_pattern for f in report.findings] == [UNBOUNDED_ARRAYS]
    assert any(note.endswith("documents, read together, case-insensitive regex, $lookup") for note in report.notes)


def test_a_refused_read_loses_one_check_not_the_run(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    from pymongo.errors import OperationFailure

    from workbook.schema_doctor import examine as examine_module

    def refused(*args: Any) -> Any:
        raise OperationFailure("not authorized on db to execute command { aggregate: $indexStats }", code=13)

    db.posts.insert_many([{"_id": i, "tags": ["t"] * 300} for i in range(2)])
    monkeypatch.setattr(examine_module, "check_indexes", refused)
    report = examine(db)
    assert [f.anti_pattern for f in report.findings] == [UNBOUNDED_ARRAYS] and not report.complete
    assert any(note.startswith("indexes: the server refused a read (13: not authorized") for note in report.notes)


# The course's shapes


@pytest.mark.parametrize("dataset, field", [("store", "reviews"), ("followers", "followers")])
def test_course_embedded_shape_has_the_unbounded_array_and_hybrid_has_no_finding(
    db: Database, dataset: str, field: str
) -> None:
    # At tiny scale the longest arrays are tens of elements, so the threshold is scaled down with the data;
    # at small scale the defaults find them (reported numbers: README, "Schema doctor").
    limits = Thresholds(array_elements=20)
    workbook.load(dataset, "embedded", db, scale="tiny", progress=False)
    embedded = examine(db, dataset, thresholds=limits)  # the shape comes from the database's load record
    assert [f.where for f in embedded.of(UNBOUNDED_ARRAYS)] == [
        f"{'products' if dataset == 'store' else 'users'}.{field}"
    ]
    loaded = workbook.load(dataset, "hybrid", db, scale="tiny", progress=False)
    hybrid = examine(loaded, thresholds=limits)  # what load() returned: dataset, shape and database in one
    assert examine(db, thresholds=limits).findings == []  # a plain Database: the load record names the workload
    assert hybrid.findings == []
    assert any("call(s) observed" in note for note in hybrid.notes)


def test_parts_referenced_lookup_on_the_hot_path_is_found(db: Database) -> None:
    workbook.load("parts", "referenced", db, scale="tiny", progress=False)
    found = examine(db, "parts", shape="referenced").of(LOOKUP_ON_HOT_PATH)
    assert found and found[0].evidence["operation"] == "parts.product_detail"
    assert found[0].evidence["from"] == "parts" and found[0].evidence["foreign_field_indexed"]


# Inputs, rendering


def test_a_handle_with_a_db_attribute_is_accepted_and_anything_else_is_refused(db: Database) -> None:
    class Handle:
        def __init__(self, inner: Database) -> None:
            self.db = inner
            self.dataset = "followers"
            self.shape = "embedded"

    workbook.load("followers", "embedded", db, scale="tiny", progress=False)
    report = examine(Handle(db), thresholds=Thresholds(array_elements=20))  # workload and shape from the handle
    assert report.of(UNBOUNDED_ARRAYS) and any("followers.profile" in n for n in report.notes)
    db["_workbench_load"].delete_many({})  # no load record: the shape is told by the users' validator
    assert [f.where for f in examine(db, "followers", thresholds=Thresholds(array_elements=20)).findings] == [
        "users.followers"
    ]
    with pytest.raises(WorkbookError, match="db must be a pymongo Database"):
        examine("workbench_x")
    with pytest.raises(WorkbookError, match="sample_size must be a positive whole number"):
        examine(db, sample_size=0)
    with pytest.raises(WorkbookError, match="thresholds must be a Thresholds"):
        examine(db, thresholds={"array_elements": 10})
    with pytest.raises(WorkbookError, match="HotOperation"):
        examine(db, [lambda d, i: None])


def test_report_renders_one_row_per_finding_as_html_frame_and_json(db: Database) -> None:
    db.posts.insert_many([{"_id": i, "tags": ["t"] * 300} for i in range(2)])
    db.posts.create_index("x")
    db.posts.create_index([("x", 1), ("y", 1)])
    report = examine(db)
    assert len(report.findings) == 2
    html = report._repr_html_()
    assert html.count("<tr") == 1 + len(report.findings) and "04_unbounded_arrays" in html
    assert "2 warnings in" in report.summary()
    frame = report.to_frame()
    assert list(frame["anti_pattern"]) == [UNBOUNDED_ARRAYS, UNNECESSARY_INDEXES]  # same severity: course order
    data = report.to_dict()
    assert data["findings"][0]["severity"] == "warning" and data["findings"][0]["lesson"] == "04_unbounded_arrays"
    assert report.at_or_above("critical") == [] and len(report.at_or_above("info")) == 2
    with pytest.raises(UnknownChoiceError, match="critical, info, warning"):
        Severity.parse("severe")
    with pytest.raises(WorkbookError, match="array_elements"):
        Thresholds(array_elements=-1)


def test_found_since_is_timezone_aware_and_rendered(db: Database) -> None:
    db.a.insert_one({"x": 1})
    db.a.create_index("x")
    (finding,) = examine(db, thresholds=Thresholds(index_stats_min_age=timedelta(0))).of(UNNECESSARY_INDEXES)
    since = finding.evidence["since"]
    assert since.tzinfo is not None and since <= datetime.now(UTC)
    assert isinstance(finding.to_dict()["evidence"]["since"], str)

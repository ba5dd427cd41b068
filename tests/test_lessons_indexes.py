"""workbook.lessons.indexes: the numbers notebook 06 asserts, on small hand-made collections."""

from __future__ import annotations

import pytest

from workbook.errors import WorkbookError
from workbook.lessons import indexes
from workbook.monitor import capture


def _items(db, n=60):  # type: ignore[no-untyped-def]
    db.items.insert_many(
        [
            {"_id": i, "group": f"g{i % 3}", "price": (i * 7) % 50, "name": f"item {i:03d}", "tags": ["a", "b"]}
            for i in range(n)
        ]
    )
    return db.items


def test_compare_indexes_shows_esr_reads_only_what_it_returns(db) -> None:  # type: ignore[no-untyped-def]
    items = _items(db)
    table = indexes.compare_indexes(
        items,
        {"eq": [("group", 1)], "esr": [("group", 1), ("price", 1), ("_id", 1)]},
        {"group": "g1"},
        sort=[("price", 1), ("_id", 1)],
        limit=5,
    )
    eq, esr = table.iloc[0], table.iloc[1]
    assert eq.blockingSort and eq.keysExamined == 20 and eq.nReturned == 5
    assert not esr.blockingSort and esr.keysExamined == 5


def test_compare_indexes_refuses_a_name_with_other_keys(db) -> None:  # type: ignore[no-untyped-def]
    items = _items(db)
    items.create_index([("price", 1)], name="taken")
    with pytest.raises(WorkbookError, match="already exists"):
        indexes.compare_indexes(items, {"taken": [("group", 1)]}, {"group": "g1"})


def test_copy_collection_copies_documents_and_optionally_indexes(db) -> None:  # type: ignore[no-untyped-def]
    items = _items(db, 10)
    items.create_index([("name", 1)], name="by_name", unique=True)
    bare = indexes.copy_collection(items, "bare")
    full = indexes.copy_collection(items, "full", with_indexes=True)
    assert bare.count_documents({}) == full.count_documents({}) == 10
    assert [ix["name"] for ix in bare.list_indexes()] == ["_id_"]
    assert {ix["name"]: ix.get("unique", False) for ix in full.list_indexes()}["by_name"] is True
    with pytest.raises(WorkbookError):
        indexes.copy_collection(items, "items")


def test_sort_memory_counts_the_bytes_of_matching_documents(db) -> None:  # type: ignore[no-untyped-def]
    from workbook.facts import bson_size

    items = _items(db, 30)
    held = indexes.sort_memory(items, {"group": "g0"})
    assert held.documents == 10
    assert held.bytes == sum(bson_size(d) for d in items.find({"group": "g0"}))
    assert not held.needs_disk and held.limit == 100 * 1024 * 1024
    assert held.documents_to_limit == int(held.limit // (held.bytes / held.documents))
    assert indexes.SortMemory(1, held.limit + 1).needs_disk
    assert "over it" in repr(indexes.SortMemory(1, held.limit + 1))


def test_pipeline_sort_in_memory_depends_on_stage_order(db) -> None:  # type: ignore[no-untyped-def]
    import workbook

    items = _items(db)
    items.create_index([("group", 1), ("price", 1)], name="esr")
    early = workbook.explain_aggregate(
        items, [{"$match": {"group": "g1"}}, {"$sort": {"price": 1}}, {"$unwind": "$tags"}]
    )
    late = workbook.explain_aggregate(
        items, [{"$match": {"group": "g1"}}, {"$unwind": "$tags"}, {"$sort": {"price": 1}}]
    )
    assert not indexes.pipeline_sort_in_memory(early)
    assert indexes.pipeline_sort_in_memory(late)
    # the summary and its printed row agree: a $sort stage after $unwind is a blocking sort
    assert late.summary()["inMemorySort"] and not early.summary()["inMemorySort"]
    assert ("in-memory (blocking) sort", "yes") in late.rows()
    assert ("in-memory (blocking) sort", "no") in early.rows()


def test_redundant_indexes_finds_prefixes_but_not_unique_or_partial_ones() -> None:
    listed = [
        {"name": "_id_", "key": {"_id": 1}},
        {"name": "a", "key": {"a": 1}},
        {"name": "a_b", "key": {"a": 1, "b": -1}},
        {"name": "a_unique", "key": {"a": 1}, "unique": True},
        {"name": "b", "key": {"b": 1}},
        {"name": "b_partial_c", "key": {"b": 1, "c": 1}, "partialFilterExpression": {"c": {"$gt": 0}}},
        {"name": "a_desc", "key": {"a": -1}},
    ]
    assert indexes.redundant_indexes(listed) == [("a", "a_b")]


def test_index_usage_counts_the_winning_index_of_each_command(db) -> None:  # type: ignore[no-untyped-def]
    items = _items(db)
    items.create_index([("group", 1)], name="group")
    items.create_index([("name", 1)], name="unused")
    with capture() as work:
        list(items.find({"group": "g1"}))
        list(items.find({"group": "g2"}).sort("price", 1))
        items.find_one({"_id": 3})
        items.update_one({"_id": 4}, {"$set": {"price": 1}})
        list(items.aggregate([{"$match": {"group": "g0"}}]))
        db.other.find_one({"group": "g1"})  # another collection: not counted
    usage = indexes.index_usage(items, work)
    assert usage.loc["group", "accesses"] == 3
    assert usage.loc["_id_", "accesses"] == 2
    assert usage.loc["unused", "accesses"] == 0


def test_index_usage_replays_commands_sent_to_another_collection(db) -> None:  # type: ignore[no-untyped-def]
    items = _items(db, 20)
    copy = indexes.copy_collection(items, "copy")
    copy.create_index([("group", 1)], name="group")
    with capture() as work:
        list(items.find({"group": "g1"}))
    assert indexes.index_usage(copy, work).loc["group", "accesses"] == 0
    assert indexes.index_usage(copy, work, sent_to="items").loc["group", "accesses"] == 1


def test_index_stats_lists_every_index(db) -> None:  # type: ignore[no-untyped-def]
    items = _items(db, 5)
    items.create_index([("name", 1)], name="by_name")
    stats = indexes.index_stats(items)
    assert list(stats.index) == ["_id_", "by_name"]
    assert stats.loc["by_name", "key"] == {"name": 1}


def test_index_stats_move_by_the_plans_a_replayed_workload_used_and_an_unused_index_stays_at_0(db) -> None:  # type: ignore[no-untyped-def]
    items = _items(db)
    copy = indexes.copy_collection(items, "copy")
    copy.create_index([("group", 1)], name="group")
    copy.create_index([("name", 1)], name="unused")
    list(copy.find({"group": "g0"}))  # an earlier use: counted before, not moved by the replay
    with capture() as work:
        list(items.find({"group": "g1"}))
        list(items.find({"group": "g2"}).sort("price", 1))
        items.find_one({"_id": 3})
        items.update_one({"_id": 4}, {"$set": {"price": 1}})  # its query part replays as a find
    moved = indexes.index_stats_moved(copy, work, sent_to="items")
    assert moved.loc["group", "accesses before"] == 1 and moved.loc["group", "moved by"] == 2
    assert moved.loc["_id_", "moved by"] == 2
    assert moved.loc["unused", "moved by"] == 0 and moved.loc["unused", "accesses after"] == 0
    assert (moved["moved by"] == moved["explained plans using it"]).all(), "the counters agree with explain"
    assert items.find_one({"_id": 4})["price"] == 1 and copy.find_one({"_id": 4})["price"] != 1, (
        "the copy was only read"
    )
    assert list(moved.index)[-1] == "unused"


def test_write_cost_counts_one_entry_per_index_per_document_and_more_for_arrays(db) -> None:  # type: ignore[no-untyped-def]
    documents = [{"_id": i, "a": i, "b": -i, "tags": ["x", "y", "z"]} for i in range(40)]
    cost = indexes.write_cost(
        documents,
        {1: [[("a", 1)]], 2: [[("a", 1)], [("b", 1)]], 3: [[("a", 1)], [("b", 1)], [("tags", 1)]]},
        db.scratch,
    )
    assert list(cost["index entries"]) == [80, 120, 120 + 40 * 3]
    assert cost.loc[2, "entries per document"] == 3.0
    assert indexes.index_entries(db.scratch)["tags_1"] == 120


def test_hide_and_unhide_change_what_the_planner_may_use(db) -> None:  # type: ignore[no-untyped-def]
    import workbook

    items = _items(db, 30)
    items.create_index([("group", 1)], name="group")
    items.create_index([("name", 1)], name="by_name")
    assert indexes.hide(items, "group", "by_name") == ["by_name", "group"]
    assert workbook.explain(items, {"group": "g1"}).summary()["plan"] == "COLLSCAN"
    assert indexes.unhide(items, "group") == ["by_name"]
    assert workbook.explain(items, {"group": "g1"}).summary()["index"] == "group"


def test_largest_group_is_the_most_frequent_value_ties_to_the_smallest(db) -> None:  # type: ignore[no-untyped-def]
    db.things.insert_many([{"g": "b"}, {"g": "a"}, {"g": "b"}, {"g": "a"}, {"g": "c"}])
    assert indexes.largest_group(db.things, "g") == "a"
    db.things.insert_one({"g": "c"})
    db.things.insert_one({"g": "c"})
    assert indexes.largest_group(db.things, "g") == "c"
    with pytest.raises(WorkbookError, match="empty"):
        indexes.largest_group(db.empty, "g")


def test_a_multikey_index_covers_its_non_array_fields_and_is_dropped_after(db) -> None:  # type: ignore[no-untyped-def]
    items = _items(db)
    table = indexes.covering_with_an_array(
        items,
        [("group", 1), ("price", 1), ("tags", 1)],
        {"price only": {"price": 1, "_id": 0}, "with the array": {"price": 1, "tags": 1, "_id": 0}},
        {"group": "g1"},
        sort=[("price", 1)],
        limit=5,
    )
    price_only, with_array = table.loc["price only"], table.loc["with the array"]
    assert price_only.multikey and price_only.covered and price_only.docsExamined == 0 and price_only.nReturned == 5
    assert with_array.multikey and not with_array.covered and with_array.docsExamined == 5
    assert price_only["array paths"] == "tags"
    assert [ix["name"] for ix in items.list_indexes()] == ["_id_"]
    with pytest.raises(WorkbookError, match="already exists"):
        indexes.covering_with_an_array(items, [("group", 1)], {}, {}, name="_id_")


def test_a_blocking_sort_over_its_limit_fails_with_292_without_disk_use_and_answers_with_it(db) -> None:  # type: ignore[no-untyped-def]
    db.items.insert_many([{"_id": i, "name": f"item {(i * 7) % 60:03d}", "pad": "x" * 500} for i in range(60)])
    admin = db.client.admin
    before = admin.command("getParameter", 1, internalQueryMaxBlockingSortMemoryUsageBytes=1)
    spilled = indexes.sort_over_the_limit(db.items, [("name", 1)], limit_bytes=10_000)
    assert spilled.held_bytes > 10_000 and spilled.refused_code == 292 and spilled.answered == 60
    assert spilled.restored_bytes == before["internalQueryMaxBlockingSortMemoryUsageBytes"]
    after = admin.command("getParameter", 1, internalQueryMaxBlockingSortMemoryUsageBytes=1)
    assert after["internalQueryMaxBlockingSortMemoryUsageBytes"] == spilled.restored_bytes, "the limit is set back"
    roomy = indexes.sort_over_the_limit(db.items, [("name", 1)], limit_bytes=10_000_000)
    assert roomy.refused_code is None and roomy.answered == 60, "under the limit the sort answers either way"
    db.items.create_index("name")  # an index provides the order: no blocking sort, nothing to refuse
    assert indexes.sort_over_the_limit(db.items, [("name", 1)], limit_bytes=10_000).refused_code is None
    assert "code 292" in repr(spilled)

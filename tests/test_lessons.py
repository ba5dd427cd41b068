"""The lesson modules behind notebooks 00-02: relations (parts), applications (orders), daily (workload
bills), display (banner, rejections, tables), launch (lab/test without make). Tiny data, every engine."""

from __future__ import annotations

import uuid

import pandas as pd
import pytest
from pymongo.errors import WriteError

import workbook
from workbook import applications, daily, display, relations
from workbook.errors import UnknownChoiceError, WorkbookError
from workbook.explorer import ShapeExplorer


@pytest.fixture
def parts_shapes(engine):
    dataset = workbook.generate("parts", scale="tiny", seed=7)
    shapes = []
    for shape in workbook.SHAPE_NAMES:
        db = workbook.connect(engine, database=f"t{uuid.uuid4().hex[:8]}", quiet=True)
        shapes.append(workbook.load(dataset, shape, db, progress=False))
    yield dataset, shapes
    for loaded in shapes:
        loaded.db.client.drop_database(loaded.db.name)


def users(dataset, part_id):
    return sum(1 for p in dataset.collections["products"] if any(line["partId"] == part_id for line in p["parts"]))


def test_every_way_of_reading_gives_the_same_product(parts_shapes):
    _, (embedded, referenced, hybrid) = parts_shapes
    answer = embedded.ops.product_detail("prod-000001")
    assert relations.application_join(referenced, "prod-000001") == answer
    for loaded in (embedded, referenced, hybrid):
        for how in relations.PART_READS[loaded.shape]:
            got = relations.read_parts(loaded, "prod-000001", how)
            expected = [line["name"] for line in answer["parts"]] if how == "names from the copies" else answer
            assert got == expected
    assert relations.application_join(referenced, "no-such-product") is None
    with pytest.raises(UnknownChoiceError, match="application join"):
        relations.read_parts(embedded, "prod-000001", "application join")
    with pytest.raises(WorkbookError, match="second read"):
        relations.part_names(referenced, "prod-000001")


def test_compare_reads_counts_round_trips_and_documents(parts_shapes):
    _, shapes = parts_shapes
    lines = len(shapes[0].ops.product_detail("prod-000001")["parts"])
    reads = relations.compare_reads(shapes, "prod-000001", repeat=1)
    assert reads.loc[("embedded", "one read"), "round_trips"] == 1
    assert reads.loc[("referenced", "application join"), "round_trips"] == 2
    assert reads.loc[("referenced", "$lookup"), "docs_examined"] == 1 + lines
    assert (
        reads.loc[("hybrid", "names from the copies"), "bytes_returned"]
        < reads.loc[("hybrid", "$lookup"), "bytes_returned"]
    )
    assert (reads["latency_ms"] > 0).all()


def test_the_foreign_index_turns_a_scan_per_lookup_into_an_index_walk(parts_shapes):
    dataset, (_, referenced, _) = parts_shapes
    part, used_by = relations.most_used_part(referenced)
    assert used_by == users(dataset, part)
    effect = relations.foreign_index_effect(referenced, part)
    with_index, hidden = effect.iloc[0], effect.iloc[1]
    assert with_index["index used"] == "part_products" and with_index["products examined"] == used_by
    assert hidden["collection scans"] == 1 and hidden["products examined"] == len(dataset.collections["products"])
    hidden_flags = {i["name"]: i.get("hidden", False) for i in referenced["products"].list_indexes()}
    assert hidden_flags["part_products"] is False  # unhidden again


def test_rename_cost_per_shape_and_the_name_is_restored(parts_shapes):
    dataset, shapes = parts_shapes
    part, used_by = relations.most_used_part(shapes[1])
    before = shapes[2].ops.product_detail("prod-000001")
    cost = relations.rename_cost(shapes, part, "Renamed for the test")
    assert cost["documents_rewritten"].to_dict() == {"embedded": used_by, "referenced": 1, "hybrid": used_by + 1}
    assert shapes[2].ops.product_detail("prod-000001") == before
    assert shapes[1].db.parts.find_one({"_id": part})["name"] != "Renamed for the test"


def test_stale_copies_are_counted_and_refreshed(parts_shapes):
    dataset, (embedded, referenced, hybrid) = parts_shapes
    part, used_by = relations.most_used_part(hybrid)
    assert relations.stale_copies(hybrid) == 0
    hybrid.db.parts.update_one({"_id": part}, {"$set": {"name": "Bypassed"}})
    assert relations.stale_copies(hybrid) == used_by
    assert relations.refresh_copies(hybrid) == used_by and relations.stale_copies(hybrid) == 0
    with pytest.raises(WorkbookError, match="hybrid"):
        relations.refresh_copies(referenced)


def test_ladder_and_policy_tables():
    ladder = relations.cardinality_ladder()
    assert list(ladder.index) == [
        "one-to-one",
        "one-to-few",
        "bounded one-to-many",
        "large one-to-many",
        "one-to-squillions",
        "many-to-many",
    ]
    assert ladder["decision"].str.len().min() > 5
    with pytest.raises(UnknownChoiceError, match="one-to-few"):
        relations.ladder_decision("one-to-a-few")
    policy = relations.duplication_policy()
    assert policy.loc["copied", "policy"] == "name" and "refresh_part_names" in policy.loc["refreshed", "policy"]


def test_lines_per_product(parts_shapes):
    dataset, (_, referenced, _) = parts_shapes
    counts = [len(p["parts"]) for p in dataset.collections["products"]]
    assert relations.lines_per_product(referenced) == {
        "min": min(counts),
        "median": pd.Series(counts).median(),
        "max": max(counts),
    }


def test_two_applications_each_read_only_what_it_returns(engine):
    store = workbook.generate("store", scale="tiny", seed=7)
    db = workbook.connect(engine, database=f"t{uuid.uuid4().hex[:8]}", quiet=True)
    try:
        apps = applications.load_applications(store, db)
        lines = sum(len(order["items"]) for order in store.collections["orders"])
        assert db.pick_lines.count_documents({}) == lines
        paid = [o for o in store.collections["orders"] if o["status"] == applications.PICKABLE]
        picks = apps.pick_list()
        assert len(picks) == sum(len(o["items"]) for o in paid) == len(apps.pick_list_from_orders())
        assert [p["productId"] for p in picks] == sorted(p["productId"] for p in picks)
        measured = apps.measure()
        own = measured.loc[("warehouse: today's pick list", "pick_lines (warehouse's shape)")]
        other = measured.loc[("warehouse: today's pick list", "orders (customer's shape)")]
        assert own["docs_examined"] == own["results"] and other["docs_examined"] == len(store.collections["orders"])
        mine = measured.loc[("customer: my 10 newest orders", "orders (customer's shape)")]
        assert mine["round_trips"] == 1 and mine["docs_examined"] == mine["results"]
        assert measured.loc[("customer: my 10 newest orders", "pick_lines (warehouse's shape)"), "note"]
    finally:
        db.client.drop_database(db.name)
    with pytest.raises(WorkbookError, match="store"):
        applications.load_applications(workbook.generate("parts", "tiny", 7), db)


def fake_runs() -> pd.DataFrame:
    rows = []
    for shape, page_docs in (("embedded", 1), ("referenced", 400)):
        for operation, docs in (("product_page", page_docs), ("monthly_sales_report", 1000)):
            rows.append(
                {
                    "shape": shape,
                    "operation": operation,
                    "docs_examined": docs,
                    "keys_examined": docs,
                    "round_trips": 1,
                    "bytes_returned": 10 * docs,
                    "docs_returned": 1,
                }
            )
    return pd.DataFrame(rows)


def test_daily_work_multiplies_work_by_rate():
    store = workbook.workload("store")
    bill = daily.daily_work(fake_runs(), store)
    assert bill.loc["product_page", ("per day", "referenced")] == 400 * 2000 * 86400
    assert bill.loc["monthly_sales_report", ("per day", "embedded")] == pytest.approx(1000)
    assert bill["% of day"].sum().round(6).tolist() == [100.0, 100.0]
    totals = daily.day_totals(fake_runs(), store)
    assert totals.idxmin() == "embedded"
    # a report run a million times a second outweighs the page and changes nothing between shapes
    flipped = daily.daily_work(fake_runs(), store, rates={"monthly_sales_report": 1e6})
    assert flipped.loc["monthly_sales_report", ("% of day", "embedded")] > 99
    with pytest.raises(UnknownChoiceError):
        daily.per_call(fake_runs(), "latency")
    assert daily.operation_work(fake_runs(), "product_page").loc["referenced", "docs_examined"] == 400
    revisited = daily.revisit(fake_runs(), store, "embedded")
    assert list(revisited.index) == ["product_page", "monthly_sales_report"] and "rate" in revisited.columns
    widget = daily.what_if(fake_runs(), store)
    sliders = [child for child in widget.children if hasattr(child, "min")]
    assert [s.description for s in sliders] == ["product_page", "monthly_sales_report"]


def test_schema_table_lists_each_index_with_its_reason():
    dataset = workbook.generate("store", scale="tiny", seed=7)
    db = workbook.connect(database=f"t{uuid.uuid4().hex[:8]}", quiet=True)
    try:
        table = daily.schema_table(workbook.load(dataset, "hybrid", db, progress=False))
        assert ("products", "category_price") in table.index and table["why"].str.len().min() > 3
    finally:
        db.client.drop_database(db.name)


def test_the_banner_wraps_between_words_and_keeps_code_together():
    text = "workbook: offline default " + "word " * 30 + "\n  then run `docker compose up -d` and set X=" + "y" * 100
    wrapped = display.Banner(text).wrapped()
    assert all(len(line) <= display.WIDTH or " " not in line.strip() for line in wrapped.splitlines())
    assert "`docker compose up -d`" in wrapped and "y" * 100 in wrapped
    assert "word" in display.Banner(text)._repr_html_()


def test_a_validator_rejection_shows_the_rule_and_the_field_first(db):
    db.create_collection(
        "lines", validator={"$jsonSchema": {"properties": {"quantity": {"bsonType": "int", "minimum": 1}}}}
    )
    with pytest.raises(WriteError) as caught:
        db.lines.insert_one({"_id": "x", "quantity": 0})
    assert display.is_validation_error(caught.value)
    text = display.rejection_text(caught.value)
    first, reason = text.splitlines()[:2]
    assert "validator" in first and "'x'" in first
    assert reason.strip().startswith("• quantity:")
    assert not display.is_validation_error(WriteError("other", code=11000))


def test_the_rejection_handler_leaves_errors_other_than_writes_alone():
    class Shell:
        shown = None

        def showtraceback(self, exc_tuple, tb_offset=None):
            self.shown = exc_tuple

    shell, error = Shell(), ValueError("not a write")
    display._show_rejection(shell, ValueError, error, None)
    assert shell.shown[1] is error
    assert display.install() is False  # outside IPython: nothing to install


def test_tables_show_counts_as_integers_and_keep_text():
    frame = pd.DataFrame({"documents": [30.0, 2000.0], "mean": [1.666, 401.333], "note": ["a", None]})
    shown = display.table(frame)
    text = repr(shown)
    assert "30.0" not in text and "2,000" in text and "1.67" in text and "401.33" in text
    assert "None" not in text and "<NA>" not in shown._repr_html_()
    assert shown.frame is frame


def test_lab_and_test_run_from_the_course_folder(monkeypatch):
    from workbook import launch

    assert (launch.course_root() / launch.FIRST_NOTEBOOK).is_file()
    assert launch.course_command("lab")[-1] == launch.FIRST_NOTEBOOK
    with pytest.raises(UnknownChoiceError):
        launch.course_command("serve")
    calls = []
    monkeypatch.setattr("workbook.check.main", lambda uri=None: 0)
    monkeypatch.setattr(launch.subprocess, "call", lambda args, cwd: calls.append((args, cwd)) or 0)
    assert launch.run_course_command("test") == 0
    assert calls == [(launch.course_command("test"), launch.course_root())]


def test_the_explorer_switches_to_every_dataset():
    shapes = []
    for name in ("store", "followers", "parts"):
        dataset = workbook.generate(name, scale="tiny", seed=7)
        for shape in ("referenced", "hybrid"):
            db = workbook.connect(database=f"t{uuid.uuid4().hex[:8]}", quiet=True)
            shapes.append(workbook.load(dataset, shape, db, progress=False))
    try:

        def measure(loaded, repeat, warmup, **kwargs):
            return workbook.run_workload(loaded, repeat=1, warmup=0, explain_runs=0, **kwargs)

        explorer = ShapeExplorer(shapes, measure=measure)
        for name, first in (("followers", "profile"), ("parts", "product_detail"), ("store", "product_page")):
            explorer.dataset.value = name
            assert (explorer.shape.value, explorer.operation.value) == ("hybrid", first)
            assert f"<b>{name}</b>" in explorer.status.value and first in explorer.figure.layout.title.text
    finally:
        for loaded in shapes:
            loaded.db.client.drop_database(loaded.db.name)


def test_part_usage_typical_part_and_stored_sizes(parts_shapes):
    dataset, shapes = parts_shapes
    usage = relations.part_usage(shapes[1])
    assert usage.is_monotonic_decreasing
    for part in list(usage.index[:3]) + list(usage.index[-3:]):
        assert usage[part] == users(dataset, part)
    typical, n = relations.typical_part(usage)
    assert n == usage[typical] and abs(n - usage.median()) <= 1
    assert relations.typical_part(shapes[1]) == (typical, n)  # from a loaded shape, the same answer
    sizes = relations.stored_sizes(shapes)
    assert list(sizes.index) == list(workbook.SHAPE_NAMES)
    assert (sizes["documents"] == len(dataset.collections["products"])).all()
    assert sizes.loc["embedded", "avg_bytes"] > sizes.loc["hybrid", "avg_bytes"] > sizes.loc["referenced", "avg_bytes"]


def test_only_a_last_column_of_text_wraps():
    numbers = display.table(pd.DataFrame({"a": [1, 2], "bytes": [700, 900]}))._repr_html_()
    text = display.table(pd.DataFrame({"a": [1, 2], "why": ["one reason", "another"]}))._repr_html_()
    assert "white-space:nowrap" in numbers and "last-child" not in numbers
    assert "last-child{white-space:normal" in text


def test_the_applications_database_is_dropped_when_the_block_ends(engine):
    store = workbook.generate("store", scale="tiny", seed=7)
    db = workbook.connect(engine, database=f"t{uuid.uuid4().hex[:8]}", quiet=True)
    keep = db.client[db.name + "_kept"]  # another of the learner's databases: left alone
    keep.notes.insert_one({"_id": 1})
    try:
        with applications.load_applications(store, db, progress=False) as apps:
            measured = apps.measure()
            assert db.name in db.client.list_database_names()
        assert measured.loc[("warehouse: today's pick list", "pick_lines (warehouse's shape)"), "results"] > 0
        assert db.name not in db.client.list_database_names() and keep.notes.count_documents({}) == 1
        with pytest.raises(RuntimeError), applications.load_applications(store, db, progress=False):
            raise RuntimeError("a failing cell")
        assert db.name not in db.client.list_database_names()  # dropped on the way out of a failure too
    finally:
        db.client.drop_database(db.name)
        db.client.drop_database(keep.name)

"""Workload tables and run(): tidy rows, warm-up excluded, work counts that tell the shapes apart."""

from __future__ import annotations

import pytest

import workbook
from workbook.dataset_parts import workload
from workbook.errors import UnknownChoiceError, WorkbookError
from workbook.measure import COLUMNS, run_workload, summarize_runs
from workbook.operations.base import Operations


@pytest.fixture(scope="module")
def loaded_store():
    """The tiny store in all three shapes, in the test learner's shape databases."""
    store = workbook.generate("store", scale="tiny", seed=7)
    shapes = {shape: workbook.load(store, shape, progress=False) for shape in ("embedded", "referenced", "hybrid")}
    yield store, shapes
    for shape in shapes.values():
        shape.db.client.drop_database(shape.db.name)


@pytest.fixture
def shapes(loaded_store):
    """The store's loaded shapes by name."""
    return loaded_store[1]


def test_store_workload_table_lists_operations_first():
    table = workload("store").table()
    assert table.loc["product_page", "per_second"] == 2000
    assert table.loc["category_listing", "per_second"] == 600
    assert table.loc["place_order", "type"] == "write" and table.loc["my_orders", "per_second"] == 40
    assert table.loc["monthly_sales_report", "per_day"] == pytest.approx(1)
    assert 0 < table.loc["change_price", "per_day"] < 100
    assert list(table.index) == workload("store").names
    assert sum(workload("store").weights().values()) == pytest.approx(1)


@pytest.mark.parametrize("name", ["followers", "parts"])
def test_other_workloads_exist(name):
    table = workload(name).table()
    assert len(table) >= 4 and set(table["type"]) == {"read", "write"}


def test_run_returns_tidy_rows_with_warmup_excluded(shapes, monkeypatch):
    calls = []
    original = Operations.run

    def counting(self, name, *args, **kwargs):
        calls.append((self.shape, name))
        return original(self, name, *args, **kwargs)

    monkeypatch.setattr(Operations, "run", counting)
    frame = run_workload(shapes, operations=["product_page", "my_orders"], repeat=4, warmup=2)
    assert list(frame.columns) == COLUMNS
    assert len(frame) == 3 * 2 * 4  # shapes x operations x timed runs
    assert len(calls) == 3 * 2 * (4 + 2)  # the warm-up calls happened, and were not recorded
    assert sorted(frame["run"].unique()) == [0, 1, 2, 3]
    assert (frame["latency_ms"] > 0).all() and frame["ok"].all()
    assert frame["engine"].str.contains("offline default").all()


def test_work_counts_tell_the_shapes_apart(shapes):
    frame = run_workload(shapes, operations=["product_page"], repeat=3, warmup=0, explain_runs=3)
    by_shape = frame.groupby("shape")[["round_trips", "docs_examined", "bytes_returned"]].mean()
    assert by_shape.loc["hybrid", "round_trips"] == 1 and by_shape.loc["embedded", "round_trips"] == 1
    assert by_shape.loc["referenced", "round_trips"] == 3
    assert by_shape.loc["hybrid", "docs_examined"] == 1
    assert by_shape.loc["referenced", "docs_examined"] > by_shape.loc["hybrid", "docs_examined"]
    assert by_shape.loc["embedded", "bytes_returned"] > by_shape.loc["hybrid", "bytes_returned"]


def test_only_the_first_explain_runs_carry_examined_counts(shapes):
    frame = run_workload(shapes["hybrid"], operations=["category_listing"], repeat=3, warmup=0, explain_runs=1)
    assert frame["keys_examined"].notna().tolist() == [True, False, False]


def test_weighted_mix_follows_the_workload(shapes):
    frame = run_workload(shapes["hybrid"], repeat=60, warmup=0, mix=True, explain_runs=0)
    counts = frame["operation"].value_counts()
    assert counts.idxmax() == "product_page" and len(frame) == 60


def test_summary_percentiles_are_ordered(shapes):
    runs = run_workload(shapes["embedded"], operations=["my_orders"], repeat=10, warmup=1, explain_runs=0)
    summary = summarize_runs(runs)
    row = summary.loc[("embedded", "my_orders")]
    assert row["runs"] == 10 and row["p50_ms"] <= row["p95_ms"] <= row["p99_ms"]


def test_bad_input_names_the_fix(shapes):
    with pytest.raises(UnknownChoiceError, match="Did you mean 'product_page'"):
        run_workload(shapes, operations=["product_pag"])
    with pytest.raises(UnknownChoiceError, match="workload"):
        workload("shop")
    with pytest.raises(WorkbookError, match="repeat"):
        run_workload(shapes, repeat=0)
    with pytest.raises(WorkbookError, match="workbook.load"):
        run_workload(workbook.connect(database="empty", quiet=True), repeat=1)


@pytest.mark.parametrize("dataset", ["followers", "parts"])
def test_every_workload_runs_on_every_shape(dataset):
    data = workbook.generate(dataset, scale="tiny", seed=7)
    shapes = [workbook.load(data, shape, progress=False) for shape in ("embedded", "referenced", "hybrid")]
    try:
        frame = run_workload(shapes, repeat=2, warmup=0, explain_runs=0)
        names = workload(dataset).names
        assert set(frame["operation"]) == set(names) and set(frame["shape"]) == {"embedded", "referenced", "hybrid"}
        assert len(frame) == 3 * len(names) * 2 and frame["ok"].all()
    finally:
        for shape in shapes:
            shape.db.client.drop_database(shape.db.name)


def test_product_pages_favour_popular_products(loaded_store):
    import random

    from workbook.workloads import Pools

    store, shapes = loaded_store
    counts = {}
    for review in store.collections["reviews"]:
        counts[review["productId"]] = counts.get(review["productId"], 0) + 1
    top = max(counts, key=counts.get)
    picks = {}
    for shape in ("embedded", "hybrid"):
        pools = Pools(shapes[shape].db)
        picks[shape] = [pools.popular_product(random.Random(i)) for i in range(300)]
    assert picks["embedded"] == picks["hybrid"]  # the same draws in every shape
    assert picks["hybrid"].count(top) > 300 / len(store.collections["products"])


def test_a_run_counts_every_call_on_a_progress_bar(shapes, monkeypatch):
    from workbook import measure, waiting

    bars = []

    class Recording:
        def __init__(self, total, progress, **kwargs):
            self.total, self.disable, self.done, self.closed = total, not progress, 0, False
            self.delay = kwargs.get("delay", waiting.DELAY_S)
            bars.append(self)

        def update(self, count):
            self.done += count

        def close(self):
            self.closed = True

    monkeypatch.setattr(measure, "wait_bar", Recording)
    runs = measure.run_workload(shapes, operations=["product_page", "my_orders"], repeat=2, warmup=1, explain_runs=0)
    (bar,) = bars
    assert bar.total == bar.done == 3 * 2 * (2 + 1) and bar.closed and not bar.disable
    assert bar.delay == waiting.DELAY_S and len(runs) == 3 * 2 * 2  # shown only for runs past the delay
    measure.run_workload(shapes, operations=["product_page"], repeat=1, warmup=0, explain_runs=0, progress=False)
    assert bars[-1].disable

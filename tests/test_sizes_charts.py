"""Sizes (per document, per shape, towards 16 MiB) and the charts drawn from runs and sizes."""

from __future__ import annotations

import uuid

import pandas as pd
import pytest

import workbook
from workbook import charts
from workbook.dataset_parts import workload
from workbook.facts import MAX_BSON_SIZE, bson_size
from workbook.measure import run_workload
from workbook.sizes import document_size_frame, document_sizes, growth_projection, largest_documents, size_table


@pytest.fixture(scope="module")
def loaded():
    store = workbook.generate("store", scale="tiny", seed=7)
    shapes = {shape: workbook.load(store, shape, progress=False) for shape in ("embedded", "referenced", "hybrid")}
    yield store, shapes
    for shape in shapes.values():
        shape.db.client.drop_database(shape.db.name)


@pytest.fixture
def store_loaded(loaded):
    return loaded[0]


@pytest.fixture
def shapes(loaded):
    return loaded[1]


@pytest.fixture
def scratch(engine):
    db = workbook.connect(engine, database=f"t{uuid.uuid4().hex[:8]}", quiet=True)
    yield db
    db.client.drop_database(db.name)


def test_document_sizes_are_bson_sizes(scratch):
    docs = [{"_id": "a", "tags": ["x"] * 10}, {"_id": "b", "text": "y" * 500}]
    scratch.things.insert_many(docs)
    sizes = document_sizes(scratch.things)
    assert sizes.to_dict() == {d["_id"]: bson_size(d) for d in docs}


def test_size_table_shows_the_embedded_product_growing(store_loaded, shapes):
    table = size_table(shapes)
    for _, row in table.iterrows():
        assert row["p50_bytes"] <= row["p95_bytes"] <= row["max_bytes"]
    embedded, hybrid = table.loc[("embedded", "products")], table.loc[("hybrid", "products")]
    assert embedded["max_bytes"] > 3 * hybrid["max_bytes"]
    assert table.loc[("referenced", "reviews"), "documents"] == len(store_loaded.collections["reviews"])
    assert (table["index_bytes"] > 0).all()  # the offline estimate: something for every collection
    assert embedded["pct_of_16mib_max"] == pytest.approx(100 * embedded["max_bytes"] / MAX_BSON_SIZE)


def test_largest_documents_come_first(shapes):
    products = shapes["embedded"]["products"]
    top = largest_documents(products, n=3)
    assert list(top["bytes"]) == sorted(top["bytes"], reverse=True) and len(top) == 3
    assert top["bytes"].iloc[0] == document_sizes(products).max()


def test_growth_projection_shares_new_entries_by_skew(scratch):
    entry = "e" * 90
    scratch.posts.insert_many([{"_id": "big", "items": [entry] * 3}, {"_id": "small", "items": [entry]}])
    limit = 2000
    projection = growth_projection(scratch.posts, "items", new_per_day=4, limit=limit)
    big = projection.loc["big"]
    assert big["share_of_new"] == pytest.approx(0.75)
    per_entry = bson_size({"list": [entry] * 3}) / 3
    assert big["bytes_per_day"] == pytest.approx(0.75 * 4 * per_entry)
    assert big["days_to_limit"] == pytest.approx((limit - big["bytes"]) / big["bytes_per_day"])
    assert projection.index[0] == "big"  # the fastest-growing document first


def test_latency_and_work_charts_carry_the_data_and_the_engine(shapes):
    runs = run_workload(shapes, operations=["product_page", "my_orders"], repeat=3, warmup=1, explain_runs=1)
    figure = charts.latency_chart(runs)
    assert {trace.name for trace in figure.data} == {"embedded", "referenced", "hybrid"}
    hybrid = next(t for t in figure.data if t.name == "hybrid")
    assert sorted(hybrid.y) == sorted(runs.loc[runs["shape"] == "hybrid", "latency_ms"])
    assert "offline default" in figure.layout.title.subtitle.text and "ms" in figure.layout.yaxis.title.text
    work = charts.work_chart(runs)
    trips = [t for t in work.data if t.name == "referenced" and "round trips" in str(t.hovertemplate)]
    assert trips and dict(zip(trips[0].x, trips[0].y, strict=True))["product_page"] == 3


def test_size_growth_and_cost_charts(store_loaded, shapes):
    sizes = document_size_frame(shapes)
    figure = charts.size_chart(sizes, "products")
    assert {t.name for t in figure.data} == {"embedded", "referenced", "hybrid"}
    assert sum(len(t.y) for t in figure.data) == 3 * len(store_loaded.collections["products"])
    projection = growth_projection(shapes["embedded"]["products"], "reviews", new_per_day=1000, top=2)
    growth = charts.growth_chart(projection, days=10)
    assert len(growth.data) == 2 and max(growth.data[0].y) <= MAX_BSON_SIZE * 1.1 / 2**20
    runs = pd.DataFrame(
        {
            "shape": ["hybrid", "hybrid", "referenced"],
            "operation": ["product_page", "my_orders", "product_page"],
            "docs_examined": [1.0, 10.0, 6.0],
            "engine": "offline default (test)",
        }
    )
    cost = charts.workload_cost_chart(runs, workload("store"), "docs_examined")
    bars = {(t.name, x): y for t in cost.data for x, y in zip(t.x, t.y, strict=True)}
    assert bars[("product_page", "hybrid")] == 2000 and bars[("my_orders", "hybrid")] == 400
    assert bars[("product_page", "referenced")] == 12000
    assert cost.layout.legend.title.text == "operation"  # the bars are operations, not shapes


def test_log_axes_label_every_tick_with_its_whole_value():
    runs = pd.DataFrame(
        {
            "shape": ["embedded", "referenced", "hybrid"] * 2,
            "operation": ["product_page"] * 6,
            "latency_ms": [0.35, 3.0, 0.8, 42.0, 7.5, 1.2],
            "engine": "offline default (test)",
        }
    )
    axis = charts.latency_chart(runs).layout.yaxis
    assert axis.type == "log" and axis.tickmode == "array"
    assert list(axis.ticktext) == ["0.2", "0.5", "1", "2", "5", "10", "20", "50"]
    assert list(axis.tickvals) == [0.2, 0.5, 1, 2, 5, 10, 20, 50]  # "20" is labelled 20, never a bare "2"
    sizes = pd.DataFrame({"shape": ["hybrid"] * 2, "collection": ["products"] * 2, "bytes": [900, 25_000]})
    expected = ["500", "1,000", "2,000", "5,000", "10,000", "20,000", "50,000"]
    assert list(charts.size_chart(sizes).layout.yaxis.ticktext) == expected


@pytest.mark.parametrize("dataset", ["store", "followers", "parts"])
def test_offline_sizes_from_storage_equal_the_servers_bsonsize(dataset, monkeypatch):
    """The offline fast path (sizes read from the engine's storage) agrees with $bsonSize pipelines."""
    from workbook import sizes
    from workbook.shapes import SHAPE_NAMES

    shapes = [workbook.load(dataset, shape, scale="tiny", progress=False) for shape in SHAPE_NAMES]
    fast, frame = size_table(shapes), document_size_frame(shapes)
    hybrid = shapes[-1]
    collection = hybrid.collection_names[0]
    first_id = frame.query("shape == 'hybrid' and collection == @collection")["_id"].iloc[0]
    before = document_sizes(hybrid[collection])[first_id]
    hybrid[collection].update_one({"_id": first_id}, {"$set": {"note": "x" * 300}})  # a write is never missed
    assert document_sizes(hybrid[collection])[first_id] == before + bson_size({"note": "x" * 300}) - 5
    hybrid[collection].update_one({"_id": first_id}, {"$unset": {"note": ""}})
    assert document_sizes(hybrid[collection])[first_id] == before
    monkeypatch.setattr(sizes, "_offline_sizes", lambda db, collection, indexes=(): None)  # a server's pipelines
    slow = size_table(shapes)
    for loaded in shapes:  # data and average sizes as the engine's own collStats reports them
        for name in loaded.collection_names:
            stats = loaded.db.command("collStats", name)
            assert fast.loc[(loaded.shape, name), "data_bytes"] == stats["size"]
            assert fast.loc[(loaded.shape, name), "avg_obj_bytes"] == pytest.approx(stats["avgObjSize"])
    pd.testing.assert_frame_equal(fast, slow)
    pd.testing.assert_frame_equal(frame, document_size_frame(shapes))


def test_the_medians_a_latency_chart_draws_are_the_runs_medians() -> None:
    runs = pd.DataFrame(
        {
            "shape": ["hybrid"] * 3 + ["referenced"] * 3 + ["hybrid"] * 2,
            "operation": ["page"] * 6 + ["report", "report"],
            "latency_ms": [1.0, 2.0, 9.0, 4.0, 5.0, 6.0, 30.0, 10.0],
            "engine": "offline default",
        }
    )
    figure = charts.latency_chart(runs)
    medians = charts.drawn_medians(figure)
    assert medians.loc["page", "hybrid"] == 2.0 and medians.loc["page", "referenced"] == 5.0
    assert medians.loc["report", "hybrid"] == 20.0 and pd.isna(medians.loc["report", "referenced"])
    ranking = charts.drawn_ranking(figure)
    assert ranking["page"] == "hybrid < referenced" and ranking["report"] == "hybrid"


def test_a_figure_without_boxes_is_refused() -> None:
    import plotly.graph_objects as go

    with pytest.raises(workbook.errors.WorkbookError, match="latency_chart"):
        charts.drawn_medians(go.Figure())

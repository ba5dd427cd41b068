"""The workload's weighted cost (rate x weighted work per call), its chart and its rate sliders."""

from __future__ import annotations

import pandas as pd
import pytest

import workbook
from workbook import charts, daily
from workbook.errors import UnknownChoiceError
from workbook.measure import run_workload

STORE = workbook.workload("store")
SHAPES = ("embedded", "referenced", "hybrid")


def frame(work: dict[tuple[str, str], dict[str, float]], runs: int = 2) -> pd.DataFrame:
    """A run_workload-like frame: ``runs`` rows per (shape, operation) with the given counts."""
    rows = []
    for (shape, operation), counts in work.items():
        for run in range(runs):
            # the two runs differ by +-1 byte: per-call work is their mean
            rows.append(
                {"shape": shape, "operation": operation, "run": run, "engine": "offline default (test)"}
                | counts
                | {"bytes_returned": counts["bytes_returned"] + (1 if run else -1)}
            )
    return pd.DataFrame(rows)


def counts(round_trips: float, docs: float, keys: float, size: float) -> dict[str, float]:
    return {"round_trips": round_trips, "docs_examined": docs, "keys_examined": keys, "bytes_returned": size}


# The store's lesson in miniature: the embedded and hybrid product pages are one round trip and one
# document each, but the embedded one sends every review back; adding a review is one write in the
# embedded and referenced shapes and a transaction of several in the hybrid one.
LESSON = frame(
    {
        ("embedded", "product_page"): counts(1, 1, 1, 60_000),
        ("referenced", "product_page"): counts(3, 300, 300, 1_700),
        ("hybrid", "product_page"): counts(1, 1, 1, 1_400),
        ("embedded", "add_review"): counts(2, 2, 2, 160),
        ("referenced", "add_review"): counts(2, 1, 1, 150),
        ("hybrid", "add_review"): counts(4, 2, 2, 200),
    }
)


def expected_call_cost(runs: pd.DataFrame, weights: dict[str, float]) -> pd.Series:
    """Weighted work per call computed independently: row by row, then the mean per (operation, shape)."""
    per_row = sum(runs[name] * weight for name, weight in weights.items())
    return per_row.groupby([runs["operation"], runs["shape"]]).mean()


def test_call_cost_weighs_every_count_of_the_frame():
    cost = daily.call_cost(LESSON)
    expected = expected_call_cost(LESSON, daily.COST_WEIGHTS)
    for (operation, shape), value in expected.items():
        assert cost.loc[operation, shape] == pytest.approx(value)
    assert list(cost.columns) == list(SHAPES) and list(cost.index) == ["product_page", "add_review"]


def test_the_weighted_cost_separates_shapes_that_tie_on_documents_examined():
    docs = daily.per_call(LESSON, "docs_examined").loc["product_page"]
    assert docs["embedded"] == docs["hybrid"]  # the tie the one-count chart showed
    cost = daily.call_cost(LESSON).loc["product_page"]
    extra_bytes = daily.per_call(LESSON, "bytes_returned").loc["product_page"]
    gap = (extra_bytes["embedded"] - extra_bytes["hybrid"]) * daily.COST_WEIGHTS["bytes_returned"]
    assert cost["embedded"] - cost["hybrid"] == pytest.approx(gap) and gap > 0


def test_cost_per_second_is_rate_times_work_per_call():
    per_second = daily.cost_per_second(LESSON, STORE)
    calls = daily.call_cost(LESSON)
    for operation in calls.index:
        rate = STORE.operation(operation).per_second
        assert per_second.loc[operation].tolist() == pytest.approx((calls.loc[operation] * rate).tolist())
    doubled = daily.cost_per_second(LESSON, STORE, rates={"add_review": 2 * STORE.operation("add_review").per_second})
    assert doubled.loc["add_review"].tolist() == pytest.approx((2 * per_second.loc["add_review"]).tolist())
    assert doubled.loc["product_page"].equals(per_second.loc["product_page"])


def test_raising_a_write_heavy_operation_changes_the_ranking():
    at_store_rates = daily.cost_ranking(LESSON, STORE)
    assert list(at_store_rates.index) == ["hybrid", "embedded", "referenced"]
    assert at_store_rates["rank"].tolist() == [1, 2, 3] and at_store_rates["times the cheapest"].iloc[0] == 1

    # where the hybrid shape's dearer review writes outweigh its cheaper product pages, from the frame
    calls = daily.call_cost(LESSON)
    page_rate = STORE.operation("product_page").per_second
    page_saving = (calls.loc["product_page", "embedded"] - calls.loc["product_page", "hybrid"]) * page_rate
    review_penalty = calls.loc["add_review", "hybrid"] - calls.loc["add_review", "embedded"]
    flip = daily.crossover_rate(LESSON, STORE, "add_review", "hybrid", "embedded")
    assert flip == pytest.approx(page_saving / review_penalty)
    assert flip > STORE.operation("add_review").per_second  # the store's own rate is far below it

    below = daily.cost_ranking(LESSON, STORE, rates={"add_review": 0.9 * flip})
    above = daily.cost_ranking(LESSON, STORE, rates={"add_review": 1.1 * flip})
    assert below.index[0] == "hybrid" and above.index[0] == "embedded"
    at = daily.cost_per_second(LESSON, STORE, rates={"add_review": flip}).sum()
    assert at["hybrid"] == pytest.approx(at["embedded"])


def test_crossover_rate_is_none_when_the_operation_costs_both_shapes_the_same():
    same = frame(
        {
            ("embedded", "product_page"): counts(1, 1, 1, 500),
            ("hybrid", "product_page"): counts(1, 1, 1, 100),
            ("embedded", "my_orders"): counts(1, 2, 2, 300),
            ("hybrid", "my_orders"): counts(1, 2, 2, 300),
        }
    )
    assert daily.crossover_rate(same, STORE, "my_orders", "hybrid", "embedded") is None
    # lowering the page's rate never makes the embedded shape cheaper: the crossing would be below 0
    assert daily.crossover_rate(same, STORE, "product_page", "hybrid", "embedded") == 0.0


def test_weights_can_be_changed_and_bad_names_are_refused():
    only_trips = {"round_trips": 1, "docs_examined": 0, "keys_examined": 0, "bytes_returned": 0}
    cost = daily.call_cost(LESSON, only_trips)
    assert cost.loc["product_page"].tolist() == [1, 3, 1]
    assert "10 per round trip" in daily.weights_text() and "1 per KiB returned" in daily.weights_text()
    with pytest.raises(UnknownChoiceError, match="round_trips"):
        daily.call_cost(LESSON, {"latency_ms": 1})
    with pytest.raises(UnknownChoiceError, match="add_review"):
        daily.cost_ranking(LESSON, STORE, rates={"add_reviews": 5})
    with pytest.raises(UnknownChoiceError):
        daily.crossover_rate(LESSON, STORE, "add_review", "hybrid", "outlier")


def test_the_cost_chart_stacks_operations_per_shape_cheapest_first():
    figure = charts.workload_cost_chart(LESSON, STORE)
    assert figure.layout.legend.title.text == "operation"  # the colours are operations, not shapes
    assert [t.name for t in figure.data] == ["product_page", "add_review"]
    per_second = daily.cost_per_second(LESSON, STORE)
    for trace in figure.data:
        bars = dict(zip(trace.x, trace.y, strict=True))
        assert [bars[s] for s in SHAPES] == pytest.approx(per_second.loc[trace.name, list(SHAPES)].tolist())
    ranking = daily.cost_ranking(LESSON, STORE)
    assert list(figure.layout.xaxis.categoryarray) == list(ranking.index)
    assert [a.text.split(":")[0] for a in figure.layout.annotations] == ["#1", "#2", "#3"]
    assert "offline default (test)" in figure.layout.title.subtitle.text
    assert "10 per round trip" in figure.layout.title.subtitle.text

    flipped = charts.workload_cost_chart(LESSON, STORE, rates={"add_review": 1e5})
    assert flipped.layout.xaxis.categoryarray[0] != ranking.index[0]
    assert "rates changed" in flipped.layout.title.subtitle.text

    docs = charts.workload_cost_chart(LESSON, STORE, "docs_examined")
    bars = {(t.name, x): y for t in docs.data for x, y in zip(t.x, t.y, strict=True)}
    assert bars[("product_page", "referenced")] == pytest.approx(300 * STORE.operation("product_page").per_second)


def test_the_sliders_rerank_the_shapes():
    widget = daily.what_if(LESSON, STORE, chart=False)
    assert list(widget.ranking.index) == ["hybrid", "embedded", "referenced"]
    assert list(widget.sliders) == ["product_page", "add_review"]
    flip = daily.crossover_rate(LESSON, STORE, "add_review", "hybrid", "embedded")
    widget.sliders["add_review"].value = 2 * flip
    assert widget.ranking.index[0] == "embedded"
    widget.reset()
    assert widget.sliders["add_review"].value == STORE.operation("add_review").per_second
    assert widget.ranking.index[0] == "hybrid"
    counted = daily.what_if(LESSON, STORE, "bytes_returned", chart=False)
    assert counted.ranking.index[0] == "hybrid" and "bytes_returned per second" in counted.ranking.columns
    with pytest.raises(UnknownChoiceError):
        daily.what_if(LESSON, STORE, "latency_ms")


@pytest.fixture(scope="module")
def measured():
    store = workbook.generate("store", scale="tiny", seed=7)
    shapes = [workbook.load(store, shape, progress=False) for shape in SHAPES]
    yield run_workload(shapes, operations=["product_page", "add_review"], repeat=2, warmup=1, explain_runs=1)
    for shape in shapes:
        shape.db.client.drop_database(shape.db.name)


def test_on_a_measured_frame_hybrid_leads_until_reviews_outweigh_pages(measured):
    ranking = daily.cost_ranking(measured, STORE)
    assert ranking.index[0] == "hybrid" and ranking.index[-1] == "referenced"
    cost = daily.call_cost(measured).loc["product_page"]
    assert cost["embedded"] > cost["hybrid"]  # the same documents examined, more bytes back
    flip = daily.crossover_rate(measured, STORE, "add_review", "hybrid", "embedded")
    assert flip is not None and flip > STORE.operation("add_review").per_second
    assert daily.cost_ranking(measured, STORE, rates={"add_review": 2 * flip}).index[0] == "embedded"

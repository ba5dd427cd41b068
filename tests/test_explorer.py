"""The shape explorer, driven from code as a learner drives it with clicks."""

from __future__ import annotations

import pytest

import workbook
from workbook.measure import run_workload


@pytest.fixture(scope="module")
def loaded():
    store = workbook.generate("store", scale="tiny", seed=7)
    shapes = [workbook.load(store, shape, progress=False) for shape in ("embedded", "referenced", "hybrid")]
    yield shapes
    for shape in shapes:
        shape.db.client.drop_database(shape.db.name)


def test_toggling_the_shape_redraws_from_cached_runs(loaded):
    measured = []

    def counting_run(shapes, **kwargs):
        measured.append({shape.dataset for shape in shapes})
        return run_workload(shapes, **kwargs)

    from workbook.explorer import ShapeExplorer

    explorer = ShapeExplorer(loaded, repeat=2, warmup=0, measure=counting_run)
    assert "shape <b class='workbook-shape'>hybrid</b>" in explorer.status.value
    assert "IDHACK" in explorer.summary.value and "round trips</th><td>1.0" in explorer.summary.value

    explorer.shape.value = "referenced"
    assert explorer.redraws == 2
    assert "round trips</th><td>3.0" in explorer.summary.value  # product, newest reviews, totals
    assert "reviews" in explorer.sizes.value  # the referenced shape has a reviews collection
    assert explorer.figure.layout.title.text == "Latency of product_page: referenced highlighted"
    opacity = {trace.name: trace.opacity for trace in explorer.figure.data}
    assert opacity["referenced"] == 1.0 and opacity["hybrid"] < 1.0

    assert measured == [{"store"}]  # the product page, measured once; the toggle redrew from the cache
    explorer.operation.value = "my_orders"
    assert explorer.figure.layout.title.text.startswith("Latency of my_orders")
    explorer.shape.value = "hybrid"
    assert measured == [{"store"}, {"store"}]  # one measurement per operation shown, none per toggle


def test_a_dataset_switch_measures_only_the_operation_shown(loaded):
    from workbook.explorer import ShapeExplorer

    operations = []

    def counting_run(shapes, **kwargs):
        operations.append(kwargs.get("operations"))
        return run_workload(shapes, **kwargs)

    explorer = ShapeExplorer(loaded, repeat=1, warmup=0, measure=counting_run)
    assert operations == [["product_page"]]
    assert set(explorer.runs("store")["operation"]) == {"product_page"}


def test_writes_say_so_instead_of_a_plan(loaded):
    from workbook.explorer import ShapeExplorer

    explorer = ShapeExplorer(loaded, repeat=1, warmup=0)
    explorer.operation.value = "add_review"
    assert "a write" in explorer.summary.value


def test_given_runs_are_used_not_remeasured(loaded):
    from workbook.explorer import ShapeExplorer

    runs = run_workload(loaded, repeat=1, warmup=0, explain_runs=0)

    def refuse(*args, **kwargs):
        raise AssertionError("measured again")

    explorer = ShapeExplorer(loaded, runs=runs, measure=refuse)
    explorer.shape.value = "embedded"
    assert explorer.redraws == 2


def test_every_dataset_can_be_picked_and_shows_its_own_operations(loaded):
    from workbook.dataset_parts import workload
    from workbook.explorer import ShapeExplorer
    from workbook.shapes import SHAPE_NAMES

    others = [
        workbook.load(name, shape, scale="tiny", progress=False)
        for name in ("followers", "parts")
        for shape in SHAPE_NAMES
    ]
    try:
        explorer = ShapeExplorer([*loaded, *others], repeat=1, warmup=0)
        shown = explorer.visit("parts")
        assert shown["operations"] == workload("parts").names and shown["drawn"] == list(SHAPE_NAMES)
        assert "<b>parts</b>" in shown["status"] and "product_detail · hybrid" in shown["summary"]
        with pytest.raises(workbook.errors.UnknownChoiceError, match="followers, parts, store"):
            explorer.visit("blog")
        for name in ("followers", "parts", "store"):
            explorer.dataset.value = name
            names = workload(name).names
            assert list(explorer.operation.options) == names and explorer.operation.value == names[0]
            assert f"<b>{name}</b>" in explorer.status.value
            assert explorer.figure.layout.title.text == f"Latency of {names[0]}: hybrid highlighted"
            explorer.operation.value = names[-1]
            explorer.shape.value = "embedded"
            assert f"{names[-1]} · embedded" in explorer.summary.value
            explorer.shape.value = "hybrid"
    finally:
        for shape in others:
            shape.db.client.drop_database(shape.db.name)


def test_the_controls_are_disabled_while_it_measures_and_redraws(loaded):
    from workbook.explorer import ShapeExplorer

    explorer = ShapeExplorer(loaded, repeat=1, warmup=0)
    changes = []
    explorer.shape.observe(lambda change: changes.append(change["new"]), names="disabled")
    explorer.shape.value = "embedded"
    assert changes == [True, False], "disabled during the redraw, enabled after it"
    assert "workbook-busy" not in explorer.status.value and not explorer.shape.disabled

    seen = []

    def watching_run(shapes, **kwargs):
        seen.append(all(control.disabled for control in explorer.controls))
        return run_workload(shapes, **kwargs)

    runs = run_workload(loaded, repeat=1, warmup=0, explain_runs=0)
    explorer = ShapeExplorer(loaded, runs=runs, measure=watching_run)
    messages = []
    explorer.status.observe(lambda change: messages.append(change["new"]), names="value")
    explorer._runs.clear()
    explorer.shape.value = "referenced"
    assert seen == [True], "the controls were disabled while measuring"
    assert any("measuring store" in message and "workbook-busy" in message for message in messages)

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


@pytest.fixture(scope="module")
def others():
    """followers and parts, each in every shape, at tiny."""
    from workbook.shapes import SHAPE_NAMES

    shapes = [
        workbook.load(name, shape, scale="tiny", progress=False)
        for name in ("followers", "parts")
        for shape in SHAPE_NAMES
    ]
    yield shapes
    for shape in shapes:
        shape.db.client.drop_database(shape.db.name)


def test_toggling_the_shape_redraws_from_cached_runs(loaded):
    measured = []

    def counting_run(shapes, **kwargs):
        measured.append(({shape.dataset for shape in shapes}, kwargs["operations"]))
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
    shown = [output for output in explorer.chart.children if output.layout.visibility == "visible"]
    assert len(explorer.chart.children) == 3 and len(shown) == 1  # the browser shows the chart drawn for it
    bundle = shown[0].outputs[0]["data"]["application/vnd.plotly.v1+json"]
    assert bundle["layout"]["title"]["text"] == "Latency of product_page: referenced highlighted"
    drawn = [len(output.outputs) for output in explorer.chart.children]
    explorer.shape.value = "embedded"
    assert [len(output.outputs) for output in explorer.chart.children] == drawn == [1, 1, 1]  # nothing redrawn
    explorer.shape.value = "referenced"

    assert measured == [({"store"}, ["product_page"])]  # only the operation shown; the toggle redrew from the cache
    explorer.operation.value = "my_orders"
    assert explorer.figure.layout.title.text.startswith("Latency of my_orders")
    assert len(explorer.chart.children) == 6  # product_page's three charts stay, hidden
    assert sum(output.layout.visibility == "visible" for output in explorer.chart.children) == 1
    explorer.shape.value = "hybrid"
    explorer.operation.value = "product_page"
    assert measured == [({"store"}, ["product_page"]), ({"store"}, ["my_orders"])]  # each once
    assert explorer.measured == [("store", "product_page"), ("store", "my_orders")]


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


def test_the_controls_are_disabled_while_it_measures_and_redraws(loaded, monkeypatch):
    import workbook.measure as measure
    from workbook.explorer import ShapeExplorer

    monkeypatch.setattr(measure, "_MADE", type(measure._MADE)())  # no runs made by earlier tests

    explorer = ShapeExplorer(loaded, repeat=1, warmup=0)
    changes = []
    explorer.shape.observe(lambda change: changes.append(change["new"]), names="disabled")
    explorer.shape.value = "embedded"
    assert changes == [], "a toggle between drawn charts has nothing to wait for"
    explorer.operation.value = "my_orders"
    assert changes == [True, False] * 3, "disabled while measuring, explaining and drawing, enabled after"
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
    explorer.measured.clear()
    monkeypatch.setattr(measure, "_MADE", type(measure._MADE)())  # forget the runs made above
    explorer.shape.value = "referenced"
    assert seen == [True], "the controls were disabled while measuring"
    assert any("measuring product_page" in message and "workbook-busy" in message for message in messages)
    assert explorer.measured == [("store", "product_page")]


def test_the_first_switch_to_another_dataset_measures_only_the_operation_shown(loaded, others, monkeypatch):
    import workbook.measure as measure
    from workbook.dataset_parts import workload
    from workbook.explorer import ShapeExplorer

    monkeypatch.setattr(measure, "_MADE", type(measure._MADE)())  # no runs made before this test
    calls = []

    def counting_run(shapes, *, on_call, **kwargs):
        def count(done, total):
            calls.append((kwargs["operations"][0], done, total))
            on_call(done, total)

        return run_workload(shapes, on_call=count, **kwargs)

    runs = run_workload(loaded, repeat=1, warmup=0, explain_runs=0, progress=False)
    explorer = ShapeExplorer([*loaded, *others], runs=runs, repeat=2, warmup=1, measure=counting_run)
    assert explorer.measured == [] and calls == []  # the store runs given were used
    progress, messages = [], []
    explorer.progress.observe(lambda change: progress.append(change["new"]), names="value")
    explorer.status.observe(lambda change: messages.append(change["new"]), names="value")

    explorer.dataset.value = "followers"
    first = workload("followers").names[0]
    assert explorer.measured == [("followers", first)]  # one operation, not the dataset's whole workload
    assert [call[1] for call in calls] == list(range(1, 10)) and {call[2] for call in calls} == {9}
    assert {call[0] for call in calls} == {first}  # 3 shapes x (2 timed + 1 warm-up) calls of it, no other
    measuring = progress[: progress.index(1.0) + 1]  # then the bar of explaining it on each shape
    assert measuring == [done / 9 for done in range(10)]  # the bar moved with every call
    shown = [m for m in messages if f"measuring {first} on the 3 shapes of followers" in m]
    assert any("3 of 9 calls" in m and " left" in m for m in shown)  # a count and an estimate while it runs
    assert explorer.progress.layout.display == "none" and not explorer.shape.disabled  # hidden once done

    explorer.shape.value = "embedded"
    explorer.dataset.value = "store"
    explorer.dataset.value = "followers"
    assert explorer.measured == [("followers", first)]  # back and forth: nothing measured again


def test_runs_already_made_on_the_shapes_are_shown_not_remeasured(loaded):
    from workbook.explorer import explore

    run_workload(loaded, operations=["product_page", "my_orders"], repeat=1, warmup=0, explain_runs=1, progress=False)
    explorer = explore(loaded)
    explorer.operation.value = "my_orders"
    assert explorer.measured == []  # explore() without runs= reused what run_workload made
    assert "(1 runs)" in explorer.summary.value


def test_a_dataset_given_by_name_is_loaded_when_picked_and_one_is_held_at_a_time(loaded):
    from workbook.dataset_parts import workload
    from workbook.explorer import ShapeExplorer
    from workbook.namespace import database_name
    from workbook.shapes import SHAPE_NAMES

    client = loaded[0].db.client
    own = workbook.load("followers", "hybrid", scale="tiny", progress=False)  # the learner's own load
    explorer = ShapeExplorer([*loaded, "followers", "parts"], repeat=1, warmup=0, scale="tiny")

    def held() -> set[str]:
        prefix = database_name("explorer") + "_"
        return {name.removeprefix(prefix) for name in client.list_database_names() if name.startswith(prefix)}

    try:
        assert (
            explorer.offered == ["store", "followers", "parts"] and list(explorer.dataset.options) == explorer.offered
        )
        assert set(explorer.loaded) == {"store"} and held() == set()  # nothing loaded before it is picked
        shown = explorer.visit("followers")
        assert set(explorer.loaded) == {"store", "followers"} and shown["drawn"] == list(SHAPE_NAMES)
        assert held() == {f"followers_{shape}" for shape in SHAPE_NAMES}
        assert {loaded.db.name for loaded in explorer.loaded["followers"].values()}.isdisjoint({own.db.name})
        assert all(shape.report.scale == "tiny" for shape in explorer.loaded["followers"].values())
        first = workload("followers").names[0]
        assert explorer.measured == [("followers", first)]

        shown = explorer.visit("parts")  # followers' databases dropped before parts is loaded
        assert set(explorer.loaded) == {"store", "parts"} and held() == {f"parts_{shape}" for shape in SHAPE_NAMES}
        assert shown["operations"] == workload("parts").names and "<b>parts</b>" in shown["status"]
        explorer.visit("store")  # given loaded: held for good, and the named one on show stays
        assert set(explorer.loaded) == {"store", "parts"}

        shown = explorer.visit("followers")  # loaded again; what was measured on it is shown, not measured again
        assert held() == {f"followers_{shape}" for shape in SHAPE_NAMES} and shown["drawn"] == list(SHAPE_NAMES)
        assert [name for name, _ in explorer.measured].count("followers") == 1
        explorer.shape.value = "embedded"  # the reloaded shapes answer the first read of this shape's sizes
        assert "document sizes" in explorer.sizes.value
        assert own.check() is own and own.db.name in client.list_database_names()  # the learner's load untouched
    finally:
        for name in held():
            client.drop_database(f"{database_name('explorer')}_{name}")
        client.drop_database(own.db.name)


def test_starting_on_a_named_dataset_loads_it_at_once():
    from workbook.explorer import ShapeExplorer

    explorer = ShapeExplorer(["parts"], repeat=1, warmup=0, scale="tiny")
    try:
        assert explorer.offered == ["parts"] and set(explorer.loaded["parts"]) == {"embedded", "referenced", "hybrid"}
        assert "<b>parts</b>" in explorer.status.value and explorer.figure is not None
    finally:
        for shape in explorer.loaded["parts"].values():
            shape.db.client.drop_database(shape.db.name)


@pytest.mark.parametrize(
    ("given", "options", "match"),
    [
        (
            ["store", "blog-posts"],
            {},
            "Unknown dataset for the explorer to load 'blog-posts'. Choose from: followers, parts",
        ),
        (["parts", "parts"], {}, "given to the explorer twice"),
        (["parts"], {"dataset": "store"}, "Unknown dataset given to the explorer 'store'. Choose from: parts"),
        (["parts"], {"scale": "huge"}, "Unknown scale 'huge'"),
        ("loaded-and-named", {}, "given to the explorer both loaded and by name"),
    ],
)
def test_bad_datasets_are_refused_by_name_before_anything_loads(loaded, given, options, match):
    from workbook.explorer import ShapeExplorer
    from workbook.namespace import database_name

    given = [*loaded, "store"] if given == "loaded-and-named" else given
    before = set(loaded[0].db.client.list_database_names())
    with pytest.raises(workbook.errors.WorkbookError, match=match):
        ShapeExplorer(given, repeat=1, warmup=0, scale=options.get("scale", "tiny"), dataset=options.get("dataset"))
    after = set(loaded[0].db.client.list_database_names())
    assert after == before and not [name for name in after if name.startswith(database_name("explorer"))]

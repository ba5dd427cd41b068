"""Lesson 13's patterns on the tiny store: tree layouts, attribute, polymorphic, approximation, versioning,
and the schema view."""

from __future__ import annotations

import uuid

import pandas as pd
import pytest

import workbook
from workbook.errors import ArgumentTypeError, UnknownChoiceError, WorkbookError
from workbook.patterns import approximation, attribute, polymorphic, tree, versioning


@pytest.fixture(scope="module")
def store():
    return workbook.generate("store", scale="tiny", seed=7)


@pytest.fixture(scope="module")
def db():
    database = workbook.connect(database=f"t{uuid.uuid4().hex[:8]}", quiet=True)
    yield database
    database.client.drop_database(database.name)


@pytest.fixture(scope="module")
def trees(store, db):
    return tree.load_trees(tree.catalogue_tree(store), db)


# tree


def test_the_catalogue_tree_has_one_root_and_every_parent_before_its_children(store):
    nodes = tree.catalogue_tree(store, extra_levels=2, branching=3)
    seen = set()
    for node in nodes:
        assert node["parentId"] is None or node["parentId"] in seen
        seen.add(node["_id"])
    assert [n["_id"] for n in nodes if n["parentId"] is None] == [tree.ROOT_ID]
    leaves = [c for c in store.collections["categories"] if c["parentId"] is not None]
    tops = len(store.collections["categories"]) - len(leaves)
    assert len(nodes) == 1 + tops + len(leaves) * (1 + 3 + 9)


def test_each_layout_stores_the_same_tree(store):
    nodes = tree.catalogue_tree(store)
    parents = {n["_id"]: n["parentId"] for n in nodes}
    children = tree.tree_documents(nodes, "children")
    assert {c: n["_id"] for n in children for c in n["children"]} == {k: v for k, v in parents.items() if v}
    ancestors = {n["_id"]: n["ancestors"] for n in tree.tree_documents(nodes, "ancestors")}
    paths = {n["_id"]: n["path"] for n in tree.tree_documents(nodes, "path")}
    leaf = "cat-08.2.3"
    assert ancestors[leaf] == [tree.ROOT_ID, "cat-01", "cat-08", "cat-08.2"]
    assert paths[leaf] == ",cat-00,cat-01,cat-08,cat-08.2,"
    assert paths[tree.ROOT_ID] == "," and ancestors[tree.ROOT_ID] == []


def test_every_layout_gives_the_same_subtree_and_path(trees):
    expected_subtree = sorted(n["_id"] for n in trees.nodes if n["_id"].startswith("cat-08."))
    for layout in tree.LAYOUTS:
        assert tree.subtree(trees, layout, "cat-08") == expected_subtree, layout
        assert tree.path_to_root(trees, layout, "cat-08.2.3") == ["cat-08.2", "cat-08", "cat-01", tree.ROOT_ID]
        assert tree.path_to_root(trees, layout, tree.ROOT_ID) == []


def test_tree_work_counts_one_round_trip_per_level_for_references_and_one_for_ancestors(trees):
    work = tree_work = tree.tree_work(trees, "cat-01", "cat-08.2.3").set_index(["layout", "question"])
    depth = trees.depth()
    assert work.loc[("parent", "path to root"), "round_trips"] == depth + 1
    assert work.loc[("children", "path to root"), "round_trips"] == depth + 1
    assert work.loc[("ancestors", "subtree"), "round_trips"] == 1
    assert work.loc[("ancestors", "path to root"), "round_trips"] == 1
    assert work.loc[("path", "subtree"), "round_trips"] == 2
    assert work.loc[("path", "path to root"), "round_trips"] == 1
    assert tree_work.groupby(level="question")["answer"].nunique().eq(1).all()
    # the ancestors index examines one key per node of the subtree
    assert work.loc[("ancestors", "subtree"), "keys_examined"] == work.loc[("ancestors", "subtree"), "nodes"]


def test_tree_refuses_other_layouts_and_datasets(trees):
    with pytest.raises(UnknownChoiceError, match="ancestors"):
        tree.subtree(trees, "nested", "cat-01")
    with pytest.raises(WorkbookError, match="store"):
        tree.catalogue_tree(workbook.generate("followers", scale="tiny", seed=7))


# attribute


def test_attribute_documents_keep_every_spec_as_a_pair(store):
    documents = attribute.attribute_documents(store)
    first, product = documents[0], store.collections["products"][0]
    assert {a["k"]: a["v"] for a in first["attrs"]} == product["specs"]
    assert "specs" not in first and first["name"] == product["name"]


def test_the_field_design_needs_an_index_per_spec_the_attribute_design_one(store, db):
    designs = attribute.load_attribute_designs(store, db)
    counts = attribute.index_counts(designs)
    assert counts.loc["field per attribute", "indexes"] == len(attribute.spec_names(store)) > 10
    assert counts.loc["attribute pattern", "indexes"] == 1
    plans = attribute.attribute_plans(designs, "material", "bamboo")
    truth = sum(1 for p in store.collections["products"] if p["specs"].get("material") == "bamboo")
    assert truth > 0 and plans["returned"].eq(truth).all()
    assert plans.loc["attribute pattern", "index"] == "attrs.k_1_attrs.v_1"
    assert plans.loc["attribute pattern", "keys_examined"] == truth  # k and v bound together by $elemMatch
    ranged = attribute.attribute_plans(designs, "pages", {"$gt": 300})
    assert (
        ranged["returned"].nunique() == 1
        and ranged.loc["attribute pattern", "docs_examined"] == (ranged.loc["attribute pattern", "returned"])
    )


# polymorphic


def test_polymorphic_documents_carry_a_type_and_their_own_fields(store):
    documents = polymorphic.polymorphic_documents(store)
    assert {d["type"] for d in documents} == set(polymorphic.TYPES.values())
    books = [d for d in documents if d["type"] == "books"]
    assert books and all("author" in d and "batteryHours" not in d for d in books)


def test_partial_indexes_hold_one_type_and_need_the_type_in_the_query(store, db):
    catalogue = polymorphic.load_catalogue(store, db)
    entries = polymorphic.partial_index_entries(catalogue)
    assert entries["index_keys"].tolist() == entries["documents"].tolist()
    assert entries["documents"].sum() == len(store.collections["products"])
    author = catalogue.collection.find_one({"type": "books"})["author"]
    plans = polymorphic.type_plans(catalogue, "books", author)
    assert plans.loc["with type", "index"] == "books_author"
    assert plans.loc["without type", "index"] == "none (COLLSCAN)"
    assert plans.loc["without type", "docs_examined"] == len(store.collections["products"])
    with pytest.raises(UnknownChoiceError, match="books"):
        polymorphic.type_plans(catalogue, "book", author)


# approximation


def test_counter_table_trades_writes_for_a_bounded_error():
    table = approximation.counter_table(10_037, (1, 10, 100))
    assert table["writes"].tolist() == [10_037, 1_003, 100]
    assert table.loc[100, "behind"] == 37 and (table["behind"] <= table["behind_at_most"]).all()
    assert table.loc[1, "behind"] == 0 and table.loc[100, "writes_saved_pct"] >= 99
    with pytest.raises(ArgumentTypeError, match="every"):
        approximation.counter_table(10, (0,))


def test_count_views_sends_one_write_per_every_events(db):
    views = approximation.count_views(db, 237, (1, 10, 100))
    assert views["writes_sent"].tolist() == [237, 23, 2]
    assert views["stored"].tolist() == [237, 230, 200]


# versioning


def test_versioned_updates_keep_every_older_version(store, db):
    versioned = versioning.load_versioned(store, db)
    product = store.collections["products"][0]
    assert versioning.update_versioned(versioned, product["_id"], {"price": 1.5}) == 2
    assert versioning.update_versioned(versioned, product["_id"], {"price": 2.5}) == 3
    history = versioning.history_frame(versioned, product["_id"])
    assert history.index.tolist() == [3, 2, 1]
    assert history["price"].tolist() == [2.5, 1.5, product["price"]]
    assert versioning.as_of(versioned, product["_id"], 1)["price"] == product["price"]
    assert versioning.as_of(versioned, product["_id"], 9) is None
    work = versioning.read_work(versioned, product["_id"], 1)
    assert work["round_trips"].tolist() == [1, 2]
    with pytest.raises(WorkbookError, match="No product"):
        versioning.update_versioned(versioned, "prod-none", {"price": 1})


# schema view


def test_schema_view_counts_types_missing_fields_and_array_lengths(store, db):
    catalogue = polymorphic.load_catalogue(store, db)
    view = workbook.schema_view(catalogue.collection)
    products = len(store.collections["products"])
    author = view[view["field"] == "author"].iloc[0]
    books = sum(1 for d in polymorphic.polymorphic_documents(store) if d["type"] == "books")
    assert (author["type"], author["documents"], author["missing"]) == ("string", books, products - books)
    designs = attribute.load_attribute_designs(store, db)
    attrs = workbook.schema_view(designs.db, [attribute.ATTRIBUTES]).set_index("field").loc["attrs"]
    lengths = [len(p["specs"]) for p in store.collections["products"]]
    assert (attrs["type"], attrs["min_length"], attrs["max_length"]) == ("array", min(lengths), max(lengths))
    assert attrs["missing"] == 0 and attrs["share_pct"] == 100.0
    with pytest.raises(UnknownChoiceError, match="catalogue"):
        workbook.schema_view(db, ["nope"])


def test_schema_view_shares_add_up_to_the_documents_that_have_the_field(store, db):
    catalogue = polymorphic.load_catalogue(store, db)
    view = workbook.schema_view(catalogue.collection)
    per_field = view.groupby("field").agg(documents=("documents", "sum"), missing=("missing", "first"))
    assert (per_field["documents"] + per_field["missing"] == len(store.collections["products"])).all()


def test_schema_chart_has_a_bar_per_type_and_one_for_missing(store, db):
    catalogue = polymorphic.load_catalogue(store, db)
    view = workbook.schema_view(catalogue.collection)
    figure = workbook.charts.schema_chart(view)
    names = {trace.name for trace in figure.data}
    assert set(view["type"]) | {"missing"} == names
    labels = {y for trace in figure.data for y in trace.y}
    assert labels == set("catalogue · " + view["field"])
    sizes = view[view["field"] == "sizes"].iloc[0]
    array = next(trace for trace in figure.data if trace.name == "array")
    assert list(array.text) == [f"length {int(sizes['min_length'])}-{int(sizes['max_length'])}"]
    assert isinstance(view, pd.DataFrame)

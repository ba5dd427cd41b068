"""The attribute pattern (lesson 13): a product's specs as ``[{k, v}]`` pairs under one compound index.

The store's products carry specs that differ by kind (a laptop's ``batteryHours``, a book's
``pages``). Queried as fields, every spec a learner may filter on needs an index of its own,
``{"specs.<name>": 1}``, and a new kind of product brings new indexes. Stored as pairs,
``attrs: [{k: "pages", v: 412}, ...]``, one multikey index ``{"attrs.k": 1, "attrs.v": 1}`` serves
a filter on any spec, if the query keeps ``k`` and ``v`` in one array element with ``$elemMatch``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd
from pymongo import ASCENDING
from pymongo.database import Database

from workbook.errors import WorkbookError
from workbook.patterns.work import explain_row, load_steps
from workbook.shapes.spec import Document

FIELDS = "products_fields"
"""The field-per-attribute design: the store's products as they are, one index per spec."""

ATTRIBUTES = "products_attrs"
"""The attribute pattern: the specs as ``attrs: [{k, v}]``, one compound index."""

ATTRIBUTE_INDEX = [("attrs.k", ASCENDING), ("attrs.v", ASCENDING)]


def _products(dataset: Any) -> list[Document]:
    collections = getattr(dataset, "collections", None)
    if getattr(dataset, "name", None) != "store" or not collections or "products" not in collections:
        raise WorkbookError(
            "The attribute pattern is built from the store's products.",
            fix='Pass workbook.generate("store", scale=workbook.course_scale(), seed=7).',
        )
    return list(dataset.documents("products"))


def spec_names(dataset: Any) -> list[str]:
    """Every spec name any product has, sorted (pure)."""
    return sorted({name for product in _products(dataset) for name in product.get("specs", {})})


def attribute_documents(dataset: Any) -> list[Document]:
    """The products with ``specs`` turned into ``attrs: [{k, v}]``, in the specs' order (pure)."""
    rows = []
    for product in _products(dataset):
        specs = product.get("specs", {})
        rest = {key: value for key, value in product.items() if key != "specs"}
        rows.append({**rest, "attrs": [{"k": k, "v": v} for k, v in specs.items()]})
    return rows


def attribute_filter(name: str, value: Any) -> dict[str, Any]:
    """The attribute pattern's filter for ``specs.<name> == value`` (or an operator dict such as ``{"$gt": 3}``)."""
    return {"attrs": {"$elemMatch": {"k": name, "v": value}}}


@dataclass
class AttributeDesigns:
    """The store's products in both designs, in ``db``: ``products_fields`` and ``products_attrs``."""

    db: Database
    specs: list[str]

    def __repr__(self) -> str:
        return f"<products by field and by attribute ({len(self.specs)} spec names) in {self.db.name}>"


def load_attribute_designs(dataset: Any, db: Database | None = None, *, progress: bool = True) -> AttributeDesigns:
    """Load both designs with the indexes each needs (default database: ``workbench_<learner>_patterns_attribute``)."""
    from workbook.connection import connect
    from workbook.loading import fill
    from workbook.namespace import require_own_database

    names = spec_names(dataset)
    with load_steps("load the attribute designs", 4, progress) as bar:
        db = db if db is not None else connect(database="patterns_attribute", quiet=True)
        require_own_database(db.name)
        bar.update()
        for collection in (FIELDS, ATTRIBUTES):
            db.drop_collection(collection)
        for name in names:  # a filter on any spec must not scan the collection: one index per spec
            db[FIELDS].create_index([(f"specs.{name}", ASCENDING)], name=f"specs.{name}_1")
        db[ATTRIBUTES].create_index(ATTRIBUTE_INDEX, name="attrs.k_1_attrs.v_1")
        bar.update()
        fill(db, FIELDS, _products(dataset))
        bar.update()
        fill(db, ATTRIBUTES, attribute_documents(dataset))
        bar.update()
    return AttributeDesigns(db, names)


def index_counts(designs: AttributeDesigns) -> pd.DataFrame:
    """Per design: the secondary indexes it holds (``_id`` aside), read from the database."""
    rows = []
    for design, collection in (("field per attribute", FIELDS), ("attribute pattern", ATTRIBUTES)):
        names = [i["name"] for i in designs.db[collection].list_indexes() if i["name"] != "_id_"]
        rows.append({"design": design, "collection": collection, "indexes": len(names), "first": names[0]})
    return pd.DataFrame(rows).set_index("design")


def attribute_plans(designs: AttributeDesigns, name: str, value: Any) -> pd.DataFrame:
    """Per design, the plan of the filter ``specs.<name> == value``: index, keys and documents examined, returned."""
    rows = []
    filters = (
        ("field per attribute", FIELDS, {f"specs.{name}": value}),
        ("attribute pattern", ATTRIBUTES, attribute_filter(name, value)),
    )
    for design, collection, query in filters:
        rows.append({"design": design, **explain_row(designs.db[collection], query)})
    return pd.DataFrame(rows).set_index("design")

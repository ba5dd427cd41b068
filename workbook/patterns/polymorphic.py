"""The polymorphic pattern (lesson 13): products of six kinds in one collection, told apart by ``type``.

Each kind keeps its own fields at the top level (a book's ``author`` and ``pages``, a laptop's
``batteryHours``); reads that span kinds (a department page, search by name or price) read one
collection. An index on a field only one kind has gets a **partial** index filtered on that kind,
``{author: 1}`` where ``{type: "books"}``: it holds an entry per book, not one per product, and the
planner uses it only for a query that says ``type: "books"`` too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd
from pymongo import ASCENDING
from pymongo.database import Database

from workbook.errors import UnknownChoiceError, WorkbookError
from workbook.explaining import explain
from workbook.patterns.work import explain_row, load_steps
from workbook.shapes.spec import Document

COLLECTION = "catalogue"

TYPES = {
    "Books": "books",
    "Clothing": "clothing",
    "Electronics": "electronics",
    "Home & Kitchen": "home",
    "Sports": "sports",
    "Toys": "toys",
}
"""Store department -> the ``type`` its products get."""

TYPE_FIELDS = {
    "books": "author",
    "clothing": "material",
    "electronics": "batteryHours",
    "home": "widthCm",
    "sports": "level",
    "toys": "ageMin",
}
"""The field each type is filtered on, and gets a partial index for."""


def polymorphic_documents(dataset: Any) -> list[Document]:
    """The store's products with ``type`` (their department) and their specs as top-level fields (pure)."""
    collections = getattr(dataset, "collections", None)
    if getattr(dataset, "name", None) != "store" or not collections or "categories" not in collections:
        raise WorkbookError(
            "The polymorphic catalogue is built from the store's products.",
            fix='Pass workbook.generate("store", scale=workbook.course_scale(), seed=7).',
        )
    categories = {c["_id"]: c for c in dataset.documents("categories")}

    def department(category_id: str) -> str:
        category = categories[category_id]
        return category["name"] if category.get("parentId") is None else department(category["parentId"])

    rows = []
    for product in dataset.documents("products"):
        kind = TYPES[department(product["category"]["_id"])]
        rest = {key: value for key, value in product.items() if key != "specs"}
        rows.append({"_id": rest.pop("_id"), "type": kind, **rest, **product.get("specs", {})})
    return rows


def partial_index_name(kind: str) -> str:
    """The name of ``kind``'s partial index."""
    return f"{kind}_{TYPE_FIELDS[kind]}"


@dataclass
class Catalogue:
    """The polymorphic catalogue, loaded into ``db``."""

    db: Database

    @property
    def collection(self) -> Any:
        """The one collection every type shares."""
        return self.db[COLLECTION]

    def __repr__(self) -> str:
        return f"<polymorphic catalogue of {len(TYPES)} types in {self.db.name}.{COLLECTION}>"


def load_catalogue(dataset: Any, db: Database | None = None, *, progress: bool = True) -> Catalogue:
    """Load the catalogue with one partial index per type (default: ``workbench_<learner>_patterns_polymorphic``)."""
    from workbook.connection import connect
    from workbook.loading import fill
    from workbook.namespace import require_own_database

    with load_steps("load the polymorphic catalogue", 3, progress) as bar:
        db = db if db is not None else connect(database="patterns_polymorphic", quiet=True)
        require_own_database(db.name)
        bar.update()
        db.drop_collection(COLLECTION)
        for kind, field in TYPE_FIELDS.items():
            db[COLLECTION].create_index(
                [(field, ASCENDING)], name=partial_index_name(kind), partialFilterExpression={"type": kind}
            )
        bar.update()
        fill(db, COLLECTION, polymorphic_documents(dataset))
        bar.update()
    return Catalogue(db)


def partial_index_entries(catalogue: Catalogue) -> pd.DataFrame:
    """Per type: its documents, and the keys a whole scan of its partial index examines (explain, hinted)."""
    rows = []
    for kind in TYPE_FIELDS:
        name = partial_index_name(kind)
        summary = explain(catalogue.collection, {"type": kind}, hint=name).summary()
        rows.append(
            {
                "type": kind,
                "index": name,
                "index_keys": summary["keysExamined"],
                "documents": catalogue.collection.count_documents({"type": kind}),
            }
        )
    return pd.DataFrame(rows).set_index("type")


def type_plans(catalogue: Catalogue, kind: str, value: Any) -> pd.DataFrame:
    """The filter on ``kind``'s field with and without ``type``: the index used, keys and documents examined."""
    if kind not in TYPE_FIELDS:
        raise UnknownChoiceError("type", kind, TYPE_FIELDS)
    field = TYPE_FIELDS[kind]
    rows = []
    for label, query in (("with type", {"type": kind, field: value}), ("without type", {field: value})):
        rows.append({"query": label, **explain_row(catalogue.collection, query)})
    return pd.DataFrame(rows).set_index("query")

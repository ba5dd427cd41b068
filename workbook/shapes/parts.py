"""Products built from shared parts, in three shapes: where a part's facts live.

- embedded: each product holds full copies of its parts (``partId``, ``name``, ``sku``,
  ``supplier``, ``cost`` and the ``quantity`` it uses). One read per product; a rename rewrites
  every product that uses the part. There is no ``parts`` collection: a part lives only inside the
  products that use it, so a part no product uses has nowhere to live (77 of 8,000 at the small
  scale are missing from this shape).
- referenced: products hold ``parts: [{partId, quantity}]``, resolved with ``$lookup`` on
  ``parts._id``; the ``_id`` index is all the lookup needs, so ``parts`` gets no extra index for it.
  A rename rewrites one document.
- hybrid: products hold ``parts: [{partId, name, quantity}]``: the name is copied (extended
  reference) so a product lists its parts by name without a lookup; ``sku``, ``supplier`` and
  ``cost`` are read through ``$lookup``. :data:`DUPLICATION_POLICY` says how the copy is kept.

Renames: the generator applies every rename event before it writes ``parts``, so ``parts.name`` is
each part's current name, products refer to parts only by id, and the copies the embedded and
hybrid builders make are current at load time. ``renames`` is the history of those events,
loaded as-is in every shape; ``rename_part`` appends to it in every shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from workbook.shapes.spec import CollectionSpec, Document, IndexSpec, Made, ShapeSpec, json_schema

if TYPE_CHECKING:
    from workbook.datasets import Dataset

PART_FACTS = ("name", "sku", "supplier", "cost")
"""What a part is, beyond its id: copied whole into products by the embedded shape."""

DUPLICATION_POLICY: dict[str, Any] = {
    "copied": ("name",),
    "into": "products.parts[].name",
    "source_of_truth": "parts.name",
    "not_copied": {
        "sku": "read through $lookup: shown only on the product detail page",
        "supplier": "read through $lookup: changes with purchasing, not with the product",
        "cost": "read through $lookup: changes often, and the bill of materials must use today's cost",
    },
    "refreshed": (
        "rename_part rewrites the copies in the same transaction as the part "
        "(refresh_part_names(db, [part_id]), using the multikey index parts.partId); "
        "after any other write to parts.name, run refresh_part_names(db) to repair every copy"
    ),
    "staleness": (
        "none through rename_part; a direct write to parts.name leaves copies stale until "
        "refresh_part_names runs: tolerable for a display name, never for a cost"
    ),
}
"""The hybrid shape's written rule for the one field it copies from ``parts`` into products."""

_MONEY = {"bsonType": ["double", "int", "long", "decimal"], "minimum": 0}
_QUANTITY = {"bsonType": ["int", "long"], "minimum": 1}
_PART_FIELDS: dict[str, Any] = {
    "name": {"bsonType": "string", "minLength": 1},
    "sku": {"bsonType": "string"},
    "supplier": {"bsonType": "string"},
    "cost": _MONEY,
}

PART_PRODUCTS = IndexSpec(
    (("parts.partId", 1),),
    "part_products",
    "multikey: which products use a part (and, when a part's copies must change, which products to rewrite)",
)
PARTS = CollectionSpec(
    "parts",
    (IndexSpec((("sku", 1),), "sku_unique", "a part is ordered by its SKU; no two parts share one", unique=True),),
    json_schema(list(PART_FACTS), _PART_FIELDS),
)
RENAMES = CollectionSpec(
    "renames",
    (IndexSpec((("partId", 1), ("renamedAt", -1)), "part_history", "a part's renames, newest first"),),
    json_schema(
        ["partId", "oldName", "newName", "renamedAt"],
        {
            "partId": {"bsonType": "string"},
            "oldName": {"bsonType": "string"},
            "newName": {"bsonType": "string"},
            "renamedAt": {"bsonType": "date"},
        },
    ),
)


def _products(line_fields: dict[str, Any]) -> CollectionSpec:
    """Products whose ``parts`` lines carry ``line_fields`` besides ``partId`` and ``quantity``."""
    line = {"partId": {"bsonType": "string"}, **line_fields, "quantity": _QUANTITY}
    return CollectionSpec(
        "products",
        (PART_PRODUCTS,),
        json_schema(
            ["name", "parts"],
            {
                "name": {"bsonType": "string"},
                "parts": {
                    "bsonType": "array",
                    "minItems": 1,
                    "items": {"bsonType": "object", "required": list(line), "properties": line},
                },
            },
        ),
    )


def _parts_by_id(dataset: Dataset) -> dict[str, Document]:
    return {part["_id"]: part for part in dataset.documents("parts")}


def _with_lines(dataset: Dataset, fields: tuple[str, ...]) -> Made:
    """Products whose lines copy ``fields`` from each part, in the product's part order (each made as it is read)."""
    copied = {identifier: {f: part[f] for f in fields} for identifier, part in _parts_by_id(dataset).items()}

    def with_lines(product: Document) -> Document:
        lines = [
            {"partId": line["partId"], **copied[line["partId"]], "quantity": line["quantity"]}
            for line in product["parts"]
        ]
        return {**product, "parts": lines}

    return Made(dataset.documents("products"), with_lines)


def build_embedded(dataset: Dataset) -> dict[str, Sequence[Document]]:
    """Every product holds full copies of its parts; no parts collection."""
    return {"products": _with_lines(dataset, PART_FACTS), "renames": list(dataset.documents("renames"))}


def build_referenced(dataset: Dataset) -> dict[str, Sequence[Document]]:
    """Products hold part ids and quantities; parts in their own collection."""
    return {
        "products": list(dataset.documents("products")),
        "parts": list(dataset.documents("parts")),
        "renames": list(dataset.documents("renames")),
    }


def build_hybrid(dataset: Dataset) -> dict[str, Sequence[Document]]:
    """Parts in their own collection; products hold each part's id, a copy of its name, and the quantity."""
    return {
        "products": _with_lines(dataset, DUPLICATION_POLICY["copied"]),
        "parts": list(dataset.documents("parts")),
        "renames": list(dataset.documents("renames")),
    }


def shapes() -> dict[str, ShapeSpec]:
    """The parts dataset's three shapes."""
    copied = {field: _PART_FIELDS[field] for field in DUPLICATION_POLICY["copied"]}
    return {
        "embedded": ShapeSpec(
            "parts",
            "embedded",
            "every part copied whole into each product: one read per product, a rename rewrites them all",
            (_products(_PART_FIELDS), RENAMES),
            build_embedded,
        ),
        "referenced": ShapeSpec(
            "parts",
            "referenced",
            "products hold part ids: a rename is one write, every product read needs a $lookup",
            (_products({}), PARTS, RENAMES),
            build_referenced,
        ),
        "hybrid": ShapeSpec(
            "parts",
            "hybrid",
            "products hold part ids plus a copy of each part's name (extended reference), refreshed on rename",
            (_products(copied), PARTS, RENAMES),
            build_hybrid,
        ),
    }

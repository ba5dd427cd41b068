"""The parts dataset's operations in each shape: same names, same logical answers.

Reads answer alike in every shape. ``rename_part`` returns how many documents had to be rewritten
to carry the new name, and that number is the lesson: one part in the referenced shape, every
product using the part in the embedded shape, the part plus its copies in the hybrid shape. Every
shape also appends the rename to ``renames`` (not counted).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from bson import ObjectId
from pymongo.client_session import ClientSession
from pymongo.database import Database

from workbook.errors import OperationRejectedError
from workbook.operations.base import Operations, bson_time
from workbook.shapes.parts import DUPLICATION_POLICY, PART_FACTS
from workbook.shapes.spec import Document

SCAN_BATCH = 1_000
"""Documents per batch when every product is read: the kernel decodes one batch at a time. Without it the
batches after the first are 16 MiB of BSON, and 40,000 parts/hybrid products' lines (13.4 MiB) were decoded
at once into 94 MiB of dicts."""


def refresh_part_names(
    db: Database, part_ids: Iterable[str] | None = None, *, session: ClientSession | None = None
) -> int:
    """Rewrite stale copies of part names in a hybrid shape's products; returns the product updates made.

    With ``part_ids``, only those parts' copies are checked; without, every copy is compared with
    ``parts`` (one scan of each collection) and only the stale ones are rewritten. Each rewrite is one
    ``update_many`` found through the multikey index ``parts.partId``.
    """
    query: Document = {} if part_ids is None else {"_id": {"$in": list(part_ids)}}
    names = {part["_id"]: part["name"] for part in db.parts.find(query, {"name": 1}, session=session)}
    if part_ids is None:
        stale = {
            line["partId"]
            for product in db.products.find(
                {}, {"parts.partId": 1, "parts.name": 1}, session=session, batch_size=SCAN_BATCH
            )
            for line in product.get("parts", [])
            if line["partId"] in names and line.get("name") != names[line["partId"]]
        }
    else:
        stale = set(names)
    rewritten = 0
    for part_id in sorted(stale):
        name = names[part_id]
        result = db.products.update_many(
            _stale_lines(part_id, name),
            {"$set": {"parts.$[line].name": name}},
            array_filters=[{"line.partId": part_id}],
            session=session,
        )
        rewritten += result.modified_count
    return rewritten


def _stale_lines(part_id: str, name: str) -> Document:
    """The products holding a line of ``part_id`` whose copied name is not ``name``.

    The ``$elemMatch`` alone says it; the equality on ``parts.partId`` beside it (implied by the
    ``$elemMatch``, so the same documents match) names the multikey index's path directly, which
    the offline default needs to use the index instead of reading every product.
    """
    return {"parts.partId": part_id, "parts": {"$elemMatch": {"partId": part_id, "name": {"$ne": name}}}}


def _line(part: Document | None, line: Document) -> Document:
    """One line of a product detail: the part's facts (None if the part is missing) and the quantity."""
    part = part or {}
    return {"partId": line["partId"], **{f: part.get(f) for f in PART_FACTS}, "quantity": line["quantity"]}


def _cost_pipeline(product_id: str, *, lookup: bool) -> list[Document]:
    """Sum of cost x quantity over a product's lines, the cost read from the line or from ``parts``."""
    stages: list[Document] = [{"$match": {"_id": product_id}}, {"$unwind": "$parts"}]
    cost = "$parts.cost"
    if lookup:
        stages += [
            {"$lookup": {"from": "parts", "localField": "parts.partId", "foreignField": "_id", "as": "part"}},
            {"$unwind": "$part"},
        ]
        cost = "$part.cost"
    return [*stages, {"$group": {"_id": "$_id", "total": {"$sum": {"$multiply": [cost, "$parts.quantity"]}}}}]


class PartsOperations(Operations):
    """Operations shared by the parts dataset's shapes."""

    dataset = "parts"
    NAMES = ("product_detail", "products_using_part", "rename_part", "bill_of_materials_cost")
    _costs_by_lookup = True  # cost is read from parts, not from the product's lines
    _where_parts_are = "Pick a part id from db.parts."

    def product_detail(self, product_id: str) -> Document | None:
        """A product with each part's name, sku, supplier, cost and quantity, in the product's order."""
        raise NotImplementedError  # each shape answers it its own way

    def products_using_part(self, part_id: str) -> list[str]:
        """Ids of the products that use a part, sorted (multikey index ``part_products``)."""
        cursor = self.db.products.find({"parts.partId": part_id}, {"_id": 1}).sort("_id", 1)
        return [product["_id"] for product in cursor]

    def bill_of_materials_cost(self, product_id: str) -> float | None:
        """The product's total part cost: the sum of cost x quantity, rounded to cents."""
        rows = list(self.db.products.aggregate(_cost_pipeline(product_id, lookup=self._costs_by_lookup)))
        return round(rows[0]["total"], 2) if rows else None

    def rename_part(self, part_id: str, new_name: str, *, now: datetime | None = None) -> int:
        """Give a part a new name everywhere it is stored; returns how many documents were rewritten."""
        if not isinstance(new_name, str) or not new_name.strip():
            raise OperationRejectedError(
                f"A part name is non-empty text, not {new_name!r}.", fix="Pass new_name='...'."
            )
        old_name = self._current_name(part_id)
        if old_name is None:
            raise OperationRejectedError(f"No part {part_id!r} in {self.db.name}.", fix=self._where_parts_are)
        if old_name == new_name:
            return 0
        event = {
            "_id": f"rename-{ObjectId()}",
            "partId": part_id,
            "oldName": old_name,
            "newName": new_name,
            "renamedAt": bson_time(now),
        }

        def rewrite_and_record(session: ClientSession | None) -> int:
            rewritten = self._write_name(part_id, new_name, session)
            self.db.renames.insert_one(event, session=session)
            return rewritten

        return self.in_transaction(rewrite_and_record)

    def _current_name(self, part_id: str) -> str | None:
        part = self.db.parts.find_one({"_id": part_id}, {"name": 1})
        return None if part is None else str(part["name"])

    def _write_name(self, part_id: str, new_name: str, session: ClientSession | None) -> int:
        raise NotImplementedError

    def _detail_by_lookup(self, product_id: str, copied: tuple[str, ...]) -> Document | None:
        """The product and its parts from ``parts`` via ``$lookup``; ``copied`` fields come from the line."""
        pipeline: list[Document] = [
            {"$match": {"_id": product_id}},
            {"$lookup": {"from": "parts", "localField": "parts.partId", "foreignField": "_id", "as": "partDocs"}},
        ]
        product = next(self.db.products.aggregate(pipeline), None)
        if product is None:
            return None
        found = {part["_id"]: part for part in product.pop("partDocs")}
        lines = []
        for line in product["parts"]:
            part: dict[str, Any] | None = found.get(line["partId"])
            lines.append(_line(None if part is None else {**part, **{f: line[f] for f in copied}}, line))
        return {**product, "parts": lines}


class PartsEmbedded(PartsOperations):
    """Full part copies inside each product; no parts collection."""

    shape = "embedded"
    _costs_by_lookup = False
    _where_parts_are = "In the embedded shape a part exists only inside products: pick one from db.products."

    def product_detail(self, product_id: str) -> Document | None:
        """One read: every line already holds the part's facts."""
        product = self.db.products.find_one({"_id": product_id})
        if product is None:
            return None
        return {**product, "parts": [_line(line, line) for line in product["parts"]]}

    def _current_name(self, part_id: str) -> str | None:
        product = self.db.products.find_one({"parts.partId": part_id}, {"parts.$": 1})
        return None if product is None else str(product["parts"][0]["name"])

    def _write_name(self, part_id: str, new_name: str, session: ClientSession | None) -> int:
        """Rewrite the part's line in every product that embeds it."""
        result = self.db.products.update_many(
            _stale_lines(part_id, new_name),
            {"$set": {"parts.$[line].name": new_name}},
            array_filters=[{"line.partId": part_id}],
            session=session,
        )
        return result.modified_count


class PartsReferenced(PartsOperations):
    """Products hold part ids; parts in their own collection."""

    shape = "referenced"

    def product_detail(self, product_id: str) -> Document | None:
        """One aggregation: the product, then ``$lookup`` of its parts on ``parts._id``."""
        return self._detail_by_lookup(product_id, ())

    def _write_name(self, part_id: str, new_name: str, session: ClientSession | None) -> int:
        """One document: the part."""
        return self.db.parts.update_one({"_id": part_id}, {"$set": {"name": new_name}}, session=session).modified_count


class PartsHybrid(PartsOperations):
    """Products hold part ids plus a copy of each name (see ``DUPLICATION_POLICY``)."""

    shape = "hybrid"

    def product_detail(self, product_id: str) -> Document | None:
        """Names from the product's own copies; sku, supplier and cost through ``$lookup``."""
        return self._detail_by_lookup(product_id, tuple(DUPLICATION_POLICY["copied"]))

    def _write_name(self, part_id: str, new_name: str, session: ClientSession | None) -> int:
        """The part, then every stale copy of its name (same transaction)."""
        changed = self.db.parts.update_one({"_id": part_id}, {"$set": {"name": new_name}}, session=session)
        return changed.modified_count + refresh_part_names(self.db, [part_id], session=session)


OPERATIONS: dict[str, type[PartsOperations]] = {
    "embedded": PartsEmbedded,
    "referenced": PartsReferenced,
    "hybrid": PartsHybrid,
}
"""Each shape's class, as registered in :mod:`workbook.datasets.registry`."""

__all__ = ["OPERATIONS", "PartsEmbedded", "PartsHybrid", "PartsOperations", "PartsReferenced", "refresh_part_names"]

"""Workloads as data: each dataset's operations, how often they run, and what they need.

Design starts from this table ("list the operations first"): a shape is good or bad only for a
workload. Each operation also knows how to pick realistic arguments from a loaded database, so
the same seeded sequence of calls can be replayed against every shape.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, Literal

import pandas as pd
from pymongo.database import Database

from workbook.engine_reads import derived, field_values, stored_documents
from workbook.errors import UnknownChoiceError

PER_HOUR = 1 / 3600
PER_DAY = 1 / 86400

Args = tuple[tuple[Any, ...], dict[str, Any]]


class Pools:
    """Ids to draw arguments from, read once from a loaded database."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._cache: dict[Any, Any] = {}

    def ids(self, collection: str, field: str = "_id") -> list[Any]:
        """Sorted distinct values of ``field`` in ``collection`` (cached)."""
        key = (collection, field)
        if key not in self._cache:
            compute = lambda: sorted(self._distinct(collection, field))  # noqa: E731
            self._cache[key] = derived(self.db, (collection,), ("ids", field), compute)
        return self._cache[key]

    def _distinct(self, collection: str, field: str) -> set[Any] | list[Any]:
        stored = stored_documents(self.db, collection)
        if stored is not None:  # offline: the engine's decoded documents, no query through the wire
            try:
                return {v for document in stored for v in field_values(document, field) if v is not None}
            except TypeError:  # an unhashable value (an array inside an array): let the server group
                pass
        # $group, not distinct(): mongoeco's distinct compares every pair of values (O(n^2)).
        # $unwind: a path through an array (parts.partId) yields each element, a plain value itself.
        groups = self.db[collection].aggregate(
            [{"$project": {"v": f"${field}"}}, {"$unwind": "$v"}, {"$group": {"_id": "$v"}}]
        )
        return [row["_id"] for row in groups if row["_id"] is not None]

    def review_counts(self) -> dict[Any, int]:
        """Reviews per product id, counted the same way in every shape of the store."""
        referenced = "reviews" in self.db.list_collection_names()
        stored = stored_documents(self.db, "reviews" if referenced else "products")
        if stored is not None:
            if referenced:
                return dict(Counter(document.get("productId") for document in stored))
            return {document["_id"]: len(document.get("reviews") or []) for document in stored}
        if referenced:
            rows = self.db.reviews.aggregate([{"$group": {"_id": "$productId", "n": {"$sum": 1}}}])
        else:  # embedded: the reviews are inside the products
            rows = self.db.products.aggregate([{"$project": {"n": {"$size": {"$ifNull": ["$reviews", []]}}}}])
        return {row["_id"]: row["n"] for row in rows}

    def popular_product(self, rng: random.Random) -> Any:
        """A product drawn by popularity: weighted by its reviews (+1), counted the same in every shape."""
        if "popularity" not in self._cache:
            reads = ("reviews", "products")
            counts = derived(self.db, reads, "review_counts", self.review_counts)
            products = self.ids("products")
            # Cumulative weights once, not per call: the same draws as weights=, in O(log n) a call.
            self._cache["popularity"] = (products, list(accumulate(counts.get(p, 0) + 1 for p in products)))
        products, cumulative = self._cache["popularity"]
        return rng.choices(products, cum_weights=cumulative)[0]

    def pick(self, rng: random.Random, collection: str, field: str = "_id") -> Any:
        """One value, uniformly."""
        values = self.ids(collection, field)
        if not values:
            raise UnknownChoiceError(f"value of {collection}.{field} (the collection is empty)", "", [])
        return values[rng.randrange(len(values))]


@dataclass(frozen=True)
class OperationSpec:
    """One row of a workload table."""

    name: str
    kind: Literal["read", "write"]
    per_second: float
    needs: str
    arguments: Callable[[Pools, random.Random], Args]
    filter: str = ""
    """What the operation selects by (seed 001: "record filters, sorts, result sizes")."""
    sort: str = ""
    returns: str = ""

    @property
    def per_day(self) -> float:
        """How many times a day it runs."""
        return self.per_second * 86400

    @property
    def rate(self) -> str:
        """The frequency as people say it: '2,000/s', '3/hour', '1/day'.

        >>> OperationSpec("x", "read", 3 * PER_HOUR, "", lambda p, r: ((), {})).rate
        '3/hour'
        """
        for unit, seconds in (("s", 1), ("min", 60), ("hour", 3600), ("day", 86400)):
            count = self.per_second * seconds
            if count >= 1:
                return f"{count:,.0f}/{unit}" if count == round(count) else f"{count:,.1f}/{unit}"
        return f"{self.per_day:.2g}/day"


@dataclass(frozen=True)
class Workload:
    """A dataset's operations with their frequencies."""

    dataset: str
    operations: tuple[OperationSpec, ...]

    @property
    def names(self) -> list[str]:
        """Operation names, most frequent first."""
        return [op.name for op in self.operations]

    def operation(self, name: str) -> OperationSpec:
        """The row called ``name`` (errors list the valid names)."""
        for op in self.operations:
            if op.name == name:
                return op
        raise UnknownChoiceError(f"{self.dataset} operation", name, self.names)

    def table(self) -> pd.DataFrame:
        """The workload table: operation, type, frequency per second and per day, what it needs."""
        return pd.DataFrame(
            [
                {
                    "operation": op.name,
                    "type": op.kind,
                    "rate": op.rate,
                    "per_second": op.per_second,
                    "per_day": op.per_day,
                    "needs": op.needs,
                }
                for op in self.operations
            ]
        ).set_index("operation")

    def query_table(self) -> pd.DataFrame:
        """The workload as its queries: rate, what each filters and sorts by, what it returns."""
        rows = [
            {
                "operation": op.name,
                "rate": op.rate,
                "type": op.kind,
                "filter": op.filter or "-",
                "sort": op.sort or "-",
                "returns": op.returns or op.needs,
            }
            for op in self.operations
        ]
        return pd.DataFrame(rows).set_index("operation")

    def weights(self) -> dict[str, float]:
        """Each operation's share of all operations (for a weighted mix)."""
        total = sum(op.per_second for op in self.operations)
        return {op.name: op.per_second / total for op in self.operations}


def store_workload() -> Workload:
    """The store's workload: product pages dominate, prices change a few times an hour."""

    def product(pools: Pools, rng: random.Random) -> Args:
        return (pools.popular_product(rng),), {}  # popular products are viewed more

    def category(pools: Pools, rng: random.Random) -> Args:
        return (pools.pick(rng, "products", "category._id"),), {"page": rng.randrange(3)}

    def order(pools: Pools, rng: random.Random) -> Args:
        items = [(pools.pick(rng, "products"), 1) for _ in range(1 + rng.randrange(3))]
        return (pools.pick(rng, "customers"), list(dict(items).items())), {}

    def customer(pools: Pools, rng: random.Random) -> Args:
        return (pools.pick(rng, "orders", "customerId"),), {}

    def review(pools: Pools, rng: random.Random) -> Args:
        return (
            pools.pick(rng, "products"),
            pools.pick(rng, "customers"),
            1 + rng.randrange(5),
            "Measured by the workbench.",
        ), {}

    def price(pools: Pools, rng: random.Random) -> Args:
        return (pools.pick(rng, "products"), round(5 + rng.randrange(50000) / 100, 2)), {}

    def month(pools: Pools, rng: random.Random) -> Args:
        return (2025, 1 + rng.randrange(12)), {}

    return Workload(
        "store",
        (
            OperationSpec(
                "product_page", "read", 2000, "the product, its 5 newest reviews, review count and average", product
            ),
            OperationSpec(
                "category_listing", "read", 600, "one page of a category's products, cheapest first", category
            ),
            OperationSpec("my_orders", "read", 40, "a customer's 10 newest orders", customer),
            OperationSpec(
                "place_order", "write", 15, "take stock and record an order with prices at the time of sale", order
            ),
            OperationSpec("add_review", "write", 2, "store a review; keep the product's summary current", review),
            OperationSpec("change_price", "write", 3 * PER_HOUR, "set a product's price (a few per hour)", price),
            OperationSpec(
                "monthly_sales_report", "read", PER_DAY, "units and revenue per product for a month (daily)", month
            ),
        ),
    )


def followers_workload() -> Workload:
    """The followers graph's workload: profiles and follow buttons, far more reads than follows."""

    def user(pools: Pools, rng: random.Random) -> Args:
        return (pools.pick(rng, "users"),), {}

    def page(pools: Pools, rng: random.Random) -> Args:
        return (pools.pick(rng, "users"),), {"page": rng.randrange(2)}

    def pair(pools: Pools, rng: random.Random) -> Args:
        follower, followed = pools.pick(rng, "users"), pools.pick(rng, "users")
        return (follower, followed if followed != follower else pools.ids("users")[0]), {}

    return Workload(
        "followers",
        (
            OperationSpec(
                "profile", "read", 1500, "a user with follower and following counts and the 5 newest followers", user
            ),
            OperationSpec("is_following", "read", 800, "does A follow B (drawing a follow button)", pair),
            OperationSpec("followers_page", "read", 300, "one page of a user's followers, newest first", page),
            OperationSpec("follow", "write", 50, "A follows B; counts and previews stay right", pair),
            OperationSpec("unfollow", "write", 10, "A stops following B", pair),
        ),
    )


def parts_workload() -> Workload:
    """The parts dataset's workload: product details often, part renames twice a day."""

    def product(pools: Pools, rng: random.Random) -> Args:
        return (pools.pick(rng, "products"),), {}

    # Parts drawn from the products (the embedded shape has no parts collection of its own).
    def part(pools: Pools, rng: random.Random) -> Args:
        return (pools.pick(rng, "products", "parts.partId"),), {}

    def rename(pools: Pools, rng: random.Random) -> Args:
        return (pools.pick(rng, "products", "parts.partId"), f"Renamed part {rng.randrange(10**6)}"), {}

    return Workload(
        "parts",
        (
            OperationSpec(
                "product_detail",
                "read",
                500,
                "a product with every part's name, sku, supplier and cost",
                product,
                filter="products: _id",
                returns="1 product, its lines (up to 20) with each part's facts",
            ),
            OperationSpec(
                "bill_of_materials_cost",
                "read",
                50,
                "the cost of a product's parts",
                product,
                filter="products: _id; parts: _id in the product's lines",
                returns="1 number: sum of cost x quantity",
            ),
            OperationSpec(
                "products_using_part",
                "read",
                20,
                "which products a part goes into (before changing it)",
                part,
                filter="products: parts.partId",
                sort="_id",
                returns="the ids of every product using the part: a handful for most parts",
            ),
            OperationSpec(
                "rename_part",
                "write",
                2 * PER_DAY,
                "rename a part everywhere it is shown",
                rename,
                filter="parts: _id; products: parts.partId (where copied)",
                returns="documents rewritten",
            ),
        ),
    )

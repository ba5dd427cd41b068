"""The store's operations in each shape: same names, same logical answers.

Orders are shaped alike in all three shapes, so placing and listing orders, price changes and the
sales report live in :class:`StoreOperations`; the shapes differ in where reviews live, so each
subclass implements ``product_page`` and ``add_review`` its own way.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from bson import ObjectId
from pymongo import ReturnDocument
from pymongo.client_session import ClientSession

from workbook.errors import OperationRejectedError
from workbook.operations.base import Operations, bson_time
from workbook.shapes.spec import Document
from workbook.shapes.store import NEWEST_FIRST, RECENT_REVIEWS, newest

PAGE_SIZE = 20
LISTING_FIELDS = {"name": 1, "price": 1, "brand": 1}


def product_page_answer(product: Document, reviews: list[Document], count: int, rating_sum: int) -> Document:
    """The logical product page: the product, its newest reviews, how many and their average rating."""
    fields = {k: v for k, v in product.items() if k not in ("reviews", "recentReviews", "rating")}
    return {
        **fields,
        "reviews": [{k: v for k, v in r.items() if k != "productId"} for r in reviews],
        "ratingCount": count,
        "ratingAverage": round(rating_sum / count, 2) if count else None,
    }


def _month(year: int, month: int) -> tuple[datetime, datetime]:
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return start, end


class StoreOperations(Operations):
    """Operations shared by the store's shapes."""

    dataset = "store"
    NAMES = (
        "product_page",
        "category_listing",
        "place_order",
        "my_orders",
        "add_review",
        "change_price",
        "monthly_sales_report",
    )

    def product_page(self, product_id: str) -> Document | None:
        """A product with its 5 newest reviews, review count and average rating."""
        raise NotImplementedError  # each shape answers it its own way

    def add_review(
        self,
        product_id: str,
        customer_id: str,
        rating: int,
        text: str,
        *,
        now: datetime | None = None,
        review_id: str | None = None,
    ) -> str:
        """Add a review to a product; returns the review's id."""
        raise NotImplementedError

    def _new_review(
        self, product_id: str, customer_id: str, rating: int, text: str, now: datetime | None, review_id: str | None
    ) -> Document:
        if not isinstance(rating, int) or not 1 <= rating <= 5:
            raise OperationRejectedError(
                f"A rating is a whole number from 1 to 5, not {rating!r}.", fix="Pass rating=1..5."
            )
        if self.db.products.count_documents({"_id": product_id}, limit=1) == 0:
            raise OperationRejectedError(
                f"No product {product_id!r} in {self.db.name}.", fix="Pick a product id from db.products."
            )
        return {
            "_id": review_id or f"rev-{ObjectId()}",
            "productId": product_id,
            "customerId": customer_id,
            "rating": rating,
            "text": text,
            "createdAt": bson_time(now),
        }

    def category_listing(self, category_id: str, page: int = 0, page_size: int = PAGE_SIZE) -> list[Document]:
        """One page of a category's products, cheapest first."""
        cursor = (
            self.db.products.find({"category._id": category_id}, LISTING_FIELDS)
            .sort([("price", 1), ("_id", 1)])
            .skip(page * page_size)
            .limit(page_size)
        )
        return list(cursor)

    def place_order(
        self,
        customer_id: str,
        items: Iterable[tuple[str, int]],
        *,
        now: datetime | None = None,
        order_id: str | None = None,
    ) -> str:
        """Take stock and record an order, copying each product's name and current price; returns its id."""
        items = list(items)  # the transaction may run again: read the items once
        for product_id, quantity in items:
            if quantity < 1:
                raise OperationRejectedError(
                    f"Cannot order {quantity} of {product_id!r}: a quantity is a whole number of at least 1.",
                    fix="Pass items=[(product_id, 1)] or more.",
                )
        if not items:
            raise OperationRejectedError(
                "An order needs at least one item.", fix="Pass items=[(product_id, quantity)]."
            )
        if self.db.customers.find_one({"_id": customer_id}, {"_id": 1}) is None:
            raise OperationRejectedError(
                f"Cannot place an order for {customer_id!r}: there is no such customer.",
                fix="Use an existing customer's id, e.g. db.customers.find_one({}, {'_id': 1})['_id'].",
            )
        order_key = order_id or f"ord-{ObjectId()}"

        def take_stock_and_record(session: ClientSession | None) -> str:
            lines = []
            for product_id, quantity in items:
                product = self.db.products.find_one_and_update(
                    {"_id": product_id, "stock": {"$gte": quantity}},
                    {"$inc": {"stock": -quantity}},
                    projection={"name": 1, "price": 1},
                    return_document=ReturnDocument.AFTER,
                    session=session,
                )
                if product is None:
                    raise OperationRejectedError(
                        f"Cannot order {quantity} of {product_id!r}: unknown product or not enough stock.",
                        fix="Check db.products.find_one({'_id': ...}, {'stock': 1}).",
                    )
                lines.append(
                    {"productId": product_id, "name": product["name"], "price": product["price"], "quantity": quantity}
                )
            order = {
                "_id": order_key,
                "customerId": customer_id,
                "createdAt": bson_time(now),
                "status": "placed",
                "items": lines,
                "total": round(sum(line["price"] * line["quantity"] for line in lines), 2),
            }
            self.db.orders.insert_one(order, session=session)
            return str(order["_id"])

        return self.in_transaction(take_stock_and_record)

    def my_orders(self, customer_id: str, limit: int = 10) -> list[Document]:
        """A customer's orders, newest first."""
        return list(
            self.db.orders.find({"customerId": customer_id}).sort([("createdAt", -1), ("_id", -1)]).limit(limit)
        )

    def change_price(self, product_id: str, price: float) -> bool:
        """Set a product's price (past orders keep the price they were sold at); True if it existed."""
        if price < 0:
            raise OperationRejectedError(f"A price cannot be negative ({price}).", fix="Pass a price >= 0.")
        return self.db.products.update_one({"_id": product_id}, {"$set": {"price": price}}).matched_count == 1

    def monthly_sales_report(self, year: int, month: int, top: int = 10) -> list[Document]:
        """The month's best-selling products by revenue: units and revenue per product."""
        if not 1 <= month <= 12:
            raise OperationRejectedError(f"A month is 1 to 12, not {month}.", fix="Pass month=1..12.")
        start, end = _month(year, month)
        rows = self.db.orders.aggregate(
            [
                {"$match": {"createdAt": {"$gte": start, "$lt": end}}},
                {"$unwind": "$items"},
                {
                    "$group": {
                        "_id": "$items.productId",
                        "name": {"$max": "$items.name"},
                        "units": {"$sum": "$items.quantity"},
                        "revenue": {"$sum": {"$multiply": ["$items.price", "$items.quantity"]}},
                    }
                },
                {"$sort": {"revenue": -1, "_id": 1}},
                {"$limit": top},
            ]
        )
        return [{**row, "revenue": round(row["revenue"], 2)} for row in rows]


class StoreEmbedded(StoreOperations):
    """Reviews inside the product."""

    shape = "embedded"

    def product_page(self, product_id: str) -> Document | None:
        """One read: the whole product, every review included."""
        product = self.db.products.find_one({"_id": product_id})
        if product is None:
            return None
        reviews = product.get("reviews", [])
        return product_page_answer(
            product, newest(reviews, RECENT_REVIEWS), len(reviews), sum(r["rating"] for r in reviews)
        )

    def add_review(self, product_id, customer_id, rating, text, *, now=None, review_id=None):  # type: ignore[no-untyped-def]
        """Append the review to the product's array (it grows with every review)."""
        review = self._new_review(product_id, customer_id, rating, text, now, review_id)
        entry = {k: v for k, v in review.items() if k != "productId"}
        self.db.products.update_one({"_id": product_id}, {"$push": {"reviews": entry}})
        return review["_id"]


class StoreReferenced(StoreOperations):
    """Reviews in their own collection."""

    shape = "referenced"

    def product_page(self, product_id: str) -> Document | None:
        """Three reads: the product, its newest reviews, and the rating totals."""
        product = self.db.products.find_one({"_id": product_id})
        if product is None:
            return None
        recent = list(self.db.reviews.find({"productId": product_id}).sort(list(NEWEST_FIRST)).limit(RECENT_REVIEWS))
        totals = next(
            self.db.reviews.aggregate(
                [
                    {"$match": {"productId": product_id}},
                    {"$group": {"_id": None, "count": {"$sum": 1}, "sum": {"$sum": "$rating"}}},
                ]
            ),
            {"count": 0, "sum": 0},
        )
        return product_page_answer(product, recent, totals["count"], totals["sum"])

    def add_review(self, product_id, customer_id, rating, text, *, now=None, review_id=None):  # type: ignore[no-untyped-def]
        """Insert one review document."""
        review = self._new_review(product_id, customer_id, rating, text, now, review_id)
        self.db.reviews.insert_one(review)
        return review["_id"]


class StoreHybrid(StoreOperations):
    """Reviews collection plus the newest five and a rating summary in the product."""

    shape = "hybrid"

    def product_page(self, product_id: str) -> Document | None:
        """One read: the product already holds the newest reviews and the rating summary."""
        product = self.db.products.find_one({"_id": product_id})
        if product is None:
            return None
        summary = product.get("rating", {"count": 0, "sum": 0})
        return product_page_answer(product, product.get("recentReviews", []), summary["count"], summary["sum"])

    def add_review(self, product_id, customer_id, rating, text, *, now=None, review_id=None):  # type: ignore[no-untyped-def]
        """Insert the review, and in one atomic update keep the product's newest five and its summary."""
        review = self._new_review(product_id, customer_id, rating, text, now, review_id)
        entry = {k: v for k, v in review.items() if k != "productId"}

        def insert_and_summarize(session: ClientSession | None) -> None:
            self.db.reviews.insert_one(review, session=session)
            self.db.products.update_one(
                {"_id": product_id},
                {
                    "$push": {
                        "recentReviews": {"$each": [entry], "$sort": dict(NEWEST_FIRST), "$slice": RECENT_REVIEWS}
                    },
                    "$inc": {"rating.count": 1, "rating.sum": rating},
                },
                session=session,
            )

        self.in_transaction(insert_and_summarize)
        return review["_id"]


OPERATIONS: dict[str, type[StoreOperations]] = {
    "embedded": StoreEmbedded,
    "referenced": StoreReferenced,
    "hybrid": StoreHybrid,
}
"""Each shape's class, as registered in :mod:`workbook.datasets.registry`."""

__all__ = ["OPERATIONS", "StoreEmbedded", "StoreHybrid", "StoreOperations", "StoreReferenced", "product_page_answer"]

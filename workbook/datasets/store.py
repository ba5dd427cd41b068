"""The `store` dataset: categories, products, reviews, customers and orders."""

from __future__ import annotations

import random
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

from workbook.datasets import words
from workbook.datasets.catalog import SPECS, TAXONOMY
from workbook.datasets.ids import id_width, make_id
from workbook.datasets.seeding import (
    Weighted,
    distinct_indices,
    ranks,
    stream,
    weighted_counts,
    weighted_index,
    zipf_cumulative,
)
from workbook.datasets.timeline import DAY, YEAR, moment

Document = dict[str, Any]


@dataclass(frozen=True)
class StoreSize:
    """How many of each entity the store generator makes."""

    products: int
    customers: int
    reviews: int
    orders: int


SIZES = {
    "tiny": StoreSize(products=30, customers=60, reviews=200, orders=60),
    "small": StoreSize(products=2_000, customers=5_000, reviews=30_000, orders=13_000),
    "medium": StoreSize(products=20_000, customers=50_000, reviews=300_000, orders=130_000),
    "large": StoreSize(products=80_000, customers=200_000, reviews=1_200_000, orders=520_000),
}

# Ratings lean positive; a product's quality picks which table its reviews use.
RATINGS_BY_QUALITY = (
    Weighted.of([(5, 60), (4, 28), (3, 7), (2, 3), (1, 2)]),
    Weighted.of([(5, 35), (4, 30), (3, 20), (2, 9), (1, 6)]),
    Weighted.of([(5, 15), (4, 20), (3, 25), (2, 20), (1, 20)]),
)
QUALITY = Weighted.of([(0, 60), (1, 30), (2, 10)])
PRICE_CHANGES = Weighted.of([(0, 25), (1, 40), (2, 25), (3, 10)])
ADDRESS_COUNT = Weighted.of([(1, 60), (2, 30), (3, 10)])
LINE_COUNT = Weighted.of([(1, 40), (2, 28), (3, 17), (4, 10), (5, 5)])
QUANTITY = Weighted.of([(1, 75), (2, 17), (3, 5), (4, 3)])


@dataclass(frozen=True)
class _Leaf:
    """A leaf category products belong to."""

    category: Document
    top: str
    nouns: tuple[str, ...]
    dollars: tuple[int, int]


def generate_store(size: StoreSize, seed: int) -> dict[str, list[Document]]:
    """Return the store's canonical collections for one size and seed."""
    categories, leaves = _categories()
    products, prices = _products(size, seed, leaves)
    customers = _customers(size, seed)
    popularity = ranks(stream(seed, "store:popularity"), size.products)
    reviews = _reviews(size, seed, popularity)
    orders = _orders(size, seed, products, prices, popularity)
    return {
        "categories": categories,
        "products": products,
        "reviews": reviews,
        "customers": customers,
        "orders": orders,
    }


def _categories() -> tuple[list[Document], list[_Leaf]]:
    """Return the fixed category tree (tops first) and its leaves."""
    tops = [{"_id": make_id("cat", i + 1, 2), "name": name, "parentId": None} for i, (name, _) in enumerate(TAXONOMY)]
    subs: list[Document] = []
    leaves = []
    for top, (top_name, children) in zip(tops, TAXONOMY, strict=True):
        for name, nouns, dollars in children:
            category = {"_id": make_id("cat", len(tops) + len(subs) + 1, 2), "name": name, "parentId": top["_id"]}
            subs.append(category)
            leaves.append(_Leaf(category, top_name, nouns, dollars))
    return tops + subs, leaves


def _retail(cents: int) -> int:
    """Round a price in cents to a whole-dollar-minus-one-cent price, e.g. 1999."""
    return max(99, cents // 100 * 100 + 99)


def _products(
    size: StoreSize, seed: int, leaves: list[_Leaf]
) -> tuple[list[Document], list[tuple[list[int], list[int]]]]:
    """Return products and, per product, its price history as (since seconds, cents)."""
    rng = stream(seed, "store:products")
    price_rng = stream(seed, "store:prices")
    width = id_width(6, size.products)
    products = []
    histories = []
    for number in range(1, size.products + 1):
        leaf = rng.choice(leaves)
        brand = rng.choice(words.BRANDS)
        noun = rng.choice(leaf.nouns)
        model = f"{rng.choice('ABCDEFGHKMRSTXZ')}{rng.randint(1, 99) * 10}"
        name = f"{brand} {rng.choice(words.PRODUCT_ADJECTIVES)} {noun} {model}"
        description = " ".join((rng.choice(words.DESCRIPTION_OPENERS), rng.choice(words.DESCRIPTION_CLAIMS)))
        stock = 0 if rng.randrange(100) < 6 else rng.randint(1, 500)
        specs = SPECS[leaf.top](rng)
        history = _price_history(price_rng, _retail(rng.randint(*leaf.dollars) * 100))
        histories.append(history)
        products.append(
            {
                "_id": make_id("prod", number, width),
                "name": name,
                "brand": brand,
                "category": {"_id": leaf.category["_id"], "name": leaf.category["name"]},
                "price": history[1][-1] / 100,
                "stock": stock,
                "description": description,
                "specs": specs,
            }
        )
    return products, histories


def _price_history(rng: random.Random, cents: int) -> tuple[list[int], list[int]]:
    """Return (times, prices): the launch price at second 0 then a few changes in the year."""
    times, prices = [0], [cents]
    for when in sorted({rng.randrange(1, YEAR) for _ in range(PRICE_CHANGES.draw(rng))}):
        percent = rng.choice((-30, -25, -20, -15, -10, 10, 15, 20, 25))
        new = _retail(prices[-1] * (100 + percent) // 100)
        if new == prices[-1]:
            new = _retail(new + 100) if percent > 0 else max(99, new - 100)
        if new != prices[-1]:
            times.append(when)
            prices.append(new)
    return times, prices


def _customers(size: StoreSize, seed: int) -> list[Document]:
    """Return customers with one to three addresses, exactly one marked default."""
    rng = stream(seed, "store:customers")
    width = id_width(6, size.customers)
    customers = []
    for number in range(1, size.customers + 1):
        first, last = rng.choice(words.FIRST_NAMES), rng.choice(words.LAST_NAMES)
        count = ADDRESS_COUNT.draw(rng)
        default = rng.randrange(count)
        addresses = []
        for index, label in enumerate(words.ADDRESS_LABELS[:count]):
            city, country = rng.choice(words.CITIES)
            addresses.append(
                {
                    "label": label,
                    "street": f"{rng.randint(1, 250)} {rng.choice(words.STREET_NAMES)} "
                    f"{rng.choice(words.STREET_KINDS)}",
                    "city": city,
                    "postalCode": f"{rng.randrange(100_000):05d}",
                    "country": country,
                    "default": index == default,
                }
            )
        customers.append(
            {
                "_id": make_id("cust", number, width),
                "name": f"{first} {last}",
                "email": f"{first}.{last}{number}@{rng.choice(words.EMAIL_DOMAINS)}".lower(),
                "addresses": addresses,
                "createdAt": moment(-rng.randrange(2 * YEAR)),
            }
        )
    return customers


def _reviews(size: StoreSize, seed: int, popularity: list[int]) -> list[Document]:
    """Return reviews, oldest first; reviews per product follow a power law."""
    per_rank = weighted_counts(stream(seed, "store:review-counts"), zipf_cumulative(size.products), size.reviews)
    per_product = [0] * size.products
    for rank, product in enumerate(popularity):
        # Each customer reviews a product at most once.
        per_product[product] = min(per_rank[rank], size.customers)
    rng = stream(seed, "store:reviewers")
    quality_rng = stream(seed, "store:quality")
    quality = [QUALITY.draw(quality_rng) for _ in range(size.products)]
    drafts = []
    for product, count in enumerate(per_product):
        for customer in distinct_indices(rng, size.customers, count):
            drafts.append((rng.randrange(YEAR), product, customer))
    drafts.sort()
    text_rng = stream(seed, "store:review-text")
    product_width = id_width(6, size.products)
    customer_width = id_width(6, size.customers)
    width = id_width(7, len(drafts))
    reviews = []
    for number, (when, product, customer) in enumerate(drafts, start=1):
        rating = RATINGS_BY_QUALITY[quality[product]].draw(text_rng)
        reviews.append(
            {
                "_id": make_id("rev", number, width),
                "productId": make_id("prod", product + 1, product_width),
                "customerId": make_id("cust", customer + 1, customer_width),
                "rating": rating,
                "text": _review_text(text_rng, rating),
                "createdAt": moment(when),
            }
        )
    return reviews


def _review_text(rng: random.Random, rating: int) -> str:
    """Return two to five short sentences whose tone matches the rating."""
    if rating >= 4:
        sentences = [rng.choice(words.REVIEW_OPENERS_GOOD)]
        tones: tuple[tuple[str, ...], ...] = (words.REVIEW_PRAISE,)
    elif rating == 3:
        sentences = [rng.choice(words.REVIEW_OPENERS_MIXED)]
        tones = (words.REVIEW_PRAISE, words.REVIEW_COMPLAINTS)
    else:
        sentences = [rng.choice(words.REVIEW_OPENERS_BAD)]
        tones = (words.REVIEW_COMPLAINTS,)
    for aspect in distinct_indices(rng, len(words.REVIEW_ASPECTS), rng.randint(1, 3)):
        sentences.append(f"The {words.REVIEW_ASPECTS[aspect]} is {rng.choice(rng.choice(tones))}.")
    closer = rng.choice(words.REVIEW_CLOSERS)
    if closer:
        sentences.append(closer)
    return " ".join(sentences)


def _orders(
    size: StoreSize,
    seed: int,
    products: list[Document],
    prices: list[tuple[list[int], list[int]]],
    popularity: list[int],
) -> list[Document]:
    """Return orders, oldest first, with line-item prices as they were at the time of sale."""
    rng = stream(seed, "store:orders")
    buyers = ranks(stream(seed, "store:buyers"), size.customers)
    buyer_weights = zipf_cumulative(size.customers, offset=20)
    product_weights = zipf_cumulative(size.products, offset=5)
    customer_width = id_width(6, size.customers)
    width = id_width(7, size.orders)
    orders = []
    for number, when in enumerate(sorted(rng.randrange(YEAR) for _ in range(size.orders)), 1):
        customer = buyers[weighted_index(rng, buyer_weights)]
        chosen: list[int] = []
        wanted = min(LINE_COUNT.draw(rng), size.products)
        while len(chosen) < wanted:
            product = popularity[weighted_index(rng, product_weights)]
            if product not in chosen:
                chosen.append(product)
        items = []
        total = 0
        for product in chosen:
            times, cents = prices[product]
            price = cents[bisect_right(times, when) - 1]
            quantity = QUANTITY.draw(rng)
            total += price * quantity
            items.append(
                {
                    "productId": products[product]["_id"],
                    "name": products[product]["name"],
                    "price": price / 100,
                    "quantity": quantity,
                }
            )
        orders.append(
            {
                "_id": make_id("ord", number, width),
                "customerId": make_id("cust", customer + 1, customer_width),
                "createdAt": moment(when),
                "status": _status(rng, YEAR - when),
                "items": items,
                "total": total / 100,
            }
        )
    return orders


def _status(rng: random.Random, age: int) -> str:
    """Return an order status that fits how many seconds ago (before year end) it was placed."""
    if rng.randrange(100) < 4:
        return "cancelled"
    if age < DAY // 4:
        return "pending"
    if age < 2 * DAY:
        return "paid"
    if age < 10 * DAY:
        return "shipped"
    return "delivered"

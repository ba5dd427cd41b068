"""The store's catalog vocabulary: its category tree and the specs each kind of product has."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from workbook.datasets import words

Document = dict[str, Any]

# Top-level category -> its leaves as (name, product nouns, price range in whole dollars).
TAXONOMY: tuple[tuple[str, tuple[tuple[str, tuple[str, ...], tuple[int, int]], ...]], ...] = (
    (
        "Electronics",
        (
            ("Headphones", ("Headphones", "Earbuds"), (19, 399)),
            ("Laptops", ("Laptop", "Notebook"), (399, 2999)),
            ("Cameras", ("Camera", "Action Cam"), (99, 1999)),
            ("Phones", ("Phone",), (149, 1299)),
        ),
    ),
    (
        "Books",
        (
            ("Fiction", ("Novel", "Short Stories"), (8, 35)),
            ("Cooking", ("Cookbook",), (12, 49)),
            ("Science", ("Guide", "Primer"), (10, 89)),
        ),
    ),
    (
        "Clothing",
        (
            ("Shirts", ("Shirt", "Tee"), (12, 89)),
            ("Shoes", ("Sneakers", "Boots"), (39, 249)),
            ("Jackets", ("Jacket", "Parka"), (49, 399)),
        ),
    ),
    (
        "Home & Kitchen",
        (
            ("Cookware", ("Skillet", "Saucepan", "Dutch Oven"), (19, 299)),
            ("Furniture", ("Chair", "Desk", "Bookcase"), (49, 999)),
            ("Lighting", ("Lamp", "Pendant Light"), (15, 249)),
        ),
    ),
    (
        "Sports",
        (
            ("Cycling", ("Helmet", "Bike Light"), (15, 299)),
            ("Running", ("Running Vest", "Water Bottle"), (9, 149)),
            ("Camping", ("Tent", "Sleeping Bag"), (29, 599)),
        ),
    ),
    (
        "Toys",
        (
            ("Puzzles", ("Puzzle",), (9, 59)),
            ("Board Games", ("Board Game", "Card Game"), (12, 89)),
            ("Building Sets", ("Building Set",), (15, 199)),
        ),
    ),
)

CLOTHING_SIZES = ("XS", "S", "M", "L", "XL")


def electronics(rng: random.Random) -> Document:
    """Return specs for an electronics product."""
    return {
        "color": rng.choice(words.COLORS),
        "weightGrams": rng.randint(30, 3000),
        "batteryHours": rng.randint(4, 40),
        "wireless": rng.randrange(3) > 0,
    }


def book(rng: random.Random) -> Document:
    """Return specs for a book."""
    return {
        "author": f"{rng.choice(words.FIRST_NAMES)} {rng.choice(words.LAST_NAMES)}",
        "pages": rng.randint(90, 900),
        "language": rng.choice(words.LANGUAGES),
        "format": rng.choice(("hardcover", "paperback", "ebook")),
    }


def clothing(rng: random.Random) -> Document:
    """Return specs for a clothing item."""
    first = rng.randrange(len(CLOTHING_SIZES))
    last = rng.randrange(first, len(CLOTHING_SIZES))
    return {
        "material": rng.choice(words.FABRICS),
        "color": rng.choice(words.COLORS),
        "sizes": list(CLOTHING_SIZES[first : last + 1]),
    }


def home(rng: random.Random) -> Document:
    """Return specs for a home and kitchen item."""
    return {
        "material": rng.choice(words.HARD_MATERIALS),
        "widthCm": rng.randint(10, 200),
        "heightCm": rng.randint(5, 220),
        "dishwasherSafe": rng.randrange(2) == 0,
    }


def sports(rng: random.Random) -> Document:
    """Return specs for a sports item."""
    return {
        "weightGrams": rng.randint(50, 5000),
        "material": rng.choice(words.MATERIALS),
        "level": rng.choice(("beginner", "intermediate", "advanced")),
    }


def toy(rng: random.Random) -> Document:
    """Return specs for a toy."""
    low = rng.randint(1, 4)
    return {
        "ageMin": rng.choice((3, 6, 8, 10, 12, 14)),
        "pieces": rng.randint(1, 2000),
        "players": f"{low}-{rng.randint(low, 8)}",
    }


SPECS: dict[str, Callable[[random.Random], Document]] = {
    "Electronics": electronics,
    "Books": book,
    "Clothing": clothing,
    "Home & Kitchen": home,
    "Sports": sports,
    "Toys": toy,
}

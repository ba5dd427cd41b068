"""The `parts` dataset: parts, products built from shared parts, and part renames."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbook.datasets import words
from workbook.datasets.ids import id_width, make_id
from workbook.datasets.seeding import Weighted, ranks, stream, weighted_index, zipf_cumulative
from workbook.datasets.timeline import YEAR, moment

Document = dict[str, Any]


@dataclass(frozen=True)
class PartsSize:
    """How many parts, products and rename events the parts generator makes."""

    parts: int
    products: int
    renames: int


SIZES = {
    "tiny": PartsSize(parts=60, products=200, renames=12),
    "small": PartsSize(parts=8_000, products=40_000, renames=800),
    "medium": PartsSize(parts=80_000, products=400_000, renames=8_000),
    "large": PartsSize(parts=320_000, products=1_600_000, renames=32_000),
}

PARTS_PER_PRODUCT = Weighted.of([(2, 10), (3, 15), (4, 20), (5, 20), (6, 15), (8, 10), (10, 6), (12, 4)])
QUANTITY = Weighted.of([(1, 55), (2, 20), (4, 12), (6, 6), (8, 4), (12, 3)])
# Cost in cents: most parts are cheap, a few are expensive.
COST_CENTS = Weighted.of([((5, 99), 50), ((100, 999), 35), ((1_000, 9_999), 15)])


def generate_parts(size: PartsSize, seed: int) -> dict[str, list[Document]]:
    """Return the parts dataset's canonical collections for one size and seed."""
    names, skus, suppliers, costs = _part_facts(size, seed)
    renames = _renames(size, seed, names)
    width = id_width(6, size.parts)
    parts = [
        {
            "_id": make_id("part", number, width),
            "name": " ".join(name),
            "sku": sku,
            "supplier": supplier,
            "cost": cost / 100,
        }
        for number, (name, sku, supplier, cost) in enumerate(zip(names, skus, suppliers, costs, strict=True), start=1)
    ]
    return {"parts": parts, "products": _products(size, seed, parts), "renames": renames}


PartName = tuple[str, str, str]


def _part_facts(size: PartsSize, seed: int) -> tuple[list[PartName], list[str], list[str], list[int]]:
    """Return each part's original (material, noun, size), unique SKU, supplier and cost."""
    rng = stream(seed, "parts:parts")
    names, skus, suppliers, costs = [], [], [], []
    seen: set[str] = set()
    for _ in range(size.parts):
        name = (rng.choice(words.PART_MATERIALS), rng.choice(words.PART_NOUNS), rng.choice(words.PART_SIZES))
        initials = "".join(word[0] for word in name[1].split())
        sku = f"{initials}-{rng.randrange(1_000_000):06d}"
        while sku in seen:
            sku = f"{initials}-{rng.randrange(1_000_000):06d}"
        seen.add(sku)
        low, high = COST_CENTS.draw(rng)
        names.append(name)
        skus.append(sku)
        suppliers.append(rng.choice(words.SUPPLIERS))
        costs.append(rng.randint(low, high))
    return names, skus, suppliers, costs


def _renames(size: PartsSize, seed: int, names: list[PartName]) -> list[Document]:
    """Return rename events, oldest first, and update `names` to each part's current name."""
    rng = stream(seed, "parts:renames")
    part_width = id_width(6, size.parts)
    width = id_width(5, size.renames)
    events = []
    for number, when in enumerate(sorted(rng.randrange(YEAR) for _ in range(size.renames)), 1):
        part = rng.randrange(size.parts)
        old = material, noun, part_size = names[part]
        new = old
        while new == old:
            # A rename usually changes one word: a new material or a new size.
            if rng.randrange(2):
                new = (rng.choice(words.PART_MATERIALS), noun, part_size)
            else:
                new = (material, noun, rng.choice(words.PART_SIZES))
        names[part] = new
        events.append(
            {
                "_id": make_id("rename", number, width),
                "partId": make_id("part", part + 1, part_width),
                "oldName": " ".join(old),
                "newName": " ".join(new),
                "renamedAt": moment(when),
            }
        )
    return events


def _products(size: PartsSize, seed: int, parts: list[Document]) -> list[Document]:
    """Return products, each listing distinct parts with quantities; popular parts recur."""
    rng = stream(seed, "parts:products")
    popularity = ranks(stream(seed, "parts:popularity"), size.parts)
    weights = zipf_cumulative(size.parts, offset=1)
    width = id_width(6, size.products)
    products = []
    for number in range(1, size.products + 1):
        wanted = min(PARTS_PER_PRODUCT.draw(rng), size.parts)
        chosen: list[int] = []
        while len(chosen) < wanted:
            part = popularity[weighted_index(rng, weights)]
            if part not in chosen:
                chosen.append(part)
        name = (
            f"{rng.choice(words.ASSEMBLY_ADJECTIVES)} {rng.choice(words.ASSEMBLY_NOUNS)} "
            f"{rng.choice('BDFHKLMNPRTVX')}-{rng.randint(1, 99) * 10}"
        )
        products.append(
            {
                "_id": make_id("prod", number, width),
                "name": name,
                "parts": [{"partId": parts[part]["_id"], "quantity": QUANTITY.draw(rng)} for part in chosen],
            }
        )
    return products

"""The seeded dataset generators: determinism, integrity, skew, errors and the committed samples."""

from __future__ import annotations

import hashlib
import statistics
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import bson
import pytest
from bson import json_util

from workbook.datasets import (
    DATASETS,
    SCALES,
    Dataset,
    check_samples,
    generate,
    read_manifest,
    read_sample,
    sizes,
)
from workbook.datasets.store import StoreSize, generate_store
from workbook.errors import UnknownChoiceError

SAMPLES = Path(__file__).resolve().parents[1] / "datasets"
NAMES = sorted(DATASETS)


@pytest.fixture(scope="module")
def tiny() -> dict[str, Dataset]:
    """Every dataset at the tiny scale, seed 7."""
    return {name: generate(name, "tiny", 7) for name in NAMES}


@pytest.fixture(scope="module")
def small_store() -> Dataset:
    """The store at the default scale (about a second to generate)."""
    return generate("store")


@pytest.fixture(scope="module")
def small_followers() -> Dataset:
    """The followers dataset at the default scale."""
    return generate("followers")


def by_id(documents: list[dict]) -> dict[str, dict]:
    """Index documents by _id."""
    return {document["_id"]: document for document in documents}


def per_key(documents: list[dict], key: str, universe: list[dict]) -> list[int]:
    """How many documents point at each member of `universe` through `key`, zeros included."""
    counts = Counter(document[key] for document in documents)
    return [counts.get(member["_id"], 0) for member in universe]


# Determinism ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_gives_same_bytes_and_another_seed_does_not(name: str, tiny: dict[str, Dataset]) -> None:
    again = generate(name, "tiny", 7)
    assert again.sha256() == tiny[name].sha256()
    assert again.collections == tiny[name].collections
    assert generate(name, "tiny", 8).sha256() != tiny[name].sha256()


@pytest.mark.parametrize("name", NAMES)
def test_committed_hash_equals_fresh_generation(name: str, tiny: dict[str, Dataset]) -> None:
    """The cross-machine check: this machine reproduces the bytes committed from another."""
    entry = read_manifest(SAMPLES)["datasets"][name]
    assert entry["parameters"]["scale"] == "tiny" and entry["parameters"]["seed"] == 7
    assert tiny[name].sha256() == entry["sha256"]


def test_sha256_is_the_documented_canonical_bson_hash(tiny: dict[str, Dataset]) -> None:
    dataset = tiny["store"]
    digest = hashlib.sha256()
    for name in sorted(dataset.collections):
        digest.update(name.encode() + b"\x00")
        for document in dataset.collections[name]:
            digest.update(bson.encode(document))
    assert dataset.sha256() == digest.hexdigest()
    changed = {**dataset.collections, "reviews": dataset.collections["reviews"][1:]}
    assert Dataset("store", "tiny", 7, changed).sha256() != dataset.sha256()


def test_changing_one_collection_size_leaves_the_other_collections_alone() -> None:
    few_reviews = generate_store(StoreSize(products=30, customers=60, reviews=50, orders=60), 7)
    many_reviews = generate_store(StoreSize(products=30, customers=60, reviews=400, orders=60), 7)
    assert few_reviews["reviews"] != many_reviews["reviews"]
    for collection in ("categories", "products", "customers", "orders"):
        assert few_reviews[collection] == many_reviews[collection], collection


@pytest.mark.parametrize("name", NAMES)
def test_counts_match_the_declared_sizes(name: str, tiny: dict[str, Dataset]) -> None:
    counts = tiny[name].counts()
    for entity, target in sizes(name, "tiny").items():
        assert counts[entity] == target, entity
    assert 200 <= sum(counts.values()) <= 500
    assert "counts=" in repr(tiny[name]) and len(repr(tiny[name])) < 300


# Document form: readable string ids, UTC dates, money in cents -------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_ids_are_unique_prefixed_strings(name: str, tiny: dict[str, Dataset]) -> None:
    for collection, documents in tiny[name].collections.items():
        ids = [document["_id"] for document in documents]
        assert all(isinstance(i, str) and "-" in i and i.split("-")[-1].isdigit() for i in ids), collection
        assert len(set(ids)) == len(ids), collection
        assert len({i.split("-")[0] for i in ids}) == 1, collection
        assert ids == sorted(ids), collection


def walk(value: object) -> list[object]:
    """Every scalar inside a document."""
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in walk(item)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in walk(item)]
    return [value]


@pytest.mark.parametrize("name", NAMES)
def test_dates_are_whole_second_utc_and_floats_are_cents(name: str, tiny: dict[str, Dataset]) -> None:
    leaves = [leaf for docs in tiny[name].collections.values() for doc in docs for leaf in walk(doc)]
    dates = [leaf for leaf in leaves if isinstance(leaf, datetime)]
    floats = [leaf for leaf in leaves if isinstance(leaf, float)]
    assert dates
    assert all(d.tzinfo is UTC and d.microsecond == 0 for d in dates)
    assert all(datetime(2023, 1, 1, tzinfo=UTC) <= d < datetime(2026, 1, 1, tzinfo=UTC) for d in dates)
    assert all(round(f, 2) == f for f in floats)
    assert floats or name == "followers"


# Referential integrity ------------------------------------------------------------------------


def test_store_references_resolve(tiny: dict[str, Dataset]) -> None:
    store = tiny["store"].collections
    categories, products = by_id(store["categories"]), by_id(store["products"])
    customers = by_id(store["customers"])
    for category in store["categories"]:
        assert category["parentId"] is None or categories[category["parentId"]]["parentId"] is None
    for product in products.values():
        assert categories[product["category"]["_id"]]["name"] == product["category"]["name"]
        assert categories[product["category"]["_id"]]["parentId"] is not None
        assert product["specs"]
    for review in store["reviews"]:
        assert review["productId"] in products and review["customerId"] in customers
        assert review["rating"] in {1, 2, 3, 4, 5} and review["text"].count(".") >= 2
    pairs = [(review["productId"], review["customerId"]) for review in store["reviews"]]
    assert len(set(pairs)) == len(pairs), "a customer reviewed a product twice"
    for order in store["orders"]:
        assert order["customerId"] in customers
        assert 1 <= len(order["items"]) <= 5
        assert len({item["productId"] for item in order["items"]}) == len(order["items"])
        for item in order["items"]:
            assert products[item["productId"]]["name"] == item["name"] and item["quantity"] >= 1
        cents = sum(round(item["price"] * 100) * item["quantity"] for item in order["items"])
        assert round(order["total"] * 100) == cents


def test_store_customers_have_one_default_address(tiny: dict[str, Dataset]) -> None:
    for customer in tiny["store"].collections["customers"]:
        assert 1 <= len(customer["addresses"]) <= 3
        assert [address["default"] for address in customer["addresses"]].count(True) == 1
        assert customer["email"].endswith((".com", ".org", ".net")) and "@example." in customer["email"]


def test_store_ratings_lean_positive(small_store: Dataset) -> None:
    ratings = Counter(review["rating"] for review in small_store.collections["reviews"])
    assert ratings[5] > ratings[4] > ratings[3] and ratings[4] > ratings[1] + ratings[2]


def test_line_item_prices_are_prices_at_time_of_sale(tiny: dict[str, Dataset]) -> None:
    store = tiny["store"].collections
    current = {product["_id"]: product["price"] for product in store["products"]}
    lines = [item for order in store["orders"] for item in order["items"]]
    differ = [line for line in lines if line["price"] != current[line["productId"]]]
    assert 0 < len(differ) < len(lines)
    # The last sale of a product after its final price change costs the current price.
    assert any(line["price"] == current[line["productId"]] for line in lines)


def test_orders_are_chronological_with_plausible_status(tiny: dict[str, Dataset]) -> None:
    orders = tiny["store"].collections["orders"]
    assert [order["createdAt"] for order in orders] == sorted(order["createdAt"] for order in orders)
    assert {order["status"] for order in orders} <= {"pending", "paid", "shipped", "delivered", "cancelled"}
    assert orders[0]["status"] in {"delivered", "cancelled"}


def test_follows_are_distinct_pairs_of_existing_users(tiny: dict[str, Dataset]) -> None:
    data = tiny["followers"].collections
    users = by_id(data["users"])
    pairs = [(follow["followerId"], follow["followedId"]) for follow in data["follows"]]
    assert len(set(pairs)) == len(pairs)
    assert all(follower != followed for follower, followed in pairs)
    for follow in data["follows"]:
        assert follow["createdAt"] >= users[follow["followerId"]]["createdAt"]
        assert follow["createdAt"] >= users[follow["followedId"]]["createdAt"]
    handles = [user["handle"] for user in data["users"]]
    assert len(set(handles)) == len(handles)


def test_parts_products_use_existing_parts_once_each(tiny: dict[str, Dataset]) -> None:
    data = tiny["parts"].collections
    parts = by_id(data["parts"])
    for product in data["products"]:
        part_ids = [line["partId"] for line in product["parts"]]
        assert part_ids and len(set(part_ids)) == len(part_ids)
        assert all(part_id in parts for part_id in part_ids)
        assert all(line["quantity"] >= 1 for line in product["parts"])
    skus = [part["sku"] for part in parts.values()]
    assert len(set(skus)) == len(skus)


def test_part_renames_chain_to_the_current_name(tiny: dict[str, Dataset]) -> None:
    data = tiny["parts"].collections
    parts = by_id(data["parts"])
    renames = data["renames"]
    assert renames and [r["renamedAt"] for r in renames] == sorted(r["renamedAt"] for r in renames)
    latest: dict[str, str] = {}
    for event in renames:
        assert event["partId"] in parts and event["oldName"] != event["newName"]
        if event["partId"] in latest:
            assert event["oldName"] == latest[event["partId"]]
        latest[event["partId"]] = event["newName"]
    for part_id, name in latest.items():
        assert parts[part_id]["name"] == name


# Skew -----------------------------------------------------------------------------------------


def test_tiny_scale_is_already_skewed(tiny: dict[str, Dataset]) -> None:
    store, followers, parts = (tiny[name].collections for name in ("store", "followers", "parts"))
    reviews = per_key(store["reviews"], "productId", store["products"])
    follows = per_key(followers["follows"], "followedId", followers["users"])
    uses = Counter(line["partId"] for product in parts["products"] for line in product["parts"])
    part_uses = [uses.get(part["_id"], 0) for part in parts["parts"]]
    for counts in (reviews, follows, part_uses):
        assert max(counts) >= 5 * statistics.median(counts), counts


def test_small_store_has_products_with_thousands_of_reviews(small_store: Dataset) -> None:
    reviews = sorted(per_key(small_store.collections["reviews"], "productId", small_store.collections["products"]))
    assert reviews[-2] >= 1_000
    assert statistics.median(reviews) <= 10


def test_small_followers_top_user_is_followed_by_a_large_share(small_followers: Dataset) -> None:
    users = small_followers.collections["users"]
    follows = per_key(small_followers.collections["follows"], "followedId", users)
    assert max(follows) >= len(users) // 4
    assert statistics.median(follows) <= 5


# Errors ---------------------------------------------------------------------------------------


def test_unknown_dataset_lists_choices_and_closest_match() -> None:
    with pytest.raises(UnknownChoiceError) as caught:
        generate("stor")
    message = str(caught.value)
    assert "Unknown dataset 'stor'" in message
    assert "Choose from: blog, followers, parts, store." in message
    assert "Did you mean 'store'?" in message
    assert isinstance(caught.value, ValueError)


def test_unknown_scale_lists_choices_and_closest_match() -> None:
    with pytest.raises(UnknownChoiceError) as caught:
        generate("store", "smal")
    message = str(caught.value)
    assert all(scale in message for scale in SCALES)
    assert "Did you mean 'small'?" in message
    with pytest.raises(UnknownChoiceError, match="scale"):
        sizes("store", "huge")


def test_seed_must_be_an_integer() -> None:
    with pytest.raises(TypeError, match="integer"):
        generate("store", "tiny", "7")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        generate("store", "tiny", True)


# Committed samples ----------------------------------------------------------------------------


def test_samples_parse_and_match_the_manifest() -> None:
    manifest = read_manifest(SAMPLES)
    assert sorted(manifest["datasets"]) == NAMES
    for name, entry in manifest["datasets"].items():
        for collection, info in entry["collections"].items():
            data = (SAMPLES / info["file"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == info["sha256"], info["file"]
            lines = data.decode().splitlines()
            assert len(lines) == info["count"]
            assert all(isinstance(json_util.loads(line), dict) for line in lines)
            assert info["file"] == f"{name}/{collection}.ndjson"


@pytest.mark.parametrize("name", NAMES)
def test_samples_read_back_to_the_generated_documents(name: str, tiny: dict[str, Dataset]) -> None:
    sample = read_sample(name, SAMPLES)
    assert sample.collections == tiny[name].collections
    assert sample.sha256() == tiny[name].sha256()


def test_check_samples_finds_nothing_wrong_and_the_folder_stays_small() -> None:
    assert check_samples(SAMPLES) == []
    assert sum(path.stat().st_size for path in SAMPLES.rglob("*") if path.is_file()) < 1_000_000


def test_check_samples_reports_a_tampered_file(tmp_path: Path) -> None:
    from workbook.datasets import write_samples

    write_samples(tmp_path)
    reviews = tmp_path / "store" / "reviews.ndjson"
    reviews.write_text(reviews.read_text().replace('"rating": 5', '"rating": 4', 1))
    problems = check_samples(tmp_path)
    assert any("store/reviews.ndjson" in problem for problem in problems)
    assert any(problem.startswith("store:") for problem in problems)

"""``$lookup`` on the offline default reads its foreign collection once per version of it.

The kept documents must never show a stale or changed answer: every write to the foreign collection,
a transaction's own writes, and stages that change what ``$lookup`` joined are checked here, over the
wire (and against a real server with ``MONGODB_URI``, where nothing is kept and the answers agree).
"""

from __future__ import annotations

from typing import Any

import pytest
from pymongo.database import Database

LOOKUP = {"$lookup": {"from": "parts", "localField": "parts", "foreignField": "_id", "as": "joined"}}


@pytest.fixture
def shop(db: Database) -> Database:
    db.products.insert_many([{"_id": "p1", "parts": ["a", "b"]}, {"_id": "p2", "parts": ["b", "c"]}])
    db.parts.insert_many([{"_id": "a", "name": "axle"}, {"_id": "b", "name": "bolt"}, {"_id": "c", "name": "cog"}])
    return db


def _names(db: Database, *after: dict[str, Any], session: Any = None) -> dict[str, list[str]]:
    rows = db.products.aggregate([{"$sort": {"_id": 1}}, LOOKUP, *after], session=session)
    return {row["_id"]: sorted(part["name"] for part in row["joined"]) for row in rows}


def test_every_write_to_the_foreign_collection_shows_in_the_next_lookup(shop: Database) -> None:
    assert _names(shop) == {"p1": ["axle", "bolt"], "p2": ["bolt", "cog"]}
    assert _names(shop) == {"p1": ["axle", "bolt"], "p2": ["bolt", "cog"]}  # the kept documents
    shop.parts.update_one({"_id": "b"}, {"$set": {"name": "bracket"}})
    assert _names(shop) == {"p1": ["axle", "bracket"], "p2": ["bracket", "cog"]}
    shop.parts.delete_one({"_id": "a"})
    assert _names(shop) == {"p1": ["bracket"], "p2": ["bracket", "cog"]}
    shop.parts.insert_one({"_id": "a", "name": "arm"})
    assert _names(shop) == {"p1": ["arm", "bracket"], "p2": ["bracket", "cog"]}
    shop.parts.replace_one({"_id": "c"}, {"name": "crank"})
    assert _names(shop) == {"p1": ["arm", "bracket"], "p2": ["bracket", "crank"]}
    shop.drop_collection("parts")
    assert _names(shop) == {"p1": [], "p2": []}


def test_a_stage_that_changes_the_joined_documents_leaves_the_next_lookup_alone(shop: Database) -> None:
    changed = _names(shop, {"$set": {"joined.name": "changed"}})
    assert changed == {"p1": ["changed", "changed"], "p2": ["changed", "changed"]}
    list(shop.products.aggregate([LOOKUP, {"$unwind": "$joined"}, {"$set": {"joined.name": "again"}}]))
    assert _names(shop) == {"p1": ["axle", "bolt"], "p2": ["bolt", "cog"]}


def test_a_transaction_sees_its_own_writes_and_others_do_not(shop: Database) -> None:
    client = shop.client
    if not _transactions(client):
        pytest.skip("this server runs no transactions (a standalone mongod)")
    assert _names(shop) == {"p1": ["axle", "bolt"], "p2": ["bolt", "cog"]}  # kept before the transaction
    with client.start_session() as session, session.start_transaction():
        shop.parts.update_one({"_id": "a"}, {"$set": {"name": "anchor"}}, session=session)
        assert _names(shop, session=session)["p1"] == ["anchor", "bolt"]
        assert _names(shop)["p1"] == ["axle", "bolt"]  # not committed: others read the kept version
    assert _names(shop)["p1"] == ["anchor", "bolt"]


def _transactions(client: Any) -> bool:
    hello = client.admin.command("hello")
    return bool(hello.get("setName") or hello.get("msg") == "isdbgrid" or hello.get("logicalSessionTimeoutMinutes"))


def test_a_lookup_under_a_collation_matches_by_it(shop: Database) -> None:
    shop.parts.insert_one({"_id": "D", "name": "dowel"})
    shop.products.insert_one({"_id": "p3", "parts": ["d"]})
    rows = shop.products.aggregate([{"$match": {"_id": "p3"}}, LOOKUP], collation={"locale": "en", "strength": 2})
    assert [part["name"] for row in rows for part in row["joined"]] == ["dowel"]
    plain = shop.products.aggregate([{"$match": {"_id": "p3"}}, LOOKUP])
    assert [part["name"] for row in plain for part in row["joined"]] == []

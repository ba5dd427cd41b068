"""The index listing a learner reads (``list_indexes()``, ``index_information()``) in MongoDB's shape."""

from __future__ import annotations

from pymongo.database import Database


def test_index_information_is_listed_as_mongodb_lists_it(db: Database) -> None:
    """MongoDB 7.0 lists ``v: 2``, the key and the name, and only the options an index was made with:
    mongoeco wrote ``unique: false`` on every index, ``unique: true`` on ``_id_`` and the ``ns`` field
    MongoDB stopped listing in 4.4."""
    db.c.insert_one({"a": 1})
    db.c.create_index("a")
    db.c.create_index("u", unique=True)
    db.c.create_index("s", sparse=True, expireAfterSeconds=60, hidden=True)
    assert db.c.index_information() == {
        "_id_": {"v": 2, "key": [("_id", 1)]},
        "a_1": {"v": 2, "key": [("a", 1)]},
        "u_1": {"v": 2, "key": [("u", 1)], "unique": True},
        "s_1": {"v": 2, "key": [("s", 1)], "sparse": True, "expireAfterSeconds": 60, "hidden": True},
    }
    assert [list(index)[:3] for index in db.c.list_indexes()] == [["v", "key", "name"]] * 4


def test_every_batch_of_an_index_listing_has_mongodbs_shape(db: Database) -> None:
    for field in "abcde":
        db.c.create_index(field)
    reply = db.command("listIndexes", "c", cursor={"batchSize": 2})
    listed, cursor = list(reply["cursor"]["firstBatch"]), reply["cursor"]["id"]
    while cursor:
        more = db.command("getMore", cursor, collection="c", batchSize=2)["cursor"]
        listed, cursor = listed + more["nextBatch"], more["id"]
    assert [index["name"] for index in listed] == ["_id_", "a_1", "b_1", "c_1", "d_1", "e_1"]
    assert all(set(index) == {"v", "key", "name"} for index in listed), listed

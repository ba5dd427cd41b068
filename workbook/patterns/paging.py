"""Paging a user's followers (lesson 04): index order against newest first, ``skip()`` against keyset.

The ``follows`` collection's unique index ``{followedId, followerId}`` returns a user's followers in
follower-id order, which is not the order they followed in; newest first needs ``createdAt`` in the
index (``followed_newest``). Deep pages with ``skip()`` walk every skipped key again; keyset paging
(``$gt`` on the last key of the previous page) starts each page where the last one ended.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

import pandas as pd
from pymongo.collection import Collection

from workbook.calls import measure_call
from workbook.display import shell_form
from workbook.engine_reads import stored_documents
from workbook.errors import WorkbookError
from workbook.loaded import Loadable, LoadedShape, loaded_shapes
from workbook.operations.followers import FOLLOWS_NEWEST_FIRST, PAGE_SIZE

BY_FOLLOWER = [("followerId", 1)]
"""The unique index's order within one followed user: follower ids, ascending."""

_FIELDS = {"_id": 0, "followerId": 1}


def follower_counts(loaded: LoadedShape) -> dict[str, int]:
    """Followers per followed user id, in any followers shape (users nobody follows are absent).

    Counted by the server with an aggregation; on the offline default, from the engine's storage.
    """
    relationship = "follows" in loaded.collection_names
    stored = stored_documents(loaded.db, "follows" if relationship else "users")
    if stored is not None:
        if relationship:
            return dict(Counter(edge["followedId"] for edge in stored if "followedId" in edge))
        return {user["_id"]: len(user.get("followers") or []) for user in stored if user.get("followers")}
    if relationship:
        rows = loaded["follows"].aggregate([{"$group": {"_id": "$followedId", "n": {"$sum": 1}}}])
    else:
        rows = loaded["users"].aggregate([{"$project": {"n": {"$size": {"$ifNull": ["$followers", []]}}}}])
    return {row["_id"]: int(row["n"]) for row in rows if row["n"]}


def most_followed_user(loaded: LoadedShape) -> str:
    """The ``_id`` of the user with the most followers, in any followers shape (ties: the smallest id)."""
    counts = follower_counts(loaded)
    if not counts:
        raise WorkbookError(
            f"{loaded.db.name} holds no followers ({loaded.dataset}/{loaded.shape}).",
            fix='Pass a shape of the followers dataset: workbook.load("followers", "referenced").',
        )
    return str(min(counts, key=lambda user: (-counts[user], user)))


def index_order_vs_newest(follows: Collection, user_id: str, n: int = 5) -> pd.DataFrame:
    """The first ``n`` followers in the unique index's order beside the first ``n`` newest first."""
    fields = {"_id": 0, "followerId": 1, "createdAt": 1}
    by_id = list(follows.find({"followedId": user_id}, fields).sort(BY_FOLLOWER).limit(n))
    newest = list(follows.find({"followedId": user_id}, fields).sort(FOLLOWS_NEWEST_FIRST).limit(n))
    return pd.DataFrame(
        {
            "unique index order: followerId": [e["followerId"] for e in by_id],
            "unique index order: followed at": [e["createdAt"] for e in by_id],
            "newest first: followerId": [e["followerId"] for e in newest],
            "newest first: followed at": [e["createdAt"] for e in newest],
        }
    )


def newest_first_plans(follows: Collection, user_id: str) -> pd.DataFrame:
    """Newest-first page planned with each index: which index, whether it sorts in memory, keys examined."""
    from workbook.explaining import explain

    rows = {}
    for label, hint in (("planner's choice", None), ("hint: followed_follower", "followed_follower")):
        s = explain(
            follows, {"followedId": user_id}, projection=_FIELDS, sort=FOLLOWS_NEWEST_FIRST, limit=PAGE_SIZE, hint=hint
        ).summary()
        rows[label] = {
            "index": s["index"],
            "in-memory sort": s["inMemorySort"],
            "keys_examined": s["keysExamined"],
            "docs_examined": s["docsExamined"],
        }
    return pd.DataFrame(rows).T.rename_axis("plan")


def page_with_skip(follows: Collection, user_id: str, page: int, page_size: int = PAGE_SIZE) -> list[str]:
    """Page ``page`` (0-based) of a user's follower ids in index order, reached with ``skip()``."""
    cursor = follows.find({"followedId": user_id}, _FIELDS).sort(BY_FOLLOWER).skip(page * page_size).limit(page_size)
    return [edge["followerId"] for edge in cursor]


def page_after(follows: Collection, user_id: str, after: str | None, page_size: int = PAGE_SIZE) -> list[str]:
    """The page of follower ids that follows ``after`` (the last id of the previous page; None: the first page)."""
    query: dict[str, Any] = {"followedId": user_id}
    if after is not None:
        query["followerId"] = {"$gt": after}
    return [edge["followerId"] for edge in follows.find(query, _FIELDS).sort(BY_FOLLOWER).limit(page_size)]


def newest_page_before(
    follows: Collection, user_id: str, before: tuple[datetime, str] | None, page_size: int = PAGE_SIZE
) -> list[dict[str, Any]]:
    """The page of follows older than ``before`` (the last ``(createdAt, followerId)`` shown), newest first.

    Keyset paging in time order: ``$lt`` on the time, the follower id breaking ties, read from
    ``followed_newest`` in index order.
    """
    query: dict[str, Any] = {"followedId": user_id}
    if before is not None:
        created, follower = before
        query["$or"] = [{"createdAt": {"$lt": created}}, {"createdAt": created, "followerId": {"$lt": follower}}]
    fields = {"_id": 0, "followerId": 1, "createdAt": 1}
    return list(follows.find(query, fields).sort(FOLLOWS_NEWEST_FIRST).limit(page_size))


def newest_pages(follows: Collection, user_id: str, pages: int, page_size: int = PAGE_SIZE) -> list[list[str]]:
    """The first ``pages`` pages of follower ids, newest first, each asked for with the previous page's last key."""
    out: list[list[str]] = []
    before: tuple[datetime, str] | None = None
    for _ in range(pages):
        rows = newest_page_before(follows, user_id, before, page_size)
        if not rows:
            break
        out.append([row["followerId"] for row in rows])
        before = (rows[-1]["createdAt"], rows[-1]["followerId"])
    return out


def last_key_before(follows: Collection, user_id: str, page: int, page_size: int = PAGE_SIZE) -> str | None:
    """The key a reader holds when asking for ``page``: the last id of page ``page - 1`` (None for page 0).

    A reader gets it by walking the pages one by one; the follower ids are unique per followed user
    (the ``followed_follower`` index), so it is the id at position ``page * page_size - 1`` in
    follower order, read here in one query instead of ``page`` of them.
    """
    if page <= 0:
        return None
    query = {"followedId": user_id}
    last = next(iter(follows.find(query, _FIELDS).sort(BY_FOLLOWER).skip(page * page_size - 1).limit(1)), None)
    if last is None:  # past the end: the walk stops at the last page there is, holding its last id
        by_follower_descending = [(field, -direction) for field, direction in BY_FOLLOWER]
        last = next(iter(follows.find(query, _FIELDS).sort(by_follower_descending).limit(1)), None)
    return None if last is None else str(last["followerId"])


def paging_work(follows: Collection, user_id: str, pages: list[int], page_size: int = PAGE_SIZE) -> pd.DataFrame:
    """Per page number: keys and documents examined reaching it with ``skip()`` and with keyset paging."""
    rows = []
    for page in pages:
        after = last_key_before(follows, user_id, page, page_size)
        skip = measure_call(follows.database, page_with_skip, follows, user_id, page, page_size)
        keyset = measure_call(follows.database, page_after, follows, user_id, after, page_size)
        for method, work in (("skip()", skip), ("keyset ($gt)", keyset)):
            rows.append({"page": page, "method": method, **work.row(), "same_ids": skip.result == keyset.result})
    return pd.DataFrame(rows).convert_dtypes()


def whom_follows_plans(shapes: Loadable, user_id: str) -> pd.DataFrame:
    """ "Whom does ``user_id`` follow?" in each shape: the query, the index that answers it, the work."""
    from workbook.explaining import explain

    rows = {}
    for loaded in loaded_shapes(shapes):
        if "follows" in loaded.collection_names:
            collection, query = loaded["follows"], {"followerId": user_id}
        else:
            collection, query = loaded["users"], {"followers.userId": user_id}
        s = explain(collection, query, projection={"_id": 1}).summary()
        rows[loaded.shape] = {
            "collection": collection.name,
            "filter": shell_form(query),
            "index": s["index"],
            "multikey": s["multikey"],
            "keys_examined": s["keysExamined"],
            "docs_examined": s["docsExamined"],
            "returned": s["nReturned"],
        }
    return pd.DataFrame(rows).T.rename_axis("shape")


def median_followed_user(loaded: LoadedShape) -> str:
    """A typical user: the first (by ``_id``) of those with the median follower count."""
    counts: dict[str, int] = {u["_id"]: 0 for u in loaded["users"].find({}, {"_id": 1})}
    counts.update(follower_counts(loaded))
    ordered = sorted(counts.values())
    median = ordered[len(ordered) // 2]
    return min(user for user, n in counts.items() if n == median)


def indexes_frame(loaded: LoadedShape, collection: str) -> pd.DataFrame:
    """The indexes a shape declares on ``collection``: keys, uniqueness, and why each exists."""
    spec = loaded.spec.collection(collection)
    return pd.DataFrame(
        [
            {"index": i.name, "keys": ", ".join(f"{f}: {d}" for f, d in i.keys), "unique": i.unique, "why": i.why}
            for i in spec.indexes
        ]
    ).set_index("index")

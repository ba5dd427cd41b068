"""Two ways to bound the followers array (lesson 04): the outlier pattern and the bucket pattern.

- outlier: a user holds *all* their followers in an array, newest first, while they have at most
  ``cap`` (a few hundred: nearly every user). Past that, the user is flagged ``isOutlier``, keeps
  only the newest ``cap`` in the array, and every one of their follows lives in ``follower_overflow``
  (``{followedId, followerId, createdAt}``). Most pages come from one document; only the few
  outliers pay for a second collection.
- bucket: follows are grouped into ``follower_buckets`` documents of at most ``bucket_size``
  entries per user (``{userId, bucket, count, followers}``, oldest bucket 0); the user keeps
  ``followerCount``, so a newest-first page knows which (at most two) buckets hold it.

Both are built from the followers dataset by pure functions and loaded into a database of their
own; ``followers_page`` and ``follow`` work on either, with the same answers as the dataset's shapes.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

import pandas as pd
from pymongo import ASCENDING, DESCENDING, ReturnDocument
from pymongo.database import Database

from workbook.calls import Work, measure_call
from workbook.errors import UnknownChoiceError, WorkbookError
from workbook.gc_pause import paused
from workbook.loaded import LoadedShape
from workbook.operations.base import bson_time
from workbook.operations.followers import PAGE_SIZE
from workbook.shapes.followers import follower_entry, newest
from workbook.shapes.spec import Document
from workbook.sizes import largest_document_bytes

OUTLIER_CAP = 300
"""Followers a user document holds before it becomes an outlier: "a few hundred", the rule of thumb."""

BUCKET_SIZE = 300
"""Followers per bucket document."""

LAYOUTS = ("outlier", "bucket")

_INDEXES: dict[str, dict[str, list[tuple[str, int]]]] = {
    "outlier": {
        "follower_overflow": [("followedId", ASCENDING), ("createdAt", DESCENDING), ("followerId", DESCENDING)]
    },
    "bucket": {"follower_buckets": [("userId", ASCENDING), ("bucket", DESCENDING)]},
}


def _grouped(dataset: Any) -> dict[str, list[Document]]:
    grouped: dict[str, list[Document]] = defaultdict(list)
    for follow in dataset.documents("follows"):
        grouped[follow["followedId"]].append(follower_entry(follow))
    return grouped


def outlier_documents(dataset: Any, cap: int = OUTLIER_CAP) -> dict[str, list[Document]]:
    """The outlier layout's collections, built from the followers dataset (pure)."""
    grouped = _grouped(dataset)
    users, overflow = [], []
    for user in dataset.documents("users"):
        followers = newest(grouped.get(user["_id"], []))
        outlier = len(followers) > cap
        users.append({**user, "followerCount": len(followers), "followers": followers[:cap], "isOutlier": outlier})
        if outlier:
            overflow += [
                {"followedId": user["_id"], "followerId": e["userId"], "createdAt": e["createdAt"]} for e in followers
            ]
    return {"users": users, "follower_overflow": overflow}


def bucket_documents(dataset: Any, bucket_size: int = BUCKET_SIZE) -> dict[str, list[Document]]:
    """The bucket layout's collections, built from the followers dataset (pure)."""
    grouped = _grouped(dataset)
    users, buckets = [], []
    for user in dataset.documents("users"):
        oldest_first = list(reversed(newest(grouped.get(user["_id"], []))))
        users.append({**user, "followerCount": len(oldest_first)})
        for number, start in enumerate(range(0, len(oldest_first), bucket_size)):
            chunk = oldest_first[start : start + bucket_size]
            buckets.append(
                {
                    "_id": f"{user['_id']}:{number}",
                    "userId": user["_id"],
                    "bucket": number,
                    "count": len(chunk),
                    "followers": chunk,
                }
            )
    return {"users": users, "follower_buckets": buckets}


@dataclass
class Layout:
    """The followers dataset in the outlier or bucket layout, loaded into ``db``."""

    name: str
    db: Database
    size: int
    """The cap (outlier) or the bucket size (bucket)."""

    @property
    def shape(self) -> str:
        """The layout's name, as a shape's name is shown in tables."""
        return self.name

    def followers_page(self, user_id: str, page: int = 0, page_size: int = PAGE_SIZE) -> list[str]:
        """One page of the user's follower ids, newest first."""
        if self.name == "outlier":
            return _outlier_page(self, user_id, page, page_size)
        return _bucket_page(self, user_id, page, page_size)

    def follow(self, follower_id: str, followed_id: str, *, now: datetime | None = None) -> None:
        """Record that ``follower_id`` follows ``followed_id`` (no duplicate check: a sketch of the write path)."""
        entry = {"userId": follower_id, "createdAt": bson_time(now)}
        if self.name == "outlier":
            _outlier_follow(self, followed_id, entry)
        else:
            _bucket_follow(self, followed_id, entry)

    def __repr__(self) -> str:
        return f"<followers in the {self.name} layout (size {self.size}) in {self.db.name}>"


def load_layout(dataset: Any, name: str, db: Database | None = None, *, size: int | None = None) -> Layout:
    """Load the followers dataset in the ``outlier`` or ``bucket`` layout (default database:
    ``workbench_<learner>_followers_<name>``); returns the :class:`Layout`."""
    from workbook.connection import connect
    from workbook.loading import fill
    from workbook.namespace import require_own_database
    from workbook.patterns.work import load_steps

    if name not in LAYOUTS:
        raise UnknownChoiceError("layout", name, LAYOUTS)
    if getattr(dataset, "name", None) != "followers":
        raise WorkbookError(
            "The outlier and bucket layouts are built from the followers dataset.",
            fix='Pass workbook.generate("followers", scale=workbook.course_scale(), seed=7).',
        )
    size = size or (OUTLIER_CAP if name == "outlier" else BUCKET_SIZE)
    db = db if db is not None else connect(database=f"followers_{name}", quiet=True)
    require_own_database(db.name)
    with paused(), load_steps(f"load the {name} layout", 3) as bar:  # paused: see workbook.gc_pause
        documents = outlier_documents(dataset, size) if name == "outlier" else bucket_documents(dataset, size)
        bar.update()  # built; then its two collections stored
        for collection, rows in documents.items():
            db.drop_collection(collection)
            for index_collection, keys in _INDEXES[name].items():
                if index_collection == collection:
                    db[collection].create_index(keys)  # on the empty collection: the rows then go in one pass
            fill(db, collection, rows)
            bar.update()
    return Layout(name, db, size)


def _outlier_page(layout: Layout, user_id: str, page: int, page_size: int) -> list[str]:
    start = page * page_size
    # only the page's slice of the array comes back: 20 entries, not the cap's 300
    user = layout.db.users.find_one({"_id": user_id}, {"isOutlier": 1, "followers": {"$slice": [start, page_size]}})
    if user is None:
        return []
    if not user["isOutlier"] or start + page_size <= layout.size:
        return [e["userId"] for e in user["followers"]]
    cursor = (
        layout.db.follower_overflow.find({"followedId": user_id}, {"_id": 0, "followerId": 1})
        .sort([("createdAt", -1), ("followerId", -1)])
        .skip(start)
        .limit(page_size)
    )
    return [e["followerId"] for e in cursor]


def _outlier_follow(layout: Layout, followed_id: str, entry: Document) -> None:
    users = layout.db.users
    push = {"$each": [entry], "$position": 0}
    done = users.update_one(
        {"_id": followed_id, "isOutlier": False, "followerCount": {"$lt": layout.size}},
        {"$push": {"followers": push}, "$inc": {"followerCount": 1}},
    )
    if done.modified_count:
        return
    before = users.find_one_and_update(
        {"_id": followed_id},
        {
            "$push": {"followers": {**push, "$slice": layout.size}},
            "$inc": {"followerCount": 1},
            "$set": {"isOutlier": True},
        },
        projection={"isOutlier": 1, "followers": 1},
        return_document=ReturnDocument.BEFORE,
    )
    edges = [entry] if before is None or before["isOutlier"] else [entry, *before["followers"]]
    layout.db.follower_overflow.insert_many(
        [{"followedId": followed_id, "followerId": e["userId"], "createdAt": e["createdAt"]} for e in edges]
    )


def _bucket_page(layout: Layout, user_id: str, page: int, page_size: int) -> list[str]:
    user = layout.db.users.find_one({"_id": user_id}, {"followerCount": 1})
    total = user["followerCount"] if user else 0
    high, low = total - 1 - page * page_size, max(total - (page + 1) * page_size, 0)  # oldest-first positions
    if high < 0:
        return []
    buckets = layout.db.follower_buckets.find(
        {"userId": user_id, "bucket": {"$gte": low // layout.size, "$lte": high // layout.size}}
    ).sort([("bucket", -1)])
    by_position = {b["bucket"] * layout.size + i: entry for b in buckets for i, entry in enumerate(b["followers"])}
    return [by_position[position]["userId"] for position in range(high, low - 1, -1) if position in by_position]


def _bucket_follow(layout: Layout, followed_id: str, entry: Document) -> None:
    user = layout.db.users.find_one_and_update(
        {"_id": followed_id},
        {"$inc": {"followerCount": 1}},
        projection={"followerCount": 1},
        return_document=ReturnDocument.AFTER,
    )
    if user is None:
        raise WorkbookError(f"No user {followed_id!r} in {layout.db.name}.", fix="Pick an _id from users.")
    number = (user["followerCount"] - 1) // layout.size
    layout.db.follower_buckets.update_one(
        {"_id": f"{followed_id}:{number}"},
        {
            "$push": {"followers": entry},
            "$inc": {"count": 1},
            "$setOnInsert": {"userId": followed_id, "bucket": number},
        },
        upsert=True,
    )


def layout_table(
    shapes: list[LoadedShape | Layout], top_user: str, typical_user: str, deep_page: int = 10
) -> pd.DataFrame:
    """Per shape or layout: the largest document, and the work of three followers pages (the most
    followed user's first and ``deep_page``-th, a typical user's first).

    ``bytes_returned`` is the BSON size of the documents the page received (what
    :mod:`workbook.patterns.scaling` computes); ``reply_bytes`` adds the replies around them (cursor
    id, namespace, ``ok``: about a hundred bytes a reply, more for a longer database name)."""
    from workbook.waiting import wait_bar

    rows = []
    for target in wait_bar(shapes, desc="measure three pages in each", unit="shape"):  # sizes: seconds, first time
        page = partial(target.ops.run, "followers_page") if isinstance(target, LoadedShape) else target.followers_page
        big = max(
            largest_document_bytes(target.db[name])
            for name in target.db.list_collection_names()
            if not name.startswith("_")
        )
        reads: dict[str, Work] = {
            "top user, page 0": measure_call(target.db, page, top_user, 0),
            f"top user, page {deep_page}": measure_call(target.db, page, top_user, deep_page),
            "typical user, page 0": measure_call(target.db, page, typical_user, 0),
        }
        for read, work in reads.items():
            rows.append(
                {
                    "shape": target.shape,
                    "read": read,
                    "largest_doc_bytes": big,
                    **work.row(),
                    "bytes_returned": work.document_bytes,  # the documents, counted as scaling counts them
                    "reply_bytes": work.bytes_returned,
                    "answer": tuple(work.result),
                }
            )
    return pd.DataFrame(rows).convert_dtypes()


def users_over_cap(dataset: Any, cap: int = OUTLIER_CAP) -> dict[str, float]:
    """How many users have more than ``cap`` followers (the outliers), of how many, and the share."""
    counts: dict[str, int] = defaultdict(int)
    for follow in dataset.documents("follows"):
        counts[follow["followedId"]] += 1
    users = len(dataset.documents("users"))
    over = sum(1 for n in counts.values() if n > cap)
    return {"cap": cap, "users": users, "outliers": over, "share_outliers_pct": round(100 * over / users, 2)}


@dataclass(repr=False)
class WritePath:
    """Follows written to one user of a layout until it crossed the layout's boundary (the cap, or a bucket's end)."""

    layout: str
    user: str
    follows: int
    before: dict[str, Any]
    after: dict[str, Any]
    crossing_commands: list[str]
    other_commands: list[str]

    def record(self) -> Any:
        """Before → after for each thing the writes changed, and the commands of the crossing follow."""
        from workbook.display import record

        values: dict[str, Any] = {"user": self.user, "follows written": self.follows}
        values.update({name: (self.before[name], self.after[name]) for name in self.before})
        values["commands of an ordinary follow"] = ", ".join(self.other_commands)
        values["commands of the crossing follow"] = ", ".join(self.crossing_commands)
        return record(values, caption=f"the {self.layout} layout's write path, across its boundary")

    def __repr__(self) -> str:
        return repr(self.record())

    def _repr_html_(self) -> str:
        return str(self.record()._repr_html_())


def _state(layout: Layout, user_id: str) -> dict[str, Any]:
    """What a follow changes for ``user_id`` in the layout."""
    db = layout.db
    user = db.users.find_one({"_id": user_id}, {"followers": 1, "followerCount": 1, "isOutlier": 1}) or {}
    if layout.name == "outlier":
        return {
            "followerCount": user.get("followerCount", 0),
            "isOutlier": bool(user.get("isOutlier")),
            "entries in the user's array": len(user.get("followers", [])),
            "follows in follower_overflow": db.follower_overflow.count_documents({"followedId": user_id}),
        }
    buckets = list(db.follower_buckets.find({"userId": user_id}, {"count": 1}).sort("bucket", -1))
    return {
        "followerCount": user.get("followerCount", 0),
        "buckets": len(buckets),
        "entries in the newest bucket": buckets[0]["count"] if buckets else 0,
    }


def follows_to_cross(layout: Layout, follower_count: int) -> int:
    """Follows that take a user with ``follower_count`` followers across the layout's boundary: past the
    cap (outlier), or into a new bucket (bucket)."""
    if layout.name == "outlier":
        return max(layout.size - follower_count + 1, 1)
    return layout.size - (follower_count - 1) % layout.size if follower_count else 1


def nearest_to_boundary(layout: Layout) -> tuple[str, int]:
    """The user the fewest follows take across the layout's boundary, and how many follows that is
    (outlier: the non-outlier with the most followers; bucket: the user whose newest bucket is fullest)."""
    query: dict[str, Any] = {"isOutlier": False} if layout.name == "outlier" else {"followerCount": {"$gt": 0}}
    candidates = [
        (follows_to_cross(layout, int(u["followerCount"])), str(u["_id"]))
        for u in layout.db.users.find(query, {"followerCount": 1})
    ]
    if not candidates:
        raise WorkbookError(f"No user can cross the {layout.name} layout's boundary.", fix="Load the layout again.")
    follows, user = min(candidates)
    return user, follows


def cross_boundary(layout: Layout, user_id: str | None = None, *, start: datetime | None = None) -> WritePath:
    """Follow one user (default: :func:`nearest_to_boundary`) with new followers (``new-follower-0001``...)
    until the layout's boundary is crossed: the user becomes an outlier, or a new bucket opens. Returns
    the state before and after, and the commands of the crossing follow against an ordinary one."""
    from datetime import UTC, timedelta

    from workbook.monitor import capture

    if user_id is None:
        chosen, follows = nearest_to_boundary(layout)
    else:
        found = layout.db.users.find_one({"_id": user_id}, {"followerCount": 1})
        if found is None:
            raise WorkbookError(f"No user {user_id!r} in {layout.db.name}.", fix="Pick an _id from users.")
        chosen, follows = user_id, follows_to_cross(layout, int(found["followerCount"]))
    at = start or datetime(2030, 1, 1, tzinfo=UTC)
    before = _state(layout, chosen)
    commands: list[list[str]] = []
    for number in range(1, follows + 1):
        with capture() as sent:
            layout.follow(f"new-follower-{number:04d}", chosen, now=at + timedelta(seconds=number))
        commands.append([c["name"] for c in sent.commands])
    after = _state(layout, chosen)
    ordinary = commands[0] if len(commands) > 1 else []
    return WritePath(layout.name, chosen, follows, before, after, commands[-1], ordinary)

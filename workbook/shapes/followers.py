"""The followers graph in three shapes: where "who follows whom" lives.

- embedded: every user holds a ``followers`` array of ``{userId, createdAt}`` (oldest first, as
  appended). One read per profile, and the unbounded-array anti-pattern: the most-followed user's
  document grows with every follow (small scale, seed 7: 1,971 followers, 105 KB of BSON).
  "Whom does X follow?" needs a multikey index on ``followers.userId``.
- referenced: one ``follows`` document per edge (``followerId``, ``followedId``, ``createdAt``);
  users hold no follower data. A unique index on the pair makes a duplicate follow impossible.
- hybrid: the ``follows`` collection as in referenced (the source of truth), plus on each user
  the counts (``followerCount``, ``followingCount``; computed pattern) and the 5 newest followers
  (``recentFollowers``; subset pattern), all kept in step by one transaction per follow.

The outlier pattern, and why a flag rather than buckets: in the hybrid shape every user document
is already bounded, so the most-followed accounts need no separate storage. What differs for
them is the read: for most users (the median has 3 followers) the preview *is* the whole
follower list, and a followers page can be served from the user document alone. Users with more
followers than the preview holds are flagged ``isOutlier: true`` (a quarter of users at the tiny
and small scales), and only for them does a followers page query ``follows``. Buckets
(``{userId, bucket, count, followers[<=N]}``) were the alternative; they were not chosen because
pages are newest first while buckets fill oldest first, so a page straddles two buckets, and an
unfollow leaves a hole in an old bucket: more code for a read the ``follows`` index answers.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from workbook.shapes.spec import CollectionSpec, Document, IndexSpec, Made, ShapeSpec, json_schema

if TYPE_CHECKING:
    from workbook.datasets import Dataset

RECENT_FOLLOWERS = 5
"""How many of a user's newest followers the hybrid shape keeps on the user (and a profile shows)."""

OUTLIER_THRESHOLD = RECENT_FOLLOWERS
"""Hybrid users with more followers than this are flagged ``isOutlier``: their preview is not the whole list."""

NEWEST_FIRST = (("createdAt", -1), ("userId", -1))
"""Follower order everywhere: newest first, the follower's id breaking ties."""

_DATE = {"bsonType": "date"}
_COUNT = {"bsonType": ["int", "long"], "minimum": 0}
_ENTRY_FIELDS = {"userId": {"bsonType": "string"}, "createdAt": _DATE}
_FOLLOWER_ARRAY: dict[str, Any] = {
    "bsonType": "array",
    "items": {"bsonType": "object", "required": list(_ENTRY_FIELDS), "properties": _ENTRY_FIELDS},
}
_USER_FIELDS: dict[str, Any] = {
    "handle": {"bsonType": "string"},
    "name": {"bsonType": "string"},
    "bio": {"bsonType": "string"},
    "createdAt": _DATE,
}
_USER_REQUIRED = ["handle", "name", "createdAt"]

HANDLE_UNIQUE = IndexSpec(
    (("handle", 1),), "handle_unique", "a profile is found by its handle; no two users share one", unique=True
)
FOLLOWED_FOLLOWER = IndexSpec(
    (("followedId", 1), ("followerId", 1)),
    "followed_follower",
    "one edge per pair: a second follow of the same user is rejected; also answers 'does A follow B?'",
    unique=True,
)
FOLLOWED_NEWEST = IndexSpec(
    (("followedId", 1), ("createdAt", -1), ("followerId", -1)),
    "followed_newest",
    "a user's followers newest first, ESR: equality on the followed user, then the sort (follower breaks ties)",
)
FOLLOWER_FOLLOWED = IndexSpec(
    (("followerId", 1), ("followedId", 1)),
    "follower_followed",
    "whom a user follows, and how many: equality on the follower",
)
FOLLOWS = CollectionSpec(
    "follows",
    (FOLLOWED_FOLLOWER, FOLLOWED_NEWEST, FOLLOWER_FOLLOWED),
    json_schema(
        ["followerId", "followedId", "createdAt"],
        {"followerId": {"bsonType": "string"}, "followedId": {"bsonType": "string"}, "createdAt": _DATE},
    ),
)


def _users(*indexes: IndexSpec, **extra_fields: Any) -> CollectionSpec:
    return CollectionSpec(
        "users",
        (HANDLE_UNIQUE, *indexes),
        json_schema(_USER_REQUIRED + sorted(extra_fields), {**_USER_FIELDS, **extra_fields}),
    )


def follower_entry(follow: Document) -> Document:
    """A follow as it sits inside the followed user: who, and since when."""
    return {"userId": follow["followerId"], "createdAt": follow["createdAt"]}


def newest(entries: Sequence[Document], count: int | None = None) -> list[Document]:
    """Follower entries newest first (the follower's id breaks ties), at most ``count``."""
    ordered = sorted(entries, key=lambda e: (e["createdAt"], e["userId"]), reverse=True)
    return ordered if count is None else ordered[:count]


def _followers_by_user(dataset: Dataset) -> dict[str, list[Document]]:
    grouped: dict[str, list[Document]] = defaultdict(list)
    for follow in dataset.documents("follows"):
        grouped[follow["followedId"]].append(follower_entry(follow))
    return grouped


def build_embedded(dataset: Dataset) -> dict[str, Sequence[Document]]:
    """Every user holds all their followers, oldest first (as they were appended)."""
    grouped = _followers_by_user(dataset)

    def with_followers(user: Document) -> Document:
        return {**user, "followers": list(reversed(newest(grouped.get(user["_id"], []))))}

    return {"users": Made(dataset.documents("users"), with_followers)}


def build_referenced(dataset: Dataset) -> dict[str, Sequence[Document]]:
    """Users without follower data; one document per follow edge."""
    return {"users": list(dataset.documents("users")), "follows": list(dataset.documents("follows"))}


def build_hybrid(dataset: Dataset) -> dict[str, Sequence[Document]]:
    """The follows collection, plus counts, the newest five and the outlier flag on each user."""
    grouped = _followers_by_user(dataset)
    following = Counter(follow["followerId"] for follow in dataset.documents("follows"))

    def with_counts(user: Document) -> Document:
        followers = grouped.get(user["_id"], [])
        return {
            **user,
            "followerCount": len(followers),
            "followingCount": following[user["_id"]],
            "recentFollowers": newest(followers, RECENT_FOLLOWERS),
            "isOutlier": len(followers) > OUTLIER_THRESHOLD,
        }

    return {"users": Made(dataset.documents("users"), with_counts), "follows": list(dataset.documents("follows"))}


def shapes() -> dict[str, ShapeSpec]:
    """The followers dataset's three shapes."""
    follower_of = IndexSpec(
        (("followers.userId", 1),),
        "follower_of",
        "multikey: whom a user follows ('followers' arrays that contain them), and 'does A follow B?'",
    )
    recent = {**_FOLLOWER_ARRAY, "maxItems": RECENT_FOLLOWERS}
    return {
        "embedded": ShapeSpec(
            "followers",
            "embedded",
            "every follower inside the followed user: one read per profile, but the array grows without bound",
            (_users(follower_of, followers=_FOLLOWER_ARRAY),),
            build_embedded,
        ),
        "referenced": ShapeSpec(
            "followers",
            "referenced",
            "one document per follow: bounded users, four reads per profile",
            (_users(), FOLLOWS),
            build_referenced,
        ),
        "hybrid": ShapeSpec(
            "followers",
            "hybrid",
            "follows collection plus counts, the 5 newest followers and an outlier flag on the user",
            (
                _users(
                    followerCount=_COUNT,
                    followingCount=_COUNT,
                    recentFollowers=recent,
                    isOutlier={"bsonType": "bool"},
                ),
                FOLLOWS,
            ),
            build_hybrid,
        ),
    }

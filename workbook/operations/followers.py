"""The followers graph's operations in each shape: same names, same logical answers.

A profile shows the user, both counts and the 5 newest followers; a followers page lists follower
ids newest first; ``follow`` and ``unfollow`` say whether anything changed. Each subclass reads
and writes where its shape keeps the edges (see :mod:`workbook.shapes.followers`).
"""

from __future__ import annotations

from datetime import datetime

from bson import ObjectId
from pymongo import ReturnDocument
from pymongo.client_session import ClientSession
from pymongo.errors import DuplicateKeyError

from workbook.errors import OperationRejectedError
from workbook.operations.base import Operations, bson_time
from workbook.shapes.followers import NEWEST_FIRST, OUTLIER_THRESHOLD, RECENT_FOLLOWERS, newest
from workbook.shapes.spec import Document

PAGE_SIZE = 20
FOLLOWS_NEWEST_FIRST = [("createdAt", -1), ("followerId", -1)]
"""``NEWEST_FIRST`` on the ``follows`` collection, where the follower is ``followerId``."""

_INTERNAL = ("followers", "recentFollowers", "followerCount", "followingCount", "isOutlier")


def profile_answer(user: Document, follower_count: int, following_count: int, newest_ids: list[str]) -> Document:
    """The logical profile: the user's own fields, both counts and the newest followers' ids."""
    fields = {k: v for k, v in user.items() if k not in _INTERNAL}
    return {
        **fields,
        "followerCount": follower_count,
        "followingCount": following_count,
        "newestFollowers": newest_ids,
    }


class FollowersOperations(Operations):
    """Operations shared by the followers graph's shapes."""

    dataset = "followers"
    NAMES = ("profile", "followers_page", "is_following", "follow", "unfollow")

    def profile(self, user_id: str) -> Document | None:
        """A user with follower and following counts and the ids of the 5 newest followers."""
        raise NotImplementedError  # each shape answers it its own way

    def followers_page(self, user_id: str, page: int = 0, page_size: int = PAGE_SIZE) -> list[str]:
        """One page of a user's follower ids, newest first."""
        raise NotImplementedError

    def is_following(self, follower_id: str, followed_id: str) -> bool:
        """Whether ``follower_id`` follows ``followed_id``."""
        raise NotImplementedError

    def follow(self, follower_id: str, followed_id: str, *, now: datetime | None = None) -> bool:
        """Make ``follower_id`` follow ``followed_id``; False if it already did."""
        raise NotImplementedError

    def unfollow(self, follower_id: str, followed_id: str) -> bool:
        """Make ``follower_id`` stop following ``followed_id``; False if it did not."""
        raise NotImplementedError

    def _check_follow(self, follower_id: str, followed_id: str) -> None:
        if follower_id == followed_id:
            raise OperationRejectedError(
                f"{follower_id!r} cannot follow themselves.", fix="Pass two different user ids."
            )
        found = self.db.users.count_documents({"_id": {"$in": [follower_id, followed_id]}})
        if found != 2:
            raise OperationRejectedError(
                f"No user {follower_id!r} or {followed_id!r} in {self.db.name}.", fix="Pick user ids from db.users."
            )

    def _newest_follows(
        self, user_id: str, skip: int, limit: int, session: ClientSession | None = None
    ) -> list[Document]:
        """Newest follow edges of ``user_id`` from the ``follows`` collection (index ``followed_newest``)."""
        cursor = (
            self.db.follows.find({"followedId": user_id}, {"_id": 0, "followerId": 1, "createdAt": 1}, session=session)
            .sort(FOLLOWS_NEWEST_FIRST)
            .skip(skip)
            .limit(limit)
        )
        return list(cursor)

    def _follows_edge(self, follower_id: str, followed_id: str) -> bool:
        """Whether the edge exists in ``follows`` (answered by the unique index ``followed_follower``)."""
        return self.db.follows.count_documents({"followedId": followed_id, "followerId": follower_id}, limit=1) == 1

    def _new_follow(self, follower_id: str, followed_id: str, now: datetime | None) -> Document:
        return {
            "_id": f"follow-{ObjectId()}",
            "followerId": follower_id,
            "followedId": followed_id,
            "createdAt": bson_time(now),
        }


class FollowersEmbedded(FollowersOperations):
    """Followers inside the followed user."""

    shape = "embedded"

    def profile(self, user_id: str) -> Document | None:
        """Two reads: the user with every follower, and a multikey count of whom they follow."""
        user = self.db.users.find_one({"_id": user_id})
        if user is None:
            return None
        followers = user.get("followers", [])
        following = self.db.users.count_documents({"followers.userId": user_id})
        recent = [entry["userId"] for entry in newest(followers, RECENT_FOLLOWERS)]
        return profile_answer(user, len(followers), following, recent)

    def followers_page(self, user_id: str, page: int = 0, page_size: int = PAGE_SIZE) -> list[str]:
        """The whole array comes back, to be sorted and sliced here: every page costs the full list."""
        user = self.db.users.find_one({"_id": user_id}, {"followers": 1})
        if user is None:
            return []
        ordered = newest(user.get("followers", []))
        return [entry["userId"] for entry in ordered[page * page_size : (page + 1) * page_size]]

    def is_following(self, follower_id: str, followed_id: str) -> bool:
        """Is the follower in the followed user's array?"""
        query = {"_id": followed_id, "followers.userId": follower_id}
        return self.db.users.count_documents(query, limit=1) == 1

    def follow(self, follower_id: str, followed_id: str, *, now: datetime | None = None) -> bool:
        """Append to the followed user's array, unless the follower is already in it."""
        self._check_follow(follower_id, followed_id)
        entry = {"userId": follower_id, "createdAt": bson_time(now)}
        result = self.db.users.update_one(
            {"_id": followed_id, "followers.userId": {"$ne": follower_id}}, {"$push": {"followers": entry}}
        )
        return result.modified_count == 1

    def unfollow(self, follower_id: str, followed_id: str) -> bool:
        """Pull the follower out of the followed user's array."""
        result = self.db.users.update_one(
            {"_id": followed_id, "followers.userId": follower_id}, {"$pull": {"followers": {"userId": follower_id}}}
        )
        return result.modified_count == 1


class FollowersReferenced(FollowersOperations):
    """One document per follow edge."""

    shape = "referenced"

    def profile(self, user_id: str) -> Document | None:
        """Four reads: the user, two counts and the newest followers, each on its own index."""
        user = self.db.users.find_one({"_id": user_id})
        if user is None:
            return None
        followers = self.db.follows.count_documents({"followedId": user_id})
        following = self.db.follows.count_documents({"followerId": user_id})
        recent = [edge["followerId"] for edge in self._newest_follows(user_id, 0, RECENT_FOLLOWERS)]
        return profile_answer(user, followers, following, recent)

    def followers_page(self, user_id: str, page: int = 0, page_size: int = PAGE_SIZE) -> list[str]:
        """One index range on ``followed_newest``: only the page's edges are read."""
        return [edge["followerId"] for edge in self._newest_follows(user_id, page * page_size, page_size)]

    def is_following(self, follower_id: str, followed_id: str) -> bool:
        """One probe of the unique index on the pair."""
        return self._follows_edge(follower_id, followed_id)

    def follow(self, follower_id: str, followed_id: str, *, now: datetime | None = None) -> bool:
        """Insert one edge; the unique index turns a second follow into a duplicate-key error."""
        self._check_follow(follower_id, followed_id)
        try:
            self.db.follows.insert_one(self._new_follow(follower_id, followed_id, now))
        except DuplicateKeyError:
            return False
        return True

    def unfollow(self, follower_id: str, followed_id: str) -> bool:
        """Delete the edge."""
        result = self.db.follows.delete_one({"followedId": followed_id, "followerId": follower_id})
        return result.deleted_count == 1


class FollowersHybrid(FollowersOperations):
    """The follows collection, plus counts, the newest five and the outlier flag on the user."""

    shape = "hybrid"

    def profile(self, user_id: str) -> Document | None:
        """One read: the user already holds both counts and the newest followers."""
        user = self.db.users.find_one({"_id": user_id})
        if user is None:
            return None
        recent = [entry["userId"] for entry in user.get("recentFollowers", [])]
        return profile_answer(user, user.get("followerCount", 0), user.get("followingCount", 0), recent)

    def followers_page(self, user_id: str, page: int = 0, page_size: int = PAGE_SIZE) -> list[str]:
        """Most users: the preview is the whole list. Outliers: one index range on ``follows``."""
        user = self.db.users.find_one({"_id": user_id}, {"recentFollowers": 1, "isOutlier": 1})
        if user is None:
            return []
        if not user.get("isOutlier", False):
            entries = user.get("recentFollowers", [])[page * page_size : (page + 1) * page_size]
            return [entry["userId"] for entry in entries]
        return [edge["followerId"] for edge in self._newest_follows(user_id, page * page_size, page_size)]

    def is_following(self, follower_id: str, followed_id: str) -> bool:
        """One probe of the unique index on the pair (the source of truth)."""
        return self._follows_edge(follower_id, followed_id)

    def follow(self, follower_id: str, followed_id: str, *, now: datetime | None = None) -> bool:
        """Insert the edge and, in the same transaction, bump both counts and the followed user's preview."""
        self._check_follow(follower_id, followed_id)
        edge = self._new_follow(follower_id, followed_id, now)
        entry = {"userId": follower_id, "createdAt": edge["createdAt"]}

        def insert_and_count(session: ClientSession | None) -> None:
            self.db.follows.insert_one(edge, session=session)
            self.db.users.update_one(
                {"_id": followed_id},
                {
                    "$inc": {"followerCount": 1},
                    "$push": {
                        "recentFollowers": {
                            "$each": [entry],
                            "$sort": dict(NEWEST_FIRST),
                            "$slice": RECENT_FOLLOWERS,
                        }
                    },
                },
                session=session,
            )
            self.db.users.update_one(
                {"_id": followed_id, "isOutlier": False, "followerCount": {"$gt": OUTLIER_THRESHOLD}},
                {"$set": {"isOutlier": True}},
                session=session,
            )
            self.db.users.update_one({"_id": follower_id}, {"$inc": {"followingCount": 1}}, session=session)

        try:
            self.in_transaction(insert_and_count)
        except DuplicateKeyError:
            return False  # already following: the transaction rolled back, nothing changed
        return True

    def unfollow(self, follower_id: str, followed_id: str) -> bool:
        """Delete the edge, lower both counts, and refill the preview from ``follows`` if it lost an entry."""

        def delete_and_count(session: ClientSession | None) -> bool:
            deleted = self.db.follows.delete_one(
                {"followedId": followed_id, "followerId": follower_id}, session=session
            )
            if deleted.deleted_count == 0:
                return False
            user = self.db.users.find_one_and_update(
                {"_id": followed_id},
                {"$inc": {"followerCount": -1}, "$pull": {"recentFollowers": {"userId": follower_id}}},
                projection={"followerCount": 1, "recentFollowers": 1},
                return_document=ReturnDocument.AFTER,
                session=session,
            )
            self.db.users.update_one({"_id": follower_id}, {"$inc": {"followingCount": -1}}, session=session)
            if user is not None:
                count = user["followerCount"]
                fields: Document = {"isOutlier": count > OUTLIER_THRESHOLD}
                if len(user["recentFollowers"]) < min(count, RECENT_FOLLOWERS):
                    edges = self._newest_follows(followed_id, 0, RECENT_FOLLOWERS, session)
                    fields["recentFollowers"] = [
                        {"userId": e["followerId"], "createdAt": e["createdAt"]} for e in edges
                    ]
                self.db.users.update_one({"_id": followed_id}, {"$set": fields}, session=session)
            return True

        return self.in_transaction(delete_and_count)


OPERATIONS: dict[str, type[FollowersOperations]] = {
    "embedded": FollowersEmbedded,
    "referenced": FollowersReferenced,
    "hybrid": FollowersHybrid,
}
"""Each shape's class, as registered in :mod:`workbook.datasets.registry`."""

__all__ = [
    "OPERATIONS",
    "FollowersEmbedded",
    "FollowersHybrid",
    "FollowersOperations",
    "FollowersReferenced",
    "profile_answer",
]

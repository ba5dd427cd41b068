"""The followers graph in three shapes: builder invariants, equal answers from every shape, real writes."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import pytest
from pymongo.errors import DuplicateKeyError, WriteError

import workbook
from tests.shape_support import loaded_in_every_shape, same_in_every_shape
from workbook.dataset_parts import shape_spec
from workbook.errors import OperationRejectedError, UnknownChoiceError
from workbook.shapes.followers import (
    OUTLIER_THRESHOLD,
    RECENT_FOLLOWERS,
    build_embedded,
    build_hybrid,
    build_referenced,
)

NOW = datetime(2026, 1, 15, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def tiny():
    return workbook.generate("followers", scale="tiny", seed=7)


def follower_counts(dataset) -> Counter:
    return Counter(f["followedId"] for f in dataset.collections["follows"])


def most_followed(dataset) -> str:
    return follower_counts(dataset).most_common(1)[0][0]


def unfollowed(dataset) -> str:
    counts = follower_counts(dataset)
    return next(u["_id"] for u in dataset.collections["users"] if u["_id"] not in counts)


def with_followers(dataset, count: int) -> str:
    counts = follower_counts(dataset)
    return next(u["_id"] for u in dataset.collections["users"] if counts[u["_id"]] == count)


def edges(dataset) -> set[tuple[str, str]]:
    return {(f["followerId"], f["followedId"]) for f in dataset.collections["follows"]}


@pytest.fixture
def all_shapes(engine, tiny):
    """The tiny dataset loaded in every shape; dropped afterwards."""
    yield from loaded_in_every_shape(engine, tiny)


def assert_hybrid_consistent(db, user_ids) -> None:
    """The hybrid user documents agree with the follows collection, their source of truth."""
    for user_id in user_ids:
        user = db.users.find_one({"_id": user_id})
        newest = list(db.follows.find({"followedId": user_id}).sort([("createdAt", -1), ("followerId", -1)]).limit(5))
        assert user["followerCount"] == db.follows.count_documents({"followedId": user_id})
        assert user["followingCount"] == db.follows.count_documents({"followerId": user_id})
        assert [e["userId"] for e in user["recentFollowers"]] == [f["followerId"] for f in newest]
        assert user["isOutlier"] == (user["followerCount"] > OUTLIER_THRESHOLD)


# --- pure builders -------------------------------------------------------------------------


def test_hybrid_keeps_counts_five_newest_and_the_outlier_flag(tiny):
    users = build_hybrid(tiny)["users"]
    followers = follower_counts(tiny)
    following = Counter(f["followerId"] for f in tiny.collections["follows"])
    assert max(followers.values()) > RECENT_FOLLOWERS  # the preview really is a subset somewhere
    for user in users:
        recent = user["recentFollowers"]
        assert len(recent) == min(RECENT_FOLLOWERS, followers[user["_id"]])
        assert [e["createdAt"] for e in recent] == sorted((e["createdAt"] for e in recent), reverse=True)
        assert {(e["userId"], user["_id"]) for e in recent} <= edges(tiny)
        assert user["followerCount"] == followers[user["_id"]]
        assert user["followingCount"] == following[user["_id"]]
        assert user["isOutlier"] == (followers[user["_id"]] > OUTLIER_THRESHOLD)
    flagged = sum(user["isOutlier"] for user in users)
    assert 0 < flagged < len(users) / 2  # outliers are a minority, and exist


def test_embedded_holds_every_edge_and_referenced_none(tiny):
    users = build_embedded(tiny)["users"]
    assert {(e["userId"], u["_id"]) for u in users for e in u["followers"]} == edges(tiny)
    assert sum(len(u["followers"]) for u in users) == len(tiny.collections["follows"])
    for user in users:
        times = [e["createdAt"] for e in user["followers"]]
        assert times == sorted(times)  # appended order: oldest first
    referenced = build_referenced(tiny)
    assert all(set(u) == {"_id", "handle", "name", "bio", "createdAt"} for u in referenced["users"])
    assert referenced["follows"] == tiny.collections["follows"]


def test_follows_carry_the_unique_pair_index():
    for shape in ("referenced", "hybrid"):
        follows = shape_spec("followers", shape).collection("follows")
        unique = [index for index in follows.indexes if index.unique]
        assert [index.keys for index in unique] == [(("followedId", 1), ("followerId", 1))]
    assert shape_spec("followers", "embedded").collection_names == ["users"]


# --- equal answers ---------------------------------------------------------------------------


def test_reads_answer_the_same_in_every_shape(all_shapes, tiny):
    top, nobody, small = most_followed(tiny), unfollowed(tiny), with_followers(tiny, 3)
    profile = same_in_every_shape(all_shapes, "profile", top)
    assert profile["followerCount"] == follower_counts(tiny)[top]
    assert len(profile["newestFollowers"]) == RECENT_FOLLOWERS
    assert not {"followers", "recentFollowers", "isOutlier"} & set(profile)
    assert same_in_every_shape(all_shapes, "profile", nobody)["newestFollowers"] == []
    assert len(same_in_every_shape(all_shapes, "profile", small)["newestFollowers"]) == 3
    assert same_in_every_shape(all_shapes, "profile", "user-nope") is None

    pages = [same_in_every_shape(all_shapes, "followers_page", top, page=p, page_size=4) for p in range(8)]
    listed = [user for page in pages for user in page]
    assert listed[:RECENT_FOLLOWERS] == profile["newestFollowers"]
    assert len(listed) == len(set(listed)) == follower_counts(tiny)[top]
    assert (
        same_in_every_shape(all_shapes, "followers_page", small)
        == same_in_every_shape(all_shapes, "profile", small)["newestFollowers"]
    )
    assert same_in_every_shape(all_shapes, "followers_page", small, page=1) == []
    assert same_in_every_shape(all_shapes, "followers_page", "user-nope") == []

    follower, followed = next((a, b) for a, b in sorted(edges(tiny)) if (b, a) not in edges(tiny))
    assert same_in_every_shape(all_shapes, "is_following", follower, followed) is True
    assert same_in_every_shape(all_shapes, "is_following", followed, follower) is False
    assert same_in_every_shape(all_shapes, "is_following", listed[-1], top) is True


def test_writes_then_reads_agree_in_every_shape(all_shapes, tiny):
    target = with_followers(tiny, 4)  # not an outlier yet: its preview is the whole list
    current = {f["followerId"] for f in tiny.collections["follows"] if f["followedId"] == target}
    newcomers = sorted(u["_id"] for u in tiny.collections["users"] if u["_id"] not in current | {target})[:3]
    for op in all_shapes.values():
        for follower in newcomers:  # same moment: the follower's id breaks the tie
            assert op.follow(follower, target, now=NOW) is True
        assert op.follow(newcomers[0], target, now=NOW) is False
    profile = same_in_every_shape(all_shapes, "profile", target)
    assert profile["followerCount"] == 7
    assert profile["newestFollowers"][:3] == sorted(newcomers, reverse=True)
    assert all_shapes["hybrid"].db.users.find_one({"_id": target})["isOutlier"] is True
    assert len(same_in_every_shape(all_shapes, "followers_page", target)) == 7

    for op in all_shapes.values():  # unfollow one in the preview, one outside it, one twice
        assert op.unfollow(newcomers[1], target) is True
        assert op.unfollow(sorted(current)[0], target) is True
        assert op.unfollow(newcomers[1], target) is False
    profile = same_in_every_shape(all_shapes, "profile", target)
    assert profile["followerCount"] == 5 and len(profile["newestFollowers"]) == 5
    assert newcomers[1] not in same_in_every_shape(all_shapes, "followers_page", target)
    assert same_in_every_shape(all_shapes, "is_following", newcomers[2], target) is True
    assert same_in_every_shape(all_shapes, "is_following", newcomers[1], target) is False
    for follower in newcomers:
        same_in_every_shape(all_shapes, "profile", follower)  # following counts moved too
    assert_hybrid_consistent(all_shapes["hybrid"].db, [target, *newcomers, *current])


def test_bad_follows_are_rejected_with_the_fix(all_shapes, tiny):
    user = most_followed(tiny)
    for op in all_shapes.values():
        with pytest.raises(OperationRejectedError, match="cannot follow themselves"):
            op.follow(user, user)
        with pytest.raises(OperationRejectedError, match="Pick user ids"):
            op.follow("user-nope", user)
    assert_hybrid_consistent(all_shapes["hybrid"].db, [user])


# --- validators, indexes and loading ---------------------------------------------------------


def test_unique_index_rejects_a_duplicate_pair(all_shapes, tiny):
    edge = tiny.collections["follows"][0]
    for shape in ("referenced", "hybrid"):
        with pytest.raises(DuplicateKeyError):
            all_shapes[shape].db.follows.insert_one({**edge, "_id": "follow-again", "createdAt": NOW})


def test_hybrid_validator_rejects_a_sixth_recent_follower(all_shapes, tiny):
    db = all_shapes["hybrid"].db
    top = most_followed(tiny)
    with pytest.raises(WriteError) as caught:
        db.users.update_one(
            {"_id": top}, {"$push": {"recentFollowers": {"userId": "u", "createdAt": NOW}}}
        )  # no $slice
    assert caught.value.code == 121
    with pytest.raises(WriteError):
        db.users.update_one({"_id": top}, {"$set": {"followerCount": -1}})
    with pytest.raises(WriteError):
        db.follows.insert_one({"followerId": "user-000001", "followedId": top})  # no createdAt


def test_unknown_operation_lists_the_choices(all_shapes):
    with pytest.raises(
        UnknownChoiceError, match="Choose from: follow, followers_page, is_following, profile, unfollow"
    ):
        all_shapes["embedded"].run("followers_pag", "user-000001")

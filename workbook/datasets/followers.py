"""The `followers` dataset: users and who follows whom, with a power-law in-degree."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from workbook.datasets import words
from workbook.datasets.ids import id_width, make_id
from workbook.datasets.seeding import distinct_indices, ranks, stream, weighted_counts, zipf_cumulative
from workbook.datasets.timeline import YEAR, moment

Document = dict[str, Any]


@dataclass(frozen=True)
class FollowersSize:
    """How many users and follow edges the followers generator makes."""

    users: int
    follows: int


SIZES = {
    "tiny": FollowersSize(users=60, follows=300),
    "small": FollowersSize(users=5_000, follows=45_000),
    "medium": FollowersSize(users=50_000, follows=450_000),
    "large": FollowersSize(users=200_000, follows=1_800_000),
}

# An offset of 2 keeps the top account at a large share of users, not all of them.
POPULARITY_OFFSET = 2


def generate_followers(size: FollowersSize, seed: int) -> dict[str, list[Document]]:
    """Return the followers dataset's canonical collections for one size and seed."""
    users, joined = _users(size, seed)
    return {"users": users, "follows": _follows(size, seed, users, joined)}


def _users(size: FollowersSize, seed: int) -> tuple[list[Document], list[int]]:
    """Return users with unique handles, and when each joined (seconds from the epoch)."""
    rng = stream(seed, "followers:users")
    width = id_width(6, size.users)
    handles: set[str] = set()
    users = []
    joined = []
    for number in range(1, size.users + 1):
        handle = _handle(rng)
        while handle in handles:
            handle = _handle(rng)
        handles.add(handle)
        first, last = rng.choice(words.FIRST_NAMES), rng.choice(words.LAST_NAMES)
        interests = distinct_indices(rng, len(words.BIO_INTERESTS), 2)
        bio = (
            f"{rng.choice(words.BIO_ROLES).capitalize()} in {rng.choice(words.BIO_PLACES)}. "
            f"Into {words.BIO_INTERESTS[interests[0]]} and {words.BIO_INTERESTS[interests[1]]}."
        )
        since = -rng.randrange(2 * YEAR)
        joined.append(since)
        users.append(
            {
                "_id": make_id("user", number, width),
                "handle": handle,
                "name": f"{first} {last}",
                "bio": bio,
                "createdAt": moment(since),
            }
        )
    return users, joined


def _handle(rng: random.Random) -> str:
    """Return a handle such as 'quiet_otter4821'."""
    return f"{rng.choice(words.HANDLE_ADJECTIVES)}_{rng.choice(words.HANDLE_NOUNS)}{rng.randrange(10_000)}"


def _follows(size: FollowersSize, seed: int, users: list[Document], joined: list[int]) -> list[Document]:
    """Return follow edges, oldest first: no self-follows, no duplicate pairs."""
    popularity = ranks(stream(seed, "followers:popularity"), size.users)
    per_rank = weighted_counts(
        stream(seed, "followers:in-degree"), zipf_cumulative(size.users, POPULARITY_OFFSET), size.follows
    )
    rng = stream(seed, "followers:edges")
    drafts = []
    for rank, followed in enumerate(popularity):
        # Draw from everyone but the followed user, then skip over their index.
        for index in distinct_indices(rng, size.users - 1, min(per_rank[rank], size.users - 1)):
            follower = index + (index >= followed)
            start = max(joined[followed], joined[follower])
            drafts.append((rng.randrange(start, YEAR), followed, follower))
    drafts.sort()
    width = id_width(7, len(drafts))
    return [
        {
            "_id": make_id("follow", number, width),
            "followerId": users[follower]["_id"],
            "followedId": users[followed]["_id"],
            "createdAt": moment(when),
        }
        for number, (when, followed, follower) in enumerate(drafts, start=1)
    ]

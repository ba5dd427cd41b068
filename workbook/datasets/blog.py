"""The `blog` dataset (the capstone's): users, posts, comments and likes, with a few viral posts.

Comments and likes follow a power law over posts, so at ``small`` scale the most-liked post has
over a thousand likes and the most-commented a few hundred comments: an array of either inside
the post grows past the few hundred elements where arrays start to hurt. Integer-only, seeded:
the same scale and seed give the same bytes everywhere (see :mod:`workbook.datasets.seeding`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from workbook.datasets import words
from workbook.datasets.ids import id_width, make_id
from workbook.datasets.seeding import distinct_indices, ranks, stream, weighted_counts, zipf_cumulative
from workbook.datasets.timeline import DAY, YEAR, moment

Document = dict[str, Any]


@dataclass(frozen=True)
class BlogSize:
    """How many users, posts, comments and likes the blog generator makes."""

    users: int
    posts: int
    comments: int
    likes: int


SIZES = {
    "tiny": BlogSize(users=50, posts=100, comments=400, likes=1_000),
    "small": BlogSize(users=1_500, posts=2_000, comments=8_000, likes=20_000),
    "medium": BlogSize(users=15_000, posts=20_000, comments=80_000, likes=200_000),
    "large": BlogSize(users=60_000, posts=80_000, comments=320_000, likes=800_000),
}

# As in the followers graph: an offset of 2 keeps the top post at a few percent of all likes.
POPULARITY_OFFSET = 2
TAGS = ("mongodb", "schema", "indexes", "python", "travel", "cooking", "music", "books", "design", "running")


def generate_blog(size: BlogSize, seed: int) -> dict[str, list[Document]]:
    """Return the blog dataset's canonical collections for one size and seed."""
    users = _users(size, seed)
    posts, published = _posts(size, seed, users)
    popularity = ranks(stream(seed, "blog:popularity"), size.posts)
    return {
        "users": users,
        "posts": posts,
        "comments": _comments(size, seed, users, posts, published, popularity),
        "likes": _likes(size, seed, users, posts, published, popularity),
    }


def _users(size: BlogSize, seed: int) -> list[Document]:
    rng = stream(seed, "blog:users")
    width = id_width(6, size.users)
    users = []
    for number in range(1, size.users + 1):
        first, last = rng.choice(words.FIRST_NAMES), rng.choice(words.LAST_NAMES)
        handle = f"{rng.choice(words.HANDLE_ADJECTIVES)}_{rng.choice(words.HANDLE_NOUNS)}{number}"
        users.append(
            {
                "_id": make_id("user", number, width),
                "handle": handle,
                "name": f"{first} {last}",
                "joinedAt": moment(-rng.randrange(2 * YEAR)),
            }
        )
    return users


def _posts(size: BlogSize, seed: int, users: list[Document]) -> tuple[list[Document], list[int]]:
    """Posts oldest first; a quarter of users write most of them."""
    rng = stream(seed, "blog:posts")
    writers = max(1, len(users) // 4)
    width = id_width(6, size.posts)
    seconds = sorted(rng.randrange(YEAR) for _ in range(size.posts))
    posts = []
    for number, when in enumerate(seconds, start=1):
        aspect = rng.choice(words.REVIEW_ASPECTS)
        place = rng.choice(words.BIO_PLACES)
        tags = [TAGS[i] for i in sorted(distinct_indices(rng, len(TAGS), 1 + rng.randrange(3)))]
        body = " ".join(
            f"{rng.choice(words.DESCRIPTION_OPENERS)} {rng.choice(words.DESCRIPTION_CLAIMS)}"
            for _ in range(2 + rng.randrange(4))
        )
        posts.append(
            {
                "_id": make_id("post", number, width),
                "authorId": users[rng.randrange(writers)]["_id"],
                "title": f"Notes on {aspect} from {place}",
                "body": body,
                "tags": tags,
                "publishedAt": moment(when),
            }
        )
    return posts, seconds


def _per_post(rng: random.Random, size: BlogSize, total: int, popularity: list[int]) -> list[int]:
    """How many comments or likes each post gets: the popularity rank decides, Zipf-like."""
    per_rank = weighted_counts(rng, zipf_cumulative(size.posts, POPULARITY_OFFSET), total)
    counts = [0] * size.posts
    for rank, post in enumerate(popularity):
        counts[post] = per_rank[rank]
    return counts


def _after(rng: random.Random, published: int) -> int:
    """A moment after publication, mostly within the first weeks."""
    return published + 1 + rng.randrange(1 + rng.randrange(60) * DAY)


def _comments(
    size: BlogSize,
    seed: int,
    users: list[Document],
    posts: list[Document],
    published: list[int],
    popularity: list[int],
) -> list[Document]:
    """Comments oldest first."""
    counts = _per_post(stream(seed, "blog:comment-counts"), size, size.comments, popularity)
    rng = stream(seed, "blog:comments")
    drafts = []
    for post, count in enumerate(counts):
        for _ in range(count):
            tone = rng.choice(words.REVIEW_PRAISE + words.REVIEW_COMPLAINTS)
            text = f"The part about {rng.choice(words.REVIEW_ASPECTS)} was {tone}."
            drafts.append((_after(rng, published[post]), post, rng.randrange(len(users)), text))
    drafts.sort()
    width = id_width(7, len(drafts))
    return [
        {
            "_id": make_id("comment", number, width),
            "postId": posts[post]["_id"],
            "authorId": users[author]["_id"],
            "text": text,
            "createdAt": moment(when),
        }
        for number, (when, post, author, text) in enumerate(drafts, start=1)
    ]


def _likes(
    size: BlogSize,
    seed: int,
    users: list[Document],
    posts: list[Document],
    published: list[int],
    popularity: list[int],
) -> list[Document]:
    """Likes oldest first: at most one per user and post."""
    counts = _per_post(stream(seed, "blog:like-counts"), size, size.likes, popularity)
    rng = stream(seed, "blog:likes")
    drafts = []
    for post, count in enumerate(counts):
        for user in distinct_indices(rng, len(users), min(count, len(users))):
            drafts.append((_after(rng, published[post]), post, user))
    drafts.sort()
    width = id_width(7, len(drafts))
    return [
        {
            "_id": make_id("like", number, width),
            "postId": posts[post]["_id"],
            "userId": users[user]["_id"],
            "createdAt": moment(when),
        }
        for number, (when, post, user) in enumerate(drafts, start=1)
    ]

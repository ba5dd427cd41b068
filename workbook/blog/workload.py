"""The blog's workload table: post pages dominate; the most-liked report runs once a day."""

from __future__ import annotations

import random

from workbook.workloads import PER_DAY, Args, OperationSpec, Pools, Workload

HOT_PER_SECOND = 100
"""An operation running this often or more is *hot*: the capstone grades its round trips and plans."""


def blog_workload() -> Workload:
    """The blog's operations with their rates and what each needs."""

    def post(pools: Pools, rng: random.Random) -> Args:
        return (pools.pick(rng, "posts"),), {}

    def author(pools: Pools, rng: random.Random) -> Args:
        return (pools.pick(rng, "posts", "authorId"),), {"page": rng.randrange(2)}

    def comments(pools: Pools, rng: random.Random) -> Args:
        return (pools.pick(rng, "posts"),), {"page": rng.randrange(2)}

    def like(pools: Pools, rng: random.Random) -> Args:
        return (pools.pick(rng, "posts"), pools.pick(rng, "users")), {}

    def comment(pools: Pools, rng: random.Random) -> Args:
        return (pools.pick(rng, "posts"), pools.pick(rng, "users"), "Measured by the workbench."), {}

    def report(pools: Pools, rng: random.Random) -> Args:
        return (), {"top": 10}

    return Workload(
        "blog",
        (
            OperationSpec(
                "post_page", "read", 1000, "a post, its like and comment counts and its 5 newest comments", post
            ),
            OperationSpec("author_posts", "read", 100, "an author's 10 newest posts (title and date)", author),
            OperationSpec("like_post", "write", 50, "a user likes a post once; the like count stays right", like),
            OperationSpec("comments_page", "read", 20, "one page of a post's comments, newest first", comments),
            OperationSpec("add_comment", "write", 5, "store a comment; the post page shows it at once", comment),
            OperationSpec("most_liked", "read", PER_DAY, "the 10 most-liked posts (a daily report)", report),
        ),
    )


def hot_operations(workload: Workload) -> list[str]:
    """The names of the operations that run at least :data:`HOT_PER_SECOND` times a second."""
    return [op.name for op in workload.operations if op.per_second >= HOT_PER_SECOND]

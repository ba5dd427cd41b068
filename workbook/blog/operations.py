"""The blog's operations, declared once: names, parameters and the answer each must give in every shape.

A shape (built in, or written by a learner with :class:`workbook.capstone.Shape`) supplies one
function per name; the workbench checks its arguments against these declarations, so
``post_page({"$ne": None})`` is refused before it reaches the database.
"""

from __future__ import annotations

from workbook.operations.base import Operations
from workbook.shapes.spec import Document

NEWEST_COMMENTS = 5
"""Comments a post page shows, newest first."""

PAGE_SIZE = 10
"""Posts on an author's page; comments on a comments page is twice this."""


class BlogOperations(Operations):
    """The blog's operations; each shape implements every one of them with the same answers."""

    dataset = "blog"
    NAMES = ("post_page", "author_posts", "comments_page", "like_post", "add_comment", "most_liked")

    def post_page(self, post_id: str) -> Document | None:
        """The post (title, body, tags, author, date), ``likeCount``, ``commentCount`` and
        ``newestComments``: its 5 newest comments (``_id``, ``authorId``, ``text``, ``createdAt``), newest first."""
        raise NotImplementedError

    def author_posts(self, author_id: str, page: int = 0) -> list[Document]:
        """One page of an author's posts, newest first: ``_id``, ``title``, ``publishedAt`` (10 per page)."""
        raise NotImplementedError

    def comments_page(self, post_id: str, page: int = 0) -> list[Document]:
        """One page of a post's comments, newest first (20 per page), each as in ``newestComments``."""
        raise NotImplementedError

    def like_post(self, post_id: str, user_id: str) -> bool:
        """``user_id`` likes the post; False if they already did (a user likes a post once)."""
        raise NotImplementedError

    def add_comment(self, post_id: str, author_id: str, text: str) -> str:
        """Store a comment on the post; returns the new comment's ``_id``."""
        raise NotImplementedError

    def most_liked(self, top: int = 10) -> list[Document]:
        """The report: the ``top`` most-liked posts as ``{_id, likeCount}``, most liked first (ties: ``_id``)."""
        raise NotImplementedError

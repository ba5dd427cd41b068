"""The blog's three reference shapes, written with the same API a learner uses (:mod:`workbook.blog.authoring`).

- embedded: every comment and every like inside its post. One read per post page, and two
  unbounded arrays: the most-liked post at ``small`` scale holds over a thousand likes.
- referenced: posts, comments and likes in their own collections. Bounded documents, but a post
  page needs four round trips (the post, two counts, the newest comments).
- hybrid: comments and likes in their own collections (the source of truth), plus on each post
  the two counts (computed pattern) and its 5 newest comments (subset pattern), kept current by
  each write. One read per post page, every array bounded.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

from bson import ObjectId
from pymongo import DESCENDING
from pymongo.errors import DuplicateKeyError

from workbook.blog.authoring import Collection, Index, Shape
from workbook.blog.operations import NEWEST_COMMENTS, PAGE_SIZE
from workbook.operations.base import bson_time
from workbook.shapes.spec import Document, json_schema

if TYPE_CHECKING:
    from pymongo.database import Database

    from workbook.datasets import Dataset

NEWEST_FIRST = [("createdAt", DESCENDING), ("_id", DESCENDING)]
"""Comment order everywhere: newest first, the id breaking ties."""

COMMENTS_PER_PAGE = 2 * PAGE_SIZE
_COMMENT_FIELDS = ("_id", "authorId", "text", "createdAt")
_INTERNAL = ("comments", "likes", "likeCount", "commentCount", "newestComments")
_DATE = {"bsonType": "date"}
_STRING = {"bsonType": "string"}
_COUNT = {"bsonType": ["int", "long"], "minimum": 0}
TAGS_SCHEMA = {"bsonType": "array", "maxItems": 5, "items": _STRING}
"""A post's tags: a short list, bounded by the validator."""
COMMENT_SCHEMA: dict[str, Any] = {
    "bsonType": "object",
    "required": list(_COMMENT_FIELDS),
    "properties": {"_id": _STRING, "authorId": _STRING, "text": _STRING, "createdAt": _DATE},
}
_POST_FIELDS = {"authorId": _STRING, "title": _STRING, "body": _STRING, "tags": TAGS_SCHEMA, "publishedAt": _DATE}


def post_schema(**extra: Any) -> Document:
    """The posts validator: the post's own fields plus ``extra`` ones (all required)."""
    return json_schema(["authorId", "title", "publishedAt", *sorted(extra)], {**_POST_FIELDS, **extra})


AUTHOR_NEWEST = Index(
    {"authorId": 1, "publishedAt": -1, "_id": -1}, why="an author's posts newest first: equality, then the sort (ESR)"
)
COMMENTS_NEWEST = Index(
    {"postId": 1, "createdAt": -1, "_id": -1}, why="a post's comments newest first: equality, then the sort (ESR)"
)
ONE_LIKE = Index({"postId": 1, "userId": 1}, unique=True, why="a user likes a post once; counts a post's likes")
USERS = Collection("users", validator=json_schema(["handle", "name"], {"handle": _STRING, "name": _STRING}))
COMMENTS = Collection(
    "comments",
    [COMMENTS_NEWEST],
    json_schema(["postId", "authorId", "text", "createdAt"], {"postId": _STRING, **COMMENT_SCHEMA["properties"]}),
)
LIKES = Collection(
    "likes", [ONE_LIKE], json_schema(["postId", "userId", "createdAt"], {"postId": _STRING, "userId": _STRING})
)


def comment_entry(comment: Document) -> Document:
    """A comment as a post page shows it: who, what, when (no ``postId``)."""
    return {field: comment[field] for field in _COMMENT_FIELDS}


def newest(comments: list[Document], count: int | None = None) -> list[Document]:
    """Comment entries newest first (the id breaks ties), at most ``count``."""
    ordered = sorted(comments, key=lambda c: (c["createdAt"], c["_id"]), reverse=True)
    return ordered if count is None else ordered[:count]


def page_answer(post: Document, likes: int, comments: int, newest_comments: list[Document]) -> Document:
    """The logical post page: the post's own fields, both counts and the newest comments."""
    fields = {k: v for k, v in post.items() if k not in _INTERNAL}
    return {**fields, "likeCount": likes, "commentCount": comments, "newestComments": newest_comments}


def grouped(dataset: Dataset, collection: str) -> dict[str, list[Document]]:
    """The dataset's comments or likes, grouped by post (oldest first, as generated)."""
    groups: dict[str, list[Document]] = defaultdict(list)
    for document in dataset.collections[collection]:
        groups[document["postId"]].append(document)
    return groups


def new_comment(post_id: str, author_id: str, text: str) -> Document:
    """A comment document written now (with ``postId``; :func:`comment_entry` drops it)."""
    return {
        "_id": f"comment-{ObjectId()}",
        "postId": post_id,
        "authorId": author_id,
        "text": text,
        "createdAt": bson_time(),
    }


def author_posts_query(db: Database, author_id: str, page: int) -> list[Document]:
    """An author's posts newest first, one page (index ``authorId_1_publishedAt_-1__id_-1``)."""
    cursor = (
        db.posts.find({"authorId": author_id}, {"title": 1, "publishedAt": 1})
        .sort([("publishedAt", DESCENDING), ("_id", DESCENDING)])
        .skip(page * PAGE_SIZE)
        .limit(PAGE_SIZE)
    )
    return list(cursor)


def comments_query(db: Database, post_id: str, page: int, limit: int = COMMENTS_PER_PAGE) -> list[Document]:
    """A post's comments newest first from the ``comments`` collection (index ``postId_1_createdAt_-1__id_-1``)."""
    projection = dict.fromkeys(_COMMENT_FIELDS, 1)
    cursor = db.comments.find({"postId": post_id}, projection).sort(NEWEST_FIRST).skip(page * limit).limit(limit)
    return list(cursor)


def insert_like(db: Database, post_id: str, user_id: str) -> bool:
    """Insert a like document; False if the unique index says this user already liked the post."""
    try:
        db.likes.insert_one(
            {"_id": f"like-{ObjectId()}", "postId": post_id, "userId": user_id, "createdAt": bson_time()}
        )
    except DuplicateKeyError:
        return False
    return True


# --- embedded: everything inside the post


def _embedded() -> Shape:
    shape = Shape(
        "embedded",
        "every comment and like inside its post: one read per page, two arrays that grow without bound",
        [
            USERS,
            Collection(
                "posts",
                [AUTHOR_NEWEST, Index({"likes.userId": 1}, why="multikey: does this user already like the post?")],
                post_schema(
                    comments={"bsonType": "array", "items": COMMENT_SCHEMA},
                    likes={"bsonType": "array", "items": {"bsonType": "object"}},
                ),
            ),
        ],
        copies={"posts.comments": "only home", "posts.likes": "only home"},
    )

    @shape.builder
    def build(blog: Dataset) -> dict[str, list[Document]]:
        comments, likes = grouped(blog, "comments"), grouped(blog, "likes")
        posts = [
            {
                **post,
                "comments": [comment_entry(c) for c in comments.get(post["_id"], [])],
                "likes": [
                    {"userId": like["userId"], "createdAt": like["createdAt"]} for like in likes.get(post["_id"], [])
                ],
            }
            for post in blog.collections["posts"]
        ]
        return {"users": list(blog.collections["users"]), "posts": posts}

    @shape.operation
    def post_page(db: Database, post_id: str) -> Document | None:
        post = db.posts.find_one({"_id": post_id})
        if post is None:
            return None
        comments = post.get("comments", [])
        return page_answer(post, len(post.get("likes", [])), len(comments), newest(comments, NEWEST_COMMENTS))

    @shape.operation
    def author_posts(db: Database, author_id: str, page: int = 0) -> list[Document]:
        return author_posts_query(db, author_id, page)

    @shape.operation
    def comments_page(db: Database, post_id: str, page: int = 0) -> list[Document]:
        post = db.posts.find_one({"_id": post_id}, {"comments": 1})  # every comment comes back, every page
        start = page * COMMENTS_PER_PAGE
        return newest(post.get("comments", []) if post else [])[start : start + COMMENTS_PER_PAGE]

    @shape.operation
    def like_post(db: Database, post_id: str, user_id: str) -> bool:
        entry = {"userId": user_id, "createdAt": bson_time()}
        result = db.posts.update_one({"_id": post_id, "likes.userId": {"$ne": user_id}}, {"$push": {"likes": entry}})
        return result.modified_count == 1

    @shape.operation
    def add_comment(db: Database, post_id: str, author_id: str, text: str) -> str:
        comment = new_comment(post_id, author_id, text)
        db.posts.update_one({"_id": post_id}, {"$push": {"comments": comment_entry(comment)}})
        return comment["_id"]

    @shape.operation
    def most_liked(db: Database, top: int = 10) -> list[Document]:
        pipeline: list[dict[str, Any]] = [
            {"$project": {"likeCount": {"$size": {"$ifNull": ["$likes", []]}}}},
            {"$sort": {"likeCount": -1, "_id": 1}},
            {"$limit": top},
        ]
        return list(db.posts.aggregate(pipeline))

    return shape


# --- referenced: one collection per entity


def _referenced() -> Shape:
    shape = Shape(
        "referenced",
        "posts, comments and likes in their own collections: bounded documents, four reads per page",
        [USERS, Collection("posts", [AUTHOR_NEWEST], post_schema()), COMMENTS, LIKES],
    )

    @shape.builder
    def build(blog: Dataset) -> dict[str, list[Document]]:
        return {name: list(blog.collections[name]) for name in ("users", "posts", "comments", "likes")}

    @shape.operation
    def post_page(db: Database, post_id: str) -> Document | None:
        post = db.posts.find_one({"_id": post_id})
        if post is None:
            return None
        likes = db.likes.count_documents({"postId": post_id})
        comments = db.comments.count_documents({"postId": post_id})
        return page_answer(post, likes, comments, comments_query(db, post_id, 0, NEWEST_COMMENTS))

    @shape.operation
    def author_posts(db: Database, author_id: str, page: int = 0) -> list[Document]:
        return author_posts_query(db, author_id, page)

    @shape.operation
    def comments_page(db: Database, post_id: str, page: int = 0) -> list[Document]:
        return comments_query(db, post_id, page)

    @shape.operation
    def like_post(db: Database, post_id: str, user_id: str) -> bool:
        return insert_like(db, post_id, user_id)

    @shape.operation
    def add_comment(db: Database, post_id: str, author_id: str, text: str) -> str:
        comment = new_comment(post_id, author_id, text)
        db.comments.insert_one(comment)
        return comment["_id"]

    @shape.operation
    def most_liked(db: Database, top: int = 10) -> list[Document]:
        pipeline: list[dict[str, Any]] = [
            {"$group": {"_id": "$postId", "likeCount": {"$sum": 1}}},
            {"$sort": {"likeCount": -1, "_id": 1}},
            {"$limit": top},
        ]
        return list(db.likes.aggregate(pipeline))

    return shape


# --- hybrid: the collections of referenced, plus counts and the newest comments on the post


def _hybrid() -> Shape:
    newest_schema = {"bsonType": "array", "maxItems": NEWEST_COMMENTS, "items": COMMENT_SCHEMA}
    shape = Shape(
        "hybrid",
        "comments and likes in their own collections, plus both counts and the 5 newest comments on the post",
        [
            USERS,
            Collection(
                "posts",
                [AUTHOR_NEWEST],
                post_schema(likeCount=_COUNT, commentCount=_COUNT, newestComments=newest_schema),
            ),
            COMMENTS,
            LIKES,
        ],
        # Each copy is written in its own update after the like or comment: a failure between the two
        # writes leaves it wrong until a recount, so none is atomic.
        copies=dict.fromkeys(("posts.likeCount", "posts.commentCount", "posts.newestComments"), "may be stale"),
    )

    @shape.builder
    def build(blog: Dataset) -> dict[str, list[Document]]:
        comments = grouped(blog, "comments")
        likes = Counter(like["postId"] for like in blog.collections["likes"])
        posts = [
            {
                **post,
                "likeCount": likes[post["_id"]],
                "commentCount": len(comments.get(post["_id"], [])),
                "newestComments": [comment_entry(c) for c in newest(comments.get(post["_id"], []), NEWEST_COMMENTS)],
            }
            for post in blog.collections["posts"]
        ]
        return {
            "users": list(blog.collections["users"]),
            "posts": posts,
            **{name: list(blog.collections[name]) for name in ("comments", "likes")},
        }

    @shape.operation
    def post_page(db: Database, post_id: str) -> Document | None:
        post = db.posts.find_one({"_id": post_id})
        if post is None:
            return None
        return page_answer(post, post["likeCount"], post["commentCount"], post["newestComments"])

    @shape.operation
    def author_posts(db: Database, author_id: str, page: int = 0) -> list[Document]:
        return author_posts_query(db, author_id, page)

    @shape.operation
    def comments_page(db: Database, post_id: str, page: int = 0) -> list[Document]:
        return comments_query(db, post_id, page)

    @shape.operation
    def like_post(db: Database, post_id: str, user_id: str) -> bool:
        if not insert_like(db, post_id, user_id):
            return False
        db.posts.update_one({"_id": post_id}, {"$inc": {"likeCount": 1}})
        return True

    @shape.operation
    def add_comment(db: Database, post_id: str, author_id: str, text: str) -> str:
        comment = new_comment(post_id, author_id, text)
        db.comments.insert_one(comment)
        entry = {"$each": [comment_entry(comment)], "$position": 0, "$slice": NEWEST_COMMENTS}
        db.posts.update_one({"_id": post_id}, {"$inc": {"commentCount": 1}, "$push": {"newestComments": entry}})
        return comment["_id"]

    @shape.operation
    def most_liked(db: Database, top: int = 10) -> list[Document]:
        # A daily report: a collection scan once a day is cheaper than an index every like must update.
        cursor = db.posts.find({}, {"likeCount": 1}).sort([("likeCount", -1), ("_id", 1)]).limit(top)
        return list(cursor)

    return shape


def reference_shapes() -> dict[str, Shape]:
    """The blog's three reference shapes, by name."""
    return {"embedded": _embedded(), "referenced": _referenced(), "hybrid": _hybrid()}

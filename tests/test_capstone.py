"""The capstone: the blog dataset, the authoring API, and grading on live facts (each rule can fail)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
from bson import Binary

import workbook
from workbook.blog.reference import (
    COMMENTS,
    LIKES,
    USERS,
    comment_entry,
    comments_query,
    grouped,
    insert_like,
    newest,
    page_answer,
    post_schema,
)
from workbook.capstone import Collection, Index, Shape, grade, json_schema, register, unregister
from workbook.errors import UnknownChoiceError, WorkbookError

COMMENT = {"bsonType": "object"}


def learner_shape(
    name: str = "mine",
    *,
    two_reads: bool = False,
    author_index: bool = True,
    unbounded: bool = False,
    huge: bool = False,
    whole_list: bool = False,
    undeclared: bool = False,
) -> Shape:
    """A learner-style shape that passes every rule; each flag breaks one of them."""
    newest_comments = {"bsonType": "array", "maxItems": 5, "items": COMMENT}
    extra = {"likeCount": {"bsonType": "int"}, "commentCount": {"bsonType": "int"}, "newestComments": newest_comments}
    if unbounded:
        extra["likedBy"] = {"bsonType": "array"}  # no maxItems: every liker's id, forever
    indexes = [Index({"authorId": 1, "publishedAt": -1, "_id": -1})] if author_index else []
    users = USERS if not huge else Collection("users")
    copies = dict.fromkeys(("posts.likeCount", "posts.commentCount", "posts.newestComments"), "may be stale")
    if unbounded:
        copies["posts.likedBy"] = "may be stale"
    if huge:
        copies["users.avatar"] = "only home"
    if undeclared:
        del copies["posts.commentCount"]
    shape = Shape(
        name,
        "counts and newest comments on the post",
        [users, Collection("posts", indexes, post_schema(**extra)), COMMENTS, LIKES],
        copies=copies,
    )

    @shape.builder
    def build(blog):  # type: ignore[no-untyped-def]
        comments = grouped(blog, "comments")
        likes = grouped(blog, "likes")
        posts = []
        for post in blog.collections["posts"]:
            mine = comments.get(post["_id"], [])
            doc = {
                **post,
                "likeCount": len(likes.get(post["_id"], [])),
                "commentCount": len(mine),
                "newestComments": [comment_entry(c) for c in newest(mine, 5)],
            }
            if unbounded:
                doc["likedBy"] = [like["userId"] for like in likes.get(post["_id"], [])]
            posts.append(doc)
        users = list(blog.collections["users"])
        if huge:  # one user with a 9 MiB avatar inside the document
            users[0] = {**users[0], "avatar": Binary(b"\0" * (9 * 1024 * 1024))}
        return {
            "users": users,
            "posts": posts,
            "comments": blog.collections["comments"],
            "likes": blog.collections["likes"],
        }

    @shape.operation
    def post_page(db, post_id):  # type: ignore[no-untyped-def]
        post = db.posts.find_one({"_id": post_id}, {"likedBy": 0})
        if post is None:
            return None
        if two_reads:
            return page_answer(post, post["likeCount"], post["commentCount"], comments_query(db, post_id, 0, 5))
        return page_answer(post, post["likeCount"], post["commentCount"], post["newestComments"])

    @shape.operation
    def author_posts(db, author_id, page=0):  # type: ignore[no-untyped-def]
        found = db.posts.find({"authorId": author_id}, {"title": 1, "publishedAt": 1})
        return list(found.sort([("publishedAt", -1), ("_id", -1)]).skip(page * 10).limit(10))

    @shape.operation
    def comments_page(db, post_id, page=0):  # type: ignore[no-untyped-def]
        if whole_list:  # every comment of the post comes back; the page is cut here, in Python
            return comments_query(db, post_id, 0, limit=0)[page * 20 : (page + 1) * 20]
        return comments_query(db, post_id, page)

    @shape.operation
    def like_post(db, post_id, user_id):  # type: ignore[no-untyped-def]
        if not insert_like(db, post_id, user_id):
            return False
        db.posts.update_one({"_id": post_id}, {"$inc": {"likeCount": 1}})
        return True

    @shape.operation
    def add_comment(db, post_id, author_id, text):  # type: ignore[no-untyped-def]
        raise NotImplementedError

    @shape.operation
    def most_liked(db, top=10):  # type: ignore[no-untyped-def]
        return list(db.posts.find({}, {"likeCount": 1}).sort([("likeCount", -1), ("_id", 1)]).limit(top))

    return shape


def _loaded(name: str, **flags: bool) -> Iterator[workbook.LoadedShape]:
    register(learner_shape(name, **flags))
    loaded = workbook.load("blog", name, scale="tiny", progress=False)
    yield loaded
    loaded.db.client.drop_database(loaded.db.name)
    unregister(name)


# --- the dataset


def test_blog_is_seeded_and_deterministic() -> None:
    first, again, other = (
        workbook.generate("blog", "tiny"),
        workbook.generate("blog", "tiny"),
        workbook.generate("blog", "tiny", seed=8),
    )
    assert first.sha256() == again.sha256()
    assert first.sha256() != other.sha256()
    assert first.counts() == {"users": 50, "posts": 100, "comments": 400, "likes": 944}


def test_blog_small_has_viral_posts_past_the_array_limit() -> None:
    blog = workbook.generate("blog", "small")
    likes = Counter(like["postId"] for like in blog.collections["likes"])
    pairs = Counter((like["postId"], like["userId"]) for like in blog.collections["likes"])
    assert likes.most_common(1)[0][1] > workbook.capstone.ARRAY_LIMIT
    assert max(pairs.values()) == 1  # a user likes a post once


def test_blog_is_not_among_the_sampled_datasets() -> None:
    assert "blog" not in workbook.datasets.DATASETS
    assert workbook.workload("blog").names[0] == "post_page"


# --- the reference shapes and grading


@pytest.fixture(scope="module")
def references() -> Iterator[dict[str, workbook.LoadedShape]]:
    loaded = {s: workbook.load("blog", s, scale="tiny", progress=False) for s in workbook.SHAPE_NAMES}
    yield loaded
    for shape in loaded.values():
        shape.db.client.drop_database(shape.db.name)


def test_reference_shapes_give_the_same_answers(references: dict[str, workbook.LoadedShape]) -> None:
    shapes = list(references.values())
    post = shapes[0]["posts"].find_one(sort=[("_id", 1)])["_id"]
    for name, args in [("post_page", (post,)), ("comments_page", (post,)), ("most_liked", ())]:
        answers = [shape.ops.run(name, *args) for shape in shapes]
        assert answers[0] == answers[1] == answers[2], name


def test_grades_of_the_reference_shapes(references: dict[str, workbook.LoadedShape]) -> None:
    grades = {name: grade(shape, progress=False) for name, shape in references.items()}
    assert grades["hybrid"].passed
    assert [f.subject for f in grades["embedded"].failed()] == ["comments_page", "posts.comments", "posts.likes"]
    assert [(f.rule, f.subject) for f in grades["referenced"].failed()] == [("one round trip", "post_page")]


@pytest.fixture(scope="module")
def good() -> Iterator[workbook.LoadedShape]:
    yield from _loaded("mine")


def test_a_good_learner_shape_passes_every_rule(good: workbook.LoadedShape) -> None:
    result = grade(good)
    assert result.passed, result.to_frame()
    assert {f.rule for f in result.facts} == set(workbook.capstone.grading.RULES)
    assert "passes" in result.summary()


def test_a_learner_shape_runs_beside_the_references(good, references) -> None:  # type: ignore[no-untyped-def]
    runs = workbook.run_workload([references["hybrid"], good], operations=["post_page"], repeat=2, warmup=0)
    assert set(runs["shape"]) == {"hybrid", "mine"}
    assert (runs["round_trips"] == 1).all()


@pytest.mark.parametrize(
    ("flag", "rule", "subject"),
    [
        ("two_reads", "one round trip", "post_page"),
        ("author_index", "no collection scan", "author_posts"),
        ("unbounded", "arrays bounded", "posts.likedBy"),
        ("huge", "documents far from 16 MiB", "users"),
        ("whole_list", "pages cut by the server", "comments_page"),
        ("undeclared", "copies atomic or may be stale", "posts.commentCount"),
    ],
)
def test_a_shape_breaking_one_rule_fails_that_rule(flag: str, rule: str, subject: str) -> None:
    flags = {flag: flag != "author_index"}
    for loaded in _loaded(f"broken_{flag}"[:20], **flags):
        result = grade(loaded, progress=False)
        assert not result.passed
        assert [(f.rule, f.subject) for f in result.failed()] == [(rule, subject)]
        assert not result.rule_passed(rule)


def test_an_array_bound_above_the_limit_fails() -> None:
    shape = learner_shape("wide")
    posts = shape.collections[1]
    schema = posts.validator["$jsonSchema"]["properties"]["newestComments"]
    schema["maxItems"] = 1000
    for loaded in _loaded_shape(shape):
        assert [f.subject for f in grade(loaded, progress=False).failed()] == ["posts.newestComments"]


def test_a_copy_declared_with_an_unknown_policy_fails() -> None:
    shape = learner_shape("vague")
    shape.copies["posts.likeCount"] = "eventually"
    for loaded in _loaded_shape(shape):
        failed = grade(loaded, progress=False).failed()
        assert [(f.rule, f.subject) for f in failed] == [("copies atomic or may be stale", "posts.likeCount")]
        assert "atomic, may be stale, only home" in failed[0].evidence


def test_the_checklist_names_every_rule_and_counts_a_grade(references: dict[str, workbook.LoadedShape]) -> None:
    rules = workbook.capstone.grading.RULES
    table = workbook.capstone.grading.checklist(grade(references["embedded"]))
    graded = {rule for cell in table["graded by"] for rule in cell.split(", ")}
    assert graded == set(rules)
    assert any("pagination" in line for line in table.index) and any("stale" in line for line in table.index)
    assert table.loc[table.index[1], "facts holding"] == "1 of 3"  # posts.tags bounded, comments and likes not


def test_copy_facts_grade_the_declared_copies_or_the_ones_given(references: dict[str, workbook.LoadedShape]) -> None:
    copy_facts = workbook.capstone.grading.copy_facts
    declared = copy_facts(references["hybrid"])
    assert [f.subject for f in declared] == ["posts.commentCount", "posts.likeCount", "posts.newestComments"]
    assert all(f.passed for f in declared)
    forgot = copy_facts(references["hybrid"], copies={})
    assert [f.subject for f in forgot] == [f.subject for f in declared] and not any(f.passed for f in forgot)
    assert all("not declared" in f.evidence for f in forgot)
    in_grade = [f for f in grade(references["hybrid"], progress=False).facts if f.rule == forgot[0].rule]
    assert in_grade == declared  # the grade's own facts for the rule


def _loaded_shape(shape: Shape) -> Iterator[workbook.LoadedShape]:
    register(shape)
    loaded = workbook.load("blog", shape.name, scale="tiny", progress=False)
    try:
        yield loaded
    finally:
        loaded.db.client.drop_database(loaded.db.name)
        unregister(shape.name)


# --- authoring mistakes get clear errors


def test_operation_names_and_parameters_are_checked() -> None:
    shape = Shape("mine", "", [USERS])
    with pytest.raises(UnknownChoiceError, match="post_page"):

        @shape.operation
        def post_pages(db, post_id):  # type: ignore[no-untyped-def]
            return None

    with pytest.raises(WorkbookError, match=r"def author_posts\(db, author_id, page=0\)"):

        @shape.operation
        def author_posts(db, author):  # type: ignore[no-untyped-def]
            return []


def test_register_refuses_incomplete_or_reserved_shapes() -> None:
    with pytest.raises(WorkbookError, match="builder.*operation post_page.*collection posts"):
        register(Shape("mine", "", [USERS]))
    with pytest.raises(WorkbookError, match="reference shapes"):
        register(learner_shape("hybrid"))
    with pytest.raises(WorkbookError, match="Index"):
        Collection("posts", ["authorId"]).spec()  # type: ignore[list-item]


def test_unknown_blog_shape_lists_the_registered_ones() -> None:
    with pytest.raises(UnknownChoiceError, match="embedded"):
        workbook.shape_spec("blog", "nobody")


def test_builder_must_return_every_declared_collection() -> None:
    shape = learner_shape("mine")
    shape.builder(lambda blog: {"users": []})
    with pytest.raises(WorkbookError, match="declares"):
        shape.shape_spec().build(workbook.generate("blog", "tiny"))


def test_index_names_follow_mongodb() -> None:
    assert Index({"postId": 1, "createdAt": -1}).spec().name == "postId_1_createdAt_-1"
    with pytest.raises(WorkbookError, match="1 \\(ascending\\)"):
        Index({"postId": "asc"}).spec()  # type: ignore[dict-item]
    assert json_schema(["a"], {})["$jsonSchema"]["required"] == ["a"]

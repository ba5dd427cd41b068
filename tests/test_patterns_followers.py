"""Lesson 04 helpers on the tiny followers graph: paging, the reverse index, outlier and bucket layouts, scaling."""

from __future__ import annotations

import uuid
from collections import Counter
from datetime import UTC, datetime

import pandas as pd
import pytest

import workbook
from workbook.patterns import layouts, paging, scaling
from workbook.shapes import SHAPE_NAMES


def fresh_db():
    return workbook.connect(database=f"t{uuid.uuid4().hex[:8]}", quiet=True)


@pytest.fixture(scope="module")
def followers():
    return workbook.generate("followers", scale="tiny", seed=7)


@pytest.fixture(scope="module")
def shapes(followers):
    loaded = [workbook.load(followers, shape, fresh_db(), progress=False) for shape in SHAPE_NAMES]
    yield dict(zip(SHAPE_NAMES, loaded, strict=True))
    for each in loaded:
        each.db.client.drop_database(each.db.name)


@pytest.fixture(scope="module")
def counts(followers):
    return Counter(f["followedId"] for f in followers.collections["follows"])


@pytest.fixture(scope="module")
def top(counts):
    return min(counts, key=lambda user: (-counts[user], user))


@pytest.fixture(scope="module")
def layout_pair(followers):
    pair = {name: layouts.load_layout(followers, name, fresh_db(), size=5) for name in layouts.LAYOUTS}
    yield pair
    for layout in pair.values():
        layout.db.client.drop_database(layout.db.name)


def test_most_followed_user_in_every_shape(shapes, top):
    assert {paging.most_followed_user(s) for s in shapes.values()} == {top}


def test_index_order_is_follower_ids_not_newest_first(shapes, top):
    frame = paging.index_order_vs_newest(shapes["referenced"]["follows"], top, n=5)
    by_id = list(frame["unique index order: followerId"])
    assert by_id == sorted(by_id)
    assert list(frame["newest first: followed at"]) == sorted(frame["newest first: followed at"], reverse=True)
    assert by_id != list(frame["newest first: followerId"])


def test_newest_first_needs_created_at_in_the_index(shapes, top):
    plans = paging.newest_first_plans(shapes["referenced"]["follows"], top)
    assert plans.loc["planner's choice", "index"] == "followed_newest"
    assert not plans.loc["planner's choice", "in-memory sort"]
    assert plans.loc["hint: followed_follower", "in-memory sort"]


def test_keyset_pages_walk_every_follower_once_in_order(shapes, top, counts):
    follows = shapes["referenced"]["follows"]
    seen, after = [], None
    while page := paging.page_after(follows, top, after, 6):
        seen += page
        after = page[-1]
    assert seen == sorted(seen) and len(seen) == len(set(seen)) == counts[top]
    assert paging.page_with_skip(follows, top, 2, 6) == seen[12:18]
    assert paging.last_key_before(follows, top, 2, 6) == seen[11]
    assert paging.last_key_before(follows, top, 0, 6) is None
    past_the_end = len(seen) // 6 + 5
    assert paging.last_key_before(follows, top, past_the_end, 6) == seen[-1]  # where a page-by-page walk stops


def test_newest_first_keyset_pages_match_the_followers_page_operation(shapes, top, counts):
    follows = shapes["referenced"]["follows"]
    pages = paging.newest_pages(follows, top, pages=counts[top], page_size=4)
    assert pages == [shapes["referenced"].ops.followers_page(top, n, 4) for n in range(len(pages))]
    assert sum(len(page) for page in pages) == counts[top]


def test_skip_examines_every_skipped_key_keyset_only_the_page(shapes, top):
    frame = paging.paging_work(shapes["referenced"]["follows"], top, [0, 2, 4], page_size=5)
    skip = frame[frame["method"] == "skip()"].set_index("page")["keys_examined"]
    keyset = frame[frame["method"] == "keyset ($gt)"].set_index("page")["keys_examined"]
    assert list(skip) == [5, 15, 25] and list(keyset) == [5, 5, 5]
    assert frame["same_ids"].all()


def test_whom_follows_uses_the_reverse_index(shapes, followers):
    user = followers.collections["follows"][0]["followerId"]
    plans = paging.whom_follows_plans(list(shapes.values()), user)
    assert plans.loc["referenced", "index"] == plans.loc["hybrid", "index"] == "follower_followed"
    assert plans.loc["embedded", "index"] == "follower_of" and plans.loc["embedded", "multikey"]
    expected = sum(1 for f in followers.collections["follows"] if f["followerId"] == user)
    assert set(plans["returned"]) == {expected}


def test_outlier_documents_bound_the_array_and_overflow_the_rest(followers, counts):
    built = layouts.outlier_documents(followers, cap=5)
    for user in built["users"]:
        assert len(user["followers"]) == min(5, counts[user["_id"]])
        assert user["isOutlier"] == (counts[user["_id"]] > 5)
    overflow = Counter(e["followedId"] for e in built["follower_overflow"])
    assert overflow == Counter({u: n for u, n in counts.items() if n > 5})


def test_bucket_documents_hold_at_most_the_bucket_size(followers, counts):
    built = layouts.bucket_documents(followers, bucket_size=5)
    assert max(len(b["followers"]) for b in built["follower_buckets"]) == 5
    per_user = Counter()
    for bucket in built["follower_buckets"]:
        assert bucket["count"] == len(bucket["followers"])
        per_user[bucket["userId"]] += bucket["count"]
    assert per_user == counts


def test_layout_pages_answer_as_the_referenced_shape(shapes, layout_pair, top, counts):
    users = [top, *sorted(counts)[:5]]
    for user in users:
        for page in range(0, counts[user] // 4 + 2):
            expected = shapes["referenced"].ops.followers_page(user, page, 4)
            for layout in layout_pair.values():
                assert layout.followers_page(user, page, 4) == expected, (layout.name, user, page)


def test_a_follow_lands_first_and_an_outlier_is_made_at_the_cap(followers, counts):
    quiet = min((u for u in counts if counts[u] == 5), default=None)
    assert quiet is not None
    stranger = next(u["_id"] for u in followers.collections["users"] if u["_id"] != quiet)
    for name in layouts.LAYOUTS:
        layout = layouts.load_layout(followers, name, fresh_db(), size=5)
        try:
            layout.follow(stranger, quiet, now=datetime(2027, 1, 1, tzinfo=UTC))
            assert layout.followers_page(quiet, 0, 3)[0] == stranger
            assert len(layout.followers_page(quiet, 0, 10)) == 6
            if name == "outlier":
                user = layout.db.users.find_one({"_id": quiet})
                assert user["isOutlier"] and len(user["followers"]) == 5
                assert layout.db.follower_overflow.count_documents({"followedId": quiet}) == 6
        finally:
            layout.db.client.drop_database(layout.db.name)


def test_layout_table_compares_answers_and_sizes(shapes, layout_pair, top, counts):
    typical = sorted(counts)[0]
    table = layouts.layout_table([shapes["embedded"], shapes["referenced"], *layout_pair.values()], top, typical, 1)
    assert table.groupby("read")["answer"].nunique().max() == 1
    largest = table.groupby("shape")["largest_doc_bytes"].first()
    assert largest["embedded"] > largest["outlier"]


def test_load_layout_refuses_other_datasets_and_names():
    with pytest.raises(workbook.UnknownChoiceError, match="bucket, outlier"):
        layouts.load_layout(None, "buckets")
    with pytest.raises(workbook.WorkbookError, match="followers dataset"):
        layouts.load_layout(workbook.generate("store", scale="tiny"), "bucket")


def test_committed_scaling_table_matches_a_fresh_tiny_computation():
    committed = scaling.work_by_scale()
    fresh = scaling.compute_scaling(("tiny",))
    pd.testing.assert_frame_equal(committed[committed["scale"] == "tiny"].reset_index(drop=True), fresh)
    assert list(committed["scale"].unique()) == list(scaling.MEASURED_SCALES)


def test_scaling_embedded_pages_grow_with_the_data_referenced_ones_do_not():
    table = scaling.work_by_scale().set_index(["shape", "scale"])
    embedded = table.loc["embedded", "bytes_returned"]
    referenced = table.loc["referenced", "bytes_returned"]
    assert embedded["medium"] > embedded["small"] > embedded["tiny"]
    assert referenced["medium"] == referenced["small"]
    figure = scaling.scaling_chart(table.reset_index())
    assert {trace.name for trace in figure.data} == set(SHAPE_NAMES)


def test_the_outlier_page_receives_only_its_20_entries_and_bytes_are_the_documents_as_scaling_counts_them(
    followers, counts
):
    from workbook.monitor import capture

    layout = layouts.load_layout(followers, "outlier", fresh_db(), size=50)
    try:
        full = max((u for u in counts if counts[u] <= 50), key=lambda u: (counts[u], u))
        assert counts[full] > 20
        with capture() as sent:
            page = layout.followers_page(full, 0, 20)
        (reply,) = [c for c in sent.commands if c["name"] == "find"]
        assert len(page) == 20 and sent.docs_returned == 1
        user = layout.db.users.find_one({"_id": full})
        page_doc = {"_id": full, "isOutlier": user["isOutlier"], "followers": user["followers"][:20]}
        import bson

        assert sent.document_bytes == len(bson.encode(page_doc)), "only the page's slice of the array came back"
        assert sent.bytes_returned == reply["reply_bytes"] > sent.document_bytes  # the reply around it adds bytes
        assert layout.followers_page(full, 1, 20) == [e["userId"] for e in user["followers"][20:40]]
    finally:
        layout.db.client.drop_database(layout.db.name)


@pytest.mark.parametrize("name", layouts.LAYOUTS)
def test_the_write_path_crosses_the_boundary_live(followers, name):
    layout = layouts.load_layout(followers, name, fresh_db(), size=5)
    try:
        user, needed = layouts.nearest_to_boundary(layout)
        crossed = layouts.cross_boundary(layout)
        assert crossed.user == user and crossed.follows == needed >= 1
        before, after = crossed.before, crossed.after
        assert after["followerCount"] == before["followerCount"] + needed
        if name == "outlier":
            assert not before["isOutlier"] and after["isOutlier"]
            assert after["entries in the user's array"] == 5, "the array stays at the cap"
            assert after["follows in follower_overflow"] == after["followerCount"], "every follow is in the overflow"
            assert crossed.crossing_commands == ["update", "findAndModify", "insert"]
        else:
            assert after["buckets"] == before["buckets"] + 1 and after["entries in the newest bucket"] == 1
            assert crossed.crossing_commands == ["findAndModify", "update"]
        assert layout.followers_page(user, 0, 1) == [f"new-follower-{needed:04d}"], "the newest follow comes first"
        assert "→" in repr(crossed)
    finally:
        layout.db.client.drop_database(layout.db.name)

"""The shard-key what-if: the simulation's placement, targeting and the unique-index rule."""

from __future__ import annotations

import pytest

from workbook.errors import WorkbookError
from workbook.shard_hash import hash64
from workbook.sharding import (
    SIMULATION,
    ShardKey,
    compare_keys,
    follow_burst,
    is_sharded_cluster,
    most_common_value,
    place,
    simulate,
    unique_index_allowed,
    unique_index_check,
)


def follows(counts: dict[str, int]) -> list[dict]:
    """Follow documents: counts[followed] followers each, follower ids distinct across the data."""
    documents = []
    for followed, count in counts.items():
        for number in range(count):
            documents.append({"followedId": followed, "followerId": f"f-{followed}-{number:04d}"})
    return documents


EVEN = follows({f"u{number:02d}": 10 for number in range(20)})  # 200 documents
CELEBRITY = follows({"a": 10, "b": 10, "c": 300, "d": 10, "e": 10})


def test_a_ranged_key_splits_even_data_evenly():
    placement = simulate(EVEN, {"followedId": 1}, shards=4)
    assert list(placement.documents.values()) == [50, 50, 50, 50]
    assert placement.largest_group == 10 and placement.source == SIMULATION
    assert repr(placement).startswith("Placement by {followedId: 1}, simulation") and "25.0%" in repr(placement)


def test_one_key_value_never_splits_so_a_celebrity_unbalances_the_shards():
    placement = simulate(CELEBRITY, {"followedId": 1}, shards=2)
    assert placement.largest_group == 300
    assert placement.busiest_share >= 300 / 340
    assert placement.shards_for({"followedId": "c"}) == [placement.shard_of({"followedId": "c"})]


def test_the_compound_key_splits_the_celebrity_across_shards():
    placement = simulate(CELEBRITY, {"followedId": 1, "followerId": 1}, shards=2)
    assert placement.largest_group == 1
    assert list(placement.documents.values()) == [170, 170]
    assert len(placement.shards_for({"followedId": "c"})) == 2  # its followers now live on both
    assert len(placement.shards_for({"followedId": "a"})) == 1
    assert len(placement.shards_for({"followedId": "c", "followerId": "f-c-0001"})) == 1


def test_a_bound_at_a_bare_value_does_not_send_queries_to_the_shard_before_it():
    placement = simulate(follows({"a": 5, "b": 5}), {"followedId": 1}, shards=2)
    assert placement.bounds == [("b",)]
    assert placement.shards_for({"followedId": "b"}) == ["shard01"]
    assert placement.shards_for({"followedId": "a"}) == ["shard00"]


def test_a_hashed_key_uses_mongodbs_hash_and_broadcasts_queries_without_it():
    placement = simulate(CELEBRITY, {"followerId": "hashed"}, shards=2)
    negatives = sum(hash64(document["followerId"]) < 0 for document in CELEBRITY)
    assert placement.documents == {"shard00": negatives, "shard01": len(CELEBRITY) - negatives}
    assert len(placement.shards_for({"followedId": "c"})) == 2
    assert len(placement.shards_for({"followerId": "f-c-0001", "followedId": "c"})) == 1


def test_a_burst_for_one_account_lands_on_one_shard_unless_the_key_is_hashed():
    burst = follow_burst("c", 400)
    assert len({document["_id"] for document in burst}) == 400
    ranged = simulate(CELEBRITY, {"followedId": 1}, shards=2).spread(burst)
    hashed = simulate(CELEBRITY, {"followerId": "hashed"}, shards=2).spread(burst)
    assert sorted(ranged.values()) == [0, 400]
    assert min(hashed.values()) > 150


def test_unsplittable_data_leaves_shards_empty():
    placement = simulate(follows({"only": 50}), {"followedId": 1}, shards=3)
    assert sorted(placement.documents.values()) == [0, 0, 50]


def test_a_unique_index_must_start_with_the_shard_key_or_id():
    assert unique_index_allowed({"followedId": 1}, {"followedId": 1, "followerId": 1})
    assert not unique_index_allowed({"followedId": 1, "followerId": 1}, {"followerId": 1, "followedId": 1})
    assert not unique_index_allowed({"followerId": "hashed"}, {"followedId": 1, "followerId": 1})
    assert unique_index_allowed({"followerId": "hashed"}, {"followerId": 1, "followedId": 1})
    assert unique_index_allowed({"followedId": 1}, {"_id": 1, "handle": 1})


@pytest.mark.parametrize(
    ("pattern", "message"),
    [({}, "non-empty"), ({"a": -1}, "choose from: 1, 'hashed'"), ({"a": "hashed", "b": 1}, "single-field hashed")],
)
def test_bad_shard_keys_say_what_works(pattern, message):
    with pytest.raises(WorkbookError, match=message):
        ShardKey.parse(pattern)


def test_a_document_without_the_key_is_refused():
    with pytest.raises(WorkbookError, match="lacks shard key field"):
        simulate([{"followerId": "x"}], {"followedId": 1})


def test_place_and_compare_on_the_offline_default_simulate(db):
    db.follows.insert_many([dict(document) for document in CELEBRITY])
    assert not is_sharded_cluster(db.follows)
    assert most_common_value(db.follows, "followedId") == ("c", 300)
    placement = place(db.follows, {"followedId": 1})
    assert placement.documents == simulate(CELEBRITY, {"followedId": 1}).documents
    table = compare_keys(
        db.follows,
        queries={"c's followers": {"followedId": "c"}},
        burst=follow_burst("c", 100),
    )
    assert list(table["shards for c's followers"]) == [1, 2, 2]
    assert list(table["largest unsplittable group"]) == [300, 1, 1]
    assert table["burst on busiest shard (%)"].iloc[0] == 100.0
    assert list(unique_index_check({"followedId": 1, "followerId": 1})["unique index allowed"]) == [True, True, False]
    grown = place(db.follows, {"followedId": 1, "followerId": 1}, grown_by=follow_burst("a", 400))
    assert grown.total == 740 and grown.busiest_share == 0.5
    assert db.follows.count_documents({}) == 340  # the collection itself is unchanged
    assert "{followerId: hashed}" in placement._repr_html_() or "{followedId: 1}" in placement._repr_html_()


class FakeCluster:
    """Just enough of a mongos for the cluster path: records commands, owns documents by the split points."""

    def __init__(self, documents):
        self.commands = []
        self.inserted = []
        self.documents = documents
        self.split_at = None

    # client.admin.command / client.admin.aggregate
    def command(self, name, *args, **kwargs):
        self.commands.append((name, args, kwargs))
        if name == "hello":
            return {"msg": "isdbgrid"}
        if name == "listShards":
            return {"shards": [{"_id": "shard2rs"}, {"_id": "shard1rs"}]}
        if name == "split":
            self.split_at = kwargs["middle"]["followedId"]
        return {"ok": 1}

    def aggregate(self, pipeline):
        assert pipeline[0] == {"$shardedDataDistribution": {}}
        low = sum(document["followedId"] < self.split_at for document in self.inserted)
        return [
            {
                "ns": pipeline[1]["$match"]["ns"],
                "shards": [
                    {"shardName": "shard1rs", "numOwnedDocuments": low},
                    {"shardName": "shard2rs", "numOwnedDocuments": len(self.inserted) - low},
                ],
            }
        ]


def test_on_a_mongos_place_shards_a_copy_for_real_and_reads_the_servers_counts():
    from unittest.mock import MagicMock

    documents = [{"_id": index, **document} for index, document in enumerate(CELEBRITY)]
    cluster = FakeCluster(documents)
    collection = MagicMock()
    collection.name = "follows"
    collection.database.client.admin = cluster
    collection.find.side_effect = lambda *args, **kwargs: iter(documents)
    target = collection.database.__getitem__.return_value
    target.full_name = "workbench_x.follows_by_followedId_1"
    target.insert_many.side_effect = lambda docs, ordered: cluster.inserted.extend(docs)
    target.find.return_value.explain.return_value = {
        "queryPlanner": {"winningPlan": {"stage": "SINGLE_SHARD", "shards": [{"shardName": "shard2rs"}]}}
    }

    placement = place(collection, {"followedId": 1})

    names = [name for name, _, _ in cluster.commands]
    assert names == ["hello", "listShards", "shardCollection", "split", "moveChunk"]
    assert cluster.commands[2][2] == {"key": {"followedId": 1}}
    assert cluster.commands[4][2] == {"find": {"followedId": "c"}, "to": "shard2rs"}
    assert placement.source.startswith("server") and placement.shards == ("shard1rs", "shard2rs")
    assert placement.documents == {"shard1rs": 20, "shard2rs": 320} and placement.largest_group == 300
    assert placement.shards_for({"followedId": "c"}) == ["shard2rs"]
    collection.database.__getitem__.assert_called_with("follows_by_followedId_1")


def test_a_placement_shows_its_counts_as_the_course_prints_numbers():
    placement = simulate(follows({f"u{number:04d}": 1 for number in range(2400)}), {"followedId": 1}, shards=2)
    assert placement.documents == {"shard00": 1200, "shard01": 1200}
    assert "1,200" in repr(placement) and "1,200" in placement._repr_html_() and "1200" not in repr(placement)

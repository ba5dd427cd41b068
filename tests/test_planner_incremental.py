"""A model rebuilt after a write updates its indexes from the earlier model's (planner.keys.update_index):
the result must be exactly the index a build from nothing gives, for every kind of write."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from workbook.planner import CollectionModel
from workbook.planner.keys import Delta, build_index

INDEXES = [
    {"name": "_id_", "key": {"_id": 1}},
    {"name": "a_1_b_-1", "key": {"a": 1, "b": -1}},
    {"name": "tags_1", "key": {"tags": 1}, "sparse": True},
    {"name": "a_ci", "key": {"a": -1}, "collation": {"locale": "en", "strength": 2}},
    {"name": "b_partial", "key": {"b": 1, "a": 1}, "partialFilterExpression": {"b": {"$gte": 2}}},
    {"name": "a_hashed", "key": {"a": "hashed"}},
]


def _document(rng: random.Random, i: int) -> dict[str, Any]:
    doc: dict[str, Any] = {"_id": i, "a": rng.choice([1, 2, "x", "X", None, 2.5]), "b": rng.randrange(4)}
    if rng.random() < 0.5:
        doc["tags"] = rng.sample(["p", "q", "r", "s"], rng.randrange(0, 3))
    return doc


def _entries(collection: CollectionModel, name: str) -> list[tuple[Any, ...]]:
    spec = next(s for s in collection.specs if s.name == name)
    data = collection.index(spec)
    return [(e.keys, e.values, data.position(e.rid)) for e in data.entries]  # record ids may differ; documents not


@pytest.mark.parametrize("seed", range(6))
def test_an_updated_index_equals_one_built_from_nothing(seed: int) -> None:
    rng = random.Random(seed)
    documents = [_document(rng, i) for i in range(300)]
    model = CollectionModel(documents, INDEXES)
    for spec in model.specs:
        model.index(spec)
    next_id = 300
    for _ in range(12):
        documents = list(documents)
        action = rng.choice(["insert", "delete", "update", "mixed"])
        if action in ("insert", "mixed"):
            for _ in range(rng.randrange(1, 5)):
                documents.append(_document(rng, next_id))
                next_id += 1
        if action in ("delete", "mixed"):
            for _ in range(rng.randrange(1, 4)):
                documents.pop(rng.randrange(len(documents)))
        if action in ("update", "mixed"):
            for _ in range(rng.randrange(1, 4)):
                position = rng.randrange(len(documents))
                documents[position] = {**_document(rng, 0), "_id": documents[position]["_id"]}
        updated = CollectionModel(documents, INDEXES, previous=model)
        assert updated._delta is not None, action  # the update path really ran
        fresh = CollectionModel(documents, INDEXES)
        for info in INDEXES:
            assert _entries(updated, info["name"]) == _entries(fresh, info["name"]), (action, info["name"])
        model = updated


def test_a_large_change_is_rebuilt_not_updated() -> None:
    earlier = list(range(1000))
    assert Delta.between(earlier, earlier + [5000]) == Delta(None, [1000])
    assert Delta.between(earlier, list(range(500, 1700))) is None  # over an eighth changed
    assert Delta.between(earlier, earlier[::-1]) is None  # kept documents reordered


def test_build_index_keeps_ties_in_record_order() -> None:
    docs = [{"_id": i, "a": 1} for i in range(5)]
    model = CollectionModel(docs, [{"name": "a_1", "key": {"a": -1}}])
    data = build_index(model.specs[0], docs)
    assert [e.rid for e in data.entries] == [0, 1, 2, 3, 4]


def test_an_index_hidden_and_shown_again_keeps_its_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hiding an index changes no key: the model after it is shown again builds it from the keys the
    documents gave it before, walking none of them, and gets the index a build from nothing gives."""
    from workbook.planner import keys

    rng = random.Random(1)
    documents = [_document(rng, i) for i in range(200)]
    shown = [{**info, "hidden": False} if info["name"] == "a_1_b_-1" else info for info in INDEXES]
    hidden = [{**info, "hidden": True} if info["name"] == "a_1_b_-1" else info for info in INDEXES]
    first = CollectionModel(documents, shown)
    expected = _entries(first, "a_1_b_-1")
    while_hidden = CollectionModel(documents, hidden, previous=first)
    assert "a_1_b_-1" not in [s.name for s in while_hidden.visible]

    def walked(*args: Any) -> Any:
        raise AssertionError("a document was walked again")

    monkeypatch.setattr(keys, "_document_keys", walked)
    monkeypatch.setattr(keys._ScalarKeys, "keys", walked)
    again = CollectionModel(documents, shown, previous=while_hidden)
    assert _entries(again, "a_1_b_-1") == expected


def test_an_update_in_place_keeps_the_other_entries_and_a_move_is_not_one() -> None:
    """Documents replaced where they stand (an update) are read from the two id lists at C speed: only their
    keys change. A position that now holds an earlier document from elsewhere is a move, never an update."""
    earlier = list(range(1000))
    updated = list(earlier)
    updated[3], updated[700] = 5003, 5700
    delta = Delta.between(earlier, [*updated, 6000])
    assert delta == Delta(None, [3, 700, 1000], frozenset({3, 700}), frozenset({3, 700}))
    moved = list(earlier)
    moved[3] = 700  # document 700 now stands at 3 (and 700 holds a new one)
    moved[700] = 5700
    assert Delta.between(earlier, moved) is None  # the kept documents changed order
    moved_to_end = list(earlier)
    moved_to_end[3] = 5003
    assert Delta.between(earlier, [*moved_to_end, 3]) is None  # document 3 went to the end: a move

    rng = random.Random(11)
    documents = [_document(rng, i) for i in range(400)]
    model = CollectionModel(documents, INDEXES)
    for spec in model.specs:
        model.index(spec)
    for round_ in range(8):
        documents = list(documents)
        for _ in range(rng.randrange(1, 6)):
            position = rng.randrange(len(documents))
            documents[position] = {**_document(rng, 0), "_id": documents[position]["_id"]}
        if round_ % 2:
            documents.append(_document(rng, 1000 + round_))
        updated_model = CollectionModel(documents, INDEXES, previous=model)
        assert updated_model._delta is not None and updated_model._delta.replaced, round_
        fresh = CollectionModel(documents, INDEXES)
        for info in INDEXES:
            assert _entries(updated_model, info["name"]) == _entries(fresh, info["name"]), (round_, info["name"])
        model = updated_model


def test_a_rebuild_from_the_memo_equals_a_build_from_nothing() -> None:
    """Documents reordered (no delta): the rebuild reads each document's keys from the earlier memo, a one-key
    document's as its remembered entry, and must give exactly the index a build from nothing gives."""
    from workbook.planner.keys import Entry, IndexDefinition

    rng = random.Random(5)
    documents = [_document(rng, i) for i in range(300)]
    for info in INDEXES:
        spec = IndexDefinition.from_info(info)
        first = build_index(spec, documents)
        assert any(isinstance(known[1], Entry) for known in first.memo().values()), "one-key documents remembered"
        shuffled = documents[::-1]
        again = build_index(spec, shuffled, first.memo())
        fresh = build_index(spec, shuffled)
        assert [(e.keys, e.values, e.rid) for e in again.entries] == [(e.keys, e.values, e.rid) for e in fresh.entries]
        assert again.multikey_paths == fresh.multikey_paths


@pytest.mark.parametrize("seed", range(40))
def test_the_delta_found_by_walking_removals_is_the_one_sets_of_ids_give(seed: int) -> None:
    """Documents removed (walked at C speed) and appended, in random mixes: the delta equals the one the sets
    of ids give (the general path); with a document moved as well, both refuse (the kept order changed)."""
    rng = random.Random(seed)
    before = list(range(1000, 1000 + rng.choice([5, 70, 600])))
    after = list(before)
    fresh = iter(range(10**6, 10**7))
    for _ in range(rng.randrange(1, 9)):
        if rng.random() < 0.7 and after:
            after.pop(rng.randrange(len(after)))
        else:
            after.append(next(fresh))
    if len(after) >= len(before):
        after.pop(rng.randrange(len(before) // 2))  # at least one removal before the appended ones
    limit = max(64, Delta.MAX_SHARE * len(after))
    expected = Delta._matched(before, after, limit)
    assert expected is not None and expected.moved is not None
    assert Delta.between(before, after) == expected
    kept = [i for i in after if i in set(before)]
    if len(kept) >= 2:
        moved = [kept[-1], *(i for i in after if i != kept[-1])]  # the last kept document moved to the front
        assert Delta._matched(before, moved, limit) is None and Delta.between(before, moved) is None


def test_a_delete_keeps_the_other_entries_and_their_record_ids() -> None:
    """A delete moves the later documents up; their entries stay, under the same record ids, and
    the index says where each record id now stands (as a WiredTiger RecordId stays with its record)."""
    documents = [{"_id": i, "a": i % 7} for i in range(500)]
    model = CollectionModel(documents, INDEXES[:2])
    spec = model.specs[1]
    before = model.index(spec)
    assert before.positions is None  # built from nothing: every record id is its position
    after_delete = [d for d in documents if d["_id"] not in (10, 300)] + [{"_id": 900, "a": 3}]
    updated = CollectionModel(after_delete, INDEXES[:2], previous=model)
    data = updated.index(spec)
    kept = {(e.rid, e.values) for e in before.entries if e.rid not in (10, 300)}  # the two deleted ones gone
    appended = {(e.rid, e.values) for e in data.entries if e.rid == 500}  # the appended document: the next record id
    assert {(e.rid, e.values) for e in data.entries} == kept | appended and len(appended) == 1
    assert data.positions is not None and data.position(499) == 497 and data.position(10) == -1
    assert data.position(500) == 498  # the appended document took the next record id
    assert [data.record_id(p) for p in range(496, 499)] == [498, 499, 500]
    fresh = CollectionModel(after_delete, INDEXES[:2])
    assert _entries(updated, spec.name) == _entries(fresh, spec.name)


def test_record_ids_are_numbered_again_when_a_new_document_stands_before_a_kept_one() -> None:
    """A new document between kept ones has no record id in order between theirs: every entry is numbered by its
    position again, and the index is still the one a build from nothing gives."""
    documents = [{"_id": i, "a": i % 5} for i in range(300)]
    model = CollectionModel(documents, INDEXES[:2])
    for spec in model.specs:
        model.index(spec)
    deleted = documents[:50] + documents[51:]
    model = CollectionModel(deleted, INDEXES[:2], previous=model)
    assert model.index(model.specs[1]).positions is not None
    between = deleted[:100] + deleted[101:200] + [{"_id": 1000, "a": 2}] + deleted[200:]  # one gone, one new later
    updated = CollectionModel(between, INDEXES[:2], previous=model)
    assert updated._delta is not None and updated._delta.moved is not None
    fresh = CollectionModel(between, INDEXES[:2])
    for info in INDEXES[:2]:
        assert updated.index(next(s for s in updated.specs if s.name == info["name"])).positions is None
        assert _entries(updated, info["name"]) == _entries(fresh, info["name"])


def test_record_ids_spread_thin_by_many_deletes_are_numbered_again() -> None:
    """Record ids of deleted documents are never given out again; once those in use pass twice the documents
    (plus 64), the next update numbers every entry by its position again, so the map stays in proportion."""
    documents = [{"_id": i, "a": i % 3} for i in range(400)]
    model = CollectionModel(documents, INDEXES[:2])
    model.index(model.specs[1])
    renumbered = False
    for _ in range(40):
        documents = documents[: len(documents) // 2] + documents[len(documents) // 2 + 9 :]  # nine gone
        documents = [*documents, {"_id": 10_000 + len(documents), "a": 1}]
        model = CollectionModel(documents, INDEXES[:2], previous=model)
        data = model.index(model.specs[1])
        renumbered = renumbered or data.positions is None
        assert data.positions is None or len(data.positions) <= 2 * len(documents) + 64 + 1
        assert _entries(model, "a_1_b_-1") == _entries(CollectionModel(documents, INDEXES[:2]), "a_1_b_-1")
    assert renumbered


def test_an_update_that_leaves_an_index_alone_shares_its_entries() -> None:
    """An update in place whose new version gives an index exactly the keys the old one gave (same sort keys, same
    values of the same types, no arrays) leaves that index's entry list as it was, shared; any other change to the
    indexed values (an int that became an equal float, a string, an array) updates it."""
    documents = [{"_id": i, "a": i % 9, "b": "x"} for i in range(400)]
    indexes = [{"name": "_id_", "key": {"_id": 1}}, {"name": "a_1", "key": {"a": 1}}]
    model = CollectionModel(documents, indexes)
    ids, a = (model.index(spec) for spec in model.specs)
    for change, a_shared in (({"b": "y"}, True), ({"a": 5.0}, False), ({"a": "5"}, False), ({"a": [5]}, False)):
        changed = list(documents)
        changed[5] = {**documents[5], **change}  # document 5 has a: 5
        updated = CollectionModel(changed, indexes, previous=model)
        ids_now, a_now = (updated.index(spec) for spec in updated.specs)
        assert ids_now.entries is ids.entries and ids_now.documents is updated.documents, change  # _id never changes
        assert (a_now.entries is a.entries) is a_shared, change
        fresh = CollectionModel(changed, indexes)
        assert _entries(updated, "a_1") == _entries(fresh, "a_1"), change
        if not a_shared:
            assert [type(v) for e in a_now.entries if e.rid == 5 for v in e.values] == [
                type(v) for e in fresh.index(fresh.specs[1]).entries if e.rid == 5 for v in e.values
            ], change


@pytest.mark.parametrize("length, count", [(0, 0), (1, 1), (5, 2), (100, 16), (100, 17), (1_000, 40), (1_000, 0)])
def test_ranks_without_a_few_places_equal_the_running_count(length: int, count: int) -> None:
    """The ranks a delete gives (each kept place's new place, -1 for those removed) are the same whether made by
    moving tails down (a few removed) or by a running count (more)."""
    from workbook.planner.keys import _ranks, _ranks_without

    removed = sorted(random.Random(length * 31 + count).sample(range(length), count))
    stays = np.ones(length, dtype=bool)
    stays[removed] = False
    ranks = _ranks_without(length, removed)
    assert ranks.dtype == np.int64 and ranks.tolist() == _ranks(stays).tolist()
    assert ranks.tolist() == [
        -1 if place in removed else place - sum(r < place for r in removed) for place in range(length)
    ]

"""Reading the offline engine's storage for the workbench's bookkeeping gives what a query would."""

from __future__ import annotations

import random
from typing import Any

import pytest

import workbook
from workbook import engine_reads
from workbook.engine_reads import field_values, stored_documents
from workbook.workloads import Pools


@pytest.mark.parametrize(
    ("document", "path", "values"),
    [
        ({"a": 1}, "a", [1]),
        ({"a": [1, 2]}, "a", [1, 2]),
        ({"b": 1}, "a", []),
        ({"a": {"b": "x"}}, "a.b", ["x"]),
        ({"a": [{"b": 1}, {"c": 2}, {"b": 3}, 4]}, "a.b", [1, 3]),
        ({"a": [{"b": [1, 2]}]}, "a.b", [[1, 2]]),  # unwound one level only, as $unwind does
        ({"a": 5}, "a.b", []),
        ({"a": None}, "a", [None]),
    ],
)
def test_field_values_follow_project_then_unwind(document: dict[str, Any], path: str, values: list[Any]) -> None:
    assert field_values(document, path) == values


FIELDS = {
    "store": [("products", "_id"), ("products", "category._id"), ("customers", "_id"), ("orders", "customerId")],
    "parts": [("products", "_id"), ("products", "parts.partId")],
    "followers": [("users", "_id")],
}


@pytest.mark.parametrize("dataset", sorted(FIELDS))
def test_pools_from_storage_equal_pools_from_the_server(dataset: str, monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = workbook.load(dataset, "hybrid", scale="tiny", progress=False)
    from_storage = Pools(loaded.db)
    monkeypatch.setattr("workbook.workloads.stored_documents", lambda db, collection: None)
    from_server = Pools(loaded.db)
    for collection, field in FIELDS[dataset]:
        assert from_storage.ids(collection, field) == from_server.ids(collection, field) != []
    if dataset == "store":
        assert from_server.review_counts() == from_storage.review_counts()
        monkeypatch.undo()
        draws = [Pools(loaded.db).popular_product(random.Random(i)) for i in range(50)]
        monkeypatch.setattr("workbook.workloads.stored_documents", lambda db, collection: None)
        assert draws == [Pools(loaded.db).popular_product(random.Random(i)) for i in range(50)]


def test_stored_documents_are_the_committed_documents_in_natural_order() -> None:
    loaded = workbook.load("followers", "referenced", scale="tiny", progress=False)
    assert stored_documents(loaded.db, "users") == list(loaded.db.users.find())
    assert stored_documents(loaded.db, "no_such_collection") == []
    assert engine_reads.stored_documents(loaded.db, "users") is not engine_reads.stored_documents(loaded.db, "users")


def test_review_counts_from_storage_match_the_server_in_the_embedded_store(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = workbook.load("store", "embedded", scale="tiny", progress=False)
    from_storage = Pools(loaded.db).review_counts()
    monkeypatch.setattr("workbook.workloads.stored_documents", lambda db, collection: None)
    assert Pools(loaded.db).review_counts() == from_storage and sum(from_storage.values()) > 0


def test_derived_values_are_remembered_until_a_write(monkeypatch: pytest.MonkeyPatch) -> None:
    import uuid

    from workbook.engine_reads import derived

    monkeypatch.delenv("MONGODB_URI", raising=False)
    db = workbook.connect(database=f"t{uuid.uuid4().hex[:10]}", quiet=True)
    db.users.insert_many([{"_id": i} for i in range(3)])
    calls: list[int] = []

    def count() -> int:
        calls.append(1)
        return db.users.count_documents({})

    try:
        assert derived(db, ("users",), "n", count) == 3 and len(calls) == 1
        assert derived(db, ("users",), "n", count) == 3 and len(calls) == 1
        db.other.insert_one({"note": "another collection"})
        assert derived(db, ("users",), "n", count) == 3 and len(calls) == 1
        db.users.insert_one({"_id": "new user"})
        assert derived(db, ("users",), "n", count) == 4 and len(calls) == 2
        assert derived(db, ("users", "other"), "n", count) == 4 and len(calls) == 3  # another key
    finally:
        db.client.drop_database(db.name)


@pytest.mark.parametrize("shape", ["embedded", "hybrid"])
def test_capstone_array_and_size_facts_from_storage_equal_the_servers(
    shape: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbook import sizes
    from workbook.capstone import grading

    loaded = workbook.load("blog", shape, scale="tiny", progress=False)
    offline = {name: grading.array_lengths(loaded[name]) for name in loaded.collection_names}
    largest = {name: sizes.largest_document_bytes(loaded[name]) for name in loaded.collection_names}
    monkeypatch.setattr(grading, "stored_documents", lambda db, collection: None)
    monkeypatch.setattr(sizes, "is_offline", lambda db: False)
    assert {name: grading.array_lengths(loaded[name]) for name in loaded.collection_names} == offline
    assert {name: sizes.largest_document_bytes(loaded[name]) for name in loaded.collection_names} == largest
    assert any(offline.values()) and all(size > 0 for size in largest.values())


def test_part_usage_and_stale_copies_from_storage_equal_the_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    from workbook import relations

    hybrid = workbook.load("parts", "hybrid", scale="tiny", progress=False)
    part = hybrid["parts"].find_one()["_id"]
    hybrid["parts"].update_one({"_id": part}, {"$set": {"name": "A name nobody copied"}})
    try:
        usage, stale = relations.part_usage(hybrid), relations.stale_copies(hybrid)
        monkeypatch.setattr(relations, "stored_documents", lambda db, collection: None)
        assert relations.part_usage(hybrid).equals(usage) and usage.sum() > 0
        assert relations.stale_copies(hybrid) == stale >= usage[part] > 0
    finally:
        monkeypatch.undo()
        relations.refresh_copies(hybrid)


@pytest.mark.parametrize("shape", ["embedded", "referenced", "hybrid"])
def test_follower_counts_from_storage_equal_the_servers(shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from workbook.patterns import paging

    loaded = workbook.load("followers", shape, scale="tiny", progress=False)
    counts = paging.follower_counts(loaded)
    top, typical = paging.most_followed_user(loaded), paging.median_followed_user(loaded)
    monkeypatch.setattr(paging, "stored_documents", lambda db, collection: None)
    assert paging.follower_counts(loaded) == counts and max(counts.values()) == counts[top] > 1
    assert (paging.most_followed_user(loaded), paging.median_followed_user(loaded)) == (top, typical)


def test_an_offline_default_of_another_process_is_read_through_the_wire(monkeypatch: pytest.MonkeyPatch) -> None:
    from workbook import offline, offline_commands, sizes

    loaded = workbook.load("followers", "referenced", scale="tiny", progress=False)
    assert engine_reads.is_offline(loaded.db) and stored_documents(loaded.db, "users")
    server = offline.offline_server()
    elsewhere = type("Elsewhere", (), {"host": server.host, "port": server.port + 1, "engine": server.engine})()
    monkeypatch.setattr(offline_commands, "RUNNING", [elsewhere])  # this process's server is not the one db talks to
    assert engine_reads.local_engine(loaded.db) is None and stored_documents(loaded.db, "users") is None
    assert not sizes.is_offline(loaded.db) and sizes._offline_sizes(loaded.db, "users") is None
    assert Pools(loaded.db).ids("users") == sorted(u["_id"] for u in loaded.db.users.find({}, {"_id": 1}))


def test_a_load_through_another_process_offline_default_goes_through_the_wire(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from workbook import bulkload, offline, offline_commands, snapshot

    server = offline.offline_server()
    elsewhere = type("Elsewhere", (), {"host": server.host, "port": server.port + 1, "engine": server.engine})()
    monkeypatch.setattr(offline_commands, "RUNNING", [elsewhere])  # as if db's server ran in another process
    refused = lambda *args, **kwargs: pytest.fail("this process's engine was written to directly")  # noqa: E731
    monkeypatch.setattr(bulkload, "install_documents", refused)
    monkeypatch.setattr(snapshot, "install_collections", refused)
    monkeypatch.setattr(server, "bulk_insert", refused)
    loaded = workbook.load("followers", "referenced", scale="tiny", progress=False)
    monkeypatch.undo()
    assert loaded["users"].count_documents({}) == loaded.report.collections[0].documents > 0


@pytest.mark.parametrize("layout", ["outlier", "bucket", "applications"])
def test_lesson_loads_in_one_pass_equal_inserting_through_the_wire(
    layout: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbook import applications
    from workbook.patterns import layouts

    def load(suffix: str) -> Any:
        db = workbook.connect(database=f"fill_{layout}_{suffix}", quiet=True)
        if layout == "applications":
            return applications.load_applications(workbook.generate("store", scale="tiny", seed=7), db).db
        return layouts.load_layout(workbook.generate("followers", scale="tiny", seed=7), layout, db).db

    def state(db: Any) -> dict[str, Any]:
        return {
            name: (list(db[name].find()), [i["key"] for i in db[name].list_indexes()])
            for name in sorted(db.list_collection_names())
        }

    one_pass = load("bulk")
    monkeypatch.setenv("WORKBOOK_BULKLOAD", "0")
    wire = load("wire")
    try:
        assert state(one_pass) == state(wire) and any(docs for docs, _ in state(wire).values())
        checked = 0
        for name in sorted(one_pass.list_collection_names()):
            for index in one_pass[name].list_indexes():
                field = next(iter(index["key"]))
                holder = one_pass[name].find_one({field: {"$exists": True}})
                if holder is None:
                    continue
                query = {field: field_values(holder, field)[0]}
                explained = [workbook.explain(db[name], query).summary() for db in (one_pass, wire)]
                assert explained[0]["keysExamined"] == explained[1]["keysExamined"] > 0
                assert explained[0]["index"] == explained[1]["index"]
                checked += 1
        assert checked
    finally:
        for db in (one_pass, wire):
            db.client.drop_database(db.name)


def test_follower_counts_of_a_shape_without_followers_name_the_fix() -> None:
    from workbook.errors import WorkbookError
    from workbook.patterns import paging

    store = workbook.load("store", "hybrid", scale="tiny", progress=False)
    with pytest.raises(WorkbookError) as refused:
        paging.most_followed_user(store)
    assert "holds no followers" in str(refused.value) and 'workbook.load("followers"' in (refused.value.fix or "")


@pytest.mark.parametrize("how", ["drop_collection", "drop_database"])
def test_what_is_kept_for_a_collection_is_let_go_when_it_is_dropped(how: str) -> None:
    """Decoded documents, derived values, explain models, measured sizes and ``$lookup``'s foreign documents
    of a dropped collection are freed: kept, a kernel grew by every shape it ever loaded and dropped (1.7 GB for the
    three datasets at ``small``)."""
    import uuid

    from workbook import engine_aggregation, sizes
    from workbook.offline import offline_server
    from workbook.offline_explain import hook_for

    db = workbook.connect(database=f"dropfree{uuid.uuid4().hex[:6]}", quiet=True)
    other = workbook.connect(database=f"dropkeep{uuid.uuid4().hex[:6]}", quiet=True)
    engine = offline_server().engine
    hook = hook_for(engine)

    dropped = {"follows", "users"}  # the shape's collections (its load record stays)

    def kept(database: str) -> tuple[int, int, int, int, int]:
        return (
            sum(key[1] == database and key[2] in dropped for key in engine_reads._chunk_cache),
            sum(key[0] == database and not dropped.isdisjoint(key[1]) for key in engine_reads._DERIVED),
            sum(key[0] == database and key[1] in dropped for key in sizes._SIZE_CACHE),
            sum(key[0] == database and key[1] in dropped for key in hook.models._entries),
            sum(key[1] == database and key[2] in dropped for key in engine_aggregation._foreign),
        )

    try:
        for database in (db, other):
            workbook.load("followers", "referenced", database, scale="tiny", progress=False)
            database.follows.find({"follower": "u0001"}).explain()
            join = {"from": "users", "localField": "followerId", "foreignField": "_id", "as": "who"}
            list(database.follows.aggregate([{"$limit": 1}, {"$lookup": join}]))
            sizes.size_table([workbook.load("followers", "referenced", database, scale="tiny", progress=False)])
            engine_reads.derived(database, ("users",), "a value derived from the users", lambda: 1)
            assert all(kept(database.name)), kept(database.name)  # documents, sizes and a model held
        if how == "drop_collection":
            for name in dropped:
                db.drop_collection(name)
        else:
            db.client.drop_database(db.name)
        assert kept(db.name) == (0, 0, 0, 0, 0)
        assert all(kept(other.name)), "another database's are kept"
    finally:
        for database in (db, other):
            database.client.drop_database(database.name)


@pytest.mark.parametrize("sizes", [[], [0], [3], [128, 0, 5, 1], [2, 2, 0, 0, 7]])
def test_joined_chunks_read_as_the_one_list_they_make(sizes: list[int]) -> None:
    """The model's documents joined chunk by chunk answer every read a list of them would: by position (negative
    too), by slice, forwards, backwards, and out of range with IndexError."""
    counter = iter(range(10_000))
    parts = [[next(counter) for _ in range(size)] for size in sizes]
    flat = [item for part in parts for item in part]
    joined = engine_reads.Joined(parts)
    assert len(joined) == len(flat) and list(joined) == flat and list(reversed(joined)) == flat[::-1]
    assert [joined[i] for i in range(-len(flat), len(flat))] == [flat[i] for i in range(-len(flat), len(flat))]
    assert joined[1:-1:2] == flat[1:-1:2] and joined[::-1] == flat[::-1]
    for outside in (len(flat), -len(flat) - 1):
        with pytest.raises(IndexError):
            joined[outside]
    for _ in range(4):  # read by position often enough, it makes the one list and reads that: the same answers
        assert [joined[i] for i in range(-len(flat), len(flat))] == [flat[i] for i in range(-len(flat), len(flat))]
    assert (joined._flat is not None) == (len(flat) > 10)
    with pytest.raises(IndexError):
        joined[len(flat)]


def test_a_natural_order_scan_reads_joined_chunks_both_ways() -> None:
    """COLLSCAN over the model's joined documents, forwards and with hint {$natural: -1}: the same documents, at the
    same positions, as over one list."""
    from workbook.planner import CollectionModel
    from workbook.planner.explain import find_records
    from workbook.planner.query import FindArgs

    documents = [{"_id": i, "a": i % 4} for i in range(300)]
    parts = [documents[i : i + 7] for i in range(0, 300, 7)]
    for hint in (None, {"$natural": 1}, {"$natural": -1}):
        args = FindArgs(filter={"a": 2}, hint=hint)
        listed = find_records(CollectionModel(documents, []), "db.c", args)
        joined = find_records(CollectionModel(engine_reads.Joined(parts), []), "db.c", args)
        assert joined[1] == listed[1] and len(listed[1]) == 75
        assert listed[1][0] == (2 if hint != {"$natural": -1} else 298)
        assert joined[0]["executionStats"]["totalDocsExamined"] == 300


@pytest.mark.parametrize("seed", range(4))
def test_a_read_after_writes_equals_a_read_from_nothing(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Random single and bulk writes over the wire, each followed by a read of the stored documents: the read that
    reuses the last one (looking up the chunks the journal of writes names, or every chunk by id when their chain is
    unchanged, else walking it) gives exactly the documents, records and ids a read from nothing gives, rolled back
    transactions included."""
    import uuid

    from workbook.offline import offline_server

    monkeypatch.delenv("MONGODB_URI", raising=False)
    rng = random.Random(seed)
    db = workbook.connect(database=f"rereads{uuid.uuid4().hex[:6]}", quiet=True)
    engine = offline_server().engine
    key = (id(engine), db.name, "c")
    paths: dict[str, int] = {"_reread": 0, "_walk": 0, "_replaced": 0}
    taken = dict(paths)  # by the reads after a write (not the reads from nothing)
    for name in paths:
        original = getattr(engine_reads, name)

        def counted(*args: Any, original: Any = original, name: str = name) -> Any:
            found = original(*args)
            paths[name] += found is not None  # _replaced: the chunks the journal named (None: not known)
            return found

        monkeypatch.setattr(engine_reads, name, counted)
    try:
        db.c.insert_many([{"_id": i, "n": i % 13} for i in range(700)])
        next_id = 700
        for _ in range(60):
            action = rng.choice(
                ["insert", "insert_many", "update", "update_many", "delete", "delete_many", "none", "aborted"]
            )
            if action == "insert":
                db.c.insert_one({"_id": next_id, "n": 1})
                next_id += 1
            elif action == "insert_many":
                db.c.insert_many([{"_id": next_id + i, "n": 2} for i in range(rng.randrange(1, 300))])
                next_id += 300
            elif action == "update":
                db.c.update_one({"_id": rng.randrange(next_id)}, {"$set": {"n": rng.randrange(99)}})
            elif action == "update_many":
                db.c.update_many({"n": rng.randrange(13)}, {"$inc": {"n": 100}})
            elif action == "delete":
                db.c.delete_one({"_id": rng.randrange(next_id)})
            elif action == "delete_many":
                db.c.delete_many({"n": rng.randrange(13)})
            elif action == "aborted":  # writes rolled back: the collection's chunk map is an earlier one again
                with db.client.start_session() as session, session.start_transaction():
                    db.c.update_one({"_id": rng.randrange(next_id)}, {"$set": {"n": -1}}, session=session)
                    db.c.insert_one({"_id": -next_id, "n": -2}, session=session)
                    session.abort_transaction()
            before = dict(paths)
            documents, records, ids = engine_reads.public_records_and_ids(engine, db.name, "c")
            for name in paths:
                taken[name] += paths[name] - before[name]
            with engine_reads._chunk_lock:
                engine_reads._chunk_cache.pop(key)
            fresh_documents, fresh_records, fresh_ids = engine_reads.public_records_and_ids(engine, db.name, "c")
            assert list(documents) == list(fresh_documents) == list(db.c.find()), action
            assert list(records) == list(fresh_records) and len(records) == len(documents)
            assert ids.tolist() == [id(document) for document in documents] and len(fresh_ids) == len(ids)
        assert taken["_reread"] >= 5 and taken["_walk"] >= 3, taken  # both ways of reusing the last read ran
        assert taken["_replaced"] >= 3, taken  # and the chunks the journal of writes named were looked up alone
    finally:
        db.client.drop_database(db.name)


def test_a_chain_of_chunks_with_one_spliced_in_is_not_the_same_chain() -> None:
    """same_chunk_chain looks the last read's chunk ids up without walking: a chunk replaced in place is found, and a
    chunk spliced in between (its neighbour's link changed, the first and last chunks the same) or one gone is not
    taken for the same chain (mongoeco adds chunks at the tail only; this holds should that change)."""
    from types import SimpleNamespace

    from workbook.engine_compat import same_chunk_chain

    def chunk(previous: int, following: int) -> SimpleNamespace:
        return SimpleNamespace(previous=previous, following=following)

    def storage(chunks: dict[int, SimpleNamespace], head: int, tail: int) -> SimpleNamespace:
        return SimpleNamespace(_chunks=chunks, _head_chunk=head, _tail_chunk=tail)

    first = {0: chunk(-1, 1), 1: chunk(0, 2), 2: chunk(1, -1)}
    order, objects = [0, 1, 2], [first[0], first[1], first[2]]
    assert same_chunk_chain(storage(first, 0, 2), order, objects) == objects
    updated = {**first, 1: chunk(0, 2)}  # chunk 1 replaced where it stands
    assert same_chunk_chain(storage(updated, 0, 2), order, objects) == [first[0], updated[1], first[2]]
    spliced = {**first, 0: chunk(-1, 3), 3: chunk(0, 1), 1: chunk(3, 2)}  # chunk 3 between 0 and 1
    assert same_chunk_chain(storage(spliced, 0, 2), order, objects) is None
    gone = {0: chunk(-1, 2), 2: chunk(0, -1)}
    assert same_chunk_chain(storage(gone, 0, 2), order, objects) is None
    assert same_chunk_chain(storage(first, 0, 2), [], []) is None
    assert same_chunk_chain(storage({}, -1, -1), [], []) == []


def test_the_journal_of_writes_names_the_chunks_replaced_and_nothing_when_the_chain_changed() -> None:
    """chunks_replaced_since follows the recorded writes from a version read back to it: an update in place or an
    append to a tail with room names its one chunk; a new tail chunk, a chunk emptied by deletes, a rollback to an
    earlier version or a map it never saw give None (the reader then checks every chunk)."""
    from workbook import offline_ids
    from workbook.engine_compat import chunks_replaced_since, memory_collection_class, memory_storage_internals

    offline_ids.install_tracking()  # the set and delete wrappers that keep the journal
    size = memory_storage_internals()._ORDER_CHUNK_SIZE
    storage = memory_collection_class()()
    for key in range(2 * size - 1):  # two chunks, the second with room for one more
        storage[key] = {"_id": key}
    read = storage._chunks
    assert chunks_replaced_since(read, storage, storage._chunks) == set()
    storage[3] = {"_id": 3, "v": 1}  # in place, in the first chunk
    storage[2 * size - 1] = {"_id": 2 * size - 1}  # appended: the tail is full now
    assert chunks_replaced_since(read, storage, storage._chunks) == {0, 1}
    full = storage._chunks
    storage[2 * size] = {"_id": 2 * size}  # a third chunk: the chain changed
    assert (
        chunks_replaced_since(read, storage, storage._chunks) is None
        and chunks_replaced_since(full, storage, storage._chunks) is None
    )
    third = storage._chunks
    del storage[5]
    assert chunks_replaced_since(third, storage, storage._chunks) == {0}
    state = storage._snapshot_state()
    del storage[2 * size]  # the third chunk emptied: gone from the chain
    assert chunks_replaced_since(third, storage, storage._chunks) is None
    storage._restore_state(state)  # a rollback to a version recorded since the read: still linked to it
    assert chunks_replaced_since(third, storage, storage._chunks) == {0}
    assert chunks_replaced_since(object(), storage, storage._chunks) is None  # a map never read from this collection
    assert chunks_replaced_since(third, storage.copy(), storage._chunks) is None  # a copy has no journal of its own

"""The bulk loader: the same engine state as inserting through the wire, and the same refusals."""

from __future__ import annotations

import copy
import datetime
import operator
import random
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from bson import Decimal128, Int64, ObjectId
from pymongo.database import Database
from pymongo.errors import OperationFailure as PyMongoOperationFailure

import workbook
from workbook import bulkload, engine_compat
from workbook.dataset_parts import shape_spec
from workbook.offline import offline_server
from workbook.shapes import SHAPE_NAMES

DATASETS = ("store", "followers", "parts")


@pytest.fixture
def no_snapshots(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Loads built for real (no snapshot restores)."""
    monkeypatch.setenv("WORKBOOK_SNAPSHOTS", "0")
    yield


def _db(tag: str) -> Database:
    return workbook.connect(database=f"bulk{tag}{uuid.uuid4().hex[:6]}", quiet=True)


def _through_the_wire(db: Database, dataset: Any, shape: str) -> None:
    """What a server would get: create with the validator, insert_many, then build the indexes."""
    spec = shape_spec(dataset.name, shape)
    documents = spec.build(dataset)
    for collection in spec.collections:
        if collection.validator:
            db.create_collection(collection.name, validator=collection.validator)
        else:
            db.create_collection(collection.name)
        if documents[collection.name]:
            db[collection.name].insert_many(copy.deepcopy(documents[collection.name]))
        for index in collection.indexes:
            db[collection.name].create_index(**index.as_kwargs())


def _engine_state(db_name: str, name: str) -> dict[str, Any]:
    engine = offline_server().engine
    storage = engine._storage[db_name][name]
    state: dict[str, Any] = {
        "keys": list(storage.keys()),
        "payloads": [value.payload for value in storage.values()],
        "options": engine._collection_options[db_name][name],
        "records": list(engine._indexes[db_name].get(name, [])),
    }
    for attribute in ("_ordinals", "_locations", "_head_chunk", "_tail_chunk", "_next_chunk", "_next_ordinal"):
        state[attribute] = getattr(storage, attribute)
    for index_name, index in engine._index_data[db_name].get(name, {}).items():
        for attribute in ("_buckets", "_bucket_ordinals", "_bucket_order_roots", "_next_membership_ordinal"):
            state[f"{index_name}.{attribute}"] = getattr(index, attribute)
    return state


@pytest.mark.parametrize("shape", SHAPE_NAMES)
@pytest.mark.parametrize("dataset", DATASETS)
def test_bulk_installed_state_equals_inserting_through_the_wire(no_snapshots: None, dataset: str, shape: str) -> None:
    data = workbook.generate(dataset, "tiny", 7)
    bulk, wire = _db("b"), _db("w")
    try:
        workbook.load(data, shape, bulk, progress=False)
        _through_the_wire(wire, data, shape)
        for collection in shape_spec(dataset, shape).collections:
            expected = _engine_state(wire.name, collection.name)
            got = _engine_state(bulk.name, collection.name)
            assert got.keys() == expected.keys(), collection.name
            for part, value in expected.items():
                assert got[part] == value, f"{dataset}/{shape} {collection.name}: {part} differs"
            listed = [[{k: v for k, v in i.items() if k != "ns"} for i in db[collection.name].list_indexes()]
                      for db in (bulk, wire)]  # fmt: skip
            assert listed[0] == listed[1]
    finally:
        for db in (bulk, wire):
            db.client.drop_database(db.name)


@pytest.mark.parametrize("dataset", DATASETS)
def test_writes_after_a_bulk_load_leave_the_state_writes_after_inserts_leave(no_snapshots: None, dataset: str) -> None:
    """A bulk-loaded collection's key ordinals and locations are read from its order (workbook/key_positions.py):
    deletes, replacements, updates and inserts over the wire then leave every map as on inserted documents."""
    data = workbook.generate(dataset, "tiny", 7)
    bulk, wire = _db("x"), _db("y")
    try:
        workbook.load(data, "referenced", bulk, progress=False)
        _through_the_wire(wire, data, "referenced")
        for collection in shape_spec(dataset, "referenced").collection_names:
            documents = list(wire[collection].find())
            ids = [document["_id"] for document in documents]
            for db in (bulk, wire):
                db[collection].delete_many({"_id": {"$in": ids[::7]}})
                db[collection].update_many({"_id": {"$in": ids[1::5]}}, {"$set": {"touched": True}})
                db[collection].replace_one({"_id": ids[2]}, {k: v for k, v in documents[2].items() if k != "_id"})
                db[collection].insert_many(documents[::7])  # back, at the end of the order
                db[collection].delete_one({"_id": ids[7]})
            expected, got = _engine_state(wire.name, collection), _engine_state(bulk.name, collection)
            for part, value in expected.items():
                if not part.startswith(tuple(f"{i['name']}." for i in wire[collection].list_indexes())):
                    assert got[part] == value, f"{dataset} {collection}: {part} differs"
            assert list(bulk[collection].find()) == list(wire[collection].find())
    finally:
        for db in (bulk, wire):
            db.client.drop_database(db.name)


@pytest.mark.parametrize("dataset", DATASETS)
def test_the_engine_reads_a_bulk_loaded_document_as_the_document_itself(no_snapshots: None, dataset: str) -> None:
    """After a bulk load the engine's decoded caches of a document that decodes to itself are the
    loaded document (one copy held), and equal what the engine decodes after a wire insert."""
    from workbook.engine_reads import public_records

    data = workbook.generate(dataset, "tiny", 7)
    bulk, wire = _db("s"), _db("t")
    engine = offline_server().engine
    try:
        workbook.load(data, "embedded", bulk, progress=False)
        _through_the_wire(wire, data, "embedded")
        for collection in shape_spec(dataset, "embedded").collection_names:
            documents, stored = public_records(engine, bulk.name, collection)  # seeded at load: no engine read
            ours = [engine._borrow_storage_document(item) for item in stored]
            assert stored and all(item.shares() for item in stored), collection
            assert all(map(operator.is_, ours, documents))
            theirs = [engine._borrow_storage_document(item) for item in engine._storage[wire.name][collection].values()]
            assert ours == theirs
            assert list(bulk[collection].find()) == list(wire[collection].find())
    finally:
        for db in (bulk, wire):
            db.client.drop_database(db.name)


def test_the_load_used_the_bulk_loader(no_snapshots: None, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    original = bulkload.install_documents
    monkeypatch.setattr(
        bulkload, "install_documents", lambda db, name, docs: calls.append(name) or original(db, name, docs)
    )
    db = _db("u")
    try:
        workbook.load(workbook.generate("store", "tiny", 7), "referenced", db, progress=False)
    finally:
        db.client.drop_database(db.name)
    assert sorted(calls) == sorted(shape_spec("store", "referenced").collection_names)


def test_switched_off_it_inserts_in_batches(no_snapshots: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBOOK_BULKLOAD", "0")
    monkeypatch.setattr(bulkload, "install_documents", lambda *a: pytest.fail("the bulk loader is switched off"))
    db = _db("o")
    try:
        loaded = workbook.load(workbook.generate("parts", "tiny", 7), "embedded", db, progress=False)
        assert db.products.count_documents({}) == loaded.report.collections[0].documents
    finally:
        db.client.drop_database(db.name)


def test_a_load_in_batches_makes_each_batch_just_before_it_is_sent(
    no_snapshots: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sent in batches (to a server, or with the bulk loader off), a shape's made documents never all
    exist at once: each batch of products with their parts copied in is made right before it is sent."""
    from workbook import loading
    from workbook.shapes.spec import Made

    monkeypatch.setenv("WORKBOOK_BULKLOAD", "0")
    monkeypatch.setattr(loading, "BATCH", 7)
    made = sent = 0
    waiting: list[int] = []  # made but not yet sent, as each batch of products goes out
    made_one = Made.__iter__

    def counted(self: Made) -> Iterator[dict[str, Any]]:
        nonlocal made
        for document in made_one(self):
            made += 1
            yield document

    def insert(db: Database, collection: str, batch: list[dict[str, Any]], kind: str) -> int:
        nonlocal sent
        if collection == "products":
            waiting.append(made - sent)
            sent += len(batch)
        return sent_one(db, collection, batch, kind)

    sent_one = loading._insert
    monkeypatch.setattr(Made, "__iter__", counted)
    monkeypatch.setattr(loading, "_insert", insert)
    data = workbook.generate("parts", "tiny", 7)
    products = len(data.collections["products"])
    db = _db("m")
    try:
        workbook.load(data, "embedded", db, progress=False)
        assert db.products.count_documents({}) == products == made == sent
    finally:
        db.client.drop_database(db.name)
    assert len(waiting) == -(-products // 7) > 2 and max(waiting) == 7, waiting


@pytest.mark.parametrize("bulk", ["1", "0"])
def test_a_load_rejects_documents_over_the_limit_and_stores_the_rest(
    no_snapshots: None, monkeypatch: pytest.MonkeyPatch, bulk: str
) -> None:
    from workbook import loading
    from workbook.facts import bson_size

    monkeypatch.setenv("WORKBOOK_BULKLOAD", bulk)
    data = workbook.generate("store", "tiny", 7)
    products = shape_spec("store", "embedded").build(data)["products"]
    sizes = {product["_id"]: bson_size(product) for product in products}
    limit = sorted(sizes.values())[len(sizes) // 2]  # half the products are over it
    monkeypatch.setattr(loading, "MAX_BSON_SIZE", limit)
    db = _db("r")
    try:
        loaded = workbook.load(data, "embedded", db, progress=False)
        over = {key for key, size in sizes.items() if size > limit}
        assert {r.document_id for r in loaded.report.rejected if r.collection == "products"} == over
        kept = {product["_id"] for product in db.products.find({}, {"_id": 1})}
        assert kept == set(sizes) - over and kept
        counted = next(c for c in loaded.report.collections if c.collection == "products")
        assert counted.bytes == sum(sizes[key] for key in kept) and counted.max_bytes == max(sizes[k] for k in kept)
    finally:
        db.client.drop_database(db.name)


# --- refusals: the engine's own errors ------------------------------------------------------------------


def _collection(validator: dict[str, Any] | None = None, indexes: list[dict[str, Any]] = ()) -> Database:
    db = _db("e")
    db.create_collection("things", **({"validator": validator} if validator else {}))
    for index in indexes:
        db.things.create_index(**index)
    return db


def _error(db: Database, documents: list[dict[str, Any]]) -> tuple[Any, Any]:
    """The bulk loader's error code and the wire insert's, for the same documents."""
    from mongoeco.errors import MongoEcoError

    codes = []
    with pytest.raises(MongoEcoError) as bulk:
        bulkload.install_documents(db.name, "things", documents)
    codes.append(bulk.value.code)
    assert db.things.count_documents({}) == 0, "a refused bulk load leaves the collection empty"
    with pytest.raises(PyMongoOperationFailure) as wire:
        db.things.insert_many(documents)
        for index in db.things.list_indexes():
            db.things.create_index(list(index["key"].items()), unique=index.get("unique", False))
    details = getattr(wire.value, "details", {}) or {}
    write_errors = details.get("writeErrors") or [{}]
    codes.append(write_errors[0].get("code", wire.value.code))
    return codes[0], codes[1]


SCHEMA = {
    "$jsonSchema": {"bsonType": "object", "required": ["n"], "properties": {"n": {"bsonType": "int", "minimum": 0}}}
}


@pytest.mark.parametrize(
    ("validator", "indexes", "documents", "code"),
    [
        (SCHEMA, [], [{"_id": 1, "n": 1}, {"_id": 2, "n": -1}], 121),
        (SCHEMA, [], [{"_id": 1, "n": 1}, {"_id": 2}], 121),
        (None, [], [{"_id": "a"}, {"_id": "a"}], 11000),
        (None, [], [{"_id": 1}, {"_id": 1.0}], 11000),
        (None, [{"keys": [("k", 1)], "unique": True}], [{"_id": 1, "k": "x"}, {"_id": 2, "k": "x"}], 11000),
        (None, [{"keys": [("k", 1)], "unique": True}], [{"_id": 1}, {"_id": 2}], 11000),
        (None, [{"keys": [("a", 1), ("b", 1)]}], [{"_id": 1, "a": [1, 2], "b": [3, 4]}], 171),
        (None, [], [{"_id": [1]}], 53),
    ],
    ids=["validator-minimum", "validator-required", "duplicate-id", "numeric-duplicate-id", "unique-index",
         "unique-index-missing", "parallel-arrays", "array-id"],
)  # fmt: skip
def test_refuses_what_an_insert_refuses(validator: Any, indexes: Any, documents: Any, code: Any) -> None:
    db = _collection(validator, indexes)
    try:
        bulk_code, wire_code = _error(db, documents)  # both refuse
        assert bulk_code == code
        if code != 171:  # parallel arrays: MongoDB's code 171 here, the engine's insert path has none
            assert wire_code == code
    finally:
        db.client.drop_database(db.name)


def test_a_deep_document_is_refused_with_the_depth_error() -> None:
    deep: dict[str, Any] = {"v": 1}
    for _ in range(120):
        deep = {"d": deep}
    db = _collection()
    try:
        bulk_code, wire_code = _error(db, [{"_id": 1, **deep}])
        assert bulk_code == wire_code == 15
    finally:
        db.client.drop_database(db.name)


# --- the pieces, against the engine's own functions -----------------------------------------------------

ODD_VALUES: list[Any] = [
    None, True, 0, -1, 2**31,
    ["a", 1, 2.5, None, 2**40, *range(12)],
    -(2**31) - 1, 2**40, 1.5, -0.0, float("nan"), "", "x", [], {}, [1, [2]], (1, 2),
    {"a": {"b": 1}}, datetime.datetime(2024, 1, 2, 3, 4, 5, 678901), ObjectId("65a1b2c3d4e5f60718293a4b"),
    datetime.datetime(2024, 1, 2, tzinfo=datetime.timezone(datetime.timedelta(hours=2))),
    Decimal128("1.5"), Int64(7), b"\x00\x01", uuid.UUID(int=5), {"$mongoeco": {"type": "datetime", "value": "x"}},
]  # fmt: skip


def test_the_one_pass_encoder_gives_the_engines_stored_form() -> None:
    engine = offline_server().engine
    encode = bulkload.encoder(engine)
    for position, value in enumerate(ODD_VALUES):
        document = {"_id": position, "v": value, "nested": {"list": [value, {"v": value}]}}
        got, expected = encode(document), engine_compat.stored_payload(engine, document)
        assert repr(got) == repr(expected), value


def _mutations(document: dict[str, Any], rng: random.Random) -> Iterator[dict[str, Any]]:
    """Copies of ``document`` with one value replaced or removed somewhere, anywhere in it."""
    paths: list[list[Any]] = []

    def walk(value: Any, path: list[Any]) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                paths.append([*path, key])
                walk(item, [*path, key])
        elif isinstance(value, list):
            for index, item in enumerate(value):
                paths.append([*path, index])
                walk(item, [*path, index])

    walk(document, [])
    for path in rng.sample(paths, min(len(paths), 12)):
        for replacement in [*rng.sample(ODD_VALUES, 6), "DELETE"]:
            changed = copy.deepcopy(document)
            parent = changed
            for part in path[:-1]:
                parent = parent[part]
            if replacement == "DELETE":
                del parent[path[-1]]
            else:
                parent[path[-1]] = replacement
            yield changed


@pytest.mark.parametrize("dataset", DATASETS)
def test_the_fast_validator_never_lets_in_what_the_engine_refuses(dataset: str) -> None:
    data = workbook.generate(dataset, "tiny", 7)
    rng = random.Random(11)
    checked = 0
    for shape in SHAPE_NAMES:
        spec = shape_spec(dataset, shape)
        documents = spec.build(data)
        for collection in spec.collections:
            if not collection.validator:
                continue
            options = {"validator": collection.validator}
            fast = bulkload.fast_validator(options)
            compiled = engine_compat.compile_validator(options)
            assert fast is not None, f"{collection.name}: the shapes' validators are all in the fast subset"
            for document in rng.sample(documents[collection.name], min(5, len(documents[collection.name]))):
                assert fast(document), "generated documents pass the fast check"
                for changed in _mutations(document, rng):
                    if fast(changed):
                        assert engine_compat.validates(compiled, changed), changed
                    checked += 1
    assert checked > 500


def test_scalar_index_keys_match_the_engines() -> None:
    engine = offline_server().engine
    keys = bulkload._EqualityKeys(engine_compat.bson_equality_key)
    scalars = [value for value in ODD_VALUES if not isinstance(value, list | tuple)]
    documents = [{"_id": 1, "a": value, "b": {"c": value}, "d": 1} for value in scalars]
    documents += [{"_id": 2}, {"_id": 3, "a": None}, {"_id": 4, "b": 5}, {"_id": 5, "b": {"x": 1}}]
    documents += [  # arrays: through subdocuments (the fast multikey rule) and every case it leaves to the engine
        {"_id": 6, "b": [{"c": 1}, {"c": 2}, {"c": 1}]}, {"_id": 7, "b": [{"c": 1}, {"x": 2}]}, {"_id": 8, "b": []},
        {"_id": 9, "b": [1, {"c": 2}]}, {"_id": 10, "b": [{"c": [1, 2]}]}, {"_id": 11, "a": [1, 2], "b": [{"c": "s"}]},
        {"_id": 12, "b": [{"c": datetime.datetime(2024, 5, 6)}, {"c": None}]}, {"_id": 13, "a": [], "d": [1]},
        {"_id": 14, "b": [{"c": {"y": 1}}]}, {"_id": 15, "b": {"c": [3, 4]}},
    ]  # fmt: skip
    fast = 0
    for fields in (["a"], ["b.c"], ["a", "d"], ["d", "b.c"], ["a", "b.c", "zz"], ["zz"], ["b"], ["a", "b.c"]):
        paths = [tuple(field.split(".")) for field in fields]
        for document in documents:
            decoded = engine._borrow_storage_document(engine_compat.stored_payload(engine, document))
            both = keys.keys(keys.paths(decoded, paths), paths)
            if both is None:
                continue  # left to the engine's own functions
            fast += document["_id"] in (6, 12)  # the multikey rule was used, not only the scalar one
            index_keys, unique_keys = both
            assert index_keys == engine_compat.index_keys(engine, decoded, fields), (fields, document)
            assert unique_keys == engine_compat.unique_index_keys(engine, decoded, fields), (fields, document)

    assert fast >= 2


@pytest.mark.parametrize("dataset", DATASETS)
def test_sizes_kept_at_load_time_equal_sizes_measured_from_the_engine(no_snapshots: None, dataset: str) -> None:
    from workbook import sizes

    db = _db("s")
    try:
        loaded = workbook.load(workbook.generate(dataset, "tiny", 7), "hybrid", db, progress=False)
        for collection in loaded.spec.collections:
            kept = sizes._SIZE_CACHE[(db.name, collection.name)]
            assert kept.version is offline_server().engine._storage[db.name][collection.name]._values
            del sizes._SIZE_CACHE[(db.name, collection.name)]
            measured = sizes._offline_sizes(db, collection.name, list(kept.index_bytes))
            assert measured is not None and measured is not kept
            assert measured.ids == kept.ids
            assert measured.bytes.tolist() == kept.bytes.tolist()
            assert measured.index_bytes == kept.index_bytes
    finally:
        db.client.drop_database(db.name)


def test_index_entry_arithmetic_matches_bson_encoding() -> None:
    from workbook import sizes

    for value in [v for v in ODD_VALUES if not isinstance(v, uuid.UUID)]:  # bson cannot encode bare UUIDs
        document = {"_id": 1, "a": value, "b": {"c": value}, "n": 5}
        for fields in (("a",), ("b.c", "n"), ("zz",), ("a", "zz", "n")):
            assert sizes._entry_bytes_fast(document, fields) == sizes._entry_bytes(document, fields), (value, fields)


def test_a_snapshot_derives_the_payloads_the_bulk_loader_stored() -> None:
    """A snapshot file holds each document once and encodes its payload again on restore
    (engine_compat.payload_encoder): it must be what the bulk loader stored, value for value."""
    engine = offline_server().engine
    encode, derive = bulkload.encoder(engine), engine_compat.payload_encoder(engine)
    for position, value in enumerate(ODD_VALUES):
        document = {"_id": position, "v": value, "nested": {"list": [value, {"v": value}]}}
        assert repr(derive(document)) == repr(encode(document)), value

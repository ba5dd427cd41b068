"""MongoDB's hard limits: the pure checks, and each limit failing live with the server's code and message."""

from __future__ import annotations

import pytest

from workbook import offline_limits
from workbook.patterns import limits


def test_nesting_depth_counts_the_document_itself_as_level_one():
    assert offline_limits.document_depth({}) == 1
    assert offline_limits.document_depth({"a": [{"b": 1}]}) == 3
    assert offline_limits.document_depth(limits.nested(100)) == 100


def test_depth_error_only_past_one_hundred_levels():
    assert offline_limits.depth_error(limits.nested(100)) is None
    code, message = offline_limits.depth_error(limits.nested(101))
    assert code == 15 and message == "cannot insert document because it exceeds 100 levels of nesting"


def smallest_nested(levels: int) -> dict:
    document: dict = {}
    for _ in range(levels - 1):
        document = {"": document}
    return document


def test_the_smallest_document_too_deep_has_the_bytes_below_which_no_depth_is_walked(monkeypatch):
    import bson

    too_deep = smallest_nested(101)
    assert len(bson.encode(too_deep)) == offline_limits.SHALLOW_BELOW_BYTES == 705
    assert offline_limits.depth_error(too_deep, 705)[0] == 15  # at the bound: walked, and refused
    assert offline_limits.depth_error(smallest_nested(100), 698) is None

    def no_walk(document):
        raise AssertionError("walked a document too small to be too deep")

    monkeypatch.setattr(offline_limits, "document_depth", no_walk)
    assert offline_limits.depth_error({"a": [{"b": 1}]}, 704) is None


def test_an_insert_walks_the_depth_of_big_documents_only_and_refuses_the_smallest_too_deep(db, monkeypatch):
    from pymongo.errors import OperationFailure

    from workbook import offline_engine
    from workbook.engine_reads import is_offline

    if not is_offline(db):
        pytest.skip("the offline default's own check")
    walked = []
    depth = offline_limits.document_depth
    monkeypatch.setattr(offline_limits, "document_depth", lambda document: walked.append(1) or depth(document))
    db.deep.insert_one({"_id": 1, "a": {"b": [1, 2]}})
    assert walked == []  # 39 bytes: no walk
    db.deep.insert_one({"_id": 2, "pad": "x" * 800})
    assert walked == [1]  # over 705 bytes: walked, and shallow
    with pytest.raises(OperationFailure) as refused:
        db.deep.insert_one({"_id": 3, **smallest_nested(101)})  # 714 bytes, 101 levels
    assert refused.value.code == 15
    monkeypatch.setattr(offline_engine, "engine_bson_size", lambda document: (_ for _ in ()).throw(RecursionError()))
    with pytest.raises(OperationFailure) as unsized:  # too deep for the encoder: the depth error still answers
        db.deep.insert_one({"_id": 4, **smallest_nested(101)})
    assert unsized.value.code == 15
    assert sorted(d["_id"] for d in db.deep.find()) == [1, 2]


def test_new_index_error_counts_id_and_ignores_an_existing_index():
    existing = [[("_id", 1)]] + [[(f"f{n}", 1)] for n in range(62)]
    assert offline_limits.new_index_error("d.c", [("g", 1)], existing) is None  # the 64th index fits
    code, message = offline_limits.new_index_error("d.c", [("g", 1)], [*existing, [("h", 1)]])
    assert code == 67 and message == "add index fails, too many indexes for d.c key:{ g: 1 }"
    assert offline_limits.new_index_error("d.c", [("h", 1)], [*existing, [("h", 1)]]) is None


def test_new_index_error_past_thirty_two_fields():
    assert offline_limits.new_index_error("d.c", [(f"a{n}", 1) for n in range(32)], [[("_id", 1)]]) is None
    assert offline_limits.new_index_error("d.c", [(f"a{n}", 1) for n in range(33)], [[("_id", 1)]]) == (
        13103,
        "too many compound keys",
    )


def test_parallel_arrays_names_the_later_field_first_and_follows_paths():
    documents = [{"a": 1, "b": [1]}, {"a": [1], "b": {"c": [2]}}]
    assert offline_limits.parallel_arrays_error(documents, ["a", "b"]) is None
    assert offline_limits.parallel_arrays_error(documents, ["a", "b.c"]) == (
        171,
        "cannot index parallel arrays [b.c] [a]",
    )
    assert offline_limits.parallel_arrays_error(documents, ["a"]) is None
    # Two paths through one array of subdocuments are not parallel arrays (MongoDB indexes them)
    assert offline_limits.parallel_arrays_error([{"o": [{"x": 1, "y": 2}]}], ["o.x", "o.y"]) is None


@pytest.mark.parametrize(
    ("limit", "code", "words"),
    [
        ("nesting depth", 15, "exceeds 100 levels of nesting"),
        ("indexes per collection", 67, "too many indexes"),
        ("fields in a compound index", 13103, "too many compound keys"),
        ("arrays in one compound index", 171, "cannot index parallel arrays [sizes] [tags]"),
    ],
)
def test_each_limit_fails_live_with_mongodbs_error(db, limit, code, words):
    hit = limits.hit(db, limit)
    assert hit.code == code
    assert words in hit.message
    assert not [name for name in db.list_collection_names() if name.startswith("limit_")]  # scratch dropped


def test_a_document_fails_past_sixteen_mib_and_keeps_its_last_good_size(db):
    hit = limits.hit(db, "document size")
    assert hit.code in (17419, 8375908)  # an update's result over the limit (jstests core/max_doc_size.js allows both)
    assert hit.fitted.startswith("15 pushes")


def test_limit_table_has_every_limit_and_unknown_limits_list_the_choices(db):
    from workbook.errors import UnknownChoiceError

    table = limits.limit_table(db)
    assert list(table.index) == list(limits.LIMITS)
    assert table["code"].notna().all()
    with pytest.raises(UnknownChoiceError, match="nesting depth"):
        limits.hit(db, "depth")


def test_a_time_series_measurement_over_4_mb_is_refused_by_mongodb_and_the_offline_default_says_it_does_not(db, engine):
    from workbook.facts import TIMESERIES_MEASUREMENT_MB

    checked = limits.timeseries_measurement(db)
    assert TIMESERIES_MEASUREMENT_MB == 4 and checked.small_stored and checked.big_megabytes > 4
    if engine is None:  # no time-series collections offline: an ordinary collection, and the limit is not enforced
        assert checked.listed_type == "collection" and not checked.enforced
        assert "not enforced here" in repr(checked)
    else:
        assert checked.listed_type == "timeseries" and checked.enforced
    assert "readings" not in db.list_collection_names(), "the scratch collection is dropped"


@pytest.mark.parametrize("ordered", [True, False])
def test_documents_refused_at_storage_are_their_own_write_errors_in_any_piece_of_an_insert(db, ordered):
    """A document over 16 MiB (and, on the offline default, one over its 100 levels) is its own write error
    wherever it is in an insert_many (the offline default stores a command in pieces and sizes each document
    once, as it stores it); an ordered insert stops there, an unordered one stores all the others."""
    from pymongo.errors import BulkWriteError

    from workbook.engine_reads import is_offline
    from workbook.facts import MAX_BSON_SIZE
    from workbook.offline_writes import BULK_INSERT_CHUNK

    big, deep = BULK_INSERT_CHUNK + 7, BULK_INSERT_CHUNK + 9
    batch: list[dict] = [{"_id": n} for n in range(2 * BULK_INSERT_CHUNK + 50)]
    batch[big] = {"_id": "big", "big": "x" * MAX_BSON_SIZE}
    refused = {big: 2}  # BadValue, "object to insert too large" (jstests core/max_doc_size.js)
    if is_offline(db):  # the depth limit is the offline default's own check (see the test above)
        batch[deep], refused[deep] = {"_id": "deep", **smallest_nested(101)}, 15
    with pytest.raises(BulkWriteError) as caught:
        db.refused.insert_many(batch, ordered=ordered)
    errors = [(e["index"], e["code"]) for e in caught.value.details["writeErrors"]]
    stored = sorted(d["_id"] for d in db.refused.find({}, {"_id": 1}))
    if ordered:
        assert errors == [(big, 2)]
        assert stored == list(range(big))
    else:
        assert errors == sorted(refused.items())
        assert stored == [n for n in range(len(batch)) if n not in refused]
    assert caught.value.details["nInserted"] == len(stored)


def test_max_doc_size_jstest(db):
    """jstests/core/max_doc_size.js: a document of exactly the server's maxBsonObjectSize is inserted, upserted
    and reached by $set; one byte more fails with MongoDB's own code for each: an insert 2 (BadValue, "object
    to insert too large"), an upsert 17420, an update 17419. Nothing over the limit is stored."""
    import bson
    from bson import ObjectId

    limit = db.command("hello")["maxBsonObjectSize"]
    at_limit = "a" * (limit - len(bson.encode({"_id": ObjectId(), "x": ""})))
    over = at_limit + "a"
    object_id = ObjectId()

    def upsert(x: str) -> dict:
        return {"q": {"_id": object_id}, "u": {"_id": object_id, "x": x}, "upsert": True}

    def grow(x: str) -> dict:
        db.max_doc_size.drop()
        db.max_doc_size.insert_one({"_id": object_id})
        return {"q": {"_id": object_id}, "u": {"$set": {"x": x}}}

    def codes(reply: dict) -> list[int]:
        return [error["code"] for error in reply.get("writeErrors", [])]

    for x, fits in ((at_limit, True), (over, False)):
        db.max_doc_size.drop()
        inserted = db.command("insert", "max_doc_size", documents=[{"_id": ObjectId(), "x": x}])
        assert db.max_doc_size.count_documents({}) == fits
        db.max_doc_size.drop()
        upserted = db.command("update", "max_doc_size", ordered=True, updates=[upsert(x)])
        assert db.max_doc_size.count_documents({}) == fits
        grown = db.command("update", "max_doc_size", ordered=True, updates=[grow(x)])
        assert db.max_doc_size.count_documents({"x": {"$exists": True}}) == fits
        if fits:
            assert codes(inserted) == codes(upserted) == codes(grown) == []
        else:  # (MongoDB 8 may word the $set's as 8375908, the jstest allows both)
            assert (codes(inserted), codes(upserted)) == ([2], [17420]) and codes(grown) in ([17419], [8375908])

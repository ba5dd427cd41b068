"""The explain model's index build takes a short path for documents whose indexed fields are plain
scalars, or one array of them (``keys._ScalarKeys``); it must build exactly the index the general walk
builds."""

from __future__ import annotations

import datetime
import math
import random
from typing import Any

import pytest
from bson import Decimal128, Int64, ObjectId

from workbook.planner import keys
from workbook.planner.keys import IndexDefinition, build_index

SPECS = [
    {"key": {"a": 1}},
    {"key": {"a": -1, "_id": 1}},
    {"key": {"o.x": 1, "a": 1}},
    {"key": {"s": 1}, "collation": {"locale": "en", "strength": 2}},
    {"key": {"o.x": 1}, "sparse": True},
    {"key": {"a": 1}, "partialFilterExpression": {"a": {"$gt": 2}}},
    {"key": {"a": "hashed"}},
    {"key": {"o": 1}},
    {"key": {"l.x": 1}},
    {"key": {"l.x": -1, "_id": 1}},
    {"key": {"t": 1, "a": 1}},
    {"key": {"t": 1}, "collation": {"locale": "en", "strength": 2}},
    {"key": {"t": 1, "l.x": 1}},
    {"key": {"l.x": 1, "l.y": 1}},
    {"key": {"l.0.x": 1}},
    {"key": {"l.x.y": 1}},
]
VALUES: list[Any] = [
    0, 1, -1, 2**40, 0.0, -0.0, 1.0, 2.5, math.nan, -math.nan, math.inf, True, False, None, "", "a", "B", "b",
    datetime.datetime(2024, 1, 1), datetime.datetime(2024, 1, 1, 0, 0, 0, 1000), ObjectId("0" * 24),
    Int64(1), Decimal128("1.0"), [1, 2], [], {"x": 1}, {}, [{"x": 2}], b"\x01",
]  # fmt: skip


def _value(rng: random.Random) -> Any:
    return rng.choice(VALUES)


def _document(rng: random.Random, number: int) -> dict[str, Any]:
    document: dict[str, Any] = {"_id": number if rng.random() < 0.8 else _value(rng)}
    for field in ("a", "s"):
        if rng.random() < 0.85:
            document[field] = _value(rng)
    shape = rng.random()
    if shape < 0.5:
        document["o"] = {"x": _value(rng)} if rng.random() < 0.8 else {}
    elif shape < 0.7:
        document["o"] = _value(rng)  # a scalar or array on the path's first part
    if rng.random() < 0.6:  # a multikey field: tags, with repeats and values of every kind
        tags = [rng.choice(VALUES[:22]) for _ in range(rng.randrange(5))]
        document["t"] = tags if rng.random() < 0.8 else _value(rng)
    if rng.random() < 0.6:  # an array of subdocuments, some without the field, some not subdocuments
        document["l"] = [_element(rng) for _ in range(rng.randrange(4))]
    return document


def _element(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.7:
        return {"x": rng.choice(VALUES[:22]), "y": rng.choice(VALUES[:5])}
    if roll < 0.8:
        return {"y": 1}
    return {"x": _value(rng)} if roll < 0.95 else _value(rng)


def _same(left: Any, right: Any) -> bool:
    if type(left) is not type(right):
        return False
    if isinstance(left, list | tuple):
        return len(left) == len(right) and all(map(_same, left, right))
    if isinstance(left, dict):
        return list(left) == list(right) and all(_same(left[k], right[k]) for k in left)
    if isinstance(left, float):
        return (math.isnan(left) and math.isnan(right)) or (
            left == right and math.copysign(1, left) == math.copysign(1, right)
        )
    return left == right


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("spec", range(len(SPECS)))
def test_the_short_path_builds_the_index_the_general_walk_builds(spec: int, seed: int, monkeypatch) -> None:
    rng = random.Random(seed)
    documents = [_document(rng, number) for number in range(120)]
    definition = IndexDefinition.from_info({"name": f"i{spec}", **SPECS[spec]})

    def built() -> Any:
        try:
            return build_index(definition, documents)
        except Exception as error:  # parallel arrays, an array on a hashed path: refused by both the same way
            return (type(error), str(error))

    fast = built()
    monkeypatch.setattr(keys._ScalarKeys, "keys", lambda self, document: None)  # the general walk for all
    general = built()
    if isinstance(general, tuple) or isinstance(fast, tuple):
        assert fast == general
        return
    assert [(e.rid, e.keys, e.values) for e in fast.entries] == [(e.rid, e.keys, e.values) for e in general.entries]
    assert all(
        _same(a.values, b.values) and _same(a.keys, b.keys) for a, b in zip(fast.entries, general.entries, strict=True)
    )
    assert fast.multikey_paths == general.multikey_paths
    assert {k: (v[1], v[2]) for k, v in fast.memo().items()} == {k: (v[1], v[2]) for k, v in general.memo().items()}


def test_the_short_path_takes_the_plain_documents() -> None:
    """Most course documents are plain: the short path must answer them (else it is dead weight)."""
    definition = IndexDefinition.from_info({"name": "a", "key": {"a": 1, "o.x": -1}})
    scalars = keys._ScalarKeys(definition)
    assert scalars.keys({"_id": 1, "a": "x", "o": {"x": datetime.datetime(2024, 1, 1)}}) is not None
    assert scalars.keys({"_id": 1}) is not None  # missing fields: null keys
    assert scalars.keys({"_id": 1, "a": [1, 2]}) is not None and scalars.keys({"_id": 1, "o": [{"x": 1}]}) is not None
    assert scalars.keys({"_id": 1, "a": [1], "o": [{"x": 1}]}) is None  # arrays on two paths: refused by the walk
    assert scalars.keys({"_id": 1, "a": Int64(1)}) is None and scalars.keys({"_id": 1, "a": []}) is None


def test_array_elements_held_once_share_one_key_pair_across_documents() -> None:
    """A restored dataset holds each distinct string once. An index with the simple collation holds each element
    bare, the document's own object, and no sort key; a collated index keeps one (keys, values) pair per element
    object, shared by every document holding it, and a distinct but equal object keeps its own."""
    part, other, twin = "part-1", "part-2", "".join(["part-", "1"])
    documents = [{"_id": n, "l": [{"x": part}, {"x": other if n % 2 else part}]} for n in range(50)]
    documents.append({"_id": 50, "l": [{"x": twin}]})
    simple = build_index(IndexDefinition.from_info({"name": "l", "key": {"l.x": 1}}), documents)
    held = [(entry._keys, entry._values) for entry in simple.entries]
    assert all(kept is keys._ONE for kept, _ in held) and sum(value is part for _, value in held) == 50
    assert [value for _, value in held if value is twin] == [twin]
    collated = {"name": "l", "key": {"l.x": 1}, "collation": {"locale": "en", "strength": 2}}
    built = build_index(IndexDefinition.from_info(collated), documents)
    of_part = [entry for entry in built.entries if entry.values[0] is part]
    assert len(of_part) == 50 and len({id(entry._keys) for entry in of_part}) == 1
    assert len({id(entry._values) for entry in of_part}) == 1
    (of_twin,) = [entry for entry in built.entries if entry.rid == 50]
    assert of_twin.values[0] is twin and of_twin.keys == of_part[0].keys and of_twin._values is not of_part[0]._values


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("spec", range(len(SPECS)))
def test_an_index_reads_back_the_keys_the_general_walk_makes(spec: int, seed: int) -> None:
    """Each entry's keys, made again when read (the simple collation) or held (a collation), are the sort keys
    ``_document_keys`` gives its document, in index order: per field in its direction, then record id."""
    rng = random.Random(seed)
    documents = [_document(rng, number) for number in range(150)]
    definition = IndexDefinition.from_info({"name": f"i{spec}", **SPECS[spec]})
    try:
        built = build_index(definition, documents)
    except Exception:  # parallel arrays, an array on a hashed path: refused (the test above holds both ways equal)
        return
    expected = [
        (rid, pair_keys, values)
        for rid, document in enumerate(documents)
        for pair_keys, values in keys._document_keys(definition, document, definition.collate)[0]
    ]
    for position in reversed(range(len(definition.fields))):
        expected.sort(key=lambda row: row[1][position], reverse=definition.fields[position][1] < 0)
    got = [(entry.rid, entry.keys, entry.values) for entry in built.entries]
    assert got == expected
    assert all(_same(a[1], b[1]) and _same(a[2], b[2]) for a, b in zip(got, expected, strict=True))
    lean = [entry._keys is keys._ONE or entry._keys is None for entry in built.entries]
    assert all(lean) if definition.collate is None else not any(lean)


def test_an_index_holds_about_a_hundred_bytes_a_key() -> None:
    """A one-field index over 20,000 distinct dates holds an entry and its record id per key: no sort key, no
    one-item tuples (each key's sort key, its milliseconds and the two tuples were 250 bytes a key)."""
    import gc
    import tracemalloc

    start = datetime.datetime(2024, 1, 1)
    documents = [{"_id": n, "at": start + datetime.timedelta(seconds=n)} for n in range(20_000)]
    definition = IndexDefinition.from_info({"name": "at_1", "key": {"at": 1}})
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        built = build_index(definition, documents)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(built.entries) == 20_000 and built.entries[5].keys == (keys.sort_key(documents[5]["at"]),)
    assert held / len(built.entries) <= 24, f"{held / len(built.entries):.0f} bytes a key"  # 16.7; Entry objects: 92


def test_date_keys_are_the_milliseconds_bson_stores() -> None:
    """A date's key is its BSON value (milliseconds since the epoch, naive dates read as UTC), checked
    against pymongo's own encoder over random dates from year 2 to 9980, naive and aware."""
    import bson
    from bson.codec_options import CodecOptions, DatetimeConversion

    from workbook.planner.values import date_millis

    as_millis = CodecOptions(datetime_conversion=DatetimeConversion.DATETIME_MS)
    rng = random.Random(3)
    for _ in range(2000):
        value = datetime.datetime(2, 1, 1) + datetime.timedelta(microseconds=rng.randrange(315_000_000_000_000_000))
        if rng.random() < 0.3:
            value = value.replace(tzinfo=datetime.timezone(datetime.timedelta(hours=rng.randint(-12, 12))))
        stored = bson.decode(bson.encode({"d": value}), codec_options=as_millis)["d"]
        assert date_millis(value) == int(stored), value


def test_entries_are_held_as_columns_and_read_as_entries() -> None:
    """An index's entries (keys.Entries) read, change and renumber as a list of Entry objects would."""
    lean = [keys._lean_entry((keys.sort_key(v),), (v,), rid) for rid, v in enumerate([3, "a", 1.5, None])]
    entries = keys.Entries(lean)
    assert list(entries) == lean and entries[1] == lean[1] and entries[-1] == lean[-1] and entries[1:3] == lean[1:3]
    assert entries[::-1] == lean[::-1] and len(entries) == 4 and entries.rid(2) == 2
    with pytest.raises(IndexError):
        entries[4]
    collated = keys.Entry(((1, "x"),), ("X",), 9)  # held keys unlike the lean ones': the keys get a column
    copied = entries.copy()
    copied.insert(1, collated)
    del copied[0]
    assert list(copied) == [collated, *lean[1:]] and list(entries) == lean  # the copy changed, not the original
    renumbered = copied.kept([-1, 5, 6, -1, -1, -1, -1, -1, -1, 0])  # record id -> new record id (-1: gone)
    assert [(e.rid, e.values) for e in renumbered] == [(0, ("X",)), (5, ("a",)), (6, (1.5,))]
    assert renumbered == keys.Entries([collated.at(0), lean[1].at(5), lean[2].at(6)])
    assert keys.Entries() == keys.Entries([]) and list(keys.Entries().kept([])) == []


@pytest.mark.parametrize("seed", range(6))
def test_entries_in_blocks_change_as_a_list_and_copies_do_not_share_changes(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Entries in small blocks (split when they double, gone when emptied), changed at random beside a list of the
    same entries; each copy taken on the way keeps what it held while the other changes (copy on write)."""
    monkeypatch.setattr(keys, "_BLOCK", 3)
    rng = random.Random(seed)

    def made(rid: int) -> keys.Entry:
        value = rng.choice([rid, f"v{rid}", float(rid)])
        if rng.random() < 0.1 * (seed % 2):  # odd seeds: now and then a collated entry (the keys get a column)
            return keys.Entry(((1, str(value)),), (value,), rid)
        return keys._lean_entry((keys.sort_key(value),), (value,), rid)

    expected = [made(rid) for rid in range(rng.randrange(0, 12))]
    entries = keys.Entries(expected)
    copies: list[tuple[keys.Entries, list[keys.Entry]]] = []
    for step in range(200):
        action = rng.choice(["insert", "insert", "delete", "set", "copy"])
        if action == "insert":
            at, entry = rng.randrange(-len(expected) - 1, len(expected) + 2), made(100 + step)
            entries.insert(at, entry)
            expected.insert(at, entry)
        elif action == "delete" and expected:
            at = rng.randrange(-len(expected), len(expected))
            del entries[at]
            del expected[at]
        elif action == "set" and expected:
            at, entry = rng.randrange(len(expected)), made(500 + step)
            entries[at] = entry
            expected[at] = entry
        elif action == "copy":
            copies.append((entries, list(expected)))
            entries = entries.copy()  # go on changing the copy; the original must stay as it was
        assert list(entries) == expected and len(entries) == len(expected)
        if expected:
            at = rng.randrange(-len(expected), len(expected))
            assert entries[at] == expected[at] and entries.rid(at) == expected[at].rid
            assert entries[at:] == expected[at:] and entries[::2] == expected[::2]
    for original, held in copies:
        assert list(original) == held
    assert entries.rids().tolist() == [entry.rid for entry in expected]
    for start in range(-1, len(expected) + 1):  # an index scan reads on from where it sought, either way
        assert list(entries.walk(start)) == (expected[start:] if start >= 0 else [])
        assert list(entries.walk(start, backward=True)) == (expected[::-1][start:] if start >= 0 else [])
    with pytest.raises(IndexError):
        entries[len(expected)]

"""Multikey indexes and collations in the planner model."""

from __future__ import annotations

from workbook.planner import explain_find, summarize
from workbook.planner.keys import IndexDefinition, build_index

ID = {"v": 2, "key": {"_id": 1}, "name": "_id_"}

# https://www.mongodb.com/docs/manual/core/indexes/index-types/index-multikey/multikey-index-bounds/
SURVEY = [
    {"_id": 1, "item": "ABC", "ratings": [2, 9]},
    {"_id": 2, "item": "XYZ", "ratings": [4, 3]},
]


def plan_scan(e: dict) -> dict:
    plan = e["queryPlanner"]["winningPlan"]
    while plan["stage"] != "IXSCAN":
        plan = plan["inputStage"]
    return plan


def test_multikey_keys_one_per_element():
    """https://www.mongodb.com/docs/manual/core/indexes/index-types/index-multikey/: a multikey index
    holds a key for each array element."""
    data = build_index(IndexDefinition.from_info({"key": {"ratings": 1}, "name": "ratings_1"}), SURVEY)
    assert [e.values[0] for e in data.entries] == [2, 3, 4, 9]
    assert data.is_multikey and data.multikey_paths == {"ratings": ["ratings"]}


def test_multikey_range_bounds_are_not_intersected():
    """Multikey bounds page (Intersect Bounds for Multikey Index): without $elemMatch,
    {ratings: {$gte: 3, $lte: 6}} uses only one of the two bounds; the other is a fetch filter.
    Both documents match (each has an element >= 3 and an element <= 6)."""
    e = explain_find(
        SURVEY,
        [ID, {"v": 2, "key": {"ratings": 1}, "name": "ratings_1"}],
        namespace="t.survey",
        filter={"ratings": {"$gte": 3, "$lte": 6}},
    )
    scan = plan_scan(e)
    assert scan["isMultiKey"] and scan["multiKeyPaths"] == {"ratings": ["ratings"]}
    assert scan["indexBounds"]["ratings"] in (["[3, inf.0]"], ["[-inf.0, 6]"])
    assert "filter" in e["queryPlanner"]["winningPlan"]
    assert e["executionStats"]["nReturned"] == 2
    assert summarize(e)["multikey"]


def test_multikey_compound_bounds():
    """Multikey bounds page (Compound Bounds for Multikey Index): index {item: 1, ratings: 1},
    {item: "XYZ", ratings: {$gte: 3}} -> item ["XYZ", "XYZ"], ratings [3, Infinity]."""
    e = explain_find(
        SURVEY,
        [ID, {"v": 2, "key": {"item": 1, "ratings": 1}, "name": "item_1_ratings_1"}],
        namespace="t.survey",
        filter={"item": "XYZ", "ratings": {"$gte": 3}},
    )
    assert plan_scan(e)["indexBounds"] == {"item": ['["XYZ", "XYZ"]'], "ratings": ["[3, inf.0]"]}
    assert e["executionStats"]["nReturned"] == 1


def test_multikey_scan_deduplicates_documents():
    """A document with several matching elements is returned (and fetched) once."""
    docs = [{"_id": 1, "t": ["a", "b", "c"]}, {"_id": 2, "t": ["b"]}]
    e = explain_find(docs, [ID, {"v": 2, "key": {"t": 1}, "name": "t_1"}], namespace="t.c", filter={"t": {"$gte": "a"}})
    scan = e["executionStats"]["executionStages"]["inputStage"]
    assert (scan["keysExamined"], scan["dupsDropped"], e["executionStats"]["nReturned"]) == (4, 2, 2)
    assert e["executionStats"]["totalDocsExamined"] == 2


def test_multikey_field_prevents_covering():
    """https://www.mongodb.com/docs/manual/core/query-optimization/#covered-query: multikey
    indexes cannot cover queries over array fields."""
    docs = [{"_id": 1, "t": ["a", "b"]}]
    e = explain_find(
        docs,
        [ID, {"v": 2, "key": {"t": 1}, "name": "t_1"}],
        namespace="t.c",
        filter={"t": "a"},
        projection={"t": 1, "_id": 0},
    )
    assert "FETCH" in summarize(e)["stages"] and not summarize(e)["covered"]


def test_a_multikey_index_covers_a_query_on_its_non_array_fields():
    """https://www.mongodb.com/docs/manual/core/index-multikey/#covered-queries: since 3.6 a multikey
    index covers a query over its non-array fields when it records which paths are multikey."""
    docs = [{"_id": 1, "c": "x", "p": 5, "r": [{"s": 1}, {"s": 4}]}, {"_id": 2, "c": "x", "p": 3, "r": [{"s": 2}]}]
    index = {"v": 2, "key": {"c": 1, "p": 1, "r.s": 1}, "name": "c_p_rs"}
    covered = explain_find(docs, [ID, index], namespace="t.c", filter={"c": "x"}, projection={"p": 1, "_id": 0})
    s = summarize(covered)
    assert s["multikey"] and s["covered"] and s["docsExamined"] == 0 and s["nReturned"] == 2
    scan = covered["queryPlanner"]["winningPlan"]["inputStage"]
    assert scan["multiKeyPaths"] == {"c": [], "p": [], "r.s": ["r"]}
    fetched = explain_find(docs, [ID, index], namespace="t.c", filter={"c": "x"}, projection={"r.s": 1, "_id": 0})
    assert not summarize(fetched)["covered"] and summarize(fetched)["docsExamined"] == 2


CAFE = [
    {"_id": 1, "category": "café"},
    {"_id": 2, "category": "cafe"},
    {"_id": 3, "category": "Cafe"},
    {"_id": 4, "category": "tea"},
]
FR = {"v": 2, "key": {"category": 1}, "name": "category_1", "collation": {"locale": "fr", "strength": 1}}


def test_collated_index_serves_only_queries_with_its_collation():
    """https://www.mongodb.com/docs/manual/reference/collation/#collation-and-index-use: a query
    must specify the index's collation to use it for string comparisons."""
    same = explain_find(
        CAFE, [ID, FR], namespace="t.c", filter={"category": "cafe"}, collation={"locale": "fr", "strength": 1}
    )
    assert plan_scan(same)["indexName"] == "category_1"
    assert same["executionStats"]["nReturned"] == 3  # strength 1 ignores case and accents
    simple = explain_find(CAFE, [ID, FR], namespace="t.c", filter={"category": "cafe"})
    assert simple["queryPlanner"]["winningPlan"]["stage"] == "COLLSCAN"
    assert simple["executionStats"]["nReturned"] == 1


def test_strength_two_compares_case_insensitively():
    """https://www.mongodb.com/docs/manual/reference/collation/ (strength 2: base characters and
    accents, not case): "abc" and "ABC" are equal; bounds print as CollationKey(0x...)."""
    docs = [{"_id": 1, "n": "abc"}, {"_id": 2, "n": "ABC"}, {"_id": 3, "n": "abç"}]
    ci = {"v": 2, "key": {"n": 1}, "name": "n_1", "collation": {"locale": "en", "strength": 2}}
    e = explain_find(docs, [ID, ci], namespace="t.c", filter={"n": "abc"}, collation={"locale": "en", "strength": 2})
    assert e["executionStats"]["nReturned"] == 2
    assert plan_scan(e)["indexBounds"]["n"][0].startswith("[CollationKey(0x")
    # collated string bounds need the document to confirm: FETCH carries the filter
    assert e["queryPlanner"]["winningPlan"]["filter"] == {"n": {"$eq": "abc"}}


def test_collated_index_still_serves_numbers_without_collation():
    """Collation and index use: an index with a collation supports non-string predicates in a
    query without (or with another) collation."""
    docs = [{"_id": i, "score": i % 3, "category": "x"} for i in range(9)]
    idx = {"v": 2, "key": {"score": 1, "category": 1}, "name": "score_1_category_1", "collation": {"locale": "fr"}}
    e = explain_find(docs, [ID, idx], namespace="t.c", filter={"score": 1})
    assert plan_scan(e)["indexName"] == "score_1_category_1"
    assert e["executionStats"]["nReturned"] == 3

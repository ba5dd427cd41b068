"""The multi-planner: trial, scoring and tie-breaking as plan_ranker.{h,cpp} and multi_plan.cpp do it.

Documentation: https://www.mongodb.com/docs/manual/core/query-plans/ (candidate plans are evaluated
and the one returning results for the least work wins; the others become rejectedPlans).
"""

from __future__ import annotations

from workbook.planner import explain_find
from workbook.planner.plans import CollectionModel, base_score, enumerate_candidates, run_trial, trial_limits
from workbook.planner.query import FindArgs, make_query

ID = {"v": 2, "key": {"_id": 1}, "name": "_id_"}
DOCS = [{"_id": i, "a": i % 50, "b": i % 2, "c": i} for i in range(500)]


def idx(name: str, key: dict) -> dict:
    return {"v": 2, "key": key, "name": name}


def winner_index(e: dict) -> str:
    plan = e["queryPlanner"]["winningPlan"]
    while "indexName" not in plan:
        plan = plan["inputStage"]
    return plan["indexName"]


def test_selective_index_wins_the_race():
    """{a: 7, b: 1}: the a index reaches EOF after 10 keys; the b index still has 250 to go."""
    e = explain_find(DOCS, [ID, idx("b_1", {"b": 1}), idx("a_1", {"a": 1})], namespace="t.c", filter={"a": 7, "b": 1})
    assert winner_index(e) == "a_1"
    assert len(e["queryPlanner"]["rejectedPlans"]) == 1
    # the winner's counters are its full run (trial + rest), not the trial's
    expected = sum(1 for d in DOCS if d["a"] == 7 and d["b"] == 1)
    assert e["executionStats"]["nReturned"] == expected
    assert e["executionStats"]["totalKeysExamined"] == 10


def test_single_candidate_skips_the_trial():
    """With one candidate plan there is nothing to race: rejectedPlans is empty."""
    e = explain_find(DOCS, [ID, idx("a_1", {"a": 1})], namespace="t.c", filter={"a": 7, "b": 1})
    assert e["queryPlanner"]["rejectedPlans"] == []


def test_trial_length_follows_collection_size_and_limit():
    """MultiPlanStage: works = max(10000, 0.3 * numRecords); results = min(limit, 101)."""
    small = CollectionModel(DOCS, [ID])
    assert trial_limits(small, make_query(FindArgs())) == (10000, 101)
    big = CollectionModel([{"_id": i} for i in range(50000)], [ID])
    assert trial_limits(big, make_query(FindArgs(limit=5))) == (15000, 5)


def test_score_rewards_productivity_and_eof():
    """PlanScorer::calculateScore: 1 + advanced/works + bonuses (+1 when the plan hit EOF)."""
    col = CollectionModel(DOCS, [ID, idx("b_1", {"b": 1}), idx("a_1", {"a": 1})])
    candidates = enumerate_candidates(col, make_query(FindArgs({"a": 7, "b": 1})))
    run_trial(candidates, 10000, 101)
    by_index = {c.scan.index.spec.name: c for c in candidates if c.scan}
    a_plan, b_plan = by_index["a_1"], by_index["b_1"]
    assert a_plan.root.is_eof() and not b_plan.root.is_eof()
    assert base_score(a_plan) > 2 > base_score(b_plan) > 1
    assert a_plan.root.advanced == 10 and a_plan.root.works == 11  # a == 7 implies odd, so b == 1


def test_ties_go_to_the_index_with_the_shorter_key_pattern():
    """plan_ranker.cpp getIndexBoundsScore (internalQueryPlanTieBreakingWithIndexHeuristics): equal
    scores and equal documents examined; same point prefix, so the shorter key pattern wins."""
    e = explain_find(
        DOCS, [ID, idx("a_1_c_1", {"a": 1, "c": 1}), idx("a_1", {"a": 1})], namespace="t.c", filter={"a": 7}
    )
    assert winner_index(e) == "a_1"


def test_sort_providing_index_competes_with_a_filtering_one():
    """query_planner.cpp: when no indexed plan provides the sort, a whole-index scan of an index that
    does is added as a candidate; both race."""
    e = explain_find(
        DOCS, [ID, idx("a_1", {"a": 1}), idx("c_1", {"c": 1})], namespace="t.c", filter={"a": 7}, sort={"c": 1}
    )
    names = {winner_index(e)} | {
        (p.get("inputStage", {}).get("inputStage") or p.get("inputStage") or p).get("indexName")
        for p in e["queryPlanner"]["rejectedPlans"]
    }
    assert names == {"a_1", "c_1"}
    assert e["executionStats"]["nReturned"] == 10

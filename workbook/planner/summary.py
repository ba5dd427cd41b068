"""A short, comparable summary of any explain: modelled, or from a real server (find or aggregate,
classic or SBE, including MongoDB 7/8 where the winning plan sits under ``queryPlan``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

_FETCHING = {"FETCH", "COLLSCAN", "IDHACK", "CLUSTERED_IXSCAN", "EXPRESS_CLUSTERED_IXSCAN"}
_INDEX_STAGES = {"IXSCAN", "EXPRESS_IXSCAN", "DISTINCT_SCAN", "COUNT_SCAN", "IDHACK"}


def _stages(node: Any) -> Iterator[Mapping[str, Any]]:
    """Every stage of a plan tree, top-down, whatever the child field is called."""
    if isinstance(node, Mapping):
        if "stage" in node:
            yield node
        for key, value in node.items():
            if key in ("filter", "transformBy", "keyPattern", "indexBounds", "sortPattern", "multiKeyPaths"):
                continue
            if isinstance(value, Mapping | list):
                yield from _stages(value)
    elif isinstance(node, list):
        for item in node:
            yield from _stages(item)


def _winning_plan(query_planner: Mapping[str, Any]) -> Mapping[str, Any]:
    plan = query_planner.get("winningPlan", {})
    if "queryPlan" in plan:  # SBE (MongoDB 7.0+): the stage tree is nested under queryPlan
        plan = plan["queryPlan"]
    if "shards" in plan:
        return {"stage": plan.get("stage"), "inputStages": [_winning_plan(s) for s in plan["shards"]]}
    return plan


def _cursor_parts(explain: Mapping[str, Any]) -> tuple[Mapping[str, Any], Mapping[str, Any], list[Mapping]]:
    if "stages" in explain:
        first = explain["stages"][0]
        cursor = first.get("$cursor", {})
        return cursor.get("queryPlanner", {}), cursor.get("executionStats", {}), list(explain["stages"][1:])
    return explain.get("queryPlanner", {}), explain.get("executionStats", {}), []


def summarize(explain: Mapping[str, Any]) -> dict[str, Any]:
    """Winning index or COLLSCAN, returned/examined counts, covered, in-memory sort, multikey, lookups."""
    query_planner, stats, later = _cursor_parts(explain)
    plan = _winning_plan(query_planner)
    stages = list(_stages(plan))
    names = [s.get("stage") for s in stages]
    indexes: list[str] = []
    for s in stages:
        name = s.get("indexName") or ("_id_" if s.get("stage") == "IDHACK" else None)
        if name and s.get("stage") in _INDEX_STAGES and name not in indexes:
            indexes.append(name)
    lookups = [_lookup_summary(s) for s in later if "$lookup" in s]
    lookups += [
        {
            "from": s.get("foreignCollection"),
            "strategy": s.get("strategy"),
            "indexesUsed": [s["indexName"]] if s.get("indexName") else [],
        }
        for s in stages
        if s.get("stage") == "EQ_LOOKUP"
    ]
    returned = stats.get("nReturned")
    if later and "nReturned" in later[-1]:
        returned = later[-1]["nReturned"]
    docs = stats.get("totalDocsExamined", 0) + sum(lk.get("totalDocsExamined", 0) for lk in lookups)
    keys = stats.get("totalKeysExamined", 0) + sum(lk.get("totalKeysExamined", 0) for lk in lookups)
    scans = [n for n in names if n in ("IXSCAN", "EXPRESS_IXSCAN", "IDHACK", "COLLSCAN", "DISTINCT_SCAN", "COUNT_SCAN")]
    return {
        "plan": scans[0] if scans else (names[-1] if names else None),
        "index": indexes[0] if indexes else None,
        "indexes": indexes,
        "stages": names,
        "nReturned": returned,
        "keysExamined": keys,
        "docsExamined": docs,
        "docsExaminedPerReturned": (docs / returned) if returned else None,
        "covered": bool(indexes) and not any(n in _FETCHING for n in names),
        "inMemorySort": "SORT" in names,
        "multikey": any(bool(s.get("isMultiKey")) for s in stages),
        "lookups": lookups,
        "source": explain.get("modelledBy", "MongoDB server explain"),
    }


def _lookup_summary(stage: Mapping[str, Any]) -> dict[str, Any]:
    spec = stage["$lookup"]
    return {
        "from": spec.get("from"),
        "indexesUsed": list(stage.get("indexesUsed", [])),
        "collectionScans": stage.get("collectionScans"),
        "totalDocsExamined": stage.get("totalDocsExamined", 0),
        "totalKeysExamined": stage.get("totalKeysExamined", 0),
        "nReturned": stage.get("nReturned"),
    }

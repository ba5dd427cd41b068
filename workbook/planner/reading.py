"""Reading any explain document, modelled or from a server (find or aggregate, classic or SBE,
sharded or not): stage names, the plan-tree walk, the SBE and ``$cursor`` unwrapping, the summary.

Everything in the workbench that reads an explain reads it through this module.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

from workbook.planner.labels import MODELLED_FIELD

INDEX_SCANS = frozenset({"IXSCAN", "EXPRESS_IXSCAN", "DISTINCT_SCAN", "COUNT_SCAN", "IDHACK"})
"""Stages that walk a named index (IDHACK walks ``_id_``)."""

CLUSTERED_SCANS = frozenset({"CLUSTERED_IXSCAN", "EXPRESS_CLUSTERED_IXSCAN"})
"""Scans of a clustered collection: the index walked is the collection itself, so documents are read."""

COLLECTION_SCANS = frozenset({"COLLSCAN"})

SCANS = INDEX_SCANS | CLUSTERED_SCANS | COLLECTION_SCANS
"""Leaf stages: where a plan starts reading."""

FETCHING = frozenset({"FETCH", "IDHACK"}) | CLUSTERED_SCANS | COLLECTION_SCANS
"""Stages that read documents: a plan with none of them is covered by its index."""

CHILD_FIELDS = ("inputStage", "outerStage", "innerStage", "thenStage", "elseStage")
"""Fields that hold one input stage (``inputStages`` holds a list: OR, AND_SORTED, SORT_MERGE...)."""

_GOSSIP = ("$clusterTime", "operationTime")


def children(stage: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The input stages of one plan stage, in order."""
    inputs = [stage[k] for k in CHILD_FIELDS if isinstance(stage.get(k), Mapping)]
    return inputs + [s for s in stage.get("inputStages") or [] if isinstance(s, Mapping)]


def walk(stage: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every stage of a plan tree, root first (depth first, inputs in order)."""
    yield stage
    for child in children(stage):
        yield from walk(child)


def is_modelled(explain: Mapping[str, Any]) -> bool:
    """Whether an explain document was produced by the workbench's planner model."""
    return MODELLED_FIELD in explain


def winning_plan(query_planner: Mapping[str, Any]) -> Mapping[str, Any]:
    """The winning plan's stage tree: SBE's ``queryPlan`` unwrapped, shards gathered under one root."""
    plan = query_planner.get("winningPlan") or {}
    if "queryPlan" in plan:  # SBE (MongoDB 7.0+): the stage tree is nested under queryPlan
        plan = plan["queryPlan"]
    if "shards" in plan:
        return {"stage": plan.get("stage"), "inputStages": [winning_plan(s) for s in plan["shards"]]}
    return plan


def find_layer(explain: Mapping[str, Any]) -> tuple[Mapping[str, Any], Mapping[str, Any], list[Mapping[str, Any]]]:
    """(queryPlanner, executionStats, later pipeline stages): an aggregate's ``$cursor`` unwrapped."""
    stages = explain.get("stages")
    if isinstance(stages, list) and stages:
        cursor = stages[0].get("$cursor", {}) if isinstance(stages[0], Mapping) else {}
        return cursor.get("queryPlanner", {}), cursor.get("executionStats", {}), list(stages[1:])
    return explain.get("queryPlanner", {}), explain.get("executionStats", {}), []


def normalise_server_explain(explain: Mapping[str, Any]) -> dict[str, Any]:
    """A server's explain with version differences evened out: SBE's ``{queryPlan, slotBasedPlan}``
    pairs lifted to the classic shape (slot-based plans kept under ``queryPlanner.slotBasedPlans``),
    replica-set gossip removed. The argument is not changed."""
    out = copy.deepcopy(dict(explain))
    for key in _GOSSIP:
        out.pop(key, None)
    _lift_query_plans(out.get("queryPlanner"))
    for stage in out.get("stages") or []:
        cursor = stage.get("$cursor") if isinstance(stage, Mapping) else None
        if isinstance(cursor, dict):
            _lift_query_plans(cursor.get("queryPlanner"))
    return out


def _lift_query_plans(query_planner: Any) -> None:
    if not isinstance(query_planner, dict):
        return
    slot_based: dict[str, Any] = {}
    winning = query_planner.get("winningPlan")
    if isinstance(winning, Mapping) and "queryPlan" in winning:
        query_planner["winningPlan"] = dict(winning["queryPlan"])
        if "slotBasedPlan" in winning:
            slot_based["winningPlan"] = winning["slotBasedPlan"]
    rejected = []
    for position, plan in enumerate(query_planner.get("rejectedPlans") or []):
        if isinstance(plan, Mapping) and "queryPlan" in plan:
            rejected.append(dict(plan["queryPlan"]))
            if "slotBasedPlan" in plan:
                slot_based[f"rejectedPlans.{position}"] = plan["slotBasedPlan"]
        else:
            rejected.append(plan)
    if "rejectedPlans" in query_planner:
        query_planner["rejectedPlans"] = rejected
    if slot_based:
        query_planner["slotBasedPlans"] = slot_based


def index_name(stage: Mapping[str, Any]) -> str | None:
    """The index a scan stage walks (``_id_`` for IDHACK), None for other stages."""
    if stage.get("stage") not in INDEX_SCANS:
        return None
    return str(stage.get("indexName") or ("_id_" if stage.get("stage") == "IDHACK" else "")) or None


def summarize(explain: Mapping[str, Any]) -> dict[str, Any]:
    """Winning index or COLLSCAN, returned/examined counts, covered, in-memory sort, multikey, lookups."""
    query_planner, stats, later = find_layer(getattr(explain, "raw", explain))
    stages = list(walk(winning_plan(query_planner)))
    names = [s.get("stage") for s in stages]
    indexes: list[str] = []
    for s in stages:
        name = index_name(s)
        if name and name not in indexes:
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
    scans = [n for n in names if n in SCANS]
    return {
        "plan": scans[0] if scans else (names[-1] if names else None),
        "index": indexes[0] if indexes else None,
        "indexes": indexes,
        "stages": names,
        "nReturned": returned,
        "keysExamined": keys,
        "docsExamined": docs,
        "docsExaminedPerReturned": (docs / returned) if returned else None,
        "covered": bool(indexes) and not any(n in FETCHING for n in names),
        # MongoDB runs a SORT in the winning plan, and a $sort pipeline stage after the cursor, as a
        # blocking sort: both hold every input row in memory before returning the first.
        "inMemorySort": "SORT" in names or any("$sort" in s for s in later),
        "multikey": any(bool(s.get("isMultiKey")) for s in stages),
        "lookups": lookups,
        "source": explain.get(MODELLED_FIELD, "MongoDB server explain"),
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

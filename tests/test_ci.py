"""The CI workflow that has a real server runs every real-server test on a replica set (transactions need one)."""

from __future__ import annotations

from pathlib import Path

import yaml

WORKFLOW = Path(__file__).resolve().parent.parent / ".github" / "workflows" / "explain-differential.yml"


def test_the_differential_workflow_runs_the_mongodb_tests_on_a_replica_set() -> None:
    job = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["diffcheck"]
    assert "replicaSet=rs0" in job["env"]["MONGODB_URI"]
    runs = "\n".join(step.get("run", "") for step in job["steps"])
    assert "docker compose up -d" in runs  # the repository's compose file: mongod --replSet rs0, then rs.initiate
    assert "pytest -m mongodb" in runs and "services" not in job  # no standalone service container any more


def test_the_semantics_fuzz_runs_in_ci() -> None:
    """Issue 19: the differential fuzz (offline find() against the explain model and the BSON order) is a CI step."""
    job = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["diffcheck"]
    runs = [step.get("run", "") for step in job["steps"]]
    assert any("pytest tests/test_semantics_fuzz.py" in run and "-m mongodb" not in run for run in runs)

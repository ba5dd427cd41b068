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

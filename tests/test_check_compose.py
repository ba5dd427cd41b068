"""`python -m workbook check`, and the docker-compose.yml the README points real-MongoDB users to."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


def check(env_uri: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "MONGODB_URI"}
    if env_uri:
        env["MONGODB_URI"] = env_uri
    return subprocess.run(
        [sys.executable, "-m", "workbook", "check"], capture_output=True, text=True, env=env, timeout=60
    )


def test_check_reports_the_offline_default_and_exits_0():
    result = check(None)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert re.search(r"^python: 3\.\d+", out, re.M) and "pymongo" in out and "mongoeco 4.11.0" in out
    assert "engine: offline default (mongoeco 4.11.0)" in out
    assert "transactions: available (one committed just now)" in out
    assert "database in use: workbench_" in out
    assert out.strip().splitlines()[-1] == "verdict: OK, ready for the course"


def test_check_fails_with_the_fix_on_an_unreachable_server():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = check(f"mongodb://ada:s3cret@127.0.0.1:{port}/")
    assert result.returncode == 1
    assert "verdict: NOT READY" in result.stdout and "docker compose up -d" in result.stdout
    assert "s3cret" not in result.stdout + result.stderr


@pytest.fixture(scope="module")
def compose():
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_runs_the_official_mongo_8_image_as_a_replica_set(compose):
    mongo = compose["services"]["mongo"]
    assert re.fullmatch(r"mongo:8(\.\d+)*", mongo["image"])
    command = mongo["command"]
    assert command[:1] == ["mongod"] and command[command.index("--replSet") + 1] == "rs0"
    assert "27017:27017" in mongo["ports"]
    volume = mongo["volumes"][0].split(":")[0]
    assert volume in compose["volumes"]  # a named volume, not a host folder
    assert "isWritablePrimary" in " ".join(mongo["healthcheck"]["test"])


def test_compose_init_step_initiates_the_same_replica_set_the_readme_names(compose):
    init = compose["services"]["mongo-init"]
    script = " ".join(init["entrypoint"])
    assert "rs.initiate" in script and '_id: "rs0"' in script and "--host mongo" in script
    assert init["depends_on"]["mongo"]["condition"] == "service_started"
    readme = (ROOT / "README.md").read_text()
    assert "mongodb://localhost:27017/?replicaSet=rs0" in readme

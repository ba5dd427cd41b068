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


# --- the `sharded` profile: structure only, since there is no Docker engine on the test machines ---

SHARDED_SERVERS = {"cfg": "cfgrs", "shard1": "shard1rs", "shard2": "shard2rs"}


def test_compose_file_is_valid_against_the_compose_specification(compose):
    # tests/data/compose-spec.json is schema/compose-spec.json of compose-spec/compose-spec
    # (commit 170098ba07d9f53c383a41bfd4c5166b0a4529a6, Apache-2.0): what `docker compose config` checks.
    import json

    import jsonschema

    validator = jsonschema.Draft7Validator(json.loads((ROOT / "tests" / "data" / "compose-spec.json").read_text()))
    assert list(validator.iter_errors(compose)) == []
    broken = {**compose, "services": {**compose["services"], "mongos": {**compose["services"]["mongos"]}}}
    broken["services"]["mongos"]["depends_on"] = {"cfg": {"condition": "service_ready"}}
    assert list(validator.iter_errors(broken))  # the schema does catch a wrong condition


def test_the_default_up_starts_only_the_single_node_replica_set(compose):
    default = {name for name, service in compose["services"].items() if not service.get("profiles")}
    assert default == {"mongo", "mongo-init"}
    sharded = {name for name, service in compose["services"].items() if "sharded" in service.get("profiles", [])}
    assert sharded == {*SHARDED_SERVERS, *(f"{name}-init" for name in SHARDED_SERVERS), "mongos", "sharded-init"}


def test_every_sharded_service_runs_the_official_mongo_image(compose):
    for name, service in compose["services"].items():
        if "workshop" in service.get("profiles", []):
            continue  # the hub and the learner image: tests/test_hub_deploy.py
        assert re.fullmatch(r"mongo:8(\.\d+)*", service["image"]), name


def option(command: list[str], flag: str) -> str:
    return command[command.index(flag) + 1]


def test_each_sharded_server_has_a_role_a_replica_set_a_healthcheck_and_a_volume(compose):
    services = compose["services"]
    assert "--configsvr" in services["cfg"]["command"]
    for name, replica_set in SHARDED_SERVERS.items():
        server = services[name]
        command = server["command"]
        assert command[0] == "mongod" and option(command, "--replSet") == replica_set
        assert name == "cfg" or "--shardsvr" in command
        port = option(command, "--port")
        probe = " ".join(server["healthcheck"]["test"])
        assert "isWritablePrimary" in probe and f"--port {port}" in probe, name
        assert server["volumes"][0].split(":")[0] in compose["volumes"]
        assert "ports" not in server  # only the router is published on the host


def test_each_init_step_initiates_its_servers_replica_set_after_the_server_started(compose):
    services = compose["services"]
    for name, replica_set in SHARDED_SERVERS.items():
        init = services[f"{name}-init"]
        script = " ".join(init["entrypoint"])
        port = option(services[name]["command"], "--port")
        assert init["depends_on"] == {name: {"condition": "service_started"}}
        assert f"--host {name} --port {port}" in script
        assert f'rs.initiate({{_id: "{replica_set}"' in script and f'host: "{name}:{port}"' in script
        assert ("configsvr: true" in script) == (name == "cfg")
        assert init["restart"] == "no"


def test_the_router_waits_for_the_config_server_and_adds_both_shards_once_all_are_healthy(compose):
    services = compose["services"]
    mongos = services["mongos"]
    command = mongos["command"]
    cfg_port = option(services["cfg"]["command"], "--port")
    assert command[0] == "mongos" and option(command, "--configdb") == f"cfgrs/cfg:{cfg_port}"
    assert mongos["depends_on"] == {"cfg": {"condition": "service_healthy"}}
    assert "ping" in " ".join(mongos["healthcheck"]["test"])
    init = services["sharded-init"]
    assert init["depends_on"] == {name: {"condition": "service_healthy"} for name in ("mongos", "shard1", "shard2")}
    script = " ".join(init["entrypoint"])
    assert "--host mongos --port 27017" in script and "sh.addShard" in script
    for name in ("shard1", "shard2"):
        port = option(services[name]["command"], "--port")
        assert f'"{SHARDED_SERVERS[name]}/{name}:{port}"' in script


def test_the_router_is_published_on_its_own_host_port_and_the_readme_says_how_to_start_it(compose):
    published = [port.split(":") for service in compose["services"].values() for port in service.get("ports", [])]
    host_ports = [host for host, _ in published]
    assert len(host_ports) == len(set(host_ports))  # the default and the sharded profile can run side by side
    assert ["27030", "27017"] in published
    readme = (ROOT / "README.md").read_text()
    assert "docker compose --profile sharded up -d" in readme
    assert "mongodb://localhost:27030/" in readme

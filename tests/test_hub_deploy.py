"""The workshop deployments: the compose `workshop` profile, the learner Dockerfile, the hub config and
the Zero to JupyterHub values. No Docker engine or Kubernetes runs on the test machines, so each file is
checked against the schema its tool checks (what `docker compose --profile workshop config` and
`helm install` validate), and against what the course needs of it."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"


@pytest.fixture(scope="module")
def compose():
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


@pytest.fixture(scope="module")
def values():
    return yaml.safe_load((ROOT / "deploy" / "values.yaml").read_text())


def workshop_view(compose: dict) -> dict:
    """What `docker compose --profile workshop config` keeps: the services without a profile and the workshop's."""
    services = {
        name: service
        for name, service in compose["services"].items()
        if not service.get("profiles") or "workshop" in service["profiles"]
    }
    return {**compose, "services": services}


def test_the_workshop_profile_is_valid_against_the_compose_specification(compose):
    # tests/data/compose-spec.json: see tests/test_check_compose.py for its source.
    validator = jsonschema.Draft7Validator(json.loads((DATA / "compose-spec.json").read_text()))
    view = workshop_view(compose)
    assert {"mongo", "mongo-init", "hub", "learner-image"} <= set(view["services"])
    assert list(validator.iter_errors(view)) == []
    broken = json.loads(json.dumps(view))
    broken["services"]["hub"]["depends_on"]["mongo"]["condition"] = "service_up"
    assert list(validator.iter_errors(broken))  # the schema catches a wrong condition here too


def test_every_service_that_depends_on_another_names_one_in_the_same_view(compose):
    view = workshop_view(compose)
    for name, service in view["services"].items():
        for needed in service.get("depends_on", {}):
            assert needed in view["services"], (name, needed)


def test_the_hub_spawns_the_image_the_profile_builds_on_the_network_the_file_names(compose):
    hub = compose["services"]["hub"]
    learner = compose["services"]["learner-image"]
    assert learner["build"]["dockerfile"] == "Dockerfile" and (ROOT / "Dockerfile").is_file()
    assert hub["environment"]["LEARNER_IMAGE"] == learner["image"]
    assert hub["environment"]["DOCKER_NETWORK_NAME"] == compose["networks"]["default"]["name"]
    assert hub["depends_on"]["mongo"] == {"condition": "service_healthy"}
    assert hub["depends_on"]["learner-image"] == {"condition": "service_completed_successfully"}
    assert "/var/run/docker.sock:/var/run/docker.sock" in hub["volumes"]
    assert hub["environment"]["WORKSHOP_MONGODB_URI"].startswith("mongodb://mongo:27017/")
    assert "${WORKSHOP_PASSWORD:?" in hub["environment"]["WORKSHOP_PASSWORD"]  # no default password
    assert "8000:8000" in hub["ports"]


def test_the_learner_image_installs_the_pinned_package_and_the_course_and_runs_the_singleuser_server():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.13", dockerfile, re.M)
    assert "pip install '.[lab,hub]'" in dockerfile
    assert re.search(r"^COPY .*notebooks ", dockerfile, re.M)
    assert '"jupyterhub-singleuser"' in dockerfile
    hub_dockerfile = (ROOT / "deploy" / "hub.Dockerfile").read_text()
    pins = dict(re.findall(r"'([a-z-]+)==([\d.]+)'", hub_dockerfile))
    pyproject = (ROOT / "pyproject.toml").read_text()
    for name in ("jupyterhub", "jupyterhub-idle-culler"):
        assert f'"{name}=={pins[name]}"' in pyproject, name  # the hub runs what the hub extra pins


def load_config(path: Path, env: dict[str, str], monkeypatch) -> object:
    """Run a jupyterhub_config.py the way JupyterHub does, with traitlets' Config as `c`."""
    from traitlets.config import Config

    for key, value in env.items():
        monkeypatch.setenv(key, value)
    config = Config()
    source = path.read_text()
    ast.parse(source)
    exec(compile(source, str(path), "exec"), {"get_config": lambda: config, "__file__": str(path)})
    return config


class FakeSpawner:
    class user:
        name = "zoë"


def test_the_hub_config_gives_each_learner_their_name_and_the_deployment_s_server(monkeypatch):
    config = load_config(ROOT / "deploy" / "jupyterhub_config.py", {"WORKSHOP_PASSWORD": "a-long-secret"}, monkeypatch)
    assert config.JupyterHub.authenticator_class == "shared-password"
    assert config.SharedPasswordAuthenticator.user_password == "a-long-secret"
    assert config.JupyterHub.spawner_class == "dockerspawner.DockerSpawner"
    environment = config.Spawner.environment
    assert environment["WORKBOOK_LEARNER"](FakeSpawner()) == "zoë"
    assert environment["MONGODB_URI"] == "mongodb://mongo:27017/?directConnection=true"
    culler = config.JupyterHub.services[0]
    assert culler["command"][:3] == ["python3", "-m", "jupyterhub_idle_culler"]
    role = config.JupyterHub.load_roles[0]
    assert role["services"] == [culler["name"]] and "delete:servers" in role["scopes"]


def test_the_values_are_valid_against_the_zero_to_jupyterhub_chart_schema(values):
    # tests/data/z2jh-values.schema.json: jupyterhub/values.schema.yaml of jupyterhub/zero-to-jupyterhub-k8s
    # (commit 48ea50e34daddde55d76e30df6ecd47e4abd4d8e, 4.3.2-226-g48ea50e3, BSD-3-Clause), with the
    # `description` keys dropped as the chart's tools/generate-json-schema.py does for the packaged
    # values.schema.json that `helm install` validates against.
    # Helm validates the chart's defaults merged with ours: tests/data/z2jh-default-values.yaml is that
    # commit's jupyterhub/values.yaml.
    schema = json.loads((DATA / "z2jh-values.schema.json").read_text())
    defaults = yaml.safe_load((DATA / "z2jh-default-values.yaml").read_text())
    validator = jsonschema.Draft7Validator(schema)
    assert list(validator.iter_errors(helm_merge(defaults, values))) == []
    broken = json.loads(json.dumps(values))
    broken["singleuser"]["storage"]["type"] = "nfs"
    assert list(validator.iter_errors(helm_merge(defaults, broken)))  # a storage type the chart lacks
    broken = json.loads(json.dumps(values))
    broken["cull"]["timeout"] = "an hour"
    assert list(validator.iter_errors(helm_merge(defaults, broken)))
    broken = json.loads(json.dumps(values))
    broken["singleuser"]["extraEnvironment"] = broken["singleuser"].pop("extraEnv")
    assert list(validator.iter_errors(helm_merge(defaults, broken)))  # a misspelt key is caught


def helm_merge(defaults: dict, overrides: dict) -> dict:
    """Helm's merge of a values file over the chart's values: maps merge key by key, the rest replaces."""
    merged = dict(defaults)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = helm_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def test_the_values_cull_idle_servers_and_set_the_learner_s_server_and_name(values):
    assert values["cull"]["enabled"] is True
    assert values["singleuser"]["extraEnv"]["MONGODB_URI"].startswith("mongodb://")
    assert "WORKBOOK_LEARNER" in values["hub"]["extraConfig"]["workbook-learner"]
    assert values["hub"]["config"]["JupyterHub"]["authenticator_class"] == "shared-password"


def test_the_class_mongod_keeps_room_for_the_learners():
    """The learners-per-machine figure reserves a fixed share for the class's MongoDB: its cache must be capped
    below that reserve in the compose file, or mongod would take half of the machine's memory."""

    from workbook.dev.bench import CLASS_SERVER_RESERVE_BYTES

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    command = compose["services"]["mongo"]["command"]
    cache_gb = float(command[command.index("--wiredTigerCacheSizeGB") + 1])
    assert 0 < cache_gb * 1e9 < CLASS_SERVER_RESERVE_BYTES

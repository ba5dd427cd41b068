"""``python -m workbook doctor``: against a URI, JSON for scripts, and an exit code for CI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pymongo.database import Database

import workbook
from workbook.__main__ import main
from workbook.offline import offline_server

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def crafted() -> Database:
    """A learner database with one unbounded array (a warning) and nothing critical."""
    db = workbook.connect(database="doctor_cli", quiet=True)
    db.client.drop_database(db.name)
    db.users.insert_many([{"_id": "star", "followers": list(range(300))}, {"_id": "quiet", "followers": [1]}])
    yield db
    db.client.drop_database(db.name)


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    code = main(list(argv))
    return code, json.loads(capsys.readouterr().out)


def test_json_report_and_exit_code_follow_fail_on(crafted: Database, capsys: pytest.CaptureFixture[str]) -> None:
    uri = offline_server().uri
    code, report = run_json(capsys, "doctor", "--uri", uri, "--database", crafted.name, "--json")
    assert code == 1
    assert report["database"] == crafted.name and report["complete"] is True
    (finding,) = report["findings"]
    assert finding["anti_pattern"] == "unbounded_arrays" and finding["evidence"]["max_elements"] == 300
    code, _ = run_json(capsys, "doctor", "--uri", uri, "--database", crafted.name, "--json", "--fail-on", "critical")
    assert code == 0
    # --uri before the subcommand works too, and a short name is found inside the learner's namespace.
    code, report = run_json(capsys, "--uri", uri, "doctor", "--database", "doctor_cli", "--json")
    assert code == 1 and report["database"] == crafted.name

    crafted.users.update_one({"_id": "star"}, {"$set": {"followers": [1, 2, 3]}})
    code, report = run_json(capsys, "doctor", "--uri", uri, "--database", crafted.name, "--json", "--fail-on", "info")
    assert code == 0 and report["findings"] == []


def test_text_report_and_errors(crafted: Database, capsys: pytest.CaptureFixture[str]) -> None:
    uri = offline_server().uri
    assert main(["doctor", "--uri", uri, "--database", crafted.name]) == 1
    out = capsys.readouterr().out
    assert "[warning] Unbounded arrays · users.followers" in out and "$slice" in out
    assert main(["doctor", "--uri", uri, "--database", "no_such_db_here"]) == 2
    assert "No database 'no_such_db_here'" in capsys.readouterr().err
    assert main(["doctor", "--uri", uri]) == 2  # this URI names no database
    assert "--database" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["doctor", "--fail-on", "severe"])


def test_cli_in_its_own_process_against_mongodb_uri(crafted: Database) -> None:
    env = {**os.environ, "MONGODB_URI": offline_server().uri, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "workbook", "doctor", "--database", crafted.name, "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["findings"][0]["where"] == "users.followers"


def test_a_course_database_is_examined_with_its_workload(capsys: pytest.CaptureFixture[str]) -> None:
    loaded = workbook.load("followers", "referenced", scale="tiny", progress=False)
    try:
        uri = offline_server().uri
        code, report = run_json(capsys, "doctor", "--uri", uri, "--database", loaded.db.name, "--json")
        assert code == 1  # profile reads users and follows by the same key on every call
        assert [f["anti_pattern"] for f in report["findings"]] == ["separated_data"]
        assert any(note.startswith("followers.profile (1500/s)") for note in report["notes"])
    finally:
        loaded.db.client.drop_database(loaded.db.name)


# --- issue 24: an instructor runs the doctor on a learner's database


@pytest.fixture
def learners_database() -> Database:
    """A store in a database outside the workbench's namespace (a learner's own server database)."""
    own = workbook.connect(database="doctor_src", quiet=True)
    workbook.load("store", "hybrid", own, scale="tiny", progress=False)
    foreign = own.client["alice_shop"]
    own.client.drop_database(foreign.name)
    for name in own.list_collection_names():
        documents = list(own[name].find())
        if documents:
            foreign[name].insert_many(documents)
    own.client.drop_database(own.name)
    yield foreign
    foreign.client.drop_database(foreign.name)


def test_the_doctor_finishes_read_only_on_a_database_outside_the_namespace(
    learners_database: Database, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.conftest import fingerprint

    before = fingerprint(learners_database.client, learners_database.name)
    code, report = run_json(
        capsys,
        "doctor",
        "--uri",
        offline_server().uri,
        "--database",
        learners_database.name,
        "--json",
        "--workload",
        "store",
        "--fail-on",
        "critical",
    )
    assert code in (0, 1), "a report, not an error (exit code 2)"
    assert report["complete"] is True
    assert report["notes"][-1].startswith("read-only: alice_shop is outside the workbench's own databases")
    assert any("call(s) observed" in note for note in report["notes"]), "the workload's hot reads ran"
    assert fingerprint(learners_database.client, learners_database.name) == before, "nothing was written"


def test_a_database_that_does_not_exist_exits_non_zero_naming_those_that_do(
    crafted: Database, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["doctor", "--uri", offline_server().uri, "--database", "no_such_database"])
    err = capsys.readouterr().err
    assert code == 2
    assert "No database 'no_such_database'" in err and crafted.name in err

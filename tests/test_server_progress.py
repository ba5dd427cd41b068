"""Quiz progress on the shared server (workbook/quiz/server_progress.py).

The server here is the offline engine served over the wire by one host process (no mongod runs on
the test machines); the writers are separate processes that reach it by ``MONGODB_URI``, as two
kernels of one learner on a workshop hub reach the class's MongoDB.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pymongo import MongoClient

from workbook.namespace import learner_name
from workbook.quiz import server_progress

ROOT = Path(__file__).resolve().parent.parent
HOST = (
    "import sys\n"
    "from workbook.offline import offline_server\n"
    "print(offline_server().uri, flush=True)\n"
    "sys.stdin.read()\n"  # serve until the test closes stdin
)
WRITER = (
    "import sys\n"
    "from workbook.quiz import server_progress\n"
    "for attempt in range(int(sys.argv[1])):\n"
    "    server_progress.record('reading-3', attempt % 5 == 4, learner='zoë')\n"
)


@pytest.fixture(scope="module")
def server_uri() -> Iterator[str]:
    env = {key: value for key, value in os.environ.items() if key != "MONGODB_URI"}
    host = subprocess.Popen(
        [sys.executable, "-c", HOST], cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert host.stdout is not None
        uri = host.stdout.readline().strip()
        assert uri.startswith("mongodb://"), uri
        yield uri
    finally:
        assert host.stdin is not None
        host.stdin.close()
        host.wait(timeout=30)


@pytest.fixture
def coll(server_uri: str):
    client: MongoClient = MongoClient(server_uri, serverSelectionTimeoutMS=10_000)
    target = client[server_progress.DATABASE][server_progress.COLLECTION]
    target.delete_many({})
    yield target
    target.delete_many({})
    client.close()


def test_two_kernels_of_one_learner_writing_at_once_lose_no_attempt(server_uri, coll):
    attempts = 60
    env = {**os.environ, "MONGODB_URI": server_uri}
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(attempts)], cwd=ROOT, env=env, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    for writer in writers:
        _, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err.decode()
    documents = list(coll.find({}))
    assert len(documents) == 1  # one document per learner and question
    document = documents[0]
    assert document["_id"] == {"learner": learner_name("zoë"), "question": "reading-3"}
    assert document["attempts"] == 2 * attempts and len(document["log"]) == 2 * attempts
    assert document["correct"] == 2 * (attempts // 5)
    rows = server_progress.learner_rows(coll)
    assert rows.to_dict("records")[0]["solved_at_attempt"] in (5, 6, 7, 8, 9)  # the first correct, in server order


def test_class_rows_and_import_of_offline_files(coll, tmp_path):
    server_progress.record("nb00-2", False, learner="ana", coll=coll)
    server_progress.record("nb00-2", True, learner="ana", coll=coll)
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "li--c16667.json").write_text(
        json.dumps(
            {
                "format": 1,
                "learner": "李",
                "questions": {"nb00-2": {"attempts": 3, "correct": 1, "solved": True, "solved_at_attempt": 3}},
            }
        )
    )
    assert server_progress.import_files(folder, coll) == 3
    rows = server_progress.learner_rows(coll).set_index("learner")
    assert rows.loc["ana", "attempts"] == 2 and rows.loc["ana", "solved_at_attempt"] == 2
    assert rows.loc["li--c16667", "attempts"] == 3 and rows.loc["li--c16667", "solved_at_attempt"] == 3
    assert server_progress.learner_questions("ana", coll)["nb00-2"]["solved"] is True
    # Nothing was written outside the workbench's own progress namespace.
    names = coll.database.client.list_database_names()
    assert server_progress.DATABASE in names
    assert all(name.startswith("workbench_") or name in ("admin", "config", "local") for name in names)


def test_without_a_server_the_store_says_so_with_the_fix(monkeypatch):
    monkeypatch.delenv("MONGODB_URI", raising=False)
    from workbook.errors import WorkbookError

    with pytest.raises(WorkbookError, match="MONGODB_URI"):
        server_progress.collection()


def test_class_report_reads_the_server_live_and_progress_import_fills_it(server_uri, coll, tmp_path):
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "ana.json").write_text(
        json.dumps({"format": 1, "questions": {"nb01-1": {"attempts": 2, "correct": 1, "solved": True}}})
    )
    env = {**os.environ, "MONGODB_URI": server_uri}
    run = [sys.executable, "-m", "workbook"]
    imported = subprocess.run(
        [*run, "progress-import", str(folder)], env=env, capture_output=True, text=True, timeout=120
    )
    assert imported.returncode == 0 and "2 attempts added" in imported.stdout, imported.stdout + imported.stderr
    report = subprocess.run([*run, "class-report", "--server"], env=env, capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    line = next(line for line in report.stdout.splitlines() if line.strip().startswith("nb01-1"))
    assert line.split()[1:4] == ["1", "1", "1"]  # learners, attempted, solved


def test_an_unreachable_server_is_a_workbook_error_with_the_fix():
    from workbook.errors import WorkbookError

    client: MongoClient = MongoClient("mongodb://127.0.0.1:9/", serverSelectionTimeoutMS=300)
    with pytest.raises(WorkbookError, match="unset MONGODB_URI"):
        server_progress.record("nb00-1", True, learner="ana", coll=client[server_progress.DATABASE]["attempts"])

"""A workshop of 30 on one shared server, in threads: everyone's data and progress stay theirs.

Uses only ``connect()``, a small insert, progress recording and ``reset()``, so it holds whatever
``load()`` and ``run()`` become. The names include ones that used to collide (``Zoë``/``Zoé``,
Cyrillic and CJK names that all became ``learner``).
"""

from __future__ import annotations

import inspect
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

import workbook
from tests.conftest import fingerprint
from workbook import namespace
from workbook.quiz.progress import Progress

CLASS = [
    "Иван", "Мария", "Дмитрий", "日本語", "山田太郎", "李小龙", "김민준", "محمد", "Σωκράτης", "Zoë",
    "Zoé", "Zoe", "José", "Jose", "Ørsted", "Nguyễn Văn A", "Ada Lovelace", "Grace Hopper", "alan",
    "Barbara Liskov", "Đorđe", "Ñandú", "łukasz", "İsmail", "straße", "bob", "bob-x", "😀", "🙂",
    "Ada Lovelace Byron King, Countess of Lovelace",
]  # fmt: skip

SCRATCH_DOCS, KEEP_DOCS, ATTEMPTS = 3, 5, 4
OTHERS_DB = "course_simulation_foreign"


def reset_as(name: str) -> list[str]:
    """``reset()`` for one learner of the class (threads share one environment, so by argument).

    Resetting a learner other than ``WORKBOOK_LEARNER`` may need ``force=True`` (issue 15 item 3).
    """
    force = {"force": True} if "force" in inspect.signature(workbook.reset).parameters else {}
    return workbook.reset(learner=name, **force)


def learner_day(name: str, started: threading.Barrier, reset_done: threading.Barrier) -> dict[str, Any]:
    """One learner: write, answer, reset, write again, answer again; returns what they saw."""
    client = workbook.connect(quiet=True).client  # the one shared client, as every notebook gets
    scratch = client[namespace.database_name("scratch", learner=name)]
    scratch.things.insert_many([{"n": i, "owner": name} for i in range(SCRATCH_DOCS)])
    progress = Progress.load(name)
    for attempt in range(ATTEMPTS // 2):
        progress.record("sim-q", attempt == 1)
    started.wait()
    scratch_count = scratch.things.count_documents({})
    dropped = reset_as(name)
    reset_done.wait()
    keep = client[namespace.database_name("keep", learner=name)]
    keep.things.insert_many([{"n": i, "owner": name} for i in range(KEEP_DOCS)])
    for _ in range(ATTEMPTS - ATTEMPTS // 2):
        Progress.load(name).record("sim-q", False)
    return {"scratch_count": scratch_count, "dropped": dropped}


@pytest.fixture
def progress_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBOOK_PROGRESS_DIR", str(tmp_path / "progress"))
    monkeypatch.delenv("MONGODB_URI", raising=False)
    return tmp_path / "progress"


def test_thirty_learners_on_one_server_keep_their_own_data_and_progress(progress_dir):
    assert len(CLASS) == 30
    client = workbook.connect(quiet=True).client
    client.drop_database(OTHERS_DB)
    client[OTHERS_DB].notes.insert_many([{"_id": i, "text": "someone else's"} for i in range(20)])
    others_before = fingerprint(client, OTHERS_DB)
    keys = {name: namespace.learner_name(name) for name in CLASS}
    assert len(set(keys.values())) == 30

    started, reset_done = threading.Barrier(30, timeout=120), threading.Barrier(30, timeout=120)
    clock = time.monotonic()
    with ThreadPoolExecutor(max_workers=30) as pool:
        futures = {name: pool.submit(learner_day, name, started, reset_done) for name in CLASS}
        seen = {name: future.result(timeout=300) for name, future in futures.items()}
    elapsed = time.monotonic() - clock

    try:
        names = set(client.list_database_names())
        for name in CLASS:
            scratch = namespace.database_name("scratch", learner=name)
            keep = namespace.database_name("keep", learner=name)
            assert seen[name]["scratch_count"] == SCRATCH_DOCS, f"{name} shared a database"
            assert seen[name]["dropped"] == [scratch], f"{name}'s reset dropped {seen[name]['dropped']}"
            assert scratch not in names
            owners = client[keep].things.distinct("owner")
            assert owners == [name] and client[keep].things.count_documents({}) == KEEP_DOCS
            entry = Progress.load(name).questions["sim-q"]
            assert entry["attempts"] == ATTEMPTS and entry["correct"] == 1, name
        files = sorted(path.name for path in progress_dir.glob("*.json"))
        assert files == sorted(f"{key}.json" for key in keys.values())
        assert fingerprint(client, OTHERS_DB) == others_before
        print(f"30 learners: write, answer, reset, write, answer in {elapsed:.1f} s on the offline default")
    finally:
        for name in CLASS:
            reset_as(name)
        client.drop_database(OTHERS_DB)

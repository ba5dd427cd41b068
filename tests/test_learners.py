"""Learner keys: every name gets its own databases and progress file, and every shape fits in 63 bytes."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from workbook import check, namespace
from workbook.quiz.progress import Progress

# Names a workshop of 30 will bring: accents, Cyrillic, CJK, case and separator variants, long ones.
NAMES = [
    "Иван",
    "Мария",
    "日本語",
    "Zoë",
    "Zoé",
    "Zoe",
    "Ørsted",
    "Orsted",
    "İsmail",
    "Ismail",
    "José",
    "Jose",
    "Ada Lovelace",
    "Ada Lovelace Byron King, Countess of Lovelace",  # 45 characters
    "Σωκράτης",
    "محمد",
    "李小龙",
    "김민준",
    "Nguyễn Văn A",
    "Nguyen Van A",
    "Đorđe",
    "Ñandú",
    "straße",
    "łukasz",
    "a" * 24,
    "a" * 25,
    "bob",
    "bob-x",
    "---",
    "-",
    "_",
    "..",
    "😀",
]


def test_every_name_gets_its_own_valid_key():
    keys = [namespace.learner_key(name) for name in NAMES]
    assert len(set(keys)) == len(NAMES), sorted(keys)
    for key in keys:
        assert re.fullmatch(r"[a-z0-9]+(-{1,2}[a-z0-9]+)*", key), key
        assert len(key.encode()) <= namespace.MAX_LEARNER_BYTES


@pytest.mark.parametrize(("a", "b"), [("Zoë", "Zoé"), ("Иван", "Мария"), ("日本語", "Мария"), ("Zoë", "Zoe")])
def test_names_that_used_to_collide_do_not(a, b):
    assert namespace.learner_database(a) != namespace.learner_database(b)
    assert not namespace.is_own_database(namespace.database_name("store_hybrid", learner=b), learner=a)
    assert Progress.load(a).path != Progress.load(b).path


def test_keys_read_well_where_they_can():
    assert namespace.learner_key("Иван").startswith("ivan--")
    assert namespace.learner_key("Zoë").startswith("zoe--")
    assert namespace.learner_key("Ada Lovelace") == namespace.learner_key("ada_lovelace") == "ada-lovelace"


def test_keys_are_stable_across_processes():
    script = "from workbook.namespace import learner_key; print(' '.join(learner_key(n) for n in ['Zoë', '日本語']))"
    outputs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
        outputs.add(done.stdout.strip())
    assert outputs == {f"{namespace.learner_key('Zoë')} {namespace.learner_key('日本語')}"}


def test_a_45_character_name_can_load_every_shape():
    name = "Ada Lovelace Byron King, Countess of Lovelace"
    assert len(name) == 45
    for short in check.short_database_names():
        assert len(namespace.database_name(short, learner=name).encode()) <= 63
    report = check.CheckReport()
    check.check_learner(report, name)
    assert report.ok, report.problems
    assert any(namespace.learner_key(name) in line for line in report.lines)


def test_check_fails_when_a_name_cannot_load_every_shape(monkeypatch):
    monkeypatch.setattr(namespace, "MAX_LEARNER_BYTES", 60)
    report = check.CheckReport()
    check.check_learner(report, "x" * 45)
    assert not report.ok
    assert "cannot load every shape" in report.problems[0] and "followers_referenced" in report.problems[0]


def test_check_reports_the_key_the_learner_gets(monkeypatch, capsys):
    monkeypatch.setenv("WORKBOOK_LEARNER", "Мария")
    monkeypatch.delenv("MONGODB_URI", raising=False)
    assert check.main() == 0
    shown = capsys.readouterr().out
    assert f"learner: '{namespace.learner_key('Мария')}'" in shown


def test_design_task_databases_fit_for_every_learner():
    from workbook.quiz.bank import all_questions

    longest_key = namespace.learner_key("x" * 80)
    for question in all_questions().values():
        if question["type"] == "design":
            database = question.get("params", {}).get("database", "quiz")
            assert database in check.short_database_names()
            namespace.database_name(database, learner=longest_key)
            for shape in check.shape_suffixes():  # a task may load a shape inside its database
                namespace.shape_database_name(
                    *shape.split("_"), within=f"workbench_{longest_key}_{database}", learner=longest_key
                )


def test_a_key_is_its_own_key():
    """Functions pass keys on as ``learner=``: the progress file and databases must not move."""
    for name in NAMES:
        key = namespace.learner_key(name)
        assert namespace.learner_key(key) == key
        assert Progress.load(key).path == Progress.load(name).path

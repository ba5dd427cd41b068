"""Namespacing: the workbench writes only to workbench_<learner>* and reset() drops only those."""

from __future__ import annotations

import pytest

import workbook
from tests.conftest import FOREIGN_DB, fingerprint
from workbook import namespace
from workbook.errors import NamespaceError


def test_learner_from_environment(monkeypatch):
    monkeypatch.setenv("WORKBOOK_LEARNER", "Grace Hopper")
    assert namespace.database_name("store") == "workbench_grace-hopper_store"


def test_learner_default_is_os_user(monkeypatch):
    monkeypatch.delenv("WORKBOOK_LEARNER", raising=False)
    monkeypatch.setattr(namespace, "_os_user", lambda: "ada_99")
    assert namespace.learner_database() == "workbench_ada-99"


@pytest.mark.parametrize("bad", ["admin.x", "a b", "x" * 80, "workbench_someone-else"])
def test_bad_database_names_are_refused_with_a_fix(bad):
    with pytest.raises(NamespaceError, match="Fix:"):
        namespace.database_name(bad, learner="ada")


def test_learners_do_not_collide():
    assert not namespace.is_own_database("workbench_bob-x", learner="bob")
    assert namespace.is_own_database("workbench_bob_x", learner="bob")
    assert not namespace.is_own_database("workbench_bobby", learner="bob")


def test_reset_drops_only_this_learners_databases(engine, monkeypatch):
    mine = workbook.connect(engine, database="reset_me", quiet=True)
    mine.things.insert_one({"_id": "x"})
    monkeypatch.setenv("WORKBOOK_LEARNER", "someone-else")
    theirs = workbook.connect(engine, quiet=True)
    theirs.things.insert_one({"_id": "y"})
    client = theirs.client
    foreign_before = fingerprint(client, FOREIGN_DB)
    monkeypatch.setenv("WORKBOOK_LEARNER", "pytest")

    dropped = workbook.reset(engine)

    assert "workbench_pytest_reset_me" in dropped
    assert all(name == "workbench_pytest" or name.startswith("workbench_pytest_") for name in dropped)
    names = client.list_database_names()
    assert "workbench_pytest_reset_me" not in names
    assert "workbench_someone-else" in names
    assert fingerprint(client, FOREIGN_DB) == foreign_before
    client.drop_database("workbench_someone-else")


def test_cli_reset_reports_what_it_dropped(monkeypatch, capsys):
    from workbook.__main__ import main

    monkeypatch.delenv("MONGODB_URI", raising=False)
    workbook.connect(database="cli", quiet=True).x.insert_one({"_id": 1})
    assert main(["reset"]) == 0
    assert "workbench_pytest_cli" in capsys.readouterr().out

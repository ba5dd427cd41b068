"""The offline server is this process's alone: credentials generated per process, learner code unaware."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from pymongo import MongoClient
from pymongo.errors import OperationFailure

from workbook.offline import offline_server


def test_connect_just_works_without_credentials_in_learner_code(monkeypatch):
    import workbook

    monkeypatch.delenv("MONGODB_URI", raising=False)
    db = workbook.connect(database="sec", quiet=True)
    db.notes.insert_one({"_id": "n", "text": "mine"})
    assert db.notes.find_one({"_id": "n"})["text"] == "mine"
    db.client.drop_database(db.name)


def test_a_client_without_credentials_is_refused():
    server = offline_server()
    with MongoClient(server.address_uri, serverSelectionTimeoutMS=3000) as stranger:
        with pytest.raises(OperationFailure) as caught:
            stranger.workbench_pytest_x.notes.insert_one({"stolen": False})
        assert caught.value.code == 13
        with pytest.raises(OperationFailure):
            stranger.list_database_names()
        with pytest.raises(OperationFailure):
            stranger.workbench_pytest_x.command("collMod", "notes", validator={})


def test_a_wrong_password_is_refused():
    server = offline_server()
    wrong = f"mongodb://workbook:guess@{server.host}:{server.port}/?directConnection=true&authSource=admin"
    with MongoClient(wrong, serverSelectionTimeoutMS=3000) as stranger, pytest.raises(OperationFailure):
        stranger.admin.command("listDatabases")


def test_another_process_cannot_read_this_processes_data(monkeypatch):
    import workbook

    monkeypatch.delenv("MONGODB_URI", raising=False)
    db = workbook.connect(database="sec2", quiet=True)
    db.secrets.insert_one({"_id": 1, "answer": 42})
    server = offline_server()
    script = textwrap.dedent(
        f"""
        from pymongo import MongoClient
        from pymongo.errors import OperationFailure
        client = MongoClient("{server.address_uri}", serverSelectionTimeoutMS=3000)
        try:
            print(client["{db.name}"].secrets.find_one())
        except OperationFailure as error:
            print("refused", error.code)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "refused 13"
    db.client.drop_database(db.name)


def test_the_password_is_random_per_server_and_never_shown(monkeypatch):
    import workbook
    from workbook.connection import banner, engine_info

    monkeypatch.delenv("MONGODB_URI", raising=False)
    server = offline_server()
    password = server._password
    assert len(password) >= 24
    db = workbook.connect(database="sec3", quiet=True)
    assert password not in banner(db) and password not in engine_info(db).uri and password not in repr(db.client)

"""Shared fixtures: one ``db`` per test on each engine, and the foreign-database guard.

Tests that need real MongoDB are the same tests parametrized over engines: the ``mongodb``
variant runs when ``MONGODB_URI`` is set and is skipped with the reason otherwise.
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
import uuid
from collections.abc import Iterator

import bson
import pytest
from pymongo import MongoClient
from pymongo.database import Database

os.environ.setdefault("WORKBOOK_LEARNER", "pytest")
# Notebooks run at the learners' scale: their stored outputs were made at `small`, and nbval compares them.
os.environ["WORKBOOK_SCALE"] = "small"
os.environ.setdefault("WORKBOOK_PROGRESS_DIR", tempfile.mkdtemp(prefix="workbook-progress-"))  # never ~/.workbook
os.environ.setdefault("WORKBOOK_CACHE_DIR", tempfile.mkdtemp(prefix="workbook-cache-"))  # load snapshots: not ~/.cache

FOREIGN_DB = "course_foreign_guard"
"""A database outside the workbench namespace, seeded before the suite and checked after it."""

ENGINES = ["offline", pytest.param("mongodb", marks=pytest.mark.mongodb)]
"""Engine parameters: the ``mongodb`` variant of every test carries the ``mongodb`` mark (``pytest -m mongodb``)."""


def real_uri() -> str | None:
    """The real server's URI for the ``mongodb`` engine, if configured."""
    return os.environ.get("MONGODB_URI") or None


def engine_uri(engine: str) -> str | None:
    """The URI for an engine name: None means the offline default."""
    if engine == "mongodb":
        uri = real_uri()
        if uri is None:
            pytest.skip("needs a real MongoDB server: set MONGODB_URI (e.g. after `docker compose up -d`)")
        return uri
    return None


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """Each engine in turn; yields the URI to pass to workbook functions (None = offline)."""
    uri = engine_uri(request.param)
    if uri is None:
        monkeypatch.delenv("MONGODB_URI", raising=False)
    return uri


@pytest.fixture
def db(engine: str | None) -> Iterator[Database]:
    """A fresh database in the test learner's namespace, dropped afterwards."""
    import workbook

    database = workbook.connect(engine, database=f"t{uuid.uuid4().hex[:10]}", quiet=True)
    yield database
    database.client.drop_database(database.name)


def fingerprint(client: MongoClient, name: str) -> str:
    """sha256 over every collection's documents (BSON, in _id order) and index specs."""
    digest = hashlib.sha256()
    database = client[name]
    for collection in sorted(database.list_collection_names()):
        digest.update(collection.encode())
        for document in database[collection].find({}, sort=[("_id", 1)]):
            digest.update(bson.encode(document))
        for index in sorted(database[collection].list_indexes(), key=lambda i: i["name"]):
            digest.update(bson.encode({k: v for k, v in index.items() if k != "ns"}))
    return digest.hexdigest()


def seed_foreign(client: MongoClient) -> str:
    """Write the foreign database (as someone else's data) and return its fingerprint."""
    client.drop_database(FOREIGN_DB)
    database = client[FOREIGN_DB]
    database.inventory.insert_many([{"_id": f"item-{i}", "qty": i, "tags": ["a", str(i)]} for i in range(50)])
    database.inventory.create_index([("qty", -1)], name="qty_desc")
    database.notes.insert_one({"_id": "note", "text": "not the workbench's to touch"})
    return fingerprint(client, FOREIGN_DB)


def _guard_clients() -> list[tuple[str, MongoClient]]:
    from workbook.connection import client_for

    clients = [("offline", client_for(None))]
    if real_uri():
        clients.append(("mongodb", client_for(real_uri())))
    return clients


def pytest_report_header(config: pytest.Config) -> str:
    """Say up front which engines this run covers."""
    if real_uri():
        return "engines: offline default and real MongoDB (MONGODB_URI is set)"
    return "engines: offline default only; the real-MongoDB variants are skipped (set MONGODB_URI to run them)"


def pytest_sessionstart(session: pytest.Session) -> None:
    """Seed the foreign database on every engine before any test runs."""
    session.config._foreign_fingerprints = {  # type: ignore[attr-defined]
        name: seed_foreign(client) for name, client in _guard_clients()
    }


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run if the foreign database changed in any byte."""
    before: dict[str, str] = getattr(session.config, "_foreign_fingerprints", {})
    for name, client in _guard_clients():
        if name in before and fingerprint(client, FOREIGN_DB) != before[name]:
            print(f"\nFOREIGN DATABASE GUARD: {FOREIGN_DB} changed on the {name} engine during the suite")
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture
def shown(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """Every bar made through workbook.waiting, written to a buffer instead of stderr (read it to see what showed)."""
    from workbook import waiting

    buffer = io.StringIO()
    real = waiting.wait_bar
    monkeypatch.setattr(waiting, "wait_bar", lambda *a, **k: real(*a, file=buffer, **k))
    return buffer

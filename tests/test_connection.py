"""connect(): resolution order, redaction, banners, fast failures with the fix."""

from __future__ import annotations

import socket
import time

import pytest
from pymongo.database import Database

import workbook
from workbook import connection
from workbook.errors import ConnectionFailedError, InvalidURIError, WorkbookError


def closed_port() -> int:
    """A loopback port with nothing listening."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_offline_default_when_nothing_configured(monkeypatch, capsys):
    monkeypatch.delenv("MONGODB_URI", raising=False)
    db = workbook.connect()
    assert isinstance(db, Database)
    assert db.name == "workbench_pytest"
    shown = capsys.readouterr().out
    assert "offline default (mongoeco" in shown and "database workbench_pytest" in shown
    assert "MONGODB_URI" in shown  # says how to switch


def test_explicit_uri_beats_environment(monkeypatch):
    monkeypatch.setenv("MONGODB_URI", "mongodb://from-env:27017")
    assert connection.resolve_uri("mongodb://explicit:27017") == "mongodb://explicit:27017"
    assert connection.resolve_uri(None) == "mongodb://from-env:27017"
    monkeypatch.setenv("MONGODB_URI", "  ")
    assert connection.resolve_uri(None) is None


def test_environment_uri_is_used_when_no_argument(monkeypatch):
    port = closed_port()
    monkeypatch.setenv("MONGODB_URI", f"mongodb://127.0.0.1:{port}/")
    with pytest.raises(ConnectionFailedError, match=f"127.0.0.1:{port}"):
        workbook.connect()


@pytest.mark.parametrize(
    ("uri", "shown"),
    [
        ("mongodb://ada:s3cret@h:27017/db", "mongodb://ada:***@h:27017/db"),
        (
            "mongodb+srv://ada:p%40ss:w@cluster.example/?retryWrites=true",
            "mongodb+srv://*** (not a valid URI, hidden)",  # two ':' in the user info: pymongo refuses it
        ),
        ("mongodb://ada@h/?authMechanism=MONGODB-X509", "mongodb://ada@h/?authMechanism=MONGODB-X509"),
        ("mongodb://h/?tlsCertificateKeyFilePassword=s3cret&x=1", "mongodb://h/?tlsCertificateKeyFilePassword=***&x=1"),
        ("mongodb://u:a@b@h:1", "mongodb://*** (not a valid URI, hidden)"),  # unescaped '@': refused too
    ],
)
def test_redaction_hides_passwords(uri, shown):
    assert connection.redact_uri(uri) == shown
    assert "s3cret" not in connection.redact_uri(uri)


def test_unreachable_uri_fails_fast_with_the_fix_and_no_password(monkeypatch, capsys):
    monkeypatch.delenv("MONGODB_URI", raising=False)
    port = closed_port()
    started = time.monotonic()
    with pytest.raises(ConnectionFailedError) as caught:
        workbook.connect(f"mongodb://ada:s3cret@127.0.0.1:{port}/")
    elapsed = time.monotonic() - started
    message = str(caught.value)
    assert elapsed < 5, f"took {elapsed:.1f} s"
    assert f"mongodb://ada:***@127.0.0.1:{port}/" in message
    assert "s3cret" not in message + capsys.readouterr().out
    assert "docker compose up" in message and "unset MONGODB_URI" in message
    assert isinstance(caught.value, WorkbookError)


@pytest.mark.parametrize("uri", ["mongodb://ada:s3cret@[bad", "postgres://ada:s3cret@h/db", "mongodb://h:99999999/"])
def test_malformed_uri_raises_invalid_uri_error(uri):
    started = time.monotonic()
    with pytest.raises(InvalidURIError) as caught:
        workbook.connect(uri)
    assert time.monotonic() - started < 5
    assert "s3cret" not in str(caught.value)
    assert "check the URI" in str(caught.value)


def test_notebook_shows_message_not_traceback():
    error = ConnectionFailedError("Could not reach MongoDB at mongodb://h", fix="start compose")
    assert error._render_traceback_() == [
        "ConnectionFailedError: Could not reach MongoDB at mongodb://h",
        "Fix: start compose",
    ]


def test_engine_info_on_each_engine(db):
    info = workbook.engine_info(db)
    assert info.kind in {"offline", "mongodb"}
    assert info.transactions is True or info.topology == "standalone"
    assert info.server_version[0].isdigit()
    if info.kind == "offline":
        assert info.package.startswith("mongoeco ") and "offline default" in info.label


def test_import_has_no_side_effects():
    import subprocess
    import sys

    code = "import workbook, sys; print('workbook.offline' in sys.modules, 'mongoeco' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
    assert out.stderr == ""

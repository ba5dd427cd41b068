"""Passwords are never printed: hostile URIs through every path that shows a URI.

Each URI's secret is made of fragments (``Zq9``, ``Kw7``...) that must appear nowhere in what the
workbench prints or raises, whether pymongo can parse the URI or not.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import workbook
from workbook import connection
from workbook.errors import WorkbookError
from workbook.offline import offline_server

SECRET_FRAGMENTS = ("Zq9", "Kw7", "Xv5")

# (name, URI template with {host}); the secret is always built from SECRET_FRAGMENTS.
HOSTILE = [
    ("hash in password", "mongodb://ada:Zq9#Kw7Xv5@{host}/"),
    ("slash in password", "mongodb://ada:Zq9/Kw7Xv5@{host}/"),
    ("question mark in password", "mongodb://ada:Zq9?Kw7Xv5@{host}/"),
    ("colon in password", "mongodb://ada:Zq9:Kw7Xv5@{host}/"),
    ("at sign in password", "mongodb://ada:Zq9@Kw7Xv5@{host}/"),
    ("percent-encoded password", "mongodb://ada:Zq9%23Kw7%2FXv5@{host}/"),
    ("no scheme", "ada:Zq9Kw7Xv5@{host}"),
    ("no scheme, srv-like", "ada:Zq9Kw7Xv5@cluster0.example/?retryWrites=true"),
    ("upper-case scheme", "MONGODB://ada:Zq9Kw7Xv5@{host}/"),
    (
        "authMechanismProperties secret",
        "mongodb://{host}/?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:Zq9Kw7Xv5",
    ),
    ("tls key password", "mongodb://{host}/?tlsCertificateKeyFilePassword=Zq9Kw7Xv5"),
    ("ordinary password", "mongodb://ada:Zq9Kw7Xv5@{host}/?authSource=admin"),
    ("password in a bad port", "mongodb://ada:Zq9Kw7Xv5@{host}:Zq9Kw7Xv5/"),
]


def assert_no_secret(text: str) -> None:
    """None of the secret's fragments is in ``text``."""
    for fragment in SECRET_FRAGMENTS:
        assert fragment not in text, text


@pytest.fixture
def host() -> str:
    """The offline server's host:port: a real wire server, so logins are really attempted (and refused)."""
    return offline_server().uri.split("://", 1)[1].split("/", 1)[0].rpartition("@")[2]


@pytest.fixture(autouse=True)
def forget_clients(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Clients cached for hostile URIs are closed and forgotten afterwards; a throwaway learner."""
    monkeypatch.setenv("WORKBOOK_LEARNER", "redaction-test")
    monkeypatch.delenv("MONGODB_URI", raising=False)
    before = dict(connection._clients)
    yield
    shared = list(before.values())
    for key, client in list(connection._clients.items()):
        if key not in before and not any(client is kept for kept in shared):
            connection._clients.pop(key)
            connection._infos.pop(id(client), None)
            client.close()


@pytest.mark.parametrize(("case", "template"), HOSTILE, ids=[case for case, _ in HOSTILE])
def test_redact_uri_hides_the_secret(case, template, host):
    uri = template.format(host=host)
    shown = connection.redact_uri(uri)
    assert_no_secret(shown)
    assert "***" in shown


@pytest.mark.parametrize(
    ("uri", "shown"),
    [
        ("mongodb://ada:Zq9#Kw7@h:1/", "mongodb://ada:***@h:1/"),  # pymongo accepts '#': the user stays visible
        (
            "mongodb://h/?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:Zq9,SERVICE_NAME:x",
            "mongodb://h/?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:***,SERVICE_NAME:***",
        ),
        ("mongodb://ada:Zq9/Kw7@h:1/", "mongodb://*** (not a valid URI, hidden)"),
        ("ada:Zq9@h:1", "*** (not a mongodb:// URI, hidden)"),
        ("mongodb://h1:1,h2:2/db?replicaSet=rs0", "mongodb://h1:1,h2:2/db?replicaSet=rs0"),
    ],
)
def test_redaction_keeps_what_helps_and_hides_the_rest(uri, shown):
    assert connection.redact_uri(uri) == shown


@pytest.mark.parametrize(("case", "template"), HOSTILE, ids=[case for case, _ in HOSTILE])
def test_connect_errors_and_banner_hide_the_secret(case, template, host, capsys):
    uri = template.format(host=host)
    try:
        workbook.connect(uri)
        message = ""
    except WorkbookError as error:
        message = str(error) + "\n".join(error._render_traceback_())
    printed = capsys.readouterr()
    assert_no_secret(message + printed.out + printed.err)


@pytest.mark.parametrize(("case", "template"), HOSTILE, ids=[case for case, _ in HOSTILE])
@pytest.mark.parametrize("command", ["check", "reset", "diffcheck"])
def test_commands_hide_the_secret(case, template, command, host, capsys):
    from workbook.__main__ import main

    main(["--uri", template.format(host=host), command])
    printed = capsys.readouterr()
    assert_no_secret(printed.out + printed.err)


def test_a_refused_login_says_so_with_the_fix(host):
    with pytest.raises(workbook.ConnectionFailedError, match="refused the login") as caught:
        workbook.connect(f"mongodb://ada:Zq9Kw7Xv5@{host}/", quiet=True)
    assert "quote_plus" in str(caught.value)
    assert_no_secret(str(caught.value))


def test_a_uri_without_a_scheme_is_refused_clearly():
    with pytest.raises(workbook.InvalidURIError, match="does not start with mongodb://"):
        workbook.connect("ada:Zq9Kw7Xv5@localhost:27017", quiet=True)


def test_banner_and_check_show_a_real_servers_uri_redacted(monkeypatch, capsys):
    """A server that is not the offline default is described with its URI: redacted.

    The offline client stands in for a real server reached through a hostile URI, so nothing
    depends on how the offline server authenticates.
    """
    from workbook import check

    uri = "mongodb://ada:Zq9#Kw7@db.example:27017/?appname=x&courseSecretPassword=Xv5Zq9Kw7"
    client = connection.client_for(None)
    monkeypatch.setitem(connection._clients, uri, client)
    monkeypatch.setattr(connection, "_infos", {})  # described afresh, then forgotten
    monkeypatch.setattr(connection, "PACKAGE", "not-the-offline-engine")  # describe it as a MongoDB server
    db = workbook.connect(uri)
    assert connection.engine_info(db).kind == "mongodb"
    check.main(uri)
    printed = capsys.readouterr().out
    assert printed.count("mongodb://ada:***@db.example:27017/?appname=x&courseSecretPassword=***") == 2
    assert_no_secret(printed)

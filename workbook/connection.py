"""``connect()``: one pymongo handle for real MongoDB and for the offline default.

Resolution, read at call time and never at import: explicit ``uri`` > ``MONGODB_URI`` > the
offline default. Either way the learner gets a real :class:`pymongo.database.Database`.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass

from pymongo import MongoClient
from pymongo.database import Database
from pymongo.errors import ConfigurationError, PyMongoError

from workbook import namespace
from workbook.errors import ConnectionFailedError, InvalidURIError, NamespaceError
from workbook.monitor import COMMANDS
from workbook.offline import PACKAGE, offline_server

SERVER_SELECTION_TIMEOUT_MS = 3000
"""How long to wait for a configured server before failing (the whole connect stays under 5 s)."""

OFFLINE = "offline"
"""The name of the offline default wherever an engine is named."""

COMPOSE_URI = "mongodb://localhost:27017/?replicaSet=rs0"
"""The URI for the repository's docker-compose.yml."""

_clients: dict[str, MongoClient] = {}


@dataclass(frozen=True)
class EngineInfo:
    """What a database handle runs on, as shown in banners, charts and ``workbook check``."""

    kind: str  # "offline" or "mongodb"
    server_version: str
    topology: str
    transactions: bool
    uri: str  # redacted
    package: str | None = None  # e.g. "mongoeco 4.11.0" for the offline default

    @property
    def label(self) -> str:
        """A short label for chart subtitles: 'MongoDB 8.0.4' or 'offline default (mongoeco 4.11.0)'."""
        if self.kind == OFFLINE:
            return f"offline default ({self.package})"
        return f"MongoDB {self.server_version}"


def redact_uri(uri: str) -> str:
    """Hide the password (and any *password= option) in a MongoDB URI.

    >>> redact_uri("mongodb://ada:s3cret@db.example:27017/?authSource=admin")
    'mongodb://ada:***@db.example:27017/?authSource=admin'
    >>> redact_uri("mongodb+srv://ada:p%40ss@cluster0.example/?tlsCertificateKeyFilePassword=x")
    'mongodb+srv://ada:***@cluster0.example/?tlsCertificateKeyFilePassword=***'
    """
    authority = re.match(r"^([^:/?#]+://)([^/?#]*)@", uri)  # greedy: up to the last "@"
    if authority and ":" in authority.group(2):
        user = authority.group(2).split(":", 1)[0]
        uri = f"{authority.group(1)}{user}:***@{uri[authority.end() :]}"
    return re.sub(r"((?i:password)=)[^&]*", r"\1***", uri)


def resolve_uri(uri: str | None = None) -> str | None:
    """The URI to use: explicit ``uri`` > ``MONGODB_URI`` > None (the offline default)."""
    if uri is not None and uri.strip():
        return uri.strip()
    env = os.environ.get("MONGODB_URI", "").strip()
    return env or None


def connect(uri: str | None = None, *, database: str | None = None, quiet: bool = False) -> Database:
    """A pymongo database in the learner's workbench namespace, on real MongoDB or offline.

    ``database`` is a short name inside the namespace (``"store_hybrid"`` becomes
    ``workbench_<learner>_store_hybrid``); None gives the learner's base database.
    """
    client = client_for(uri)
    db = client[namespace.database_name(database)]
    if not quiet:
        print(banner(db))
    return db


def client_for(uri: str | None = None) -> MongoClient:
    """The cached client for ``uri`` (resolved as in :func:`connect`), checked to be reachable."""
    target = resolve_uri(uri)
    key = target or OFFLINE
    client = _clients.get(key)
    if client is None:
        client = _offline_client() if target is None else _server_client(target)
        _clients[key] = client
    return client


def _offline_client() -> MongoClient:
    server = offline_server()
    return MongoClient(
        server.uri,
        serverSelectionTimeoutMS=SERVER_SELECTION_TIMEOUT_MS,
        # In-process: a long engine operation (a big $lookup) must not look like a dead server.
        connectTimeoutMS=0,
        appname="workbook",
        event_listeners=[COMMANDS],
    )


def _server_client(uri: str) -> MongoClient:
    shown = redact_uri(uri)
    fixes = (
        "start the course's server with `docker compose up -d` (then use "
        f"{COMPOSE_URI}), check the URI, or unset MONGODB_URI to use the offline default"
    )
    started = time.monotonic()
    try:
        client: MongoClient = MongoClient(
            uri,
            serverSelectionTimeoutMS=SERVER_SELECTION_TIMEOUT_MS,
            connectTimeoutMS=2000,
            appname="workbook",
            event_listeners=[COMMANDS],
        )
    except (ConfigurationError, ValueError, TypeError) as error:  # InvalidURI is a ConfigurationError
        raise InvalidURIError(f"The MongoDB URI {shown} cannot be used: {_redacted(error, uri)}", fix=fixes) from None
    try:
        client.admin.command("ping")
    except PyMongoError as error:
        client.close()
        waited = time.monotonic() - started
        reason = re.split(r" \(configured timeouts|, Timeout:| Topology Description", _redacted(error, uri))[0]
        raise ConnectionFailedError(
            f"Could not reach MongoDB at {shown} (tried for {waited:.1f} s): {reason}",
            fix=fixes,
        ) from None
    return client


def _redacted(error: Exception, uri: str) -> str:
    """An error's message with any password from ``uri`` masked."""
    text = str(error)
    authority = re.match(r"^[^:/?#]+://([^/?#]*)@", uri)
    if authority and ":" in authority.group(1):
        password = authority.group(1).split(":", 1)[1]
        if password:
            text = text.replace(password, "***")
    return text


_infos: dict[int, EngineInfo] = {}


def engine_info(db: Database | MongoClient) -> EngineInfo:
    """Describe the engine behind a database or client (asked once per client, then remembered)."""
    client = db.client if isinstance(db, Database) else db
    info = _infos.get(id(client))
    if info is None:
        info = _infos[id(client)] = _describe(client)
    return info


def _describe(client: MongoClient) -> EngineInfo:
    """Ask the server what it is."""
    build = client.admin.command("buildInfo")
    hello = client.admin.command("hello")
    version = str(build.get("version", "?"))
    if build.get("gitVersion") == PACKAGE:
        return EngineInfo(
            kind=OFFLINE,
            server_version=version,
            topology="in this Python process",
            transactions=True,
            uri="(in-process)",
            package=f"{PACKAGE} {offline_server().version}",
        )
    if hello.get("msg") == "isdbgrid":
        topology, transactions = "sharded cluster", True
    elif hello.get("setName"):
        topology, transactions = f"replica set {hello['setName']}", True
    else:
        topology, transactions = "standalone", False
    uri = next((redact_uri(k) for k, c in _clients.items() if c is client and k != OFFLINE), "(given client)")
    return EngineInfo(kind="mongodb", server_version=version, topology=topology, transactions=transactions, uri=uri)


def banner(db: Database) -> str:
    """The short text shown by :func:`connect`: engine, database and how to switch."""
    info = engine_info(db)
    if info.kind == OFFLINE:
        return (
            f"workbook: offline default ({info.package}, MongoDB {info.server_version} dialect, "
            f"{info.topology}; data is lost when the kernel restarts) · database {db.name}\n"
            "  explain output here is modelled by the workbench. For real MongoDB: "
            f"`docker compose up -d`, then set MONGODB_URI={COMPOSE_URI}"
        )
    tx = "transactions available" if info.transactions else "no transactions (standalone server)"
    return (
        f"workbook: MongoDB {info.server_version} ({info.topology}, {tx}) at {info.uri} · database {db.name}\n"
        "  For the offline default: unset MONGODB_URI."
    )


def reset(uri: str | None = None, *, learner: str | None = None, force: bool = False) -> list[str]:
    """Drop this learner's workbench databases, and only those; returns their names.

    Another learner's data (``learner="bob"``, not you) is dropped only with ``force=True``.
    """
    client = client_for(uri)
    whose = namespace.learner_name(learner)
    names = sorted(name for name in client.list_database_names() if namespace.is_own_database(name, learner=learner))
    if learner is not None and whose != namespace.learner_name() and not force:
        held = ", ".join(names) if names else "no databases right now"
        raise NamespaceError(
            f"reset(learner={learner!r}) would drop {whose!r}'s workbench data ({held}), "
            f"not yours (you are {namespace.learner_name()!r}).",
            fix=f"If you mean to drop {whose!r}'s data, say so: workbook.reset(learner={learner!r}, force=True).",
        )
    for name in names:
        client.drop_database(name)
    return names

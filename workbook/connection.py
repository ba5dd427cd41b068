"""``connect()``: one pymongo handle for real MongoDB and for the offline default.

Resolution, read at call time and never at import: explicit ``uri`` > ``MONGODB_URI`` > the
offline default. Either way the learner gets a real :class:`pymongo.database.Database`.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from urllib.parse import unquote_plus

from pymongo import MongoClient, uri_parser
from pymongo.database import Database
from pymongo.errors import ConfigurationError, OperationFailure, PyMongoError

from workbook import namespace
from workbook.engine_waits import ENGINE_WAITS
from workbook.errors import ArgumentTypeError, ConnectionFailedError, InvalidURIError, NamespaceError
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

    def _repr_html_(self) -> str:
        rows = [
            ("engine", self.label),
            ("server version", self.server_version),
            ("where", self.topology),
            ("multi-document transactions", "yes" if self.transactions else "no (standalone server)"),
            ("URI", self.uri),
        ]
        cells = "".join(
            f"<tr><th style='text-align:left'>{k}</th><td style='text-align:left'>{_escape(v)}</td></tr>"
            for k, v in rows
        )
        return f"<table>{cells}</table>"

    @property
    def label(self) -> str:
        """A short label for chart subtitles: 'MongoDB 8.0.4' or 'offline default (mongoeco 4.11.0)'."""
        if self.kind == OFFLINE:
            return f"offline default ({self.package})"
        return f"MongoDB {self.server_version}"


SCHEMES = ("mongodb://", "mongodb+srv://")
"""The URI schemes pymongo accepts."""

_SECRET_OPTIONS = ("password", "secret", "token", "key")  # e.g. tlsCertificateKeyFilePassword, kms keys
_HIDDEN = "***"


@dataclass(frozen=True)
class _URIParts:
    """A URI cut where pymongo cuts it (``pymongo/uri_parser_shared.py``, ``_validate_uri``)."""

    scheme: str
    user: str | None  # as written
    password: str | None  # as written (percent-encoded)
    rest: str  # hosts and database, as written
    options: list[tuple[str, str]]  # (key, value) as written
    delimiter: str


def _split_uri(uri: str) -> _URIParts:
    """Cut ``uri`` as pymongo does and validate each part with pymongo's public parsers (no DNS look-up).

    Raises ValueError (or pymongo's InvalidURI, a ValueError too) when pymongo would not accept the URI.
    """
    scheme = next((s for s in SCHEMES if uri.startswith(s)), None)
    if scheme is None:
        raise ValueError("not a mongodb:// or mongodb+srv:// URI")
    host_and_db, _, query = uri[len(scheme) :].partition("?")
    host_part, slash, database = host_and_db.partition("/")
    userinfo, at, hosts = host_part.rpartition("@")
    user = password = None
    if at:
        uri_parser.parse_userinfo(userinfo)  # refuses unescaped ":", "@", "/", "?", "#", "%"
        user, colon, password = userinfo.partition(":")
        password = password if colon else None
    uri_parser.split_hosts(hosts, default_port=None)
    options: list[tuple[str, str]] = []
    delimiter = "&"
    if query:
        delimiter = ";" if ";" in query and "&" not in query else "&"
        uri_parser.split_options(query, validate=False, warn=False)
        options = [(key, value) for key, _, value in (item.partition("=") for item in query.split(delimiter))]
    return _URIParts(scheme, user, password, f"{hosts}{slash}{database}", options, delimiter)


def _secret_option(key: str) -> bool:
    return any(word in key.lower() for word in _SECRET_OPTIONS)


def _redacted_value(key: str, value: str) -> str:
    if key.lower() == "authmechanismproperties":  # AWS_SESSION_TOKEN:..., keep the property names
        properties = (item.partition(":") for item in value.split(","))
        return ",".join(f"{name}:{_HIDDEN}" if sep else _HIDDEN for name, sep, _ in properties)
    return _HIDDEN if _secret_option(key) else value


def _escape(value: object) -> str:
    import html

    return html.escape(str(value))


def redact_uri(uri: str) -> str:
    """The URI with every secret hidden (password, secret options); only the scheme if pymongo cannot parse it.

    >>> redact_uri("mongodb://ada:s3cret@db.example:27017/?authSource=admin")
    'mongodb://ada:***@db.example:27017/?authSource=admin'
    >>> redact_uri("mongodb+srv://ada:p%40ss@cluster0.example/?tlsCertificateKeyFilePassword=x")
    'mongodb+srv://ada:***@cluster0.example/?tlsCertificateKeyFilePassword=***'
    >>> redact_uri("mongodb://ada:pa/ss@db.example"), redact_uri("ada:s3cret@db.example")
    ('mongodb://*** (not a valid URI, hidden)', '*** (not a mongodb:// URI, hidden)')
    """
    try:
        parts = _split_uri(uri)
    except (ValueError, PyMongoError):
        scheme = next((s for s in SCHEMES if uri.startswith(s)), None)
        return f"{scheme}{_HIDDEN} (not a valid URI, hidden)" if scheme else f"{_HIDDEN} (not a mongodb:// URI, hidden)"
    user = "" if parts.user is None else parts.user + (f":{_HIDDEN}" if parts.password is not None else "") + "@"
    query = parts.delimiter.join(f"{key}={_redacted_value(key, value)}" for key, value in parts.options)
    return f"{parts.scheme}{user}{parts.rest}" + (f"?{query}" if parts.options else "")


def _secrets(uri: str) -> set[str]:
    """Every secret in ``uri``, as written and decoded; for a URI pymongo cannot parse, every piece of it."""
    try:
        parts = _split_uri(uri)
    except (ValueError, PyMongoError):
        after_scheme = uri.split("://", 1)[-1]
        found = {uri, after_scheme, *re.split(r"[@/?#&=,;]", after_scheme), *re.split(r"[:@/?#&=,;]", after_scheme)}
    else:
        found = {uri} | ({parts.password} if parts.password else set())
        for key, value in parts.options:
            if key.lower() == "authmechanismproperties":
                found |= {p.partition(":")[2] for p in value.split(",")}
            elif _secret_option(key):
                found.add(value)
    found |= {unquote_plus(secret) for secret in found}
    found.discard("")
    return found


def scrub(text: str, uri: str) -> str:
    """``text`` (an error message) with every secret of ``uri`` replaced by ``***``.

    Secrets are hidden wherever they appear, and so is any quoted literal holding one (pymongo
    quotes the pieces of input it complains about); for a URI pymongo cannot parse, every piece
    of the URI counts as a secret.

    >>> scrub("Port must be an integer: 'pa'", "mongodb://ada:pa/ss@db.example")
    'Port must be an integer: ***'
    """
    secrets = _secrets(uri)

    def quoted(match: re.Match[str]) -> str:
        inside = match.group(2)
        return _HIDDEN if inside in secrets or any(secret in inside for secret in secrets) else match.group(0)

    text = re.sub(r"(['\"])(.*?)\1", quoted, text)
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= 3:
            text = text.replace(secret, _HIDDEN)
    return text


def resolve_uri(uri: str | None = None) -> str | None:
    """The URI to use: explicit ``uri`` > ``MONGODB_URI`` > None (the offline default)."""
    if uri is not None and not isinstance(uri, str):
        raise ArgumentTypeError(
            "uri",
            uri,
            "a MongoDB URI string such as 'mongodb://localhost:27017', or None for MONGODB_URI or the offline default",
            fix="workbook.connect() for the offline default, or workbook.connect('mongodb://localhost:27017').",
        )
    if uri is not None and uri.strip():
        return uri.strip()
    env = os.environ.get("MONGODB_URI", "").strip()
    return env or None


def connect(uri: str | None = None, *, database: str | None = None, quiet: bool = False) -> Database:
    """A pymongo database in the learner's workbench namespace, on real MongoDB or offline.

    ``database`` is a short name inside the namespace (``"store_hybrid"`` becomes
    ``workbench_<learner>_store_hybrid``); None gives the learner's base database.
    """
    from workbook import display

    client = client_for(uri)
    db = client[namespace.database_name(database)]
    display.install()  # in a notebook: a validator's rejection shows its reason, not a long traceback
    if not quiet:
        shown = display.Banner(banner(db))
        if display.in_notebook():
            from IPython.display import display as show

            show(shown)
        else:
            print(shown.wrapped())
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


ENGINE_START_ESTIMATE_S = 2.0
"""The usual first start of the offline engine, shown on its bar (0.6-1.4 s idle, 2-5 s on a busy machine)."""

ENGINE_BAR_DELAY_S = 0.2
"""When the engine start's bar shows: 0.2 s into the start, which the imports of ``connect`` itself
(pymongo, tqdm: 0.4-0.8 s in a kernel) precede, so the cell is silent for about a second."""


def _offline_client() -> MongoClient:
    import sys

    from workbook.waiting import busy, in_kernel

    starting = "starting the offline engine (once per kernel)"
    shown = in_kernel() or sys.stderr.isatty()  # a notebook or a terminal; not a test run's or a CI log
    with busy(starting, estimate_s=ENGINE_START_ESTIMATE_S, delay=ENGINE_BAR_DELAY_S, progress=shown):
        server = offline_server()
    return MongoClient(
        server.uri,
        serverSelectionTimeoutMS=SERVER_SELECTION_TIMEOUT_MS,
        # In-process: a long engine operation (a big $lookup) must not look like a dead server.
        connectTimeoutMS=0,
        appname="workbook",
        event_listeners=[COMMANDS, ENGINE_WAITS],
    )


def _server_client(uri: str) -> MongoClient:
    shown = redact_uri(uri)
    fixes = (
        "start the course's server with `docker compose up -d` (then use "
        f"{COMPOSE_URI}), check the URI, or unset MONGODB_URI to use the offline default"
    )
    if not uri.startswith(SCHEMES):  # pymongo would take it as a host list and quote it back in errors
        raise InvalidURIError(
            f"The MongoDB URI {shown} does not start with mongodb:// or mongodb+srv://.",
            fix=f"check the URI: write it in full, e.g. {COMPOSE_URI}, or unset MONGODB_URI for the offline default.",
        )
    started = time.monotonic()
    try:
        client: MongoClient = MongoClient(
            uri,
            serverSelectionTimeoutMS=SERVER_SELECTION_TIMEOUT_MS,
            connectTimeoutMS=2000,
            appname="workbook",
            event_listeners=[COMMANDS, ENGINE_WAITS],
        )
    except (ConfigurationError, ValueError, TypeError) as error:  # InvalidURI is a ConfigurationError
        raise InvalidURIError(f"The MongoDB URI {shown} cannot be used: {scrub(str(error), uri)}", fix=fixes) from None
    try:
        client.admin.command("ping")
    except OperationFailure as error:
        client.close()
        raise ConnectionFailedError(
            f"MongoDB at {shown} refused the login: {scrub(str(error), uri)}",
            fix="Check the user name and password; percent-encode special characters in them "
            "(urllib.parse.quote_plus), or unset MONGODB_URI to use the offline default.",
        ) from None
    except PyMongoError as error:
        client.close()
        waited = time.monotonic() - started
        reason = re.split(r" \(configured timeouts|, Timeout:| Topology Description", scrub(str(error), uri))[0]
        raise ConnectionFailedError(
            f"Could not reach MongoDB at {shown} (tried for {waited:.1f} s): {reason}",
            fix=fixes,
        ) from None
    return client


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
        from workbook.engine_reads import local_engine

        if local_engine(client["admin"]) is not None:
            return EngineInfo(
                kind=OFFLINE,
                server_version=version,
                topology="in this Python process",
                transactions=True,
                uri="(in-process)",
                package=f"{PACKAGE} {offline_server().version}",
            )
        nodes = ", ".join(f"{host}:{port}" for host, port in sorted(client.nodes)) or "?"
        return EngineInfo(
            kind=OFFLINE,
            server_version=version,
            topology=f"served by another Python process at {nodes}",
            transactions=True,
            uri=next((redact_uri(k) for k, c in _clients.items() if c is client and k != OFFLINE), nodes),
            package=PACKAGE,  # its version is the other process's; ours may differ
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
            f"{info.topology}; data is lost when "
            f"{'the kernel restarts' if info.uri == '(in-process)' else 'that process ends'}) · database {db.name}\n"
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

"""The offline default's command surface, without the engine: which commands the workbench answers
or rewrites before mongoeco parses them, and the hooks other modules register.

Pure: nothing here imports mongoeco, so :mod:`workbook.offline` and the modules that register hooks
(explain, progress) import it cheaply; :mod:`workbook.offline_executor` applies it on the wire.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from workbook.facts import (
    FIRST_BATCH_DOCUMENTS,
)

if TYPE_CHECKING:
    from workbook.offline import OfflineServer


def transaction_key(body: Mapping[str, Any]) -> tuple[str, Any] | None:
    """``(session id, txnNumber)`` of a command sent inside a transaction, else None."""
    if body.get("autocommit") is False and "txnNumber" in body and isinstance(body.get("lsid"), Mapping):
        return repr(body["lsid"].get("id")), body["txnNumber"]
    return None


CommandHook = Callable[["OfflineServer", str, dict[str, Any]], Awaitable[dict[str, Any] | None]]
"""``hook(server, db_name, command) -> reply or None``: answer a command, or None to let the engine run it."""

COMMAND_HOOKS: dict[str, CommandHook] = {}
"""Commands the workbench answers itself, by command name (e.g. ``explain``); see :func:`register_command`."""

WRITE_COMMANDS = frozenset(
    {
        "insert",
        "update",
        "delete",
        "findAndModify",
        "create",
        "drop",
        "dropDatabase",
        "createIndexes",
        "dropIndexes",
        "collMod",
        "renameCollection",
        "aggregate",
    }
)
WriteListener = Callable[[str, str, str], None]
"""``listener(command, db_name, collection)``: called after a write command succeeds."""
WRITE_LISTENERS: list[WriteListener] = []
"""Called after every successful write command from any client (e.g. to invalidate explain caches)."""
DropListener = Callable[[Any, str, str | None], None]
"""``listener(engine, db_name, collection)``: called after a ``drop`` (``collection`` None: a ``dropDatabase``)."""
DROP_LISTENERS: list[DropListener] = []
"""Called after every successful drop from any client: each module that keeps something per collection
(decoded documents, explain models, sizes, ``$lookup``'s foreign documents) registers here when imported,
and lets that collection's go, so a kernel does not grow with every shape it loads and drops."""


def dropped(database: str, collection: str | None, key: tuple[str, str]) -> bool:
    """Whether ``key`` (a database and collection name) is gone after a drop of ``database.collection``
    (of the whole database when ``collection`` is None)."""
    return key[0] == database and collection in (None, key[1])


def register_command(name: str, hook: CommandHook) -> None:
    """Answer the wire command ``name`` with ``hook`` on the offline default (replaces an earlier hook)."""
    COMMAND_HOOKS[name] = hook


def writes_out(aggregate: dict[str, Any]) -> bool:
    """Whether a pipeline ends in $out or $merge (no cursor batches to size)."""
    pipeline = aggregate.get("pipeline") or [{}]
    return any(stage in pipeline[-1] for stage in ("$out", "$merge"))


SIMPLE_COLLATIONS = ("simple", "en")


def collation(spec: Any) -> Any:
    """A collation the engine accepts: mongoeco knows only ``simple`` and ``en``; any other locale
    is compared with the ``en`` (root Unicode) rules at the same strength, which is what strengths 1-3
    give for the Latin-script data the course uses."""
    if isinstance(spec, Mapping) and spec.get("locale") not in SIMPLE_COLLATIONS and "locale" in spec:
        return {**spec, "locale": "en"}
    return spec


def rewrite(command: str, body: dict[str, Any]) -> dict[str, Any]:
    """Adjust a command's body before the engine parses it (each rewrite closes one gap)."""
    if command == "buildinfo":  # pymongo's server_info() sends the lowercase spelling
        body = {"buildInfo" if k == "buildinfo" else k: v for k, v in body.items()}
    if command == "find" and "batchSize" not in body:
        body = {**body, "batchSize": FIRST_BATCH_DOCUMENTS}
    if command == "count" and isinstance(body.get("limit"), int) and body["limit"] < 0:  # count6.js: limit(-n) is n
        body = {**body, "limit": -body["limit"]}
    if command == "aggregate" and "batchSize" not in body.get("cursor", {}) and not writes_out(body):
        body = {**body, "cursor": {**body.get("cursor", {}), "batchSize": FIRST_BATCH_DOCUMENTS}}
    if command == "create":  # drivers may send a capped size as a double (MongoDB accepts 4096.0)
        for key in ("size", "max"):
            if isinstance(body.get(key), float) and body[key].is_integer():
                body = {**body, key: int(body[key])}
    if "collation" in body:
        body = {**body, "collation": collation(body["collation"])}
    if isinstance(body.get("let"), Mapping):  # let values are expressions: {$literal: "$x"} is the string "$x"
        body = {**body, "let": {k: literal_value(v) for k, v in body["let"].items()}}
    if command == "aggregate" and body.get("aggregate") == 1:
        body = database_aggregate(body)
    if command == "findAndModify" and isinstance(body.get("update"), Mapping) and not body["update"]:
        body = {**body, "update": EMPTY_REPLACEMENT}
    if command == "explain" and isinstance(body.get("explain"), dict) and body["explain"]:
        inner = body["explain"]
        body = {**body, "explain": rewrite(str(next(iter(inner))), inner)}
    for key in ("updates", "deletes", "indexes"):
        if isinstance(body.get(key), list):
            body = {**body, key: [statement(item) for item in body[key]]}
    return body


DATABASE_AGGREGATE = "$cmd.aggregate"
"""Where a database-level ``aggregate: 1`` runs (MongoDB reports this namespace for its cursor too)."""


def database_aggregate(body: dict[str, Any]) -> dict[str, Any]:
    """``db.aggregate(...)``: mongoeco needs a collection, so its first stage becomes ``$documents``.

    ``$listLocalSessions`` lists the calling session (the only one a learner's code can see);
    ``$currentOp`` lists nothing (the engine runs one command at a time).
    """
    import datetime

    pipeline = list(body.get("pipeline") or [])
    first = pipeline[0] if pipeline and isinstance(pipeline[0], Mapping) else {}
    if "$listLocalSessions" in first:
        lsid = body.get("lsid")
        sessions = (
            [{"_id": {"id": lsid.get("id")}, "lastUse": datetime.datetime.now(datetime.UTC)}]
            if isinstance(lsid, Mapping)
            else []
        )
        pipeline[0] = {"$documents": sessions}
    elif "$currentOp" in first:
        pipeline[0] = {"$documents": []}
    return {**body, "aggregate": DATABASE_AGGREGATE, "pipeline": pipeline}


def literal_value(value: Any) -> Any:
    """The value of a ``let`` expression mongoeco binds unevaluated: ``{"$literal": v}`` and ``{"$rand": {}}``."""
    if isinstance(value, Mapping) and list(value) == ["$literal"]:
        return value["$literal"]
    if isinstance(value, Mapping) and list(value) == ["$rand"]:
        return random.random()  # noqa: S311 - MongoDB's $rand, not a secret
    return value


EMPTY_REPLACEMENT = [{"$project": {"_id": 1}}]
"""``replace_one(f, {})`` as the update pipeline that does the same: keep only ``_id``."""


def statement(item: Any) -> Any:
    """One update/delete statement or index spec with its collation and empty replacement fixed."""
    if not isinstance(item, dict):
        return item
    if "collation" in item:
        item = {**item, "collation": collation(item["collation"])}
    if "u" in item and isinstance(item["u"], Mapping) and not item["u"]:
        # replace_one(f, {}) keeps only _id, as on MongoDB; mongoeco refuses an empty replacement.
        item = {**item, "u": EMPTY_REPLACEMENT}
    if "dropDups" in item and "key" in item:  # ignored by MongoDB since 3.0; refused by mongoeco
        item = {k: v for k, v in item.items() if k != "dropDups"}
    return item


VIEW_COMMANDS = frozenset({"find", "aggregate", "insert", "update", "delete", "findAndModify", "createIndexes"})
"""Commands that name a collection which may be a view (reads are resolved, writes refused)."""

OFF_SURFACE = frozenset({"collMod", "usersInfo", "getParameter", "setParameter"})
"""Commands mongoeco's wire surface lacks, answered by the executor (collMod: the course hides indexes;
setParameter: the transaction lifetime only)."""

OPEN_COMMAND_KINDS = frozenset({"handshake", "authenticate", "sasl_start", "sasl_continue", "logout"})
"""Command kinds a connection may send before it authenticates (hello and the SCRAM conversation)."""

COLL_MOD_OPTIONS = frozenset(
    {
        "collMod",
        "index",
        "validator",
        "validationLevel",
        "validationAction",
        "comment",
        "$db",
        "lsid",
        "$readPreference",
        "$clusterTime",
        "txnNumber",
        "autocommit",
    }
)
VALIDATION_LEVELS = ("off", "strict", "moderate")
VALIDATION_ACTIONS = ("error", "warn")


INDEX_OPTIONS = frozenset({"name", "unique", "sparse", "hidden", "expireAfterSeconds", "collation"})
"""Index options copied when a collection moves to another database."""


def dollar_in_id(document: Any) -> bool:
    """Whether a document's ``_id`` is a document with a ``$``-prefixed field (MongoDB refuses to store it)."""
    identifier = document.get("_id") if isinstance(document, Mapping) else None
    return isinstance(identifier, Mapping) and any(str(key).startswith("$") for key in identifier)


def across_databases(command: Mapping[str, Any]) -> bool:
    """Whether a ``renameCollection`` moves a collection to another database (mongoeco refuses that)."""
    source, target = str(command.get("renameCollection", "")), str(command.get("to", ""))
    return "." in source and "." in target and source.split(".", 1)[0] != target.split(".", 1)[0]


def ends_in_out(command: Mapping[str, Any]) -> bool:
    pipeline = command.get("pipeline")
    return (
        bool(pipeline) and isinstance(pipeline, list) and isinstance(pipeline[-1], Mapping) and ("$out" in pipeline[-1])
    )


MECHANISMS = ("SCRAM-SHA-256",)
"""mongoeco 4.11.0's SCRAM-SHA-1 does not verify pymongo's proofs; SHA-256 is MongoDB's default anyway."""

USER = "workbook"
"""The offline server's only user; its password is generated per process and never written down."""

RUNNING: list[OfflineServer] = []
"""The process's offline server once :func:`workbook.offline.offline_server` has started it (at most one)."""

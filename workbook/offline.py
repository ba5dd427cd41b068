"""The offline default: mongoeco's in-memory engine, served over the MongoDB wire protocol inside
this process, so learners (and the test suite) use a real pymongo client with no server to install.

Why this design (measured 2026-11-30, mongoeco 4.11.0; maintainers' notes in docs/offline-engine.md):

- mongoeco's own in-process client is not pymongo (no ``Cursor.collation``, no ``Database.client``);
  its wire server gives real pymongo objects, so a learner's code cannot tell the engines apart.
- Three subclasses carry the workbench's fixes, each in its own module, imported only when the
  server starts (they import mongoeco): :class:`workbook.offline_engine.WorkbenchEngine` (storage:
  the 16 MiB limit with MongoDB's codes, linear inserts, a race-free unique index build),
  :class:`workbook.offline_executor.WorkbenchExecutor` (commands: each rewrite or answer is one entry
  in :data:`COMMAND_HOOKS` or :func:`workbook.offline_commands.rewrite`) and
  :class:`workbook.offline_executor.WorkbenchProxy` (installs the executor and the credentials).
- Every private mongoeco name used comes from :mod:`workbook.engine_compat`, whose contract
  test names whatever a mongoeco upgrade moved.
- The server is this process's alone: it listens on 127.0.0.1 and requires a user and password
  generated for this process (SCRAM-SHA-256); :func:`workbook.connect` passes them, nobody else
  has them. Each upstream-worthy fix is written up in ``patches/``.

Nothing starts at import: the server starts on the first :func:`offline_server` call.
"""

from __future__ import annotations

import asyncio
import secrets
import sys
import threading
from collections.abc import Coroutine, Iterable, Mapping
from typing import Any, TypeVar
from urllib.parse import quote_plus

from workbook import engine_compat, offline_commands
from workbook.facts import BAD_VALUE, MAX_BSON_SIZE, UNAUTHORIZED
from workbook.lazy_imports import defer_iri_grammar
from workbook.offline_commands import (
    COMMAND_HOOKS,
    MECHANISMS,
    USER,
    WRITE_LISTENERS,
    register_command,
)
from workbook.offline_limits import WORK_COUNTERS, engine_bson_size

__all__ = [
    "BAD_VALUE",
    "COMMAND_HOOKS",
    "MAX_BSON_SIZE",
    "USER",
    "WORK_COUNTERS",
    "WRITE_LISTENERS",
    "OfflineServer",
    "engine_bson_size",
    "offline_server",
    "register_command",
]

PACKAGE = "mongoeco"
_T = TypeVar("_T")

SWITCH_INTERVAL = 0.001
"""Seconds a thread may hold the GIL while another waits for it, while the offline server runs.

The engine, the wire server and the learner's client are three threads of one process. Python's
default (5 ms) lets a CPU-bound engine command hold the GIL for 5 ms at every hop a ``ping``
makes between them (a dozen hops each way): pings took 230-510 ms during a 50,000-document
``delete_many``, 18-25 ms at 1 ms, with the delete itself as fast (1.84 s against 1.92 s,
measured 2026-12-02). A thread that waits for nothing never asks, so a kernel with no server
work pays nothing."""


def _hand_back[T](network: asyncio.AbstractEventLoop, task: asyncio.Task[T], outcome: asyncio.Future[T]) -> None:
    """On the engine loop, once ``task`` is done: give its outcome to the network loop (unless that loop is closed,
    the server stopping, as asyncio's own chained futures do)."""
    if not network.is_closed():
        network.call_soon_threadsafe(_copy_outcome, task, outcome)


def _copy_outcome[T](task: asyncio.Task[T], outcome: asyncio.Future[T]) -> None:
    """Give ``outcome`` (on the network loop) what the engine loop's ``task`` ended with, unless it was given up."""
    if outcome.done():
        if not task.cancelled():
            task.exception()  # read, so asyncio does not report it as never retrieved
        return
    if task.cancelled():
        outcome.cancel()
    elif (error := task.exception()) is not None:
        outcome.set_exception(error)
    else:
        outcome.set_result(task.result())


class OfflineServer:
    """The engine on its own event loop thread, and its wire server on 127.0.0.1 on another.

    Two loops so a long engine command (a big unindexed ``$lookup`` takes minutes) never stalls the
    wire: handshakes, heartbeats and authentication are answered on the network loop while every
    command that touches data runs, one at a time as before, on the engine loop.
    """

    def __init__(self) -> None:
        defer_iri_grammar()  # before the first mongoeco import: see workbook.lazy_imports
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))  # a lower setting is kept
        from mongoeco.api import AsyncMongoClient

        from workbook.offline_engine import WorkbenchEngine
        from workbook.offline_executor import WorkbenchProxy

        _proxy, _executor, user_class = engine_compat.wire_classes()
        self.engine = WorkbenchEngine(aggregation_materialization_limit=None)
        self._client = AsyncMongoClient(self.engine)
        self._password = secrets.token_urlsafe(24)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="workbook-engine", daemon=True)
        self._thread.start()
        self._network_loop = asyncio.new_event_loop()
        self._network_thread = threading.Thread(
            target=self._network_loop.run_forever, name="workbook-offline-wire", daemon=True
        )
        self._network_thread.start()
        self._proxy = WorkbenchProxy(
            server=self,
            client=self._client,
            host="127.0.0.1",
            port=0,
            auth_users=(user_class(username=USER, password=self._password, mechanisms=MECHANISMS),),
        )
        address = asyncio.run_coroutine_threadsafe(self._proxy.start(), self._network_loop).result()
        self.host, self.port = str(address.host), int(address.port)
        self.uri = (
            f"mongodb://{USER}:{quote_plus(self._password)}@{self.host}:{self.port}/"
            "?directConnection=true&authSource=admin&authMechanism=SCRAM-SHA-256"
        )
        """The URI with this process's credentials: only :func:`workbook.connect` should need it."""
        self.address_uri = f"mongodb://{self.host}:{self.port}/?directConnection=true"
        """The address without credentials (what another process could find by scanning ports)."""
        self._check_hooks()

    def _check_hooks(self) -> None:
        """Fail loudly, with the fix, unless the workbench's wire hooks answer: a find's explain is the
        planner model's, and a command without credentials is refused with MongoDB's code 13."""
        from pymongo import MongoClient
        from pymongo.errors import OperationFailure

        from workbook.errors import OfflineEngineBrokenError
        from workbook.planner import MODELLED_FIELD

        fix = (
            f"Reinstall the pinned engine (pip install 'mongoeco=={engine_compat.TESTED_VERSION}'), or run "
            "tests/test_engine_compat.py to see which private names moved; or use a real MongoDB (MONGODB_URI)."
        )
        problems = engine_compat.problems() + engine_compat.instance_problems(self.engine, self._proxy)
        client: MongoClient[dict[str, Any]]
        anonymous: MongoClient[dict[str, Any]]
        with MongoClient(self.uri, serverSelectionTimeoutMS=5000) as client:
            explained: dict[str, Any] = client["workbench_selfcheck"]["c"].find({"a": 1}).explain()
        if MODELLED_FIELD not in explained:
            problems.append("a find's explain came back unmodelled (the explain hook did not answer)")
        with MongoClient(self.address_uri, serverSelectionTimeoutMS=5000) as anonymous:
            try:
                anonymous["workbench_selfcheck"].command("find", "c")
                problems.append("a find without credentials was answered (the authentication hook did not refuse it)")
            except OperationFailure as error:
                if error.code != UNAUTHORIZED:
                    problems.append(f"a find without credentials failed with code {error.code}, not {UNAUTHORIZED}")
        if problems:
            raise OfflineEngineBrokenError(
                f"The offline default (mongoeco {engine_compat.installed_version()}) does not answer as the "
                "workbench needs: " + "; ".join(problems), fix=fix,
            )  # fmt: skip

    @property
    def version(self) -> str:
        """The installed mongoeco version."""
        return engine_compat.installed_version()

    def run(self, coroutine: Coroutine[Any, Any, _T]) -> _T:
        """Run a coroutine on the engine's event loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    async def on_engine(self, coroutine: Coroutine[Any, Any, _T]) -> _T:
        """Await, from the network loop, a coroutine run on the engine loop.

        Every command that touches data crosses here, so the crossing is kept to one call each way: the
        engine loop starts the coroutine as it takes the call (an eager task: one that ends without waiting
        is never scheduled again), and its outcome comes back by one ``call_soon_threadsafe`` onto the
        network loop. ``run_coroutine_threadsafe`` added a ``concurrent.futures.Future`` (a lock and a
        condition) and two chained callbacks: a bare crossing took 320-380 us on this machine that way,
        225-230 us this way (``ping`` over the wire: 890-950 us). If the network side stops waiting (its
        client went away), the engine's task is cancelled, as before.
        """
        network = asyncio.get_running_loop()
        outcome: asyncio.Future[_T] = network.create_future()
        started: list[asyncio.Task[_T]] = []

        def start() -> None:
            task = asyncio.Task(coroutine, loop=self._loop, eager_start=True)
            started.append(task)
            task.add_done_callback(lambda done: _hand_back(network, done, outcome))

        self._loop.call_soon_threadsafe(start)
        try:
            return await outcome
        except asyncio.CancelledError:
            # after start in the engine loop's queue, so the task is there to cancel (a no-op once it is done)
            self._loop.call_soon_threadsafe(lambda: [task.cancel() for task in started])
            raise

    def bulk_insert(self, db_name: str, coll_name: str, documents: Iterable[Mapping[str, Any]]) -> int:
        """Insert many documents straight into the engine (the fast path for loads); returns the count.

        Skips the driver-facing layer (its deep copies and per-value checks) but not the engine's
        own: validators, unique indexes and the 16 MiB limit all apply. Stops at the first
        rejected document, like an ordered ``insert_many``.
        """
        from bson import ObjectId
        from mongoeco.errors import WriteError

        batch = [{"_id": ObjectId(), **d} if "_id" not in d else dict(d) for d in documents]
        if not batch:
            return 0
        from workbook.offline_explain import hook_for  # explain hook: a write no command shows

        writes = hook_for(self.engine).writes
        writes.bump(db_name, coll_name)
        try:
            outcomes = self.run(self.engine.insert_documents(db_name, coll_name, batch))
        finally:
            writes.bump(db_name, coll_name)
        inserted = sum(1 for outcome in outcomes if outcome)
        if inserted != len(batch):
            rejected = batch[inserted]
            raise WriteError(
                f"E11000 duplicate key error collection: {db_name}.{coll_name}: document {inserted} "
                f"(_id {rejected['_id']!r}) repeats a unique key (_id or a unique index); "
                f"{inserted} inserted before it",
                code=11000,
            )
        for listener in WRITE_LISTENERS:
            listener("insert", db_name, coll_name)
        return inserted


_server_lock = threading.Lock()


def offline_server() -> OfflineServer:
    """The process's offline server, started on first use (and kept in ``offline_commands.RUNNING``)."""
    with _server_lock:
        if not offline_commands.RUNNING:
            offline_commands.RUNNING.append(OfflineServer())
        return offline_commands.RUNNING[0]

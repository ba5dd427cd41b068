"""Transactions on the offline default conflict per document, as MongoDB's do.

MongoDB runs transactions under snapshot isolation with "first updater wins" (see the manual's
transactions production considerations, "In-progress Transactions and Write Conflicts"):

- a transaction that writes a document another open transaction already wrote, or one committed
  (by anyone) after this transaction's snapshot was taken, fails at once with WriteConflict (code
  112, label ``TransientTransactionError``) and is aborted; drivers' ``with_transaction`` retries;
- a write outside any transaction to a document an open transaction wrote waits until that
  transaction commits or aborts, then runs against what it left (its ``maxTimeMS``, if given,
  bounds the wait with MaxTimeMSExpired, code 50);
- a transaction open longer than ``transactionLifetimeLimitSeconds`` (60 s unless ``setParameter``
  lowered it when the transaction started) is aborted when something waits on it or when its own next
  command arrives, and its later commands answer NoSuchTransaction (251).

mongoeco 4.11.0 instead refuses any commit once anything was committed after the snapshot, and its
commit replaces every collection the transaction touched with the transaction's copy. The class
built by :func:`engine_class` tracks which documents each open transaction wrote and commits
those documents only. Every private mongoeco name used here is listed in
:data:`workbook.engine_compat.PRIVATE_NAMES`; the upstream note is ``patches/transactions.md``.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import time
from collections.abc import Callable, Mapping
from typing import Any

from workbook.errors import DocumentHeld
from workbook.facts import TRANSIENT_TRANSACTION_ERROR

WRITE_CONFLICT, MAX_TIME_MS_EXPIRED, NO_SUCH_TRANSACTION = 112, 50, 251

TRANSACTION_LIFETIME_LIMIT_SECONDS = 60.0
"""MongoDB's default ``transactionLifetimeLimitSeconds``: older transactions are aborted."""

DocumentKey = tuple[str, str, Any]
"""``(database, collection, storage key)``: one document, as the engine stores it."""


@dataclasses.dataclass
class OpenTransaction:
    """One open transaction: its mongoeco session, snapshot, and the documents it wrote."""

    session: Any
    snapshot_version: int
    started: float
    limit: float = TRANSACTION_LIFETIME_LIMIT_SECONDS
    written: set[DocumentKey] = dataclasses.field(default_factory=set)
    waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = dataclasses.field(default_factory=list)

    @property
    def expires(self) -> float:
        """The monotonic time after which the transaction may be aborted as expired."""
        return self.started + self.limit


def _wake(waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]) -> None:
    """Resolve the futures of writes waiting on a transaction, from whichever thread ends it."""
    for loop, future in waiters:
        loop.call_soon_threadsafe(_resolve, future)
    waiters.clear()


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def write_conflict(message: str) -> Exception:
    """A WriteConflict as MongoDB sends it: code 112, ``TransientTransactionError``, for the whole command."""
    return transient_error(message, WRITE_CONFLICT, "WriteConflict")


def transient_error(message: str, code: int, code_name: str) -> Exception:
    """A command error with ``TransientTransactionError`` (mongoeco would otherwise report it as a writeError)."""
    from workbook import engine_compat

    error: Exception = engine_compat.command_error(message, code, code_name, (TRANSIENT_TRANSACTION_ERROR,))
    return error


class TransactionTable:
    """Who holds which document, and when each document was last committed while transactions were open."""

    def __init__(self) -> None:
        self.open: dict[Any, OpenTransaction] = {}
        self.holders: dict[DocumentKey, Any] = {}
        self.committed: dict[DocumentKey, int] = {}
        self.expired: set[tuple[Any, int]] = set()
        self.counters = {"write_conflicts": 0, "waits": 0, "expired": 0}
        self.lifetime_limit: float | None = None
        """``transactionLifetimeLimitSeconds`` as ``setParameter`` set it; None: the default (60 s)."""

    def limit(self) -> float:
        """The lifetime a transaction starting now gets, in seconds (MongoDB fixes it at the start)."""
        return TRANSACTION_LIFETIME_LIMIT_SECONDS if self.lifetime_limit is None else self.lifetime_limit

    def claim(self, session_id: Any, document: DocumentKey, snapshot_version: int) -> None:
        """A transaction writes ``document``: first updater wins, the other gets a write conflict."""
        holder = self.holders.get(document)
        if holder is not None and holder != session_id:
            self.counters["write_conflicts"] += 1
            raise write_conflict(
                f"WriteConflict: {_describe(document)} is being written by another transaction; "
                "this transaction was aborted (retry it: with_transaction does)"
            )
        if self.committed.get(document, -1) > snapshot_version:
            self.counters["write_conflicts"] += 1
            raise write_conflict(
                f"WriteConflict: {_describe(document)} was changed after this transaction started; "
                "this transaction was aborted (retry it: with_transaction does)"
            )
        self.holders[document] = session_id
        self.open[session_id].written.add(document)

    def plain_write(self, document: DocumentKey, version: int) -> None:
        """A write outside any transaction: wait if a transaction holds the document, else note its version."""
        holder = self.holders.get(document)
        if holder is not None:
            raise DocumentHeld(holder)
        self.committed[document] = version

    def end(self, session_id: Any, *, committed_version: int | None) -> None:
        """A transaction committed (at ``committed_version``) or aborted: release and wake its waiters."""
        transaction = self.open.pop(session_id, None)
        if transaction is None:
            return
        for document in transaction.written:
            if self.holders.get(document) == session_id:
                del self.holders[document]
            if committed_version is not None:
                self.committed[document] = committed_version
        _wake(transaction.waiters)
        self._forget_old_versions()

    def _forget_old_versions(self) -> None:
        """Versions older than every open snapshot can conflict with nothing: drop them (all, when none is open)."""
        if not self.open:
            self.committed.clear()
            return
        oldest = min(transaction.snapshot_version for transaction in self.open.values())
        self.committed = {document: version for document, version in self.committed.items() if version > oldest}


def _describe(document: DocumentKey) -> str:
    db_name, coll_name, key = document
    identifier = key[-1] if isinstance(key, tuple) and len(key) == 2 else key  # mongoeco keys are (type, value)
    return f"the document with _id {identifier!r} in {db_name}.{coll_name}"


def _max_time_ms(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
    """The ``maxTimeMS`` of an engine write call, if its operation carries one."""
    for value in (*args, *kwargs.values()):
        limit = getattr(value, "max_time_ms", None)
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
            return limit
    return None


def engine_class(base: type) -> type:
    """``base`` (mongoeco's memory engine, or a subclass) with per-document transaction conflicts."""
    from mongoeco.errors import OperationFailure

    engine_base: Any = base

    class PerDocumentTransactions(engine_base):
        """Transactions that conflict only on the documents they write, and commit only those."""

        _transactions: TransactionTable

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._transactions = TransactionTable()

        # --- transaction lifetime -------------------------------------------------------------

        def _start_session_transaction(self, session: Any) -> None:
            self._expire_old_transactions()
            super()._start_session_transaction(session)
            with self._meta_lock:
                state = self._mvcc_states[session.session_id]
                self._transactions.open[session.session_id] = OpenTransaction(
                    session, state.snapshot_version, time.monotonic(), self._transactions.limit()
                )

        def _commit_session_transaction(self, session: Any) -> None:
            table = self._transactions
            with self._meta_lock:
                snapshot = self._mvcc_states.get(session.session_id)
                if snapshot is not None and snapshot.has_writes:
                    self._check_whole_namespaces(snapshot)
                    self._check_unique_at_commit(session.session_id, snapshot)
                    # Conflicts were checked document by document as the transaction wrote.
                    snapshot.snapshot_version = self._mvcc_version
                super()._commit_session_transaction(session)
                table.end(session.session_id, committed_version=self._mvcc_version)

        def _abort_session_transaction(self, session: Any) -> None:
            super()._abort_session_transaction(session)
            with self._meta_lock:
                self._transactions.end(session.session_id, committed_version=None)

        def _expire_old_transactions(self) -> None:
            """Abort transactions past their lifetime, as MongoDB's periodic cleanup does."""
            now = time.monotonic()
            with self._meta_lock:
                old = [t for t in self._transactions.open.values() if t.expires <= now]
            for transaction in old:
                self.expire(transaction.session)

        def expire(self, session: Any) -> None:
            """Abort ``session``'s transaction as expired: its later commands answer NoSuchTransaction."""
            with self._meta_lock:
                self._transactions.expired.add((session.session_id, session.transaction_number))
                self._transactions.counters["expired"] += 1
            if session.transaction_active:
                session.abort_transaction()

        # --- who writes which document ---------------------------------------------------------

        def _set_storage_document_locked(self, collection: Any, storage_key: Any, document: Any) -> None:
            self._note_write(collection, storage_key)
            super()._set_storage_document_locked(collection, storage_key, document)

        def _delete_storage_document_locked(self, collection: Any, storage_key: Any) -> None:
            self._note_write(collection, storage_key)
            super()._delete_storage_document_locked(collection, storage_key)

        def _note_write(self, collection: Any, storage_key: Any) -> None:
            table = self._transactions
            if not table.open:  # no transaction open: nothing can conflict (and loads pay nothing)
                return
            publication = self._publication_stack[-1] if self._publication_stack else None
            state = publication.state if publication is not None else None
            storage = self._storage if state is None else state.storage
            namespace = _namespace_of(storage, collection, publication)
            if namespace is None:
                return
            document = (*namespace, storage_key)
            if state is None:
                table.plain_write(document, self._mvcc_version + 1)  # the version this write publishes
                return
            session_id = next((sid for sid, s in self._mvcc_states.items() if s is state), None)
            if session_id is not None and session_id in table.open:
                table.claim(session_id, document, state.snapshot_version)

        # --- writes outside a transaction wait for the one holding their document --------------

        async def _waiting(self, call: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            started = time.monotonic()
            while True:
                try:
                    return await call(*args, **kwargs)
                except DocumentHeld as held:
                    limit = _max_time_ms(args, kwargs) or _command_max_time_ms.get()
                    await self._wait_for(held.holder, None if limit is None else started + limit / 1000)

        async def _wait_for(self, holder: Any, deadline: float | None) -> None:
            loop = asyncio.get_running_loop()
            with self._meta_lock:
                transaction = self._transactions.open.get(holder)
                if transaction is None:
                    return
                future: asyncio.Future[None] = loop.create_future()
                transaction.waiters.append((loop, future))
                self._transactions.counters["waits"] += 1
            until = transaction.expires if deadline is None else min(deadline, transaction.expires)
            try:
                await asyncio.wait_for(future, timeout=max(0.0, until - time.monotonic()))
            except TimeoutError:
                if deadline is not None and deadline <= transaction.expires:
                    raise OperationFailure(
                        "operation exceeded time limit (maxTimeMS) waiting for a transaction that holds "
                        "the document to commit or abort",
                        code=MAX_TIME_MS_EXPIRED,
                    ) from None
                self.expire(transaction.session)

        async def insert_documents(self, *args: Any, **kwargs: Any) -> Any:
            return await self._waiting(super().insert_documents, args, kwargs)

        async def update_with_operation(self, *args: Any, **kwargs: Any) -> Any:
            return await self._waiting(super().update_with_operation, args, kwargs)

        async def delete_with_operation(self, *args: Any, **kwargs: Any) -> Any:
            return await self._waiting(super().delete_with_operation, args, kwargs)

        async def merge_document(self, *args: Any, **kwargs: Any) -> Any:
            return await self._waiting(super().merge_document, args, kwargs)

        async def delete_document(self, *args: Any, **kwargs: Any) -> Any:
            return await self._waiting(super().delete_document, args, kwargs)

        # --- commit: only the documents the transaction wrote -----------------------------------

        def _check_unique_at_commit(self, session_id: Any, snapshot: Any) -> None:
            """Two writers of one unique key never both commit: the later commit is a write conflict."""
            from mongoeco.errors import DuplicateKeyError

            for db_name, coll_name, key in self._document_writes(session_id, snapshot):
                indexes = self._indexes.get(db_name, {}).get(coll_name, [])
                if not any(index.unique and index.name != "_id_" for index in indexes):
                    continue
                stored = snapshot.storage.get(db_name, {}).get(coll_name, {})
                if key not in stored:
                    continue
                try:
                    self._ensure_unique_indexes(
                        db_name, coll_name, self._borrow_storage_document(stored[key]), exclude_storage_key=key
                    )
                except DuplicateKeyError as error:
                    raise OperationFailure(f"Write conflict during transaction commit: {error}") from error

        def _check_whole_namespaces(self, snapshot: Any) -> None:
            """A collection committed whole (created, indexed, dropped in the transaction) conflicts with any
            commit to it after the snapshot, as mongoeco's own check does for everything."""
            whole = self._whole_namespaces(snapshot)
            for (db_name, coll_name, _key), version in self._transactions.committed.items():
                if version > snapshot.snapshot_version and ((db_name, coll_name) in whole or db_name in whole):
                    raise OperationFailure(
                        f"Write conflict during transaction commit: {db_name}.{coll_name}, which this "
                        "transaction created or changed beyond its documents, was written after it started"
                    )

        def _document_writes(self, session_id: Any, snapshot: Any) -> list[DocumentKey]:
            """The documents of ``session_id``'s transaction that can be committed one by one."""
            transaction = self._transactions.open.get(session_id)
            if transaction is None:
                return []
            whole = self._whole_namespaces(snapshot)
            return [d for d in transaction.written if (d[0], d[1]) not in whole and d[0] not in whole]

        def _whole_namespaces(self, snapshot: Any) -> set[Any]:
            """Namespaces (and databases) the transaction changed beyond documents: committed as mongoeco does."""
            whole: set[Any] = set(snapshot.touched_databases)
            for db_name, coll_name in snapshot.touched_namespaces:
                same = (
                    coll_name in self._storage.get(db_name, {})
                    and coll_name in snapshot.storage.get(db_name, {})
                    and self._indexes.get(db_name, {}).get(coll_name, [])
                    == snapshot.indexes.get(db_name, {}).get(coll_name, [])
                    and self._collection_options.get(db_name, {}).get(coll_name)
                    == snapshot.collection_options.get(db_name, {}).get(coll_name)
                )
                if not same:
                    whole.add((db_name, coll_name))
            return whole

        def _prepare_transaction_write_set_locked(self, snapshot: Any) -> Any:
            session_id = next((sid for sid, s in self._mvcc_states.items() if s is snapshot), None)
            whole = self._whole_namespaces(snapshot)
            namespaces = {ns for ns in snapshot.touched_namespaces if ns in whole}
            roots = super()._prepare_transaction_write_set_locked(
                dataclasses.replace(snapshot, touched_namespaces=namespaces)
            )
            for db_name, coll_name, key in self._document_writes(session_id, snapshot):
                self._commit_document(snapshot, db_name, coll_name, key)
            return roots

        def _commit_document(self, snapshot: Any, db_name: str, coll_name: str, key: Any) -> None:
            """Install one document the transaction wrote (or deleted) in the live collection and its indexes."""
            live = self._storage[db_name][coll_name]
            mine = snapshot.storage.get(db_name, {}).get(coll_name, {})
            old = live.get(key)
            new = mine.get(key)
            if old is new:
                return
            views = {"index_data_view": self._index_data, "indexes_view": self._indexes}
            if old is not None:
                self._update_indexes_locked(
                    db_name, coll_name, key, self._borrow_storage_document(old), action="delete", **views
                )
            if new is None:
                del live[key]
                return
            live[key] = new  # in place: a replaced document keeps its natural order
            self._update_indexes_locked(
                db_name, coll_name, key, self._borrow_storage_document(new), action="insert", **views
            )

    return PerDocumentTransactions


def _namespace_of(storage: Any, collection: Any, publication: Any) -> tuple[str, str] | None:
    """Which ``(database, collection)`` of ``storage`` the collection object is."""
    candidates = list(publication.touched_namespaces) if publication is not None else []
    for db_name, coll_name in candidates:
        if storage.get(db_name, {}).get(coll_name) is collection:
            return db_name, coll_name
    for db_name, collections in storage.items():
        for coll_name, candidate in collections.items():
            if candidate is collection:
                return db_name, coll_name
    return None


def _expired_error(session: Any, limit: float) -> Exception:
    return transient_error(
        f"Transaction {session.transaction_number} has been aborted: it was open longer than "
        f"transactionLifetimeLimitSeconds ({limit:g} s). Commit or abort a transaction promptly "
        "(with_transaction does)",
        NO_SUCH_TRANSACTION,
        "NoSuchTransaction",
    )


_command_max_time_ms: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "workbook_command_max_time_ms", default=None
)
"""The ``maxTimeMS`` of the wire command being answered (mongoeco's write commands do not pass it on)."""


def before_command(engine: Any, body: Mapping[str, Any], session: Any) -> None:
    """Called by the executor before each command: note its ``maxTimeMS`` (the engine task inherits it),
    and answer NoSuchTransaction for a command of a transaction the server aborted as expired."""
    limit = body.get("maxTimeMS")
    limit = getattr(limit, "value", limit)
    _command_max_time_ms.set(int(limit) if isinstance(limit, int | float) and not isinstance(limit, bool) else None)
    table = table_of(engine)
    if body.get("autocommit") is not False or table is None or session is None:
        return
    key = (getattr(session, "session_id", None), getattr(session, "transaction_number", None))
    transaction = table.open.get(key[0])
    if transaction is not None and not body.get("startTransaction") and transaction.expires <= time.monotonic():
        engine.expire(transaction.session)  # past its lifetime: MongoDB's periodic job would have aborted it
    if key in table.expired:
        raise _expired_error(session, transaction.limit if transaction is not None else table.limit())


LIFETIME_PARAMETER = "transactionLifetimeLimitSeconds"
SORT_MEMORY_PARAMETER = "internalQueryMaxBlockingSortMemoryUsageBytes"
SETTABLE = (LIFETIME_PARAMETER, SORT_MEMORY_PARAMETER)
"""The server parameters the offline default lets ``setParameter`` change (the transactions' lifetime here,
the blocking sort's memory in :mod:`workbook.offline_reads`)."""


def get_parameters(engine: Any) -> dict[str, Any]:
    """What ``getParameter`` reports of the settable parameters: the transaction lifetime in whole seconds,
    and the memory a blocking sort may hold, in bytes."""
    from workbook.offline_reads import layer_of

    table, layer = table_of(engine), layer_of(engine)
    found: dict[str, Any] = {} if table is None else {LIFETIME_PARAMETER: int(table.limit())}
    if layer is not None:
        found[SORT_MEMORY_PARAMETER] = int(layer.sort_memory_limit)
    return found


def set_parameter(engine: Any, db_name: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """``setParameter`` of one of :data:`SETTABLE`, as MongoDB answers it (``was`` holds the old value)."""
    from mongoeco.errors import OperationFailure

    from workbook.offline_reads import layer_of

    if db_name != "admin":
        raise OperationFailure("setParameter may only be run against the admin database.", code=13)
    names = [k for k in body if k != "setParameter" and not k.startswith("$") and k not in ("lsid", "comment")]
    table, layer = table_of(engine), layer_of(engine)
    if len(names) != 1 or names[0] not in SETTABLE or table is None or layer is None:
        raise OperationFailure(
            f"Attempted to set unsupported parameter(s) {names}: the offline default sets one of "
            f"{', '.join(SETTABLE)} at a time (for anything else, use a MongoDB server)",
            code=72,
        )
    value = body[names[0]]
    value = getattr(value, "value", value)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 1 or value != int(value):
        raise OperationFailure(f"{names[0]} must be a whole number, at least 1", code=2)
    if names[0] == SORT_MEMORY_PARAMETER:
        was = int(layer.sort_memory_limit)
        layer.sort_memory_limit = int(value)
        return {"was": was, "ok": 1.0}
    was = int(table.limit())
    table.lifetime_limit = float(value)
    return {"was": was, "ok": 1.0}


def table_of(engine: Any) -> TransactionTable | None:
    """The transaction table of an offline engine (None for an engine without per-document conflicts)."""
    table = getattr(engine, "_transactions", None)
    return table if isinstance(table, TransactionTable) else None

"""Atomicity, shown live: one-document updates, transactions, and what is not atomic.

Each function runs one small experiment on the learner's own database and returns what happened,
counted from the driver's side (round trips, commands, attempts), so notebook 08 can assert it on
the offline default and on a real replica set alike. Nothing here measures time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from pymongo.client_session import ClientSession
from pymongo.collection import Collection
from pymongo.database import Database
from pymongo.errors import OperationFailure, PyMongoError
from pymongo.read_concern import ReadConcern
from pymongo.write_concern import WriteConcern

from workbook.calls import Work, measure_call
from workbook.errors import OperationRejectedError, WorkbookError
from workbook.facts import NO_SUCH_TRANSACTION
from workbook.facts import WRITE_CONFLICT as WRITE_CONFLICT  # notebook 08 reads atomicity.WRITE_CONFLICT

Document = dict[str, Any]

TRANSACTION_LIFETIME_SECONDS = 60
"""MongoDB's default ``transactionLifetimeLimitSeconds``: a transaction still open after it is aborted."""


class _Shown:
    """An experiment's result shown as labelled values (``workbook.display.record``), not a dataclass repr."""

    def labelled(self) -> dict[str, Any]:
        """The values a learner reads, by label."""
        raise NotImplementedError

    def record(self) -> Any:
        """The result as a :class:`workbook.display.Record`."""
        from workbook.display import record

        return record(self.labelled(), caption=str(self.__doc__ or "").splitlines()[0].rstrip("."))

    def __repr__(self) -> str:
        return repr(self.record())

    def _repr_html_(self) -> str:
        return str(self.record()._repr_html_())


def compare_work(runs: dict[str, Work]) -> pd.DataFrame:
    """One row per named run: round trips, transactions committed, and the commands in order."""
    rows = [
        {
            "write": name,
            "round trips": work.round_trips,
            "transactions": work.transactions,
            "commands": ", ".join(work.commands),
        }
        for name, work in runs.items()
    ]
    return pd.DataFrame(rows).set_index("write")


def measured(action: Callable[[], Any]) -> Work:
    """Run ``action`` and count its round trips and the commands it sent."""
    return measure_call(None, action)


# --- one document: stock and the order together -------------------------------------------------------


def flash_sale(db: Database, product: Document, *, name: str = "flash_sale") -> Collection:
    """A collection holding one sale document: a product's stock with the orders taken against it, embedded."""
    sale = db[name]
    sale.drop()
    sale.insert_one(
        {
            "_id": product["_id"],
            "name": product["name"],
            "price": product["price"],
            "stock": product["stock"],
            "orders": [],
        }
    )
    return sale


def order_in_one_document(sale: Collection, product_id: str, customer_id: str, quantity: int) -> bool:
    """Take stock and record the order in one update of one document; False when stock is short."""
    if quantity < 1:
        raise OperationRejectedError(f"Cannot order {quantity}: a quantity is at least 1.", fix="Pass quantity=1.")
    result = sale.update_one(
        {"_id": product_id, "stock": {"$gte": quantity}},
        {"$inc": {"stock": -quantity}, "$push": {"orders": {"customerId": customer_id, "quantity": quantity}}},
    )
    return result.modified_count == 1


# --- update_many is atomic per document only ------------------------------------------------------------


@dataclass(repr=False)
class PartialUpdate(_Shown):
    """What an update_many that failed midway left behind."""

    error_code: int | None
    failing_id: Any
    changed: list[Any] = field(default_factory=list)
    unchanged: list[Any] = field(default_factory=list)

    def labelled(self) -> dict[str, Any]:
        return {
            "error code": str(self.error_code),
            "failing document _id": self.failing_id,
            "changed (stock 5 → 4)": ", ".join(map(str, self.changed)) or "none",
            "unchanged": ", ".join(map(str, self.unchanged)) or "none",
        }


def update_many_midway_failure(db: Database, *, count: int = 6, empty: int = 4, name: str = "shelf") -> PartialUpdate:
    """Take one unit from ``count`` shelves whose validator forbids negative stock; shelf ``empty`` has none.

    ``update_many`` updates documents one by one: those before the failing one stay changed.
    """
    if not 1 <= empty <= count:
        raise WorkbookError(f"empty must be between 1 and {count}, not {empty}.", fix="Pass empty=4.")
    db.drop_collection(name)
    shelves = db.create_collection(
        name, validator={"$jsonSchema": {"properties": {"stock": {"bsonType": "int", "minimum": 0}}}}
    )
    shelves.insert_many([{"_id": number, "stock": 0 if number == empty else 5} for number in range(1, count + 1)])
    code, failing = None, None
    try:
        shelves.update_many({}, {"$inc": {"stock": -1}})
    except OperationFailure as error:
        code = error.code
        failing = (error.details or {}).get("errInfo", {}).get("failingDocumentId")
    after = {document["_id"]: document["stock"] for document in shelves.find()}
    changed = sorted(key for key, stock in after.items() if stock == 4)
    unchanged = sorted(key for key, stock in after.items() if stock in (0, 5))
    return PartialUpdate(code, failing, changed, unchanged)


# --- with_transaction retries a write conflict -----------------------------------------------------------


@dataclass(repr=False)
class RetryReport(_Shown):
    """What with_transaction did when a concurrent write collided with its transaction."""

    attempts: int
    counter: int
    errors: list[tuple[int | None, list[str]]]

    @property
    def retries(self) -> int:
        """How many times the callback ran again after the first attempt."""
        return self.attempts - 1

    def labelled(self) -> dict[str, Any]:
        errors = "; ".join(f"code {code} ({', '.join(labels)})" for code, labels in self.errors) or "none"
        return {"attempts": self.attempts, "errors retried": errors, "counter after": self.counter}


def increment_with_conflict(collection: Collection, *, key: str = "likes") -> RetryReport:
    """Increment a counter in a transaction while another client changes it once; return the attempts.

    On the first attempt, a write outside the transaction changes the same document after the
    transaction read it. The server answers the transaction's write (or its commit) with a write
    conflict (code 112) labelled ``TransientTransactionError``; ``with_transaction`` then aborts and
    runs the callback again, which succeeds. Both increments survive: no update is lost.
    """
    client = collection.database.client
    collection.replace_one({"_id": key}, {"_id": key, "count": 0}, upsert=True)
    attempts = 0
    errors: list[tuple[int | None, list[str]]] = []

    def callback(session: ClientSession) -> None:
        nonlocal attempts
        attempts += 1
        collection.find_one({"_id": key}, session=session)  # the transaction's snapshot starts here
        if attempts == 1:
            collection.update_one({"_id": key}, {"$inc": {"count": 1}})  # someone else, outside it
        try:
            collection.update_one({"_id": key}, {"$inc": {"count": 1}}, session=session)
        except PyMongoError as error:
            errors.append(_labels(error))
            raise

    with client.start_session() as session:
        commit = session.commit_transaction

        def recorded_commit() -> None:
            # An engine may find the conflict at commit instead of at the write: record it there too.
            try:
                commit()
            except PyMongoError as error:
                errors.append(_labels(error))
                raise

        session.commit_transaction = recorded_commit  # type: ignore[method-assign]
        session.with_transaction(callback, read_concern=ReadConcern("snapshot"), write_concern=WriteConcern("majority"))
    document = collection.find_one({"_id": key}) or {}
    return RetryReport(attempts, int(document.get("count", 0)), errors)


def _labels(error: PyMongoError) -> tuple[int | None, list[str]]:
    """An error's code and its error labels."""
    code = getattr(error, "code", None)
    details = getattr(error, "details", None) or {}
    return code, list(details.get("errorLabels", []))


# --- the transaction lifetime ---------------------------------------------------------------------------


def transaction_lifetime(db: Database) -> int | None:
    """The server's ``transactionLifetimeLimitSeconds``, or None when the engine does not report one."""
    try:
        reply = db.client.admin.command("getParameter", 1, transactionLifetimeLimitSeconds=1)
    except OperationFailure:
        return None
    value = reply.get("transactionLifetimeLimitSeconds")
    return int(value) if value is not None else None


@dataclass(repr=False)
class OutlivedTransaction(_Shown):
    """A transaction left open past its lifetime while another write waited for its document."""

    limit_seconds: int
    restored_seconds: int
    waited_seconds: float
    commit_code: int | None
    commit_labels: list[str]
    document: Document

    @property
    def aborted(self) -> bool:
        """True when the commit answered NoSuchTransaction (251): the server had aborted it."""
        return self.commit_code == NO_SUCH_TRANSACTION

    def labelled(self) -> dict[str, Any]:
        answer = "committed" if self.commit_code is None else f"code {self.commit_code}"
        if self.aborted:
            answer += " NoSuchTransaction"
        if self.commit_labels:
            answer += f", label {', '.join(self.commit_labels)}"
        return {
            "transactionLifetimeLimitSeconds (set, then restored)": (self.limit_seconds, self.restored_seconds),
            "the restock waited": f"{self.waited_seconds:.1f} s",
            "the late commit answered": answer,
            "stock after (5, − 1 in the transaction, + 10 outside)": self.document.get("stock"),
        }


def outlive_transaction(db: Database, *, limit_seconds: int = 1, name: str = "lifetime") -> OutlivedTransaction:
    """Lower ``transactionLifetimeLimitSeconds`` to ``limit_seconds``, open a transaction that takes one unit
    of stock and never commits in time, and restock the same document from outside it.

    The restock waits for the transaction's document until the server aborts the transaction as
    expired; the late commit then fails with NoSuchTransaction. The limit is set back in any case.
    """
    if limit_seconds < 1:
        raise OperationRejectedError(
            f"limit_seconds must be at least 1 (got {limit_seconds})", fix="pass limit_seconds=1 or more"
        )
    admin = db.client.admin
    try:
        was = int(admin.command("setParameter", 1, transactionLifetimeLimitSeconds=limit_seconds)["was"])
    except OperationFailure as error:
        raise WorkbookError(
            f"this server refused setParameter transactionLifetimeLimitSeconds: {error}",
            fix="run it as a user with the setParameter privilege (the course's Docker server allows it)",
        ) from error
    shelf = db[name]
    shelf.drop()
    shelf.insert_one({"_id": "lamp", "stock": 5})
    code: int | None = None
    labels: list[str] = []
    try:
        with db.client.start_session() as session:
            session.start_transaction()
            shelf.update_one({"_id": "lamp"}, {"$inc": {"stock": -1}}, session=session)
            waited = _waited(lambda: shelf.update_one({"_id": "lamp"}, {"$inc": {"stock": 10}}), limit_seconds)
            try:
                session.commit_transaction()
            except OperationFailure as error:
                code, labels = _labels(error)
    finally:
        admin.command("setParameter", 1, transactionLifetimeLimitSeconds=was)
    return OutlivedTransaction(limit_seconds, was, waited, code, labels, shelf.find_one({"_id": "lamp"}) or {})


def _waited(write: Callable[[], Any], expected_seconds: float) -> float:
    """Run a write that may block, with a progress bar of the seconds it has waited; returns them."""
    import threading
    import time

    from workbook.waiting import busy

    done = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            write()
        except BaseException as error:  # re-raised in the caller's thread
            failure.append(error)
        finally:
            done.set()

    started = time.monotonic()
    threading.Thread(target=run, daemon=True).start()
    # the course's waiting bar: shown past a second, removed when the write goes through (no stale "0.0 s" left)
    with busy("the restock waits", estimate_s=expected_seconds):
        done.wait()
    if failure:
        raise failure[0]
    return time.monotonic() - started

"""What every shape's operations class shares: the names, ``run`` by name, and transactions."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, ClassVar, TypeVar

from pymongo.client_session import ClientSession
from pymongo.database import Database

from workbook.errors import UnknownChoiceError

_T = TypeVar("_T")


def bson_time(moment: datetime | None = None) -> datetime:
    """``moment`` (default: now, UTC) at BSON's millisecond precision, so it reads back unchanged."""
    moment = moment or datetime.now(UTC)
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


class Operations:
    """The operations of one dataset in one shape; the same names give the same answers in every shape."""

    dataset: ClassVar[str]
    shape: ClassVar[str]
    NAMES: ClassVar[tuple[str, ...]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Check every operation's arguments against its declaration on the dataset's base class."""
        super().__init_subclass__(**kwargs)
        from workbook.operations.arguments import check_arguments

        for name in getattr(cls, "NAMES", ()):
            own = cls.__dict__.get(name)
            if own is None:
                continue
            declared = next(base.__dict__[name] for base in reversed(cls.__mro__) if name in base.__dict__)
            setattr(cls, name, check_arguments(own, declared, name))

    def __init__(self, db: Database, *, learner: str | None = None) -> None:
        """Operations on ``db``, which must be one of ``learner``'s databases (default: this learner's)."""
        from workbook.namespace import require_own_database

        if getattr(type(db), "writes_refused", False) is not True:  # the doctor's read-only view reads any database
            require_own_database(db.name, learner=learner)  # operations write: only ever to the learner's own databases
        self.db = db

    def __repr__(self) -> str:
        return f"<{self.dataset} operations, {self.shape} shape, database {self.db.name}: {', '.join(self.NAMES)}>"

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The operation names, in workload order."""
        return cls.NAMES

    def get(self, name: str) -> Callable[..., Any]:
        """The operation called ``name`` (an error lists the valid names)."""
        if name not in self.NAMES:
            raise UnknownChoiceError(f"{self.dataset} operation", name, self.NAMES)
        return getattr(self, name)

    def run(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Run the operation called ``name``."""
        return self.get(name)(*args, **kwargs)

    def in_transaction(self, body: Callable[[ClientSession | None], _T]) -> _T:
        """``body(session)`` in one transaction, retried on a write conflict as drivers retry
        (``ClientSession.with_transaction``: a ``TransientTransactionError`` runs ``body`` again, up
        to 120 s); on a standalone server, ``body(None)`` with plain writes. Other errors abort it
        and reach the caller."""
        from workbook.connection import engine_info

        if not engine_info(self.db).transactions:
            return body(None)
        with self.db.client.start_session() as session:
            return session.with_transaction(body)

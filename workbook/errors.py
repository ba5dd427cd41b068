"""One error hierarchy for the workbench: every error says what went wrong and how to fix it.

A learner runs cells, not programs, so in a notebook these errors render as a short message
with the fix instead of a wall of traceback (IPython calls ``_render_traceback_``).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path


class WorkbookError(Exception):
    """Base of every error the workbench raises on purpose."""

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        self.message = message
        self.fix = fix
        super().__init__(self.__str__())

    def __str__(self) -> str:
        return self.message if not self.fix else f"{self.message}\nFix: {self.fix}"

    def _render_traceback_(self) -> list[str]:
        """What IPython shows instead of a traceback."""
        return [f"{type(self).__name__}: {self.message}"] + ([f"Fix: {self.fix}"] if self.fix else [])


class UnknownChoiceError(WorkbookError, ValueError):
    """Raised when a name (dataset, shape, scale, operation, ...) is not one of the valid ones."""

    def __init__(self, kind: str, value: object, choices: Iterable[str]) -> None:
        self.kind = kind
        self.value = value
        self.choices = sorted(choices)
        closest = difflib.get_close_matches(str(value), self.choices, n=1)
        hint = f" Did you mean {closest[0]!r}?" if closest else ""
        super().__init__(f"Unknown {kind} {value!r}. Choose from: {', '.join(self.choices)}.{hint}")


class ConnectionFailedError(WorkbookError):
    """Raised when a configured MongoDB server cannot be reached in time."""


class OfflineEngineBrokenError(WorkbookError):
    """Raised at the offline default's start when its wire hooks do not answer as they must (a mongoeco
    that moved internals the workbench patches): explain would silently stop being modelled."""


class InvalidURIError(WorkbookError, ValueError):
    """Raised when a MongoDB URI cannot be parsed."""


class NamespaceError(WorkbookError, ValueError):
    """Raised when an operation would touch a database outside the workbench's own."""


class NamespaceWarning(UserWarning):
    """Warned when the learner name falls back to the OS user because WORKBOOK_LEARNER is blank."""


class OperationRejectedError(WorkbookError):
    """Raised when a workload operation cannot be carried out on the data (e.g. out of stock)."""


class ArgumentTypeError(WorkbookError, TypeError):
    """Raised when an argument has the wrong type: the message names the type expected and an example."""

    def __init__(
        self, name: str, value: object, expected: str, *, fix: str | None = None, choices: Iterable[str] | None = None
    ) -> None:
        self.name = name
        self.value = value
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        listed = f" Choose from: {', '.join(choices)}." if choices is not None else ""
        super().__init__(f"{name} must be {expected}, not {type(value).__name__} {shown}.{listed}", fix=fix)


class ArgumentOutOfRangeError(WorkbookError, ValueError):
    """Raised when a count or number is outside what a call accepts (too small, or so large it would run for hours)."""


class NotLoadedError(WorkbookError):
    """Raised when a database does not hold a complete load of the dataset and shape asked for
    (nothing loaded, a load interrupted or still running, or since replaced by another load)."""


class LoadInProgressError(WorkbookError):
    """Raised when a load starts while another load into the same database is still running."""


class CacheFolderError(WorkbookError, PermissionError):
    """Raised when the snapshot cache folder is owned by another user or writable by group or others."""


class LoadInterruptedError(WorkbookError):
    """Raised in a load whose database was dropped under it (``workbook.reset()`` or a drop) meanwhile."""


class ExplainError(WorkbookError, ValueError):
    """Raised when a query cannot be explained: bad arguments, a hint naming no index, or a query
    the offline planner model does not cover."""


class UnsupportedByModelError(ExplainError):
    """Raised when a query needs a MongoDB feature the offline planner model does not cover."""


class UnknownHintError(ExplainError):
    """Raised, as MongoDB does, when a hint names no existing (visible) index."""


class InvalidQueryError(ExplainError):
    """Raised, as MongoDB does (BadValue, code 2), for a filter MongoDB refuses but the offline
    engine would answer (``{$options: "i"}`` without ``$regex``): the offline default refuses it too."""

    code: int = 2
    """MongoDB's error code for the refusal (2, BadValue, unless MongoDB gives the case its own)."""


class DiffcheckNeedsServerError(WorkbookError):
    """Raised when the differential check is run without a real MongoDB server to compare with."""


class ProgressFileError(WorkbookError, ValueError):
    """Raised when a progress file exists but cannot be read as one, or cannot be saved."""


class ProgressFileWarning(UserWarning):
    """Warned when an unreadable progress file is moved aside and a new one started, or a save failed."""


class QuizFileError(WorkbookError, ValueError):
    """Raised when a question or answer file cannot be read or does not follow its schema."""

    def __init__(self, path: Path | str, line: int | None, problem: str, *, fix: str | None = None) -> None:
        self.path = Path(path)
        self.line = line
        self.problem = problem
        where = f"{self.path}:{line}" if line else str(self.path)
        super().__init__(f"{where}: {problem}", fix=fix)


class AnswerError(WorkbookError, ValueError):
    """Raised when an answer has the wrong form for its question (e.g. text for a number)."""


class ReadOnlyViolation(WorkbookError):
    """Raised when code running under the schema doctor tries to write; it is stopped before anything is sent."""


class DoctorOutOfTime(Exception):
    """Raised inside the schema doctor when its time budget is spent; the doctor reports which checks did not run."""


class ScaleRefusedError(WorkbookError, ValueError):
    """Raised when a scale is too big for the engine it would load into (``large`` on the offline default)."""


class BulkLoadFallback(Exception):  # noqa: N818 - a signal, never shown to a learner
    """Internal: the bulk loader (workbook/bulkload.py) leaves this document or collection to the engine's path."""


class NotPlain(Exception):  # noqa: N818 - a signal, never shown to a learner
    """Internal (workbook/wire_form.py): a value wire_form does not reproduce exactly; decode the BSON instead."""


class CodecFallback(Exception):  # noqa: N818 - a signal, never shown to a learner
    """Internal (workbook/offline_codec.py): a document mongoeco's original codec function must take whole."""


class ParallelArraysError(Exception):
    """Internal (workbook/planner/keys.py): two paths of one compound key meet two different arrays
    (MongoDB refuses such keys; the planner turns it into MongoDB's BadValue)."""


class DocumentHeld(Exception):  # noqa: N818 - a signal; MongoDB's internal name is a WriteConflictException
    """Internal (workbook/offline_transactions.py): a write outside any transaction met a document an open
    transaction holds; it is retried after that transaction ends."""

    def __init__(self, holder: object) -> None:
        super().__init__(f"document held by an open transaction (session {holder})")
        self.holder = holder

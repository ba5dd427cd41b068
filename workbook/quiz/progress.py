"""A learner's progress: one JSON file per learner, merged and rewritten atomically after every attempt.

The file lives in ``WORKBOOK_PROGRESS_DIR`` (default ``~/.workbook/progress``), named after the
learner's key (``workbook.namespace.learner_name()``). It is a file, so it survives kernel restarts.

- Atomic: written to a temporary file in the same folder, fsync-ed, then ``os.replace``-d, so a
  crash mid-write leaves the previous version whole.
- Locked and merged: an attempt is recorded while holding ``<file>.lock`` (``filelock``), on top of
  the file as it is on disk at that moment, so two kernels or processes answering for one learner
  never lose each other's attempts.
- Never silently rewritten: a file that cannot be read as this format (not UTF-8, not JSON, wrong
  types, a newer ``format``) is moved aside to ``<file>.unreadable-<time>`` with a warning that
  says where, and a new file is started.
"""

from __future__ import annotations

import json
import os
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import filelock

from workbook.errors import ProgressFileError, ProgressFileWarning
from workbook.lazy_imports import load_jsonschema
from workbook.namespace import learner_name

if TYPE_CHECKING:
    import jsonschema
    import pandas as pd

FORMAT = 1
"""Version of the progress file's layout."""

LOCK_TIMEOUT_S = 10.0
"""How long a save waits for another process's save of the same file before giving up."""

_ENTRY = {
    "type": "object",
    "required": ["attempts", "correct", "solved"],
    "properties": {
        "attempts": {"type": "integer", "minimum": 0},
        "correct": {"type": "integer", "minimum": 0},
        "solved": {"type": "boolean"},
        "solved_at_attempt": {"type": ["integer", "null"], "minimum": 1},
        "first_attempt": {"type": "string"},
        "last_attempt": {"type": "string"},
    },
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["questions"],
    "properties": {
        "format": {"const": FORMAT},
        "learner": {"type": "string"},
        "questions": {"type": "object", "additionalProperties": _ENTRY},
    },
}
"""What a progress file holds (JSON Schema): checked on every read."""


@cache
def _validator() -> jsonschema.Draft202012Validator:
    """:data:`SCHEMA`'s validator, built once."""
    return load_jsonschema().Draft202012Validator(SCHEMA)


def all_done(solved: int, total: int) -> str:
    """What follows "N of M questions solved": ", all done" once every question counted is solved.

    >>> all_done(41, 41), all_done(36, 41)
    (', all done', '')
    """
    return ", all done" if total and solved >= total else ""


def progress_dir() -> Path:
    """Where progress files live: ``WORKBOOK_PROGRESS_DIR`` > ``~/.workbook/progress`` (read at call time)."""
    configured = os.environ.get("WORKBOOK_PROGRESS_DIR", "").strip()
    return Path(configured).expanduser() if configured else Path.home() / ".workbook" / "progress"


def progress_path(learner: str | None = None) -> Path:
    """The learner's progress file."""
    return progress_dir() / f"{learner_name(learner)}.json"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def write_atomically(path: Path, document: Any) -> None:
    """Replace ``path`` with ``document`` as JSON; readers see the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(document, stream, indent=2, sort_keys=True)
            stream.write("\n")
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_progress_file(path: Path) -> dict[str, Any]:
    """A progress file's contents (learner and per-question counts), checked against :data:`SCHEMA`."""
    try:
        document = json.loads(path.read_bytes().decode("utf-8"))
    except OSError as error:
        raise ProgressFileError(f"{path} cannot be read ({error.strerror}).", fix="Check its permissions.") from None
    except UnicodeDecodeError as error:
        raise ProgressFileError(
            f"{path} is not a progress file: not UTF-8 text (byte {error.start}).", fix="Move it aside."
        ) from None
    except json.JSONDecodeError as error:
        raise ProgressFileError(
            f"{path} is not a progress file: not JSON ({error.msg}, line {error.lineno}).", fix="Move it aside."
        ) from None
    if isinstance(document, dict) and document.get("format", FORMAT) != FORMAT:
        raise ProgressFileError(
            f"{path} has format {document.get('format')!r}; this workbook reads format {FORMAT}.",
            fix="Upgrade the workbook (it was written by another version), or move the file aside.",
        )
    problem = load_jsonschema().exceptions.best_match(_validator().iter_errors(document))
    if problem is not None:
        where = "/".join(str(step) for step in problem.absolute_path) or "(top level)"
        raise ProgressFileError(f"{path} is not a progress file: at {where}, {problem.message}.", fix="Move it aside.")
    return dict(document)


def move_aside(path: Path, reason: str) -> Path:
    """Rename an unreadable progress file to ``<name>.unreadable-<time>`` and warn where it went."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    aside = path.with_name(f"{path.name}.unreadable-{stamp}")
    os.replace(path, aside)
    warnings.warn(
        f"{reason} It was moved aside to {aside} and a new progress file is started at {path}.",
        ProgressFileWarning,
        stacklevel=3,
    )
    return aside


def _read_or_move_aside(path: Path) -> dict[str, dict[str, Any]]:
    """The questions in ``path`` (empty when missing); an unreadable file is moved aside (hold the lock)."""
    if not path.exists():
        return {}
    try:
        return dict(read_progress_file(path)["questions"])
    except ProgressFileError as error:
        if not path.exists() or not os.access(path, os.R_OK):
            raise
        move_aside(path, error.message)
        return {}


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold ``<path>.lock`` (one writer at a time, across processes); clean up dead temporary files."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = filelock.FileLock(path.with_name(path.name + ".lock"), timeout=LOCK_TIMEOUT_S, poll_interval=0.005)
    try:
        lock.acquire()
    except filelock.Timeout:
        raise ProgressFileError(
            f"{path} is being saved by another process for more than {LOCK_TIMEOUT_S:.0f} s.",
            fix="Try again; if it persists, close the other notebook answering as this learner.",
        ) from None
    try:
        for leftover in path.parent.glob(f".{path.name}.*.tmp"):  # no writer is alive while we hold the lock
            leftover.unlink(missing_ok=True)
        yield
    finally:
        lock.release()


def _merge(mine: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """One question's entry from two copies: the one with more attempts (ties: the later one)."""
    if not mine:
        return theirs
    key = (mine.get("attempts", 0), mine.get("last_attempt") or "")
    return mine if key >= (theirs.get("attempts", 0), theirs.get("last_attempt") or "") else theirs


@dataclass
class Progress:
    """One learner's attempts per question, backed by their progress file."""

    learner: str = field(default_factory=learner_name)
    path: Path | None = None
    questions: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def file(self) -> Path:
        """The progress file this object reads and writes."""
        return self.path or progress_path(self.learner)

    @classmethod
    def load(cls, learner: str | None = None, path: Path | str | None = None) -> Progress:
        """The learner's progress as saved (empty if none; an unreadable file is moved aside with a warning)."""
        name = learner_name(learner)
        target = Path(path) if path is not None else progress_path(name)
        progress = cls(name, target)
        try:  # writes are atomic: reading needs no lock
            progress.questions = dict(read_progress_file(target)["questions"]) if target.exists() else {}
        except ProgressFileError:
            with _locked(target):  # move it aside only while no one else is writing it
                progress.questions = _read_or_move_aside(target)
        return progress

    def record(self, question_id: str, correct: bool) -> dict[str, Any]:
        """Count one attempt on top of the file as saved now, and save; returns the question's entry."""
        with _locked(self.file):
            self.questions = _read_or_move_aside(self.file)
            now = _now()
            entry = self.questions.setdefault(
                question_id, {"attempts": 0, "correct": 0, "solved": False, "first_attempt": now}
            )
            entry["attempts"] += 1
            entry["correct"] += int(bool(correct))
            if correct and not entry["solved"]:
                entry["solved"] = True
                entry["solved_at_attempt"] = entry["attempts"]
            entry["last_attempt"] = now
            self._write()
        return entry

    def save(self) -> None:
        """Write the progress file atomically, merged with what other processes saved meanwhile."""
        with _locked(self.file):
            saved = _read_or_move_aside(self.file)
            for question_id, entry in saved.items():
                self.questions[question_id] = _merge(self.questions.get(question_id, {}), entry)
            self._write()

    def _write(self) -> None:
        write_atomically(self.file, {"format": FORMAT, "learner": self.learner, "questions": self.questions})

    def to_frame(self) -> pd.DataFrame:
        """One row per question: attempts, correct attempts, solved, on which attempt."""
        import pandas as pd

        columns = ["attempts", "correct", "solved", "solved_at_attempt", "last_attempt"]
        rows = [{"question": q, **{c: e.get(c) for c in columns}} for q, e in sorted(self.questions.items())]
        frame = pd.DataFrame(rows, columns=["question", *columns]).set_index("question")
        return frame.astype({"solved_at_attempt": "Int64"})

    def banks_total(self) -> set[str]:
        """Every question in the banks this learner has answered from (what "of N" counts)."""
        from workbook.quiz.bank import all_questions

        questions = all_questions()
        banks = {questions[q].get("bank") for q in self.questions if q in questions}
        return {q for q, question in questions.items() if question.get("bank") in banks}

    def summary(self) -> str:
        """A few lines for the terminal: totals, then one line per question."""
        if not self.questions:
            return f"{self.learner}: no answers recorded yet ({self.file})."
        solved = sum(e["solved"] for e in self.questions.values())
        attempts = sum(e["attempts"] for e in self.questions.values())
        asked = len(self.questions)
        total = len(self.banks_total()) or asked
        lines = [
            f"{self.learner}: {solved} of {total} questions solved{all_done(solved, total)}, "
            f"{attempts} attempts on {asked} ({self.file})",
            "",
            self.to_frame().fillna("").to_string(),
        ]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        import html

        if not self.questions:
            return f"<p>{html.escape(self.learner)}: no answers recorded yet.</p>"
        solved = sum(e["solved"] for e in self.questions.values())
        total = len(self.banks_total()) or len(self.questions)
        frame = self.to_frame()[["attempts", "solved", "solved_at_attempt"]]
        return (
            f"<p><b>{html.escape(self.learner)}</b>: {solved} of {total} questions solved{all_done(solved, total)} "
            f"({len(self.questions)} tried)</p>" + frame.to_html(na_rep="")
        )

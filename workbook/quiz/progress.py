"""A learner's progress: one JSON file per learner, rewritten atomically after every attempt.

The file lives in ``WORKBOOK_PROGRESS_DIR`` (default ``~/.workbook/progress``), named after the
learner (``workbook.namespace.learner_name()``). It is a file, so it survives kernel restarts;
it is replaced atomically (temporary file in the same folder, fsync, ``os.replace``), so a crash
mid-write leaves the previous version whole.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbook.errors import ProgressFileError
from workbook.namespace import learner_name

if TYPE_CHECKING:
    import pandas as pd

FORMAT = 1
"""Version of the progress file's layout."""




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
    """A progress file's contents (learner and per-question counts)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise ProgressFileError(
            f"{path} is not a readable progress file ({error}).", fix="Move it aside; a new one is started."
        ) from None
    if not isinstance(document, dict) or not isinstance(document.get("questions"), dict):
        raise ProgressFileError(f"{path} is not a progress file (no 'questions').", fix="Move it aside.")
    return document


@dataclass
class Progress:
    """One learner's attempts per question, backed by their progress file."""

    learner: str = field(default_factory=learner_name)
    path: Path | None = None
    questions: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(cls, learner: str | None = None, path: Path | str | None = None) -> Progress:
        """The learner's progress as saved (empty if they have not answered anything yet)."""
        name = learner_name(learner)
        target = Path(path) if path is not None else progress_path(name)
        progress = cls(name, target)
        if target.exists():
            progress.questions = read_progress_file(target)["questions"]
        return progress

    def record(self, question_id: str, correct: bool) -> dict[str, Any]:
        """Count one attempt and save; returns the question's updated entry."""
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
        self.save()
        return entry

    def save(self) -> None:
        """Write the progress file atomically."""
        target = self.path or progress_path(self.learner)
        write_atomically(target, {"format": FORMAT, "learner": self.learner, "questions": self.questions})

    def to_frame(self) -> pd.DataFrame:
        """One row per question: attempts, correct attempts, solved, on which attempt."""
        import pandas as pd

        columns = ["attempts", "correct", "solved", "solved_at_attempt", "last_attempt"]
        rows = [{"question": q, **{c: e.get(c) for c in columns}} for q, e in sorted(self.questions.items())]
        frame = pd.DataFrame(rows, columns=["question", *columns]).set_index("question")
        return frame.astype({"solved_at_attempt": "Int64"})

    def summary(self) -> str:
        """A few lines for the terminal: totals, then one line per question."""
        where = self.path or progress_path(self.learner)
        if not self.questions:
            return f"{self.learner}: no answers recorded yet ({where})."
        solved = sum(e["solved"] for e in self.questions.values())
        attempts = sum(e["attempts"] for e in self.questions.values())
        lines = [
            f"{self.learner}: {solved} of {len(self.questions)} questions solved, {attempts} attempts ({where})",
            "",
            self.to_frame().fillna("").to_string(),
        ]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.summary()

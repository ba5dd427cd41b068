"""Quiz progress on the shared MongoDB server, for a workshop: one document per learner and question.

When ``MONGODB_URI`` is set, every graded attempt goes to the workbench's own database
(:data:`DATABASE`, collection :data:`COLLECTION`) instead of a file, so the instructor reads the
class live (``class-report --server``) and needs no folder of files. Offline learners keep the file
store (``progress.py``); ``python -m workbook progress-import FOLDER`` moves files onto the server.

No attempt is lost across kernels: each attempt is one atomic upsert (``$inc`` the counts, ``$push``
the attempt onto its log), so two kernels of one learner never read-modify-write the same document;
``solved_at_attempt`` is read from the log's order (the server's), never stored.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from pymongo import ASCENDING, MongoClient
from pymongo.collection import Collection
from pymongo.errors import DuplicateKeyError, PyMongoError

from workbook.errors import WorkbookError
from workbook.namespace import PREFIX, learner_name

DATABASE = PREFIX + "_progress"
"""The workbench's own database for the class's progress (no learner key starts with ``_``, so none collides)."""
COLLECTION = "attempts"
ROW_COLUMNS = ["learner", "question", "attempts", "correct", "solved", "solved_at_attempt"]


def collection(client: MongoClient | None = None) -> Collection:
    """The progress collection on the configured server (``MONGODB_URI``)."""
    from workbook.connection import client_for, resolve_uri

    if client is None:
        if resolve_uri() is None:
            raise WorkbookError(
                "No MongoDB server is configured, so there is no server progress to read or write.",
                fix="Set MONGODB_URI to the workshop's server (the hub sets it), or use the progress files.",
            )
        client = client_for()
    return client[DATABASE][COLLECTION]


def record(question_id: str, correct: bool, *, learner: str | None = None, coll: Collection | None = None) -> None:
    """Count one attempt: a single atomic upsert, so concurrent kernels of one learner lose nothing."""
    target = coll if coll is not None else collection()
    now = datetime.now(UTC)
    update = {
        "$inc": {"attempts": 1, "correct": int(bool(correct))},
        "$push": {"log": {"at": now, "correct": bool(correct)}},
        "$setOnInsert": {"first_attempt": now},
        "$max": {"last_attempt": now},
    }
    key = {"_id": {"learner": learner_name(learner), "question": question_id}}
    try:
        try:
            target.update_one(key, update, upsert=True)
        except DuplicateKeyError:  # two first attempts raced to insert: the loser's update now matches
            target.update_one(key, update, upsert=True)
    except PyMongoError as error:  # the grade still stands; check() and the widget warn with this
        raise WorkbookError(
            f"The attempt could not be saved on the server ({type(error).__name__}).",
            fix="Check MONGODB_URI and the network, or unset MONGODB_URI to keep progress in a file.",
        ) from None


def _entry(document: dict[str, Any]) -> dict[str, Any]:
    log = document.get("log", [])
    solved_at = next((index for index, attempt in enumerate(log, start=1) if attempt["correct"]), None)
    return {
        "learner": document["_id"]["learner"],
        "question": document["_id"]["question"],
        "attempts": int(document.get("attempts", 0)),
        "correct": int(document.get("correct", 0)),
        "solved": solved_at is not None or int(document.get("correct", 0)) > 0,
        "solved_at_attempt": solved_at,
    }


def learner_rows(coll: Collection | None = None) -> pd.DataFrame:
    """One row per (learner, question) as on the server now: the same rows ``report.learner_rows`` reads from files."""
    target = coll if coll is not None else collection()
    rows = [
        _entry(document) for document in target.find({}, sort=[("_id.learner", ASCENDING), ("_id.question", ASCENDING)])
    ]
    return pd.DataFrame(rows, columns=ROW_COLUMNS)


def learner_questions(learner: str | None = None, coll: Collection | None = None) -> dict[str, dict[str, Any]]:
    """One learner's entries per question, in the progress file's form."""
    target = coll if coll is not None else collection()
    entries = {}
    for document in target.find({"_id.learner": learner_name(learner)}):
        entry = _entry(document)
        entries[entry["question"]] = {key: entry[key] for key in ("attempts", "correct", "solved", "solved_at_attempt")}
    return entries


def import_files(folder: Path | str, coll: Collection | None = None) -> int:
    """Add the progress files in ``folder`` to the server (counts added, solved kept); returns attempts imported.

    Each file's attempts are added with ``$inc`` like live ones, and its solving attempt is logged in
    its place, so importing after a learner worked offline adds to what they did online.
    """
    from workbook.quiz.progress import read_progress_file

    target = coll if coll is not None else collection()
    folder = Path(folder)
    if not folder.is_dir():
        raise WorkbookError(
            f"{folder} is not a folder.", fix="Pass the folder holding the learners' <name>.json files."
        )
    imported = 0
    for path in sorted(folder.glob("*.json")):
        document = read_progress_file(path)
        for question_id, entry in document["questions"].items():
            attempts = int(entry["attempts"])
            solved_at = entry.get("solved_at_attempt") if entry.get("solved") else None
            log = [{"at": None, "correct": solved_at == index} for index in range(1, attempts + 1)]
            target.update_one(
                {"_id": {"learner": path.stem, "question": question_id}},
                {"$inc": {"attempts": attempts, "correct": int(entry["correct"])}, "$push": {"log": {"$each": log}}},
                upsert=True,
            )
            imported += attempts
    return imported

"""Quizzes: questions as data, graded in the kernel, progress kept in a file per learner.

Three calls cover a notebook:

- ``show("reading-1")`` returns the question as a widget: pick or type, press Check, retry at will;
- ``check("reading-1", "a")`` grades a typed answer and returns a :class:`Result`;
- ``prepare("design-category-index")`` sets up the learner's database for a design task.

Every graded attempt is recorded in the learner's progress file (see ``progress.py``).
Nothing happens at import: the bank is read on first use.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from workbook.errors import WorkbookError
from workbook.quiz.bank import all_questions, question
from workbook.quiz.grading import Result, grade_answer
from workbook.quiz.progress import Progress, ProgressFileWarning

if TYPE_CHECKING:
    from pymongo.database import Database

    from workbook.loaded import LoadedShape
    from workbook.quiz.widgets import QuestionWidget

__all__ = ["Progress", "Result", "check", "my_progress", "prepare", "questions", "quiz", "show"]


def task_database(question_id: str) -> Database:
    """The database a design task looks at: ``params.database`` in the learner's namespace."""
    from workbook.connection import connect

    return connect(database=question(question_id).get("params", {}).get("database", "quiz"), quiet=True)


def _database(db: Database | LoadedShape | None) -> Database | None:
    """The database to grade on: ``db`` itself, or the database of what ``load()`` returned (if still complete)."""
    from workbook.loaded import LoadedShape

    return db.check().db if isinstance(db, LoadedShape) else db


def _record(learner: str | None) -> Any:
    def record(result: Result) -> None:
        from workbook.connection import resolve_uri

        if resolve_uri() is not None:  # a workshop server: progress goes to its workbench database, live
            from workbook.quiz import server_progress

            server_progress.record(result.question_id, result.correct, learner=learner)
            return
        Progress.load(learner).record(result.question_id, result.correct)

    return record


def check(
    question_id: str,
    answer: Any = None,
    *,
    db: Database | LoadedShape | None = None,
    learner: str | None = None,
    record: bool = True,
) -> Result:
    """Grade ``answer`` to a question (design tasks look at ``db``, default: the task's database)."""
    db = _database(db)
    asked = question(question_id)
    if asked["type"] == "design" and db is None:
        db = task_database(question_id)
    result = grade_answer(asked, answer, db)
    if record:
        try:
            _record(learner)(result)
        except (OSError, WorkbookError) as error:  # the grade still counts for the learner reading it
            warnings.warn(f"Progress not saved: {error}", ProgressFileWarning, stacklevel=2)
    return result


def show(question_id: str, *, db: Database | LoadedShape | None = None, learner: str | None = None) -> QuestionWidget:
    """The question as a widget; each Check is graded here in the kernel and recorded."""
    from workbook.quiz.widgets import QuestionWidget

    db = _database(db)
    return QuestionWidget(
        question(question_id),
        database=(lambda: db) if db is not None else (lambda: task_database(question_id)),
        record=_record(learner),
    )


quiz = show
"""``quiz("reading-1")`` is ``show("reading-1")``."""


def prepare(question_id: str, *, db: Database | LoadedShape | None = None) -> Database:
    """Set up the learner's database for a design task; returns the database to work in."""
    from workbook.quiz.design import run_setup

    asked = question(question_id)
    given = _database(db)
    db = given if given is not None else task_database(question_id)
    print(run_setup(asked, db))
    return db


def my_progress(learner: str | None = None) -> Progress:
    """The learner's saved progress (attempts, correct answers, per question)."""
    return Progress.load(learner)


def questions() -> list[str]:
    """The ids of every question in the bank."""
    return sorted(all_questions())

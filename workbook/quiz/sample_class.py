"""A seeded sample class, for showing what an instructor's class report looks like.

It writes progress files for a few made-up learners (``sample-1.json``, ...) into a folder of its
own, ``<progress folder>/sample-class``: never the learner's own progress file, and never a file
whose name it did not make. The same seed gives the same class on every machine.
"""

from __future__ import annotations

import random
from pathlib import Path

import pandas as pd

from workbook.bounds import check_count
from workbook.quiz.bank import all_questions
from workbook.quiz.progress import FORMAT, progress_dir, write_atomically

SAMPLE_FOLDER = "sample-class"
"""The sample class's folder, inside the progress folder (the learner's own file sits beside it)."""

SAMPLE_PREFIX = "sample-"
"""Every sample learner's name starts with this; the folder's other files are never touched."""

WHEN = "2026-01-05T09:00:00+00:00"
"""One fixed time for every sample attempt, so the files are the same bytes on every run."""


def sample_folder() -> Path:
    """Where the sample class is written: a folder of its own inside the progress folder."""
    return progress_dir() / SAMPLE_FOLDER


def _course_questions() -> list[str]:
    """Question ids in course order: notebook banks first (nb00, nb01, ...), then the others."""
    questions = all_questions()
    return sorted(
        questions,
        key=lambda q: (not str(questions[q].get("bank", "")).startswith("nb"), questions[q].get("bank", ""), q),
    )


def write_sample_class(learners: int = 4, *, seed: int = 7) -> Path:
    """Write ``learners`` seeded sample learners' progress files; returns the folder.

    Each learner gets as far as a seeded number of questions into the course; on each question
    they try, a seeded number of wrong attempts comes before the right one (or they give up).
    """
    check_count("learners", learners, most=50, unit="sample learners")
    folder = sample_folder()
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob(f"{SAMPLE_PREFIX}*.json"):  # only the sample's own files: a fresh class each run
        old.unlink()
    course = _course_questions()
    rng = random.Random(f"sample-class:{seed}")
    for number in range(1, learners + 1):
        reached = rng.randint(len(course) // 4, len(course))
        entries = {}
        for question in course[:reached]:
            wrong = rng.choice((0, 0, 0, 1, 1, 2, 3))
            solved = rng.random() > 0.1
            attempts = wrong + int(solved)
            if attempts == 0:
                continue
            entry: dict[str, object] = {"attempts": attempts, "correct": int(solved), "solved": solved}
            entry.update(first_attempt=WHEN, last_attempt=WHEN)
            if solved:
                entry["solved_at_attempt"] = attempts
            entries[question] = entry
        name = f"{SAMPLE_PREFIX}{number}"
        write_atomically(folder / f"{name}.json", {"format": FORMAT, "learner": name, "questions": entries})
    return folder


def sample_rows(learners: int = 4, *, seed: int = 7) -> pd.DataFrame:
    """The sample class's rows (learner, question, attempts, ...), as the class view reads a real class."""
    from workbook.quiz.class_view import class_rows

    return class_rows(write_sample_class(learners, seed=seed))

"""``python -m workbook lab`` and ``python -m workbook test``: the Makefile's two commands for a learner
without ``make`` (on Windows, for instance), run with the Python that runs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from workbook.errors import UnknownChoiceError, WorkbookError

FIRST_NOTEBOOK = "notebooks/00_start_here.ipynb"


def course_root() -> Path:
    """The clone the package was installed from (editable install): the folder holding ``notebooks/``."""
    root = Path(__file__).resolve().parent.parent
    if not (root / FIRST_NOTEBOOK).is_file():
        raise WorkbookError(
            f"No course notebooks next to the workbook package (looked for {root / FIRST_NOTEBOOK}).",
            fix='From the course folder, install it editable: python -m pip install -e ".[test]"',
        )
    return root


def course_command(command: str) -> list[str]:
    """The process ``lab`` or ``test`` starts, as an argument list.

    >>> course_command("test")[1:]
    ['-m', 'pytest']
    """
    if command == "lab":
        return [sys.executable, "-m", "jupyter", "lab", FIRST_NOTEBOOK]
    if command == "test":
        return [sys.executable, "-m", "pytest"]
    raise UnknownChoiceError("course command", command, ["lab", "test"])


def run_course_command(command: str, uri: str | None = None) -> int:
    """Run ``workbook check`` (and, before ``lab``, ``workbook prepare``), then the command from the course
    folder; returns its exit code."""
    from workbook.check import main as check

    arguments = course_command(command)
    root = course_root()
    status = check(uri)
    if status != 0:
        return status
    if command == "lab":
        from workbook.prepare import prepare_course

        prepare_course(uri=uri)
    return subprocess.call(arguments, cwd=root)

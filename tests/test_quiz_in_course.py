"""Every bank question is shown by a notebook, so a learner who answers the course reaches "all done"."""

from __future__ import annotations

import json
import re
from pathlib import Path

from workbook.quiz.bank import all_questions
from workbook.quiz.progress import Progress

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
SHOWN = re.compile(r"""workbook\.quiz\.(?:show|quiz)\(\s*["']([^"']+)["']""")


def shown_in_course() -> dict[str, list[str]]:
    """Question id -> the notebooks whose code cells show it."""
    found: dict[str, list[str]] = {}
    for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                for question_id in SHOWN.findall("".join(cell["source"])):
                    found.setdefault(question_id, []).append(path.stem)
    return found


def test_every_bank_question_is_shown_by_exactly_one_notebook():
    shown = shown_in_course()
    bank = set(all_questions())
    assert sorted(bank - set(shown)) == []  # in the bank, in no notebook: progress could never complete
    assert sorted(set(shown) - bank) == []  # shown, but not in the bank: the cell would fail
    assert {q: where for q, where in shown.items() if len(where) > 1} == {}


def test_answering_every_question_the_course_shows_reaches_all_done(tmp_path):
    progress = Progress("ada", tmp_path / "ada.json")
    shown = sorted(shown_in_course())
    for question_id in shown[:-1]:
        progress.record(question_id, True)
    assert "all done" not in progress.summary()
    progress.record(shown[-1], True)
    total = len(all_questions())
    assert f"{total} of {total} questions solved, all done" in progress.summary()
    assert "all done" in progress._repr_html_()

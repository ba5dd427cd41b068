"""The course notebooks as files: stored with the outputs of a clean run (so nbval compares them),
each a lesson with a goal, a time, proofs and graded questions, and listed in the README."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SANITIZE = NOTEBOOKS / "sanitize.cfg"

COURSE = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
"""Every course notebook: none is exempt from the structure checks below."""


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def source(cell: dict) -> str:
    return "".join(cell["source"])


def test_the_course_has_its_first_notebooks():
    names = {p.stem for p in COURSE}
    assert {"00_start_here", "01_workload", "02_embed_reference_hybrid"} <= names


@pytest.mark.parametrize("path", COURSE, ids=lambda p: p.name)
def test_stored_with_the_outputs_of_one_clean_run(path: Path):
    code = [c for c in cells(path) if c["cell_type"] == "code"]
    counts = [c["execution_count"] for c in code]
    assert counts == list(range(1, len(code) + 1)), f"{path.name}: re-run top to bottom and save with outputs"
    tagged = [c for c in code if "raises-exception" in c.get("metadata", {}).get("tags", [])]
    failed = [
        source(c)[:60] for c in code if c not in tagged and any(o["output_type"] == "error" for o in c["outputs"])
    ]
    assert not failed
    for cell in tagged:  # a "try it" cell shows its error: a traceback, or a validator's reason first
        shown = [o.get("ename") or "".join(o.get("text", "")) for o in cell["outputs"]]
        assert shown and (cell["outputs"][0]["output_type"] == "error" or shown[0].startswith("Rejected by")), shown


LEARNER_CODE = "learner-code"
"""Cell tag for code the lesson asks the learner to write (the capstone's own shape): the one place a
cell may define functions, since writing them is the exercise."""


def code_outside_learner_code(path: Path) -> list[str]:
    """Sources of the code cells not tagged as the learner's own code."""
    return [
        source(c)
        for c in cells(path)
        if c["cell_type"] == "code" and LEARNER_CODE not in c.get("metadata", {}).get("tags", [])
    ]


def test_only_the_capstone_asks_for_learner_code():
    tagged = {
        path.name for path in COURSE for c in cells(path) if LEARNER_CODE in c.get("metadata", {}).get("tags", [])
    }
    assert tagged <= {"12_capstone.ipynb"}


@pytest.mark.parametrize("path", COURSE, ids=lambda p: p.name)
def test_a_lesson_with_a_goal_a_time_proofs_and_questions(path: Path):
    first = source(cells(path)[0])
    assert first.startswith("# ") and "**After this notebook you can**" in first and "**Time:**" in first
    code = [source(c) for c in cells(path) if c["cell_type"] == "code"]
    proofs = [c for c in code if c.startswith("# Proof:")]
    assert len(proofs) >= 3 and all("assert " in p for p in proofs)
    assert len([c for c in code if "workbook.quiz.show(" in c]) >= 2
    for cell in code_outside_learner_code(path):  # cells of one or two calls: no loops or function definitions
        body = [line for line in cell.splitlines() if line.strip() and not line.lstrip().startswith("#")]
        assert not any(line.lstrip().startswith(("def ", "for ", "while ", "class ")) for line in body), cell


@pytest.mark.parametrize("path", COURSE, ids=lambda p: p.name)
def test_nondeterministic_cells_are_marked(path: Path):
    for cell in cells(path):
        if cell["cell_type"] != "code":
            continue
        text = source(cell)
        first = text.splitlines()[0] if text else ""
        if first.startswith("# NBVAL_IGNORE_OUTPUT"):  # nbval reads the marker only when the comment holds nothing else
            assert first == "# NBVAL_IGNORE_OUTPUT", text
        widget = "explore(" in text or "what_if(" in text
        progress_bar = "workbook.load(" in text and "progress=False" not in text
        if widget or progress_bar:
            assert first == "# NBVAL_IGNORE_OUTPUT", text


def test_every_quiz_a_notebook_shows_exists():
    from workbook.quiz.bank import all_questions

    questions = all_questions()
    for path in COURSE:
        for cell in cells(path):
            for wanted in re.findall(r'quiz\.show\("([^"]+)"\)', source(cell)):
                assert wanted in questions, f"{path.name} shows unknown question {wanted}"


def test_the_readme_course_table_lists_every_notebook():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `(\d\d_[a-z0-9_]+)` \|", readme, flags=re.MULTILINE))
    assert listed == {p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")}


def test_the_sanitizer_masks_what_varies_and_keeps_the_numbers():
    from nbval.plugin import get_sanitize_patterns

    patterns = get_sanitize_patterns(SANITIZE.read_text(encoding="utf-8"))
    assert len(patterns) >= 8

    def clean(text: str) -> str:
        for regex, replace in patterns:
            text = re.sub(regex, replace, text)
        return text

    banner = "offline default (mongoeco 4.11.0, MongoDB 7.0.0 dialect) · database workbench_ada-l_store_hybrid"
    masked = "offline default (mongoeco VERSION, MongoDB VERSION dialect) · database workbench_LEARNER_store_hybrid"
    assert clean(banner) == masked
    assert clean("loaded in 12.4 s, 3 ms later") == "loaded in DURATION, DURATION later"
    assert clean("<Foo object at 0x7f3a2b1c9d80>") == "<Foo object at 0xADDRESS>"
    bar = "load store/hybrid:  45%|####5     | 900/2000 [00:01<00:02, 512.3doc/s]"
    assert clean(bar) == "PROGRESS"
    warning = "/tmp/ipykernel_16815/690642845.py:2: PerformanceWarning: dropping"
    assert clean(warning) == "/tmp/ipykernel_CELL.py:2: PerformanceWarning: dropping"
    kept = "20,025 documents, 3 shapes, 1,076 docs examined, 16 MiB"
    assert clean(kept) == kept
    assert clean("ada: 1 of 2 solved, last 2026-12-01T09:38:08Z (/tmp/p/ada.json)") == (
        "ada: 1 of 2 solved, last TIMESTAMP (PROGRESS_FILE)"
    )


def test_pytest_runs_notebooks_strictly_with_the_sanitizer():
    import tomllib

    options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    assert "--nbval " in options["addopts"] + " " and "--nbval-lax" not in options["addopts"]
    assert "--nbval-sanitize-with=notebooks/sanitize.cfg" in options["addopts"]


LOADING_SENTENCES = {
    "01_workload.ipynb": "store",
    "02_embed_reference_hybrid.ipynb": "parts",
    "03_read_together.ipynb": "store",
    "04_unbounded_arrays.ipynb": "followers",
    "05_document_size.ipynb": "store",
}


@pytest.mark.parametrize("name", sorted(LOADING_SENTENCES))
def test_loading_times_are_quoted_from_the_benchmarks_recorded_run(name: str):
    from workbook.dev import bench

    text = "\n".join(source(c) for c in cells(NOTEBOOKS / name) if c["cell_type"] == "markdown")
    assert bench.load_sentence(LOADING_SENTENCES[name]) in text, (
        f"{name}: quote bench.load_sentence({LOADING_SENTENCES[name]!r}) (the recorded run changed?)"
    )


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")), ids=lambda p: p.name)
def test_no_loading_time_is_written_by_hand(path: Path):
    text = "\n".join(source(c) for c in cells(path) if c["cell_type"] == "markdown").lower()
    assert "minute or two" not in text and "takes a minute" not in text

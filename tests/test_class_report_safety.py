"""The class report survives a real class: duplicate names, broken files, a folder as --out, no Chromium."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from workbook.errors import UnknownChoiceError, WorkbookError
from workbook.quiz import report as report_module
from workbook.quiz.report import class_report, learner_rows, write_class_report


def progress_file(folder, name, learner, answers):
    questions = {
        q: {"attempts": n, "correct": int(ok), "solved": ok, **({"solved_at_attempt": n} if ok else {})}
        for q, (n, ok) in answers.items()
    }
    (folder / f"{name}.json").write_text(json.dumps({"format": 1, "learner": learner, "questions": questions}))


@pytest.fixture
def classroom(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    progress_file(folder, "ada", "ada", {"q-1": (1, True)})
    progress_file(folder, "ada-laptop", "ada", {"q-1": (2, True)})  # same name inside, another file
    progress_file(folder, "bob", "bob", {"q-1": (1, False)})
    (folder / "latin1.json").write_bytes(b'{"format": 1, "learner": "Zo\xeb", "questions": {}}')
    (folder / "typed.json").write_text(json.dumps({"format": 1, "questions": {"q-1": {"attempts": "3"}}}))
    (folder / "newer.json").write_text(json.dumps({"format": 99, "questions": {}}))
    (folder / "empty.json").write_text("")
    (folder / "folder.json").mkdir()
    return folder


def test_learners_are_counted_by_file_and_duplicate_names_are_flagged(classroom):
    rows, notes = learner_rows(classroom)
    report = class_report(classroom).set_index("question")
    assert report.loc["q-1", "learners"] == 3 and report.loc["q-1", "solved"] == 2
    assert report.loc["q-1", "percent_solved"] <= 100
    assert any("ada-laptop.json" in note and "ada.json" in note and "2 learners" in note for note in notes)


def test_bad_files_are_skipped_with_a_reason_and_the_rest_reported(classroom):
    _, notes = learner_rows(classroom)
    skipped = [note for note in notes if note.startswith("skipped: ")]
    names = {"latin1.json", "typed.json", "newer.json", "empty.json"}
    assert len(skipped) == len(names)
    skipped = {name: next(note for note in skipped if f"{classroom / name} " in note) for name in names}
    assert "UTF-8" in skipped["latin1.json"] and "format 99" in skipped["newer.json"]
    assert "questions/q-1" in skipped["typed.json"]


def test_out_pointing_at_a_folder_writes_inside_it(classroom, tmp_path, capsys):
    from workbook.__main__ import main

    out = tmp_path / "reports"
    out.mkdir()
    assert main(["class-report", str(classroom), "--out", str(out)]) == 0
    written = out / "class-report.csv"
    assert pd.read_csv(written)["learners"].tolist() == [3]
    assert f"report: {written}" in capsys.readouterr().out


def test_an_unwritable_out_is_a_clear_error(classroom, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(WorkbookError, match="Cannot create the folder"):
        write_class_report(classroom, out=blocker / "sub" / "r.csv")


def test_chart_as_html_needs_nothing_more(classroom, tmp_path):
    chart = tmp_path / "chart.html"
    write_class_report(classroom, chart=chart)
    assert "plotly" in chart.read_text()[:5000].lower() and chart.stat().st_size > 100_000  # plotly.js inlined


def test_chart_as_png_without_chromium_says_how_to_fix_it(classroom, tmp_path, monkeypatch):
    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "no-chromium-here"))
    with pytest.raises(WorkbookError, match="Chrome or Chromium") as caught:
        write_class_report(classroom, chart=tmp_path / "chart.png")
    assert "--chart" in str(caught.value) and "chart.html" in str(caught.value)
    assert not (tmp_path / "chart.png").exists()


def test_chart_as_png_with_chromium(classroom, tmp_path):
    import shutil

    if not (shutil.which("chromium") or shutil.which("google-chrome")):
        pytest.skip("no Chromium on this machine")
    chart = tmp_path / "chart.png"
    write_class_report(classroom, chart=chart)
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_an_unknown_chart_type_lists_the_choices(classroom, tmp_path):
    with pytest.raises(UnknownChoiceError, match=r"\.html"):
        report_module.write_chart(report_module.class_chart(class_report(classroom)), tmp_path / "chart.txt")

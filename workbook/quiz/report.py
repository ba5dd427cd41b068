"""The class report: every learner's progress file in a folder, merged per question."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go

from workbook.errors import UnknownChoiceError, WorkbookError
from workbook.quiz.progress import ProgressFileError, read_progress_file

COLUMNS = ["question", "learners", "attempted", "solved", "percent_solved", "attempts", "attempts_per_solver"]


def learner_rows(folder: Path | str) -> tuple[pd.DataFrame, list[str]]:
    """One row per (learner, question) from the progress files in ``folder``, and notes: files skipped (why), names
    shared by several files.

    Each file is one learner, whatever name it holds: two files saying ``"learner": "ada"`` are two
    learners (counted apart, with a note), never one learner with doubled attempts.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise WorkbookError(
            f"{folder} is not a folder.", fix="Pass the folder holding the learners' <name>.json files."
        )
    rows, notes = [], []
    files_by_name: dict[str, list[str]] = {}
    for path in sorted(folder.glob("*.json")):
        if not path.is_file():
            continue
        try:
            document = read_progress_file(path)
        except ProgressFileError as error:
            notes.append(f"skipped: {error.message}")
            continue
        learner = path.stem  # one file, one learner
        files_by_name.setdefault(str(document.get("learner") or path.stem), []).append(path.name)
        for question, entry in document["questions"].items():
            rows.append(
                {
                    "learner": learner,
                    "question": question,
                    "attempts": entry["attempts"],
                    "correct": entry["correct"],
                    "solved": entry["solved"],
                    "solved_at_attempt": entry.get("solved_at_attempt"),
                }
            )
        if not document["questions"]:
            rows.append({"learner": learner, "question": None, "attempts": 0, "correct": 0, "solved": False})
    for name, files in sorted(files_by_name.items()):
        if len(files) > 1:
            notes.append(
                f"{', '.join(files)} all name learner {name!r}: counted as {len(files)} learners, one per file"
            )
    frame = pd.DataFrame(rows, columns=["learner", "question", "attempts", "correct", "solved", "solved_at_attempt"])
    return frame, notes


def class_report(folder: Path | str) -> pd.DataFrame:
    """Per question: learners in the class, how many attempted and solved it, % solved, attempts."""
    return per_question(learner_rows(folder)[0])


def per_question(rows: pd.DataFrame) -> pd.DataFrame:
    """The class report from :func:`learner_rows`' rows."""
    learners = rows["learner"].nunique()
    answered = rows.dropna(subset=["question"])
    if answered.empty:
        return pd.DataFrame(columns=COLUMNS)
    grouped = answered.groupby("question")
    report = pd.DataFrame(
        {
            "learners": learners,
            "attempted": grouped["learner"].nunique(),
            "solved": grouped["solved"].sum().astype(int),
            "attempts": grouped["attempts"].sum().astype(int),
        }
    )
    report["percent_solved"] = (100 * report["solved"] / learners).round(1)
    solver_attempts = answered[answered["solved"]].groupby("question")["solved_at_attempt"].mean()
    report["attempts_per_solver"] = solver_attempts.reindex(report.index).round(2)
    return report.reset_index()[COLUMNS]


def class_chart(report: pd.DataFrame, *, source: str = "") -> go.Figure:
    """A bar per question: % of the class who solved it, labelled with solved / learners."""
    learners = int(report["learners"].max()) if len(report) else 0
    labels = [
        f"{p:.0f}% ({s}/{n})"
        for p, s, n in zip(report["percent_solved"], report["solved"], report["learners"], strict=True)
    ]
    figure = go.Figure(
        go.Bar(
            x=report["question"],
            y=report["percent_solved"],
            text=labels,
            textposition="outside",
            marker_color="#2e7d32",
            hovertemplate="%{x}: %{y:.1f}% solved<extra></extra>",
        )
    )
    subtitle = f"{learners} learner{'s' * (learners != 1)}" + (f", progress files in {source}" if source else "")
    figure.update_layout(
        title={"text": f"Questions solved, % of the class<br><sup>{subtitle}</sup>", "x": 0.02},
        xaxis_title="question",
        yaxis={"title": "learners who solved it (%)", "range": [0, 115], "ticksuffix": "%"},
        template="plotly_white",
        font={"size": 15},
        width=max(700, 110 * len(report) + 200),
        height=520,
        margin={"t": 90, "b": 80},
    )
    return figure


IMAGE_FORMATS = (".png", ".svg", ".pdf", ".jpg", ".jpeg", ".webp")
"""Chart files drawn by plotly's image export (kaleido, which needs Chrome or Chromium)."""

HTML_FORMATS = (".html", ".htm")
"""Chart files written by plotly alone: work on every machine."""


def output_path(path: Path | str, default_name: str) -> Path:
    """Where a report file goes: ``path``, or ``default_name`` inside it when ``path`` is a folder."""
    target = Path(path)
    return target / default_name if target.is_dir() or str(path).endswith(("/", os.sep)) else target


def _target(path: Path | str, default_name: str) -> Path:
    """:func:`output_path`, with its folder created."""
    target = output_path(path, default_name)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise WorkbookError(
            f"Cannot create the folder {target.parent}: {error.strerror}.", fix="Choose another path."
        ) from None
    return target


def write_chart(figure: go.Figure, path: Path | str) -> Path:
    """Write ``figure`` as HTML (plotly alone) or as an image (kaleido + Chrome/Chromium); returns the file."""
    target = _target(path, "class-report.png")
    suffix = target.suffix.lower()
    if suffix in HTML_FORMATS:
        figure.write_html(target, include_plotlyjs=True)
        return target
    if suffix not in IMAGE_FORMATS:
        raise UnknownChoiceError("chart file type", suffix or target.name, [*IMAGE_FORMATS, *HTML_FORMATS])
    try:
        figure.write_image(str(target), scale=2)
    except Exception as error:  # kaleido missing, no Chrome, a browser that would not start: all say the same
        reason = " ".join(str(error).split())[:300]
        raise WorkbookError(
            f"Could not draw {target.name}: plotly's image export needs kaleido and Chrome or Chromium ({reason}).",
            fix=f"Install Chromium (e.g. `apt install chromium`) or run `plotly_get_chrome`; or write the chart "
            f"as HTML, which needs nothing more: --chart {target.with_suffix('.html')}",
        ) from None
    return target


def write_class_report(
    folder: Path | str, out: Path | str | None = None, chart: Path | str | None = None
) -> tuple[pd.DataFrame, list[str]]:
    """Write the CSV and the chart (a folder gets ``class-report.csv`` / ``.png``); the report and notes."""
    rows, notes = learner_rows(folder)
    report = per_question(rows)
    if out is not None:
        target = _target(out, "class-report.csv")
        try:
            report.to_csv(target, index=False)
        except OSError as error:
            raise WorkbookError(f"Cannot write {target}: {error.strerror}.", fix="Choose another --out path.") from None
    if chart is not None:
        write_chart(class_chart(report, source=str(folder)), chart)
    return report, notes

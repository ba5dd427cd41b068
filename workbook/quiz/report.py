"""The class report: every learner's progress file in a folder, merged per question."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import plotly.graph_objects as go

from workbook.errors import WorkbookError
from workbook.quiz.progress import ProgressFileError, read_progress_file

COLUMNS = ["question", "learners", "attempted", "solved", "percent_solved", "attempts", "attempts_per_solver"]


def learner_rows(folder: Path | str) -> tuple[pd.DataFrame, list[str]]:
    """One row per (learner, question) from the progress files in ``folder``, and files skipped (why)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise WorkbookError(
            f"{folder} is not a folder.", fix="Pass the folder holding the learners' <name>.json files."
        )
    rows, skipped = [], []
    for path in sorted(folder.glob("*.json")):
        try:
            document = read_progress_file(path)
        except ProgressFileError as error:
            skipped.append(error.message)
            continue
        learner = document.get("learner") or path.stem
        for question, entry in document["questions"].items():
            rows.append(
                {
                    "learner": learner,
                    "question": question,
                    "attempts": int(entry.get("attempts", 0)),
                    "correct": int(entry.get("correct", 0)),
                    "solved": bool(entry.get("solved", False)),
                    "solved_at_attempt": entry.get("solved_at_attempt"),
                }
            )
        if not document["questions"]:
            rows.append({"learner": learner, "question": None, "attempts": 0, "correct": 0, "solved": False})
    frame = pd.DataFrame(rows, columns=["learner", "question", "attempts", "correct", "solved", "solved_at_attempt"])
    return frame, skipped


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


def write_class_report(
    folder: Path | str, out: Path | str | None = None, chart: Path | str | None = None
) -> tuple[pd.DataFrame, list[str]]:
    """Write the CSV (and the chart as PNG, via kaleido); returns the report and skipped files."""
    rows, skipped = learner_rows(folder)
    report = per_question(rows)
    if out is not None:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        report.to_csv(out, index=False)
    if chart is not None:
        Path(chart).parent.mkdir(parents=True, exist_ok=True)
        class_chart(report, source=str(folder)).write_image(str(chart), scale=2)
    return report, skipped

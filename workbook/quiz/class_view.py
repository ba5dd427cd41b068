"""The instructor's live class view: who is on which notebook, questions solved, what the room gets
wrong (plotly charts), and the grades exported for a gradebook (CSV) and nbgrader-style.

It reads rows of (learner, question, attempts, correct, solved, solved_at_attempt), from the server
(``server_progress.learner_rows()``, live while the workshop runs) or from a folder of progress
files (``report.learner_rows(folder)``). A notebook cell is one call: ``workbook.quiz.class_view.show()``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from workbook.quiz.bank import all_questions

_NOTEBOOK_BANK = re.compile(r"nb(\d\d)")


def _bank(question_id: str) -> str:
    return str(all_questions().get(question_id, {}).get("bank") or question_id.rsplit("-", 1)[0])


def class_rows(folder: Path | str | None = None) -> pd.DataFrame:
    """The class's rows: from ``folder``'s progress files, else live from the server (``MONGODB_URI``)."""
    if folder is not None:
        from workbook.quiz.report import learner_rows

        return learner_rows(folder)[0]
    from workbook.quiz import server_progress

    return server_progress.learner_rows()


def where_learners_are(rows: pd.DataFrame) -> pd.DataFrame:
    """Per learner: the furthest notebook they answered in, and how many questions they solved."""
    answered = rows.dropna(subset=["question"]).copy()
    answered["bank"] = answered["question"].map(_bank)
    answered["notebook"] = answered["bank"].map(lambda bank: (m := _NOTEBOOK_BANK.fullmatch(bank)) and m.group(1))
    furthest = answered.dropna(subset=["notebook"]).groupby("learner")["notebook"].max()
    solved = answered.groupby("learner")["solved"].sum().astype(int)
    learners = sorted(set(rows["learner"]))
    return pd.DataFrame(
        {"notebook": furthest.reindex(learners), "solved": solved.reindex(learners, fill_value=0)},
        index=pd.Index(learners, name="learner"),
    )


def most_missed(rows: pd.DataFrame) -> pd.DataFrame:
    """Per question, wrong attempts and learners who tried but have not solved it, most missed first."""
    answered = rows.dropna(subset=["question"])
    grouped = answered.assign(wrong=answered["attempts"] - answered["correct"]).groupby("question")
    table = pd.DataFrame(
        {
            "wrong_attempts": grouped["wrong"].sum().astype(int),
            "unsolved_learners": grouped["solved"].apply(lambda s: int((~s.astype(bool)).sum())),
            "learners": grouped["learner"].nunique(),
        }
    )
    return table.sort_values(["wrong_attempts", "unsolved_learners"], ascending=False)


def gradebook(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per learner, one column per question bank: questions solved in that bank (an LMS imports the CSV)."""
    answered = rows.dropna(subset=["question"]).copy()
    answered["bank"] = answered["question"].map(_bank)
    table = answered.pivot_table(index="learner", columns="bank", values="solved", aggfunc="sum", fill_value=0)
    learners = sorted(set(rows["learner"]))
    banks = sorted({str(q.get("bank")) for q in all_questions().values()})
    return table.reindex(index=learners, columns=banks, fill_value=0).astype(int).rename_axis(None, axis=1)


def nbgrader_scores(rows: pd.DataFrame) -> pd.DataFrame:
    """nbgrader-style per-question scores: student, notebook (bank), grade_id (question), score, max_score."""
    answered = rows.dropna(subset=["question"])
    return pd.DataFrame(
        {
            "student": answered["learner"],
            "notebook": answered["question"].map(_bank),
            "grade_id": answered["question"],
            "score": answered["solved"].astype(bool).astype(float),
            "max_score": 1.0,
        }
    ).reset_index(drop=True)


def export_grades(rows: pd.DataFrame, folder: Path | str) -> tuple[Path, Path]:
    """Write ``gradebook.csv`` and ``nbgrader-scores.csv`` into ``folder``; returns both paths."""
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    book, scores = target / "gradebook.csv", target / "nbgrader-scores.csv"
    gradebook(rows).to_csv(book, index_label="learner")
    nbgrader_scores(rows).to_csv(scores, index=False)
    return book, scores


def charts(rows: pd.DataFrame) -> list[go.Figure]:
    """Three pictures: learners per notebook, questions solved per learner, the most missed questions."""
    where = where_learners_are(rows)
    on = where["notebook"].fillna("none").value_counts().sort_index()
    missed = most_missed(rows).head(10)
    return [
        go.Figure(go.Bar(x=[f"nb{n}" if n != "none" else n for n in on.index], y=on.values)).update_layout(
            title="Learners by the furthest notebook they answered in", template="plotly_white"
        ),
        go.Figure(go.Bar(x=list(where.index), y=where["solved"])).update_layout(
            title="Questions solved, per learner", template="plotly_white"
        ),
        go.Figure(go.Bar(x=list(missed.index), y=missed["wrong_attempts"])).update_layout(
            title="Most missed questions (wrong attempts)", template="plotly_white"
        ),
    ]


def show(folder: Path | str | None = None, *, refresh_s: float = 30.0) -> Any:
    """A live widget for the instructor's notebook: the three charts, redrawn every ``refresh_s`` seconds."""
    import threading

    import ipywidgets as widgets

    box = widgets.VBox()
    stop = threading.Event()

    def redraw() -> None:
        from IPython.display import display

        outputs = []
        for figure in charts(class_rows(folder)):
            output = widgets.Output()  # plotly in an Output widget, as the explorer draws (no anywidget needed)
            with output:
                display(figure)
            outputs.append(output)
        box.children = outputs

    def loop() -> None:
        while not stop.wait(refresh_s):
            redraw()

    redraw()
    threading.Thread(target=loop, daemon=True).start()
    box.stop = stop.set  # the instructor stops the refresh with box.stop()
    return box

"""A question as an ipywidget, graded in the kernel: pick or type, press Check, read the feedback.

State lives in traitlets, so code drives the widget exactly as a learner does::

    w = show("reading-1"); w.answer.value = "a"; w.check_button.click(); w.feedback.value
"""

from __future__ import annotations

import html
import re
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as widgets
import traitlets
from IPython import get_ipython
from pymongo.database import Database

from workbook.errors import WorkbookError
from workbook.quiz.grading import Result, grade_answer
from workbook.quiz.order import shown_options


class ChoiceCheckboxes(widgets.VBox):
    """One checkbox per option; ``value`` is the tuple of ticked option ids (settable from code)."""

    value = traitlets.Tuple()

    def __init__(self, options: list[tuple[str, str]], **kwargs: Any) -> None:
        self._boxes = {
            option_id: widgets.Checkbox(description=text, indent=False, layout={"width": "auto"})
            for text, option_id in options
        }
        super().__init__(list(self._boxes.values()), **kwargs)
        for box in self._boxes.values():
            box.observe(self._from_boxes, names="value")

    def _from_boxes(self, _change: Any) -> None:
        self.value = tuple(option_id for option_id, box in self._boxes.items() if box.value)

    @traitlets.observe("value")
    def _to_boxes(self, change: Mapping[str, Any]) -> None:
        for option_id, box in self._boxes.items():
            box.value = option_id in change["new"]


def prompt_html(text: str) -> str:
    """The prompt's light markdown (```code``` spans, **bold**, paragraphs) as HTML."""
    escaped = html.escape(text)
    escaped = re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped)
    escaped = re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", escaped)
    return "".join(f"<p>{part}</p>" for part in escaped.split("\n\n"))


def _answer_widget(question: Mapping[str, Any]) -> widgets.Widget | None:
    layout = {"width": "auto"}
    options = [(o["text"], o["id"]) for o in shown_options(question)]  # shuffled, the same for everyone
    kind = question["type"]
    if kind in ("choice", "design") and options:
        return widgets.RadioButtons(options=options, value=None, layout=layout)
    if kind == "many":
        return ChoiceCheckboxes(options)
    if kind == "numeric":
        unit = question.get("unit")
        return widgets.Text(
            placeholder=f"a number, in {unit}" if unit else "a number",
            layout={"width": "260px"},
            continuous_update=False,  # sent whole when the box loses focus: before the Check click
        )
    if kind == "text":
        return widgets.Text(
            placeholder=question.get("placeholder", "your answer"), layout={"width": "420px"}, continuous_update=False
        )
    return None


GRADE_DELAY_S = 0.25
"""How long a click waits for the answer box's value to reach the kernel (the two are separate messages)."""


class QuestionWidget(widgets.VBox):
    """One question: its prompt, an answer widget, a Check button and the feedback, retries allowed."""

    attempts = traitlets.Int(0)

    def __init__(
        self,
        question: Mapping[str, Any],
        *,
        database: Callable[[], Database] | None = None,
        record: Callable[[Result], None] | None = None,
    ) -> None:
        self.question = question
        self.result: Result | None = None
        self._database = database
        self._record = record
        title = widgets.HTML(f"<h4 style='margin:4px 0'>{html.escape(question['title'])}</h4>")
        self.prompt = widgets.HTML(prompt_html(question["prompt"]))
        self.answer = _answer_widget(question)
        label = "Check my database" if question["type"] == "design" else "Check"
        self.check_button = widgets.Button(description=label, button_style="primary", icon="check")
        self.feedback = widgets.HTML("")
        self.check_button.on_click(self._check)
        children = [title, self.prompt] + ([self.answer] if self.answer is not None else [])
        super().__init__(children + [self.check_button, self.feedback], layout={"padding": "4px 0 12px 0"})

    def _check(self, _button: Any = None) -> None:
        """Grade on the kernel's next turn: the answer box's last edit may still be queued behind the click."""
        kernel = getattr(get_ipython(), "kernel", None)
        loop = getattr(kernel, "io_loop", None)
        if loop is None:  # driven from code, outside a kernel: grade now
            self._grade()
        else:
            loop.call_later(GRADE_DELAY_S, self._grade)

    def _grade(self) -> None:
        answer = None if self.answer is None else self.answer.value
        try:
            db = self._database() if self.question["type"] == "design" and self._database else None
            result = grade_answer(self.question, answer, db)
        except WorkbookError as error:
            self.feedback.value = _box("#8a5a00", "⚠", html.escape(error.message))
            return
        except Exception as error:  # a button that silently does nothing is worse than any message
            self.feedback.value = _box(
                "#8a5a00", "⚠ Could not grade this answer", html.escape(f"{type(error).__name__}: {error}")
            )
            return
        self.attempts += 1
        self.result = result
        note = ""
        if self._record is not None:
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    self._record(result)
                note = "".join(f"<br><i>{html.escape(str(w.message))}</i>" for w in caught)
            except Exception as error:  # the grade is shown whatever went wrong with saving it
                text = error.message if isinstance(error, WorkbookError) else f"{type(error).__name__}: {error}"
                note = f"<br><i>Progress not saved: {html.escape(text)}</i>"
        colour, mark = ("#1b5e20", "✓ Correct") if result.correct else ("#8a1c1c", "✗ Not yet")
        body = html.escape(result.feedback).replace("\n", "<br>")
        attempt = f"<span style='color:#666'> (attempt {self.attempts})</span>"
        self.feedback.value = _box(colour, f"{mark}{attempt}", body + note)


def _box(colour: str, heading: str, body: str) -> str:
    return (
        f"<div style='border-left:4px solid {colour};padding:4px 10px;margin-top:6px'>"
        f"<b style='color:{colour}'>{heading}</b><div>{body}</div></div>"
    )

"""What the doctor found: findings with severity, evidence, the fix and the lesson, as a table or JSON."""

from __future__ import annotations

import html
import json
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from workbook.errors import UnknownChoiceError
from workbook.schema_doctor.lessons import ANTI_PATTERNS, LESSONS
from workbook.schema_doctor.severity import Severity

__all__ = ["Finding", "Report", "Severity"]


@dataclass(frozen=True)
class Finding:
    """One anti-pattern found in one place, with the numbers behind it and what to do."""

    anti_pattern: str
    severity: Severity
    where: str
    summary: str
    evidence: dict[str, Any]
    why: str
    fix: str
    command: str

    @property
    def name(self) -> str:
        """The anti-pattern's name as the course says it."""
        return ANTI_PATTERNS[self.anti_pattern]

    @property
    def lesson(self) -> str:
        """The notebook that teaches this anti-pattern."""
        return LESSONS[self.anti_pattern]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (evidence values made plain)."""
        row = asdict(self)
        row.update(severity=self.severity.label, name=self.name, lesson=self.lesson, evidence=_plain(self.evidence))
        return row


@dataclass
class Report:
    """Everything one doctor run found, and what it read to find it."""

    database: str
    engine: str
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    complete: bool = True

    def at_or_above(self, severity: Severity | str) -> list[Finding]:
        """Findings at least as severe as ``severity``."""
        floor = Severity.parse(severity)
        return [f for f in self.findings if f.severity >= floor]

    def of(self, anti_pattern: str) -> list[Finding]:
        """Findings of one anti-pattern (a key of ``ANTI_PATTERNS``)."""
        if anti_pattern not in ANTI_PATTERNS:
            raise UnknownChoiceError("anti-pattern", anti_pattern, ANTI_PATTERNS)
        return [f for f in self.findings if f.anti_pattern == anti_pattern]

    def to_frame(self) -> pd.DataFrame:
        """One row per finding, most severe first."""
        columns = [
            "severity",
            "anti_pattern",
            "name",
            "where",
            "summary",
            "evidence",
            "why",
            "fix",
            "command",
            "lesson",
        ]
        rows = [{**f.to_dict()} for f in self._ordered()]
        return pd.DataFrame(rows, columns=columns)

    def to_dict(self) -> dict[str, Any]:
        """The whole report as plain data."""
        return {
            "database": self.database,
            "engine": self.engine,
            "seconds": round(self.seconds, 3),
            "complete": self.complete,
            "findings": [f.to_dict() for f in self._ordered()],
            "notes": list(self.notes),
        }

    def to_json(self) -> str:
        """The report as JSON, for scripts and CI."""
        return json.dumps(self.to_dict(), indent=2)

    def summary(self) -> str:
        """One line: how many findings of each severity, where, how long it took."""
        counts = {s: sum(1 for f in self.findings if f.severity == s) for s in Severity}
        found = ", ".join(_count(n, s.label) for s, n in sorted(counts.items(), reverse=True) if n) or "no findings"
        tail = "" if self.complete else " (stopped at the time limit: some checks did not run)"
        return f"schema doctor on {self.database} ({self.engine}): {found} in {self.seconds:.1f} s{tail}"

    def __repr__(self) -> str:
        lines = [self.summary()]
        for f in self._ordered():
            lines += [f"[{f.severity.label}] {f.name} · {f.where}: {f.summary}", f"    fix: {f.command}"]
        return "\n".join(lines)

    def to_markdown(self) -> str:
        """The report as Markdown (an issue, a pull request, a Markdown cell): ``$`` escaped, commands fenced.

        ``$push and $each`` in Markdown is an inline formula to Jupyter and GitHub; every ``$`` in
        the prose is written ``\\$``. Commands go in fenced code blocks, which keep their ``$`` as is
        and never wrap inside a word.
        """
        lines = [markdown_text(self.summary()), ""]
        for f in self._ordered():
            lines += [
                f"### {f.severity.label}: {markdown_text(f.name)} · `{f.where}`",
                "",
                f"**Found:** {markdown_text(f.summary)}",
                "",
                f"**Why it hurts:** {markdown_text(f.why)}",
                "",
                f"**Fix:** {markdown_text(f.fix)}",
                "",
                *fenced(f.command, "javascript"),
                "",
                f"Lesson: `{f.lesson}`",
                "",
            ]
        if self.notes:
            lines += ["What was read:", "", *(f"- {markdown_text(n)}" for n in self.notes), ""]
        return "\n".join(lines).rstrip() + "\n"

    def _repr_html_(self) -> str:
        cells = ["severity", "anti-pattern", "where", "what was found", "why it hurts", "fix", "lesson"]
        head = "".join(f"<th style='text-align:left'>{c}</th>" for c in cells)
        body = "".join(
            "<tr style='vertical-align:top;text-align:left'>"
            f"<td>{f.severity.label}</td><td>{html.escape(f.name)}</td><td>{html.escape(f.where)}</td>"
            f"<td>{html.escape(f.summary)}</td><td>{html.escape(f.why)}</td>"
            f"<td>{html.escape(f.fix)}<pre style='{COMMAND_STYLE}'>{html.escape(f.command)}</pre></td>"
            f"<td><code>{html.escape(f.lesson)}</code></td>"
            "</tr>"
            for f in self._ordered()
        )
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
        table = f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>" if self.findings else ""
        # JupyterLab typesets $...$ in HTML output as math ("$push and $each" in italics): not in here
        return (
            f"<div class='{NO_MATH}'><p>{html.escape(self.summary())}</p>{table}"
            + (f"<details><summary>what was read</summary><ul>{notes}</ul></details>" if notes else "")
            + "</div>"
        )

    def _ordered(self) -> list[Finding]:
        order = list(ANTI_PATTERNS)
        return sorted(self.findings, key=lambda f: (-f.severity, order.index(f.anti_pattern), f.where))


NO_MATH = "tex2jax_ignore mathjax_ignore"
"""The classes JupyterLab's MathJax (and MathJax 2/3 elsewhere) skip: a ``$`` in a report is an operator, not math."""

COMMAND_STYLE = "white-space:pre;overflow-wrap:normal;word-break:normal;overflow-x:auto;max-width:28em"
"""A suggested command keeps its lines as written (no wrap inside a word): a long line scrolls instead."""


def markdown_text(text: str) -> str:
    r"""Prose for Markdown: ``$`` escaped, so an operator name never starts a formula.

    >>> markdown_text("$push and $each")
    '\\$push and \\$each'
    """
    return text.replace("\\", "\\\\").replace("$", "\\$")


def fenced(code: str, language: str = "") -> list[str]:
    """``code`` as a fenced Markdown block, the fence longer than any backtick run inside it."""
    longest = max((len(run) for run in code.split("\n") for run in _backtick_runs(run)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{language}", *code.split("\n"), fence]


def _backtick_runs(line: str) -> list[str]:
    runs, current = [], ""
    for ch in line:
        if ch == "`":
            current += ch
        elif current:
            runs.append(current)
            current = ""
    return [*runs, current] if current else runs


def _count(number: int, noun: str) -> str:
    """'1 warning', '3 warnings', '2 info'."""
    return f"{number} {noun}" if number == 1 or noun == "info" else f"{number} {noun}s"


def _plain(value: Any) -> Any:
    """Evidence as JSON types: numbers rounded, dates as ISO text, anything else as text."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, bool | int | str) or value is None:
        return value
    if isinstance(value, float):
        return round(value, 3)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)

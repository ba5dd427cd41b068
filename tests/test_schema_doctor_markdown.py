"""The doctor's report never renders an operator as math, and its commands never wrap inside a word."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from html.parser import HTMLParser

import pytest
from pymongo.database import Database

import workbook
from workbook.schema_doctor import Report
from workbook.schema_doctor.lessons import UNBOUNDED_ARRAYS
from workbook.schema_doctor.report import NO_MATH, fenced, markdown_text


@pytest.fixture
def report(db: Database) -> Report:
    """A real doctor run whose fix reads "cap it on every write with $push and $each/$slice"."""
    start = datetime(2025, 1, 1)
    followers = [{"userId": f"u{i}", "createdAt": start + timedelta(days=i)} for i in range(300)]
    db.users.insert_many([{"_id": "star", "followers": followers}, {"_id": "u1", "followers": []}])
    found = workbook.doctor(db, say=lambda _line: None)
    assert found.of(UNBOUNDED_ARRAYS) and "$push and $each" in found.of(UNBOUNDED_ARRAYS)[0].fix
    return found


def prose_and_code(markdown: str) -> tuple[str, list[str]]:
    """The Markdown outside fenced blocks, and each fenced block's body."""
    blocks = re.findall(r"^(`{3,})[a-z]*\n(.*?)\n\1$", markdown, flags=re.M | re.S)
    prose = re.sub(r"^(`{3,})[a-z]*\n.*?\n\1$", "", markdown, flags=re.M | re.S)
    return prose, [body for _fence, body in blocks]


def test_markdown_escapes_every_dollar_in_prose_and_fences_the_command(report: Report) -> None:
    markdown = report.to_markdown()
    prose, blocks = prose_and_code(markdown)
    assert r"\$push and \$each" in prose
    assert re.search(r"(?<!\\)\$", prose) is None  # no $ a math renderer would read as a formula delimiter
    command = report.of(UNBOUNDED_ARRAYS)[0].command
    assert command in blocks and "$push" in command  # the command as written, copyable


def test_markdown_text_and_fences() -> None:
    assert markdown_text(r"cost $5 \ $6") == r"cost \$5 \\ \$6"
    assert fenced("a ```b``` c") == ["````", "a ```b``` c", "````"]
    assert fenced("db.x.find()", "javascript") == ["```javascript", "db.x.find()", "```"]


class _Styles(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.outer: str | None = None
        self.pre: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if self.outer is None:
            self.outer = found.get("class") or ""
        if tag == "pre":
            self.pre.append(found.get("style") or "")


def test_html_is_kept_from_mathjax_and_commands_do_not_wrap(report: Report) -> None:
    styles = _Styles()
    styles.feed(report._repr_html_())
    assert set(NO_MATH.split()) <= set((styles.outer or "").split())  # JupyterLab's MathJax skips the report
    assert styles.pre and all("white-space:pre;" in s and "pre-wrap" not in s for s in styles.pre)
    assert all("word-break:normal" in s and "overflow-x:auto" in s for s in styles.pre)

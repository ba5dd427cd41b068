"""Issue 25: every table a notebook shows fits a 1400 px window, and no result is a raw repr.

Read from the outputs stored in the notebooks (those nbval compares): each HTML table's width is
estimated from its text, one column at a time, as a browser lays it out at JupyterLab's 13 px font.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHECKED = sorted(path.stem for path in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
"""Every course notebook: none is exempt."""

WINDOW_PX = 1400
NOTEBOOK_MARGIN_PX = 150
"""JupyterLab's sidebar gutter, prompt and cell padding: what a table cannot use of the window."""
CHAR_PX = 7.5
"""The average width of a character at a 13 px sans-serif font."""
CELL_PADDING_PX = 14
WRAPPED_MIN_PX = 14 * 13
"""A wrapping last column (``display.table``'s ``min-width: 14em``) needs only this much."""

PRE_MAX = re.compile(r"max-width:\s*([\d.]+)em")
"""A ``<pre>`` with a max-width scrolls inside it: its lines count at most that wide."""
FONT_PX = 13

RICH = {"text/html", "application/vnd.jupyter.widget-view+json", "application/vnd.plotly.v1+json", "image/png"}


class _Tables(HTMLParser):
    """Every <table>: its rows of cell texts, and which of its columns wrap (-1: the last one)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.wraps: list[set[int]] = []
        self._style = ""
        self._classes: list[str] = []
        self._in_style = False
        self._cell: list[str] | None = None
        self._below: dict[int, int] = {}
        self._pre_chars: int | None = None

    def _skip_spanned(self, row: list[str]) -> None:
        """Leave empty the columns a cell of an earlier row spans down into."""
        while self._below.get(len(row), 0) > 0:
            self._below[len(row)] -= 1
            row.append("")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "style":
            self._in_style = True
        elif tag == "div":
            self._classes += (dict(attrs).get("class") or "").split()
        elif tag == "pre":
            found = PRE_MAX.search(dict(attrs).get("style") or "")
            self._pre_chars = int(float(found.group(1)) * FONT_PX / CHAR_PX) if found else 10**6
        if tag == "table":
            self.tables.append([])
            self._below = {}
            # JupyterLab's own table cells wrap between words (white-space: normal); display.table's
            # wb-table turns that off for every column but the ones it names.
            if "wb-table" not in self._classes:
                self.wraps.append({ALL})
                return
            wrapped = {-1} if "td:last-child{white-space:normal" in self._style else set()
            for own, child in re.findall(r"\.(wb-wrap-\w+) td:nth-child\((\d+)\)\{white-space:normal", self._style):
                if own in self._classes:
                    wrapped.add(int(child) - 1)
            self.wraps.append(wrapped)
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th") and self.tables:
            self._cell = []
            row = self.tables[-1][-1]
            self._skip_spanned(row)
            span = int(dict(attrs).get("colspan") or 1)
            row.extend([""] * (span - 1))
            down = int(dict(attrs).get("rowspan") or 1)
            if down > 1:  # the cell also fills this column in the next rows (pandas' MultiIndex)
                self._below[len(row)] = down - 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre":
            self._pre_chars = None
        if tag == "tr" and self.tables and self.tables[-1]:
            self._skip_spanned(self.tables[-1][-1])
        if tag == "style":
            self._in_style = False
        elif tag in ("td", "th") and self._cell is not None and self.tables:
            self.tables[-1][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self._style += data
        elif self._cell is not None and self._pre_chars is not None:  # one unbreakable line, scrolled past its width
            longest = max((len(line) for line in data.splitlines()), default=0)
            self._cell.append(" " + "x" * min(longest, self._pre_chars) + " ")
        elif self._cell is not None:
            self._cell.append(data)


ALL = -2
"""In a table's wrap set: every column wraps between words (a plain HTML table in JupyterLab)."""


def table_width_px(rows: list[list[str]], wraps: set[int]) -> float:
    """The estimated width of one table: each column as wide as its longest cell, plus padding; a
    wrapping column as wide as its longest word, or its wrapping width if that is more."""
    columns = max((len(row) for row in rows), default=0)
    width = 0.0
    for index in range(columns):
        longest = max((len(row[index]) for row in rows if index < len(row)), default=0)
        text = longest * CHAR_PX
        if ALL in wraps or index in wraps or (-1 in wraps and index == columns - 1):
            word = max((len(w) for row in rows if index < len(row) for w in row[index].split()), default=0)
            # a plain table shrinks a column to its longest word; display.table's keeps a 14em minimum
            text = word * CHAR_PX if ALL in wraps else max(min(text, WRAPPED_MIN_PX), word * CHAR_PX)
        width += text + CELL_PADDING_PX
    return width


def shown_tables(name: str) -> list[tuple[int, list[list[str]], set[int]]]:
    """(cell index, rows, last column wraps) for every HTML table in the notebook's stored outputs."""
    cells = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"))["cells"]
    found = []
    for index, cell in enumerate(cells):
        for output in cell.get("outputs", []):
            html = "".join(output.get("data", {}).get("text/html", ""))
            if "<table" in html:
                parser = _Tables()
                parser.feed(html)
                found += [(index, rows, wraps) for rows, wraps in zip(parser.tables, parser.wraps, strict=True)]
    return found


def test_the_width_estimate_counts_columns_and_wrapping() -> None:
    rows = [["operation", "rate"], ["product_detail", "500/s"]]
    assert table_width_px(rows, set()) == pytest.approx(14 * CHAR_PX + 5 * CHAR_PX + 2 * CELL_PADDING_PX)
    long = [["a", "x " * 200, "y " * 200]]
    assert table_width_px(long, {-1}) < table_width_px(long, set())
    assert table_width_px(long, {1, -1}) < table_width_px(long, {-1})
    parser = _Tables()
    parser.feed(
        "<style>.t td:last-child{white-space:normal}</style>"
        "<div class='wb-table'><table><tr><th colspan='2'>ab</th></tr></table></div>"
    )
    assert parser.tables == [[["", "ab"]]] and parser.wraps == [{-1}]
    plain = _Tables()  # JupyterLab wraps a plain table's cells between words; a <pre> scrolls past its max-width
    plain.feed(
        "<table><tr><td>"
        + "word " * 300
        + "</td><td><pre style='max-width:10em'>"
        + "y" * 500
        + "</pre></td></tr></table>"
    )
    assert plain.wraps == [{ALL}] and table_width_px(plain.tables[0], plain.wraps[0]) < 600
    import pandas as pd

    from workbook import display

    frame = pd.DataFrame({"a": ["x" * 300], "b": ["y" * 300], "c": [1]})
    parser = _Tables()
    parser.feed(display.table(frame, wrap=["a", "b"])._repr_html_())
    assert parser.wraps == [{1, 2}]
    parser = _Tables()
    parser.feed(
        "<div class='wb-table'><table><tr><th rowspan='2'>a</th><td>1</td></tr><tr><td>22</td></tr></table></div>"
    )
    assert parser.tables == [[["a", "1"], ["", "22"]]]


@pytest.mark.parametrize("name", CHECKED)
def test_every_table_fits_a_1400_px_window(name: str) -> None:
    tables = shown_tables(name)
    assert tables, f"{name} shows no table at all"
    room = WINDOW_PX - NOTEBOOK_MARGIN_PX
    wide = [(index, round(table_width_px(rows, wraps))) for index, rows, wraps in tables]
    too_wide = [(index, px) for index, px in wide if px > room]
    assert not too_wide, f"{name}: cells (index, estimated px) wider than {room} px: {too_wide}"


@pytest.mark.parametrize("name", CHECKED)
def test_no_result_is_a_raw_repr(name: str) -> None:
    cells = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"))["cells"]
    raw = [
        (index, "".join(output["data"]["text/plain"])[:60])
        for index, cell in enumerate(cells)
        for output in cell.get("outputs", [])
        if output["output_type"] == "execute_result" and not RICH & set(output["data"])
    ]
    assert not raw, f"{name}: results shown as a bare repr (use workbook.display.table/record): {raw}"

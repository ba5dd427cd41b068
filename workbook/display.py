"""What a learner sees in a notebook: the connection banner as a box that wraps between words, and a
refused write as its reason (a validator's: which rule, which field) instead of a long traceback.

:func:`install` is called by ``workbook.connect()``; it does something only inside an IPython kernel.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import sys
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pymongo.errors import BulkWriteError, WriteError

from workbook.errors import UnknownChoiceError
from workbook.facts import VALIDATION_FAILED

WIDTH = 88
"""Banner lines are wrapped to this many characters, between words."""

NBSP = "\u00a0"

_installed: set[int] = set()


def _no_break(match: re.Match[str]) -> str:
    return match.group(0).replace(" ", NBSP)


class Banner:
    """The connection banner: plain text wrapped between words, and a small HTML box in notebooks."""

    def __init__(self, text: str) -> None:
        self.text = text

    def wrapped(self) -> str:
        """The banner wrapped to :data:`WIDTH` characters, never inside a word or a URI."""
        lines = []
        for line in self.text.splitlines():
            indent = line[: len(line) - len(line.lstrip())]
            # `code spans` stay on one line: their spaces become no-break spaces while wrapping
            kept = re.sub(r"`[^`]*`", _no_break, line)
            lines += textwrap.wrap(
                kept, WIDTH, subsequent_indent=indent + "  ", break_long_words=False, break_on_hyphens=False
            )
        return "\n".join(lines).replace(NBSP, " ")

    def __repr__(self) -> str:
        return self.wrapped()

    def _repr_html_(self) -> str:
        first, *rest = self.text.splitlines()
        more = "".join(f"<div style='color:#555'>{html.escape(line.strip())}</div>" for line in rest)
        return (
            "<div style='border-left:4px solid #00684a;padding:4px 10px;white-space:normal;word-break:normal;"
            f"overflow-wrap:anywhere'><div>{html.escape(first)}</div>{more}</div>"
        )


def _rules(details: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, str]]:
    """(field path, reason) for every unsatisfied rule in a validation error's ``errInfo.details``."""
    if isinstance(details, list):
        for item in details:
            yield from _rules(item, path)
        return
    if not isinstance(details, Mapping):
        return
    nested = False
    for key in ("schemaRulesNotSatisfied", "propertiesNotSatisfied", "details", "itemsNotSatisfied"):
        if key in details:
            nested = True
            name = details.get("propertyName")
            yield from _rules(details[key], (*path, name) if name and key == "details" else path)
    if "missingProperties" in details:
        for missing in details["missingProperties"]:
            yield ".".join((*path, str(missing))), "required field is missing"
        return
    if nested:
        return
    operator = details.get("operatorName", "rule")
    reason = details.get("reason") or operator
    specified = details.get("specifiedAs")
    rule = f"{operator} {specified[operator]!r}" if isinstance(specified, Mapping) and operator in specified else ""
    text = reason if not rule or rule in reason else f"{reason} ({rule})"
    yield ".".join(path) or "(document)", text


def broken_rules(error: WriteError | BulkWriteError | Mapping[str, Any]) -> list[str]:
    """Each rule a rejected document broke, as "field: reason" (duplicates collapsed, in order).

    >>> broken_rules({"errInfo": {"details": {"schemaRulesNotSatisfied": [{"operatorName": "properties",
    ...     "propertiesNotSatisfied": [{"propertyName": "name", "details": [{"operatorName": "minLength",
    ...     "specifiedAs": {"minLength": 1}, "reason": "specified string length was not satisfied"}]}]}]}}})
    ['name: specified string length was not satisfied (minLength 1)']
    """
    details: Any = error.details if isinstance(error, WriteError | BulkWriteError) else error
    if isinstance(error, BulkWriteError):
        details = (details or {}).get("writeErrors", [{}])[0]
    info = (details or {}).get("errInfo", {}).get("details", {})
    seen: dict[str, None] = {}
    for field, reason in _rules(info):
        seen.setdefault(f"{field}: {reason}", None)
    return list(seen)


def is_validation_error(error: BaseException) -> bool:
    """True for a write rejected by a collection's validator (code 121)."""
    if isinstance(error, BulkWriteError):
        return any(e.get("code") == VALIDATION_FAILED for e in (error.details or {}).get("writeErrors", []))
    return isinstance(error, WriteError) and error.code == VALIDATION_FAILED


def rejection_text(error: WriteError | BulkWriteError) -> str:
    """The reason first: which rule on which field, then the document and how to see everything."""
    details = error.details or {}
    if isinstance(error, BulkWriteError):
        details = details.get("writeErrors", [{}])[0]
    document = details.get("errInfo", {}).get("failingDocumentId")
    reasons = broken_rules(error) or ["(the server gave no details)"]
    shown = reasons[:5] + ([f"... and {len(reasons) - 5} more"] if len(reasons) > 5 else [])
    lines = [f"Rejected by the collection's validator (code 121) for document {document!r}:"]
    lines += [f"  • {reason}" for reason in shown]
    lines.append(NOT_WRITTEN)
    return "\n".join(lines)


NOT_WRITTEN = "The write did not happen. Run %tb for the traceback; the full error is in sys.last_value.details."
"""The last line under a refused write: both suggestions work, because the handler records the error for them."""

REASON_CHARS = 240
"""A refused write's reason is cut to this many characters (a duplicate key can quote a whole document)."""


def write_error_text(error: WriteError | BulkWriteError) -> str:
    """A refused write in two lines: the server's reason with its code, then what happened and where to see more.

    >>> print(write_error_text(WriteError("E11000 duplicate key error collection: db.follows", code=11000)))
    Write refused (code 11000): E11000 duplicate key error collection: db.follows
    The write did not happen. Run %tb for the traceback; the full error is in sys.last_value.details.
    """
    if is_validation_error(error):
        return rejection_text(error)
    details: Any = error.details or {}
    if isinstance(error, BulkWriteError):
        first = (details.get("writeErrors") or [{}])[0]
        count = len(details.get("writeErrors") or [])
        reason = str(first.get("errmsg") or error)
        code = first.get("code", error.code)
        more = f" ({details.get('nInserted', 0)} inserted before it; {count} write error{'s' * (count != 1)})"
    else:
        reason, code, more = str((details or {}).get("errmsg") or error), error.code, ""
    reason = " ".join(reason.split())
    if len(reason) > REASON_CHARS:
        reason = reason[: REASON_CHARS - 3] + "..."
    return f"Write refused (code {code}): {reason}{more}\n{NOT_WRITTEN}"


def _remember(kind: type, value: BaseException, tb: Any) -> None:
    """Record the error where %tb and sys.last_value look (IPython does so only when it shows a traceback)."""
    sys.last_type, sys.last_value, sys.last_traceback = kind, value, tb
    sys.last_exc = value


def _show_rejection(shell: Any, kind: type, value: BaseException, tb: Any, tb_offset: int | None = None) -> Any:
    """IPython's handler for refused writes: the reason in two lines (a validator's: one per rule), not a traceback."""
    if isinstance(value, WriteError | BulkWriteError):
        _remember(kind, value, tb)
        print(write_error_text(value))
        return None
    return shell.showtraceback((kind, value, tb), tb_offset=tb_offset)


def install() -> bool:
    """Show validation rejections as their reason in this IPython kernel; False outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None or id(shell) in _installed:
        return shell is not None
    shell.set_custom_exc((WriteError, BulkWriteError), _show_rejection)
    _installed.add(id(shell))
    return True


def in_notebook() -> bool:
    """True inside an IPython kernel (where rich displays render)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def _whole(value: Any) -> bool:
    return isinstance(value, float) and value.is_integer()


def _shell_key(key: Any) -> str:
    text = str(key)
    return text if re.fullmatch(r"[$A-Za-z_][$\w]*", text) else json.dumps(text, ensure_ascii=False)


def shell_form(value: Any) -> str:
    """A document or array as mongosh writes it, for a table cell: ``{_id: 1}``, not Python's ``{'_id': 1}``.

    >>> shell_form({"followers.userId": "user-1", "n": [1, 2.5, True, None]})
    '{"followers.userId": "user-1", n: [1, 2.5, true, null]}'
    """
    from datetime import datetime

    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_shell_key(k)}: {shell_form(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(shell_form(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, datetime):
        return f'ISODate("{value.isoformat()}")'
    if type(value).__name__ == "ObjectId":
        return f'ObjectId("{value}")'
    return str(value)


def _cell(value: Any) -> str:
    """One table cell: whole numbers without '.0' and with thousands separators, others to 3 significant places;
    a document or an array as mongosh writes it."""
    import pandas as pd

    if value is None or (not isinstance(value, str | list | dict | tuple) and pd.isna(value)):
        return ""
    if isinstance(value, dict | list):
        return shell_form(value)
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int) or _whole(value):
        return f"{int(value):,}"
    if isinstance(value, float):
        if 0 < abs(value) < 0.01:
            return "< 0.01" if value > 0 else "> -0.01"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:,.2f}" if abs(value) >= 10 else f"{value:.3g}"
    return str(value)


def _is_code(column: Any) -> bool:
    """True for a column of error codes: numbers that name something, shown without separators."""
    name = column[-1] if isinstance(column, tuple) else column
    return str(name).lower().replace("_", " ").endswith("code")


def _identifier(value: Any) -> str:
    """A code as written: 17419, not 17,419."""
    return (
        str(int(value))
        if isinstance(value, int | float) and not isinstance(value, bool) and value == value
        else _cell(value)
    )


class Table:
    """A DataFrame shown for reading: counts as integers (30, not 30.0), thousands separated, numbers
    kept whole, and the last text column wrapped between words instead of running off the right edge."""

    def __init__(self, frame: Any, *, caption: str = "", wrap: Sequence[str] = ()) -> None:
        self.frame = frame
        self.caption = caption
        missing = [name for name in wrap if name not in frame.columns]
        if missing:
            raise UnknownChoiceError("column to wrap", missing[0], [str(c) for c in frame.columns])
        self.wrap = tuple(wrap)

    def _formatted(self) -> Any:
        frame = self.frame.copy()
        for column in frame.columns:
            frame[column] = frame[column].map(_identifier if _is_code(column) else _cell)
        return frame

    def __repr__(self) -> str:
        text = self._formatted().to_string()
        return f"{self.caption}\n{text}" if self.caption else text

    def _repr_html_(self) -> str:
        body = self._formatted().to_html(escape=True, border=0)
        caption = f"<div style='color:#555;margin-bottom:4px'>{html.escape(self.caption)}</div>" if self.caption else ""
        # numbers and headers never break inside a word; a last column of text wraps, between words
        style = "<style>.wb-table td,.wb-table th{white-space:nowrap;text-align:right}"
        if self._ends_in_text():
            style += " .wb-table td:last-child{white-space:normal;text-align:left;min-width:14em}"
        classes = "wb-table"
        if self.wrap:  # these text columns wrap too, in this table only (a class named after its content)
            own = "wb-wrap-" + hashlib.sha1(body.encode()).hexdigest()[:10]
            first = self.frame.index.nlevels + 1  # index cells come first in every row
            for name in self.wrap:
                child = first + list(self.frame.columns).index(name)
                style += f" .{own} td:nth-child({child}){{white-space:normal;text-align:left;min-width:14em}}"
            classes += f" {own}"
        return f"{style}</style><div class='{classes}'>{caption}{body}</div>"

    def _ends_in_text(self) -> bool:
        """True when the last column holds text (not numbers): that one may wrap."""
        import pandas as pd

        if not len(self.frame.columns):
            return False
        last = self.frame.iloc[:, -1]
        return not pd.api.types.is_numeric_dtype(last) and any(isinstance(v, str) for v in last)


def table(frame: Any, caption: str = "", *, wrap: Sequence[str] = ()) -> Table:
    """Show a DataFrame for reading (see :class:`Table`); the frame itself is ``.frame``.

    ``wrap`` names text columns that wrap between words as the last one does, so a table of long
    texts fits the window instead of scrolling sideways.

    >>> import pandas as pd
    >>> table(pd.DataFrame({"documents": [30.0, 2000.0], "avg_bytes": [812.4567, 3.25]}))
      documents avg_bytes
    0        30    812.46
    1     2,000      3.25
    """
    return Table(frame, caption=caption, wrap=wrap)


class Record:
    """A few named values (a dict) shown for reading: one row per name, numbers formatted like
    :class:`Table`'s cells, a pair such as (before, after) shown as "before → after"."""

    def __init__(self, values: Mapping[str, Any], *, caption: str = "") -> None:
        self.values = dict(values)
        self.caption = caption

    def _text(self, value: Any) -> str:
        if isinstance(value, tuple) and len(value) == 2:
            return f"{self._text(value[0])} → {self._text(value[1])}"
        return _cell(value)

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def __repr__(self) -> str:
        width = max((len(name) for name in self.values), default=0)
        lines = [f"{name:<{width}}  {self._text(value)}" for name, value in self.values.items()]
        return "\n".join([self.caption, *lines] if self.caption else lines)

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><th style='text-align:left;padding-right:1em'>{html.escape(str(name))}</th>"
            f"<td style='text-align:left'>{html.escape(self._text(value))}</td></tr>"
            for name, value in self.values.items()
        )
        style = "text-align:left;color:#555"
        caption = f"<caption style='{style}'>{html.escape(self.caption)}</caption>" if self.caption else ""
        return f"<table class='wb-record'>{caption}{rows}</table>"


def record(values: Mapping[str, Any], caption: str = "") -> Record:
    """Show a few named values for reading (see :class:`Record`); the values themselves are ``.values``.

    >>> record({"ratingCount": (3675, 3676), "newest review": "Light and bright."})
    ratingCount    3,675 → 3,676
    newest review  Light and bright.
    """
    return Record(values, caption=caption)


def _is_rows(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(item, Mapping) for item in value)


class Document:
    """One document shown for reading: its plain fields as a record, each array of sub-documents as a table."""

    def __init__(self, document: Mapping[str, Any], *, caption: str = "") -> None:
        self.document = dict(document)
        self.caption = caption

    def parts(self) -> tuple[Record, list[tuple[str, Table]]]:
        """The record of plain fields, and (field, table) for each array of sub-documents."""
        import pandas as pd

        plain = {k: v for k, v in self.document.items() if not _is_rows(v)}
        arrays = [
            (k, Table(pd.DataFrame(v), caption=f"{k}: {len(v):,} entries"))
            for k, v in self.document.items()
            if _is_rows(v)
        ]
        return Record(plain, caption=self.caption), arrays

    def __repr__(self) -> str:
        fields, arrays = self.parts()
        return "\n\n".join([repr(fields), *(repr(table) for _, table in arrays)])

    def _repr_html_(self) -> str:
        fields, arrays = self.parts()
        return fields._repr_html_() + "".join(table._repr_html_() for _, table in arrays)


def document(value: Mapping[str, Any], caption: str = "") -> Document:
    """Show a document for reading (see :class:`Document`); the document itself is ``.document``.

    >>> document({"_id": "bike-1", "parts": [{"partId": "wheel-1", "quantity": 2}]})
    _id  bike-1
    <BLANKLINE>
    parts: 1 entries
        partId quantity
    0  wheel-1        2
    """
    if not isinstance(value, Mapping):
        from workbook.errors import ArgumentTypeError

        raise ArgumentTypeError("document", value, "a document (a dict), such as a find_one result")
    return Document(value, caption=caption)


def documents(values: Sequence[Mapping[str, Any]], caption: str = "") -> Table:
    """Show a list of documents as a table, one row per document (nested values as text)."""
    import pandas as pd

    return Table(pd.DataFrame(list(values)), caption=caption)


def dataset_summary(dataset: Any) -> Record:
    """A generated dataset at a glance: its documents per collection, captioned with name, scale and seed.

    >>> from workbook.datasets.dataset import Dataset
    >>> dataset_summary(Dataset("store", "tiny", 7, {"products": [{}] * 1200, "reviews": []}))
    store at scale tiny, seed 7: documents per collection
    products  1,200
    reviews   0
    """
    caption = f"{dataset.name} at scale {dataset.scale}, seed {dataset.seed}: documents per collection"
    return Record(dataset.counts(), caption=caption)

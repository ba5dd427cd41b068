"""A refused write in a notebook shows its reason in two lines, and what the last line suggests works."""

from __future__ import annotations

import pytest
from pymongo.errors import BulkWriteError, DuplicateKeyError

from workbook import display


def test_a_duplicate_key_is_two_lines_with_the_code_and_the_reason(db):
    db.follows.insert_one({"_id": "a-b"})
    with pytest.raises(DuplicateKeyError) as caught:
        db.follows.insert_one({"_id": "a-b"})
    lines = display.write_error_text(caught.value).splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("Write refused (code 11000): ") and "duplicate key" in lines[0]
    assert lines[1] == display.NOT_WRITTEN and "%tb" in lines[1]


def test_a_refused_insert_many_says_how_many_went_in_first(db):
    with pytest.raises(BulkWriteError) as caught:
        db.follows.insert_many([{"_id": 1}, {"_id": 2}, {"_id": 1}])
    first, second = display.write_error_text(caught.value).splitlines()
    assert "code 11000" in first and "2 inserted before it" in first and second == display.NOT_WRITTEN


def test_a_long_reason_is_cut():
    from pymongo.errors import WriteError

    text = display.write_error_text(WriteError("E11000 " + "x" * 5000, code=11000))
    assert len(text.splitlines()[0]) < display.REASON_CHARS + 40 and text.splitlines()[0].endswith("...")


def test_in_ipython_the_handler_prints_two_lines_and_tb_then_shows_the_traceback(db, capsys):
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        assert display.install() is True
        shell.user_ns["coll"] = db.follows
        shell.run_cell("coll.insert_one({'_id': 'dup'})")
        capsys.readouterr()
        shell.run_cell("coll.insert_one({'_id': 'dup'})")
        shown = capsys.readouterr().out.strip().splitlines()
        assert len(shown) == 2 and "code 11000" in shown[0] and shown[1] == display.NOT_WRITTEN
        shell.run_cell("%tb")  # what the second line suggests
        traceback = capsys.readouterr().out
        assert "DuplicateKeyError" in traceback and "No traceback available" not in traceback
        result = shell.run_cell("import sys; sys.last_value.details['code']")
        assert result.result == 11000  # and the other suggestion
    finally:
        display._installed.discard(id(shell))
        InteractiveShell.clear_instance()

"""The conformance command's bookkeeping (the run itself takes minutes: `python -m workbook conformance`)."""

from __future__ import annotations

import json

from workbook.dev import conformance

REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
  <testcase classname="test.test_bulk.TestBulk" name="test_ok" />
  <testcase classname="test.test_bulk.TestBulk" name="test_bad">
    <failure message="AssertionError: 1 != 2">x</failure></testcase>
  <testcase classname="test.test_bulk.TestBulk" name="test_boom"><error message="KeyError: 'code'">x</error></testcase>
  <testcase classname="test.test_bulk.TestBulk" name="test_skip"><skipped message="needs a replica set" /></testcase>
</testsuite></testsuites>
"""


def test_a_junit_report_is_counted_per_outcome(tmp_path):
    path = tmp_path / "r.xml"
    path.write_text(REPORT)
    result = conformance._read_report("test_bulk.py", path)
    assert (result.passed, result.failed, result.skipped, result.ran) == (1, 2, 1, 3)
    assert result.failures == ["TestBulk.test_bad: AssertionError: 1 != 2", "TestBulk.test_boom: KeyError: 'code'"]


def test_a_missing_report_counts_as_a_failure(tmp_path):
    result = conformance._read_report("test_x.py", tmp_path / "none.xml")
    assert result.failed == 1 and "no report" in result.failures[0]


def test_summary_rates_exclude_skips_and_record_names_every_failure(tmp_path):
    results = [
        conformance.FileResult("a.py", passed=19, failed=1, skipped=5, failures=["A.t: boom"]),
        conformance.FileResult("b.py", passed=0, failed=0, skipped=3),
    ]
    table = conformance.summary(results)
    assert "| a.py | 19 | 1 | 5 | 95.0% |" in table and "| b.py | 0 | 0 | 3 | - |" in table
    assert "| **all** | **19** | **1** | **8** | **95.0%** |" in table
    conformance.record(results, tmp_path)
    data = json.loads((tmp_path / "last-run.json").read_text())
    assert data["files"][0]["failures"] == ["A.t: boom"]
    assert "- a.py: A.t: boom" in (tmp_path / "last-run.md").read_text()


def test_an_unknown_test_file_is_refused_with_the_choices(tmp_path, monkeypatch):
    import pytest

    from workbook.errors import WorkbookError

    (tmp_path / "test").mkdir()
    monkeypatch.setattr(conformance, "fetch_tests", lambda: tmp_path)
    with pytest.raises(WorkbookError, match="test_collection.py"):
        conformance.main(["test_nope.py"])

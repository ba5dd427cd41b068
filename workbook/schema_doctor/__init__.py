"""The schema doctor: the seven schema anti-patterns found on any database, with evidence, the fix and the lesson.

>>> import workbook
>>> report = workbook.doctor(workbook.load("store", "embedded"))  # doctest: +SKIP
>>> report.to_frame()  # doctest: +SKIP

Read-only (every command goes through :class:`~workbook.schema_doctor.readonly.ReadOnlyDatabase`),
sampled, and bounded in time. The command line is ``python -m workbook doctor``. Names are
imported lazily, so the command line's parser does not pay for pandas.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbook.schema_doctor.examine import doctor as doctor
    from workbook.schema_doctor.lessons import ANTI_PATTERNS as ANTI_PATTERNS
    from workbook.schema_doctor.lessons import LESSONS as LESSONS
    from workbook.schema_doctor.report import Finding as Finding
    from workbook.schema_doctor.report import Report as Report
    from workbook.schema_doctor.severity import Severity as Severity
    from workbook.schema_doctor.thresholds import Thresholds as Thresholds
    from workbook.schema_doctor.workload_adapter import HotOperation as HotOperation

_EXPORTS = {
    "doctor": "workbook.schema_doctor.examine",
    "ANTI_PATTERNS": "workbook.schema_doctor.lessons",
    "LESSONS": "workbook.schema_doctor.lessons",
    "Finding": "workbook.schema_doctor.report",
    "Report": "workbook.schema_doctor.report",
    "Severity": "workbook.schema_doctor.severity",
    "Thresholds": "workbook.schema_doctor.thresholds",
    "HotOperation": "workbook.schema_doctor.workload_adapter",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'workbook.schema_doctor' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value

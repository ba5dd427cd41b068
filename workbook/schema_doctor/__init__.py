"""The schema doctor: the seven schema anti-patterns found on any database, with evidence, the fix and the lesson.

>>> import workbook
>>> report = workbook.doctor(workbook.connect(database="store_embedded", quiet=True), "store")  # doctest: +SKIP
>>> report.to_frame()  # doctest: +SKIP

Read-only (every command goes through :class:`~workbook.schema_doctor.readonly.ReadOnlyDatabase`),
sampled, and bounded in time. The command line is ``python -m workbook doctor``.
"""

from workbook.schema_doctor.examine import doctor
from workbook.schema_doctor.lessons import ANTI_PATTERNS, LESSONS
from workbook.schema_doctor.report import Finding, Report, Severity
from workbook.schema_doctor.thresholds import Thresholds
from workbook.schema_doctor.workload_adapter import HotOperation

__all__ = ["ANTI_PATTERNS", "LESSONS", "Finding", "HotOperation", "Report", "Severity", "Thresholds", "doctor"]

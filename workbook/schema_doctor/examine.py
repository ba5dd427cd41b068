"""``doctor(db, workload=None)``: find the seven anti-patterns on a database, read-only and bounded in time."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any

import pymongo
from pymongo.database import Database
from pymongo.errors import OperationFailure, PyMongoError

from workbook.errors import ArgumentTypeError
from workbook.schema_doctor.access import check_case_insensitive, check_lookups, check_together, profiler_observations
from workbook.schema_doctor.arrays import check_arrays
from workbook.schema_doctor.collections import check_collections
from workbook.schema_doctor.context import Context
from workbook.schema_doctor.documents import check_documents
from workbook.schema_doctor.indexes import check_indexes
from workbook.schema_doctor.observe import Observation, observe
from workbook.schema_doctor.readonly import Budget, OutOfTime, ReadOnlyDatabase
from workbook.schema_doctor.report import Finding, Report
from workbook.schema_doctor.thresholds import (
    CALLS_PER_OPERATION,
    DEFAULT_THRESHOLDS,
    PROFILE_ENTRIES,
    SAMPLE_SIZE,
    TIME_LIMIT,
    Thresholds,
)
from workbook.schema_doctor.workload_adapter import course_hot_operations


def database_of(target: Any) -> Database[Any]:
    """The pymongo ``Database`` behind ``target``: a Database, or any object with a ``.db`` that is one."""
    if isinstance(target, Database):
        return target
    inner = getattr(target, "db", None)
    if isinstance(inner, Database):
        return inner
    raise ArgumentTypeError(
        "db",
        target,
        "a pymongo Database (or an object with a .db that is one)",
        fix="Pass what workbook.load(...) returned, or workbook.connect(database=...).",
    )


def _read_only_note(name: str) -> str:
    """The report's first note: the doctor only read, and whose database it read."""
    from workbook.namespace import is_own_database

    if is_own_database(name):
        return f"read-only: the doctor only read {name} and wrote nothing"
    return (
        f"read-only: {name} is outside the workbench's own databases; the doctor only read it and wrote nothing "
        "(hot reads of the workload ran through a view that refuses every write)"
    )


def _first_line(error: Exception) -> str:
    return str(error).splitlines()[0][:200] if str(error) else type(error).__name__


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def doctor(
    db: Any,
    workload: Any = None,
    *,
    shape: str | None = None,
    thresholds: Thresholds | None = None,
    sample_size: int = SAMPLE_SIZE,
    full_scan: bool = False,
    time_limit: float = TIME_LIMIT,
    calls: int = CALLS_PER_OPERATION,
    say: Callable[[str], None] | None = None,
) -> Report:
    """Examine ``db`` for the seven schema anti-patterns; read-only, sampled, within ``time_limit`` seconds.

    ``workload`` (a course dataset name such as ``"store"``, a ``Workload``, or a list of
    ``HotOperation``; by default the dataset ``load()`` recorded in ``db``, if any) lets the
    doctor run each hot read a few times under command monitoring to check bloat against what it
    returns, data read together, case-insensitive regexes and ``$lookup``. Writes are never run.
    ``full_scan=True`` reads every document instead of a ``$sample`` of ``sample_size`` (announced
    first through ``say``, default: standard error). On the offline default the documents are read
    from the engine's memory instead (every one, up to 200,000 per collection; see
    :mod:`~workbook.schema_doctor.memory`); ``report.notes`` says what was read, and how.
    """
    from workbook.connection import engine_info

    database = database_of(db)
    for name, value in (("sample_size", sample_size), ("calls", calls)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ArgumentTypeError(
                name,
                value,
                "a positive whole number",
                fix=f"e.g. {name}={SAMPLE_SIZE if name == 'sample_size' else CALLS_PER_OPERATION}",
            )
    from workbook.bounds import MAX_CALLS, check_count

    check_count("calls", calls, most=MAX_CALLS, unit="calls per hot operation")
    if thresholds is not None and not isinstance(thresholds, Thresholds):
        raise ArgumentTypeError("thresholds", thresholds, "a Thresholds", fix="Thresholds(array_elements=1000)")
    budget = Budget(time_limit)
    readonly = ReadOnlyDatabase(database, budget)
    context = Context(
        readonly, budget, thresholds or DEFAULT_THRESHOLDS, sample_size, full_scan, say or _stderr, source=database
    )
    report = Report(database.name, engine_info(database).label)
    observations: list[Observation] = []

    def workload_step() -> Iterable[Finding]:
        operations = course_hot_operations(db, readonly, workload, shape, calls)
        observations.extend(
            observe(readonly, database.client, operations, calls, context.thresholds.hot_per_second, context.notes)
        )
        observations.extend(profiler_observations(context, PROFILE_ENTRIES))
        if not observations:
            context.notes.append(
                "no workload given and no profiler entries: checks 5-7 and bloat-against-reads skipped"
            )
        return []

    # Steps yield findings one at a time: what was found before the time limit is kept.
    steps: list[tuple[str, Callable[[], Iterable[Finding]]]] = [
        ("collections", lambda: check_collections(context)),
        ("indexes", lambda: check_indexes(context)),
        ("arrays", lambda: check_arrays(context)),
        ("workload", workload_step),
        ("documents", lambda: check_documents(context, observations)),
        ("read together", lambda: check_together(context, observations)),
        ("case-insensitive regex", lambda: check_case_insensitive(context, observations)),
        ("$lookup", lambda: check_lookups(context, observations)),
    ]
    from workbook.waiting import wait_bar

    checking = wait_bar(total=len(steps), desc=f"doctor {database.name}", unit="check")  # seconds on a big database
    with pymongo.timeout(time_limit), checking as bar:
        for position, (name, step) in enumerate(steps):
            bar.set_postfix_str(name, refresh=False)
            bar.update(position - bar.n)
            try:
                for finding in step():
                    report.findings.append(finding)
            except OutOfTime:
                pass
            except OperationFailure as error:
                if error.timeout:
                    pass
                else:  # e.g. no privilege for $indexStats: this check is lost, the others still run
                    report.complete = False
                    context.notes.append(f"{name}: the server refused a read ({error.code}: {_first_line(error)})")
                    continue
            except PyMongoError as error:
                if not error.timeout:
                    raise
            else:
                continue
            report.complete = False
            skipped = ", ".join(n for n, _ in steps[position:])
            context.notes.append(f"time limit of {time_limit:g} s reached: not run (or not finished): {skipped}")
            break
        bar.update(len(steps) - bar.n)  # done, or stopped by the time limit (the report says so): the bar goes
    report.notes = [*context.notes, _read_only_note(database.name)]
    report.seconds = budget.elapsed()
    return report

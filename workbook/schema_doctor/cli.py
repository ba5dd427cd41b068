"""``python -m workbook doctor``: the schema doctor on the command line, with an exit code for CI."""

from __future__ import annotations

import argparse
from typing import Any

from pymongo.errors import ConfigurationError, OperationFailure

from workbook.errors import WorkbookError
from workbook.schema_doctor.severity import Severity
from workbook.schema_doctor.thresholds import SAMPLE_SIZE, TIME_LIMIT

FOUND = 1
"""Exit code when something at or above ``--fail-on`` was found (0: nothing; 2: an error)."""


def add_doctor_command(commands: Any) -> None:
    """Add the ``doctor`` subcommand to the workbench's command parser."""
    doctor = commands.add_parser(
        "doctor",
        help="find the seven schema anti-patterns on a database (read-only)",
        description="Find the seven schema anti-patterns on a database: read-only, sampled, bounded in time. "
        f"Exit code {FOUND} if anything at or above --fail-on was found, 0 if not, 2 on an error.",
    )
    # SUPPRESS: `--uri` may also come before the subcommand; an absent one here must not erase it.
    doctor.add_argument("--uri", default=argparse.SUPPRESS, help="MongoDB URI (default: MONGODB_URI, else offline)")
    doctor.add_argument("--database", help="database to examine (default: the URI's database)")
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")
    doctor.add_argument(
        "--fail-on",
        default="warning",
        choices=[s.label for s in Severity],
        help="lowest severity that makes the exit code non-zero (default: warning)",
    )
    doctor.add_argument("--workload", help="a course dataset's workload to observe (store, followers, parts)")
    doctor.add_argument("--shape", help="the shape the database holds, if its name does not say")
    doctor.add_argument(
        "--sample-size", type=int, default=SAMPLE_SIZE, help=f"documents per collection ({SAMPLE_SIZE:,})"
    )
    doctor.add_argument("--time-limit", type=float, default=TIME_LIMIT, help=f"seconds for the run ({TIME_LIMIT:g})")
    doctor.add_argument("--full-scan", action="store_true", help="read every document (announced first)")


def run_doctor_command(args: argparse.Namespace) -> int:
    """Run the doctor as the parsed ``args`` say; print the report; return the exit code."""
    from workbook.connection import client_for
    from workbook.schema_doctor.examine import doctor

    client = client_for(args.uri)
    database = client[_database_name(client, args.database)]
    report = doctor(
        database,
        args.workload,
        shape=args.shape,
        sample_size=args.sample_size,
        full_scan=args.full_scan,
        time_limit=args.time_limit,
    )
    print(report.to_json() if args.json else repr(report))
    return FOUND if report.at_or_above(args.fail_on) else 0


def _database_name(client: Any, requested: str | None) -> str:
    """``requested`` as it exists on the server (or inside the learner's namespace); else the URI's database."""
    from workbook import namespace

    try:
        existing: set[str] | None = set(client.list_database_names())
    except OperationFailure:  # no listDatabases privilege: take the name as given
        existing = None
    listed = ", ".join(sorted(existing)) if existing else "(none)"
    if requested is None:
        try:
            return str(client.get_default_database().name)
        except ConfigurationError:  # the URI names no database
            pass
        raise WorkbookError(
            "Which database? The URI names none.",
            fix="Pass --database NAME. On this server: " + (listed if existing is not None else "(none listed)"),
        )
    if existing is None or requested in existing:
        return requested
    inside = namespace.database_name(requested) if not requested.startswith(namespace.PREFIX) else requested
    if inside in existing:
        return inside
    raise WorkbookError(
        f"No database {requested!r} on this server (nor {inside!r} in your workbench namespace).",
        fix=f"Choose one that exists: {listed}."
        + ("" if existing else " Load one first: workbook.load('store', 'hybrid')."),
    )

"""Command line: ``python -m workbook check``, ``reset``, ``diffcheck``, ``doctor``, ``conformance``, ``bench``,
``lab``, ``test``, ``prepare``, and the quiz's ``progress``, ``class-report`` and ``quiz-build``."""

from __future__ import annotations

import argparse
import sys

OFFLINE_RESET = (
    "No MONGODB_URI is set, so your data is on the offline default, which keeps it inside the Python "
    "process that runs your notebook (its kernel); this command is a process of its own, with an empty "
    "offline default, so it cannot reach that data.\n"
    "To reset: run `workbook.reset()` in a notebook cell, or restart the kernel (the offline data goes with it). "
    "For a shared server, pass --uri or set MONGODB_URI."
)
"""What ``reset`` says on the offline default, where this process cannot reach the kernel's data."""


def main(argv: list[str] | None = None) -> int:
    """Run a workbook command; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m workbook", description="The schema-design workbench.")
    parser.add_argument("--uri", help="MongoDB URI (default: MONGODB_URI, else the offline default)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.add_parser("check", help="check Python, packages, the engine and transactions")
    commands.add_parser("reset", help="drop this learner's workbench databases (and nothing else)")
    commands.add_parser("lab", help="check, then open the course in JupyterLab (what `make lab` does, without make)")
    commands.add_parser("test", help="check, then run every test and notebook (what `make test` does, without make)")
    prepare = commands.add_parser(
        "prepare", help="make the course's data once on the offline default, so lessons restore it (`make lab` runs it)"
    )
    prepare.add_argument("--scale", help="the scale to prepare (default: WORKBOOK_SCALE, else small)")
    diffcheck = commands.add_parser("diffcheck", help="compare the planner model with a real server's explain")
    diffcheck.add_argument("--seed", type=int, default=0, help="seed of the generated cases (default 0)")
    diffcheck.add_argument("--cases", type=int, default=50, help="how many cases to generate (default 50)")
    diffcheck.add_argument(
        "--extended", action="store_true", help="also $or, $elemMatch, $all, $size, $type, $not, $ne, $nin, $exists"
    )
    conformance = commands.add_parser(
        "conformance", help="run pymongo's own CRUD-level tests against the offline default (minutes)"
    )
    conformance.add_argument("--record", action="store_true", help="write conformance/last-run.json and .md")
    conformance.add_argument("files", nargs="*", help="pymongo test files to run (default: the CRUD-level set)")
    bench = commands.add_parser("bench", help="measure the course's speed goals on this machine (quick; --full)")
    bench.add_argument("--full", action="store_true", help="also the notebooks, first-ever loads, 100k documents")
    bench.add_argument("--json", metavar="PATH", help="where to write the JSON (default benchmarks/results/last.json)")
    bench.add_argument("--readme", action="store_true", help="measure nothing: rewrite README's table from the JSON")
    from workbook.quiz.cli import QUIZ_COMMANDS, add_quiz_commands
    from workbook.schema_doctor.cli import add_doctor_command

    add_quiz_commands(commands)
    add_doctor_command(commands)
    args = parser.parse_args(argv)

    from workbook.errors import WorkbookError

    try:
        if args.command == "check":
            from workbook.check import main as check

            return check(args.uri)
        if args.command == "diffcheck":
            from workbook.dev.differential import main as diffcheck_main

            return diffcheck_main(args.uri, seed=args.seed, cases=args.cases, extended=args.extended)
        if args.command == "conformance":
            from workbook.dev.conformance import FILES
            from workbook.dev.conformance import main as conformance_main

            return conformance_main(args.files or FILES, save=args.record)
        if args.command == "doctor":
            from workbook.schema_doctor.cli import run_doctor_command

            return run_doctor_command(args)
        if args.command == "prepare":
            from workbook.prepare import prepare_course

            prepare_course(args.scale, args.uri)
            return 0
        if args.command in ("lab", "test"):
            from workbook.launch import run_course_command

            return run_course_command(args.command, args.uri)
        if args.command == "bench":
            from workbook.dev.bench import main as bench_main

            return bench_main(full=args.full, json_path=args.json, readme=args.readme)
        if args.command in QUIZ_COMMANDS:
            from workbook.quiz.cli import run_quiz_command

            return run_quiz_command(args)
        from workbook.connection import reset, resolve_uri

        dropped = reset(args.uri)
        print("dropped: " + (", ".join(dropped) if dropped else "nothing (no workbench databases)"))
        if resolve_uri(args.uri) is None:
            print(OFFLINE_RESET)
        return 0
    except WorkbookError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

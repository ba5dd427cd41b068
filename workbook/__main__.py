"""Command line: ``python -m workbook check`` and ``python -m workbook reset``."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    """Run a workbook command; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m workbook", description="The schema-design workbench.")
    parser.add_argument("--uri", help="MongoDB URI (default: MONGODB_URI, else the offline default)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.add_parser("check", help="check Python, packages, the engine and transactions")
    commands.add_parser("reset", help="drop this learner's workbench databases (and nothing else)")
    args = parser.parse_args(argv)

    from workbook.errors import WorkbookError

    try:
        if args.command == "check":
            from workbook.check import main as check

            return check(args.uri)
        from workbook.connection import reset

        dropped = reset(args.uri)
        print("dropped: " + (", ".join(dropped) if dropped else "nothing (no workbench databases)"))
        return 0
    except WorkbookError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

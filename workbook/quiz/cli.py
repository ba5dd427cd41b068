"""The quiz's commands: ``progress``, ``class-report`` and ``quiz-build`` (see ``python -m workbook -h``)."""

from __future__ import annotations

import argparse
import sys

QUIZ_COMMANDS = ("progress", "class-report", "quiz-build", "progress-import", "class-grades")


def add_quiz_commands(commands: argparse._SubParsersAction) -> None:
    """Declare the quiz's subcommands on the workbook's command line."""
    progress = commands.add_parser("progress", help="summarise a learner's quiz progress (attempts, correct)")
    progress.add_argument("--learner", help="whose progress (default: WORKBOOK_LEARNER, else the OS user)")
    report = commands.add_parser("class-report", help="merge a folder of learners' progress files into a report")
    report.add_argument("folder", nargs="?", help="folder holding the learners' <name>.json progress files")
    report.add_argument(
        "--server", action="store_true", help="read the class live from the MongoDB server (MONGODB_URI) instead"
    )
    importing = commands.add_parser(
        "progress-import", help="add a folder of progress files to the MongoDB server's class progress (MONGODB_URI)"
    )
    importing.add_argument("folder", help="folder holding the learners' <name>.json progress files")
    grades = commands.add_parser(
        "class-grades", help="export gradebook.csv (learner x bank) and nbgrader-scores.csv (per question)"
    )
    grades.add_argument("folder", nargs="?", help="progress files' folder (default: the server, MONGODB_URI)")
    grades.add_argument("--out", required=True, help="folder to write the two CSV files into")
    report.add_argument("--out", help="write the report as CSV here (a folder gets class-report.csv)")
    report.add_argument(
        "--chart", help="write a bar chart of %% solved per question here: .html works everywhere, .png needs Chromium"
    )
    build = commands.add_parser("quiz-build", help="turn a plaintext answer file into a hashed question bank")
    build.add_argument("answers_file", help="the instructor's answer file (YAML or JSON), kept outside the repository")
    build.add_argument("--out", required=True, help="the bank file to write, e.g. workbook/quiz/questions/NAME.json")


def run_quiz_command(args: argparse.Namespace) -> int:
    """Run one of :data:`QUIZ_COMMANDS`; returns the exit code."""
    if args.command == "progress":
        from workbook.quiz.progress import Progress

        print(Progress.load(args.learner).summary())
        return 0
    if args.command == "progress-import":
        from workbook.quiz import server_progress

        attempts = server_progress.import_files(args.folder)
        print(f"{args.folder}: {attempts} attempts added to {server_progress.DATABASE}.{server_progress.COLLECTION}")
        return 0
    if args.command == "class-grades":
        from workbook.quiz import class_view

        for exported in class_view.export_grades(class_view.class_rows(args.folder), args.out):
            print(exported)
        return 0
    if args.command == "class-report" and args.server:
        from workbook.quiz import server_progress
        from workbook.quiz.report import per_question

        live = per_question(server_progress.learner_rows())
        print(live.to_string(index=False) if len(live) else "No progress recorded on the server yet.")
        return 0
    if args.command == "class-report" and not args.folder:
        from workbook.errors import WorkbookError

        raise WorkbookError("class-report needs a folder of progress files, or --server.", fix="Pass one of them.")
    if args.command == "class-report":
        from workbook.quiz.report import output_path, write_class_report

        written = [
            (label, output_path(path, name))
            for label, path, name in (
                ("report", args.out, "class-report.csv"),
                ("chart", args.chart, "class-report.png"),
            )
            if path
        ]
        report, notes = write_class_report(args.folder, args.out, args.chart)
        print(report.to_string(index=False) if len(report) else f"No progress recorded in {args.folder}.")
        for note in notes:
            print(note, file=sys.stderr)
        for label, path in written:
            print(f"{label}: {path}")
        return 0
    from workbook.quiz.authoring import build_bank

    bank = build_bank(args.answers_file, args.out)
    print(f"{args.out}: {len(bank['questions'])} questions, answers hashed ({bank['hashing']})")
    return 0

"""``python -m workbook check``: is this machine ready for the course?"""

from __future__ import annotations

import platform
import sys
from dataclasses import dataclass, field
from importlib import metadata

from workbook import namespace
from workbook.connection import client_for, engine_info, resolve_uri
from workbook.errors import NamespaceError, WorkbookError

PACKAGES = ("workbook", "pymongo", "mongoeco", "pandas", "plotly", "ipywidgets", "tqdm", "jsonschema", "jupyterlab")


@dataclass
class CheckReport:
    """What ``check`` found: lines to print and the problems that make it fail."""

    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing is wrong."""
        return not self.problems

    def verdict(self) -> str:
        """The one-line verdict."""
        if self.ok:
            return "verdict: OK, ready for the course"
        return "verdict: NOT READY: " + "; ".join(self.problems)


def package_version(name: str) -> str:
    """The installed version of a distribution, or 'not installed'."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def shape_suffixes() -> list[str]:
    """``<dataset>_<shape>`` for every dataset and shape: the short names of shape databases, longest first."""
    from workbook.datasets.registry import DATASETS
    from workbook.shapes import SHAPE_NAMES

    names = {f"{dataset}_{shape}" for dataset in DATASETS for shape in SHAPE_NAMES}
    return sorted(names, key=lambda name: (-len(name.encode()), name))


def short_database_names() -> list[str]:
    """Every short database name the workbench may create, longest first.

    Each dataset's shapes, each design task's database and any shape a task loads inside it
    (``namespace.shape_database_name(within=...)``), diffcheck's and prepare's.
    """
    from workbook.quiz.bank import all_questions

    shapes = shape_suffixes()
    tasks = {q.get("params", {}).get("database", "quiz") for q in all_questions().values() if q["type"] == "design"}
    names = {*shapes, *tasks, "diffcheck", "prepare"} | {f"{task}_{shape}" for task in tasks for shape in shapes}
    return sorted(names, key=lambda name: (-len(name.encode()), name))


def check_learner(report: CheckReport, learner: str | None = None) -> None:
    """Report the learner's key and whether every database the course uses fits MongoDB's name limit."""
    key = namespace.learner_name(learner)
    base = namespace.learner_database(learner)
    report.lines.append(f"learner: {key!r} (databases {base}*, progress file {key}.json)")
    too_long = []
    for name in short_database_names():
        try:
            namespace.database_name(name, learner=learner)
        except NamespaceError:
            too_long.append(f"{base}_{name}")
    longest = f"{base}_{short_database_names()[0]}"
    report.lines.append(f"longest database name: {longest} ({len(longest.encode())} of 63 bytes)")
    if too_long:
        report.problems.append(
            f"learner {key!r} cannot load every shape: {', '.join(too_long)} exceed MongoDB's 63-byte database "
            "names (set a shorter WORKBOOK_LEARNER)"
        )


def run_check(uri: str | None = None) -> CheckReport:
    """Check Python, packages, the engine, transactions and the database in use."""
    report = CheckReport()
    report.lines.append(f"python: {platform.python_version()} ({sys.executable})")
    if sys.version_info < (3, 13):  # noqa: UP036 - reported, not assumed: check may run on any Python
        report.problems.append("Python 3.13 or newer is needed")
    versions = ", ".join(f"{name} {package_version(name)}" for name in PACKAGES)
    report.lines.append(f"packages: {versions}")
    for required in ("pymongo", "mongoeco", "pandas", "plotly"):
        if package_version(required) == "not installed":
            report.problems.append(f"{required} is not installed (run `make lab` or `make test`)")
    check_learner(report)
    target = resolve_uri(uri)
    report.lines.append("configured: " + ("MONGODB_URI / argument" if target else "nothing, so the offline default"))
    try:
        client = client_for(uri)
        info = engine_info(client)
    except WorkbookError as error:
        report.lines.append(f"engine: unavailable\n  {error}")
        report.problems.append("the configured MongoDB server cannot be used")
        return report
    report.lines.append(f"engine: {info.label}, {info.topology}, uri {info.uri}")
    report.lines.append(f"server version: {info.server_version}")
    database = namespace.database_name()
    tx_ok = _transaction_works(client, database) if info.transactions else False
    report.lines.append(f"transactions: {'available (one committed just now)' if tx_ok else 'not available'}")
    if info.transactions and not tx_ok:
        report.problems.append("the server reports transactions but a test transaction failed")
    report.lines.append(f"database in use: {database}")
    return report


def _transaction_works(client, database: str) -> bool:  # type: ignore[no-untyped-def]
    """Commit one tiny transaction in the learner's own database, then remove what it wrote."""
    collection = client[database]["_workbook_check"]
    try:
        with client.start_session() as session:  # with_transaction: a write conflict is retried, not a failure
            session.with_transaction(lambda s: collection.insert_one({"check": True}, session=s))
        committed = collection.count_documents({"check": True}) >= 1
        collection.drop()
        return committed
    except Exception:  # any driver or server error means "not available"
        return False


def main(uri: str | None = None) -> int:
    """Print the report; return the exit code (0 when ready)."""
    report = run_check(uri)
    for line in report.lines:
        print(line)
    print(report.verdict())
    return 0 if report.ok else 1

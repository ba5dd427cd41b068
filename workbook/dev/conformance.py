"""``python -m workbook conformance``: pymongo's own CRUD-level tests, run against the offline default.

Fetches the test suite of the installed (pinned) pymongo from the package index (the sdist holds
``test/``), runs the CRUD-level files with pytest in a child process whose offline server is the
one under test (:mod:`workbook.dev.conformance_plugin`), and prints pass / fail / skip per file with
the pass rate over the tests that did not skip. ``--record`` writes ``conformance/last-run.json`` and
``conformance/last-run.md``. Slow (minutes): not part of the ordinary test run.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence

import pymongo

from workbook.errors import WorkbookError

FILES = (
    "test_collection.py",
    "test_cursor.py",
    "test_database.py",
    "test_bulk.py",
    "test_session.py",
    "test_collation.py",
    "test_crud_unified.py",
    "test_crud_v1.py",
    "test_examples.py",
    "test_custom_types.py",
    "test_raw_bson.py",
)
"""pymongo's CRUD-level test files (synchronous versions): what a schema-design learner's code does
(test_examples.py holds the manual's own CRUD examples)."""

CACHE = pathlib.Path(os.environ.get("WORKBOOK_CACHE", pathlib.Path.home() / ".cache" / "workbook"))
RECORD_DIR = pathlib.Path(__file__).resolve().parents[2] / "conformance"


@dataclasses.dataclass
class FileResult:
    """Outcome counts of one pymongo test file."""

    file: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    failures: list[str] = dataclasses.field(default_factory=list)

    @property
    def ran(self) -> int:
        """Tests that did not skip."""
        return self.passed + self.failed


def fetch_tests(version: str = pymongo.version, cache: pathlib.Path = CACHE) -> pathlib.Path:
    """The ``test/`` directory of pymongo ``version``'s sdist, downloaded once with pip and cached."""
    target = cache / f"pymongo-{version}-tests"
    if (target / "test" / "__init__.py").exists():
        return target
    with tempfile.TemporaryDirectory() as download:
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--no-binary",
            ":all:",
            f"pymongo=={version}",
            "-d",
            download,
            "--quiet",
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        archives = list(pathlib.Path(download).glob("pymongo-*.tar.gz"))
        if done.returncode != 0 or not archives:
            raise WorkbookError(
                f"Could not download pymongo {version}'s source from the package index ({done.stderr.strip()[-300:]}). "
                "Check the network or pip's index settings, then run `python -m workbook conformance` again."
            )
        with tarfile.open(archives[0]) as archive:
            members = [m for m in archive.getmembers() if m.name.split("/")[1:2] == ["test"]]
            archive.extractall(download, members=members, filter="data")
        target.mkdir(parents=True, exist_ok=True)
        shutil.copytree(pathlib.Path(download) / f"pymongo-{version}" / "test", target / "test", dirs_exist_ok=True)
    return target


def run_files(root: pathlib.Path, files: Sequence[str] = FILES, timeout: int = 3600) -> list[FileResult]:
    """Run each file in a child pytest (one offline server per file) and collect its outcomes."""
    results = []
    workbook_root = str(pathlib.Path(__file__).resolve().parents[2])
    for name in files:
        report = root / f"{name}.xml"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), workbook_root])}
        env.pop("MONGODB_URI", None)
        command = [
            sys.executable,
            "-m",
            "pytest",
            f"test/{name}",
            "-p",
            "workbook.dev.conformance_plugin",
            "-p",
            "no:cacheprovider",
            "-q",
            "-o",
            "addopts=",
            "--junitxml",
            str(report),
            "-W",
            "ignore",
        ]
        subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=timeout, check=False)
        results.append(_read_report(name, report))
    return results


def _read_report(name: str, report: pathlib.Path) -> FileResult:
    """Count passed / failed (and errored) / skipped test cases in a JUnit XML report."""
    result = FileResult(name)
    if not report.exists():
        result.failed, result.failures = 1, [f"{name}: pytest produced no report (crashed or timed out)"]
        return result
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        test = f"{case.get('classname', '').split('.')[-1]}.{case.get('name')}"
        outcome = next((child for child in case if child.tag in ("failure", "error", "skipped")), None)
        if outcome is None:
            result.passed += 1
        elif outcome.tag == "skipped":
            result.skipped += 1
        else:
            result.failed += 1
            message = (outcome.get("message") or "").splitlines()[0][:160] if outcome.get("message") else ""
            result.failures.append(f"{test}: {message}")
    return result


def summary(results: Sequence[FileResult]) -> str:
    """A markdown table: pass / fail / skip per file and the pass rate over non-skipped tests."""
    lines = ["| file | passed | failed | skipped | pass rate |", "|---|---:|---:|---:|---:|"]
    for r in results:
        rate = f"{100 * r.passed / r.ran:.1f}%" if r.ran else "-"
        lines.append(f"| {r.file} | {r.passed} | {r.failed} | {r.skipped} | {rate} |")
    passed, ran = sum(r.passed for r in results), sum(r.ran for r in results)
    skipped = sum(r.skipped for r in results)
    total = f"{100 * passed / ran:.1f}%" if ran else "-"
    lines.append(f"| **all** | **{passed}** | **{ran - passed}** | **{skipped}** | **{total}** |")
    return "\n".join(lines)


def record(results: Sequence[FileResult], directory: pathlib.Path = RECORD_DIR) -> None:
    """Write ``last-run.json`` (every failure named) and ``last-run.md`` (the table) to ``directory``."""
    from workbook.offline import offline_server

    directory.mkdir(parents=True, exist_ok=True)
    data = {
        "pymongo": pymongo.version,
        "engine": f"mongoeco {offline_server().version}",
        "files": [dataclasses.asdict(r) for r in results],
    }
    (directory / "last-run.json").write_text(json.dumps(data, indent=2) + "\n")
    failures = "\n".join(f"- {r.file}: {f}" for r in results for f in r.failures)
    (directory / "last-run.md").write_text(
        f"# pymongo {pymongo.version}'s tests on the offline default (mongoeco {offline_server().version})\n\n"
        "Produced by `python -m workbook conformance --record`.\n\n"
        f"{summary(results)}\n\n## Failures\n\n{failures or 'none'}\n"
    )


def main(files: Sequence[str] = FILES, *, save: bool = False) -> int:
    """Fetch, run, print the table; 0 when at least 95% of the non-skipped tests pass."""
    root = fetch_tests()
    unknown = [name for name in files if not (root / "test" / name).is_file()]
    if unknown:
        raise WorkbookError(
            f"No pymongo {pymongo.version} test file named {', '.join(unknown)}. "
            f"Choose from the CRUD-level set: {', '.join(FILES)} (or any test_*.py in {root / 'test'})."
        )
    print(f"pymongo {pymongo.version} tests from {root}; running {len(files)} files (this takes minutes)")
    results = run_files(root, files)
    print(summary(results))
    if save:
        record(results)
        print(f"recorded in {RECORD_DIR}")
    passed, ran = sum(r.passed for r in results), sum(r.ran for r in results)
    return 0 if ran and passed / ran >= 0.95 else 1

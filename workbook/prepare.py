"""``python -m workbook prepare``: make the course's data once, before the first lesson (``make lab`` runs it).

On the offline default every shape the notebooks load is built the first time it is loaded on a
machine (generated, validated, indexed: 1-3 s each at ``small``), then restored from its snapshot
file in well under a second (:mod:`workbook.snapshot`). A learner's very first pass through the
course paid those first loads inside the lessons: notebook 01 ran 39.5 s in its cells instead of
15.8 s. This builds each missing snapshot file here, once, with a progress bar, in a process that
exits afterwards (the learner's kernel holds none of it). It does nothing against a server
(``MONGODB_URI``: nothing is snapshotted there) or with ``WORKBOOK_SNAPSHOTS=0``, and skips shapes
whose file is already there; a file made by older code is not this code's and is made again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

COURSE_DATASETS = ("store", "parts", "followers", "blog")
"""The datasets the notebooks load in every shape (the capstone's blog too; its "mine" shape is the learner's)."""

COURSE_SEED = 7
"""The seed every notebook generates with."""

SCRATCH_DATABASE = "prepare"
"""The database (in the learner's namespace) each shape is loaded into here, then dropped."""


@dataclass(frozen=True)
class Prepared:
    """One shape :func:`prepare_course` built: its dataset, shape and how long it took (seconds)."""

    dataset: str
    shape: str
    seconds: float


def missing(scale: str) -> list[tuple[str, str]]:
    """The course's (dataset, shape) pairs at ``scale`` whose snapshot file this code has not written yet:
    each shape of each course dataset, and the store's two applications (notebook 01)."""
    from workbook import snapshot
    from workbook.applications import APPLICATIONS_SHAPE
    from workbook.shapes import SHAPE_NAMES

    pairs = [(dataset, shape) for dataset in COURSE_DATASETS for shape in SHAPE_NAMES]
    pairs.append(("store", APPLICATIONS_SHAPE))
    return [
        (dataset, shape)
        for dataset, shape in pairs
        if not snapshot.file_exists(snapshot.snapshot_key(dataset, scale, COURSE_SEED, shape))
    ]


def prepare_course(
    scale: str | None = None, uri: str | None = None, *, progress: bool = True, say: Callable[[str], None] = print
) -> list[Prepared]:
    """Build the snapshot file of each course shape at ``scale`` (default: the course's) that is missing."""
    import workbook
    from workbook import scales, snapshot
    from workbook.connection import resolve_uri
    from workbook.datasets.registry import check_scale
    from workbook.waiting import wait_bar

    if resolve_uri(uri) is not None:
        say("prepare: a MongoDB server is configured (MONGODB_URI); loads there are not snapshotted, nothing to do")
        return []
    scale = scales.check_course_scale(check_scale(scale or workbook.course_scale()))  # before any work
    if not snapshot.enabled():
        say("prepare: snapshots are switched off (WORKBOOK_SNAPSHOTS=0), nothing to do")
        return []
    todo = missing(scale)
    if not todo:
        say(f"prepare: the course's data at {scale!r} is ready ({snapshot.cache_dir()})")
        return []
    say(f"prepare: making the course's data at {scale!r} once ({len(todo)} shapes; the lessons then restore it)")
    built: list[Prepared] = []
    scratch = workbook.connect(database=SCRATCH_DATABASE, quiet=True)  # not a lesson's: a test's loads stay
    try:
        with wait_bar(todo, desc="prepare the course's data", unit="shape", progress=progress, delay=0) as shapes:
            for dataset, shape in shapes:
                shapes.set_postfix_str(f"{dataset}/{shape}")
                started = time.perf_counter()
                problem = _prepare_one(dataset, shape, scale, scratch)
                if problem is not None:  # it only saves time: the course still opens, its lessons load for real
                    say(f"prepare: stopped at {dataset}/{shape}: {problem} The lessons will make what is missing.")
                    return built
                built.append(Prepared(dataset, shape, time.perf_counter() - started))
    finally:
        scratch.client.drop_database(scratch.name)
    say(f"prepare: done in {sum(p.seconds for p in built):.1f} s ({snapshot.cache_dir()})")
    return built


def _prepare_one(dataset: str, shape: str, scale: str, scratch: Any) -> str | None:
    """Load one shape into ``scratch`` and wait for its snapshot file; what went wrong, or None."""
    import workbook
    from workbook import snapshot
    from workbook.applications import APPLICATIONS_SHAPE, load_applications
    from workbook.errors import WorkbookError

    try:
        if shape == APPLICATIONS_SHAPE:
            load_applications(workbook.generate(dataset, scale=scale, seed=COURSE_SEED), scratch, progress=False)
        else:
            workbook.load(dataset, shape, scratch, scale=scale, seed=COURSE_SEED, progress=False)
        snapshot.flush()  # the file is what this is for: written before the next shape starts
    except WorkbookError as error:  # a cache folder others can write to, ... (the error says the fix)
        return str(error)
    finally:
        snapshot.forget()  # one shape held at a time
    if not snapshot.file_exists(snapshot.snapshot_key(dataset, scale, COURSE_SEED, shape)):
        return f"its snapshot file could not be written in {snapshot.cache_dir()} (read-only, or full)."
    return None

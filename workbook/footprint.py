"""How much memory a loaded shape holds on the offline default, beside the BSON bytes of its documents.

A learner's kernel holds every shape it loaded: the engine's stored documents and their decoded
forms, the planner model's index keys, the snapshot they were restored from. :func:`shape_footprint`
loads one shape into an emptied database (restored from this machine's snapshot file, as a new
kernel does), runs one modelled ``find`` per collection (so the explain model and its ``_id`` keys
exist, as after any workload) and one ``aggregate`` that the engine answers by reading every document
(as a learner's unindexed query or a report does: the engine keeps what it decoded), and reports what
stayed allocated: Python's own count
(``tracemalloc``, stable from run to run) and the resident memory (RSS) the same steps add to a fresh
process, what the machine pays. The two differ: RSS includes memory Python's allocator never sees (the
engine's ``rpds`` persistent maps are allocated in Rust, about 150 bytes a key) and the allocator's own
slack; measured in this process, after an earlier shape was emptied, it reused freed memory and read 0.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbook.loaded import LoadedShape


@dataclass(frozen=True)
class Footprint:
    """What one loaded shape holds: its documents' BSON bytes and the memory its load left allocated."""

    dataset: str
    shape: str
    documents: int
    bson_bytes: int
    traced_bytes: int
    """Bytes allocated by Python and still alive after the load, its first modelled reads and an engine scan
    (tracemalloc)."""
    rss_bytes: int
    """Growth of a fresh process's resident memory over the same steps, untraced (0 where ``/proc`` is missing)."""

    @property
    def ratio(self) -> float:
        """Traced bytes per BSON byte (the goal: at most 3)."""
        return self.traced_bytes / self.bson_bytes if self.bson_bytes else 0.0

    @property
    def rss_ratio(self) -> float:
        """Resident bytes added per BSON byte."""
        return self.rss_bytes / self.bson_bytes if self.bson_bytes else 0.0


def _rss() -> int:
    try:
        for line in Path(f"/proc/{os.getpid()}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def shape_footprint(
    dataset: str, shape: str, *, scale: str = "small", seed: int = 7, resident: bool = True
) -> Footprint:
    """Load ``dataset`` in ``shape`` at ``scale`` on the offline default, into an emptied database, and
    measure what it holds (see the module docstring): traced here, and untraced in a fresh process for the RSS.

    ``resident=False`` leaves the RSS out (0): no second process. The shape is left loaded; loading it again
    replaces it. A real server is refused: its memory is
    the server's, not this process's.
    """
    import workbook
    from workbook import snapshot
    from workbook.engine_reads import is_offline
    from workbook.errors import WorkbookError
    from workbook.namespace import shape_database_name

    db = workbook.connect(database=shape_database_name(dataset, shape), quiet=True)
    if not is_offline(db):
        raise WorkbookError(
            "shape_footprint measures the offline default of this process",
            fix="unset MONGODB_URI (the memory of a real server is the server's)",
        )

    def load_and_read() -> LoadedShape:
        db.client.drop_database(db.name)
        snapshot.forget()  # as a new kernel: restored from the file, not shared with an earlier load's state
        gc.collect()
        loaded = workbook.load(dataset, shape, scale=scale, seed=seed, progress=False)
        _read_all(loaded)
        return loaded

    grown = _resident_in_fresh_process(dataset, shape, scale, seed) if resident else 0
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        traced = tracemalloc.get_traced_memory()[0]
        loaded = load_and_read()
        gc.collect()
        traced = tracemalloc.get_traced_memory()[0] - traced
    finally:
        if started:
            tracemalloc.stop()
    report = loaded.report
    return Footprint(
        dataset,
        shape,
        sum(c.documents for c in report.collections),
        sum(c.bytes for c in report.collections),
        traced,
        grown,
    )


def _resident_in_fresh_process(dataset: str, shape: str, scale: str, seed: int) -> int:
    """The RSS that loading and reading the shape (as :func:`shape_footprint` does) adds to a new process
    that has already loaded the same shape at ``tiny`` elsewhere (so the code it runs is imported: the
    growth is the data's); 0 if the process failed or ``/proc`` is missing."""
    arguments = f"{dataset!r}, {shape!r}, {scale!r}, {seed}"
    code = f"from workbook.footprint import _measure_here; print(_measure_here({arguments}))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    lines = done.stdout.split()
    return int(lines[-1]) if done.returncode == 0 and lines and lines[-1].isdigit() else 0


def _measure_here(dataset: str, shape: str, scale: str, seed: int) -> int:
    """In the fresh process of :func:`_resident_in_fresh_process`: the RSS the load and reads add."""
    import workbook
    from workbook.namespace import shape_database_name

    warm = workbook.connect(database="footprint_warm", quiet=True)
    workbook.load(dataset, shape, warm, scale="tiny", seed=seed, progress=False)
    db = workbook.connect(database=shape_database_name(dataset, shape), quiet=True)
    gc.collect()
    before = _rss()
    loaded = workbook.load(dataset, shape, db, scale=scale, seed=seed, progress=False)
    _read_all(loaded)
    gc.collect()
    return max(0, _rss() - before)


def _read_all(loaded: LoadedShape) -> None:
    """One modelled ``find`` per collection (the explain model and its ``_id`` keys exist) and one ``aggregate``
    the engine answers by reading every document (it keeps what it decoded)."""
    for each in loaded.report.collections:
        collection = loaded.db[each.collection]
        next(iter(collection.find({"_id": {"$exists": True}}).limit(1)), None)
        list(collection.aggregate([{"$match": {"_id": {"$exists": True}}}, {"$count": "n"}]))

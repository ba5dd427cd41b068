"""How much memory a loaded shape holds on the offline default, beside the BSON bytes of its documents.

A learner's kernel holds every shape it loaded: the engine's stored documents and their decoded
forms, the planner model's index keys, the snapshot they were restored from. :func:`shape_footprint`
loads one shape into an emptied database (restored from this machine's snapshot file, as a new
kernel does), runs one modelled ``find`` per collection (so the explain model and its ``_id`` keys
exist, as after any workload) and one ``aggregate`` that the engine answers by reading every document
(as a learner's unindexed query or a report does: the engine keeps what it decoded), and reports what
stayed allocated: Python's own count
(``tracemalloc``, stable from run to run) and the process's resident memory (RSS, what the machine
pays, noisier: freed memory is not always given back).
"""

from __future__ import annotations

import gc
import os
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
    """Growth of the process's resident memory over the same steps, untraced (0 where ``/proc`` is missing);
    a lower bound when memory the emptied database freed is reused."""

    @property
    def ratio(self) -> float:
        """Traced bytes per BSON byte (the goal: at most 3)."""
        return self.traced_bytes / self.bson_bytes if self.bson_bytes else 0.0


def _rss() -> int:
    try:
        for line in Path(f"/proc/{os.getpid()}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def shape_footprint(dataset: str, shape: str, *, scale: str = "small", seed: int = 7) -> Footprint:
    """Load ``dataset`` in ``shape`` at ``scale`` on the offline default, into an emptied database, and
    measure what it holds (see the module docstring): loaded twice, once untraced for the RSS and once traced.

    The shape is left loaded; loading it again replaces it. A real server is refused: its memory is
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
        for each in loaded.report.collections:
            collection = loaded.db[each.collection]
            next(iter(collection.find({"_id": {"$exists": True}}).limit(1)), None)  # the explain model, its _id keys
            list(collection.aggregate([{"$match": {"_id": {"$exists": True}}}, {"$count": "n"}]))  # engine reads all
        return loaded

    # RSS without tracing (tracemalloc's own records would count), then the same steps traced
    db.client.drop_database(db.name)
    gc.collect()
    resident = _rss()
    load_and_read()
    gc.collect()
    resident = _rss() - resident
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
        max(0, resident),
    )

"""Loading a dataset in one shape into a database: bulk, idempotent, with a report of sizes."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd
from pymongo.database import Database
from tqdm.auto import tqdm

from workbook.monitor import GENERATIONS
from workbook.namespace import require_own_database
from workbook.offline import MAX_BSON_SIZE, bson_size, offline_server
from workbook.shapes import shape_spec

if TYPE_CHECKING:
    from workbook.datasets import Dataset

BATCH = 1000
"""Documents per insert batch."""


def course_scale() -> str:
    """The scale notebooks load: ``WORKBOOK_SCALE`` if set (the test suite uses ``tiny``), else ``small``."""
    import os

    from workbook.datasets.registry import check_scale

    return check_scale(os.environ.get("WORKBOOK_SCALE", "small"))


@dataclass(frozen=True)
class CollectionLoad:
    """What one collection received."""

    collection: str
    documents: int
    bytes: int
    max_bytes: int
    indexes: int

    @property
    def avg_bytes(self) -> float:
        """Average BSON size of a document, in bytes."""
        return self.bytes / self.documents if self.documents else 0.0


@dataclass(frozen=True)
class Rejected:
    """A document that could not be stored, and why."""

    collection: str
    document_id: Any
    bytes: int
    reason: str


@dataclass
class LoadReport:
    """Documents and bytes per collection after :func:`load`, and anything that was rejected."""

    dataset: str
    scale: str
    seed: int
    shape: str
    database: str
    engine: str
    seconds: float
    collections: list[CollectionLoad] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)

    def to_frame(self) -> pd.DataFrame:
        """One row per collection: documents, total/average/max BSON bytes, indexes."""
        rows = [
            {
                "collection": c.collection,
                "documents": c.documents,
                "bytes": c.bytes,
                "avg_bytes": round(c.avg_bytes, 1),
                "max_bytes": c.max_bytes,
                "indexes": c.indexes,
            }
            for c in self.collections
        ]
        return pd.DataFrame(rows).set_index("collection")

    @property
    def documents(self) -> int:
        """Documents loaded in all collections."""
        return sum(c.documents for c in self.collections)

    def summary(self) -> str:
        """One line: what was loaded where, how much, how fast."""
        megabytes = sum(c.bytes for c in self.collections) / 1e6
        text = (
            f"{self.dataset} ({self.scale}, seed {self.seed}) as {self.shape} into {self.database} on {self.engine}: "
            f"{self.documents:,} documents, {megabytes:.1f} MB of BSON in {self.seconds:.1f} s"
        )
        if self.rejected:
            text += f"; {len(self.rejected)} document(s) rejected (over 16 MiB)"
        return text

    def __repr__(self) -> str:
        return self.summary() + "\n" + self.to_frame().to_string()

    def _repr_html_(self) -> str:
        rejected = "".join(f"<li>{r.collection} {r.document_id!r}: {r.reason}</li>" for r in self.rejected)
        return f"<p>{self.summary()}</p>{self.to_frame().to_html()}" + (f"<ul>{rejected}</ul>" if rejected else "")


def load(
    dataset: Dataset | str,
    shape: str,
    db: Database | None = None,
    *,
    scale: str = "small",
    seed: int = 7,
    progress: bool = True,
) -> LoadReport:
    """Load ``dataset`` in ``shape`` into ``db``, replacing the shape's collections there.

    ``dataset`` is a :class:`~workbook.datasets.Dataset` from ``generate`` or a dataset name
    (then generated at ``scale`` with ``seed``). ``db`` defaults to the learner's
    ``<dataset>_<shape>`` database. Re-running gives the same state.
    """
    from workbook.connection import connect, engine_info
    from workbook.datasets import generate

    if isinstance(dataset, str):
        dataset = generate(dataset, scale=scale, seed=seed)
    spec = shape_spec(dataset.name, shape)
    if db is None:
        db = connect(database=f"{dataset.name}_{shape}", quiet=True)
    require_own_database(db.name)
    info = engine_info(db)
    started = time.perf_counter()
    documents = spec.build(dataset)
    total = sum(len(documents[c.name]) for c in spec.collections)
    report = LoadReport(dataset.name, dataset.scale, dataset.seed, shape, db.name, info.label, 0.0)
    _drop_other_shapes(db, dataset.name, shape)
    bar = tqdm(total=total, desc=f"load {dataset.name}/{shape}", unit="doc", delay=1.0, disable=not progress)
    with bar:
        for collection in spec.collections:
            report.collections.append(
                _load_collection(db, collection, documents[collection.name], report, bar, info.kind)
            )
    report.seconds = time.perf_counter() - started
    return report


def _drop_other_shapes(db: Database, dataset: str, shape: str) -> None:
    """Switching a database to another shape: drop collections only the dataset's other shapes declare.

    Loading hybrid where embedded was must not leave a stale ``reviews`` beside it; collections
    the learner made themselves are not the dataset's, and are left alone.
    """
    from workbook.shapes import SHAPE_NAMES

    mine = set(shape_spec(dataset, shape).collection_names)
    others = {name for other in SHAPE_NAMES for name in shape_spec(dataset, other).collection_names} - mine
    for name in sorted(others & set(db.list_collection_names())):
        db.drop_collection(name)


def _load_collection(
    db: Database, spec: Any, documents: list[dict[str, Any]], report: LoadReport, bar: tqdm, kind: str
) -> CollectionLoad:
    """Replace one collection: drop it, create it with its validator, insert in batches, then index."""
    db.drop_collection(spec.name)
    db.create_collection(spec.name, **({"validator": spec.validator} if spec.validator else {}))
    stored, total_bytes, max_bytes, batch = 0, 0, 0, []
    for document in documents:
        size = bson_size(document)
        if size > MAX_BSON_SIZE:
            report.rejected.append(
                Rejected(spec.name, document.get("_id"), size, f"{size:,} bytes is over the 16 MiB limit")
            )
            bar.update(1)
            continue
        batch.append(document)
        total_bytes, max_bytes = total_bytes + size, max(max_bytes, size)
        if len(batch) == BATCH:
            stored += _insert(db, spec.name, batch, kind)
            bar.update(len(batch))
            batch = []
    stored += _insert(db, spec.name, batch, kind)
    bar.update(len(batch))
    for index in spec.indexes:
        bar.set_postfix_str(f"indexing {spec.name}.{index.name}")  # index builds can take seconds too
        db[spec.name].create_index(**index.as_kwargs())
    bar.set_postfix_str("")
    return CollectionLoad(spec.name, stored, total_bytes, max_bytes, len(spec.indexes) + 1)


def _insert(db: Database, collection: str, batch: list[dict[str, Any]], kind: str) -> int:
    """Insert a batch: straight into the engine on the offline default, ``insert_many`` on a server."""
    if not batch:
        return 0
    if kind == "offline":
        try:
            return offline_server().bulk_insert(db.name, collection, batch)
        finally:
            GENERATIONS.bump(db.name, collection)  # straight into the engine: no command to see
    return len(db[collection].insert_many(batch, ordered=False).inserted_ids)

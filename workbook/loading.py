"""Loading a dataset in one shape into a database: bulk, idempotent, atomic from the reader's side."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterable, Sequence
from itertools import batched
from typing import TYPE_CHECKING, Any

import bson
from pymongo.database import Database
from tqdm.auto import tqdm

from workbook import gc_pause, scales, snapshot
from workbook.dataset_parts import shape_spec
from workbook.errors import ArgumentTypeError, LoadInterruptedError
from workbook.facts import MAX_BSON_SIZE, bson_size
from workbook.loaded import CollectionLoad, Lease, LoadedShape, LoadReport, Rejected, begin_load
from workbook.namespace import require_own_database, shape_database_name
from workbook.shapes import SHAPE_NAMES
from workbook.shapes.spec import CollectionSpec
from workbook.waiting import wait_bar

if TYPE_CHECKING:
    from workbook.datasets import Dataset

BATCH = 1000
"""Documents per insert batch."""

_GENERATED: dict[tuple[str, str, int], Dataset] = {}
"""The last dataset :func:`load` generated from a name (at most one), by (name, scale, seed)."""
_KEPT_AT_MOST = 32 * 2**20
"""The most BSON a dataset kept in :data:`_GENERATED` holds (the course's datasets at ``small``: 12.7 MB at most;
at ``medium`` the parts are ten times that, too much to keep in a learner's kernel for a faster next load)."""
_generated_lock = threading.Lock()


def course_scale() -> str:
    """The scale notebooks load: ``WORKBOOK_SCALE`` if set, else ``small`` (the learners' scale, also in CI)."""
    import os

    from workbook.datasets.registry import check_scale

    return scales.check_course_scale(check_scale(os.environ.get("WORKBOOK_SCALE", "small")))


def load(
    dataset: Dataset | str,
    shape: str,
    db: Database | None = None,
    *,
    scale: str = "small",
    seed: int = 7,
    progress: bool = True,
    force: bool = False,
) -> LoadedShape:
    """Load ``dataset`` in ``shape`` into ``db``; returns the loaded shape that later steps take.

    ``dataset`` is a :class:`~workbook.datasets.Dataset` from ``generate`` or a dataset name
    (then generated at ``scale`` with ``seed``). ``db`` defaults to the learner's
    ``workbench_<learner>_<dataset>_<shape>`` database. Whatever ``db`` held before (another shape,
    another dataset, an interrupted load) is replaced; collections the learner made are left alone.
    Re-running gives the same state (restored from a snapshot on the offline default, in well under
    a second). On the offline default ``large`` is refused unless ``force=True`` (use real MongoDB),
    and ``medium`` prints an estimate first.
    """
    from workbook.connection import connect, engine_info
    from workbook.datasets import Dataset
    from workbook.engine_reads import is_offline

    if not isinstance(dataset, (str, Dataset)):
        raise ArgumentTypeError(
            "dataset", dataset, "a dataset name such as 'store', or what workbook.generate() returned"
        )
    name = dataset if isinstance(dataset, str) else dataset.name
    spec = shape_spec(name, shape)
    if db is None:
        db = connect(database=shape_database_name(name, shape), quiet=True)
    elif not isinstance(db, Database):
        raise ArgumentTypeError(
            "db",
            db,
            "a pymongo Database such as workbook.connect(database='mine'), or None for the shape's own database",
        )
    require_own_database(db.name)
    info = engine_info(db)
    if info.kind == "offline" and not is_offline(db):  # another process's offline default: a server to us
        info = dataclasses.replace(info, kind="mongodb")
    started = time.perf_counter()
    # --- speed (workbook/snapshot.py, workbook/scales.py): the same load restored from a snapshot; ---
    # --- large refused on the offline default unless forced, medium estimated before it starts ---
    hashed = None
    if info.kind == "offline":  # a restore can take seconds on a busy machine: a bar, gone when done
        with wait_bar(total=2, desc=f"restore {name}/{shape}", unit="step", progress=progress) as bar:
            hashed = snapshot.data_hash(dataset)  # taken once: find checks it, a real load stores it
            found = snapshot.find(dataset, shape, scale=scale, seed=seed, hashed=hashed)
            bar.update()
            if found is not None:
                restored = _restore(db, found, info.label, started)
                bar.update()
        if found is not None:
            warm_models(db, restored.collection_names, progress=progress)
            return restored
    if info.kind == "offline":
        scales.check_offline_load(name, shape, scale if isinstance(dataset, str) else dataset.scale, force=force)
    # --- end speed ---
    with gc_pause.paused():  # millions of new acyclic objects: no collections over the learner's heap meanwhile
        loaded = _load_for_real(
            db, dataset, shape, spec, info, started, scale=scale, seed=seed, progress=progress, hashed=hashed
        )
    if info.kind == "offline":
        warm_models(db, loaded.collection_names, progress=progress)
    return loaded


def warm_models(db: Database, collections: list[str], *, progress: bool = True) -> None:
    """Build the planner model of each loaded collection now, under a progress bar (offline default).

    The first read of a collection builds its model (every document decoded once): seconds for the
    40,000 products at ``small``, spent silently inside whichever cell reads first. Built here, the
    wait belongs to the load, which shows it; the model stays cached until the collection changes.
    """
    from workbook.offline import offline_server
    from workbook.offline_explain import hook_for

    server = offline_server()
    hook = hook_for(server.engine)
    names = wait_bar(collections, desc=f"model {db.name}", unit="collection", progress=progress)
    with names as bar:
        for name in bar:
            server.run(hook.model(db.name, name))


def _load_for_real(
    db: Database,
    dataset: Dataset | str,
    shape: str,
    spec: Any,
    info: Any,
    started: float,
    *,
    scale: str,
    seed: int,
    progress: bool,
    hashed: str | None = None,
) -> LoadedShape:
    """Generate, shape and store the documents (no snapshot to restore): the body of :func:`load`
    (``hashed``: the given dataset's :func:`snapshot.data_hash`, None for one generated here)."""
    if isinstance(dataset, str):
        dataset = _generated(dataset, scale, seed, progress=progress)
    documents = spec.build(dataset)
    total = sum(len(documents[c.name]) for c in spec.collections)
    token, previous = begin_load(db, dataset.name, shape, dataset.scale, dataset.seed)
    lease = Lease(db, token)
    try:
        report = LoadReport(dataset.name, dataset.scale, dataset.seed, shape, db.name, info.label, 0.0)
        if previous and (previous.get("dataset"), previous.get("shape")) != (dataset.name, shape):
            report.replaced = f"{previous.get('dataset')}/{previous.get('shape')}"
        _drop_other_shapes(db, dataset.name, shape, previous)
        bar = wait_bar(total=total, desc=f"load {dataset.name}/{shape}", unit="doc", progress=progress)
        with bar:
            for collection in spec.collections:
                report.collections.append(
                    _load_collection(db, collection, documents[collection.name], report, bar, info.kind, lease)
                )
        report.seconds = time.perf_counter() - started
        lease.complete(report)  # last: until now, readers see an unfinished load and refuse it
    except LoadInterruptedError:
        _undo_after_reset(db, spec)
        raise
    except BaseException:
        lease.give_up()
        raise
    if info.kind == "offline":
        scales.record_load(dataset.name, shape, dataset.scale, report.seconds)  # the next estimate's source

        try:
            snapshot.remember(dataset, shape, report, hashed)  # speed: the next identical load restores this state
        finally:
            snapshot.BUILT.clear()
    return LoadedShape(db, report)


def _generated(name: str, scale: str, seed: int, *, progress: bool) -> Dataset:
    """The dataset a load by name builds from: generated, or the last one again for the same name, scale and seed.

    Loading a dataset's three shapes by name with no snapshot yet (notebook 01's explorer, ``prepare``) generated
    it three times: 1.2-1.4 s of each first load of the parts dataset at ``small``. The dataset kept is the
    workbench's own (the learner never sees it, and the shapes only read it through :meth:`Dataset.documents`,
    which keeps nothing decoded), so it stays its BSON: 12.7 MB for the parts, the largest, until another is
    generated. A dataset over :data:`_KEPT_AT_MOST` of BSON is not kept.
    """
    from workbook.datasets import generate

    key = (name, scale, seed)
    with _generated_lock:
        kept = _GENERATED.get(key)
    if kept is not None:
        return kept
    dataset = generate(name, scale=scale, seed=seed, progress=progress)
    with _generated_lock:
        _GENERATED.clear()
        if dataset.bson_bytes <= _KEPT_AT_MOST:
            _GENERATED[key] = dataset
    return dataset


def _undo_after_reset(db: Database, spec: Any) -> None:
    """After a reset dropped the database mid-load: drop what this load wrote since, unless another load began."""
    from workbook.loaded import read_marker

    if read_marker(db) is None:
        for name in sorted(set(spec.collection_names) & set(db.list_collection_names())):
            db.drop_collection(name)


def _restore(db: Database, found: snapshot.Snapshot, engine: str, started: float) -> LoadedShape:
    """A load restored from a snapshot, under the same lease and completion record as a real one (speed)."""
    fields = found.report
    token, previous = begin_load(db, fields["dataset"], fields["shape"], fields["scale"], fields["seed"])
    lease = Lease(db, token)
    try:
        report = LoadReport(fields["dataset"], fields["scale"], fields["seed"], fields["shape"], db.name, engine, 0.0)
        if previous and (previous.get("dataset"), previous.get("shape")) != (report.dataset, report.shape):
            report.replaced = f"{previous.get('dataset')}/{previous.get('shape')}"
        _drop_other_shapes(db, report.dataset, report.shape, previous)
        snapshot.install_collections(db.name, found)
        report.collections = [CollectionLoad(**c) for c in fields["collections"]]
        report.rejected = [Rejected(**r) for r in fields["rejected"]]
        report.seconds = time.perf_counter() - started
        lease.complete(report)
    except LoadInterruptedError:
        _undo_after_reset(db, shape_spec(fields["dataset"], fields["shape"]))
        raise
    except BaseException:
        lease.give_up()
        raise
    return LoadedShape(db, report)


def _drop_other_shapes(db: Database, dataset: str, shape: str, previous: dict[str, Any] | None) -> None:
    """Drop the collections that only the dataset's other shapes, or what the database held before, declare.

    Loading hybrid where embedded was must not leave a stale ``reviews`` beside it, nor loading the
    followers where the store was a stale ``orders``; collections the learner made themselves are
    not any dataset's, and are left alone.
    """
    from workbook.datasets.registry import DATASETS

    mine = set(shape_spec(dataset, shape).collection_names)
    datasets = {dataset}
    if previous and previous.get("dataset") in DATASETS:
        datasets.add(previous["dataset"])
    others = {name for each in datasets for other in SHAPE_NAMES for name in shape_spec(each, other).collection_names}
    for name in sorted((others - mine) & set(db.list_collection_names())):
        db.drop_collection(name)


def _load_collection(
    db: Database,
    spec: CollectionSpec,
    documents: Sequence[dict[str, Any]],
    report: LoadReport,
    bar: tqdm,
    kind: str,
    lease: Lease,
) -> CollectionLoad:
    """Replace one collection: drop it, create it with its validator, fill it, index it.

    On the offline default the indexes are created on the empty collection and the documents
    installed in one pass by :mod:`workbook.bulkload` (validator, unique keys and limits checked as
    inserts check them); elsewhere, and for index kinds the bulk loader does not build, documents go
    in batches of ``insert_many`` and the indexes are built after.
    """
    db.drop_collection(spec.name)
    if spec.validator:
        db.create_collection(spec.name, validator=spec.validator)
    else:
        db.create_collection(spec.name)
    sizes: list[int] = []
    if kind == "offline" and bulkload_enabled() and all(_plain(index) for index in spec.indexes):
        stored = _bulk(db, spec, _within_limit(documents, spec.name, report, bar, sizes), sizes, bar, lease)
    else:  # a batch at a time, from making each document to sending it: they never all exist at once (memory)
        each = batched(documents, BATCH, strict=False)
        batches = (_within_limit(batch, spec.name, report, bar, sizes) for batch in each)
        stored = _batches(db, spec, batches, bar, kind, lease)
    bar.set_postfix_str("")
    return CollectionLoad(spec.name, stored, sum(sizes), max(sizes, default=0), len(spec.indexes) + 1)


def _within_limit(
    documents: Iterable[dict[str, Any]], collection: str, report: LoadReport, bar: tqdm, sizes: list[int]
) -> list[dict[str, Any]]:
    """The ``documents`` under the 16 MiB limit, their sizes added to ``sizes``; the others rejected in ``report``."""
    accepted = []
    for document in documents:
        size = bson_size(document)
        if size > MAX_BSON_SIZE:
            report.rejected.append(
                Rejected(collection, document.get("_id"), size, f"{size:,} bytes is over the 16 MiB limit")
            )
            bar.update(1)
            continue
        accepted.append(document)
        sizes.append(size)
    return accepted


def _as_stored(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` as the server stores it and pymongo reads it back (its BSON decoded, for an unusual value)."""
    from workbook.errors import NotPlain
    from workbook.wire_form import wire_form

    try:
        return wire_form(document)
    except NotPlain:
        return bson.decode(bson.encode(document))


def _seed_reads(db: Database, collection: str, documents: list[dict[str, Any]]) -> None:
    """Give the offline reads (and the explain model built from them) the documents just installed, as
    pymongo decodes them, so nothing decodes the engine's stored form again: 1.9 s of the parts
    dataset's first load. Seeds nothing if the collection's count is not theirs."""
    from workbook.engine_reads import seed_public_records
    from workbook.offline import offline_server

    server = offline_server()

    async def seed() -> bool:
        return seed_public_records(server.engine, db.name, collection, documents)

    server.run(seed())


def _plain(index: Any) -> bool:
    """Whether the bulk loader builds this index itself: ascending/descending keys only."""
    return all(direction in (1, -1) for _, direction in index.keys)


def bulkload_enabled() -> bool:
    """Whether first loads on the offline default use the bulk loader (``WORKBOOK_BULKLOAD=0`` turns it off)."""
    import os

    return os.environ.get("WORKBOOK_BULKLOAD", "1").strip().lower() not in ("0", "false", "no", "off")


def _bulk(
    db: Database, spec: CollectionSpec, documents: list[dict[str, Any]], sizes: list[int], bar: tqdm, lease: Lease
) -> int:
    """Indexes on the empty collection, then every document installed in one pass (offline default, speed).

    The documents' sizes, measured above, are kept for :mod:`workbook.sizes` with their index entries.
    """
    from workbook.sizes import seed_sizes_from_documents

    for index in spec.indexes:
        db[spec.name].create_index(**index.as_kwargs())  # empty: instant, and the records are the engine's own
    lease.renew()
    bar.set_postfix_str(f"storing {spec.name}")
    installed = _install(db, spec.name, documents)
    if installed is None:  # an index kind it does not build: insert, then those builds
        return _batches(db, spec, map(list, batched(documents, BATCH, strict=False)), bar, "offline", lease)
    with_ids, stored, version = installed
    if version is not None:
        indexes = [("_id",), *(tuple(field for field, _ in index.keys) for index in spec.indexes)]
        seed_sizes_from_documents(db.name, spec.name, version, with_ids, sizes, indexes)
    bar.update(len(documents))
    return stored


def _batches(
    db: Database, spec: CollectionSpec, batches: Iterable[list[dict[str, Any]]], bar: tqdm, kind: str, lease: Lease
) -> int:
    """Insert each batch (of at most :data:`BATCH`), then build the indexes (real servers; unusual index kinds)."""
    stored = 0
    for batch in batches:
        stored += _insert(db, spec.name, batch, kind)
        bar.update(len(batch))
        lease.renew()
    for index in spec.indexes:
        lease.renew()
        bar.set_postfix_str(f"indexing {spec.name}.{index.name}")  # index builds can take seconds too
        db[spec.name].create_index(**index.as_kwargs())
    return stored


def fill(db: Database, collection: str, documents: list[dict[str, Any]]) -> int:
    """Store ``documents`` in ``collection``, empty, its indexes and validator already made; the count.

    On this process's offline default they are checked and installed in one pass (the bulk
    loader, as :func:`load` does); elsewhere, inserted in batches of :data:`BATCH`.
    """
    from workbook.engine_reads import is_offline

    local = is_offline(db)
    if local and bulkload_enabled():
        installed = _install(db, collection, documents)
        if installed is not None:
            return installed[1]
    kind = "offline" if local else "mongodb"  # no bulk load (or an index kind it does not build): batches
    return sum(_insert(db, collection, documents[i : i + BATCH], kind) for i in range(0, len(documents), BATCH))


def _install(db: Database, collection: str, documents: list[dict[str, Any]]) -> tuple[list[Any], int, Any] | None:
    """Bulk-load ``documents`` (given an ``_id`` where they lack one) into the empty ``collection``.

    Documents that all have an ``_id`` are stored as a server stores them (:func:`_as_stored`), sharing every
    string with the documents the notebook holds, and the offline reads are seeded with those very objects:
    nothing decodes the payloads again for the explain model, and a snapshot derives the payloads from them
    instead of keeping a second copy (the applications' orders restored: 124 MiB held, then 57).

    Returns (the documents as stored, how many, the installed contents' version for
    :mod:`workbook.sizes`), or None when the collection has an index kind the bulk loader does not
    build (nothing is stored then).
    """
    from bson import ObjectId

    from workbook import bulkload

    given_ids = all("_id" in document for document in documents)
    if given_ids:
        with_ids = [_as_stored(document) for document in documents]
    else:
        with_ids = [d if "_id" in d else {"_id": ObjectId(), **d} for d in documents]
    try:
        stored = _insert(db, collection, with_ids, "bulk")
    except bulkload.NotBulkLoadable:
        return None
    if given_ids and stored == len(with_ids):
        _seed_reads(db, collection, with_ids)
    return with_ids, stored, bulkload.INSTALLED.pop((db.name, collection), None)


def _insert(db: Database, collection: str, batch: list[dict[str, Any]], kind: str) -> int:
    """Insert a batch: built in one pass (``bulk``), straight into the engine (offline), ``insert_many`` on a server."""
    from workbook import bulkload
    from workbook.offline import offline_server

    if not batch:
        return 0
    if kind == "bulk":
        return bulkload.install_documents(db.name, collection, batch)
    if kind == "offline":
        return offline_server().bulk_insert(db.name, collection, batch)  # counted as a write by the server
    return len(db[collection].insert_many(batch, ordered=False).inserted_ids)

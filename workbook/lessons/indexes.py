"""Notebook 06: index design measured on the data: ESR, blocking sorts, covered queries, index upkeep.

Every number here comes from an explain (the server's, or the planner model's on the offline
default) or from counting documents, so the same calls hold on both engines.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from pymongo.collection import Collection
from pymongo.errors import OperationFailure

from workbook.errors import ArgumentTypeError, WorkbookError
from workbook.facts import MAX_BLOCKING_SORT_BYTES, bson_size

Keys = Sequence[tuple[str, int]]


def _keys(keys: Keys | Mapping[str, int]) -> list[tuple[str, int]]:
    return list(keys.items()) if isinstance(keys, Mapping) else [(str(f), int(d)) for f, d in keys]


def copy_collection(source: Collection, name: str, *, with_indexes: bool = False) -> Collection:
    """A fresh copy of ``source``'s documents beside it, to experiment on (its indexes too if ``with_indexes``)."""
    if not isinstance(source, Collection):
        raise ArgumentTypeError("source", source, "a pymongo Collection such as loaded['products']")
    if name == source.name:
        raise WorkbookError(f"The copy cannot replace {name!r} itself.", fix="Pass another name, e.g. 'products_lab'.")
    target = source.database[name]
    target.drop()
    documents = list(source.find())
    for start in range(0, len(documents), 1000):
        target.insert_many(documents[start : start + 1000])
    if with_indexes:
        for index in source.list_indexes():
            options = {k: v for k, v in index.items() if k not in ("key", "v", "ns")}
            if index["name"] != "_id_":
                target.create_index(list(index["key"].items()), **options)
    return target


def largest_group(collection: Collection, field: str) -> Any:
    """The most frequent value of ``field`` (the smallest value among equally frequent ones)."""
    rows = list(
        collection.aggregate(
            [{"$group": {"_id": f"${field}", "n": {"$sum": 1}}}, {"$sort": {"n": -1, "_id": 1}}, {"$limit": 1}]
        )
    )
    if not rows:
        raise WorkbookError(f"{collection.name} is empty: no value of {field!r} to pick.", fix="Load the data first.")
    return rows[0]["_id"]


def hide(collection: Collection, *names: str, hidden: bool = True) -> list[str]:
    """Hide (or, with ``hidden=False``, unhide) indexes by name; returns the names of the hidden indexes after."""
    for name in names:
        collection.database.command("collMod", collection.name, index={"name": name, "hidden": hidden})
    return sorted(ix["name"] for ix in collection.list_indexes() if ix.get("hidden"))


def unhide(collection: Collection, *names: str) -> list[str]:
    """Make hidden indexes visible to the planner again; returns the names still hidden."""
    return hide(collection, *names, hidden=False)


def plan_row(explained: Any, label: str) -> dict[str, Any]:
    """One table row from an explain: plan, index, keys and documents examined, blocking sort, covered."""
    s = explained.summary()
    return {
        "index": label,
        "plan": s["plan"],
        "used": s["index"] or "-",
        "nReturned": s["nReturned"],
        "keysExamined": s["keysExamined"],
        "docsExamined": s["docsExamined"],
        "blockingSort": s["inMemorySort"],
        "covered": s["covered"],
    }


def plan_table(*rows: Mapping[str, Any]) -> Any:
    """Rows made by :func:`plan_row`, as one table for reading (``workbook.display.table``), one row per label."""
    from workbook.display import table

    return table(pd.DataFrame(list(rows)).set_index("index"))


def compare_indexes(
    collection: Collection,
    candidates: Mapping[str, Keys | Mapping[str, int]],
    filter: Mapping[str, Any],
    *,
    sort: Keys | None = None,
    projection: Any = None,
    limit: int | None = None,
) -> pd.DataFrame:
    """The same query forced onto each candidate index (created if missing): one row of work per index."""
    from workbook.explaining import explain

    existing = {ix["name"]: list(ix["key"].items()) for ix in collection.list_indexes()}
    rows = []
    for name, keys in candidates.items():
        wanted = _keys(keys)
        if name not in existing:
            collection.create_index(wanted, name=name)
        elif existing[name] != wanted:
            raise WorkbookError(
                f"An index called {name!r} already exists with keys {existing[name]}.",
                fix=f"Drop it first: collection.drop_index({name!r}), or pick another name.",
            )
        shown = ", ".join(f"{f}: {d}" for f, d in wanted)
        explained = explain(collection, filter, sort=sort, projection=projection, limit=limit, hint=name)
        rows.append(plan_row(explained, f"{name} {{{shown}}}"))
    return pd.DataFrame(rows).set_index("index")


def covering_with_an_array(
    collection: Collection,
    keys: Keys | Mapping[str, int],
    projections: Mapping[str, Any],
    filter: Mapping[str, Any],
    *,
    sort: Keys | None = None,
    limit: int | None = None,
    name: str = "with_array",
) -> pd.DataFrame:
    """One query, once per projection, forced onto a temporary index whose keys include an array field.

    Each row says whether the plan was covered, whether the index is multikey, and which of its paths
    it records as multikey (MongoDB's ``multiKeyPaths``): since 3.6 a multikey index covers a query
    over its non-array fields when it records those paths. The index is dropped afterwards, so the
    collection keeps the indexes it had.
    """
    from workbook.explaining import explain
    from workbook.planner.reading import walk, winning_plan

    wanted = _keys(keys)
    if name in {ix["name"] for ix in collection.list_indexes()}:
        raise WorkbookError(f"An index called {name!r} already exists.", fix="Pass another name=.")
    collection.create_index(wanted, name=name)
    rows = []
    try:
        for label, projection in projections.items():
            explained = explain(collection, filter, sort=sort, projection=projection, limit=limit, hint=name)
            plan = winning_plan(explained.raw.get("queryPlanner", {}))
            scans = [stage for stage in walk(plan) if stage.get("indexName") == name]
            paths = scans[0].get("multiKeyPaths", {}) if scans else {}
            row = plan_row(explained, label)
            row["multikey"] = explained.summary()["multikey"]
            row["array paths"] = ", ".join(path for path, prefixes in paths.items() if prefixes) or "-"
            rows.append(row)
    finally:
        collection.drop_index(name)
    return pd.DataFrame(rows).set_index("index")


@dataclass(frozen=True)
class SortMemory:
    """What a blocking sort holds in memory: the matching documents' bytes against the 100 MB limit."""

    documents: int
    bytes: int
    limit: int = MAX_BLOCKING_SORT_BYTES

    @property
    def share_of_limit(self) -> float:
        """The bytes as a fraction of the limit (1.0 = at the limit)."""
        return self.bytes / self.limit

    @property
    def needs_disk(self) -> bool:
        """True when the sort is over the limit: it needs allowDiskUse or it fails (code 292)."""
        return self.bytes > self.limit

    @property
    def documents_to_limit(self) -> int:
        """How many documents of this average size fill the limit."""
        average = self.bytes / self.documents if self.documents else 0
        return int(self.limit // average) if average else 0

    def _repr_html_(self) -> str:
        from workbook.display import record

        shown = {
            "documents sorted": self.documents,
            "bytes held in memory": self.bytes,
            "share of the 100 MiB limit": f"{self.share_of_limit:.2%}",
            "the sort": "needs allowDiskUse, or fails (292)" if self.needs_disk else "runs in memory",
            "documents of this size that fill the limit": self.documents_to_limit,
        }
        return str(record(shown, caption="What a blocking sort holds in memory")._repr_html_())

    def __repr__(self) -> str:
        verdict = "over it: needs allowDiskUse or fails" if self.needs_disk else "under it: sorts in memory"
        return (
            f"blocking sort of {self.documents:,} documents holding {self.bytes / 1e6:.2f} MB "
            f"= {self.share_of_limit:.2%} of the {self.limit / 2**20:.0f} MiB limit ({verdict}); "
            f"about {self.documents_to_limit:,} such documents would fill it"
        )


def sort_memory(collection: Collection, filter: Mapping[str, Any] | None = None, projection: Any = None) -> SortMemory:
    """Bytes a blocking sort of ``find(filter, projection)`` holds: the BSON size of every matching document."""
    sizes = [bson_size(d) for d in collection.find(dict(filter or {}), projection)]
    return SortMemory(len(sizes), sum(sizes))


@dataclass(frozen=True)
class DiskUse:
    """The same blocking sort run under a lowered memory limit, with and without disk use allowed."""

    limit_bytes: int
    restored_bytes: int
    held_bytes: int
    refused_code: int | None
    answered: int

    def record(self) -> Any:
        """The experiment as labelled values."""
        from workbook.display import record

        refused = "answered (fits)" if self.refused_code is None else f"failed, code {self.refused_code}"
        return record(
            {
                "internalQueryMaxBlockingSortMemoryUsageBytes (set, then restored)": (
                    self.limit_bytes,
                    self.restored_bytes,
                ),
                "bytes the sort holds": self.held_bytes,
                "allowDiskUse=False": refused,
                "allowDiskUse left on (the default)": f"answered, {self.answered:,} documents",
            },
            caption="a blocking sort over its memory limit",
        )

    def __repr__(self) -> str:
        return repr(self.record())

    def _repr_html_(self) -> str:
        return str(self.record()._repr_html_())


def sort_over_the_limit(
    collection: Collection, sort: Keys, *, limit_bytes: int, filter: Mapping[str, Any] | None = None
) -> DiskUse:
    """Lower the blocking-sort memory limit (``internalQueryMaxBlockingSortMemoryUsageBytes``) to ``limit_bytes``,
    run one sort with ``allow_disk_use=False`` and once with the default, then set the limit back.

    On MongoDB the first fails with code 292 once the sorted documents pass the limit and the second
    spills to disk and answers; the offline default fails the same way and answers from memory.
    """
    admin = collection.database.client.admin
    chosen = dict(filter or {"_id": {"$exists": True}})  # a filter: a whole-collection find is answered as stored
    was = int(admin.command("setParameter", 1, internalQueryMaxBlockingSortMemoryUsageBytes=limit_bytes)["was"])
    code: int | None = None
    try:
        try:
            list(collection.find(chosen, sort=list(sort), allow_disk_use=False))
        except OperationFailure as error:
            code = error.code
        answered = len(list(collection.find(chosen, sort=list(sort))))
    finally:
        admin.command("setParameter", 1, internalQueryMaxBlockingSortMemoryUsageBytes=was)
    return DiskUse(limit_bytes, was, sort_memory(collection, chosen).bytes, code, answered)


def pipeline_sort_in_memory(explained: Any) -> bool:
    """True when an aggregate's sort is done in memory: a SORT in the plan or a $sort after the cursor stage
    (the summary's ``inMemorySort`` reads both, as MongoDB runs both as blocking sorts)."""
    return bool(explained.summary()["inMemorySort"])


def redundant_indexes(indexes: Iterable[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(redundant, covered_by) pairs: an index whose keys are a leading prefix of another's.

    >>> redundant_indexes([{"name": "a_1", "key": {"a": 1}}, {"name": "a_1_b_-1", "key": {"a": 1, "b": -1}}])
    [('a_1', 'a_1_b_-1')]
    """
    listed = [(ix["name"], list(dict(ix["key"]).items()), ix) for ix in indexes]
    pairs = []
    for name, keys, index in listed:
        if name == "_id_" or index.get("unique") or index.get("collation") or index.get("partialFilterExpression"):
            continue  # these do more than speed up reads: they are not redundant just by their keys
        for other, other_keys, other_index in listed:
            extends = other != name and len(other_keys) > len(keys) and other_keys[: len(keys)] == keys
            if extends and not other_index.get("partialFilterExpression") and not other_index.get("sparse"):
                pairs.append((name, other))
                break
    return pairs


def index_stats(collection: Collection) -> pd.DataFrame:
    """``$indexStats`` as a table: each index's keys and the accesses the server counted."""
    rows = [
        {"index": s["name"], "key": dict(s["key"]), "accesses": int(s.get("accesses", {}).get("ops", 0))}
        for s in collection.aggregate([{"$indexStats": {}}])
    ]
    return pd.DataFrame(rows).sort_values("index").set_index("index")


def index_usage(collection: Collection, captured: Any, *, sent_to: str | None = None) -> pd.DataFrame:
    """Accesses per index of ``collection`` by the commands in ``captured`` (from ``workbook.monitor.capture``).

    Each captured read (and the query part of each update/delete) is explained and its winning
    index counted, so the tally is the same on every engine; ``$indexStats`` counts the same thing
    on a server, but the offline default does not count index accesses. ``sent_to`` replays the
    commands sent to another collection of the same database (say, the original of a copy).
    """
    from workbook.explaining.view import explain_command
    from workbook.explaining.work import reads_of

    names = [ix["name"] for ix in collection.list_indexes() if not ix.get("hidden")]
    tally: Counter[str] = Counter({name: 0 for name in names})
    database, target = collection.database.name, sent_to or collection.name
    for entry in captured.commands:
        command = entry["command"]
        if entry["database"] != database or command.get(entry["name"]) != target:
            continue
        for read in reads_of(entry["name"], command):
            verb = next(iter(read))  # "find" or "aggregate": aimed at this collection (it may be a copy)
            for name in explain_command(collection, {**read, verb: collection.name}).summary()["indexes"]:
                tally[name] += 1
    rows = [{"index": name, "accesses": tally[name]} for name in names]
    return pd.DataFrame(rows).set_index("index")


def replay_reads(collection: Collection, captured: Any, *, sent_to: str | None = None) -> int:
    """Run on ``collection`` each read in ``captured`` that was sent to ``sent_to`` (default: its own name),
    as :func:`index_usage` explains them (a write's query part runs as a find); returns how many ran."""
    from workbook.explaining.work import reads_of

    database, target = collection.database.name, sent_to or collection.name
    ran = 0
    for entry in captured.commands:
        command = entry["command"]
        if entry["database"] != database or command.get(entry["name"]) != target:
            continue
        for read in reads_of(entry["name"], command):
            verb = next(iter(read))
            collection.database.command({**read, verb: collection.name})
            ran += 1
    return ran


def index_stats_moved(collection: Collection, captured: Any, *, sent_to: str | None = None) -> pd.DataFrame:
    """``$indexStats`` accesses before and after replaying ``captured`` on ``collection``, beside the tally
    :func:`index_usage` makes by explaining the same reads: the counters move by what the plans used."""
    before = index_stats(collection)["accesses"]
    replay_reads(collection, captured, sent_to=sent_to)
    after = index_stats(collection)["accesses"]
    explained = index_usage(collection, captured, sent_to=sent_to)["accesses"]
    frame = pd.DataFrame({"moved by": after - before, "accesses before": before, "accesses after": after})
    frame["explained plans using it"] = explained.reindex(frame.index).fillna(0).astype(int)
    return frame.sort_values(["moved by", "accesses after"], ascending=False)


def index_entries(collection: Collection) -> dict[str, int]:
    """Entries in each index (a full scan of it, hinted: keys examined), ``_id_`` included."""
    from workbook.explaining import explain

    return {
        ix["name"]: explain(collection, {}, hint=ix["name"]).summary()["keysExamined"]
        for ix in collection.list_indexes()
        if not ix.get("hidden")
    }


def write_cost(
    documents: Sequence[Mapping[str, Any]],
    index_sets: Mapping[int, Sequence[Keys]],
    collection: Collection,
) -> pd.DataFrame:
    """Insert the same documents under each set of secondary indexes; index entries and time per run.

    ``collection`` is dropped and rebuilt for each set: pass a scratch collection.
    """
    rows = []
    for label, index_keys in index_sets.items():
        collection.drop()
        for keys in index_keys:
            collection.create_index(_keys(keys))
        started = time.perf_counter()
        for start in range(0, len(documents), 1000):
            collection.insert_many([dict(d) for d in documents[start : start + 1000]])
        seconds = time.perf_counter() - started
        entries = index_entries(collection)
        rows.append(
            {
                "secondary indexes": label,
                "documents": len(documents),
                "index entries": sum(entries.values()),
                "entries per document": sum(entries.values()) / len(documents) if documents else 0.0,
                "insert seconds": round(seconds, 3),
            }
        )
    return pd.DataFrame(rows).set_index("secondary indexes")

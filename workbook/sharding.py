"""Shard keys: where a collection's documents and operations would land, by simulation or on a real cluster.

One interface, two engines. :func:`place` puts a collection's documents on shards under a candidate
shard key and returns a :class:`Placement`: per-shard document counts, the largest group of
documents no split can separate, and which shards a query must visit.

- On the offline default (or any server that is not a ``mongos``) it is a **simulation** computed
  from the documents: ranged keys split at quantiles of the data, the way the balancer's end state
  evens out data per shard, except that documents with the same key value can never be split apart;
  hashed keys use MongoDB's own hash (:mod:`workbook.shard_hash`) over equal, contiguous slices of the
  64-bit hash space per shard (what ``shardCollection`` pre-splits an empty hashed collection into).
- Connected to a ``mongos`` (the ``sharded`` compose profile), the collection is really sharded:
  ``shardCollection`` on a copy, the same split points applied with ``split``/``moveChunk``, the
  documents inserted, counts read from ``$shardedDataDistribution`` and query targeting from explain.

The rule for unique indexes is ported from mongodb/mongo ``src/mongo/s/shard_key_pattern.cpp``
(``ShardKeyPattern::isUniqueIndexCompatible``).
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from pymongo.collection import Collection

from workbook.datasets.timeline import YEAR, moment
from workbook.errors import WorkbookError
from workbook.shard_hash import hash64

Document = dict[str, Any]
KeyTuple = tuple[Any, ...]

SIMULATION = "simulation (offline default: computed from the documents)"
SERVER = "server ($shardedDataDistribution on a mongos)"

CANDIDATE_KEYS: tuple[dict[str, Any], ...] = (
    {"followedId": 1},
    {"followedId": 1, "followerId": 1},
    {"followerId": "hashed"},
)
"""The follows collection's candidate shard keys the lesson compares."""

_INT64_MIN, _INT64_SPAN = -(2**63), 2**64


@dataclass(frozen=True)
class ShardKey:
    """A shard key pattern: fields in order, each ranged (1) or hashed."""

    fields: tuple[tuple[str, Any], ...]

    @classmethod
    def parse(cls, pattern: Mapping[str, Any] | ShardKey) -> ShardKey:
        """Return the ShardKey for a pattern such as ``{"followedId": 1}`` or ``{"followerId": "hashed"}``."""
        if isinstance(pattern, ShardKey):
            return pattern
        if not isinstance(pattern, Mapping) or not pattern:
            raise WorkbookError(
                f"A shard key is a non-empty document of fields, not {pattern!r}.",
                fix='Write it like an index: {"followedId": 1} or {"followerId": "hashed"}.',
            )
        for name, kind in pattern.items():
            if kind not in (1, "hashed"):
                raise WorkbookError(
                    f"Shard key field {name!r} has {kind!r}; choose from: 1, 'hashed'.",
                    fix="Use 1 for a ranged field or 'hashed' for a hashed one.",
                )
        hashed = [name for name, kind in pattern.items() if kind == "hashed"]
        if hashed and len(pattern) > 1:
            raise WorkbookError(
                "The simulation covers single-field hashed keys only.",
                fix='Compare {"field": "hashed"} or a ranged compound key.',
            )
        return cls(tuple(pattern.items()))

    @property
    def pattern(self) -> dict[str, Any]:
        """The key as the document ``shardCollection`` takes."""
        return dict(self.fields)

    @property
    def names(self) -> tuple[str, ...]:
        """The key's field names, in order."""
        return tuple(name for name, _ in self.fields)

    @property
    def hashed(self) -> bool:
        """Whether the key is hashed."""
        return any(kind == "hashed" for _, kind in self.fields)

    @property
    def label(self) -> str:
        """A readable label such as ``{followerId: hashed}``."""
        parts = ", ".join(f"{name}: {kind}" for name, kind in self.fields)
        return "{" + parts + "}"

    def key_of(self, document: Mapping[str, Any]) -> KeyTuple:
        """Return where a document sorts on the shard key (its hash for a hashed key)."""
        missing = [name for name in self.names if name not in document]
        if missing:
            raise WorkbookError(
                f"A document lacks shard key field(s) {', '.join(missing)}.",
                fix="Every document of a sharded collection needs every shard key field.",
            )
        if self.hashed:
            return (hash64(document[self.names[0]]),)
        return tuple(document[name] for name in self.names)

    def prefix_of(self, query: Mapping[str, Any]) -> KeyTuple:
        """Return the equality values a query gives for the key's leading fields (hashed if the key is)."""
        values = []
        for name in self.names:
            if name not in query or isinstance(query[name], Mapping):
                break
            values.append(query[name])
        if self.hashed:
            return (hash64(values[0]),) if values else ()
        return tuple(values)


def unique_index_allowed(shard_key: Mapping[str, Any] | ShardKey, index: Mapping[str, Any]) -> bool:
    """Whether a sharded collection may have this unique index: it must start with _id or the shard key's fields."""
    key = ShardKey.parse(shard_key)
    names = list(index)
    if names and names[0] == "_id":
        return True
    return names[: len(key.names)] == list(key.names)


@dataclass
class Placement:
    """Where one shard key puts a collection's documents; the same answers from a simulation or a cluster."""

    key: ShardKey
    shards: tuple[str, ...]
    documents: dict[str, int]
    largest_group: int
    source: str
    bounds: list[KeyTuple] = field(default_factory=list)
    """Chunk boundaries (simulation): shard ``i`` owns keys from ``bounds[i-1]`` (inclusive) to ``bounds[i]``."""
    targeting: Any = None
    """On a cluster: a function from a query to the shards the server's explain names."""
    receiving: Any = None
    """On a cluster: a function that inserts documents and returns how many each shard gained."""

    @property
    def total(self) -> int:
        """How many documents were placed."""
        return sum(self.documents.values())

    def share(self, shard: str) -> float:
        """The fraction of the documents one shard holds."""
        return self.documents[shard] / self.total if self.total else 0.0

    @property
    def busiest_share(self) -> float:
        """The fraction of the documents on the fullest shard (1/shards is perfectly even)."""
        return max(self.share(shard) for shard in self.shards)

    def shards_for(self, query: Mapping[str, Any]) -> list[str]:
        """The shards a query with these equality conditions must visit (all of them when it lacks the key)."""
        if self.targeting is not None:
            return self.targeting(query)
        prefix = self.key.prefix_of(query)
        if not prefix:
            return list(self.shards)
        return [shard for index, shard in enumerate(self.shards) if self._may_hold(index, prefix)]

    def shard_of(self, document: Mapping[str, Any]) -> str:
        """The shard a document with this shard key goes to."""
        return self.shards_for({name: document[name] for name in self.key.names})[0]

    def spread(self, documents: Iterable[Mapping[str, Any]]) -> dict[str, int]:
        """How many of these (new) documents each shard would receive."""
        if self.receiving is not None:
            return self.receiving(documents)
        counts = Counter(self.shard_of(document) for document in documents)
        return {shard: counts.get(shard, 0) for shard in self.shards}

    def _may_hold(self, index: int, prefix: KeyTuple) -> bool:
        """Whether shard ``index``'s range holds any key starting with ``prefix``."""
        width = len(prefix)
        lower = self.bounds[index - 1] if index > 0 else None
        upper = self.bounds[index] if index < len(self.bounds) else None
        if lower is not None and lower[:width] > prefix:
            return False
        # an upper bound equal to the bare prefix starts the next shard exactly at the prefix's first key
        return upper is None or upper[:width] > prefix or (upper[:width] == prefix and len(upper) > width)

    def to_frame(self) -> pd.DataFrame:
        """One row per shard: documents and their share."""
        return pd.DataFrame(
            {
                "shard": list(self.shards),
                "documents": [self.documents[shard] for shard in self.shards],
                "share": [f"{self.share(shard):.1%}" for shard in self.shards],
            }
        ).set_index("shard")

    def table(self) -> Any:
        """The placement as the course shows a table: counts with thousands separators, the key in the caption."""
        from workbook.display import table

        return table(self.to_frame(), caption=f"Placement by {self.key.label}, {self.source}")

    def __repr__(self) -> str:
        return repr(self.table())

    def _repr_html_(self) -> str:
        return str(self.table()._repr_html_())


def simulate(documents: Sequence[Mapping[str, Any]], key: Mapping[str, Any] | ShardKey, shards: int = 2) -> Placement:
    """Place documents on ``shards`` shards under a shard key, computed in Python (no server)."""
    shard_key = ShardKey.parse(key)
    if not isinstance(shards, int) or shards < 1:
        raise WorkbookError(f"shards must be a whole number of at least 1, not {shards!r}.", fix="Pass shards=2.")
    names = tuple(f"shard{number:02d}" for number in range(shards))
    keys = sorted(shard_key.key_of(document) for document in documents)
    if shard_key.hashed:
        bounds = [(_INT64_MIN + _INT64_SPAN * number // shards,) for number in range(1, shards)]
    else:
        bounds = _balanced_bounds(keys, shards)
    cuts = [0, *(bisect.bisect_left(keys, bound) for bound in bounds), len(keys)]
    counts = {name: cuts[number + 1] - cuts[number] for number, name in enumerate(names)}
    largest = max(Counter(keys).values(), default=0)
    return Placement(shard_key, names, counts, largest, SIMULATION, bounds)


def _balanced_bounds(keys: list[KeyTuple], shards: int) -> list[KeyTuple]:
    """Boundaries that even out documents per shard; equal keys stay together, so some may not split."""
    bounds: list[KeyTuple] = []
    for number in range(1, shards):
        target = len(keys) * number // shards
        if target >= len(keys):
            break
        at = keys[target]
        after = bisect.bisect_right(keys, at)
        # The boundary is either the key at the target or the next distinct one: take the closer split.
        candidates = [(abs(bisect.bisect_left(keys, at) - target), at)]
        if after < len(keys):
            candidates.append((abs(after - target), keys[after]))
        bound = min(candidates, key=lambda pair: pair[0])[1]
        if bisect.bisect_left(keys, bound) == 0 or (bounds and bound <= bounds[-1]):
            continue
        bounds.append(bound)
    while len(bounds) < shards - 1:  # unsplittable data leaves the last shards empty
        bounds.append(bounds[-1] if bounds else (keys[-1] if keys else ()))
    return bounds


def most_common_value(collection: Collection, field: str) -> tuple[Any, int]:
    """The value of ``field`` shared by the most documents, and how many share it (counted by the server)."""
    pipeline: list[Document] = [
        {"$group": {"_id": f"${field}", "count": {"$sum": 1}}},
        {"$sort": {"count": -1, "_id": 1}},
        {"$limit": 1},
    ]
    rows = list(collection.aggregate(pipeline))
    if not rows:
        raise WorkbookError(f"{collection.name} is empty.", fix="Load the dataset first: workbook.load(...).")
    return rows[0]["_id"], rows[0]["count"]


def follow_burst(followed_id: str, count: int, *, first_user: int = 1_000_001) -> list[Document]:
    """``count`` new follow documents for one account, from brand-new users, one second apart (going viral)."""
    return [
        {
            "_id": f"burst-{number:07d}",
            "followerId": f"user-{first_user + number:07d}",
            "followedId": followed_id,
            "createdAt": moment(YEAR + number),
        }
        for number in range(count)
    ]


def unique_index_check(index: Mapping[str, Any], keys: Iterable[Mapping[str, Any]] = CANDIDATE_KEYS) -> pd.DataFrame:
    """One row per shard key: may a sharded collection keep this unique index?"""
    rows = [
        {"shard key": ShardKey.parse(key).label, "unique index allowed": unique_index_allowed(key, index)}
        for key in keys
    ]
    return pd.DataFrame(rows).set_index("shard key")


def is_sharded_cluster(collection: Collection) -> bool:
    """Whether the collection's client is connected to a mongos router."""
    hello = collection.database.client.admin.command("hello")
    return hello.get("msg") == "isdbgrid"


def place(
    collection: Collection,
    key: Mapping[str, Any] | ShardKey,
    *,
    shards: int = 2,
    grown_by: Sequence[Mapping[str, Any]] = (),
) -> Placement:
    """Place a collection's documents under a shard key: sharded for real on a mongos, simulated otherwise.

    ``grown_by``: documents to add first (a burst of new ones), so the placement shows where the
    balancer would take the grown collection; the collection itself is left unchanged.
    """
    shard_key = ShardKey.parse(key)
    projection = {name: 1 for name in shard_key.names}
    documents = [*collection.find({}, projection), *grown_by]
    if is_sharded_cluster(collection):
        return _place_on_cluster(collection, documents, shard_key, list(grown_by))
    return simulate(documents, shard_key, shards)


def compare_keys(
    collection: Collection,
    keys: Iterable[Mapping[str, Any]] = CANDIDATE_KEYS,
    *,
    queries: Mapping[str, Mapping[str, Any]],
    shards: int = 2,
    burst: Sequence[Mapping[str, Any]] = (),
    grown_by: Sequence[Mapping[str, Any]] = (),
    progress: bool = True,
) -> pd.DataFrame:
    """One row per candidate key: document spread, the largest unsplittable group, shards each query visits.

    With ``burst`` (new documents), also the share of them the busiest shard would receive; with
    ``grown_by``, the placement of the collection grown by those documents (see :func:`place`). Each
    key reads the whole collection (over two seconds for the follows at ``small``): a bar shows the keys
    placed so far, always (one that showed only past a delay would come and go between two runs).
    """
    from workbook.waiting import wait_bar

    rows = []
    for key in wait_bar(list(keys), desc="place the documents under each key", unit="key", progress=progress, delay=0):
        placement = place(collection, key, shards=shards, grown_by=grown_by)
        row: dict[str, Any] = {
            "shard key": placement.key.label,
            "busiest shard (%)": round(100 * placement.busiest_share, 1),
            "largest unsplittable group": placement.largest_group,
        }
        for name, query in queries.items():
            row[f"shards for {name}"] = len(placement.shards_for(query))
        if burst:
            received = placement.spread(burst)
            row["burst on busiest shard (%)"] = round(100 * max(received.values()) / len(burst), 1)
        rows.append(row)
    return pd.DataFrame(rows).set_index("shard key")


# --- a real cluster (mongos): the same questions answered by the server -------------------------


def _place_on_cluster(
    collection: Collection, documents: list[Document], key: ShardKey, grown_by: list[Mapping[str, Any]]
) -> Placement:
    """Shard a copy of the collection for real and read the distribution from the server."""
    client = collection.database.client
    shard_names = tuple(sorted(shard["_id"] for shard in client.admin.command("listShards")["shards"]))
    slug = "_".join(f"{name}_{'h' if kind == 'hashed' else kind}" for name, kind in key.fields)
    target = collection.database[f"{collection.name}_by_{slug}"]
    target.drop()
    namespace = target.full_name
    client.admin.command("shardCollection", namespace, key=key.pattern)
    if not key.hashed:
        keys = sorted(key.key_of(document) for document in documents)
        bounds = _balanced_bounds(keys, len(shard_names))
        for number, (bound, shard) in enumerate(zip(bounds, shard_names[1:], strict=False)):
            if number and bound == bounds[number - 1]:
                continue  # unsplittable data: nothing more to split here
            middle = dict(zip(key.names, bound, strict=True))
            client.admin.command("split", namespace, middle=middle)
            client.admin.command("moveChunk", namespace, find=middle, to=shard)
    full = [*collection.find({}), *(dict(document) for document in grown_by)]
    if full:
        target.insert_many(full, ordered=False)
    largest = max(Counter(key.key_of(document) for document in documents).values(), default=0)

    def owned() -> dict[str, int]:
        counts = dict.fromkeys(shard_names, 0)
        pipeline: list[Document] = [{"$shardedDataDistribution": {}}, {"$match": {"ns": namespace}}]
        for row in client.admin.aggregate(pipeline):
            for shard in row["shards"]:
                counts[shard["shardName"]] = shard["numOwnedDocuments"]
        return counts

    def receiving(new: Iterable[Mapping[str, Any]]) -> dict[str, int]:
        before = owned()
        target.insert_many([dict(document) for document in new], ordered=False)
        after = owned()
        target.delete_many({"_id": {"$in": [document["_id"] for document in new]}})
        return {shard: after[shard] - before[shard] for shard in shard_names}

    def targeting(query: Mapping[str, Any]) -> list[str]:
        plan = target.find(dict(query)).explain()["queryPlanner"]["winningPlan"]
        return sorted(shard["shardName"] for shard in plan.get("shards", []))

    return Placement(key, shard_names, owned(), largest, SERVER, targeting=targeting, receiving=receiving)

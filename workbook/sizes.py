"""Document sizes per collection and loaded shape, the documents nearest 16 MiB, and how fast they get there."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from pymongo.collection import Collection
from pymongo.database import Database

from workbook.facts import MAX_BSON_SIZE
from workbook.loaded import Loadable, loaded_shapes


def document_sizes(collection: Collection) -> pd.Series:
    """BSON size in bytes of every document, indexed by ``_id`` (measured by the server: ``$bsonSize``)."""
    rows = collection.aggregate([{"$project": {"bytes": {"$bsonSize": "$$ROOT"}}}])
    sizes = {row["_id"]: row["bytes"] for row in rows}
    return pd.Series(sizes, name="bytes", dtype="int64")


def size_table(shapes: Loadable) -> pd.DataFrame:
    """Per loaded shape and collection: documents, p50/p95/max BSON size, average, data and index sizes.

    ``shapes`` is what ``load()`` returned: one loaded shape, or a list or dict of them.

    ``data_bytes`` and ``avg_obj_bytes`` come from ``collStats`` (exact BSON sums on the offline
    default; uncompressed sizes on MongoDB). ``index_bytes`` is ``totalIndexSize`` on a server (on
    disk, compressed); the offline default keeps no index files, so there it is the workbench's
    estimate: the BSON size of each document's indexed values plus an 8-byte record id, per index.
    """
    from workbook.connection import engine_info

    rows: list[dict[str, Any]] = []
    for loaded in loaded_shapes(shapes):
        shape, shape_db = loaded.shape, loaded.db
        offline = engine_info(shape_db).kind == "offline"
        for spec in loaded.spec.collections:
            sizes = document_sizes(shape_db[spec.name]).to_numpy()
            stats = shape_db.command("collStats", spec.name)
            p50, p95 = np.percentile(sizes, [50, 95]) if len(sizes) else (np.nan, np.nan)
            rows.append(
                {
                    "shape": shape,
                    "collection": spec.name,
                    "documents": len(sizes),
                    "p50_bytes": p50,
                    "p95_bytes": p95,
                    "max_bytes": sizes.max() if len(sizes) else np.nan,
                    "avg_obj_bytes": stats.get("avgObjSize", np.nan),
                    "data_bytes": stats.get("size", np.nan),
                    "index_bytes": index_size_estimate(shape_db, spec.name)
                    if offline
                    else stats.get("totalIndexSize", np.nan),
                    "pct_of_16mib_max": 100 * (sizes.max() if len(sizes) else 0) / MAX_BSON_SIZE,
                }
            )
    return pd.DataFrame(rows).set_index(["shape", "collection"])


def index_size_estimate(db: Database, collection: str) -> int:
    """Bytes of index entries: per index and document, the indexed values' BSON size plus 8 (record id)."""
    total = 0
    for index in db[collection].list_indexes():
        fields = list(index["key"])
        values = {f"k{i}": f"${field}" for i, field in enumerate(fields)}
        pipeline = [{"$group": {"_id": None, "bytes": {"$sum": {"$add": [{"$bsonSize": values}, 8]}}}}]
        total += next(db[collection].aggregate(pipeline), {"bytes": 0})["bytes"]
    return int(total)


def largest_documents(collection: Collection, n: int = 5) -> pd.DataFrame:
    """The ``n`` documents nearest the 16 MiB limit: bytes and percent of the limit."""
    rows = collection.aggregate(
        [
            {"$project": {"bytes": {"$bsonSize": "$$ROOT"}}},
            {"$sort": {"bytes": -1, "_id": 1}},
            {"$limit": n},
        ]
    )
    frame = pd.DataFrame(list(rows), columns=["_id", "bytes"]).set_index("_id")
    frame["pct_of_16mib"] = 100 * frame["bytes"] / MAX_BSON_SIZE
    return frame


def growth_projection(
    collection: Collection, array: str, *, new_per_day: float, top: int = 5, limit: int = MAX_BSON_SIZE
) -> pd.DataFrame:
    """When the documents with the biggest ``array`` reach ``limit`` bytes, at ``new_per_day`` new entries.

    New entries are shared out as the existing ones are (a document holding 5% of all entries gets
    5% of the new ones: the dataset's skew), each the size of that document's average entry.
    Returns, per document: entries now, bytes now, bytes added a day, and days until the limit.
    """
    rows = list(
        collection.aggregate(
            [
                {
                    "$project": {
                        "entries": {"$size": {"$ifNull": [f"${array}", []]}},
                        "bytes": {"$bsonSize": "$$ROOT"},
                        "array_bytes": {"$bsonSize": {"$ifNull": [{"list": f"${array}"}, {}]}},
                    }
                },
                {"$match": {"entries": {"$gt": 0}}},
            ]
        )
    )
    total_entries = sum(row["entries"] for row in rows)
    projected = []
    for row in rows:
        share = row["entries"] / total_entries
        entry_bytes = row["array_bytes"] / row["entries"]
        per_day = share * new_per_day * entry_bytes
        projected.append(
            {
                "_id": row["_id"],
                "entries": row["entries"],
                "bytes": row["bytes"],
                "share_of_new": share,
                "bytes_per_day": per_day,
                "days_to_limit": max(0.0, (limit - row["bytes"]) / per_day),
            }
        )
    frame = pd.DataFrame(
        projected, columns=["_id", "entries", "bytes", "share_of_new", "bytes_per_day", "days_to_limit"]
    )
    return frame.sort_values(["days_to_limit", "_id"]).head(top).set_index("_id")


def growth_sentence(projection: pd.DataFrame, collection: str, array: str, new_per_day: float) -> str:
    """The first row as a sentence: 'at N new reviews a day, product X reaches 16 MiB in D days'."""
    first = projection.iloc[0]
    return (
        f"At {new_per_day:,.0f} new {array} a day, {collection} {projection.index[0]!r} "
        f"({first['bytes'] / 1024:,.0f} KiB now, +{first['bytes_per_day'] / 1024:,.1f} KiB a day) "
        f"reaches 16 MiB in {first['days_to_limit']:,.0f} days."
    )


def document_size_frame(shapes: Loadable) -> pd.DataFrame:
    """Every document's BSON size, long form: shape, collection, _id, bytes (for distribution charts)."""
    frames = []
    for loaded in loaded_shapes(shapes):
        for spec in loaded.spec.collections:
            sizes = document_sizes(loaded[spec.name])
            columns = {"shape": loaded.shape, "collection": spec.name, "_id": sizes.index, "bytes": sizes.to_numpy()}
            frames.append(pd.DataFrame(columns))
    return pd.concat(frames, ignore_index=True)

"""Embed, reference or hybrid, measured on the parts dataset: the ways to read a product's parts,
what a rename costs in each shape, what the foreign-field index does to ``$lookup``, and the
cardinality ladder that decides between them.

Every function takes what ``workbook.load()`` returned. The reads return the same answer as
``ops.product_detail``; what differs, and what :func:`compare_reads` measures, is the work: round
trips and reply bytes (pymongo command monitoring), keys and documents examined (explain of every
command sent: the server's on MongoDB, the workbench's model offline) and latency.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any

import pandas as pd

from workbook.calls import measure_call
from workbook.engine_reads import stored_documents
from workbook.errors import UnknownChoiceError, WorkbookError
from workbook.factors import GROWTH_CASES, dataset_counts
from workbook.loaded import Loadable, LoadedShape, loaded_shapes
from workbook.operations.parts import SCAN_BATCH, PartsOperations
from workbook.shapes.parts import DUPLICATION_POLICY, PART_FACTS
from workbook.shapes.spec import Document

PART_READS = {
    "embedded": ("one read",),
    "referenced": ("$lookup", "application join"),
    "hybrid": ("names from the copies", "$lookup"),
}
"""Each shape's ways of reading a product with its parts, as :func:`read_parts` names them."""


def application_join(loaded: LoadedShape, product_id: str) -> Document | None:
    """A product and its parts by two queries from the application: the product, then its parts by ``$in``."""
    db = loaded.db
    product = db.products.find_one({"_id": product_id})
    if product is None:
        return None
    ids = [line["partId"] for line in product["parts"]]
    parts = {part["_id"]: part for part in db.parts.find({"_id": {"$in": ids}})}
    lines = [
        {
            "partId": line["partId"],
            **{f: parts.get(line["partId"], {}).get(f) for f in PART_FACTS},
            "quantity": line["quantity"],
        }
        for line in product["parts"]
    ]
    return {**product, "parts": lines}


def part_names(loaded: LoadedShape, product_id: str) -> list[str] | None:
    """The names of a product's parts, from the product document alone (the hybrid shape's copies)."""
    if loaded.shape == "referenced":
        raise WorkbookError(
            "The referenced shape's products hold part ids only: their names need a second read.",
            fix="Use the hybrid or embedded shape, or read_parts(loaded, product_id, '$lookup').",
        )
    product = loaded.db.products.find_one({"_id": product_id}, {"parts.name": 1})
    return None if product is None else [line["name"] for line in product["parts"]]


def _parts_ops(loaded: LoadedShape) -> PartsOperations:
    """The loaded shape's operations, which must be the parts dataset's."""
    ops = loaded.ops
    if not isinstance(ops, PartsOperations):
        raise WorkbookError(
            f"{loaded.db.name} holds the {loaded.dataset} dataset, not parts.", fix="Pass a parts shape."
        )
    return ops


def read_parts(loaded: LoadedShape, product_id: str, how: str) -> Any:
    """Read a product's parts one of the ways its shape allows (see :data:`PART_READS`)."""
    ways = PART_READS[loaded.shape]
    if how not in ways:
        raise UnknownChoiceError(f"way to read parts in the {loaded.shape} shape", how, ways)
    if how == "application join":
        return application_join(loaded, product_id)
    if how == "names from the copies":
        return part_names(loaded, product_id)
    return _parts_ops(loaded).product_detail(product_id)


def _read_row(loaded: LoadedShape, call: Callable[[], Any], *, repeat: int = 5) -> dict[str, Any]:
    """Round trips, reply bytes, keys and documents examined of one call, and its median latency over ``repeat``."""
    from workbook.bounds import MAX_REPEAT, check_count

    check_count("repeat", repeat, most=MAX_REPEAT, unit="timed calls")
    work = measure_call(loaded.db, call)
    latencies = [measure_call(None, call).latency_ms for _ in range(repeat)]
    return {
        "round_trips": work.round_trips,
        "docs_examined": work.docs_examined,
        "keys_examined": work.keys_examined,
        "bytes_returned": work.bytes_returned,
        "latency_ms": statistics.median(latencies) if latencies else float("nan"),
    }


def _steps(items: list[Any], desc: str, unit: str, progress: bool) -> Any:
    """A progress bar over ``items`` that always shows (each step here takes seconds at ``small``;
    a bar shown only past a delay would come and go between two runs of the same notebook), as the
    widget alone: no "0%" text left in the saved cell."""
    from workbook.waiting import wait_bar

    return wait_bar(items, desc=desc, unit=unit, progress=progress, delay=0)


def compare_reads(shapes: Loadable, product_id: str, *, repeat: int = 5, progress: bool = True) -> pd.DataFrame:
    """Every way each shape reads one product's parts, measured side by side (one row per way)."""
    rows = []
    ways = [(loaded, how) for loaded in loaded_shapes(shapes) for how in PART_READS[loaded.shape]]
    with _steps(ways, "measure each way of reading", "way", progress) as bar:
        for loaded, how in bar:
            measured = _read_row(loaded, partial(read_parts, loaded, product_id, how), repeat=repeat)
            rows.append({"shape": loaded.shape, "read": how, **measured})
    frame = pd.DataFrame(rows).set_index(["shape", "read"])
    return frame.astype({"round_trips": int, "docs_examined": "Int64", "keys_examined": "Int64", "bytes_returned": int})


def users_of_part(loaded: LoadedShape, part_id: str) -> list[Document]:
    """The pipeline "a part and every product that uses it": ``$lookup`` on ``products.parts.partId``."""
    return [
        {"$match": {"_id": part_id}},
        {"$lookup": {"from": "products", "localField": "_id", "foreignField": "parts.partId", "as": "usedIn"}},
    ]


def foreign_index_effect(
    loaded: LoadedShape, part_id: str, *, index: str = "part_products", progress: bool = True
) -> pd.DataFrame:
    """The ``$lookup`` from a part to the products using it, explained with the foreign-field index
    and again with it hidden (then unhidden): the foreign side's index, scans, documents and keys examined."""

    if "parts" not in loaded.collection_names:
        raise WorkbookError(
            f"The {loaded.shape} shape has no parts collection to look up from.",
            fix="Use the referenced or hybrid shape.",
        )
    pipeline = users_of_part(loaded, part_id)
    rows = []
    with _steps([False, True], f"explain with {index} used, then hidden", "explain", progress) as bar:
        for hidden in bar:
            rows.append(_lookup_row(loaded, pipeline, index, hidden))
    return pd.DataFrame(rows).set_index("foreign index")


def _lookup_row(loaded: LoadedShape, pipeline: list[Document], index: str, hidden: bool) -> dict[str, Any]:
    from workbook.explaining import explain_aggregate

    loaded.db.command("collMod", "products", index={"name": index, "hidden": hidden})
    try:
        summary = explain_aggregate(loaded["parts"], pipeline).summary()
    finally:
        loaded.db.command("collMod", "products", index={"name": index, "hidden": False})
    lookup = (summary.get("lookups") or [{}])[0]
    return {
        "foreign index": f"{index} hidden" if hidden else f"{index} used",
        "index used": ", ".join(lookup.get("indexesUsed") or []) or "none",
        "collection scans": lookup.get("collectionScans"),
        "products examined": lookup.get("totalDocsExamined"),
        "keys examined": lookup.get("totalKeysExamined"),
    }


def rename_cost(
    shapes: Loadable, part_id: str, new_name: str, *, restore: bool = True, progress: bool = True
) -> pd.DataFrame:
    """Rename one part in each shape: documents rewritten, round trips and bytes sent back.

    With ``restore`` the old name is put back afterwards (not counted), so the data stays as loaded.
    """
    rows = []
    for loaded in _steps(loaded_shapes(shapes), "rename in each shape", "shape", progress):
        ops = _parts_ops(loaded)
        old = ops._current_name(part_id)
        work = measure_call(None, ops.rename_part, part_id, new_name)
        rows.append(
            {
                "shape": loaded.shape,
                "documents_rewritten": work.result,
                "write_commands": sum(1 for name in work.commands if name in ("update", "insert")),
                "round_trips": work.round_trips,
            }
        )
        if restore and old is not None:
            ops.rename_part(part_id, old)
    return pd.DataFrame(rows).set_index("shape")


def products_using(shapes: Loadable, part_id: str, *, progress: bool = True) -> dict[str, list[str]]:
    """Each shape's answer to "which products use this part" (the multikey index on ``parts.partId``)."""
    found = {}
    for loaded in _steps(loaded_shapes(shapes), "find the products using the part", "shape", progress):
        found[loaded.shape] = loaded.ops.products_using_part(part_id)
    return found


def stale_copies(loaded: LoadedShape) -> int:
    """How many product lines carry a part name that differs from ``parts.name`` (hybrid shape).

    Read through the wire from a server; on the offline default, from the engine's storage.
    """
    parts = stored_documents(loaded.db, "parts")
    products: Iterable[Mapping[str, Any]] | None = stored_documents(loaded.db, "products")
    if parts is None or products is None:
        parts = list(loaded.db.parts.find({}, {"name": 1}))
        products = loaded.db.products.find({}, {"parts.partId": 1, "parts.name": 1}, batch_size=SCAN_BATCH)
    names = {part["_id"]: part.get("name") for part in parts}
    return sum(
        1
        for product in products
        for line in product.get("parts") or []
        if line["partId"] in names and line.get("name") != names[line["partId"]]
    )


def duplication_policy() -> pd.DataFrame:
    """The hybrid parts shape's written duplication policy, one row per rule."""
    policy = DUPLICATION_POLICY
    rows = [
        ("copied", ", ".join(policy["copied"])),
        ("into", policy["into"]),
        ("source of truth", policy["source_of_truth"]),
        *((f"not copied: {field}", why) for field, why in policy["not_copied"].items()),
        ("refreshed", policy["refreshed"]),
        ("staleness", policy["staleness"]),
    ]
    return pd.DataFrame(rows, columns=["rule", "policy"]).set_index("rule")


LADDER: tuple[dict[str, str], ...] = (
    {
        "rung": "one-to-one",
        "example": "a customer and their loyalty settings",
        "how many": "1",
        "decision": "embed (as fields or a sub-document)",
        "why": "read together, one document, no growth",
    },
    {
        "rung": "one-to-few",
        "example": "a customer's addresses",
        "how many": "a handful",
        "decision": "embed an array",
        "why": "small and bounded; shown on the same page",
    },
    {
        "rung": "bounded one-to-many",
        "example": "a product's parts (up to ~20 lines)",
        "how many": "tens, with a known limit",
        "decision": "embed ids (with copied names: hybrid) and enforce the limit (maxItems)",
        "why": "one read per product stays bounded; shared facts stay in one place",
    },
    {
        "rung": "large one-to-many",
        "example": "a product's reviews",
        "how many": "hundreds to thousands",
        "decision": "reference from the many side (productId), keep a subset and a summary in the one",
        "why": "an array this long makes every read and write of the parent pay for it",
    },
    {
        "rung": "one-to-squillions",
        "example": "a popular user's followers, a device's log lines",
        "how many": "millions, unbounded",
        "decision": "reference from the many side only; never an array in the parent",
        "why": "the parent would pass 16 MiB; an index on the child's parent id does the work",
    },
    {
        "rung": "many-to-many",
        "example": "products and parts (a part in thousands of products)",
        "how many": "many on both sides",
        "decision": "ids where they are read (multikey index on products.parts.partId), facts in one place",
        "why": "embedding full copies multiplies every change by the number of users of the part",
    },
)
"""The cardinality ladder: each kind of relationship, an example from the course's datasets, and the decision."""


def cardinality_ladder() -> pd.DataFrame:
    """The cardinality ladder as a table, one row per rung (see :data:`LADDER`)."""
    return pd.DataFrame(list(LADDER)).set_index("rung")


def ladder_decision(rung: str) -> str:
    """The decision for one rung of the ladder.

    >>> ladder_decision("one-to-few")
    'embed an array'
    """
    for row in LADDER:
        if row["rung"] == rung:
            return row["decision"]
    raise UnknownChoiceError("rung of the cardinality ladder", rung, [row["rung"] for row in LADDER])


def part_usage(loaded: LoadedShape) -> pd.Series:
    """How many products use each part (a product listing a part twice counts once), most used first.

    Counted by the server with an aggregation; on the offline default, from the engine's storage.
    """
    stored = stored_documents(loaded.db, "products")
    if stored is not None:
        counts = dict(Counter(part for product in stored for part in _part_ids(product)))
    else:
        rows = loaded.db.products.aggregate(
            [
                {"$project": {"partIds": {"$setUnion": ["$parts.partId", []]}}},
                {"$unwind": "$partIds"},
                {"$group": {"_id": "$partIds", "n": {"$sum": 1}}},
            ]
        )
        counts = {row["_id"]: int(row["n"]) for row in rows}
    if not counts:
        raise WorkbookError(f"{loaded.db.name} holds no products with parts.", fix="Load the parts dataset first.")
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return pd.Series(dict(ordered), name="products using the part", dtype="int64").rename_axis("part")


def _part_ids(product: Mapping[str, Any]) -> set[Any]:
    """The distinct part ids a product lists (what ``$setUnion: ["$parts.partId", []]`` gives)."""
    lines = product.get("parts")
    return {line["partId"] for line in lines if "partId" in line} if isinstance(lines, list) else set()


def _usage(source: LoadedShape | pd.Series) -> pd.Series:
    return source if isinstance(source, pd.Series) else part_usage(source)


def most_used_part(source: LoadedShape | pd.Series) -> tuple[str, int]:
    """The part used by the most products, and how many (ties broken by id); ``source`` is a loaded
    shape or what :func:`part_usage` returned."""
    usage = _usage(source)
    return str(usage.index[0]), int(usage.iloc[0])


def typical_part(source: LoadedShape | pd.Series) -> tuple[str, int]:
    """A part used by the median number of products (the first such part by id), and how many."""
    usage = _usage(source)
    median = int(usage.median())
    at_median = usage[usage == median]
    if at_median.empty:  # an even count can put the median between two counts
        at_median = usage[usage <= median].head(1)
    part = sorted(at_median.index)[0]
    return str(part), int(usage[part])


def stored_sizes(shapes: Loadable, collection: str = "products") -> pd.DataFrame:
    """Documents, average and largest BSON size of one collection in each shape, from the load reports."""
    rows = {}
    for loaded in loaded_shapes(shapes):
        frame = loaded.report.to_frame()
        if collection in frame.index:
            rows[loaded.shape] = frame.loc[collection, ["documents", "avg_bytes", "max_bytes", "bytes"]]
    return pd.DataFrame(rows).T.rename_axis("shape")


def lines_per_product(loaded: LoadedShape) -> dict[str, float]:
    """How many part lines the products hold: the smallest, median and largest count."""
    rows = loaded.db.products.aggregate([{"$project": {"n": {"$size": "$parts"}}}])
    counts = sorted(row["n"] for row in rows)
    if not counts:
        raise WorkbookError(f"{loaded.db.name} holds no products.", fix="Load the parts dataset first.")
    return {"min": counts[0], "median": statistics.median(counts), "max": counts[-1]}


def refresh_copies(loaded: LoadedShape) -> int:
    """Repair every stale copy of a part name in a hybrid shape; returns the products rewritten."""
    from workbook.operations.parts import refresh_part_names

    if loaded.shape != "hybrid":
        raise WorkbookError(
            f"Only the hybrid shape keeps copies to refresh (this is {loaded.shape}).", fix="Pass the hybrid shape."
        )
    return refresh_part_names(loaded.db)


def growth_test(scales: tuple[str, str] = ("tiny", "small"), *, seed: int = 7) -> pd.DataFrame:
    """The squillions test, measured: does anything stop the count from growing?

    Each relationship's largest count in the generated data at two scales: a count that stays put
    while the data grows has a ceiling (an array can hold it); one that grows with the data has none.
    """
    from workbook.datasets import sizes
    from workbook.waiting import wait_bar

    small, large = scales
    rows = []
    steps = [(case, scale) for case in GROWTH_CASES for scale in scales]
    counts: dict[tuple[str, str], int] = {}
    with wait_bar(steps, desc="generate and count", unit="dataset") as bar:
        for (relationship, dataset, collection, field), scale in bar:
            counts[(relationship, scale)] = dataset_counts(dataset, scale, seed)[f"{collection}.{field}"]
    for relationship, dataset, collection, _field in GROWTH_CASES:
        grew = sizes(dataset, large)[collection] / sizes(dataset, small)[collection]
        before, after = counts[(relationship, small)], counts[(relationship, large)]
        rows.append(
            {
                "relationship": relationship,
                f"largest at {small}": before,
                f"largest at {large}": after,
                "the data grew": f"x{grew:,.0f} {collection}",
                "a ceiling?": "yes: the count stayed put" if after == before else "no: it grew with the data",
            }
        )
    return pd.DataFrame(rows).set_index("relationship")


NAME_INDEX = "part_name"
"""The index the parts-management screen's search by exact name gets (seed 001: ``{name: 1}``)."""


def _explain_row(how: str, index: str, reply: Mapping[str, Any]) -> dict[str, Any]:
    from workbook.planner.reading import summarize

    stats = reply["executionStats"]
    summary = summarize(dict(reply))
    return {
        "indexes": index,
        "explained by": how,
        "plan": " > ".join(summary["stages"]),
        "nReturned": stats["nReturned"],
        "totalKeysExamined": stats["totalKeysExamined"],
        "totalDocsExamined": stats["totalDocsExamined"],
    }


def index_part_names(loaded: LoadedShape, name: str) -> pd.DataFrame:
    """Search ``parts`` by exact name, explained two ways, before and after adding :data:`NAME_INDEX`.

    Each search is explained by pymongo's own ``cursor.explain()`` (the command seed 001 writes as
    ``.explain("executionStats")``) and by ``workbook.explain``: one row each, so they can be compared.
    """
    from workbook.explaining.view import explain

    parts = loaded.check()["parts"]
    rows = []
    for step in ("_id only", f"_id, {NAME_INDEX}"):
        if step != "_id only":
            parts.create_index("name", name=NAME_INDEX)
        rows.append(_explain_row("cursor.explain()", step, parts.find({"name": name}).explain()))
        rows.append(_explain_row("workbook.explain", step, explain(parts, {"name": name})))
    return pd.DataFrame(rows).set_index(["indexes", "explained by"])

"""How a followers page's cost grows with the data, per shape (lesson 04's chart), without loading medium.

Loading the medium followers dataset (450,000 follows) into the offline default takes minutes, so
the numbers are computed from the generated documents themselves: each shape's builder makes the
documents, the workbench's planner model (``workbook.planner``, the same one ``explain`` uses
offline) counts the keys and documents the page's queries examine, and the bytes returned are the
BSON sizes of what those queries send back. At each scale the user is the most-followed one.
``work_by_scale()`` reads the committed table ``data/followers_scaling.csv`` (computed by
``compute_scaling()``, whose tiny rows a unit test recomputes) so the notebook draws it instantly.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from importlib import resources
from io import StringIO
from typing import Any

import pandas as pd

from workbook.facts import bson_size
from workbook.operations.followers import FOLLOWS_NEWEST_FIRST, PAGE_SIZE
from workbook.shapes import SHAPE_NAMES
from workbook.shapes.followers import NEWEST_FIRST

MEASURED_SCALES = ("tiny", "small", "medium")
COLUMNS = [
    "scale",
    "follows",
    "shape",
    "top_user_followers",
    "largest_user_bytes",
    "keys_examined",
    "docs_examined",
    "bytes_returned",
]
CACHE_FILE = "followers_scaling.csv"


def _index_infos(spec: Any) -> list[dict[str, Any]]:
    infos = [{"v": 2, "key": {"_id": 1}, "name": "_id_"}]
    for index in spec.indexes:
        infos.append({"v": 2, "key": dict(index.keys), "name": index.name, "unique": index.unique})
    return infos


def _explain(documents: Sequence[dict[str, Any]], spec: Any, **query: Any) -> tuple[int, int]:
    from workbook.planner import explain_find

    stats = explain_find(documents, _index_infos(spec), namespace=f"model.{spec.name}", **query)["executionStats"]
    return int(stats["totalKeysExamined"]), int(stats["totalDocsExamined"])


def page_cost(dataset: Any, shape: str, page: int = 0, page_size: int = PAGE_SIZE) -> dict[str, Any]:
    """The most-followed user's followers page ``page`` in ``shape``: keys and documents examined, bytes returned."""
    from workbook.dataset_parts import shape_spec

    spec = shape_spec("followers", shape)
    built = spec.build(dataset)
    counts = Counter(f["followedId"] for f in dataset.documents("follows"))
    top = min(counts, key=lambda user: (-counts[user], user))
    users = list(built["users"])  # made once: the explains below read them again
    user = next(u for u in users if u["_id"] == top)
    keys = docs = returned = 0
    if shape == "embedded":  # the whole array comes back; sorted and sliced in the application
        keys, docs = _explain(users, spec.collection("users"), filter={"_id": top}, projection={"followers": 1})
        returned = bson_size({"_id": top, "followers": user["followers"]})
    else:
        edges = True
        if shape == "hybrid":
            keys, docs = _explain(
                users, spec.collection("users"), filter={"_id": top}, projection={"recentFollowers": 1, "isOutlier": 1}
            )
            returned = bson_size({k: user[k] for k in ("_id", "recentFollowers", "isOutlier")})
            edges = user["isOutlier"]
        if edges:
            fields = {"_id": 0, "followerId": 1, "createdAt": 1}
            query = {"filter": {"followedId": top}, "projection": fields, "sort": dict(FOLLOWS_NEWEST_FIRST)}
            k, d = _explain(
                built["follows"], spec.collection("follows"), **query, skip=page * page_size or None, limit=page_size
            )
            keys, docs = keys + k, docs + d
            mine = [f for f in built["follows"] if f["followedId"] == top]
            mine.sort(key=lambda f: (f["createdAt"], f["followerId"]), reverse=True)
            page_rows = mine[page * page_size : (page + 1) * page_size]
            returned += sum(bson_size({"followerId": f["followerId"], "createdAt": f["createdAt"]}) for f in page_rows)
    assert NEWEST_FIRST[0][0] == "createdAt"  # the order both shapes page in
    return {
        "top_user_followers": counts[top],
        "largest_user_bytes": max(bson_size(u) for u in users),
        "keys_examined": keys,
        "docs_examined": docs,
        "bytes_returned": returned,
    }


def compute_scaling(scales: tuple[str, ...] = MEASURED_SCALES, seed: int = 7) -> pd.DataFrame:
    """Compute the table (slow at medium: about a minute); ``work_by_scale`` reads the committed copy."""
    from workbook.datasets import generate

    rows = []
    for scale in scales:
        dataset = generate("followers", scale=scale, seed=seed)
        follows = len(dataset.documents("follows"))
        for shape in SHAPE_NAMES:
            rows.append({"scale": scale, "follows": follows, "shape": shape, **page_cost(dataset, shape)})
    return pd.DataFrame(rows, columns=COLUMNS)


def work_by_scale() -> pd.DataFrame:
    """The committed table: per scale and shape, the top user's first followers page (see the module docstring)."""
    text = (resources.files("workbook.patterns") / "data" / CACHE_FILE).read_text(encoding="utf-8")
    return pd.read_csv(StringIO(text))


def write_cache(path: str) -> pd.DataFrame:
    """Recompute the table at every scale and write it to ``path`` (maintainers: after a generator change)."""
    frame = compute_scaling()
    frame.to_csv(path, index=False)
    return frame


METRICS = {
    "bytes_returned": "bytes returned for the first page",
    "keys_examined": "index keys examined for the first page",
    "largest_user_bytes": "largest user document (bytes)",
}


def scaling_chart(frame: pd.DataFrame, metrics: tuple[str, ...] = ("bytes_returned", "largest_user_bytes")) -> Any:
    """Work against data size, one line per shape and one panel per metric, on log-log axes."""
    import plotly.express as px

    from workbook.charts import SHAPE_COLORS

    long = frame.melt(
        id_vars=["scale", "follows", "shape", "top_user_followers"], value_vars=list(metrics), var_name="metric"
    )
    long["metric"] = long["metric"].map(METRICS)
    figure = px.line(
        long,
        x="follows",
        y="value",
        color="shape",
        facet_col="metric",
        markers=True,
        facet_col_spacing=0.08,
        log_x=True,
        log_y=True,
        color_discrete_map=SHAPE_COLORS,
        category_orders={"shape": list(SHAPE_NAMES)},
        labels={"follows": "follow edges in the dataset (log scale)", "value": "bytes (log scale)"},
        hover_data=["scale", "top_user_followers"],
    )
    figure.for_each_annotation(lambda a: a.update(text=a.text.split("=")[-1]))
    # Label powers of ten only, written out, so no minor tick reads as a bare "2" or "5".
    figure.update_xaxes(dtick=1, tickformat=",")
    figure.update_yaxes(dtick=1, tickformat=",", matches=None, showticklabels=True)
    figure.update_layout(
        title={
            "text": "A followers page of the most-followed user, as the data grows",
            "subtitle": {"text": "computed from the generated documents with the planner model (tiny, small, medium)"},
        },
        legend_title_text="shape",
        margin={"t": 100},
        template="plotly_white",
    )
    return figure

"""The tree patterns (lesson 13): one catalogue tree stored four ways, and what two questions cost in each.

The tree is the store's own category tree (a root, six departments, nineteen leaf categories)
grown two levels deeper, so that "the subtree of X" and "the path from X to the root" have
several levels to walk. Each layout is one collection, with the one index its questions need:

- ``parent``: each node holds ``parentId`` (index ``{parentId: 1}``);
- ``children``: each node holds the array ``children`` of its children's ids (index ``{children: 1}``);
- ``ancestors``: each node holds ``parentId`` and ``ancestors``, root first (index ``{ancestors: 1}``);
- ``path``: each node holds ``path``, its ancestors' ids as one string ``",root,dept,"`` (index ``{path: 1}``),
  so a subtree is an anchored regular expression, a prefix scan of the index.

The documents are built by pure functions; :func:`tree_work` runs both questions on every layout
and counts round trips, keys and documents examined (command monitoring and explain).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pandas as pd
from pymongo import ASCENDING
from pymongo.database import Database

from workbook.calls import measure_call
from workbook.errors import UnknownChoiceError, WorkbookError
from workbook.shapes.spec import Document

ROOT_ID = "cat-00"
"""The root every department hangs from (the store's categories have six roots; a tree has one)."""

LAYOUTS = ("parent", "children", "ancestors", "path")
"""The four tree layouts, in the order MongoDB's documentation presents them."""

COLLECTIONS = {layout: f"tree_{layout}" for layout in LAYOUTS}

_INDEXES = {"parent": "parentId", "children": "children", "ancestors": "ancestors", "path": "path"}

TREE_QUESTIONS = ("subtree", "path to root")


def catalogue_tree(dataset: Any, *, extra_levels: int = 2, branching: int = 3) -> list[Document]:
    """The store's category tree under one root, each leaf grown ``extra_levels`` deeper (pure).

    Nodes are ``{_id, name, parentId}``, parents before children; a grown node's id extends its
    parent's (``cat-08`` has children ``cat-08.1`` to ``cat-08.3``).
    """
    categories = _categories(dataset)
    nodes: list[Document] = [{"_id": ROOT_ID, "name": "All products", "parentId": None}]
    tops = [c for c in categories if c.get("parentId") is None]
    nodes += [{"_id": c["_id"], "name": c["name"], "parentId": ROOT_ID} for c in tops]
    leaves = [c for c in categories if c.get("parentId") is not None]
    nodes += [{"_id": c["_id"], "name": c["name"], "parentId": c["parentId"]} for c in leaves]
    frontier = [{"_id": c["_id"], "name": c["name"]} for c in leaves]
    for _ in range(extra_levels):
        grown = [
            {"_id": f"{node['_id']}.{n}", "name": f"{node['name']} {n}", "parentId": node["_id"]}
            for node in frontier
            for n in range(1, branching + 1)
        ]
        nodes += grown
        frontier = grown
    return nodes


def _categories(dataset: Any) -> list[Document]:
    collections = getattr(dataset, "collections", None)
    if getattr(dataset, "name", None) != "store" or not collections or "categories" not in collections:
        raise WorkbookError(
            "The catalogue tree is grown from the store's categories.",
            fix='Pass workbook.generate("store", scale=workbook.course_scale(), seed=7).',
        )
    return list(dataset.documents("categories"))


def tree_documents(nodes: list[Document], layout: str) -> list[Document]:
    """The nodes as one layout stores them (pure); ``nodes`` as :func:`catalogue_tree` returns them."""
    _check_layout(layout)
    if layout == "parent":
        return [dict(node) for node in nodes]
    if layout == "children":
        children: dict[str, list[str]] = {node["_id"]: [] for node in nodes}
        for node in nodes:
            if node["parentId"] is not None:
                children[node["parentId"]].append(node["_id"])
        return [{"_id": n["_id"], "name": n["name"], "children": children[n["_id"]]} for n in nodes]
    ancestors = ancestors_of(nodes)
    if layout == "ancestors":
        return [{**node, "ancestors": ancestors[node["_id"]]} for node in nodes]
    return [{"_id": n["_id"], "name": n["name"], "path": _path_string(ancestors[n["_id"]])} for n in nodes]


def ancestors_of(nodes: list[Document]) -> dict[str, list[str]]:
    """Each node's ancestors' ids, root first (pure; parents come before children in ``nodes``)."""
    found: dict[str, list[str]] = {}
    for node in nodes:
        parent = node["parentId"]
        found[node["_id"]] = [] if parent is None else [*found[parent], parent]
    return found


def _path_string(ancestors: list[str]) -> str:
    return "," + "".join(f"{a}," for a in ancestors)


def _check_layout(layout: str) -> None:
    if layout not in LAYOUTS:
        raise UnknownChoiceError("tree layout", layout, LAYOUTS)


@dataclass
class Trees:
    """The catalogue tree loaded in all four layouts, one collection each, in ``db``."""

    db: Database
    nodes: list[Document]

    def collection(self, layout: str) -> Any:
        """The collection holding ``layout``."""
        _check_layout(layout)
        return self.db[COLLECTIONS[layout]]

    def depth(self) -> int:
        """Levels below the root (the root's children are level 1)."""
        return max(len(a) for a in ancestors_of(self.nodes).values())

    def __repr__(self) -> str:
        return f"<catalogue tree of {len(self.nodes):,} nodes in {len(LAYOUTS)} layouts in {self.db.name}>"


def load_trees(nodes: list[Document], db: Database | None = None) -> Trees:
    """Load ``nodes`` in every layout (default database: ``workbench_<learner>_patterns_tree``)."""
    from workbook.connection import connect
    from workbook.loading import fill
    from workbook.namespace import require_own_database

    db = db if db is not None else connect(database="patterns_tree", quiet=True)
    require_own_database(db.name)
    for layout in LAYOUTS:
        name = COLLECTIONS[layout]
        db.drop_collection(name)
        db[name].create_index([(_INDEXES[layout], ASCENDING)], name=f"{_INDEXES[layout]}_1")
        fill(db, name, tree_documents(nodes, layout))
    return Trees(db, nodes)


def subtree(trees: Trees, layout: str, node_id: str) -> list[str]:
    """The ids of every node below ``node_id`` (not itself), sorted, read from ``layout``'s collection."""
    collection = trees.collection(layout)
    found: list[str] = []
    if layout == "parent":  # one query per level: the children of the whole frontier at once
        frontier = [node_id]
        while frontier:
            frontier = [d["_id"] for d in collection.find({"parentId": {"$in": frontier}}, {"_id": 1})]
            found += frontier
    elif layout == "children":  # the node's children, then theirs, one level per query
        node = collection.find_one({"_id": node_id}, {"children": 1})
        frontier = list(node["children"]) if node else []
        while frontier:
            found += frontier
            frontier = [c for d in collection.find({"_id": {"$in": frontier}}, {"children": 1}) for c in d["children"]]
    elif layout == "ancestors":  # one query: every node that has X among its ancestors
        found = [d["_id"] for d in collection.find({"ancestors": node_id}, {"_id": 1})]
    else:  # the node's path, then one prefix scan of the path index
        node = collection.find_one({"_id": node_id}, {"path": 1})
        if node is not None:
            prefix = "^" + re.escape(f"{node['path']}{node_id},")
            found = [d["_id"] for d in collection.find({"path": {"$regex": prefix}}, {"_id": 1})]
    return sorted(found)


def path_to_root(trees: Trees, layout: str, node_id: str) -> list[str]:
    """The ids from ``node_id``'s parent up to the root, nearest first, read from ``layout``'s collection."""
    collection = trees.collection(layout)
    path: list[str] = []
    if layout == "parent":  # one query per level, up the parent links
        node = collection.find_one({"_id": node_id}, {"parentId": 1})
        while node is not None and node["parentId"] is not None:
            path.append(node["parentId"])
            node = collection.find_one({"_id": node["parentId"]}, {"parentId": 1})
    elif layout == "children":  # one query per level: which node lists this one as a child?
        child = node_id
        while (parent := collection.find_one({"children": child}, {"_id": 1})) is not None:
            path.append(parent["_id"])
            child = parent["_id"]
    elif layout == "ancestors":  # the node holds its path
        node = collection.find_one({"_id": node_id}, {"ancestors": 1})
        path = list(reversed(node["ancestors"])) if node else []
    else:
        node = collection.find_one({"_id": node_id}, {"path": 1})
        path = list(reversed([p for p in node["path"].split(",") if p])) if node else []
    return path


def tree_work(trees: Trees, subtree_of: str, path_from: str) -> pd.DataFrame:
    """Per layout, the work of the subtree of ``subtree_of`` and of the path from ``path_from`` to the root:
    round trips, keys and documents examined, nodes returned, and the answer itself (``answer``)."""
    rows = []
    for layout in LAYOUTS:
        for question, call, node in (("subtree", subtree, subtree_of), ("path to root", path_to_root, path_from)):
            work = measure_call(trees.db, call, trees, layout, node)
            rows.append(
                {
                    "layout": layout,
                    "question": question,
                    "round_trips": work.round_trips,
                    "keys_examined": work.keys_examined,
                    "docs_examined": work.docs_examined,
                    "nodes": len(work.result),
                    "answer": tuple(work.result),
                }
            )
    return pd.DataFrame(rows).convert_dtypes()

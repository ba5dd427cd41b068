"""MongoDB's rules for computed and projected paths in aggregation, as pure functions.

The offline default's engine (mongoeco 4.11.0) sets a computed dotted path the way an update's
``$set`` does and reads a nested ``$project`` document as an object literal; MongoDB walks arrays
and treats nested and dotted projections alike (jstests ``sources/project/*.js``,
``sources/addFields/dotted_paths.js``). :mod:`workbook.engine_compat` installs these functions in
the engine (``install_aggregation_semantics``); they import nothing from it, so they are tested here.
"""

from __future__ import annotations

import copy
import decimal
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

ABSENT = object()
"""What an evaluator returns for a computed field that is missing (the field is left out)."""


def set_computed_path(document: dict[str, Any], path: str, value: Any) -> None:
    """Set a computed field as ``$addFields`` does: a dotted path through an array sets it in every
    element (nested arrays too), a scalar or missing step becomes a new subdocument.

    >>> doc = {"a": [1, {"x": 1}, [2]]}
    >>> set_computed_path(doc, "a.b", 0)
    >>> doc
    {'a': [{'b': 0}, {'x': 1, 'b': 0}, [{'b': 0}]]}
    """
    first, _, rest = path.partition(".")
    if not rest:
        document[first] = value
        return

    def into(current: Any) -> Any:
        if isinstance(current, dict):
            set_computed_path(current, rest, copy.deepcopy(value))
            return current
        if isinstance(current, list):
            return [into(item) for item in current]
        made: dict[str, Any] = {}
        set_computed_path(made, rest, copy.deepcopy(value))
        return made

    document[first] = into(document.get(first))


def is_expression(value: Any) -> bool:
    """Whether a ``$project`` value is an expression (``{$op: ...}``), not a nested projection."""
    return isinstance(value, Mapping) and any(isinstance(k, str) and k.startswith("$") for k in value)


def flag(value: Any) -> int | None:
    """1 (include) or 0 (exclude) for a ``$project`` value that is a flag (any bool or number), else None.

    >>> [flag(v) for v in (True, 0, 1.0, 5, "x", {"$add": [1]})]
    [1, 0, 1, 1, None, None]
    """
    if type(value).__name__.startswith("Bson"):  # the engine's own BsonInt64, BsonDouble... wrappers
        value = getattr(value, "value", value)
    if type(value).__name__ == "Decimal128":
        value = value.to_decimal()
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float | decimal.Decimal):
        return 0 if value == 0 else 1
    return None


def flatten(spec: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A ``$project`` spec with nested projections made dotted and flags made 0/1 (MongoDB reads
    ``{b: {a: 1}}`` as ``{"b.a": 1}``), in the spec's order.

    >>> flatten({"_id": 0, "b": {"a": 1.0}, "c": {"$add": [1]}})
    {'_id': 0, 'b.a': 1, 'c': {'$add': [1]}}
    """
    out: dict[str, Any] = {}
    for key, value in spec.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value and not is_expression(value):
            out.update(flatten(value, f"{path}."))
        else:
            marked = flag(value)
            out[path] = value if marked is None else marked
    return out


@dataclass
class _Node:
    includes: set[str] = field(default_factory=set)
    computed: dict[str, Any] = field(default_factory=dict)  # name -> expression, or a child _Node
    children: dict[str, _Node] = field(default_factory=dict)

    def has_computed(self) -> bool:
        return any(not isinstance(v, _Node) for v in self.computed.values()) or any(
            child.has_computed() for child in self.children.values()
        )


def _tree(flat: Mapping[str, Any]) -> _Node:
    root = _Node()
    for path, value in flat.items():
        node = root
        *parents, last = path.split(".")
        for part in parents:
            child = node.children.get(part)
            if child is None:
                child = node.children[part] = _Node()
                node.computed.setdefault(part, child)  # a new sub-object's place among computed fields
            node = child
        if value == 1 and flag(value) is not None:
            node.includes.add(last)
        elif flag(value) is None:
            node.computed[last] = value
    return root


def inclusion_projector(flat: Mapping[str, Any]) -> Callable[[Mapping[str, Any], Callable[[Any], Any]], dict[str, Any]]:
    """An inclusion ``$project`` (flattened by :func:`flatten`) as MongoDB builds it, as a function of (document,
    evaluate): included fields in the document's order, then computed ones in the spec's order; a path through
    an array applies to each element, and a computed field turns a scalar element into a subdocument.
    ``evaluate(expression)`` evaluates against the whole document (:data:`ABSENT`: left out). The spec is read
    once, for every document (reading it per document was a third of a ``$project`` over 40,000 products).

    >>> ev = lambda e: e["$literal"]
    >>> inclusion_projector({"a.b": {"$literal": "n"}, "_id": 0})({"_id": 1, "a": [1, {"b": 2}]}, ev)
    {'a': [{'b': 'n'}, {'b': 'n'}]}
    """
    root = _tree(flat)
    if flat.get("_id", 1) == 1 and "_id" not in root.computed and "_id" not in root.children:
        root.includes.add("_id")
    return partial(_apply, root)


def _apply(node: _Node, document: Mapping[str, Any], evaluate: Callable[[Any], Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in document.items():
        if key in node.includes:
            out[key] = copy.deepcopy(value)
        elif key in node.children and not (key in node.computed and not isinstance(node.computed[key], _Node)):
            projected = _into(node.children[key], value, evaluate)
            if projected is not ABSENT:
                out[key] = projected
    for key, expression in node.computed.items():
        if isinstance(expression, _Node):
            if key not in out and key not in document and expression.has_computed():
                out[key] = _apply(expression, {}, evaluate)
            continue
        value = evaluate(expression)
        if value is not ABSENT:
            out[key] = value
    return out


def _into(node: _Node, value: Any, evaluate: Callable[[Any], Any]) -> Any:
    if isinstance(value, Mapping):
        return _apply(node, value, evaluate)
    if isinstance(value, list):
        items = [_into(node, item, evaluate) for item in value]
        return [item for item in items if item is not ABSENT]
    return _apply(node, {}, evaluate) if node.has_computed() else ABSENT


def lookup_local_values(document: Mapping[str, Any], path: str) -> list[Any]:
    """The values a ``$lookup`` looks up for ``localField`` (MongoDB's extractAllElementsAlongPath):
    arrays along the path are traversed, a numeric component also indexes an array, an array at the
    end gives its elements (never itself); no value at all looks up null (lookup_array_semantics.js).

    >>> lookup_local_values({"a": [1, [2, 3]]}, "a"), lookup_local_values({"a": [{"x": [1, 2]}, {"y": 1}]}, "a.x")
    ([1, [2, 3]], [1, 2])
    >>> lookup_local_values({"a": []}, "a"), lookup_local_values({"c": [0, [3, 4]]}, "c.1.0")
    ([], [3])
    """
    out: list[Any] = []
    _walk(document, path.split("."), out)
    return out


def _walk(value: Any, parts: list[str], out: list[Any]) -> None:
    if not parts:
        if isinstance(value, list):
            out.extend(value)
        else:
            out.append(value)
        return
    head, rest = parts[0], parts[1:]
    if isinstance(value, Mapping):
        if head in value:
            _walk(value[head], rest, out)
    elif isinstance(value, list):
        if head.isdigit() and int(head) < len(value):
            _walk(value[int(head)], rest, out)
        for item in value:
            if isinstance(item, Mapping):
                _walk(item, parts, out)

"""Notebook 09: validators, read and tried: what each shape enforces, why a write was refused, migrating.

A refused write (code 121, "Document failed validation") carries ``errInfo.details``: a tree of the
rules that failed. :func:`validation_reasons` flattens it into one line per failed rule, naming the
field, so a learner reads the reason first instead of a traceback. The tree's shape follows the
server's (MongoDB 5.0+, ``schemaRulesNotSatisfied``/``propertiesNotSatisfied``/``details``); the
offline default writes the same structure with shorter leaf reasons.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from pymongo.collection import Collection
from pymongo.errors import OperationFailure

from workbook.errors import ArgumentTypeError
from workbook.facts import VALIDATION_FAILED


def _walk(node: Any, path: str) -> Iterator[str]:
    if isinstance(node, list):
        for child in node:
            yield from _walk(child, path)
        return
    if not isinstance(node, Mapping):
        return
    where = path or "(document)"
    if "missingProperties" in node:
        yield f"{where}: missing required field(s) {', '.join(map(str, node['missingProperties']))}"
    for prop in node.get("propertiesNotSatisfied", []):
        yield from _walk(prop.get("details", []), f"{path}.{prop['propertyName']}" if path else prop["propertyName"])
    nested = [key for key in ("schemaRulesNotSatisfied", "details") if key in node]
    if "itemIndex" in node:
        path = f"{path}[{node['itemIndex']}]"
    for key in nested:
        yield from _walk(node[key], path)
    if "reason" in node and not nested:
        rule = "" if node.get("operatorName") == "$jsonSchema" else node.get("operatorName", "")
        shown = f" {dict(node['specifiedAs'])}" if isinstance(node.get("specifiedAs"), Mapping) else ""
        got = f" (got {node['consideredValue']!r})" if "consideredValue" in node else ""
        yield " ".join(f"{path or '(document)'}: {rule}{shown} {node['reason']}{got}".split())


def validation_reasons(error: OperationFailure | Mapping[str, Any]) -> list[str]:
    """One line per failed rule of a validation error (or its ``errInfo``), each naming the field.

    >>> validation_reasons({"details": {"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [
    ...     {"operatorName": "required", "missingProperties": ["price"]}]}})
    ['(document): missing required field(s) price']
    """
    if isinstance(error, OperationFailure):
        info = (error.details or {}).get("errInfo") or {}
    elif isinstance(error, Mapping):
        info = error.get("errInfo", error)
    else:
        raise ArgumentTypeError("error", error, "a pymongo OperationFailure/WriteError, or its errInfo")
    return list(dict.fromkeys(_walk(info.get("details", {}), ""))) or ["(no details reported)"]


@dataclass
class WriteOutcome:
    """What happened to one attempted write: accepted, or refused with a code and readable reasons."""

    what: str
    accepted: bool
    code: int | None = None
    message: str = ""
    reasons: list[str] = field(default_factory=list)

    @property
    def rejected_by_validator(self) -> bool:
        """True when the validator refused the write (code 121)."""
        return self.code == VALIDATION_FAILED

    def __repr__(self) -> str:
        if self.accepted:
            return f"{self.what}: accepted"
        lines = [f"{self.what}: REJECTED (code {self.code}: {self.message})"]
        lines += [f"  - {reason}" for reason in self.reasons]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        import html

        if self.accepted:
            return f"<p>✅ <b>{html.escape(self.what)}</b>: accepted</p>"
        items = "".join(f"<li><code>{html.escape(r)}</code></li>" for r in self.reasons)
        return (
            f"<p>⛔ <b>{html.escape(self.what)}</b>: rejected, code {self.code} "
            f"({html.escape(self.message)})</p><ul>{items}</ul>"
        )


def try_write(what: str, write: Callable[[], Any]) -> WriteOutcome:
    """Run ``write`` (a call with no arguments); a refused write comes back as an outcome, not a traceback."""
    try:
        write()
    except OperationFailure as error:
        message = str((error.details or {}).get("errmsg") or error).split(", full error")[0]
        reasons = validation_reasons(error) if error.code == VALIDATION_FAILED else []
        return WriteOutcome(what, False, error.code, message, reasons)
    return WriteOutcome(what, True)


def validator_of(collection: Collection) -> dict[str, Any]:
    """The collection's validator options as the server reports them: validator, level, action."""
    infos = collection.database.command("listCollections", filter={"name": collection.name})["cursor"]["firstBatch"]
    options = infos[0].get("options", {}) if infos else {}
    return {
        "validator": options.get("validator"),
        "validationLevel": options.get("validationLevel", "strict"),
        "validationAction": options.get("validationAction", "error"),
    }


def _rules(schema: Mapping[str, Any]) -> list[str]:
    shown = []
    for name in ("bsonType", "minimum", "maximum", "minItems", "maxItems", "maxLength", "enum"):
        if name in schema:  # a list of choices as words, not Python's ['double', 'int']
            value = schema[name]
            shown.append(
                f"{name} one of {', '.join(map(str, value))}" if isinstance(value, list) else f"{name} {value}"
            )
    if "required" in schema and schema.get("bsonType") == "object":
        shown.append(f"requires {', '.join(schema['required'])}")
    return shown


def validator_table(spec: Any) -> pd.DataFrame:
    """One row per field rule of every collection of a shape spec (``workbook.shape_spec(...)``)."""
    rows = []
    for collection in spec.collections:
        schema = (collection.validator or {}).get("$jsonSchema", {})
        required = set(schema.get("required", []))
        for name, rule in schema.get("properties", {}).items():
            items = rule.get("items", {}) if isinstance(rule.get("items"), Mapping) else {}
            rows.append(
                {
                    "collection": collection.name,
                    "field": name,
                    "required": name in required,
                    "rules": "; ".join(_rules(rule) + [f"each item: {r}" for r in _rules(items)]),
                }
            )
    return pd.DataFrame(rows).set_index(["collection", "field"])


def array_bounds(spec: Any) -> dict[str, int | None]:
    """``collection.field`` -> the validator's maxItems for every array field of a shape (None: unbounded)."""
    bounds: dict[str, int | None] = {}
    for collection in spec.collections:
        properties = (collection.validator or {}).get("$jsonSchema", {}).get("properties", {})
        for name, rule in properties.items():
            if rule.get("bsonType") == "array":
                bounds[f"{collection.name}.{name}"] = rule.get("maxItems")
    return bounds


def bounds_table(bounds: Mapping[str, Mapping[str, int | None]]) -> Any:
    """Per shape (from :func:`array_bounds`), each array field's bound as a table for reading: "maxItems N",
    "unbounded", or blank where the shape has no such array.

    >>> shown = bounds_table({"a": {"p.x": None}, "b": {"p.x": 5, "q.y": None}}).frame
    >>> shown.loc["p.x"].tolist(), shown.loc["q.y"].tolist()
    (['unbounded', 'maxItems 5'], ['', 'unbounded'])
    """
    import pandas as pd

    from workbook.display import table

    paths = sorted({path for arrays in bounds.values() for path in arrays})
    rows = {
        path: {
            shape: ("" if path not in arrays else "unbounded" if arrays[path] is None else f"maxItems {arrays[path]}")
            for shape, arrays in bounds.items()
        }
        for path in paths
    }
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "array"
    return table(frame, caption="each shape's validator: how long may each array grow?")


def invalid_count(collection: Collection, validator: Mapping[str, Any]) -> int:
    """Documents of ``collection`` that ``validator`` would refuse (a query: the validator under ``$nor``)."""
    return collection.count_documents({"$nor": [dict(validator)]})


def copy_with_validator(source: Collection, name: str, *, limit: int = 20) -> Collection:
    """A new collection ``name`` with ``source``'s validator and its first ``limit`` documents (by ``_id``)."""
    if not isinstance(source, Collection):
        raise ArgumentTypeError("source", source, "a pymongo Collection such as loaded['products']")
    database = source.database
    database.drop_collection(name)
    options = validator_of(source)
    if options["validator"]:
        database.create_collection(name, **options)
    else:
        database.create_collection(name)
    documents = list(source.find().sort("_id", 1).limit(limit))
    if documents:
        database[name].insert_many(documents)
    return database[name]


def with_item_string_limit(validator: Mapping[str, Any], array_field: str, item_field: str, max_length: int) -> dict:
    """``validator`` with a ``maxLength`` on one string field of each element of ``array_field``.

    >>> v = {"$jsonSchema": {"properties": {"tags": {"bsonType": "array", "items": {"bsonType": "object"}}}}}
    >>> with_item_string_limit(v, "tags", "label", 20)["$jsonSchema"]["properties"]["tags"]["items"]["properties"]
    {'label': {'bsonType': 'string', 'maxLength': 20}}
    """
    import copy

    changed = copy.deepcopy(dict(validator))
    properties = changed.get("$jsonSchema", {}).get("properties", {})
    if array_field not in properties or properties[array_field].get("bsonType") != "array":
        from workbook.errors import UnknownChoiceError

        arrays = [name for name, rule in properties.items() if rule.get("bsonType") == "array"]
        raise UnknownChoiceError("array field of this validator", array_field, arrays)
    items = properties[array_field].setdefault("items", {"bsonType": "object"})
    items.setdefault("properties", {})[item_field] = {"bsonType": "string", "maxLength": int(max_length)}
    return changed


def requiring(validator: Mapping[str, Any], field: str, rule: Mapping[str, Any]) -> dict:
    """``validator`` with one more required field and its rule (a new rule for existing data).

    >>> requiring({"$jsonSchema": {"required": ["a"], "properties": {}}}, "sku", {"bsonType": "string"})
    {'$jsonSchema': {'required': ['a', 'sku'], 'properties': {'sku': {'bsonType': 'string'}}}}
    """
    import copy

    changed = copy.deepcopy(dict(validator))
    schema = changed.setdefault("$jsonSchema", {"bsonType": "object"})
    schema["required"] = [*schema.get("required", []), field]
    schema.setdefault("properties", {})[field] = dict(rule)
    return changed


def versioned(versions: Mapping[int, Mapping[str, Any]], *, field: str = "schemaVersion") -> dict:
    """One validator accepting each version's ``$jsonSchema``: version 1 also when ``field`` is absent.

    >>> versioned({1: {"required": ["a"]}, 2: {"required": ["b"]}})["$jsonSchema"]["anyOf"][1]["required"]
    ['b', 'schemaVersion']
    """
    alternatives = []
    for version, schema in sorted(versions.items()):
        branch = {**dict(schema), "properties": {**dict(schema.get("properties", {})), field: {"enum": [version]}}}
        if version != 1:
            branch["required"] = [*schema.get("required", []), field]
        alternatives.append(branch)
    return {"$jsonSchema": {"bsonType": "object", "anyOf": alternatives}}


def version_counts(collection: Collection, field: str = "schemaVersion") -> dict[int, int]:
    """Documents per schema version (a missing version counts as 1)."""
    counts: dict[int, int] = {}
    for row in collection.aggregate([{"$group": {"_id": {"$ifNull": [f"${field}", 1]}, "n": {"$sum": 1}}}]):
        counts[int(row["_id"])] = row["n"]
    return dict(sorted(counts.items()))


def oversized_review(text_bytes: int, *, review_id: str = "rev-oversized") -> dict[str, Any]:
    """A review entry that satisfies the hybrid shape's item rules but carries ``text_bytes`` of text.

    Dated in 2030 so a ``$sort``/``$slice`` by newest keeps it among a product's recent reviews.
    """
    from datetime import UTC, datetime

    return {
        "_id": review_id,
        "customerId": "cust-000001",
        "rating": 5,
        "createdAt": datetime(2030, 1, 1, tzinfo=UTC),
        "text": "x" * int(text_bytes),
    }

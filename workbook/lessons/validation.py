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

VALIDATION_FAILED = 121
"""The server's error code for a write its collection's validator refused (DocumentValidationFailure)."""


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
        rule = node.get("operatorName", "")
        shown = f" {dict(node['specifiedAs'])}" if isinstance(node.get("specifiedAs"), Mapping) else ""
        got = f" (got {node['consideredValue']!r})" if "consideredValue" in node else ""
        yield f"{path or '(document)'}: {rule}{shown} {node['reason']}{got}".replace("  ", " ")


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
        if name in schema:
            shown.append(f"{name} {schema[name]}")
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


def invalid_count(collection: Collection, validator: Mapping[str, Any]) -> int:
    """Documents of ``collection`` that ``validator`` would refuse (a query: the validator under ``$nor``)."""
    return collection.count_documents({"$nor": [dict(validator)]})

"""Validators the offline default refuses as MongoDB does: an unknown BSON type name is a BadValue (code 2).

mongoeco stores ``{"$jsonSchema": {"bsonType": "sting"}}`` as given, after which every insert
fails with no error code; MongoDB refuses the ``create`` or ``collMod`` itself with
"Unknown type name alias: sting". :func:`check_validator_command` runs before the engine sees
either command (one call in :mod:`workbook.offline`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbook.facts import BAD_VALUE

TYPE_NAMES = (
    "double", "string", "object", "array", "binData", "undefined", "objectId", "bool", "date", "null",
    "regex", "dbPointer", "javascript", "symbol", "javascriptWithScope", "int", "timestamp", "long",
    "decimal", "minKey", "maxKey", "number",
)  # fmt: skip
"""The BSON type aliases ``bsonType`` and ``$type`` accept (MongoDB's ``$type`` table, with ``number``)."""

TYPE_CODES = frozenset({-1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 127})
"""The numeric BSON type codes ``$type`` accepts."""


def _unknown_types(value: Any, key: str) -> list[Any]:
    """The type names in one ``bsonType`` / ``$type`` value that MongoDB does not know."""
    names = value if isinstance(value, list) else [value]
    unknown: list[Any] = []
    for name in names:
        if isinstance(name, str):
            if name not in TYPE_NAMES:
                unknown.append(name)
        elif key == "$type" and isinstance(name, int | float) and not isinstance(name, bool):
            if name not in TYPE_CODES:
                unknown.append(name)
        else:
            unknown.append(name)
    return unknown


def _walk(node: Any) -> list[Any]:
    """Every unknown type name anywhere in a validator (schemas nest under properties, items, anyOf...)."""
    found: list[Any] = []
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key in ("bsonType", "$type") and not isinstance(value, Mapping):
                found += _unknown_types(value, key)
            else:
                found += _walk(value)
    elif isinstance(node, list):
        for item in node:
            found += _walk(item)
    return found


def check_validator_command(command: Any, body: Mapping[str, Any]) -> None:
    """Refuse a ``create`` or ``collMod`` whose validator names an unknown BSON type, as MongoDB does."""
    if command not in ("create", "collMod") or not isinstance(body.get("validator"), Mapping):
        return
    unknown = _walk(body["validator"])
    if unknown:
        from mongoeco.errors import OperationFailure

        raise OperationFailure(
            f"Unknown type name alias: {unknown[0]} (valid type names: {', '.join(TYPE_NAMES)})", code=BAD_VALUE
        )

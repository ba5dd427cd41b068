"""Index definitions the offline default builds as MongoDB does, where mongoeco 4.11.0 refuses them.

Two kinds (``patches/index-definitions.md``):

* **Indexes on one key pattern that differ in collation or partial filter**
  (``index_multiple_compatibility.js``): MongoDB builds both, with distinct names
  (``IndexDescriptor::compareIndexOptions``: a different collation or ``partialFilterExpression``
  makes two indexes different; unique and sparse alone do not). mongoeco refuses the second as
  "Conflicting index definition for key pattern".
* **Compound hashed indexes** (``{a: 1, b: "hashed"}``, MongoDB 4.4+; ``hashed_index_queries.js``):
  mongoeco requires a special index to have one field.

Both are built with mongoeco's own code under a stand-in key pattern (the real fields, hashed ones
as ascending, then one field no document holds, so the keys and the uniqueness are the real ones'),
then, under the collection lock, the record gets its real key pattern back and its index map is
rebuilt for it (dropped for a hashed one: mongoeco keeps no map for hashed indexes). The planner
model, which answers the offline default's finds, builds its own keys from the listed definition.
"""

from __future__ import annotations

import dataclasses
import re
from copy import deepcopy
from typing import Any

from workbook import engine_compat

STAND_IN_FIELD = "__workbench_key_of__"
"""Prefix of the stand-in key field (followed by the index name): no document holds it."""


def _differs(record: Any, collation: Any, partial: Any) -> bool:
    """Whether an existing index on the same key pattern is a different index to MongoDB."""
    return record.get("collation") != collation or record.get("partial_filter_expression") != partial


def _refuse_partial_filter(partial: Any, sparse: Any) -> None:
    """Refuse, as MongoDB does (CannotCreateIndex, 67), the partial filters mongoeco would accept: a
    regular expression, ``$expr``, or a partial index that is also sparse (index_partial_create_drop.js)."""
    from mongoeco.errors import OperationFailure

    if partial is None:
        return
    if sparse is True:
        raise OperationFailure('cannot mix "partialFilterExpression" and "sparse" options', code=67)

    def walk(value: Any) -> None:
        if isinstance(value, re.Pattern) or type(value).__name__ == "Regex":
            raise OperationFailure("unsupported expression in partial index: a regular expression", code=67)
        if isinstance(value, dict):
            for key, item in value.items():
                if key in ("$expr", "$regex", "$where", "$text"):
                    raise OperationFailure(f"unsupported expression in partial index: {key}", code=67)
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(partial)


class IndexDefinitions:
    """Engine mixin: build the index definitions above (see the module docstring)."""

    async def create_index(self, db_name: str, coll_name: str, keys: Any, **options: Any) -> str:
        """mongoeco's ``create_index``, for same-key twins and compound hashed indexes too."""
        from mongoeco.errors import OperationFailure

        _refuse_partial_filter(options.get("partial_filter_expression"), options.get("sparse"))
        _, default_index_name, normalize_index_keys, _ = engine_compat.index_helpers()
        normalized = normalize_index_keys(keys)
        hashed = [field for field, direction in normalized if direction == "hashed"]
        compound_hashed = bool(hashed) and len(normalized) > 1
        name = options.get("name") or default_index_name(normalized)
        context = options.get("context")
        partial = options.get("partial_filter_expression")  # mongoeco keeps it as given (a deep copy)
        existing = self._indexes_view(context).get(db_name, {}).get(coll_name, [])  # type: ignore[attr-defined]
        same_key = [r for r in existing if list(r.key) == list(normalized) and r.name != name]
        twin = bool(same_key) and all(_differs(r, options.get("collation"), partial) for r in same_key)
        if not (twin or compound_hashed) or any(r.name == name for r in existing):
            return str(await super().create_index(db_name, coll_name, keys, **options))  # type: ignore[misc]
        if len(hashed) > 1:
            raise OperationFailure("A maximum of one index field is allowed to be hashed", code=31303)
        if hashed and options.get("unique"):
            raise OperationFailure("Currently hashed indexes cannot guarantee uniqueness. Use a regular index.")
        if any(d not in (1, -1, "hashed") for _, d in normalized):
            return str(await super().create_index(db_name, coll_name, keys, **options))  # type: ignore[misc]
        stand_in = [(f, 1 if d == "hashed" else d) for f, d in normalized] + [(STAND_IN_FIELD + name, 1)]
        created = str(await super().create_index(db_name, coll_name, stand_in, **{**options, "name": name}))  # type: ignore[misc]
        async with self._get_lock(db_name, coll_name):  # type: ignore[attr-defined]
            records = self._indexes_view(context)[db_name][coll_name]  # type: ignore[attr-defined]
            index_maps = self._index_data_view(context).setdefault(db_name, {}).setdefault(coll_name, {})  # type: ignore[attr-defined]
            for position, record in enumerate(records):
                if record.name != created:
                    continue
                real = dataclasses.replace(record, key=deepcopy(normalized), fields=[f for f, _ in normalized])
                records[position] = real
                if hashed:
                    index_maps.pop(created, None)
                else:
                    self._rebuild_index_data_locked(  # type: ignore[attr-defined]
                        db_name,
                        coll_name,
                        real,
                        index_data_view=self._index_data_view(context),  # type: ignore[attr-defined]
                        storage_view=self._storage_view(context),  # type: ignore[attr-defined]
                    )
        return created

    async def drop_index(self, db_name: str, coll_name: str, index_or_name: Any, **options: Any) -> None:
        """mongoeco's ``drop_index``; a key pattern that names two twins is refused with MongoDB's code
        (AmbiguousIndexKeyPattern, 181: index_partial_create_drop.js)."""
        from mongoeco.errors import OperationFailure

        try:
            await super().drop_index(db_name, coll_name, index_or_name, **options)  # type: ignore[misc]
        except OperationFailure as error:
            if "multiple indexes found with key pattern" in str(error) and getattr(error, "code", None) != 181:
                raise OperationFailure(str(error).split(", full error")[0], code=181) from error
            raise


def as_listed_by_mongodb(index: Any) -> Any:
    """One ``listIndexes`` entry as MongoDB 7.0 lists it: ``v: 2``, the key and the name first, no ``ns``
    (MongoDB stopped listing it in 4.4) and ``unique`` only where it is true. mongoeco 4.11.0 writes
    ``unique: false`` on every index, ``unique: true`` on ``_id_`` (which MongoDB lists bare) and the
    namespace, so ``index_information()`` differed from MongoDB's on every index. Anything else is kept."""
    if not isinstance(index, dict) or "key" not in index or "name" not in index:
        return index
    listed = {"v": index.get("v", 2), "key": index["key"], "name": index["name"]}
    for field, value in index.items():
        bare = field == "unique" and (value is not True or index["name"] == "_id_")
        if not bare and field not in ("v", "key", "name", "ns"):
            listed[field] = value
    return listed


class ListedIndexes:
    """The ``listIndexes`` replies of one server in MongoDB's shape, its later batches (``getMore``) too."""

    def __init__(self) -> None:
        self._cursors: set[Any] = set()
        """Ids of ``listIndexes`` cursors still open (a small ``batchSize`` leaves one)."""

    def reply(self, command: str, body: Any, reply: dict[str, Any]) -> dict[str, Any]:
        """``reply`` to ``command`` with each listed index reshaped, if it lists indexes."""
        cursor = reply.get("cursor")
        if not isinstance(cursor, dict):
            return reply
        if command == "listIndexes":
            batch = "firstBatch"
        elif command == "getMore" and body.get("getMore") in self._cursors:
            batch = "nextBatch"
        else:
            return reply
        if cursor.get("id"):
            self._cursors.add(cursor["id"])
        else:
            self._cursors.discard(body.get("getMore"))
        listed = [as_listed_by_mongodb(index) for index in cursor.get(batch) or []]
        return {**reply, "cursor": {**cursor, batch: listed}}

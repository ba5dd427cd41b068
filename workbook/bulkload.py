"""First loads on the offline default without inserting document by document (like mongorestore).

A load's documents are checked and encoded here, then the engine's storage and index structures
are built in one pass (the same builders that restore snapshots, :mod:`workbook.snapshot`) and
installed into an empty collection whose validator and indexes were created through the wire.
Nothing is skipped that an insert checks: every document goes through the collection's validator
(the engine's own, compiled once; a fast pre-check for the simple ``$jsonSchema`` subset the
shapes use only ever says "valid" when sure, and sends every other document to the engine's),
``_id`` and unique-index duplicates are refused with E11000, ``_id`` types and nesting depth are
checked, and each document is stored in the engine's own encoded form. tests/test_bulkload.py
proves that, at ``tiny``, every dataset and shape ends in the same engine state as inserting
through the wire and building the indexes after.

Where this module computes something itself rather than call the engine (plain containers and
dates encoded in one pass, index keys of scalars and of one array of subdocuments, the fast
validator), every other case goes to the engine's own function, and the tests compare each fast
path with that function on odd values (numbers of every width, NaN, -0.0, dates with time zones,
ObjectIds, Decimal128, missing and null fields, nested and empty arrays).

Real MongoDB servers never come here: :mod:`workbook.loading` uses ``insert_many`` for them.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from bson import Decimal128, ObjectId

from workbook import engine_compat, snapshot
from workbook.errors import BulkLoadFallback
from workbook.facts import MAX_NESTING_DEPTH
from workbook.wire_form import INT32, INT64

_SCHEMA_KEYWORDS = frozenset(
    {"bsonType", "required", "properties", "items", "minItems", "maxItems", "minimum", "maximum",
     "minLength", "maxLength", "description", "title"}
)  # fmt: skip
"""``$jsonSchema`` keywords the fast pre-check understands; any other sends every document to the engine."""

ValueCheck = Callable[[Any], bool]


INSTALLED: dict[tuple[str, str], object] = {}
"""The contents' version of each collection the bulk loader last installed, by (database, collection)."""


NotBulkLoadable = BulkLoadFallback
"""Raised for a collection that needs the document-by-document path (an index kind not built here)."""
_Unusual = BulkLoadFallback
"""Raised inside the encoder for a document the engine's own encoder must take."""


# --- validation: the engine's validator, with a conservative fast pre-check ------------------------------


_NAMED_TYPES = {
    "string": "str", "object": "dict", "array": "list", "double": "float", "bool": "bool",
    "date": "datetime", "decimal": "Decimal128", "objectId": "ObjectId", "null": "NoneType",
}  # fmt: skip
_INT_RANGES = {"int": (INT32,), "long": ((INT64[0], INT32[0] - 1), (INT32[1] + 1, INT64[1]))}
_NAMESPACE = {
    "str": str, "dict": dict, "list": list, "float": float, "bool": bool, "int": int, "type": type, "len": len,
    "all": all, "datetime": datetime.datetime, "Decimal128": Decimal128, "ObjectId": ObjectId,
    "NoneType": type(None), "MISSING": object(),
}  # fmt: skip


class _Source:
    """Fresh variable names for the generated check."""

    def __init__(self) -> None:
        self.count = 0

    def name(self) -> str:
        self.count += 1
        return f"v{self.count}"


def _type_expression(names: Sequence[str], var: str) -> str | None:
    """Python for "``var`` has one of the BSON types ``names``", or None if a name is not handled here."""
    exact: list[str] = []
    ranges: list[tuple[int, int]] = []
    for name in names:
        if name in _NAMED_TYPES:
            exact.append(_NAMED_TYPES[name])
        elif name in _INT_RANGES:
            ranges.extend(_INT_RANGES[name])
        else:
            return None  # aliases ("number") and rarer types: the engine decides
    parts = []
    if exact:
        parts.append(f"type({var}) in ({', '.join(exact)},)")
    if ranges:
        bounds = " or ".join(f"{low} <= {var} <= {high}" for low, high in ranges)
        parts.append(f"(type({var}) is int and ({bounds}))")
    return "(" + " or ".join(parts) + ")" if parts else "False"


def _expression(schema: Any, var: str, names: _Source) -> str | None:
    """Python that is True only when ``var`` surely satisfies ``schema``; None if it uses other keywords."""
    if not isinstance(schema, dict) or not set(schema) <= _SCHEMA_KEYWORDS:
        return None
    checks: list[str] = []
    if "bsonType" in schema:
        types = schema["bsonType"]
        typed = _type_expression([types] if isinstance(types, str) else list(types), var)
        if typed is None:
            return None
        checks.append(typed)
    for keyword, operator in (("minimum", ">="), ("maximum", "<=")):
        if keyword in schema:
            bound = schema[keyword]
            if type(bound) not in (int, float) or bound != bound:
                return None
            checks.append(f"(type({var}) in (int, float) and {var} == {var} and {var} {operator} {bound!r})")
    for keyword, kind, operator in (
        ("minLength", "str", ">="), ("maxLength", "str", "<="), ("minItems", "list", ">="), ("maxItems", "list", "<="),
    ):  # fmt: skip
        if keyword in schema:
            size = schema[keyword]
            if type(size) is not int:
                return None
            checks.append(f"(type({var}) is {kind} and len({var}) {operator} {size})")
    required = schema.get("required", [])
    properties = schema.get("properties") or {}
    if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
        return None
    if required or properties:
        checks.append(f"type({var}) is dict")
        checks.extend(f"{name!r} in {var}" for name in required)
        for name, sub in properties.items():
            inner = names.name()
            body = _expression(sub, inner, names)
            if body is None or not isinstance(name, str):
                return None
            checks.append(f"(({inner} := {var}.get({name!r}, MISSING)) is MISSING or {body})")
    if "items" in schema:
        element = names.name()
        body = _expression(schema["items"], element, names)
        if body is None:
            return None
        checks.append(f"(type({var}) is list and all({body} for {element} in {var}))")
    return "(" + " and ".join(checks) + ")" if checks else "True"


def _compile(schema: Any) -> ValueCheck | None:
    """A function True only for documents sure to satisfy ``schema`` (None if it uses other keywords)."""
    expression = _expression(schema, "document", _Source())
    if expression is None:
        return None
    check: ValueCheck = eval(f"lambda document: {expression}", dict(_NAMESPACE))  # noqa: S307 - our own generated code
    return check


def fast_validator(options: Mapping[str, Any] | None) -> ValueCheck | None:
    """The fast pre-check for a collection's options: only a plain ``$jsonSchema`` validator; else None."""
    if not options or set(options) != {"validator"}:
        return None
    validator = options["validator"]
    if not isinstance(validator, dict) or set(validator) != {"$jsonSchema"}:
        return None
    return _compile(validator["$jsonSchema"])


def validator_for(options: Mapping[str, Any] | None) -> Callable[[Mapping[str, Any]], None]:
    """A function that raises the engine's own validation error for a document the collection refuses."""
    compiled = engine_compat.compile_validator(options)
    if compiled is None:
        return lambda document: None
    fast = fast_validator(options)

    def validate(document: Mapping[str, Any]) -> None:
        if fast is not None and fast(document):
            return
        if not engine_compat.validates(compiled, document):
            engine_compat.enforce_validation(document, options)  # the engine's error, exactly

    return validate


# --- encoding: the engine's stored form in one pass ------------------------------------------------------


def encoder(engine: Any) -> Callable[[Mapping[str, Any]], Any]:
    """A function from a document to the engine's stored payload (its codec's, for every value it cannot copy).

    The codec revalidates the whole subtree at every level (quadratic in depth); this walks each
    value once, copies plain containers and JSON scalars (as the codec returns them) and hands any
    other value (dates, ObjectIds, Decimal128...) to the codec itself.
    """
    codec = engine_compat.document_codec()
    if not engine_compat.uses_codec(engine, codec):
        return lambda document: engine_compat.stored_payload(engine, document)
    scalar, marker = codec.encode, engine_compat.CODEC_MARKER
    low, high = INT64
    a_datetime, stored_datetime = datetime.datetime, engine_compat.datetime_payload()

    def encode(value: Any, depth: int) -> Any:
        kind = type(value)
        if kind is str or kind is float or kind is bool or value is None:
            return value
        if kind is int:
            return value if low <= value <= high else scalar(value)  # the codec raises the overflow
        if kind is dict:
            if depth > MAX_NESTING_DEPTH or marker in value:
                raise _Unusual
            out = {}
            for key, item in value.items():
                if type(key) is not str:
                    raise _Unusual
                inner = type(item)
                if inner is str or inner is float or inner is bool or item is None:
                    out[key] = item  # the common scalars inline: no call per value
                else:
                    out[key] = encode(item, depth + 1)
            return out
        if kind is list:
            if depth > MAX_NESTING_DEPTH:
                raise _Unusual
            return [item if type(item) is str or type(item) is float else encode(item, depth + 1) for item in value]
        if kind is a_datetime:
            return stored_datetime(value)
        if kind is tuple:
            raise _Unusual
        return scalar(value)

    def encode_document(document: Mapping[str, Any]) -> Any:
        try:
            return encode(document, 1)
        except _Unusual:  # deep, tuples, odd keys or a reserved marker: the engine's own path and errors
            return engine_compat.stored_payload(engine, document)

    return encode_document


def _duplicate_id(db_name: str, coll_name: str, identifier: Any) -> Exception:
    """E11000 for a repeated ``_id``, worded as the engine-direct path words it."""
    from mongoeco.errors import WriteError

    return WriteError(
        f"E11000 duplicate key error collection: {db_name}.{coll_name} index: _id_ dup key: {{ _id: {identifier!r} }}",
        code=11000,
    )


# --- the collection: storage and indexes built in one pass ---------------------------------------------------


def build(
    engine: Any,
    db_name: str,
    coll_name: str,
    documents: Sequence[Mapping[str, Any]],
    options: Mapping[str, Any] | None,
    records: Sequence[Any],
) -> tuple[Any, dict[str, Any]]:
    """ValueCheck and encode ``documents``; return the engine's collection and index maps holding them.

    ``options`` and ``records`` are the collection's options and index records as the engine holds
    them (read from the empty collection). Raises the engine's errors: validation (121), bad
    ``_id`` (53), duplicate key (11000), nesting depth, index shape.
    """
    for record in records:
        if not engine_compat.plain_index(record):
            raise NotBulkLoadable(f"index {record.name} is not a plain ascending/descending index")
    validate = validator_for(options)
    encode = encoder(engine)
    storage_key = engine_compat.storage_key_function(engine)
    rows: list[tuple[Any, Any]] = []
    seen: set[Any] = set()
    numeric_seen: set[Any] = set()
    for document in documents:
        identifier = document["_id"]
        engine_compat.check_root_id(identifier)
        validate(document)
        key = storage_key(identifier)
        duplicate = key in seen
        if not duplicate and engine_compat.id_contains_numeric_value(identifier):
            equality = engine_compat.bson_equality_key(identifier)
            duplicate = equality in numeric_seen
            numeric_seen.add(equality)
        if duplicate:
            raise _duplicate_id(db_name, coll_name, identifier)
        seen.add(key)
        rows.append((key, encode(document)))
    shared = engine_compat.stores_with_document_codec(engine)  # then the engine can read them as they are
    collection = snapshot._rebuild_collection(rows, documents if shared else None)
    indexes, plain = _build_indexes(engine, db_name, coll_name, rows, records)
    snapshot.BUILT[id(collection._values)] = (
        collection._values,  # held, so the id stays this map's
        rows,
        {name: (index.pending, plain[name]) for name, index in indexes.items()},
        documents,  # each payload is encode(this document): a snapshot file can derive them again
    )
    return collection, indexes


def _build_indexes(
    engine: Any, db_name: str, coll_name: str, rows: list[tuple[Any, Any]], records: Sequence[Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Each index's map over ``rows`` (storage key, payload), with the engine's keys and unique checks."""
    from workbook.offline_limits import parallel_arrays_error

    if not records:
        return {}, {}
    paths = [tuple(field.split(".")) for record in records for field in record.fields]
    if any(part.isdigit() for path in paths for part in path):  # positional paths: keep whole top fields
        paths = [path[:1] for path in paths]
    decode = engine_compat.decoder(engine)
    projected, with_arrays = [], []
    tree = _path_tree(paths)
    for _, payload in rows:
        found: list[str] = []
        pruned = _prune(payload, tree, engine_compat.CODEC_MARKER, found)
        projected.append(decode(pruned) if "tagged" in found else pruned)  # plain JSON decodes to itself
        with_arrays.append("array" in found)
    equality = _EqualityKeys(engine_compat.bson_equality_key)
    all_paths = list(dict.fromkeys(tuple(field.split(".")) for record in records for field in record.fields))
    scalar_keys = [equality.paths(document, all_paths) for document in projected]
    regular = [equality.plain(found) for found in scalar_keys]
    arrays = [document for document, has in zip(projected, with_arrays, strict=True) if has]
    built: dict[str, Any] = {}
    plain: dict[str, Any] = {}
    for record in records:
        fields = list(record.fields)
        if len(fields) > 1:  # both limits are about two arrays on the paths: documents without any pass
            error = parallel_arrays_error(arrays, fields)
            if error is not None:
                from mongoeco.errors import OperationFailure

                raise OperationFailure(error[1], code=error[0])
            for document in arrays:
                engine_compat.check_compound_shape(engine, document, record)
        buckets: dict[Any, list[tuple[int, Any]]] = {}
        unique: set[Any] = set()
        split = [tuple(field.split(".")) for field in fields]
        only = split[0] if len(split) == 1 else None
        rows_found = zip(rows, projected, scalar_keys, regular, strict=True)
        for ordinal, ((key, _), document, paths_found, plain_paths) in enumerate(rows_found):
            if plain_paths:  # a scalar on every path (most documents): its one key, for both checks, no sets
                index_key = (paths_found[only],) if only is not None else tuple(map(paths_found.__getitem__, split))
                keys: Collection[Any] = (index_key,)
                document_keys: Collection[Any] = keys
            elif (both := equality.keys(paths_found, split)) is not None:
                keys, document_keys = both
            else:  # arrays the fast rules do not cover: the engine's own key functions
                keys = document_keys = engine_compat.index_keys(engine, document, fields)
                if record.unique and len(fields) > 1:
                    document_keys = engine_compat.unique_index_keys(engine, document, fields)
            if record.unique:
                for taken in document_keys:
                    if taken in unique:
                        raise engine_compat.index_duplicate_error(
                            f"{db_name}.{coll_name}", record, decode(rows[ordinal][1]), taken
                        )
                unique.update(document_keys)
            for index_key in keys:
                bucket = buckets.get(index_key)
                if bucket is None:
                    buckets[index_key] = [(ordinal, key)]
                else:
                    bucket.append((ordinal, key))
        plain[record.name] = (len(rows), list(buckets.items()))
        built[record.name] = snapshot._rebuild_index(plain[record.name])
    return built, plain


_ABSENT = object()
_ENGINE = object()


class _Multi:
    """The equality keys of one path through an array of subdocuments (a multikey index's keys)."""

    __slots__ = ("keys",)

    def __init__(self, keys: Any) -> None:
        self.keys = keys


_MEMO_TYPES = frozenset({str, int, datetime.datetime, ObjectId})
"""Scalar types whose equality key depends on the value alone (floats left out: -0.0 equals 0.0)."""


class _EqualityKeys:
    """BSON equality keys of one document's index paths (no array on any), each path computed once."""

    def __init__(self, equality: Callable[[Any], Any]) -> None:
        self.equality = equality
        self.memo: dict[tuple[type, Any], Any] = {}
        self.null = equality(None)

    def of(self, value: Any) -> Any:
        """The equality key of ``value`` (memoised for scalars that repeat: ids, names, dates)."""
        kind = type(value)
        if kind not in _MEMO_TYPES:
            return self.equality(value)
        memo_key = (kind, value)
        found = self.memo.get(memo_key, _ABSENT)
        if found is _ABSENT:
            found = self.memo[memo_key] = self.equality(value)
        return found

    def paths(self, document: Mapping[str, Any], paths: Sequence[tuple[str, ...]]) -> dict[tuple[str, ...], Any]:
        """Each path's equality key; ``_ABSENT`` when missing; a ``_Multi`` of keys through one array of
        subdocuments that all hold the last field as a scalar; ``_ENGINE`` for any other array."""
        found = {}
        for path in paths:
            value: Any = document
            for position, part in enumerate(path):
                kind = type(value)
                if kind is dict:
                    value = value.get(part, _ABSENT)
                    if value is _ABSENT:
                        break
                    continue
                if kind is list and value and position == len(path) - 1:
                    value = _Multi(self._through(value, part))
                else:
                    value = _ENGINE if kind is list else _ABSENT
                break
            if type(value) is list:
                value = _ENGINE  # an array at the path's end: the engine's rules
            found[path] = value if value is _ABSENT or value is _ENGINE or type(value) is _Multi else self.of(value)
        return found

    @staticmethod
    def plain(found: Mapping[tuple[str, ...], Any]) -> bool:
        """Whether every path of :meth:`paths` found a scalar: the document's key in any index over them is those
        keys in the index's order, the same for the unique check (no missing field, no array)."""
        return all(
            value is not _ABSENT and value is not _ENGINE and type(value) is not _Multi for value in found.values()
        )

    def _through(self, elements: list[Any], part: str) -> Any:
        """The keys of ``part`` in every element, if each is a subdocument holding it as a scalar, else _ENGINE."""
        keys = set()
        for element in elements:
            if type(element) is not dict or part not in element:
                return _ENGINE
            value = element[part]
            if type(value) is list or type(value) is dict:
                return _ENGINE
            keys.add(self.of(value))
        return keys

    def keys(
        self, found: Mapping[tuple[str, ...], Any], paths: list[tuple[str, ...]]
    ) -> tuple[set[Any], set[Any]] | None:
        """The index keys and unique-index keys over ``paths``, by the engine's rules (None: ask the engine).

        A missing value is ``None`` in the index key (the engine's ``_index_key``), and the key of
        null in a compound unique check (its ``_unique_index_keys``); tests/test_bulkload.py
        compares both with the engine's functions.
        """
        values = [found[path] for path in paths]
        if any(value is _ENGINE or (type(value) is _Multi and value.keys is _ENGINE) for value in values):
            return None
        if len(paths) == 1:
            only = values[0]
            multi = type(only) is _Multi
            keys = {(key,) for key in only.keys} if multi else {(None if only is _ABSENT else only,)}
            return keys, keys
        if any(type(value) is _Multi for value in values):
            return None  # compound multikey: the engine's rules
        index_key = tuple(None if value is _ABSENT else value for value in values)
        unique_key = tuple(self.null if value is _ABSENT else value for value in values)
        return {index_key}, {unique_key}


_PathTree = tuple[bool, dict[str, "_PathTree"]]
"""Index paths as a tree: whether a path ends here, and the tree below each next field."""


def _path_tree(paths: Sequence[tuple[str, ...]]) -> _PathTree:
    """``paths`` as a :data:`_PathTree` (made once per collection, not per document and level)."""
    heads: dict[str, list[tuple[str, ...]]] = {}
    for path in paths:
        if path:
            heads.setdefault(path[0], []).append(path[1:])
    return () in paths, {head: _path_tree(tails) for head, tails in heads.items()}


def _prune(value: Any, tree: _PathTree, marker: str, found: list[str]) -> Any:
    """``value`` (a stored payload) keeping only what lies on the paths of ``tree``: the index keys are unchanged.

    Arrays along a path keep every element (scalars too) and their order; values at a path's end
    are kept whole; tagged codec values are never split. ``found`` gets "tagged" when what is kept
    may hold a tagged value (then it must be decoded; plain JSON values decode to themselves) and
    "array" when an array lies on a path. (Grouping the paths by their first field for every document and
    level was a seventh of a first load of parts/referenced.)
    """
    ends, below = tree
    kind = type(value)
    if ends:
        if kind is list or (kind is dict and marker not in value):
            found.append("array")  # perhaps: arrays inside count for the compound checks
        if kind is list or kind is dict:
            found.append("tagged")
        return value
    if kind is list:
        found.append("array")
        return [_prune(element, tree, marker, found) for element in value]
    if kind is not dict:
        return value
    if marker in value:
        found.append("tagged")
        return value
    kept = {}
    for head, subtree in below.items():
        if head in value:
            child = value[head]
            plain = type(child) is not dict and type(child) is not list
            kept[head] = child if plain else _prune(child, subtree, marker, found)  # scalars: no call
    return kept


def install_documents(db_name: str, coll_name: str, documents: Sequence[Mapping[str, Any]]) -> int:
    """ValueCheck, encode and install ``documents`` into the empty collection ``db_name.coll_name``; the count.

    The installed contents' version (what :mod:`workbook.sizes` keys on) is left in :data:`INSTALLED`.

    The collection (validator, indexes) must exist and be empty; the work runs on the calling
    thread, only the final swap on the engine's, under the collection's lock.
    """
    from workbook.offline import WRITE_LISTENERS, offline_server
    from workbook.offline_explain import hook_for

    server = offline_server()
    engine = server.engine
    options, records = server.run(engine_compat.collection_state(engine, db_name, coll_name))
    if not documents:
        return 0
    collection, indexes = build(engine, db_name, coll_name, documents, options, records)
    writes = hook_for(engine).writes
    writes.bump(db_name, coll_name)
    try:
        server.run(engine_compat.swap_in(engine, db_name, coll_name, collection, indexes, records))
    finally:
        writes.bump(db_name, coll_name)
    for listener in WRITE_LISTENERS:
        listener("insert", db_name, coll_name)
    INSTALLED[(db_name, coll_name)] = collection._values
    return len(documents)

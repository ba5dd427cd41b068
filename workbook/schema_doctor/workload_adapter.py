"""The one place the doctor depends on how the course declares workloads and operations.

A workload reaches the doctor as a list of :class:`HotOperation` (a name, a rate, and a call that
reads). Learners' own applications pass such a list; for the course's datasets
:func:`course_hot_operations` builds it from ``workbook.workload`` and the shape's operations class.
When the API around "dataset X in shape Y in this database" changes, only this module moves.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from pymongo.database import Database

from workbook.errors import UnknownChoiceError, WorkbookError
from workbook.schema_doctor.readonly import ReadOnlyDatabase


@dataclass(frozen=True)
class HotOperation:
    """One operation of a workload: ``call(db, i)`` performs its ``i``-th sample call against ``db``."""

    name: str
    per_second: float
    call: Callable[[Any, int], Any]
    kind: Literal["read", "write"] = "read"


def course_hot_operations(
    target: Any, db: ReadOnlyDatabase, workload: Any, shape: str | None, calls: int
) -> list[HotOperation]:
    """The workload's read operations, most frequent first, with arguments drawn before anything is observed.

    ``workload`` is None (then the dataset of a handle such as ``load()``'s result, or of the
    database's load record, if there is one), a course dataset name, a ``Workload``, or a list of
    :class:`HotOperation`.
    """
    handle = None if isinstance(target, Database) else target  # a Database answers any attribute with a collection
    if workload is None:
        dataset = _name(getattr(handle, "dataset", None)) or _recorded(db).get("dataset")
        if not isinstance(dataset, str):
            return []
        workload = dataset
    if isinstance(workload, Sequence) and not isinstance(workload, str):
        operations = list(workload)
        for op in operations:
            if not isinstance(op, HotOperation):
                raise WorkbookError(
                    f"A workload list must hold HotOperation values, not {type(op).__name__}.",
                    fix="HotOperation('login', 50, lambda db, i: db.users.find_one({'email': ...}))",
                )
        return sorted(operations, key=lambda op: -op.per_second)
    dataset = _name(getattr(workload, "dataset", workload))
    if not isinstance(dataset, str):
        raise WorkbookError(
            f"workload must be a dataset name, a Workload or a list of HotOperation, not {type(workload).__name__}.",
            fix='Pass e.g. workload="store".',
        )
    return _course_operations(db, dataset, shape or _name(getattr(handle, "shape", None)), calls)


def _recorded(db: ReadOnlyDatabase) -> dict[str, Any]:
    """The database's record of a finished ``workbook.load()`` (dataset, shape, ...), or an empty dict."""
    from workbook.loaded import MARKER_COLLECTION

    record = db[MARKER_COLLECTION].find_one({"_id": "load"}) or {}
    return record if record.get("state") == "complete" else {}


def _name(value: Any) -> str | None:
    """A name from a string or from an object with a ``name`` (a Dataset, a ShapeSpec)."""
    if value is None or isinstance(value, str):
        return value
    name = getattr(value, "name", None)
    return name if isinstance(name, str) else None


def _course_operations(db: ReadOnlyDatabase, dataset: str, shape: str | None, calls: int) -> list[HotOperation]:
    from workbook.dataset_parts import dataset_parts
    from workbook.shapes import SHAPE_NAMES

    registered = dataset_parts(dataset)
    table = registered.workload()
    shape = shape or infer_shape(db, dataset)
    if shape not in SHAPE_NAMES:
        raise UnknownChoiceError("shape", shape, SHAPE_NAMES)
    # The class, not workbook.dataset_parts.operations(): that one insists on a pymongo Database.
    operations = registered.operations()[shape](cast(Any, db))
    pools = _BoundedPools(db)
    hot = []
    for spec in sorted(table.operations, key=lambda op: -op.per_second):
        if spec.kind != "read":
            continue  # the doctor is read-only: writes are never run
        arguments = [spec.arguments(cast(Any, pools), random.Random(f"doctor:{spec.name}:{i}")) for i in range(calls)]

        def call(_db: Any, i: int, name: str = spec.name, arguments: list[Any] = arguments) -> Any:
            args, kwargs = arguments[i % len(arguments)]
            return operations.run(name, *args, **kwargs)

        hot.append(HotOperation(f"{dataset}.{spec.name}", spec.per_second, call, "read"))
    return hot


def infer_shape(db: ReadOnlyDatabase, dataset: str) -> str:
    """Which of the dataset's shapes ``db`` holds: its load record, its name, else its first collection's validator."""
    from workbook.dataset_parts import shape_spec
    from workbook.shapes import SHAPE_NAMES

    record = _recorded(db)
    if record.get("dataset") == dataset and record.get("shape") in SHAPE_NAMES:
        return str(record["shape"])
    for shape in SHAPE_NAMES:
        if db.name.endswith(f"_{dataset}_{shape}") or db.name == f"{dataset}_{shape}":
            return shape
    declared = {c["name"]: c.get("options", {}).get("validator") for c in db.list_collections()}
    matches = []
    for shape in SHAPE_NAMES:
        first = shape_spec(dataset, shape).collections[0]
        actual = declared.get(first.name)
        if (
            first.validator is not None
            and isinstance(actual, dict)
            and _properties(actual) == _properties(first.validator)
        ):
            matches.append(shape)
    if len(matches) == 1:
        return matches[0]
    raise WorkbookError(
        f"Cannot tell which {dataset} shape database {db.name} holds.",
        fix=f"Pass shape= one of {', '.join(SHAPE_NAMES)}.",
    )


def _properties(validator: dict[str, Any]) -> set[str]:
    return set(validator.get("$jsonSchema", {}).get("properties", {}))


class _BoundedPools:
    """Argument pools read with a bound (the first ``limit`` documents), never by scanning a collection."""

    def __init__(self, db: ReadOnlyDatabase, limit: int = 200) -> None:
        self.db = db
        self.limit = limit
        self._cache: dict[tuple[str, str], list[Any]] = {}

    def ids(self, collection: str, field: str = "_id") -> list[Any]:
        """Distinct values of ``field`` among the first ``limit`` documents."""
        key = (collection, field)
        if key not in self._cache:
            rows = self.db[collection].aggregate(
                [{"$limit": self.limit}, {"$project": {"v": f"${field}"}}, {"$unwind": "$v"}]
            )
            self._cache[key] = sorted({row["v"] for row in rows if row.get("v") is not None}, key=str)
        return self._cache[key]

    def pick(self, rng: random.Random, collection: str, field: str = "_id") -> Any:
        """One value, uniformly."""
        values = self.ids(collection, field)
        if not values:
            raise WorkbookError(f"No {collection}.{field} values to draw arguments from (is {collection} empty?).")
        return values[rng.randrange(len(values))]

    def popular_product(self, rng: random.Random) -> Any:
        """A product (uniformly: popularity would need a scan of every review)."""
        return self.pick(rng, "products")

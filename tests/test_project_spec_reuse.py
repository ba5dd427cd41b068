"""``$project`` on the offline default reads each spec once (workbook/engine_aggregation.py ``prepared``):
mongoeco's compiled pipelines call the stage once per document with the same spec object. A spec read before
answers as it did; a spec changed in place, or another spec at all, is read again."""

from __future__ import annotations

from typing import Any

import pytest
from pymongo.database import Database

from workbook.engine_aggregation import install_object_expression_missing


def _apply_project() -> Any:
    from mongoeco.core.aggregation import transform_stages

    from workbook.offline import offline_server

    offline_server()  # the engine's fixes are installed with the server
    install_object_expression_missing()
    return transform_stages._apply_project


def test_a_spec_changed_in_place_is_read_again() -> None:
    apply_project = _apply_project()
    documents = [{"_id": 1, "a": 1, "b": [1, 2, 3]}, {"_id": 2, "a": 2, "b": []}]
    spec: dict[str, Any] = {"a": 1}
    assert apply_project(documents, spec) == [{"_id": 1, "a": 1}, {"_id": 2, "a": 2}]
    assert apply_project(documents, spec) == [{"_id": 1, "a": 1}, {"_id": 2, "a": 2}]  # read before
    spec["n"] = {"$size": "$b"}
    assert apply_project(documents, spec) == [{"_id": 1, "a": 1, "n": 3}, {"_id": 2, "a": 2, "n": 0}]
    spec.clear()
    spec.update({"a": 0})  # now an exclusion
    assert apply_project(documents, spec) == [{"_id": 1, "b": [1, 2, 3]}, {"_id": 2, "b": []}]
    with pytest.raises(Exception, match="(?i)exclusion|inclusion|cannot"):
        spec["b"] = 1  # mixed inclusion and exclusion: refused, as the first time
        apply_project(documents, spec)


def test_many_specs_in_turn_each_answer_their_own(db: Database) -> None:
    """More specs than the reader keeps (it starts again), each over a pipeline the engine compiles."""
    db.items.insert_many([{"_id": i, "a": i, "b": list(range(i % 5))} for i in range(30)])
    for round_ in range(2):
        for width in range(300):
            pipeline = [{"$match": {"_id": {"$lt": 3}}}, {"$project": {"n": {"$add": [{"$size": "$b"}, width]}}}]
            got = list(db.items.aggregate(pipeline))
            assert got == [{"_id": i, "n": i % 5 + width} for i in range(3)], (round_, width)

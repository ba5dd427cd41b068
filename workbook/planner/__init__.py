"""A model of MongoDB's query planner, run on real documents and real index lists.

The offline default engine's own explain is not MongoDB's, so the workbench models MongoDB's
planner instead: index bounds, the index walk (keysExamined counted as IXSCAN counts it), covered
queries, blocking sorts, the multi-planner race, OR plans, collation and multikey rules. Every
figure comes from walking the modelled index keys and fetching the documents, never from an estimate.
:mod:`workbook.planner.reading` reads any explain (modelled or a server's).

Nothing is computed at import; each entry point is a pure function of its arguments.
"""

from __future__ import annotations

from workbook.planner.aggregate import explain_aggregate
from workbook.planner.explain import explain_find, explain_find_args, find_documents, find_records
from workbook.planner.labels import MODELLED_BY, MODELLED_FIELD, MODELLED_LABEL
from workbook.planner.plans import CollectionModel
from workbook.planner.query import FindArgs
from workbook.planner.reading import summarize

__all__ = [
    "MODELLED_BY",
    "MODELLED_FIELD",
    "MODELLED_LABEL",
    "CollectionModel",
    "FindArgs",
    "explain_aggregate",
    "explain_find",
    "explain_find_args",
    "find_documents",
    "find_records",
    "summarize",
]

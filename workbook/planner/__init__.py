"""A model of MongoDB's query planner, run on real documents and real index lists.

The offline default engine's own explain is not MongoDB's, so the workbench models MongoDB's
planner instead: index bounds, the index walk (keysExamined counted as IXSCAN counts it), covered
queries, blocking sorts, the multi-planner race, collation and multikey rules. Every figure comes
from walking the modelled index keys and fetching the documents, never from an estimate.

Nothing is computed at import; each entry point is a pure function of its arguments.
"""

from __future__ import annotations

from workbook.planner.aggregate import explain_aggregate
from workbook.planner.explain import MODELLED_BY, explain_find
from workbook.planner.plans import Collection
from workbook.planner.summary import summarize
from workbook.planner.unsupported import UnknownHint, UnsupportedByModel

__all__ = [
    "MODELLED_BY",
    "Collection",
    "UnknownHint",
    "UnsupportedByModel",
    "explain_aggregate",
    "explain_find",
    "summarize",
]

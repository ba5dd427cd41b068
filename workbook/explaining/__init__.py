"""Explain: what the database did to answer a query, in MongoDB's shape on every engine.

- :mod:`~workbook.explaining.view`: :func:`explain`, :func:`explain_aggregate` and :class:`Explain`,
  the learner's view of the database's own explain reply;
- :mod:`~workbook.explaining.work`: keys and documents examined by measured calls.

The engine's side lives below this package, so the offline server never imports the learner's view
(which imports :mod:`workbook.connection`, which starts that server): :mod:`workbook.offline_explain`
(the offline server's native explain), :mod:`workbook.explain_model` (explain commands answered by
the planner model on any data) and :mod:`workbook.explain_cache` (the model cache and its write counter).

Reading an explain (stage names, the plan walk, SBE and ``$cursor`` unwrapping, the summary) is
:mod:`workbook.planner.reading`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from workbook.errors import ExplainError

if TYPE_CHECKING:
    from workbook.explain_draw import draw_plan
    from workbook.explaining.view import Explain, explain, explain_aggregate, explain_command
    from workbook.planner.reading import normalise_server_explain, summarize

_LAZY = {
    "draw_plan": "workbook.explain_draw",
    "Explain": "workbook.explaining.view",
    "explain": "workbook.explaining.view",
    "explain_aggregate": "workbook.explaining.view",
    "explain_command": "workbook.explaining.view",
    "normalise_server_explain": "workbook.planner.reading",
    "summarize": "workbook.planner.reading",
}
"""Imported on first use: the offline server imports :mod:`~workbook.explaining.native` at its start,
which runs this package first, and needs neither the drawing nor the learner's view (nor the
connection module the view imports)."""


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Explain",
    "ExplainError",
    "draw_plan",
    "explain",
    "explain_aggregate",
    "explain_command",
    "normalise_server_explain",
    "summarize",
]

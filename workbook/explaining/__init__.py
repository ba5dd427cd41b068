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

from workbook.errors import ExplainError
from workbook.explain_draw import draw_plan
from workbook.explaining.view import Explain, explain, explain_aggregate, explain_command
from workbook.planner.reading import normalise_server_explain, summarize

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

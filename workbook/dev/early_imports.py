"""pytest plugin, loaded first (``-p workbook.dev.early_imports`` in pyproject.toml): jsonschema without its
RFC 3987 grammar in the test process.

nbval imports nbformat, whose validator imports jsonschema, whose ``iri`` format check imports
``rfc3987_syntax``, which builds its Lark grammar at import: 0.95 s of the 2.2 s a ``pytest`` run took
to collect one notebook (``python -X importtime``, 2026-12-06), paid by every pytest process, so by
each notebook that the benchmark times (:func:`workbook.dev.bench.bench_notebooks`) and by CI. A
learner's Jupyter server imports it once, not per notebook, and a kernel never does
(:mod:`workbook.lazy_imports`). ``-p`` plugins are imported before the ones installed packages
register (nbval among them), so this runs first; an ``iri`` check still works, importing the grammar then.
"""

from __future__ import annotations

from workbook.lazy_imports import defer_iri_grammar

defer_iri_grammar()

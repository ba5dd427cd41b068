"""Maintainer tools, apart from the learner's API: nothing in a notebook imports these.

- :mod:`~workbook.dev.bench`: ``python -m workbook bench``, the course's speed goals measured on this machine;
- :mod:`~workbook.dev.differential`: ``python -m workbook diffcheck``, the planner model against a real server;
- :mod:`~workbook.dev.conformance` (with its pytest plugin): ``python -m workbook conformance``, pymongo's
  own CRUD-level tests against the offline default.
"""

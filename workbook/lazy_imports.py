"""Imports that cost seconds and are rarely needed, deferred until they are.

``jsonschema`` (imported by mongoeco's engine through ``cxp.exchange``, and by the quiz for its
bank and progress files) imports ``rfc3987_syntax`` to check the ``iri`` format, and
``rfc3987_syntax`` builds a Lark Earley parser for the whole RFC 3987 grammar at import: 1.36 s of
the 2.0 s ``python -X importtime`` gave for starting the offline engine (mongoeco 4.11.0,
jsonschema 4.26.0, rfc3987_syntax 1.1.0). Nothing in the course validates an IRI.

:func:`defer_iri_grammar` imports ``jsonschema`` with a stand-in ``rfc3987_syntax`` whose
``is_valid_syntax`` imports the real one on its first call, then takes the stand-in out of
``sys.modules``: an ``iri`` check still works (it pays the 1.4 s then), and ``import rfc3987_syntax``
anywhere later gets the real module. Call it before anything imports ``jsonschema`` or mongoeco.

``isoduration`` (jsonschema's ``duration`` format, 0.09-0.11 s of a start under ``-X importtime``,
almost all of it ``arrow`` and its locales) is deferred the same way: its stand-in's
``parse_duration`` imports the real one on first use, and its ``DurationParsingException`` is
``ValueError``, the real exception's base, so jsonschema still reads a bad duration as a format error.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from typing import Any

IRI_GRAMMAR = "rfc3987_syntax"
"""The module whose import builds the grammar: deferred."""

DURATIONS = "isoduration"
"""jsonschema's ``duration`` format library (it imports ``arrow``): deferred."""

_lock = threading.Lock()


def _stand_in() -> types.ModuleType:
    """A module with the one function jsonschema imports from ``rfc3987_syntax``, loading the real one on use."""
    stand_in = types.ModuleType(IRI_GRAMMAR, "Stand-in: the real rfc3987_syntax is imported on first use.")

    def is_valid_syntax(term: str, value: str) -> Any:
        if sys.modules.get(IRI_GRAMMAR) is stand_in:  # still being imported with the stand-in: leave it
            del sys.modules[IRI_GRAMMAR]
        return importlib.import_module(IRI_GRAMMAR).is_valid_syntax(term, value)

    stand_in.is_valid_syntax = is_valid_syntax  # type: ignore[attr-defined]
    return stand_in


def _durations_stand_in() -> types.ModuleType:
    """A module with the two names jsonschema takes from ``isoduration``, loading the real one on use."""
    stand_in = types.ModuleType(DURATIONS, "Stand-in: the real isoduration is imported on first use.")

    def parse_duration(value: str) -> Any:
        if sys.modules.get(DURATIONS) is stand_in:
            del sys.modules[DURATIONS]
        return importlib.import_module(DURATIONS).parse_duration(value)

    stand_in.parse_duration = parse_duration  # type: ignore[attr-defined]
    stand_in.DurationParsingException = ValueError  # type: ignore[attr-defined]  # the real one's base
    return stand_in


def defer_iri_grammar() -> None:
    """Import ``jsonschema`` without building the RFC 3987 grammar or importing ``isoduration`` (a no-op
    once jsonschema is imported)."""
    if "jsonschema" in sys.modules or IRI_GRAMMAR in sys.modules:
        return
    with _lock:
        if "jsonschema" in sys.modules or IRI_GRAMMAR in sys.modules:
            return
        makers = {IRI_GRAMMAR: _stand_in, DURATIONS: _durations_stand_in}
        # a library not installed, or already imported, is left alone (jsonschema skips a missing one itself)
        stand_ins = {
            name: make()
            for name, make in makers.items()
            if name not in sys.modules and importlib.util.find_spec(name) is not None
        }
        sys.modules.update(stand_ins)
        try:
            importlib.import_module("jsonschema")
        finally:
            for name, stand_in in stand_ins.items():
                if sys.modules.get(name) is stand_in:
                    del sys.modules[name]


def load_jsonschema() -> types.ModuleType:
    """The ``jsonschema`` module, imported with the IRI grammar deferred."""
    defer_iri_grammar()
    return importlib.import_module("jsonschema")

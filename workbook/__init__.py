"""The schema-design workbench: learn MongoDB document design by measuring it.

Public names are imported lazily, so ``import workbook`` is cheap and has no side effects:
no server starts and nothing is printed until a function is called.

One vocabulary, the same in every function:

- ``dataset``: a generated dataset (``generate("store")``), or its name where one is enough;
- ``shape``: ``"embedded"``, ``"referenced"`` or ``"hybrid"``;
- ``db``: one pymongo ``Database``, exactly that database (never "any database on its server");
- ``shapes``: what ``load()`` returned, a :class:`LoadedShape`, or a list or dict of them;
- ``workload``: a dataset's operations with their rates (``workload("store")``);
- ``seed``, ``scale``: the generator's; ``repeat``, ``warmup``: timed and untimed calls per operation.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbook.connection import EngineInfo as EngineInfo
    from workbook.connection import client_for as client_for
    from workbook.connection import connect as connect
    from workbook.connection import engine_info as engine_info
    from workbook.connection import redact_uri as redact_uri
    from workbook.connection import reset as reset
    from workbook.dataset_parts import shape_spec as shape_spec
    from workbook.dataset_parts import workload as workload
    from workbook.datasets import Dataset as Dataset
    from workbook.datasets import generate as generate
    from workbook.errors import ArgumentTypeError as ArgumentTypeError
    from workbook.errors import ConnectionFailedError as ConnectionFailedError
    from workbook.errors import InvalidURIError as InvalidURIError
    from workbook.errors import LoadInProgressError as LoadInProgressError
    from workbook.errors import NamespaceError as NamespaceError
    from workbook.errors import NotLoadedError as NotLoadedError
    from workbook.errors import OperationRejectedError as OperationRejectedError
    from workbook.errors import UnknownChoiceError as UnknownChoiceError
    from workbook.errors import WorkbookError as WorkbookError
    from workbook.explaining import draw_plan as draw_plan
    from workbook.explaining import explain as explain
    from workbook.explaining import explain_aggregate as explain_aggregate
    from workbook.explaining import summarize as summarize
    from workbook.explorer import explore as explore
    from workbook.loaded import LoadedShape as LoadedShape
    from workbook.loaded import LoadReport as LoadReport
    from workbook.loaded import find_loaded as find_loaded
    from workbook.loaded import ops as ops
    from workbook.loading import course_scale as course_scale
    from workbook.loading import load as load
    from workbook.measure import run_workload as run_workload
    from workbook.measure import summarize_runs as summarize_runs
    from workbook.schema_doctor import doctor as doctor
    from workbook.schema_doctor.fields import schema_view as schema_view
    from workbook.shapes import SHAPE_NAMES as SHAPE_NAMES
    from workbook.sizes import size_table as size_table

__version__ = "0.1.0"

_EXPORTS = {
    "connect": "workbook.connection",
    "client_for": "workbook.connection",
    "engine_info": "workbook.connection",
    "EngineInfo": "workbook.connection",
    "redact_uri": "workbook.connection",
    "reset": "workbook.connection",
    "generate": "workbook.datasets",
    "Dataset": "workbook.datasets",
    "SHAPE_NAMES": "workbook.shapes",
    "shape_spec": "workbook.dataset_parts",
    "load": "workbook.loading",
    "course_scale": "workbook.loading",
    "LoadedShape": "workbook.loaded",
    "LoadReport": "workbook.loaded",
    "find_loaded": "workbook.loaded",
    "ops": "workbook.loaded",
    "workload": "workbook.dataset_parts",
    "run_workload": "workbook.measure",
    "summarize_runs": "workbook.measure",
    "size_table": "workbook.sizes",
    "explore": "workbook.explorer",
    "doctor": "workbook.schema_doctor",
    "schema_view": "workbook.schema_doctor.fields",
    "explain": "workbook.explaining",
    "explain_aggregate": "workbook.explaining",
    "summarize": "workbook.explaining",
    "draw_plan": "workbook.explaining",
    "WorkbookError": "workbook.errors",
    "ArgumentTypeError": "workbook.errors",
    "ConnectionFailedError": "workbook.errors",
    "InvalidURIError": "workbook.errors",
    "LoadInProgressError": "workbook.errors",
    "NamespaceError": "workbook.errors",
    "NotLoadedError": "workbook.errors",
    "OperationRejectedError": "workbook.errors",
    "UnknownChoiceError": "workbook.errors",
}

_SUBMODULES = {"quiz", "charts", "sizes", "applications", "relations", "daily", "display", "capstone", "factors"}
"""Submodules learners use as namespaces: ``workbook.quiz.show(...)``."""

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return import_module(f"{__name__}.{name}")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'workbook' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})

"""The label every modelled explain carries, defined once."""

from __future__ import annotations

MODELLED_FIELD = "modelledBy"
"""The top-level field that marks an explain as modelled; MongoDB's explain has no field of that name."""

MODELLED_LABEL = "modelled by the workbench on the actual data and indexes"
"""How a modelled explain is labelled wherever it is shown to a learner."""

MODELLED_BY = (
    "workbook planner model (offline default): MongoDB's classic query planner rules applied to the "
    "real documents and indexes; counts come from walking the modelled index keys, not from a server"
)
"""The value of :data:`MODELLED_FIELD`."""

__all__ = ["MODELLED_BY", "MODELLED_FIELD", "MODELLED_LABEL"]

"""How urgent a finding is: info, warning, critical."""

from __future__ import annotations

from enum import IntEnum

from workbook.errors import UnknownChoiceError


class Severity(IntEnum):
    """How urgent a finding is; ordered, so ``severity >= Severity.WARNING`` reads as it says."""

    INFO = 1
    WARNING = 2
    CRITICAL = 3

    @property
    def label(self) -> str:
        """The lower-case name used in tables, JSON and on the command line."""
        return self.name.lower()

    @classmethod
    def parse(cls, value: Severity | str) -> Severity:
        """A severity from its name ('info', 'warning', 'critical'); errors list the choices."""
        if isinstance(value, Severity):
            return value
        try:
            return cls[str(value).upper()]
        except KeyError:
            raise UnknownChoiceError("severity", value, [s.label for s in cls]) from None

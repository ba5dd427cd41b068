"""The doctor's thresholds: defaults from MongoDB Compass, Atlas and MongoDB's documentation.

Every number is a field of :class:`Thresholds`, so a team can pass its own:
``workbook.doctor(db, thresholds=Thresholds(array_elements=1000))``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import timedelta

from workbook.errors import WorkbookError
from workbook.facts import MAX_BSON_SIZE, MAX_INDEXES_PER_COLLECTION

__all__ = [
    "CALLS_PER_OPERATION",
    "DEFAULT_THRESHOLDS",
    "FAMILY_EXAMINED",
    "MAX_BSON_SIZE",
    "MAX_INDEXES_PER_COLLECTION",
    "PROFILE_ENTRIES",
    "SAMPLE_SIZE",
    "TIME_LIMIT",
    "Thresholds",
]

# How much the doctor may read, and for how long (keyword arguments of doctor()).

SAMPLE_SIZE = 1000
"""Documents read per collection: Compass's schema view samples 1,000 (https://www.mongodb.com/docs/compass/current/sampling/)."""

TIME_LIMIT = 60.0
"""Seconds for the whole run; checks still waiting when it is spent are reported as not run."""

CALLS_PER_OPERATION = 3
"""Sample calls of each hot operation (with different seeded arguments): "on every call" means on all of these."""

PROFILE_ENTRIES = 1000
"""Newest ``system.profile`` entries read when the profiler is on."""

FAMILY_EXAMINED = 10
"""Of a family of collections whose names differ only by a date or id (``events_2025_01_01``...), how many
the per-collection checks (indexes, arrays, documents) read, spread evenly from first to last by name;
they hold the same kind of document, and a database of thousands would otherwise cost thousands of reads."""


@dataclass(frozen=True)
class Thresholds:
    """When a measurement becomes a finding."""

    # Where the numbers come from. Atlas's schema suggestions and Compass's Performance Insights flag
    # "array fields with many elements", "an exceedingly high number of collections" and "too many
    # indexes" (https://www.mongodb.com/docs/atlas/performance-advisor/schema-suggestions/,
    # https://www.mongodb.com/docs/atlas/atlas-ui/performance-insights/); their pages name no numbers,
    # so the defaults are the ones the course's issue 14 adopts from those tools (250 elements, 10,000
    # collections, 10 indexes), and each anti-pattern's manual page is cited at its group below.
    # Unbounded arrays (https://www.mongodb.com/docs/manual/data-modeling/design-antipatterns/unbounded-arrays/).
    array_elements: int = 250
    """An array with at least this many elements is reported."""
    array_elements_critical: int = 10_000
    """An array this long is reported as critical (a multikey index holds one key per element)."""
    array_skew: float = 10.0
    """An array whose maximum length is this many times its average is reported, as a warning: "a maximum
    far above the average means a few documents are already in trouble", and a sample may miss the longest."""
    array_skew_min_elements: int = 50
    """...but only when that maximum is at least this long (5 against an average of 0.4 is not a problem)."""

    # Bloated documents (https://www.mongodb.com/docs/manual/data-modeling/design-antipatterns/bloated-documents/):
    # compare db.collection.stats().avgObjSize with what the hot query returns.
    bloat_ratio: float = 10.0
    """Average document at least this many times the bytes per document the hottest read returns."""
    bloat_min_bytes: int = 16 * 1024
    """...and at least this big: a 2 KB document read for 150 bytes is not worth a migration."""
    large_document_bytes: int = 10 * 1000 * 1000
    """Documents over 10 MB: close enough to the 16 MiB limit that one more append may fail."""
    binary_field_bytes: int = 16 * 1024
    """A document whose largest field is a binary of at least this size belongs in object storage or GridFS."""

    # Massive number of collections
    # (https://www.mongodb.com/docs/manual/data-modeling/design-antipatterns/reduce-collections/).
    collections: int = 10_000
    """A database with at least this many collections is reported (Atlas's "too many collections" advice)."""
    patterned_collections: int = 3
    """Collections whose names differ only by an embedded date or id, this many or more, are reported."""

    # Unnecessary indexes
    # (https://www.mongodb.com/docs/manual/data-modeling/design-antipatterns/unnecessary-indexes/).
    indexes_per_collection: int = 10
    """More indexes than this on one collection are reported (Compass/Atlas "too many indexes")."""
    index_stats_min_age: timedelta = timedelta(days=7)
    """$indexStats counters must cover at least this long (a business cycle) before "unused" means anything."""

    # Workload: which operations are hot (the seed's "a 15 ms lookup running 500 times a second").
    hot_per_second: float = 1.0
    """Operations at least this frequent are on the hot path."""

    def __post_init__(self) -> None:
        for spec in fields(self):
            value = getattr(self, spec.name)
            if isinstance(value, timedelta):
                if value < timedelta(0):
                    raise WorkbookError(f"Threshold {spec.name} must not be negative (got {value}).")
            elif not isinstance(value, int | float) or value < 0:
                raise WorkbookError(
                    f"Threshold {spec.name} must be a non-negative number (got {value!r}).",
                    fix=f"Pass e.g. Thresholds({spec.name}={spec.default!r}).",
                )


DEFAULT_THRESHOLDS = Thresholds()

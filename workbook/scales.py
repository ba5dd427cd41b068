"""Guard rails on scale: what a load at each scale costs on the offline default, said before it starts.

``large`` (2 million documents) is far beyond an in-process Python engine: generating it alone
takes about a minute and 1.7 GB, and loading it would take most of an hour. On the offline
default it is refused, with the way out (real MongoDB, or ``medium``), unless forced; ``medium``
prints an estimate before it starts. Estimates scale this machine's measured first loads at
``small`` (``benchmarks/results/last.json`` when present, else the figures below).
"""

from __future__ import annotations

import json
import os

from workbook.errors import ScaleRefusedError

SMALL_LOAD_SECONDS: dict[tuple[str, str], float] = {
    ("store", "embedded"): 9.5,
    ("store", "referenced"): 8.2,
    ("store", "hybrid"): 8.8,
    ("followers", "embedded"): 2.5,
    ("followers", "referenced"): 8.2,
    ("followers", "hybrid"): 10.0,
    ("parts", "embedded"): 19.5,
    ("parts", "referenced"): 13.7,
    ("parts", "hybrid"): 15.6,
}
"""First load of each shape at ``small`` on the offline default, 2 cores (workbook bench, 2026-12-01)."""

REFUSED = ("large",)
"""Scales the offline default refuses unless forced."""

ESTIMATED = ("medium",)
"""Scales the offline default loads only after printing an estimate."""


def _measured_small_seconds(dataset: str, shape: str) -> float:
    """This machine's last benchmarked first load at ``small``, else the built-in figure."""
    from workbook.bench import default_json_path

    path = default_json_path()
    if path is not None and path.is_file():
        try:
            figures = json.loads(path.read_text())["figures"]
            for figure in figures:
                if figure["name"] == f"{dataset}/{shape}, first on this machine":
                    return float(figure["value"])
        except (ValueError, KeyError, TypeError):
            pass
    return SMALL_LOAD_SECONDS.get((dataset, shape), 15.0)


def documents(dataset: str, scale: str) -> int:
    """How many documents ``generate(dataset, scale)`` makes (before shaping).

    >>> documents("store", "large")
    2000000
    """
    from workbook.datasets.registry import sizes

    return sum(sizes(dataset, scale).values())


def estimate_seconds(dataset: str, shape: str, scale: str) -> float:
    """Seconds a first load of ``dataset`` in ``shape`` at ``scale`` should take on the offline default.

    >>> estimate_seconds("store", "hybrid", "medium") / estimate_seconds("store", "hybrid", "small")
    10.0
    """
    ratio = documents(dataset, scale) / documents(dataset, "small")
    return _measured_small_seconds(dataset, shape) * ratio


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def check_offline_load(dataset: str, shape: str, scale: str, *, force: bool = False) -> None:
    """Refuse ``large`` on the offline default unless ``force``; print an estimate before ``medium``."""
    if scale in REFUSED and not force:
        raise ScaleRefusedError(
            f"The {scale} {dataset} dataset ({documents(dataset, scale):,} documents) is too big for the offline "
            f"default, an engine written in Python inside this kernel: a load of {shape} would take about "
            f"{_duration(estimate_seconds(dataset, shape, scale))} and several GB of memory.",
            fix="Use real MongoDB (set MONGODB_URI, e.g. after `docker compose up -d`), or scale='medium' "
            f"(about {_duration(estimate_seconds(dataset, shape, 'medium'))}). "
            "To try anyway: load(..., force=True).",
        )
    if scale in ESTIMATED or scale in REFUSED:
        print(
            f"Loading {dataset} at {scale} ({documents(dataset, scale):,} documents) as {shape} on the offline "
            f"default: about {_duration(estimate_seconds(dataset, shape, scale))} the first time on this machine "
            "(then restored from a snapshot in seconds)."
        )


def check_course_scale(scale: str) -> str:
    """``WORKBOOK_SCALE`` for the notebooks: ``large`` is refused on the offline default (no MONGODB_URI)."""
    offline = not os.environ.get("MONGODB_URI")
    if offline and scale in REFUSED and os.environ.get("WORKBOOK_FORCE_SCALE") != "1":
        raise ScaleRefusedError(
            f"WORKBOOK_SCALE={scale} is too big for the offline default (millions of documents in a Python engine).",
            fix="Set MONGODB_URI to a real MongoDB, or WORKBOOK_SCALE=medium; WORKBOOK_FORCE_SCALE=1 to try anyway.",
        )
    return scale

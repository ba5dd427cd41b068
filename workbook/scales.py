"""Guard rails on scale: what a load at each scale costs on the offline default, said before it starts.

``large`` (2 million documents) is far beyond an in-process Python engine: generating it alone
takes about a minute and 1.7 GB, and loading it would take most of an hour. On the offline
default it is refused, with the way out (real MongoDB, or ``medium``), unless forced; ``medium``
prints an estimate before it starts. Estimates come from this machine's own measured first loads
(kept in the cache folder), else its last ``workbook bench``, else one rate measured elsewhere
(:data:`GUESS_DOCUMENTS_PER_SECOND`), which the estimate then calls a guess.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from workbook.errors import ScaleRefusedError

GUESS_DOCUMENTS_PER_SECOND = 17_000
"""Documents a first load on the offline default writes per second when nothing was measured on this
machine: the slowest first load at ``small`` in the README's ``workbook bench`` table (parts/embedded,
48,800 documents in 2.9 s, 2 cores, 2026-12-01), rounded down. One rate, scaled by each dataset's
documents, instead of a figure per shape that goes stale whenever loading gets faster."""

REFUSED = ("large",)
"""Scales the offline default refuses unless forced."""

ESTIMATED = ("medium",)
"""Scales the offline default loads only after printing an estimate."""


LOAD_TIMES_FILE = "load-seconds.json"
"""In the cache folder: this machine's measured first loads, ``{"dataset/shape/scale": seconds}`` (JSON)."""


def _times_path() -> Path:
    from workbook.snapshot import cache_dir

    return cache_dir() / LOAD_TIMES_FILE


def measured_loads() -> dict[str, float]:
    """This machine's measured first loads on the offline default, by ``dataset/shape/scale`` (empty if none)."""
    try:
        stored = json.loads(_times_path().read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(stored, dict):
        return {}
    return {k: float(v) for k, v in stored.items() if isinstance(k, str) and isinstance(v, int | float) and v > 0}


def record_load(dataset: str, shape: str, scale: str, seconds: float) -> None:
    """Remember a real first load's seconds on this machine (the next estimate starts from it)."""
    times = measured_loads()
    times[f"{dataset}/{shape}/{scale}"] = round(float(seconds), 3)
    path = _times_path()
    handle = None
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=".tmp-", delete=False) as handle:
            json.dump(times, handle, sort_keys=True)
        os.replace(handle.name, path)
    except OSError:  # a read-only cache folder or a full disk: estimates stay as they were, no leftover
        if handle is not None:
            Path(handle.name).unlink(missing_ok=True)


BENCH_RESULTS = Path("benchmarks", "results", "last.json")
"""Where ``python -m workbook bench`` records its last run, in a checkout (beside ``notebooks/``)."""


def bench_results_path() -> Path | None:
    """This checkout's :data:`BENCH_RESULTS`, else None (an installed package has no checkout)."""
    root = Path(__file__).resolve().parent.parent
    return root / BENCH_RESULTS if (root / "notebooks").is_dir() else None


def _benchmarked_small_seconds(dataset: str, shape: str) -> float | None:
    """This machine's last benchmarked first load at ``small`` (``workbook bench``), else None."""
    path = bench_results_path()
    if path is not None and path.is_file():
        try:
            figures = json.loads(path.read_text())["figures"]
            for figure in figures:
                if figure["name"] == f"{dataset}/{shape}, first on this machine":
                    return float(figure["value"])
        except (ValueError, KeyError, TypeError):
            pass
    return None


def estimate(dataset: str, shape: str, scale: str) -> tuple[float, str]:
    """(seconds, where the figure comes from) for a first load on the offline default, on this machine.

    A load of this very shape and scale measured here is used as it is; else one measured at
    another scale, scaled by the documents; else the benchmark's ``small`` figure; else the
    built-in figure from another machine, which the source then calls a guess.
    """
    times = measured_loads()
    same = times.get(f"{dataset}/{shape}/{scale}")
    if same is not None:
        return same, f"measured on this machine ({dataset}/{shape} at {scale} took {_duration(same)})"
    for other in ("medium", "small", "tiny"):
        seconds = times.get(f"{dataset}/{shape}/{other}")
        if seconds is not None and other != scale:
            ratio = document_count(dataset, scale) / document_count(dataset, other)
            return seconds * ratio, (
                f"scaled from a load at {other} measured on this machine ({_duration(seconds)}, x{ratio:g} documents)"
            )
    ratio = document_count(dataset, scale) / document_count(dataset, "small")
    benched = _benchmarked_small_seconds(dataset, shape)
    if benched is not None:
        return benched * ratio, f"scaled from this machine's last `workbook bench` at small (x{ratio:g} documents)"
    guess = document_count(dataset, scale) / GUESS_DOCUMENTS_PER_SECOND
    return guess, "a guess: nothing measured on this machine yet (from another 2-core machine, unloaded)"


def document_count(dataset: str, scale: str) -> int:
    """How many documents ``generate(dataset, scale)`` makes (before shaping).

    >>> document_count("store", "large")
    2000000
    """
    from workbook.datasets.registry import sizes

    return sum(sizes(dataset, scale).values())


def estimate_seconds(dataset: str, shape: str, scale: str) -> float:
    """Seconds a first load of ``dataset`` in ``shape`` at ``scale`` should take on the offline default
    (see :func:`estimate` for where the figure comes from)."""
    return estimate(dataset, shape, scale)[0]


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def check_offline_load(dataset: str, shape: str, scale: str, *, force: bool = False) -> None:
    """Refuse ``large`` on the offline default unless ``force``; print an estimate before ``medium``."""
    if scale in REFUSED and not force:
        raise ScaleRefusedError(
            f"The {scale} {dataset} dataset ({document_count(dataset, scale):,} documents) is too big for the offline "
            f"default, an engine written in Python inside this kernel: a load of {shape} would take about "
            f"{_duration(estimate_seconds(dataset, shape, scale))} and several GB of memory.",
            fix="Use real MongoDB (set MONGODB_URI, e.g. after `docker compose up -d`), or scale='medium' "
            f"(about {_duration(estimate_seconds(dataset, shape, 'medium'))}). "
            "To try anyway: load(..., force=True).",
        )
    if scale in ESTIMATED or scale in REFUSED:
        seconds, source = estimate(dataset, shape, scale)
        print(
            f"Loading {dataset} at {scale} ({document_count(dataset, scale):,} documents) as {shape} on the offline "
            f"default: about {_duration(seconds)} the first time ({source}; more if the machine is busy), "
            "then restored from a snapshot in seconds."
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

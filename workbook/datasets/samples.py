"""The committed samples in `datasets/`: write them, read them back, check them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from datetime import UTC
from pathlib import Path
from typing import Any

from bson import json_util
from bson.json_util import RELAXED_JSON_OPTIONS

from workbook.datasets.dataset import Dataset
from workbook.datasets.registry import DATASETS, GENERATOR_VERSION, generate, sizes

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "datasets"
SAMPLE_SCALE = "tiny"
SAMPLE_SEED = 7
MANIFEST = "manifest.json"
FORMAT = "MongoDB Extended JSON v2, relaxed mode, one document per line (NDJSON)"
CANONICAL_HASH = (
    "sha256 over collections in sorted name order: name, a NUL byte, then "
    "bson.encode(document) for each document in file order"
)
# Read dates back as aware UTC datetimes, as the generator made them.
_READ_OPTIONS = RELAXED_JSON_OPTIONS.with_options(tz_aware=True, tzinfo=UTC)


def to_ndjson(documents: Iterable[dict[str, Any]]) -> str:
    """Return documents as relaxed Extended JSON, one per line."""
    return "".join(json_util.dumps(document, json_options=RELAXED_JSON_OPTIONS) + "\n" for document in documents)


def from_ndjson(text: str) -> list[dict[str, Any]]:
    """Return the documents of an NDJSON text written by `to_ndjson`."""
    return [json_util.loads(line, json_options=_READ_OPTIONS) for line in text.splitlines()]


def write_samples(
    directory: Path | str = SAMPLES_DIR, scale: str = SAMPLE_SCALE, seed: int = SAMPLE_SEED
) -> dict[str, Any]:
    """Write every dataset as NDJSON plus `manifest.json` into `directory`; return the manifest."""
    root = Path(directory)
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "canonicalHash": CANONICAL_HASH,
        "generatorVersion": GENERATOR_VERSION,
        "datasets": {},
    }
    for name in sorted(DATASETS):
        dataset = generate(name, scale, seed)
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.glob("*.ndjson"):
            if stale.stem not in dataset.collections:
                stale.unlink()
        collections = {}
        for collection, documents in dataset.collections.items():
            data = to_ndjson(documents).encode()
            (folder / f"{collection}.ndjson").write_bytes(data)
            collections[collection] = {
                "file": f"{name}/{collection}.ndjson",
                "count": len(documents),
                "sha256": hashlib.sha256(data).hexdigest(),
            }
        manifest["datasets"][name] = {
            "parameters": {"scale": scale, "seed": seed, "sizes": sizes(name, scale)},
            "sha256": dataset.sha256(),
            "collections": collections,
        }
    (root / MANIFEST).write_bytes((json.dumps(manifest, indent=2) + "\n").encode())
    return manifest


def read_manifest(directory: Path | str = SAMPLES_DIR) -> dict[str, Any]:
    """Return the parsed `manifest.json` of a samples directory."""
    return json.loads((Path(directory) / MANIFEST).read_text(encoding="utf-8"))


def read_sample(name: str, directory: Path | str = SAMPLES_DIR) -> Dataset:
    """Return one committed sample as a Dataset, read from its NDJSON files."""
    root = Path(directory)
    entry = read_manifest(root)["datasets"][name]
    collections = {
        collection: from_ndjson((root / info["file"]).read_text(encoding="utf-8"))
        for collection, info in entry["collections"].items()
    }
    parameters = entry["parameters"]
    return Dataset(name, parameters["scale"], parameters["seed"], collections)


def check_samples(directory: Path | str = SAMPLES_DIR) -> list[str]:
    """Return what disagrees between the samples, their manifest and a fresh generate()."""
    root = Path(directory)
    manifest = read_manifest(root)
    problems = []
    if sorted(manifest["datasets"]) != sorted(DATASETS):
        problems.append(f"manifest lists {sorted(manifest['datasets'])}, generators are {sorted(DATASETS)}")
    for name, entry in manifest["datasets"].items():
        for info in entry["collections"].values():
            data = (root / info["file"]).read_bytes()
            if hashlib.sha256(data).hexdigest() != info["sha256"]:
                problems.append(f"{info['file']}: file sha256 differs from the manifest")
            if data.count(b"\n") != info["count"]:
                problems.append(f"{info['file']}: {data.count(b'\n')} lines, manifest says {info['count']}")
        if name in DATASETS and read_sample(name, root).sha256() != entry["sha256"]:
            problems.append(f"{name}: documents read back differ from the manifest's BSON hash")
        parameters = entry["parameters"]
        if name in DATASETS:
            fresh = generate(name, parameters["scale"], parameters["seed"]).sha256()
            if fresh != entry["sha256"]:
                problems.append(
                    f"{name}: generate() here gives {fresh[:12]}..., manifest says "
                    f"{entry['sha256'][:12]}...; regenerate with write_samples()"
                )
    return problems

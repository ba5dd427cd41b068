"""A generated dataset: named collections of canonical documents and their fingerprint."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import bson


@dataclass(frozen=True)
class Dataset:
    """Canonical, normalized documents of one generated dataset, keyed by collection."""

    name: str
    scale: str
    seed: int
    collections: dict[str, list[dict[str, Any]]]

    def counts(self) -> dict[str, int]:
        """Return the number of documents in each collection."""
        return {name: len(documents) for name, documents in self.collections.items()}

    def sha256(self) -> str:
        """Return the hex SHA-256 of the canonical BSON: collections by name, documents in order."""
        digest = hashlib.sha256()
        for name in sorted(self.collections):
            digest.update(name.encode() + b"\x00")
            for document in self.collections[name]:
                digest.update(bson.encode(document))
        return digest.hexdigest()

    def __repr__(self) -> str:
        """Show counts, not fifty thousand documents."""
        return f"Dataset({self.name!r}, scale={self.scale!r}, seed={self.seed}, counts={self.counts()})"

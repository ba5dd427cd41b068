"""Benchmark the offline default: loads over the wire vs. the engine's bulk path, and indexed reads.

Run: .venv/bin/python benchmarks/offline_engine.py [N]   (prints numbers; asserts nothing)
"""

from __future__ import annotations

import sys
import time

import workbook
from workbook.offline import offline_server


def timed(label: str, count: int, action) -> None:  # type: ignore[no-untyped-def]
    """Run ``action`` once and print its time and rate."""
    started = time.perf_counter()
    action()
    elapsed = time.perf_counter() - started
    print(f"{label:<44} {count:>7} ops  {elapsed:7.2f} s  {count / elapsed:9.0f} ops/s")


def main(n: int = 20_000) -> None:
    """Print load and query rates on the offline default."""
    db = workbook.connect(database="bench", quiet=True)
    db.client.drop_database(db.name)
    docs = [{"_id": f"r{i:07d}", "productId": f"p{i % 1000:04d}", "text_id": i, "text": "x" * 150} for i in range(n)]
    timed("insert_many over the wire (string _id)", n, lambda: db.wire.insert_many(docs))
    timed("bulk_insert through the engine", n, lambda: offline_server().bulk_insert(db.name, "bulk", docs))
    timed("insert_one over the wire, collection of n", 500, lambda: [db.wire.insert_one({"k": i}) for i in range(500)])
    timed("create a unique index over n documents", n, lambda: db.bulk.create_index("text_id", unique=True, name="u"))
    db.bulk.create_index("productId")
    timed(
        "find by indexed productId (20 docs each)",
        1000,
        lambda: [list(db.bulk.find({"productId": f"p{k:04d}"})) for k in range(1000)],
    )
    timed("find by unindexed text field", 20, lambda: [db.wire.find_one({"text": "nope"}) for _ in range(20)])
    db.client.drop_database(db.name)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)

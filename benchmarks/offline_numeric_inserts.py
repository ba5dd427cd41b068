"""Benchmark: ``insert_many`` with numeric ``_id``s over the wire on the offline default.

mongoeco 4.11.0's wire ``insert`` inserts one document at a time and, for a numeric ``_id``, collects
every stored ``_id`` each time (O(n^2)); the workbench sends the batch to the engine at once.
Run: .venv/bin/python benchmarks/offline_numeric_inserts.py [N ...]   (prints numbers; asserts nothing)
"""

from __future__ import annotations

import sys
import time

import workbook


def main(sizes: list[int]) -> None:
    """Print the time of one ``insert_many([{"_id": i} ...])`` per size, and the time per document."""
    db = workbook.connect(database="bench_numeric", quiet=True)
    for n in sizes:
        db.drop_collection("numeric")
        started = time.perf_counter()
        db.numeric.insert_many([{"_id": i, "v": i % 7} for i in range(n)])
        elapsed = time.perf_counter() - started
        print(f"insert_many, numeric _id, over the wire {n:>7} docs {elapsed:8.2f} s {1e6 * elapsed / n:8.0f} us/doc")
    db.client.drop_database(db.name)


if __name__ == "__main__":
    main([int(arg) for arg in sys.argv[1:]] or [1_000, 2_000, 10_000])

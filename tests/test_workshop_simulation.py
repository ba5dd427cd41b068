"""A workshop of 30 on one shared server, in threads: everyone's data and progress stay theirs.

Uses only ``connect()``, a small insert, progress recording and ``reset()``, so it holds whatever
``load()`` and ``run()`` become. The names include ones that used to collide (``Zoë``/``Zoé``,
Cyrillic and CJK names that all became ``learner``).
"""

from __future__ import annotations

import inspect
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

import workbook
from tests.conftest import fingerprint
from workbook import namespace
from workbook.quiz.progress import Progress

CLASS = [
    "Иван", "Мария", "Дмитрий", "日本語", "山田太郎", "李小龙", "김민준", "محمد", "Σωκράτης", "Zoë",
    "Zoé", "Zoe", "José", "Jose", "Ørsted", "Nguyễn Văn A", "Ada Lovelace", "Grace Hopper", "alan",
    "Barbara Liskov", "Đorđe", "Ñandú", "łukasz", "İsmail", "straße", "bob", "bob-x", "😀", "🙂",
    "Ada Lovelace Byron King, Countess of Lovelace",
]  # fmt: skip

SCRATCH_DOCS, KEEP_DOCS, ATTEMPTS = 3, 5, 4
OTHERS_DB = "course_simulation_foreign"


def reset_as(name: str) -> list[str]:
    """``reset()`` for one learner of the class (threads share one environment, so by argument).

    Resetting a learner other than ``WORKBOOK_LEARNER`` may need ``force=True`` (issue 15 item 3).
    """
    force = {"force": True} if "force" in inspect.signature(workbook.reset).parameters else {}
    return workbook.reset(learner=name, **force)


def learner_day(name: str, started: threading.Barrier, reset_done: threading.Barrier) -> dict[str, Any]:
    """One learner: write, answer, reset, write again, answer again; returns what they saw."""
    client = workbook.connect(quiet=True).client  # the one shared client, as every notebook gets
    scratch = client[namespace.database_name("scratch", learner=name)]
    scratch.things.insert_many([{"n": i, "owner": name} for i in range(SCRATCH_DOCS)])
    progress = Progress.load(name)
    for attempt in range(ATTEMPTS // 2):
        progress.record("sim-q", attempt == 1)
    started.wait()
    scratch_count = scratch.things.count_documents({})
    dropped = reset_as(name)
    reset_done.wait()
    keep = client[namespace.database_name("keep", learner=name)]
    keep.things.insert_many([{"n": i, "owner": name} for i in range(KEEP_DOCS)])
    for _ in range(ATTEMPTS - ATTEMPTS // 2):
        Progress.load(name).record("sim-q", False)
    return {"scratch_count": scratch_count, "dropped": dropped}


@pytest.fixture
def progress_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBOOK_PROGRESS_DIR", str(tmp_path / "progress"))
    monkeypatch.delenv("MONGODB_URI", raising=False)
    return tmp_path / "progress"


def test_thirty_learners_on_one_server_keep_their_own_data_and_progress(progress_dir):
    assert len(CLASS) == 30
    client = workbook.connect(quiet=True).client
    client.drop_database(OTHERS_DB)
    client[OTHERS_DB].notes.insert_many([{"_id": i, "text": "someone else's"} for i in range(20)])
    others_before = fingerprint(client, OTHERS_DB)
    keys = {name: namespace.learner_name(name) for name in CLASS}
    assert len(set(keys.values())) == 30

    started, reset_done = threading.Barrier(30, timeout=120), threading.Barrier(30, timeout=120)
    clock = time.monotonic()
    with ThreadPoolExecutor(max_workers=30) as pool:
        futures = {name: pool.submit(learner_day, name, started, reset_done) for name in CLASS}
        seen = {name: future.result(timeout=300) for name, future in futures.items()}
    elapsed = time.monotonic() - clock

    try:
        names = set(client.list_database_names())
        for name in CLASS:
            scratch = namespace.database_name("scratch", learner=name)
            keep = namespace.database_name("keep", learner=name)
            assert seen[name]["scratch_count"] == SCRATCH_DOCS, f"{name} shared a database"
            assert seen[name]["dropped"] == [scratch], f"{name}'s reset dropped {seen[name]['dropped']}"
            assert scratch not in names
            owners = client[keep].things.distinct("owner")
            assert owners == [name] and client[keep].things.count_documents({}) == KEEP_DOCS
            entry = Progress.load(name).questions["sim-q"]
            assert entry["attempts"] == ATTEMPTS and entry["correct"] == 1, name
        files = sorted(path.name for path in progress_dir.glob("*.json"))
        assert files == sorted(f"{key}.json" for key in keys.values())
        assert fingerprint(client, OTHERS_DB) == others_before
        print(f"30 learners: write, answer, reset, write, answer in {elapsed:.1f} s on the offline default")
    finally:
        for name in CLASS:
            reset_as(name)
        client.drop_database(OTHERS_DB)


PRODUCTS, STOCK, WORKERS, ORDERS = ("p1", "p2", "p3"), 100, 2, 4
"""Each learner: two workers (a notebook and a workload cell) placing orders on the same three products."""


def order_items(worker: int, order: int) -> list[tuple[str, int]]:
    """Two lines per order, always touching p1 (so the two workers contend on it)."""
    return [("p1", 1 + (worker + order) % 3), (PRODUCTS[1 + (worker + order) % 2], 2)]


def learner_orders(name: str, uri: str, started: threading.Barrier) -> list[str]:
    """One learner on the served offline default, with their own pymongo client; returns the errors they saw."""
    from pymongo import MongoClient

    from workbook.operations.store import OPERATIONS

    errors: list[str] = []
    with MongoClient(uri) as client:
        db = client[namespace.database_name("store_referenced", learner=name)]
        db.products.insert_many(
            [
                {"_id": p, "name": f"product {p}", "price": 2.5, "stock": STOCK, "category": {"_id": "c"}}
                for p in PRODUCTS
            ]
        )
        db.customers.insert_many([{"_id": f"cust-{number}", "name": f"worker {number}"} for number in range(WORKERS)])
        ops = OPERATIONS["referenced"](db, learner=name)
        started.wait()

        def worker(number: int) -> None:
            for order in range(ORDERS):
                try:
                    ops.place_order(f"cust-{number}", order_items(number, order))
                    if order == 1:  # a plain write to a product a transaction may hold: it waits, then applies
                        ops.change_price("p1", 3.0)
                except Exception as error:  # noqa: BLE001 - whatever a learner would see
                    errors.append(f"{name}: {error!r}")

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(WORKERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return errors


def test_thirty_learners_place_orders_on_one_served_offline_default(progress_dir):
    """The offline default served over the wire to 30 clients, as one shared server on workshop day."""
    from workbook import offline, offline_transactions

    server = offline.offline_server()
    table = offline_transactions.table_of(server.engine)
    assert table is not None
    conflicts_before = table.counters["write_conflicts"]
    started = threading.Barrier(30, timeout=120)
    try:
        with ThreadPoolExecutor(max_workers=30) as pool:
            futures = [pool.submit(learner_orders, name, server.uri, started) for name in CLASS]
            errors = [error for future in futures for error in future.result(timeout=300)]
        assert errors == [], errors[:5]
        client = workbook.connect(quiet=True).client
        for name in CLASS:
            db = client[namespace.database_name("store_referenced", learner=name)]
            assert db.orders.count_documents({}) == WORKERS * ORDERS, f"{name} lost an order"
            sold = {p: 0 for p in PRODUCTS}
            for order in db.orders.find():
                for line in order["items"]:
                    sold[line["productId"]] += line["quantity"]
            expected = {
                p: sum(q for w in range(WORKERS) for o in range(ORDERS) for pid, q in order_items(w, o) if pid == p)
                for p in PRODUCTS
            }
            assert sold == expected, f"{name}'s orders are not the ones placed"
            stock = {d["_id"]: d["stock"] for d in db.products.find()}
            assert stock == {p: STOCK - sold[p] for p in PRODUCTS}, f"{name}'s stock arithmetic is off"
            assert db.products.find_one({"_id": "p1"})["price"] == 3.0
        print(
            f"30 learners x {WORKERS} workers x {ORDERS} orders on one served offline default: "
            f"{table.counters['write_conflicts'] - conflicts_before} write conflicts retried by with_transaction"
        )
    finally:
        for name in CLASS:
            reset_as(name)

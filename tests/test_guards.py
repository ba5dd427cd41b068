"""Workshop-day guards (issue 15): nothing foreign written, loads atomic for readers, typed operation arguments.

Each test here failed before its fix: operations wrote to any database they were given, reset()
dropped another learner's data without asking, an interrupted or concurrent load was measured as
if complete, and ``product_page({"$ne": None})`` returned a product.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import uuid

import pytest

import workbook
from tests.conftest import FOREIGN_DB, fingerprint
from workbook import loading
from workbook.errors import (
    ArgumentTypeError,
    LoadInProgressError,
    NamespaceError,
    NotLoadedError,
    OperationRejectedError,
    WorkbookError,
)
from workbook.loaded import MARKER_COLLECTION, LoadedShape


@pytest.fixture(autouse=True)
def real_loads(monkeypatch):
    """These tests interrupt a load's inserts; a snapshot restore (tests/test_snapshot.py) has none."""
    monkeypatch.setenv("WORKBOOK_SNAPSHOTS", "0")


@pytest.fixture(scope="module")
def tiny_store():
    return workbook.generate("store", scale="tiny", seed=7)


@pytest.fixture
def target(engine):
    """A fresh database of the test learner's to load into; dropped afterwards."""
    db = workbook.connect(engine, database=f"t{uuid.uuid4().hex[:8]}", quiet=True)
    yield db
    db.client.drop_database(db.name)


# --- 15.3: the workbench writes only to its own databases


def test_operations_refuse_a_foreign_database(engine, tiny_store, target):
    from workbook.dataset_parts import operations
    from workbook.operations.store import StoreHybrid

    foreign = target.client[FOREIGN_DB]
    before = fingerprint(target.client, FOREIGN_DB)
    with pytest.raises(NamespaceError, match="only writes to its own databases"):
        StoreHybrid(foreign)
    with pytest.raises(NamespaceError):
        operations("store", "hybrid", foreign)
    loaded = workbook.load(tiny_store, "hybrid", target, progress=False)
    with pytest.raises(NamespaceError):
        _ = LoadedShape(foreign, loaded.report).ops  # a handle pointed elsewhere still cannot write there
    with pytest.raises(NotLoadedError):
        workbook.ops(foreign)  # reading its (absent) load record is all that happens
    assert fingerprint(target.client, FOREIGN_DB) == before


def test_the_differential_check_refuses_a_foreign_database(target):
    from workbook.dev.differential import generate_cases, run_case

    def never(*args, **kwargs):
        raise AssertionError("explained a foreign collection")

    with pytest.raises(NamespaceError):
        run_case(target.client[FOREIGN_DB], generate_cases(0, 1)[0], never, never)


def test_resetting_another_learner_needs_force_and_says_whose(engine, monkeypatch):
    monkeypatch.setenv("WORKBOOK_LEARNER", "bob")
    bobs = workbook.connect(engine, database="notes", quiet=True)
    bobs.things.insert_one({"_id": 1})
    monkeypatch.setenv("WORKBOOK_LEARNER", "pytest")
    try:
        with pytest.raises(NamespaceError) as refused:
            workbook.reset(engine, learner="bob")
        message = str(refused.value)
        assert "'bob'" in message and "workbench_bob_notes" in message and "you are 'pytest'" in message
        assert "force=True" in message
        assert "workbench_bob_notes" in bobs.client.list_database_names()  # nothing dropped
        assert workbook.reset(engine, learner="bob", force=True) == ["workbench_bob_notes"]
        assert "workbench_bob_notes" not in bobs.client.list_database_names()
    finally:
        bobs.client.drop_database(bobs.name)


def test_resetting_yourself_by_name_needs_no_force(engine):
    mine = workbook.connect(engine, database="by_name", quiet=True)
    mine.things.insert_one({"_id": 1})
    assert "workbench_pytest_by_name" in workbook.reset(engine, learner="pytest")


def test_cli_reset_on_the_offline_default_says_the_data_lives_in_the_kernel():
    env = {k: v for k, v in os.environ.items() if k != "MONGODB_URI"}
    out = subprocess.run(
        [sys.executable, "-m", "workbook", "reset"], capture_output=True, text=True, env=env, check=True, timeout=120
    ).stdout
    assert "kernel" in out and "workbook.reset()" in out and "restart the kernel" in out


# --- 15.4: loads are atomic from the reader's side


def _readers(loaded: LoadedShape):
    """Every step that reads a loaded shape, each given the handle or its database."""
    from workbook.explorer import explore
    from workbook.sizes import document_size_frame

    return {
        "check": lambda: loaded.check(),
        "open": lambda: LoadedShape.open(loaded.db),
        "run_workload": lambda: workbook.run_workload(loaded, repeat=1, warmup=0),
        "run_workload(db)": lambda: workbook.run_workload(loaded.db, repeat=1, warmup=0),
        "size_table": lambda: workbook.size_table([loaded]),
        "document_size_frame": lambda: document_size_frame(loaded.db),
        "ops": lambda: workbook.ops(loaded.db),
        "explore": lambda: explore(loaded, repeat=1, warmup=0),
    }


def _interrupt_after(monkeypatch, calls: int, error: BaseException) -> None:
    """Make the load's ``calls``-th batch insert raise ``error`` (a Ctrl-C, a crash)."""
    original, seen = loading._insert, []

    def insert(*args, **kwargs):
        seen.append(1)
        if len(seen) == calls:
            raise error
        return original(*args, **kwargs)

    monkeypatch.setattr(loading, "_insert", insert)


def test_an_interrupted_load_is_refused_by_every_reader(engine, tiny_store, target, monkeypatch):
    loaded = workbook.load(tiny_store, "hybrid", target, progress=False)
    _interrupt_after(monkeypatch, 2, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        workbook.load(tiny_store, "hybrid", target, progress=False)
    monkeypatch.undo()
    for name, read in _readers(loaded).items():
        with pytest.raises(NotLoadedError, match="interrupted") as refused:
            read()
        assert f"workbook.load('store', 'hybrid', workbook.connect(database='{target.name.split('_')[-1]}')" in (
            refused.value.fix or ""
        ), name
    again = workbook.load(tiny_store, "hybrid", target, progress=False)  # the fix works at once
    assert again.check() is again and again["reviews"].count_documents({}) == len(tiny_store.collections["reviews"])


def test_a_killed_load_is_refused_and_blocks_a_second_load_until_its_lease_ends(
    engine, tiny_store, target, monkeypatch
):
    monkeypatch.setattr(loading.Lease, "give_up", lambda self: None)  # kill -9: nothing runs after the crash
    _interrupt_after(monkeypatch, 2, SystemExit(9))
    with pytest.raises(SystemExit):
        workbook.load(tiny_store, "referenced", target, progress=False)
    monkeypatch.undo()
    with pytest.raises(NotLoadedError, match="has not finished"):
        LoadedShape.open(target)
    with pytest.raises(LoadInProgressError, match="right now"):
        workbook.load(tiny_store, "referenced", target, progress=False)
    monkeypatch.setattr("workbook.loaded.LEASE_SECONDS", 0)  # the crashed load's lease has run out
    assert workbook.load(tiny_store, "referenced", target, progress=False).check()


def test_concurrent_loads_of_one_target_are_refused_clearly(engine, tiny_store, target, monkeypatch):
    started, release = threading.Event(), threading.Event()
    original = loading._insert

    def slow_insert(*args, **kwargs):
        if threading.current_thread().name == "first-load":
            started.set()
            release.wait(30)
        return original(*args, **kwargs)

    monkeypatch.setattr(loading, "_insert", slow_insert)
    results = {}
    first = threading.Thread(
        target=lambda: results.setdefault("first", workbook.load(tiny_store, "hybrid", target, progress=False)),
        name="first-load",
    )
    first.start()
    assert started.wait(30)
    try:
        with pytest.raises(LoadInProgressError, match="two loads at once would leave a mix"):
            workbook.load(tiny_store, "hybrid", target, progress=False)
        with pytest.raises(NotLoadedError, match="has not finished"):
            LoadedShape.open(target)  # a reader meanwhile sees an unfinished load, not a half-built one
    finally:
        release.set()
        first.join(60)
    loaded = results["first"].check()
    counts = {c.collection: c.documents for c in loaded.report.collections}
    assert counts == {name: loaded[name].count_documents({}) for name in loaded.collection_names}
    assert counts["orders"] == len(tiny_store.collections["orders"]) > 0
    assert {i["name"] for i in loaded["orders"].list_indexes()} >= {"customer_newest", "created"}


def test_a_load_that_lost_its_lease_fails_instead_of_overwriting(engine, tiny_store, target, monkeypatch):
    original = loading._insert

    def stolen(db, *args, **kwargs):
        db[MARKER_COLLECTION].update_one({"_id": "load"}, {"$set": {"token": "someone else"}})
        return original(db, *args, **kwargs)

    monkeypatch.setattr(loading, "_insert", stolen)
    with pytest.raises(LoadInProgressError, match="lost its lease"):
        workbook.load(tiny_store, "hybrid", target, progress=False)


def test_the_completion_record_says_what_was_loaded(engine, tiny_store, target):
    loaded = workbook.load(tiny_store, "embedded", target, progress=False)
    marker = target[MARKER_COLLECTION].find_one({"_id": "load"})
    assert marker["state"] == "complete"
    assert (marker["dataset"], marker["scale"], marker["seed"], marker["shape"]) == ("store", "tiny", 7, "embedded")
    assert marker["workbook"] == workbook.__version__ and marker["generator"] >= 1
    counts = {c["collection"]: c["documents"] for c in marker["collections"]}
    assert counts == {name: len(docs) for name, docs in loaded.spec.build(tiny_store).items()}
    assert LoadedShape.open(target).to_frame().equals(loaded.to_frame())


def test_loading_another_dataset_replaces_what_was_there(engine, tiny_store, target):
    store = workbook.load(tiny_store, "hybrid", target, progress=False)
    target.notes.insert_one({"_id": "mine"})
    followers = workbook.load(workbook.generate("followers", "tiny", 7), "referenced", target, progress=False)
    assert followers.report.replaced == "store/hybrid" and "replaced store/hybrid" in followers.summary()
    names = set(target.list_collection_names())
    assert names == {"users", "follows", "notes", MARKER_COLLECTION}  # no store collection left, notes kept
    with pytest.raises(NotLoadedError, match="replaced it with the followers dataset"):
        store.check()
    with pytest.raises(WorkbookError, match="mixes datasets"):
        workbook.run_workload([followers, workbook.load(tiny_store, "embedded", progress=False)])


def test_wrong_types_where_loaded_shapes_are_expected(engine, tiny_store, target):
    loaded = workbook.load(tiny_store, "hybrid", target, progress=False)
    with pytest.raises(ArgumentTypeError, match="shapes must be what workbook.load"):
        workbook.run_workload("hybrid")
    with pytest.raises(ArgumentTypeError, match="shapes must be"):
        workbook.size_table(None)
    with pytest.raises(WorkbookError, match="twice"):
        workbook.run_workload([loaded, loaded])
    with pytest.raises(ArgumentTypeError, match="dataset must be"):
        workbook.load(None, "hybrid")
    with pytest.raises(ArgumentTypeError, match="db must be a pymongo Database"):
        workbook.load(tiny_store, "hybrid", "workbench_pytest_x")
    with pytest.raises(ArgumentTypeError, match="shape must be one shape name"):
        workbook.load(tiny_store, ["hybrid"])
    with pytest.raises(ArgumentTypeError, match="repeat must be a whole number"):
        workbook.run_workload(loaded, repeat="10")
    with pytest.raises(ArgumentTypeError, match="operations must be a list"):
        workbook.run_workload(loaded, operations="product_page")


# --- 15.7: operation arguments are type-checked before anything reaches the database


@pytest.fixture(scope="module")
def store_shapes():
    store = workbook.generate("store", scale="tiny", seed=7)
    shapes = {shape: workbook.load(store, shape, progress=False) for shape in workbook.SHAPE_NAMES}
    yield shapes
    for loaded in shapes.values():
        loaded.db.client.drop_database(loaded.db.name)


HOSTILE = [
    ("product_page", ({"$ne": None},), "product_id must be a string"),
    ("change_price", ({"$exists": True}, 1.0), "product_id must be a string"),
    ("change_price", ("prod-000001", "9.99"), "price must be a number"),
    ("change_price", ("prod-000001", float("inf")), "price must be a number"),
    ("place_order", ("cust-000001", [("prod-000001", "x")]), "items must be a list of"),
    ("place_order", ("cust-000001", [("prod-000001", True)]), "items must be a list of"),
    ("place_order", ({"$gt": ""}, [("prod-000001", 1)]), "customer_id must be a string"),
    ("place_order", ("cust-000001", "prod-000001"), "items must be a list of"),
    ("my_orders", ("cust-000001",), None),
    ("my_orders", ("cust-000001", "10"), "limit must be a whole number"),
    ("category_listing", ("cat-01", -1), "page must be a whole number >= 0"),
    ("add_review", ("prod-000001", {"$ne": None}, 5, "x"), "customer_id must be a string"),
    ("monthly_sales_report", ("2025", 1), "year must be a whole number"),
]


@pytest.mark.parametrize("shape", ["embedded", "hybrid"])
@pytest.mark.parametrize(("operation", "args", "message"), HOSTILE)
def test_hostile_store_arguments_are_refused_before_any_write(store_shapes, shape, operation, args, message):
    loaded = store_shapes[shape]
    before = fingerprint(loaded.db.client, loaded.db.name)
    if message is None:
        loaded.ops.run(operation, *args)  # a well-typed call still works
        return
    with pytest.raises(ArgumentTypeError, match=message) as refused:
        loaded.ops.run(operation, *args)
    assert refused.value.fix and f"Call it as {operation}(" in refused.value.fix
    assert fingerprint(loaded.db.client, loaded.db.name) == before


def test_an_order_of_nothing_is_refused_and_stores_nothing(store_shapes):
    orders = store_shapes["hybrid"]["orders"]
    count = orders.count_documents({})
    with pytest.raises(OperationRejectedError, match="at least 1"):
        store_shapes["hybrid"].ops.place_order("cust-000001", [("prod-000001", 0)])
    with pytest.raises(OperationRejectedError, match="month is 1 to 12"):
        store_shapes["hybrid"].ops.monthly_sales_report(2025, 13)
    assert orders.count_documents({}) == count


def test_every_operation_of_every_dataset_checks_its_arguments():
    from workbook.dataset_parts import REGISTERED
    from workbook.datasets.registry import DATASETS

    for dataset in DATASETS:
        for shape, cls in REGISTERED[dataset].operations().items():
            for name in cls.NAMES:
                assert hasattr(getattr(cls, name), "__wrapped__"), f"{dataset} {shape} {name} is not checked"


def test_followers_and_parts_ids_must_be_strings(tiny_store, target):
    followers = workbook.load(workbook.generate("followers", "tiny", 7), "hybrid", target, progress=False)
    with pytest.raises(ArgumentTypeError, match="follower_id must be a string"):
        followers.ops.follow({"$gt": ""}, "user-000001")
    parts = workbook.load(workbook.generate("parts", "tiny", 7), "embedded", target, progress=False)
    with pytest.raises(ArgumentTypeError, match="part_id must be a string"):
        parts.ops.rename_part({"$ne": None}, "renamed")


def test_a_database_name_must_be_a_string():
    with pytest.raises(ArgumentTypeError, match="database must be a short name such as 'store_hybrid'"):
        workbook.connect(database=5, quiet=True)


def test_every_exception_class_lives_in_errors():
    import ast
    from pathlib import Path

    package = Path(workbook.__file__).parent
    elsewhere = []
    for path in package.rglob("*.py"):
        if path.name == "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                getattr(base, "id", getattr(base, "attr", "")).endswith(("Error", "Exception")) for base in node.bases
            ):
                elsewhere.append(f"{path.relative_to(package)}:{node.name}")
    assert elsewhere == []


def test_the_quiz_grades_on_a_loaded_shape_and_refuses_an_unfinished_one(tiny_store, target, monkeypatch):
    import workbook.quiz

    loaded = workbook.load(tiny_store, "referenced", target, progress=False)
    result = workbook.quiz.check("design-category-index", db=loaded, record=False)
    assert result.correct and result.facts["nReturned"] > 0  # graded on loaded.db's products and their index
    _interrupt_after(monkeypatch, 1, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        workbook.load(tiny_store, "referenced", target, progress=False)
    with pytest.raises(NotLoadedError, match="interrupted"):
        workbook.quiz.check("design-category-index", db=loaded, record=False)


def test_find_loaded_gives_back_what_earlier_loads_left_and_names_the_missing_one(monkeypatch):
    monkeypatch.setenv("WORKBOOK_LEARNER", "finder")
    monkeypatch.delenv("MONGODB_URI", raising=False)
    try:
        loaded = workbook.load("followers", "hybrid", scale="tiny", progress=False)
        (found,) = workbook.find_loaded("followers", ["hybrid"])
        assert (found.db.name, found.dataset, found.shape) == (loaded.db.name, "followers", "hybrid")
        assert found.to_frame()["documents"].equals(loaded.to_frame()["documents"])
        with pytest.raises(NotLoadedError) as missing:
            workbook.find_loaded("followers")  # embedded was never loaded
        assert "workbook.load('followers', 'embedded')" in (missing.value.fix or "")
        with pytest.raises(workbook.UnknownChoiceError, match="Did you mean 'users'"):
            found["user"]
    finally:
        workbook.reset()


# --- issue 24: interrupted loads recover (a reset is a reset; a dead holder's lease is taken over at once)


def test_a_reset_during_a_load_is_reported_as_a_reset(engine, tiny_store, target, monkeypatch):
    original, seen = loading._insert, []

    def insert_then_reset(db, *args, **kwargs):
        seen.append(1)
        if len(seen) == 2:
            workbook.reset()  # the learner resets while the load runs (another cell, another kernel)
        return original(db, *args, **kwargs)

    monkeypatch.setattr(loading, "_insert", insert_then_reset)
    with pytest.raises(workbook.errors.LoadInterruptedError, match="was dropped while this load") as stopped:
        workbook.load(tiny_store, "hybrid", target, progress=False)
    assert "another load" not in str(stopped.value)
    assert target[MARKER_COLLECTION].find_one() is None
    assert target.list_collection_names() == [], "what the load wrote after the reset is dropped too"
    monkeypatch.undo()
    assert workbook.load(tiny_store, "hybrid", target, progress=False).check()  # and a new load starts at once


def _crashed_lease(target, **holder):
    """A load record as a load killed with kill -9 leaves it: still loading, heartbeat fresh."""
    from datetime import UTC, datetime

    target[MARKER_COLLECTION].replace_one(
        {"_id": "load"},
        {
            "_id": "load",
            "state": "loading",
            "dataset": "store",
            "shape": "hybrid",
            "scale": "tiny",
            "seed": 7,
            "token": "crashed",
            "heartbeat": datetime.now(UTC),
            **holder,
        },
        upsert=True,
    )


def test_a_lease_held_by_a_dead_process_on_this_host_is_taken_over_at_once(engine, tiny_store, target):
    import socket

    from workbook.loaded import _process_start

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # its pid now names no running process
    _crashed_lease(target, host=socket.gethostname(), pid=child.pid, by=f"{socket.gethostname()} pid {child.pid}")
    assert workbook.load(tiny_store, "hybrid", target, progress=False).check()
    # a live holder on this host (same pid, same start time) is respected
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        _crashed_lease(target, host=socket.gethostname(), pid=sleeper.pid, pid_start=_process_start(sleeper.pid))
        with pytest.raises(LoadInProgressError, match="right now"):
            workbook.load(tiny_store, "hybrid", target, progress=False)
        # the same pid with another start time is a reused pid: the holder is dead
        _crashed_lease(target, host=socket.gethostname(), pid=sleeper.pid, pid_start="1")
        assert workbook.load(tiny_store, "hybrid", target, progress=False).check()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_lease_from_another_host_waits_on_a_clock_the_message_states(engine, tiny_store, target, monkeypatch):
    _crashed_lease(target, host="other-machine.example", pid=1, by="other-machine.example pid 1")
    with pytest.raises(LoadInProgressError) as refused:
        workbook.load(tiny_store, "hybrid", target, progress=False)
    fix = refused.value.fix or ""
    assert "other-machine.example" in fix and "UTC" in fix and "120 s after its last renewal" in fix
    monkeypatch.setattr("workbook.loaded.LEASE_SECONDS", 0)  # that clock has run out
    assert workbook.load(tiny_store, "hybrid", target, progress=False).check()


def test_a_lease_lost_to_another_load_still_says_so(engine, tiny_store, target, monkeypatch):
    original = loading._insert

    def stolen(db, *args, **kwargs):
        db[MARKER_COLLECTION].update_one({"_id": "load"}, {"$set": {"token": "someone else", "by": "box pid 42"}})
        return original(db, *args, **kwargs)

    monkeypatch.setattr(loading, "_insert", stolen)
    with pytest.raises(LoadInProgressError, match=r"lost its lease to another load \(box pid 42"):
        workbook.load(tiny_store, "hybrid", target, progress=False)

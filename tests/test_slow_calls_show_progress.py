"""Each call a notebook cell makes that was silent for over a second now runs under a bar.

Each call is made slow on purpose (a slow fake in its path) and the bars sent to a buffer, so the
test is about what shows: a bar naming the work when the call is slow, nothing when it is quick.
"""

from __future__ import annotations

import re
import time
import uuid
from typing import Any

import workbook
from workbook import connection, waiting
from workbook.datasets import registry


def slowed(function: Any, seconds: float) -> Any:
    def slow(*args: Any, **kwargs: Any) -> Any:
        time.sleep(seconds)
        return function(*args, **kwargs)

    return slow


def test_the_engine_start_shows_a_bar_when_slow_and_nothing_when_quick(shown, monkeypatch) -> None:
    started = connection.offline_server()  # already running here: the quick case
    connection._offline_client().close()
    assert shown.getvalue() == ""
    monkeypatch.setattr(waiting, "in_kernel", lambda: True)  # as in a notebook (its bar: text here, to the buffer)
    monkeypatch.setattr(connection, "offline_server", slowed(lambda: started, 1.2))  # a slow first start
    connection._offline_client().close()
    assert "starting the offline engine (once per kernel): 00:00 (usually about 2 s)" in shown.getvalue()


def test_generate_shows_its_estimate_when_slow_and_nothing_when_quick(shown, monkeypatch) -> None:
    quick = workbook.generate("followers", scale="tiny")
    assert shown.getvalue() == ""
    spec = registry.DATASETS["followers"]
    slow = registry.DatasetSpec(spec.name, spec.description, spec.sizes, slowed(spec.build, 1.3))
    monkeypatch.setitem(registry.DATASETS, "followers", slow)
    again = workbook.generate("followers", scale="tiny")
    assert re.search(r"generate followers at tiny: 00:0[01] \(usually about 0\.0 s\)", shown.getvalue())
    assert again.collections == quick.collections  # the same bytes, bar or not
    shown.truncate(0)
    workbook.generate("followers", scale="tiny", progress=False)
    assert shown.getvalue() == ""


def test_a_layout_load_and_the_layout_table_show_their_steps_when_slow(shown, monkeypatch) -> None:
    from workbook import loading
    from workbook.patterns import layouts

    followers = workbook.generate("followers", scale="tiny", seed=7, progress=False)
    db = workbook.connect(database=f"t{uuid.uuid4().hex[:8]}", quiet=True)
    try:
        layouts.load_layout(followers, "bucket", db, size=5)
        assert shown.getvalue() == ""  # tiny: quick, silent
        monkeypatch.setattr(loading, "fill", slowed(loading.fill, 0.7))  # each collection stored slowly
        bucket = layouts.load_layout(followers, "bucket", db, size=5)
        assert re.search(r"load the bucket layout: +67%", shown.getvalue())  # shown while the second is stored
        shown.truncate(0)
        monkeypatch.setattr(layouts, "largest_document_bytes", slowed(layouts.largest_document_bytes, 1.2))
        top = followers.collections["users"][0]["_id"]
        layouts.layout_table([bucket], top, top, deep_page=1)
        assert "measure three pages in each:   0%" in shown.getvalue()
    finally:
        db.client.drop_database(db.name)


def test_the_doctor_shows_its_checks_when_slow_and_nothing_when_quick(shown, monkeypatch) -> None:
    from workbook.schema_doctor import examine

    loaded = workbook.load("followers", "embedded", workbook.connect(database=f"t{uuid.uuid4().hex[:8]}", quiet=True),
                           scale="tiny", progress=False)  # fmt: skip
    try:
        quick = workbook.doctor(loaded)
        assert shown.getvalue() == ""
        monkeypatch.setattr(examine, "check_arrays", slowed(examine.check_arrays, 1.3))  # the third check
        slow = workbook.doctor(loaded)
        assert re.search(r"doctor workbench_\w+: +25%.*arrays", shown.getvalue())
        assert [f.kind for f in slow.findings] == [f.kind for f in quick.findings]  # the same report
    finally:
        loaded.db.client.drop_database(loaded.db.name)


def test_adding_a_normalised_field_shows_a_bar_when_slow_and_nothing_when_quick(shown, monkeypatch, db) -> None:
    from workbook.lessons import search

    names = ["Ann Lee", "Bob Stone", "Cleo Park", "Dan Ray", "Eve Moss", "Finn Gray", "Gus Hale", "Hal Roe"]
    db.people.insert_many([{"_id": i, "name": name} for i, name in enumerate(names)])
    quick = search.add_normalised_field(db.people, "name")
    assert shown.getvalue() == ""
    monkeypatch.setattr(search, "bson_size", slowed(search.bson_size, 0.15))  # each document measured slowly
    slow = search.add_normalised_field(db.people, "name")  # the copy is there already: nothing added
    assert "add nameLower to every document: 00:0" in shown.getvalue()
    assert quick > 0 and slow == 0
    assert db.people.count_documents({"nameLower": "ann lee"}) == 1

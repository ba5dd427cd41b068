"""The garbage-collector pause: restored exactly, nested and concurrent pauses counted."""

from __future__ import annotations

import gc
import threading

import pytest

from workbook.gc_pause import paused


@pytest.fixture(autouse=True)
def collector_state():
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def test_a_pause_restores_a_running_collector_and_freezes_what_it_built() -> None:
    gc.enable()
    frozen_before = gc.get_freeze_count()
    with paused():
        assert not gc.isenabled()
        built = [[i] for i in range(1000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= frozen_before + len(built)


def test_a_pause_leaves_a_stopped_collector_stopped() -> None:
    gc.disable()
    with paused():
        pass
    assert not gc.isenabled()


def test_nested_and_concurrent_pauses_restart_the_collector_once_all_end() -> None:
    gc.enable()
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with paused():
            inside.set()
            release.wait(5)

    thread = threading.Thread(target=other)
    thread.start()
    inside.wait(5)
    with paused():
        with paused():
            pass
        assert not gc.isenabled()
    assert not gc.isenabled()  # the other thread's pause is still running
    release.set()
    thread.join(5)
    assert gc.isenabled()


def test_an_error_inside_still_restarts_the_collector() -> None:
    gc.enable()
    with pytest.raises(ValueError), paused():
        raise ValueError("boom")
    assert gc.isenabled()

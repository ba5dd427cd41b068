"""The memory-per-learner bench row's measuring tool: resident memory read from /proc."""

from __future__ import annotations

import os
import resource
import sys

import pytest

from workbook.dev.bench import _rss_bytes


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_rss_of_this_process_grows_by_what_it_holds_and_stays_under_its_peak():
    before = _rss_bytes(os.getpid())
    held = bytearray(64 * 2**20)
    held[::4096] = b"x" * len(held[::4096])  # touch every page, so it is resident
    after = _rss_bytes(os.getpid())
    assert after - before >= 60 * 2**20
    assert after <= resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 + 2**20
    assert _rss_bytes(2**22 + 12345) == 0  # no such process: nothing, not an error
    del held

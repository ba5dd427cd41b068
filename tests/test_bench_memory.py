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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_childs_peak_is_read_after_the_memory_is_freed():
    """The kernel peak row reads each child's VmHWM: a load's short peak, freed before the next sample of
    its RSS, still counts."""
    import subprocess
    import time

    code = (
        "import time; b = bytearray(96 * 2**20); b[::4096] = b'x' * len(b[::4096]); del b; "
        "print('freed', flush=True); time.sleep(30)"
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "freed"
        time.sleep(0.2)
        now = _rss_bytes(os.getpid(), children_only=True)
        peak = _rss_bytes(os.getpid(), field="VmHWM", children_only=True)
        assert peak - now >= 80 * 2**20, (peak, now)
        assert _rss_bytes(os.getpid(), field="VmHWM", children_only=True) >= peak  # a peak only grows
    finally:
        child.kill()
        child.wait()

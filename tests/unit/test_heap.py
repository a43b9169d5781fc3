"""Handing memory back after a burst (indexer/heap.py)."""

from __future__ import annotations

import time

from codesift.indexer.heap import QuietTrim


def _until(predicate: object, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def test_quiet_trim_trims_once_after_a_pause_and_never_during_a_burst() -> None:
    trim = QuietTrim(quiet_s=1.0)
    assert trim.trims == 0
    end = time.monotonic() + 1.5
    while time.monotonic() < end:  # a burst longer than the pause it waits for
        trim.touch()
        time.sleep(0.05)
    assert trim.trims == 0
    assert _until(lambda: trim.trims == 1)
    time.sleep(1.5)  # nothing new: no second trim
    assert trim.trims == 1
    trim.touch()
    assert _until(lambda: trim.trims == 2)

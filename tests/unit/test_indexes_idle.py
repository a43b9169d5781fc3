"""The idle drop of a project's symbol index and graph: off at 0."""

from __future__ import annotations

import threading

from codesift.server.projects import INDEXES_IDLE_S, watch_indexes_idle


def _watchers() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "codesift-indexes-idle")


def test_zero_keeps_the_indexes_and_the_default_is_an_hour() -> None:
    before = _watchers()
    watch_indexes_idle(list, 0)
    assert _watchers() == before
    watch_indexes_idle(list, 3600)
    assert _watchers() == before + 1
    assert INDEXES_IDLE_S == 3600.0

"""``Lanes``: a burst's name lookups run before the searches that arrived ahead of them."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import pytest

from codesift.server.lanes import NAME, SEARCH, WORDS, Lanes, priority_of


def test_names_waiting_run_before_searches_that_arrived_first_and_ties_keep_their_order() -> None:
    pool = ThreadPoolExecutor(max_workers=1)
    lanes = Lanes(pool.submit)
    busy = threading.Event()
    ran: list[str] = []

    def record(name: str) -> str:
        ran.append(name)
        return name

    try:
        first = lanes.submit(SEARCH, busy.wait)  # holds the one worker while the burst arrives
        futures = [
            lanes.submit(priority, partial(record, name))
            for priority, name in (
                (SEARCH, "json loads"),
                (SEARCH, "open url"),
                (NAME, "Path"),
                (NAME, "Thread"),
            )
        ]
        busy.set()
        assert first.result(5) is True
        assert [f.result(5) for f in futures] == ["json loads", "open url", "Path", "Thread"]
        assert ran == ["Path", "Thread", "json loads", "open url"]
    finally:
        pool.shutdown()


def test_a_failing_job_fails_its_future_only_and_a_shut_pool_refuses() -> None:
    pool = ThreadPoolExecutor(max_workers=1)
    lanes = Lanes(pool.submit)

    def boom() -> int:
        raise ValueError("bad")

    with pytest.raises(ValueError, match="bad"):
        lanes.submit(NAME, boom).result(5)
    assert lanes.submit(NAME, lambda: 7).result(5) == 7
    pool.shutdown()
    with pytest.raises(RuntimeError):
        lanes.submit(NAME, lambda: 8)
    assert not lanes._heap  # the refused job is not left waiting


def test_a_name_comes_before_a_few_words_and_a_sentence_last() -> None:
    assert priority_of(" Path ") == NAME and priority_of("os.path.join") == NAME
    assert priority_of("read config file") == WORDS and priority_of("json loads") == WORDS
    assert priority_of("where is the config file read from") == SEARCH
    assert NAME < WORDS < SEARCH


def test_a_search_waits_while_a_name_runs_even_with_a_worker_free() -> None:
    pool = ThreadPoolExecutor(max_workers=2)
    lanes = Lanes(pool.submit)
    naming = threading.Event()
    release = threading.Event()
    ran: list[str] = []

    def name() -> str:
        naming.set()
        release.wait(5)
        ran.append("name")
        return "name"

    def search() -> str:
        ran.append("search")
        return "search"

    try:
        first = lanes.submit(NAME, name)
        assert naming.wait(5)
        later = lanes.submit(SEARCH, search)
        time.sleep(0.2)
        assert ran == []  # the second worker is free, yet the search has not started
        release.set()
        assert first.result(5) == "name" and later.result(5) == "search"
        assert ran == ["name", "search"]
    finally:
        release.set()
        pool.shutdown()

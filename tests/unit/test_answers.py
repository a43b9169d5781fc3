"""The server's answer cache: remembered by key, computed once for concurrent askers."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from codesift.server.answers import AnswerCache


def test_concurrent_askers_of_one_key_share_one_computation() -> None:
    cache: AnswerCache[int] = AnswerCache()
    calls = 0
    lock = threading.Lock()

    def slow() -> int:
        nonlocal calls
        with lock:
            calls += 1
        time.sleep(0.2)
        return 42

    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda _: cache.get("q", slow), range(8)))
    assert got == [42] * 8 and calls == 1
    assert cache.peek("q") == 42 and cache.peek("other") is None


def test_a_failure_is_seen_by_every_asker_and_not_remembered() -> None:
    cache: AnswerCache[int] = AnswerCache()

    def broken() -> int:
        raise RuntimeError("index gone")

    with pytest.raises(RuntimeError):
        cache.get("q", broken)
    assert cache.peek("q") is None
    assert cache.get("q", lambda: 7) == 7


def test_only_the_most_recent_answers_are_kept() -> None:
    cache: AnswerCache[int] = AnswerCache(size=2)
    for k in range(3):
        cache.get(k, lambda k=k: k)  # type: ignore[misc]
    assert cache.peek(0) is None and cache.peek(1) == 1 and cache.peek(2) == 2
    cache.clear()
    assert cache.peek(2) is None

"""The server's answer cache: remembered by key, computed once for concurrent askers."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

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


def test_copies_of_a_question_being_computed_wait_without_taking_a_worker() -> None:
    # A burst of workspace/symbol: copies of a slow question must not fill the pool and
    # queue the other questions behind them.
    cache: AnswerCache[int] = AnswerCache()
    release = threading.Event()
    submitted: list[object] = []
    with ThreadPoolExecutor(2) as pool:

        def submit(fn: Callable[[], int]) -> Future[int]:
            submitted.append(fn)
            return pool.submit(fn)

        slow = cache.share("slow", lambda: 1 if release.wait(5) else 0, submit)
        copies = [cache.share("slow", lambda: 2, submit) for _ in range(5)]
        quick = cache.share("quick", lambda: 3, submit)
        assert quick.result(5) == 3 and not slow.done()  # answered beside the slow one
        release.set()
        assert slow.result(5) == 1 and all(c is slow for c in copies)
    assert len(submitted) == 2
    assert cache.share("slow", lambda: 9, submit).result() == 1  # remembered


def test_a_shared_failure_reaches_every_asker_and_is_not_remembered() -> None:
    cache: AnswerCache[int] = AnswerCache()

    def broken() -> int:
        raise RuntimeError("index gone")

    with ThreadPoolExecutor(1) as pool:
        with pytest.raises(RuntimeError):
            cache.share("q", broken, pool.submit).result(5)
        assert cache.peek("q") is None
        assert cache.share("q", lambda: 7, pool.submit).result(5) == 7


def test_an_answer_whose_rest_runs_as_a_later_job_is_shared_until_the_rest_is_done() -> None:
    # workspace/symbol: a question's names are found in one job and its search part,
    # when it needs one, runs as a later job; askers wait for the whole answer.
    cache: AnswerCache[str] = AnswerCache()
    rests: list[Future[str]] = []

    def names_then_rest() -> Future[str]:
        rest: Future[str] = Future()
        rests.append(rest)
        return rest

    def run_now(fn: Callable[[], object]) -> None:
        fn()

    first = cache.share("q", names_then_rest, run_now)
    assert not first.done() and cache.peek("q") is None
    assert cache.share("q", lambda: "again", run_now) is first  # still one computation
    rests[0].set_result("names + search")
    assert first.result(5) == "names + search" and cache.peek("q") == "names + search"
    failing = cache.share("r", names_then_rest, run_now)
    rests[1].set_exception(RuntimeError("search failed"))
    with pytest.raises(RuntimeError):
        failing.result(5)
    assert cache.peek("r") is None  # a failure is not remembered


def test_a_shared_future_cancelled_by_an_asker_leaves_the_answer_remembered() -> None:
    cache: AnswerCache[int] = AnswerCache()
    release = threading.Event()
    jobs: list[Future[object]] = []
    with ThreadPoolExecutor(1) as pool:

        def submit(fn: Callable[[], object]) -> None:
            jobs.append(pool.submit(fn))

        shared = cache.share("q", lambda: 5 if release.wait(5) else 0, submit)
        assert shared.cancel()  # an asker's task was cancelled while it waited
        release.set()
        assert jobs[0].exception(5) is None  # the computing job did not fail setting it
    assert cache.peek("q") == 5

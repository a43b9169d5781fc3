"""Jobs handed to a thread pool best first: a burst's name lookups before its searches.

A burst of ``workspace/symbol`` requests mixes name lookups (a few ms each) with
worded questions (a hybrid search each, ~50 ms of CPU): handed to the pool in the
order they arrived, a name that came after three sentences waited for them. Here
each job goes into a heap and the pool is handed a runner that takes the best job
waiting when a worker is free to run it, so every name waiting is answered before
the next search starts. A search also waits while a name is running: the pool has
more workers than the machine has cores, and a search started beside the names took
its share of the GIL from them (a cold burst's names were answered last of all but
the searches). A job already running is never interrupted.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

from codesift.indexer.search.symbol_words import query_words

V = TypeVar("V")

NAME = 0  # a name lookup: answered first
WORDS = 1  # a few words, each looked up as a name (a search may follow, as a job of its own)
SEARCH = 2  # a hybrid search: a sentence, or the search part of a question


class Lanes:
    """A priority queue in front of a pool's ``submit``: lower priority runs first, ties in order."""

    def __init__(self, submit: Callable[[Callable[[], None]], object]) -> None:
        self._submit = submit
        self._heap: list[tuple[int, int, Callable[[], None]]] = []
        self._order = itertools.count()
        self._lock = threading.Lock()
        self._running: dict[int, int] = {}  # priority → jobs of it running now
        self._deferred = 0  # runners that found only a job that must wait: handed back later

    def submit(self, priority: int, fn: Callable[[], V]) -> Future[V]:
        """Run ``fn`` on the pool once no job of a lower priority number waits; its future."""
        future: Future[V] = Future()

        def job() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn())
            except BaseException as exc:
                future.set_exception(exc)

        with self._lock:
            heapq.heappush(self._heap, (priority, next(self._order), job))
        try:
            self._submit(self._run_best)
        except BaseException:  # a pool shut down: take the job back, nobody will run it
            with self._lock:
                self._heap = [entry for entry in self._heap if entry[2] is not job]
                heapq.heapify(self._heap)
            raise
        return future

    def _run_best(self) -> None:
        with self._lock:
            priority = self._heap[0][0]
            if any(p < priority and n for p, n in self._running.items()):
                self._deferred += 1  # a better lane's job runs: this runner comes back after it
                return
            _, _, job = heapq.heappop(self._heap)
            self._running[priority] = self._running.get(priority, 0) + 1
        try:
            job()
        finally:
            with self._lock:
                self._running[priority] -= 1
                again, self._deferred = self._deferred, 0
            for _ in range(again):
                with contextlib.suppress(RuntimeError):  # the pool shut down meanwhile
                    self._submit(self._run_best)


def priority_of(query: str) -> int:
    """A query without a space is a name; a few words are names by words; a longer
    sentence is a hybrid search."""
    query = query.strip()
    if " " not in query:
        return NAME
    return WORDS if query_words(query) else SEARCH

"""Answers remembered while the index stays the same, each computed once when asked at once.

Search-as-you-type and several editor windows send the same ``workspace/symbol``
question many times in a burst; each copy used to be computed again, so 200
concurrent requests queued behind each other (p50 ~1 s on the stdlib). The key
holds what the answer depends on (the query, the index's table versions, the
unsaved buffers), so a remembered answer is never stale: a save moves a version.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import CancelledError, Future
from functools import partial
from typing import Generic, TypeVar

V = TypeVar("V")

# A burst repeats a few questions (the bench's: 20); an answer of 100 symbols is ~30 KB.
SIZE = 64


class AnswerCache(Generic[V]):
    """The last ``size`` answers by key; concurrent askers of one key share one computation."""

    def __init__(self, size: int = SIZE) -> None:
        self._size = size
        self._done: OrderedDict[Hashable, V] = OrderedDict()
        self._running: dict[Hashable, Future[V]] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable, compute: Callable[[], V]) -> V:
        """The answer for ``key``: remembered, being computed by another thread (waited
        for), or computed here. A failure is not remembered: each asker sees it."""
        with self._lock:
            if key in self._done:
                self._done.move_to_end(key)
                return self._done[key]
            running = self._running.get(key)
            if running is None:
                mine: Future[V] = Future()
                self._running[key] = mine
        if running is not None:
            return running.result()
        return self._compute(key, compute, mine)

    def share(
        self,
        key: Hashable,
        compute: Callable[[], V | Future[V]],
        submit: Callable[[Callable[[], None]], object],
    ) -> Future[V]:
        """The answer for ``key`` as a future, without blocking: remembered (done), being
        computed for another asker (shared), or handed to ``submit`` (a thread pool's) now.
        An asker that waits holds no worker thread: in a burst, the copies of a slow
        question used to take every worker and queue answered questions behind them.
        ``compute`` may hand the rest of its work to a later job: it returns that job's
        future, and the answer is that future's result."""
        with self._lock:
            if key in self._done:
                self._done.move_to_end(key)
                done: Future[V] = Future()
                done.set_result(self._done[key])
                return done
            running = self._running.get(key)
            if running is not None:
                return running
            mine: Future[V] = Future()
            self._running[key] = mine
        try:
            submit(lambda: self._compute_shared(key, compute, mine))
        except BaseException as exc:  # a pool shut down: nobody will compute it
            with self._lock:
                self._running.pop(key, None)
            mine.set_exception(exc)
        return mine

    def _compute(self, key: Hashable, compute: Callable[[], V], mine: Future[V]) -> V:
        try:
            value = compute()
        except BaseException as exc:
            self._failed(key, mine, exc)
            raise
        self._remember(key, mine, value)
        return value

    def _compute_shared(self, key: Hashable, compute: Callable[[], V | Future[V]], mine: Future[V]) -> None:
        try:
            value = compute()
        except BaseException as exc:
            self._failed(key, mine, exc)
            raise
        if isinstance(value, Future):  # the rest runs as a later job
            value.add_done_callback(partial(self._rest_done, key, mine))
        else:
            self._remember(key, mine, value)

    def _rest_done(self, key: Hashable, mine: Future[V], rest: Future[V]) -> None:
        failure = CancelledError() if rest.cancelled() else rest.exception()
        if failure is not None:
            self._failed(key, mine, failure)
        else:
            self._remember(key, mine, rest.result())

    def _failed(self, key: Hashable, mine: Future[V], exc: BaseException) -> None:
        with self._lock:
            self._running.pop(key, None)
        if not mine.cancelled():
            mine.set_exception(exc)

    def _remember(self, key: Hashable, mine: Future[V], value: V) -> None:
        with self._lock:
            self._done[key] = value
            while len(self._done) > self._size:
                self._done.popitem(last=False)
            self._running.pop(key, None)
        # a shared future an asker cancelled (pygls cancels the task awaiting it) is left
        # cancelled: the answer is still remembered for the next asker
        if not mine.cancelled():
            mine.set_result(value)

    def peek(self, key: Hashable) -> V | None:
        """The remembered answer for ``key``, without waiting or computing."""
        with self._lock:
            return self._done.get(key)

    def clear(self) -> None:
        with self._lock:
            self._done.clear()

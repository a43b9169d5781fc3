"""Handing memory back: glibc keeps freed heap pages unless asked, and a long-lived
server that builds its in-memory indexes from Arrow columns frees far more than it keeps."""

from __future__ import annotations

import contextlib
import ctypes
import gc
import threading
import time
from collections.abc import Iterator

# Line and column numbers below this share one int object each (a tuple of them costs
# ~2.3 MiB); a fresh int per row cost the stdlib's 719k edges and 129k symbols ~36 MiB.
_SHARED_INTS = tuple(range(1 << 16))


def shared_int(value: int | None) -> int:
    """``value`` (``None`` → 0) as one shared int object when it is small enough."""
    v = int(value or 0)
    return _SHARED_INTS[v] if 0 <= v < len(_SHARED_INTS) else v


def release_memory(*, collect: bool = True) -> None:
    """Hand freed heap pages back to the OS (glibc keeps them otherwise): after a burst
    of work, e.g. a batch of saved files re-indexed or an in-memory index built.
    ``collect=False`` skips the cycle collection (a second or so over a graph's
    million objects) when what was freed had no cycles."""
    if collect:
        gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


class QuietTrim:
    """Hands freed heap pages back once activity has paused for ``quiet_s`` seconds:
    a burst of requests frees most of what it allocated (Arrow reads, answers, their
    JSON), and glibc keeps those pages until asked. ``touch`` marks activity; a daemon
    thread, started by the first touch, trims (``release_memory`` without a cycle
    collection) once per pause."""

    def __init__(self, quiet_s: float = 2.0) -> None:
        self.quiet_s = quiet_s
        self.trims = 0
        self._last = 0.0
        self._pending = False
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def touch(self) -> None:
        """Something was done: trim after the next pause."""
        self._last = time.monotonic()
        self._pending = True
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._loop, name="codesift-trim", daemon=True)
                    self._thread.start()

    def _loop(self) -> None:
        while True:
            time.sleep(self.quiet_s / 2)
            if self._pending and time.monotonic() - self._last >= self.quiet_s:
                self._pending = False
                release_memory(collect=False)
                self.trims += 1


_pool_lock = threading.Lock()
_pool_users = 0
_pool_before: object = None


@contextlib.contextmanager
def arrow_on_system_pool() -> Iterator[None]:
    """Arrow buffers made inside come from glibc's heap, which ``release_memory`` trims.
    Arrow's default pool (mimalloc) kept ~60 MiB of the graph's freed encoding buffers
    of the stdlib's edges. A buffer is freed to the pool that made it, so another
    thread's buffers made meanwhile are only on a different heap."""
    import pyarrow as pa

    global _pool_users, _pool_before
    with _pool_lock:
        if _pool_users == 0:
            _pool_before = pa.default_memory_pool()
            pa.set_memory_pool(pa.system_memory_pool())
        _pool_users += 1
    try:
        yield
    finally:
        with _pool_lock:
            _pool_users -= 1
            if _pool_users == 0:
                pa.set_memory_pool(_pool_before)
                _pool_before = None

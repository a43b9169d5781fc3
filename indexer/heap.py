"""Handing memory back: glibc keeps freed heap pages unless asked, and a long-lived
server that builds its in-memory indexes from Arrow columns frees far more than it keeps."""

from __future__ import annotations

import array
import contextlib
import ctypes
import gc
import mmap
import threading
import time
from collections.abc import Callable, Collection, Iterator
from typing import BinaryIO


def release_memory(*, collect: bool = True) -> None:
    """Hand freed heap pages back to the OS (glibc keeps them otherwise): after a burst
    of work, e.g. a batch of saved files re-indexed or an in-memory index built.
    ``collect=False`` skips the cycle collection (a second or so over a graph's
    million objects) when what was freed had no cycles."""
    if collect:
        gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


M_ARENA_MAX = -8  # glibc's mallopt parameter


def limit_malloc_arenas(arenas: int) -> bool:
    """Let glibc's malloc make at most ``arenas`` arenas from now on (``mallopt``, the
    run-time twin of ``MALLOC_ARENA_MAX``); threads that have none yet share those. For
    a process whose many native threads come later (LanceDB's runtime): its default, 8 a
    core, gave each thread an arena of its own, and the vectors phase of ``codesift
    index`` left free memory in one that another could not reuse. Returns whether glibc
    took it (False off glibc)."""
    try:
        return bool(ctypes.CDLL("libc.so.6").mallopt(M_ARENA_MAX, arenas))
    except (OSError, AttributeError):
        return False


def keep_long_lived() -> None:
    """Move every object the cycle collector tracks now into its permanent generation
    (``gc.freeze``): called right after a long-lived in-memory index is built, so a full
    collection no longer walks it. The stdlib's symbol table alone is ~385k tracked
    objects, and each full collection over them took ~145 ms with the GIL held,
    stalling every request that came meanwhile. Frozen objects are still freed by
    reference counting when the index is dropped (its objects form no cycles)."""
    gc.freeze()


MADV_DONTNEED = 4  # Linux's value on every architecture this runs on
# /proc/self/pagemap, one 64-bit entry a page: bit 63 "present", bit 61 "a file page (or
# shared anonymous)". A present page without bit 61 in a file mapping is a private
# copy-on-write page: the process wrote to it, and dropping it would lose the write.
_PRESENT = 1 << 63
_FILE_PAGE = 1 << 61


def _written(pagemap: BinaryIO, start: int, length: int, page: int) -> bool:
    """Whether any page of this process's range [start, start + length) is a private copy
    (present, and not the file's): its pagemap entries, 8 bytes a page (~90 KB for the
    47 MB table, where /proc/self/smaps walks every mapping's page tables)."""
    entries = array.array("Q")
    pagemap.seek(start // page * 8)
    entries.frombytes(pagemap.read(length // page * 8))
    return any(e & (_PRESENT | _FILE_PAGE) == _PRESENT for e in entries)


def _clean_mappings(paths: Collection[str]) -> list[tuple[int, int]]:
    """(start, length) of each mapping of one of ``paths`` in this process that holds only
    the file's own pages (no copy-on-write page)."""
    page = mmap.PAGESIZE
    found: list[tuple[int, int]] = []
    with open("/proc/self/maps", encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            head = line.split(maxsplit=5)
            if len(head) == 6 and head[5].rstrip("\n") in paths:
                start, _, end = head[0].partition("-")
                found.append((int(start, 16), int(end, 16) - int(start, 16)))
    if not found:
        return found
    with open("/proc/self/pagemap", "rb", buffering=0) as pagemap:
        return [(at, length) for at, length in found if not _written(pagemap, at, length, page)]


def drop_file_pages(paths: Collection[str]) -> int:
    """Unmap the resident pages of this process's mappings of the files ``paths`` (real
    paths, as /proc/self/maps shows them), with ``madvise(MADV_DONTNEED)``: the next read
    of a page maps it again from the page cache, at a minor fault's cost. Only mappings
    that hold nothing but the file's own pages are touched, so nothing a process wrote is
    ever lost. For onnxruntime's memory-mapped model weights: a few queries fault most of
    the 47 MB word-embedding table in (the page cache's large folios map megabytes a
    token), and RSS counts those pages although every process shares them and the kernel
    may take them back. Returns the bytes of mappings advised (0 off Linux)."""
    if not paths:
        return 0
    try:
        mappings = _clean_mappings(paths)
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        return 0
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return sum(length for start, length in mappings if libc.madvise(start, length, MADV_DONTNEED) == 0)


class QuietTrim:
    """Hands freed heap pages back once activity has paused for ``quiet_s`` seconds:
    a burst of requests frees most of what it allocated (Arrow reads, answers, their
    JSON), and glibc keeps those pages until asked. ``touch`` marks activity; a daemon
    thread, started by the first touch, trims (``release_memory`` without a cycle
    collection) once per pause, then calls ``after_trim`` (the server's: unmap the
    loaded models' memory-mapped weights, ``drop_file_pages``)."""

    def __init__(self, quiet_s: float = 2.0, after_trim: Callable[[], object] | None = None) -> None:
        self.quiet_s = quiet_s
        self.after_trim = after_trim
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
                if self.after_trim is not None:
                    with contextlib.suppress(Exception):  # a trim never stops the server
                        self.after_trim()
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

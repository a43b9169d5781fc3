"""Handing memory back after a burst (indexer/heap.py)."""

from __future__ import annotations

import mmap
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codesift.indexer.heap import QuietTrim, drop_file_pages

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/smaps")


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


def _resident_kib(path: Path) -> int:
    """Resident KiB of this process's mappings of ``path``, from /proc/self/smaps."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text(errors="replace").splitlines():
        head = line.split(maxsplit=5)
        if head and not head[0].endswith(":"):
            inside = len(head) == 6 and head[5] == str(path)
        elif inside and head and head[0] == "Rss:":
            total += int(head[1])
    return total


def _weights(tmp_path: Path, pages: int = 64) -> tuple[Path, bytes]:
    data = bytes(range(256)) * (pages * mmap.PAGESIZE // 256)
    path = (tmp_path / "model.onnx.data").resolve()
    path.write_bytes(data)
    return path, data


@linux_only
def test_drop_file_pages_unmaps_a_mapped_files_resident_pages_and_reads_the_same_after(
    tmp_path: Path,
) -> None:
    path, data = _weights(tmp_path)
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY) as mapped:
        assert bytes(mapped) == data  # every page read: resident
        assert _resident_kib(path) >= len(data) // 1024
        assert drop_file_pages({str(path)}) == len(data)
        assert _resident_kib(path) == 0
        assert bytes(mapped) == data  # mapped again from the page cache
        assert drop_file_pages(set()) == 0
        assert drop_file_pages({str(tmp_path / "other")}) == 0


@linux_only
def test_drop_file_pages_leaves_a_mapping_the_process_wrote_to(tmp_path: Path) -> None:
    path, data = _weights(tmp_path)
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY) as mapped:
        mapped[5] = 0xFF  # a private copy of one page: dropping it would lose the write
        assert drop_file_pages({str(path)}) == 0
        assert mapped[5] == 0xFF and mapped[6:] == data[6:]


@linux_only
def test_quiet_trim_runs_its_after_trim_once_a_pause_came(tmp_path: Path) -> None:
    path, data = _weights(tmp_path)
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY) as mapped:
        trim = QuietTrim(quiet_s=0.5, after_trim=lambda: drop_file_pages([str(path)]))
        assert bytes(mapped) == data
        trim.touch()
        assert _until(lambda: trim.trims == 1)
        assert _resident_kib(path) == 0
        assert bytes(mapped) == data


@linux_only
def test_the_probes_census_places_a_mapped_files_resident_pages_under_its_name(tmp_path: Path) -> None:
    import os

    from bench.server_probe import resident_by_mapping

    path, data = _weights(tmp_path, pages=2048)  # 8 MiB: among any process's largest parts
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY) as mapped:
        assert bytes(mapped) == data
        census = dict(resident_by_mapping(os.getpid(), top=50))
        assert census[str(path)] >= len(data) / 2**20


_ARENAS_PROBE = """
import ctypes, sys, threading
from codesift.indexer.heap import limit_malloc_arenas
if sys.argv[1] == "limit":
    assert limit_malloc_arenas(1)
go = threading.Barrier(8)
def work():
    go.wait()  # all at once: each would take an arena of its own
    keep = [bytes(1000 + i) for i in range(2000)]
    go.wait()
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
ctypes.CDLL("libc.so.6").malloc_stats()
"""


def _arenas(mode: str) -> int:
    """glibc's arenas in a fresh process whose eight threads allocated at once."""
    done = subprocess.run(
        [sys.executable, "-c", _ARENAS_PROBE, mode], capture_output=True, text=True, check=True, timeout=60
    )
    return sum(line.startswith("Arena ") for line in done.stderr.splitlines())


@linux_only
def test_limit_malloc_arenas_makes_threads_that_come_later_share_the_arenas_there_are() -> None:
    assert _arenas("default") > 1
    assert _arenas("limit") == 1

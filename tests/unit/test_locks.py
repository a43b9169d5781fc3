"""``try_flock``: the one non-blocking flock of the writer, cache and socket locks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codesift.indexer.locks import try_flock


def test_try_flock_takes_a_free_lock_and_refuses_a_held_one_until_it_is_released(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    first = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    second = os.open(path, os.O_RDWR)  # another open file description: flock tells them apart
    try:
        assert try_flock(first)
        assert not try_flock(second)
        assert try_flock(first)  # the holder asking again keeps it
        os.close(first)  # closing releases the flock
        first = -1
        assert try_flock(second)
    finally:
        for fd in (first, second):
            if fd >= 0:
                os.close(fd)


def test_try_flock_raises_for_a_descriptor_that_cannot_be_locked() -> None:
    read, write = os.pipe()
    os.close(read)
    os.close(write)
    with pytest.raises(OSError):
        try_flock(read)  # closed: EBADF is a fault, not "held by another"

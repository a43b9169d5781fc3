"""One non-blocking ``flock``: the writer lock, the shared embedding cache's lock and
the background server's socket lock all try first and then wait or give up."""

from __future__ import annotations

import errno
import fcntl


def try_flock(fd: int) -> bool:
    """Take an exclusive ``flock`` on ``fd`` without waiting: True when taken, False when
    another open file description holds it. Any other failure (a bad descriptor…) raises."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            return False
        raise
    return True

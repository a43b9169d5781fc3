"""Crash and failure points for the crash-safety and disk-full tests.

``CODESIFT_KILL_AT=<point>[:<n>]`` makes the process SIGKILL itself the n-th
time (default 1st) it reaches ``point``. Unset — always, outside tests — it
costs one dictionary lookup. The points sit where a real crash hurts most:
between the commits of one file batch, mid-parse and mid-embed.
"""

from __future__ import annotations

import errno
import os
import signal
from collections import Counter

_hits: Counter[str] = Counter()
_fails: Counter[str] = Counter()


def crash_point(point: str) -> None:
    """Die here, hard, if the environment asks for it."""
    spec = os.environ.get("CODESIFT_KILL_AT")
    if not spec:
        return
    name, _, nth = spec.partition(":")
    if name != point:
        return
    _hits[point] += 1
    if _hits[point] >= int(nth or "1"):
        os.kill(os.getpid(), signal.SIGKILL)


def fail_point(point: str) -> None:
    """Fail here as a full disk does, if the environment asks for it.

    ``CODESIFT_FAIL_AT=<point>[:<n>][,<point>[:<n>]…]`` raises ``OSError(ENOSPC)``
    from the n-th time (default 1st) ``point`` is reached on: a full disk stays
    full. Unset — always, outside tests — it costs one dictionary lookup.
    """
    specs = os.environ.get("CODESIFT_FAIL_AT")
    if not specs:
        return
    for spec in specs.split(","):
        name, _, nth = spec.partition(":")
        if name == point:
            _fails[point] += 1
            if _fails[point] >= int(nth or "1"):
                raise OSError(errno.ENOSPC, f"No space left on device (simulated at {point})")

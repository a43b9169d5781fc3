"""Crash points for the crash-safety tests.

``CODESIFT_KILL_AT=<point>[:<n>]`` makes the process SIGKILL itself the n-th
time (default 1st) it reaches ``point``. Unset — always, outside tests — it
costs one dictionary lookup. The points sit where a real crash hurts most:
between the commits of one file batch, mid-parse and mid-embed.
"""

from __future__ import annotations

import os
import signal
from collections import Counter

_hits: Counter[str] = Counter()


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

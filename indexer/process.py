"""This process's place among others: the cores it may use, and ending it with its parent."""

from __future__ import annotations

import os
import threading
import time

# How often a child looks whether its parent is still there.
PARENT_CHECK_S = 1.0


def cores() -> int:
    """Cores this process may run on (os.cpu_count() counts the whole machine)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def exit_with_parent(parent: int, code: int) -> None:
    """Watch, in a daemon thread, for ``parent`` (a pid the parent passed, not one read
    here: a parent killed while this process started has made init the parent already)
    to be gone, then end this process at once with ``code``."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_S)
        os._exit(code)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()

"""Watch a project's files ourselves when the client cannot (Neovim on Linux, for one).

Changes on disk are handed to the project's writer, which debounces and re-indexes
them; paths the walk would leave out (gitignored, excluded, the index itself) are
dropped here so a build writing thousands of ignored files costs nothing.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import watchfiles

from .projects import Project

log = logging.getLogger(__name__)


class FolderWatcher:
    """A thread turning file-system events under a project's root into re-index requests."""

    def __init__(self, project: Project) -> None:
        self._project = project
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"codesift-watch-{project.name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop watching (within a watch step, ~50 ms)."""
        self._stop.set()

    def _run(self) -> None:
        root = self._project.root
        try:
            for changes in watchfiles.watch(
                root, watch_filter=None, debounce=100, stop_event=self._stop, raise_interrupt=False
            ):
                rels = [self._project.relative(Path(p)) for _, p in changes]
                wanted = [r for r in rels if r is not None and self._project.wants_change(r)]
                if wanted:
                    self._project.writer.changed(wanted)
        except Exception as exc:  # a watcher failing must not take the server down
            log.warning("%s: watching files stopped: %s", self._project.name, exc)

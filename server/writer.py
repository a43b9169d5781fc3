"""A project's writer: the single thread that writes its index, one job at a time — the
full index run (text, then vectors, in a child process), debounced re-indexes of saved
files, pending vectors (open and recently saved files first) and a quiet-time
optimisation. Vector filling stops between batches when a save arrives, so a save never
waits for the whole workspace's embeddings."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from codesift.indexer.errors import CodesiftError, IndexMissingError
from codesift.indexer.freshen import embed_vectors, optimize_index, reindex_paths
from codesift.indexer.heap import release_memory
from codesift.indexer.model import IndexReport
from codesift.indexer.paths import index_path
from codesift.indexer.progress import Progress
from codesift.indexer.search.references import file_references

from .child import run_full_index

if TYPE_CHECKING:
    from .projects import Project

log = logging.getLogger(__name__)

DEBOUNCE_S = 0.3
EMBED_STEP_CHUNKS = 16  # chunks between looks at "a save is waiting" (~0.2-0.6 s of embedding)
# Recently saved paths remembered for "their vectors first" (most recent first).
RECENT_PATHS = 200
OPTIMIZE_AFTER_S = 30.0  # fold saved rows into the FTS / vector indices after a quiet spell


@dataclass
class IndexRun:
    """Callbacks and the cancel switch of one full index run (the server's progress bar)."""

    on_progress: Callable[[Progress], None]
    on_done: Callable[[str], None]  # the closing message
    cancel: threading.Event = field(default_factory=threading.Event)


class Writer:
    """The single thread that writes one project's index."""

    def __init__(self, project: Project) -> None:
        self._project = project
        self._cond = threading.Condition()
        self._dirty: set[str] = set()
        self._due = 0.0
        self._run: IndexRun | None = None
        self._interrupt = threading.Event()  # a save is waiting: pause vector filling
        self._stopped = False
        self._vectors_due = False
        self._vectors_paused = False
        self._recent: dict[str, None] = {}  # saved or changed paths, oldest first
        self._optimize_due = 0.0
        self._idle = threading.Event()
        self._idle.set()
        self._thread = threading.Thread(
            target=self._loop, name=f"codesift-writer-{project.name}", daemon=True
        )
        self._thread.start()

    def index(self, run: IndexRun) -> None:
        """Queue a full index run (replacing a queued one that has not started)."""
        with self._cond:
            if self._run is not None:
                self._run.on_done("superseded")
            self._run = run
            self._idle.clear()
            self._interrupt.set()
            self._cond.notify()

    def changed(self, paths: Iterable[str]) -> None:
        """Files were saved, created or deleted: re-index them after a short quiet spell."""
        paths = list(paths)
        with self._cond:
            for path in paths:
                self._recent.pop(path, None)
                self._recent[path] = None
            while len(self._recent) > RECENT_PATHS:
                del self._recent[next(iter(self._recent))]
            self._dirty.update(paths)
            self._due = time.monotonic() + DEBOUNCE_S
            self._idle.clear()
            self._interrupt.set()
            self._cond.notify()

    @property
    def busy(self) -> bool:
        """A job is queued or running."""
        return not self._idle.is_set()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no job is queued or running (tests, shutdown)."""
        return bool(self._idle.wait(timeout))

    def stop(self) -> None:
        """Stop after the current batch; the index stays consistent."""
        with self._cond:
            self._stopped = True
            if self._run is not None:
                self._run.cancel.set()
            self._interrupt.set()
            self._cond.notify()

    def vectors_first(self) -> list[str]:
        """Stored paths whose pending vectors are embedded before the rest: the files
        open in the editor (last opened first), then the recently saved or changed
        ones (last first)."""
        with self._cond:
            recent = list(self._recent)
        opened = list(self._project.open_files)
        ordered = dict.fromkeys(index_path(p) for p in [*reversed(opened), *reversed(recent)])
        return list(ordered)

    def _next(self) -> tuple[str, object] | None:
        with self._cond:
            while True:
                if self._stopped:
                    return None
                now = time.monotonic()
                if self._run is not None:
                    run, self._run = self._run, None
                    self._interrupt.clear()
                    return ("index", run)
                if self._dirty and now >= self._due:
                    paths, self._dirty = sorted(self._dirty), set()
                    self._interrupt.clear()
                    return ("paths", paths)
                if not self._dirty and self._vectors_due:
                    self._vectors_due = False
                    self._interrupt.clear()
                    return ("vectors", None)
                if not self._dirty and self._optimize_due and now >= self._optimize_due:
                    self._optimize_due = 0.0
                    return ("optimize", None)
                if not self._dirty:
                    self._idle.set()
                waits = [self._due - now] if self._dirty else []
                if self._optimize_due:
                    waits.append(self._optimize_due - now)
                self._cond.wait(max(0.01, min(waits)) if waits else None)

    def _loop(self) -> None:
        while (job := self._next()) is not None:
            kind, arg = job
            try:
                if kind == "index":
                    assert isinstance(arg, IndexRun)
                    self._full(arg)
                elif kind == "paths":
                    assert isinstance(arg, list)
                    self._paths(arg)
                elif kind == "vectors":
                    self._vectors()
                else:
                    optimize_index(self._project.root, self._project.settings)
            except CodesiftError as exc:
                log.error("%s: %s", self._project.name, exc)
                self._project.notify(f"codesift: indexing {self._project.name} stopped: {exc}")
            except Exception:  # the writer must survive anything one job throws
                log.exception("%s: indexing job %s failed", self._project.name, kind)
            finally:
                self._project.activity = "idle"

    def _full(self, run: IndexRun) -> None:
        p = self._project
        p.activity = "indexing: text"
        message = "cancelled"

        def text_done(report: IndexReport) -> None:
            nonlocal message
            p.forget_store()
            p.text_ready.set()
            message = f"{report.files_seen} files, {report.files_changed} changed"
            if report.note:
                message += f"; {report.note}"
                p.notify(f"codesift: {p.name}: {report.note}")
            p.activity = "indexing: vectors"

        try:
            # In a child process: what parsing and embedding leave behind in memory
            # goes with it (see server/child.py).
            result = run_full_index(
                p.root,
                p.settings,
                p.name,
                cancel=run.cancel,
                pause_vectors=self._interrupt,
                on_progress=run.on_progress,
                on_text_done=text_done,
                step_chunks=EMBED_STEP_CHUNKS,
                first=self.vectors_first(),
            )
            p.forget_store()
            if result.report is not None and not run.cancel.is_set():
                self._count_references()
                self._vectors_due = self._interrupt.is_set()
                if self._vectors_due:
                    message += "; vectors continue after the saved files"
            # A user's cancel pauses vectors until the next full run; grep, BM25 and symbols stay fresh.
            self._vectors_paused = run.cancel.is_set()
            if self._vectors_paused:
                message = "cancelled: text index complete, vectors paused (run codesift.reindex to resume)"
        except CodesiftError as exc:
            message = f"failed: {exc}"
            raise
        finally:
            p.text_ready.set()
            release_memory()
            run.on_done(message)

    def _paths(self, paths: list[str]) -> None:
        p = self._project
        p.activity = "re-indexing saved files"
        try:
            reindex_paths(
                p.root,
                p.settings,
                paths,
                embedder=p.embedder(),
                matcher=p.matcher(),
                project=p.name,
                # A few saved files' chunks are embedded before their rows are written
                # (one commit); the rest of the pending vectors stop when a save waits.
                embed=True,
                cancel=self._interrupt,
            )
        except IndexMissingError:
            log.info("%s: no index to refresh yet; the full index run will pick the files up", p.name)
            return
        self._vectors_due = not self._vectors_paused
        self._optimize_due = time.monotonic() + OPTIMIZE_AFTER_S
        self._count_references()

    def _count_references(self) -> None:
        """Count the ranking's file-reference prior for the tables just written (a save's
        or a full run's), here rather than in the next search, which would wait for it
        (~0.35 s at 100k chunks; the count is the same either way: it follows the
        ``files`` table's version)."""
        try:
            file_references(self._project.store())
        except CodesiftError as exc:
            log.debug("%s: file references not counted: %s", self._project.name, exc)

    def _vectors(self) -> None:
        p = self._project
        p.activity = "embedding"
        try:
            embed_vectors(
                p.root,
                p.settings,
                embedder=p.embedder(),
                first=self.vectors_first(),
                cancel=self._interrupt,
                step_chunks=EMBED_STEP_CHUNKS,
            )
        except IndexMissingError:
            return
        finally:
            release_memory()
        if self._interrupt.is_set():
            self._vectors_due = True

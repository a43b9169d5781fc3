"""A project's full index run in a child process.

Parsing 50k chunks and embedding them leaves hundreds of MB in the process that
did it (Python's heap, onnxruntime's arena, LanceDB's write buffers) that no
``gc`` returns. The language server lives for days, so the heavy runs happen in
a spawned child that exits when done; the server keeps only what answers
queries. Progress and log records come back over a queue; cancelling stops the
child between batches (the engine checks its cancel event); should the child
die anyway, the index repairs itself on the next run, as after any crash.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

from codesift.indexer.embed import make_embedder
from codesift.indexer.errors import CodesiftError
from codesift.indexer.freshen import embed_vectors
from codesift.indexer.model import IndexReport
from codesift.indexer.process import exit_with_parent
from codesift.indexer.progress import Progress
from codesift.indexer.settings import Settings
from codesift.indexer.static_embed import StaticEmbedder
from codesift.indexer.sync import index_workspace

from .allocator import limit_arenas_for_index_run

log = logging.getLogger(__name__)
_SPAWN = multiprocessing.get_context("spawn")


class Flag(Protocol):
    def is_set(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class FullRunResult:
    report: IndexReport | None  # None: the text phase did not finish
    embedded: int
    vectors_stopped: bool  # the vectors phase stopped early (cancel or a waiting save)


class ChildFailed(CodesiftError):
    """The index process died or raised something the engine does not raise."""


def run_full_index(
    root: Path,
    settings: Settings,
    project: str,
    *,
    cancel: Flag,
    pause_vectors: Flag,
    on_progress: Callable[[Progress], None],
    on_text_done: Callable[[IndexReport], None],
    step_chunks: int,
    first: Sequence[str] = (),
) -> FullRunResult:
    """Text phase, then vectors, in a child process; blocks until it ends.

    ``cancel`` stops either phase; ``pause_vectors`` stops only the vectors phase
    (a save is waiting). ``on_text_done`` runs here as soon as grep, BM25 and
    symbols are ready. ``first``: paths whose vectors are embedded before the rest.
    Raises the engine's CodesiftError as the child raised it.
    """
    events = _SPAWN.Queue()
    stop_all, stop_vectors = _SPAWN.Event(), _SPAWN.Event()
    proc = _SPAWN.Process(
        target=_child_main,
        args=(root, settings, project, step_chunks, list(first), events, stop_all, stop_vectors, os.getpid()),
        name=f"codesift-index-{project}",
        daemon=True,
    )
    proc.start()
    try:
        while True:
            if cancel.is_set():
                stop_all.set()
            if pause_vectors.is_set():
                stop_vectors.set()
            try:
                kind, payload = events.get(timeout=0.1)
            except queue.Empty:
                if not proc.is_alive():
                    raise ChildFailed(f"the index process exited with code {proc.exitcode}") from None
                continue
            if kind == "progress":
                on_progress(payload)
            elif kind == "log":
                level, name, message = payload
                logging.getLogger(name).log(level, "%s", message)
            elif kind == "text":
                on_text_done(payload)
            elif kind == "done":
                return payload  # type: ignore[no-any-return]
            elif kind == "error":
                raise payload
    finally:
        proc.join(timeout=30)
        if proc.is_alive():
            proc.kill()
            proc.join()


class _QueueHandler(logging.Handler):
    def __init__(self, events: Any) -> None:
        super().__init__(logging.INFO)
        self._events = events

    def emit(self, record: logging.LogRecord) -> None:
        self._events.put(("log", (record.levelno, record.name, record.getMessage())))


def _child_main(
    root: Path,
    settings: Settings,
    project: str,
    step_chunks: int,
    first: list[str],
    events: Any,
    stop_all: Any,
    stop_vectors: Any,
    parent: int,
) -> None:
    limit_arenas_for_index_run()
    exit_with_parent(parent, 3)  # nobody is left to use the index run once the server is gone
    # The server still ends this process with itself (daemonic on its side, the watch
    # above); here it may start the index run's parse workers, which a daemonic
    # process may not ("daemonic processes are not allowed to have children").
    multiprocessing.current_process().daemon = False
    logger = logging.getLogger("codesift")
    logger.addHandler(_QueueHandler(events))
    logger.setLevel(logging.INFO)
    try:
        embedder = make_embedder(settings.embed)
        report = index_workspace(
            root,
            settings,
            embedder=embedder,
            # Its closing ticks (optimize, done = 100 %) would make the bar jump back
            # to 50 % when vectors start: the run's end is the vectors phase's.
            progress=lambda p: None if p.phase in ("optimize", "done") else events.put(("progress", p)),
            # a static model's vectors go in with the text phase's rows, as `codesift index`
            # writes them (the vectors phase would embed the whole tree again through the
            # cache: ~60 s for the kernel's fs/ 53k chunks, against ~5 s inline)
            embed=isinstance(embedder, StaticEmbedder),
            cancel=cast(threading.Event, stop_all),
            project=project,
        )
        events.put(("text", report))
        embedded = 0
        if not stop_all.is_set():
            embedded = embed_vectors(
                root,
                settings,
                embedder=embedder,
                progress=lambda p: events.put(("progress", p)),
                cancel=cast(threading.Event, _Either(stop_all, stop_vectors)),
                step_chunks=step_chunks,
                first=first,
            )
        stopped = stop_all.is_set() or stop_vectors.is_set()
        events.put(("done", FullRunResult(report, embedded, stopped)))
    except CodesiftError as exc:
        events.put(("error", exc))
    except Exception as exc:  # anything else still reaches the server as a reason
        events.put(("error", ChildFailed(f"indexing failed: {exc!r}")))
    events.close()
    events.join_thread()


class _Either:
    """Set when either event is set (the engine polls ``is_set`` between batches)."""

    def __init__(self, a: Any, b: Any) -> None:
        self._a, self._b = a, b

    def is_set(self) -> bool:
        return bool(self._a.is_set() or self._b.is_set())

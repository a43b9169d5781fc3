"""One project per workspace folder: its settings, its index, unsaved buffers and one writer.

Knows the engine, not the protocol. Every write to a project's index goes
through its ``Writer`` thread, which runs one job at a time: the full index
(text, then vectors), and debounced re-indexes of saved files. Vector filling
stops between batches when a save arrives, so a save never waits for the
whole workspace's embeddings.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from codesift.indexer.embed import Embedder, OnnxEmbedder, fast_tier_embedder, make_embedder
from codesift.indexer.errors import CodesiftError, IndexMissingError
from codesift.indexer.freshen import embed_vectors, optimize_index, reindex_paths
from codesift.indexer.graph import Graph
from codesift.indexer.graph.queries import edge_span
from codesift.indexer.heap import release_memory
from codesift.indexer.model import IndexReport, Span, Symbol
from codesift.indexer.paths import index_path, os_path
from codesift.indexer.progress import Progress
from codesift.indexer.search.symbols import SymbolIndex, overlay_symbols
from codesift.indexer.settings import EmbedSettings, Settings
from codesift.indexer.static_embed import StaticEmbedder
from codesift.indexer.store import CHUNKS, FILES, Store
from codesift.indexer.sync import open_store
from codesift.indexer.workspace import IgnoreMatcher

from .answers import AnswerCache
from .child import run_full_index

log = logging.getLogger(__name__)

DEBOUNCE_S = 0.3
EMBED_STEP_CHUNKS = 16  # chunks between looks at "a save is waiting" (~0.2-0.6 s of embedding)
# Recently saved paths remembered for "their vectors first" (most recent first).
RECENT_PATHS = 200
MODEL_IDLE_S = 300.0  # unload the embedding model after this long without a query or job
# Drop the in-memory symbol index and reference graph after this long unused (~400 MiB on a
# 100k-chunk index); the next workspace/symbol or call hierarchy reads them again, which
# takes seconds on a big index (the graph of the 102k-chunk stdlib: 9 s), so an hour:
# a lunch break, not a coffee break. 0 keeps them.
INDEXES_IDLE_S = 3600.0
OPTIMIZE_AFTER_S = 30.0  # fold saved rows into the FTS / vector indices after a quiet spell
INDEX_KEY_S = 0.1  # how long the index's table versions are trusted for answer keys


class Embedders:
    """One loaded model per embedding configuration, shared by every project."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: dict[EmbedSettings, Embedder] = {}
        self.last_used = time.monotonic()

    def get(self, settings: EmbedSettings) -> Embedder:
        """The embedder for these settings, loaded once (raises EmbedError)."""
        with self._lock:
            self.last_used = time.monotonic()
            if settings not in self._cache:
                self._cache[settings] = make_embedder(settings)
            return self._cache[settings]

    def drop_mapped_pages(self) -> int:
        """Unmap the resident pages of the loaded models' memory-mapped weights (after a
        pause's trim); the bytes advised."""
        with self._lock:
            embedders = list(self._cache.values())
        return sum(e.drop_mapped_pages() for e in embedders if isinstance(e, OnnxEmbedder))

    def release_if_idle(self, idle_s: float, busy: bool) -> int:
        """Unload the models that reload themselves (the ONNX ones) when none was asked
        for in ``idle_s`` seconds and no index job runs (``busy``); how many were loaded."""
        if busy or time.monotonic() - self.last_used < idle_s:
            return 0
        with self._lock:
            embedders = list(self._cache.values())
            # the fast tier's static model, loaded by the searches it answered (~30 MiB)
            fast = {f for s, e in self._cache.items() if (f := fast_tier_embedder(s, e.model_id)) is not None}
        embedders += list(fast)
        released = sum(1 for e in embedders if isinstance(e, OnnxEmbedder | StaticEmbedder) and e.release())
        if released:
            release_memory()
            log.info("unloaded the embedding model after %.0f s without use", idle_s)
        return released

    def watch_idle(self, busy: Callable[[], bool], idle_s: float = MODEL_IDLE_S) -> None:
        """Unload idle models from a daemon thread: an idle server keeps ~70 MiB less,
        and the next search loads the model again in ~0.13 s."""

        def loop() -> None:
            while True:
                time.sleep(max(1.0, idle_s / 5))
                with contextlib.suppress(Exception):
                    self.release_if_idle(idle_s, busy())

        threading.Thread(target=loop, name="codesift-model-idle", daemon=True).start()


def watch_indexes_idle(projects: Callable[[], list[Project]], idle_s: float = INDEXES_IDLE_S) -> None:
    """Drop idle projects' symbol indexes and graphs from a daemon thread (0: never)."""
    if idle_s <= 0:
        return

    def loop() -> None:
        while True:
            time.sleep(max(1.0, idle_s / 5))
            for project in projects():
                with contextlib.suppress(Exception):
                    project.release_indexes_if_idle(idle_s)

    threading.Thread(target=loop, name="codesift-indexes-idle", daemon=True).start()


@dataclass
class IndexRun:
    """Callbacks and the cancel switch of one full index run (the server's progress bar)."""

    on_progress: Callable[[Progress], None]
    on_done: Callable[[str], None]  # the closing message
    cancel: threading.Event = field(default_factory=threading.Event)


class _Lines:
    """A file's lines as its bytes and where each line starts: a list of one ``str`` per
    line took ~2.3 times the file's size (~14 MiB for the files a probe's answers touched
    on the stdlib); each line is decoded when asked for."""

    __slots__ = ("data", "starts")

    def __init__(self, data: bytes) -> None:
        self.data = data
        newlines = np.flatnonzero(np.frombuffer(data, np.uint8) == 10)
        self.starts = np.concatenate(([0], newlines + 1)).astype(np.int64)

    def line(self, line: int) -> str | None:
        """Text of 1-based ``line`` (as ``data.decode("utf-8", "replace").split("\\n")`` has it)."""
        if not 0 < line <= len(self.starts):
            return None
        start = int(self.starts[line - 1])
        end = int(self.starts[line]) - 1 if line < len(self.starts) else len(self.data)
        return self.data[start:end].decode("utf-8", "replace")


class LineCache:
    """Lines of files by path, for converting columns: unsaved text first, then the disk.

    An ASCII file's lines are not kept: its columns are the same in every encoding, so
    ``line`` answers None for it (as for an unknown line) and nothing is converted. A
    100-symbol ``workspace/symbol`` answer spans ~80 files; splitting each into lines
    was most of its conversion (5-15 ms cold on the stdlib).
    """

    def __init__(self, root: Path, overlay: dict[str, str], size: int = 512) -> None:
        self._root = root
        self._overlay = overlay
        self._size = size
        self._files: dict[str, tuple[tuple[int, int], _Lines | None]] = {}

    def clear(self) -> None:
        """Forget every file's lines (read again on the next conversion)."""
        self._files = {}

    def line(self, path: str, line: int) -> str | None:
        """Text of 1-based ``line`` of ``path``; None when unknown or when the file is
        ASCII (no column of it needs converting)."""
        text = self._overlay.get(path)
        if text is not None:
            lines = text.split("\n")
            return lines[line - 1] if 0 < line <= len(lines) else None
        found = self._disk(path)
        return found.line(line) if found is not None else None

    def reader(self) -> Callable[[str, int], str | None]:
        """``line`` for one answer: each file is looked up once (one ``stat``, its unsaved
        text split once) however many of its lines are asked for. A 100-symbol answer
        asked ``line`` ~100 times over ~80 files, a ``stat`` each."""
        files: dict[str, list[str] | _Lines | None] = {}

        def line(path: str, line: int) -> str | None:
            if path in files:
                found = files[path]
            else:
                text = self._overlay.get(path)
                found = files[path] = text.split("\n") if text is not None else self._disk(path)
            if isinstance(found, list):
                return found[line - 1] if 0 < line <= len(found) else None
            return found.line(line) if found is not None else None

        return line

    def _disk(self, path: str) -> _Lines | None:
        full = self._root / os_path(path)
        try:
            st = full.stat()
        except OSError:
            return None
        key = (st.st_mtime_ns, st.st_size)
        cached = self._files.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
        try:
            data = full.read_bytes()
        except OSError:
            return None
        lines = None if data.isascii() else _Lines(data)
        if len(self._files) >= self._size:
            self._files.pop(next(iter(self._files)))
        self._files[path] = (key, lines)
        return lines


class Project:
    """A workspace folder: its root, settings, index reader, overlay and writer."""

    def __init__(self, root: Path, settings: Settings, embedders: Embedders) -> None:
        self.root = root.resolve()
        self.name = self.root.name
        self.settings = settings
        self.embedders = embedders
        self.overlay: dict[str, str] = {}  # workspace-relative path → unsaved text
        # Open in the editor (workspace-relative, opening order): their vectors go first.
        self.open_files: dict[str, None] = {}
        self.lines = LineCache(self.root, self.overlay)
        self.text_ready = threading.Event()  # the text phase of the first index run finished
        self.activity = "idle"
        self._lock = threading.Lock()
        self._store: Store | None = None
        self._symbols: SymbolIndex | None = None
        self._graph: Graph | None = None
        # One question at a time: a refresh rebuilds the graph's lookups in place.
        self._graph_lock = threading.Lock()
        self._matcher: IgnoreMatcher | None = None
        # Answers keyed by what they depend on (question, table versions, unsaved buffers).
        self.answers: AnswerCache[object] = AnswerCache()
        self._versions: tuple[Store, float, int, int] | None = None  # for index_key
        self._indexes_used = time.monotonic()  # the symbol index or the graph, last asked for
        self._store_used = time.monotonic()  # the index reader (every question), last asked for
        self.writer = Writer(self)
        self.on_close: list[Callable[[], None]] = []  # e.g. stop a file watcher
        # tells the user what they can act on (model missing, index unwritable…)
        self.notify: Callable[[str], None] = lambda message: None

    def close(self) -> None:
        """Stop the writer (after its current batch) and anything else watching this folder."""
        self.writer.stop()
        for stop in self.on_close:
            stop()

    def embedder(self) -> Embedder:
        """The project's embedding model (shared; raises EmbedError when unavailable)."""
        return self.embedders.get(self.settings.embed)

    def store(self) -> Store:
        """The index for reading; IndexMissingError while none is built yet."""
        with self._lock:
            self._store_used = time.monotonic()
            if self._store is None:
                self._store = open_store(self.root, self.settings)
                self._symbols = SymbolIndex(self._store)
            return self._store

    def unsaved_symbols(self) -> dict[str, tuple[Symbol, ...]]:
        """Symbols of the open buffers with unsaved edits, parsed as the indexer would."""
        return overlay_symbols(dict(self.overlay), project=self.name, settings=self.settings.chunk)

    def index_key(self) -> tuple[object, ...]:
        """What every answer from this project depends on: the store, its tables' versions
        (a save or a vectors commit moves them) and the unsaved buffers. The versions are
        read again after ``INDEX_KEY_S`` (reading them costs ~1 ms; a burst shares them)."""
        store = self.store()
        now = time.monotonic()
        with self._lock:
            seen = self._versions
        if seen is None or seen[0] is not store or now - seen[1] > INDEX_KEY_S:
            seen = (store, now, store.table(FILES).version, store.table(CHUNKS).version)
            with self._lock:
                self._versions = seen
        overlay = tuple(sorted((path, hash(text)) for path, text in list(self.overlay.items())))
        return (id(store), seen[2], seen[3], overlay)

    def symbol_index(self) -> SymbolIndex:
        """The in-memory symbol names of this project (reloaded when the table changes)."""
        store = self.store()
        with self._lock:
            self._indexes_used = time.monotonic()
            if self._symbols is None:
                self._symbols = SymbolIndex(store)
            return self._symbols

    @contextlib.contextmanager
    def graph(self) -> Iterator[Graph]:
        """The project's reference graph, held for one question (IndexMissingError without an index).

        Created on first use; it loads lazily and catches up with the index before each question.
        """
        store = self.store()
        with self._graph_lock:
            self._indexes_used = time.monotonic()
            if self._graph is None or self._graph.snapshot.store is not store:
                self._graph = Graph(store)
            yield self._graph

    def release_indexes_if_idle(self, idle_s: float) -> bool:
        """Drop the symbol index, the graph, the remembered answers and file lines when
        neither index was asked for in ``idle_s`` seconds, and the index reader itself (its
        LanceDB session holds the FTS and vector indexes it read, ~100 MiB on the stdlib)
        when nothing asked anything in that time and no index job runs; all reload on the
        next question. True when anything was dropped."""
        with self._graph_lock, self._lock:
            now = time.monotonic()
            if now - self._indexes_used < idle_s:
                return False
            loaded = self._graph is not None or (self._symbols is not None and self._symbols.loaded)
            reader = self._store is not None and now - self._store_used >= idle_s and not self.writer.busy
            if not (loaded or reader):
                return False
            self._graph = None
            if reader:
                self._store = None
                self._symbols = None
                self._versions = None
            elif self._store is not None:
                self._symbols = SymbolIndex(self._store)
                self._store.forget_symbols()
        self.lines.clear()  # up to 512 files' lines
        self.answers.clear()
        release_memory()
        log.info(
            "%s: dropped the symbol index and graph%s after %.0f s without use",
            self.name,
            " and the index reader" if reader else "",
            idle_s,
        )
        return True

    def matcher(self) -> IgnoreMatcher:
        """The walk's rules for one path at a time."""
        with self._lock:
            if self._matcher is None:
                self._matcher = IgnoreMatcher(self.root, self.settings.index)
            return self._matcher

    def forget_store(self) -> None:
        """Reopen the index on next use (after a rebuild replaced its tables)."""
        with self._lock:
            self._store = None
            self._symbols = None
            self._graph = None
            self._matcher = None
            self.answers.clear()  # a rebuilt table's versions start again: old keys could match

    def relative(self, path: Path) -> str | None:
        """``path`` relative to the root (POSIX), or None when it lies outside."""
        for candidate in (path, path.resolve()):
            try:
                return candidate.relative_to(self.root).as_posix()
            except ValueError:
                continue
        return None

    def wants_change(self, rel: str) -> bool:
        """Whether a file event at ``rel`` can change the index: not the index's own files,
        not .git, not a path the walk leaves out (a .gitignore always counts)."""
        first = rel.split("/", 1)[0]
        if first in (".git", self.settings.index.index_dir.strip("/")):
            return False
        return rel.endswith(".gitignore") or not self.matcher().ignored(rel)

    def busy_note(self) -> str | None:
        """Says results may be incomplete while the index is being built."""
        if self.activity.startswith("indexing"):
            return f"{self.name}: the index is being built ({self.activity}); results may be incomplete"
        return None

    def missing_note(self) -> str:
        """Why results from this project are empty while it has no index."""
        if self.activity.startswith("indexing"):
            return f"{self.name}: the index is being built ({self.activity}); results will follow"
        return f"{self.name}: no index yet (run the codesift.reindex command)"

    def reconfigure(self, settings: Settings) -> bool:
        """Apply new settings; True when they change what is indexed (a re-index is due)."""
        old = self.settings
        changed: bool = (old.index, old.chunk, old.embed) != (settings.index, settings.chunk, settings.embed)
        self.settings = settings
        self.forget_store()
        return changed


def definition_at(
    graph: Graph, path: str, line: int, column: int, *, enclosing: bool = False
) -> Symbol | None:
    """The definition a position means (1-based line, code-point column): the name of a
    definition, else the resolved target of a reference there (None when unresolved: no
    guesses), else — with ``enclosing`` — the innermost definition around it."""
    # TODO(graph): belongs in the engine as Graph.target_at; kept here until it moves.
    here = (line, column)
    best = graph.symbol_at(path, line, column)
    if best is not None and _holds(best.selection_range, here):
        return best
    at = [e for e in graph.snapshot.edges_of(path) if _holds(edge_span(e), here)]
    if at:
        narrowest = min(at, key=lambda e: (e.end_line - e.line, e.end_column - e.column))
        return graph.resolver.resolve(narrowest).symbol
    return best if enclosing else None


def _holds(span: Span, here: tuple[int, int]) -> bool:
    return (span.start.line, span.start.column) <= here <= (span.end.line, span.end.column)


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

"""One project per workspace folder: its settings, its index reader, unsaved buffers,
cached lines, in-memory symbol index and graph, and one writer (``writer.py``: every
write to the index goes through its thread).

Knows the engine, not the protocol.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from codesift.indexer.embed import Embedder, OnnxEmbedder, fast_tier_embedder, make_embedder
from codesift.indexer.graph import Graph
from codesift.indexer.graph.queries import edge_span
from codesift.indexer.heap import release_memory
from codesift.indexer.model import IndexStatus, Span, Symbol
from codesift.indexer.paths import os_path
from codesift.indexer.search.symbols import SymbolIndex, overlay_symbols
from codesift.indexer.settings import EmbedSettings, Settings
from codesift.indexer.static_embed import StaticEmbedder
from codesift.indexer.store import CHUNKS, FILES, Store
from codesift.indexer.sync import open_store
from codesift.indexer.workspace import IgnoreMatcher

from .answers import AnswerCache
from .writer import Writer

log = logging.getLogger(__name__)

MODEL_IDLE_S = 300.0  # unload the embedding model after this long without a query or job
# Drop the in-memory symbol index and reference graph after this long unused (~400 MiB on a
# 100k-chunk index); the next workspace/symbol or call hierarchy reads them again, which
# takes seconds on a big index (the graph of the 102k-chunk stdlib: 9 s), so an hour:
# a lunch break, not a coffee break. 0 keeps them.
INDEXES_IDLE_S = 3600.0
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
                # queries only (and a saved file's few chunks): no pre-packed weights
                self._cache[settings] = make_embedder(settings, prepack=False)
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


# LineCache keeps this many times its size of entries while they are ASCII files (a key each).
_ASCII_FACTOR = 16
# ...and at most this many bytes of non-ASCII files' lines (512 files had held 3.5 MiB after
# the memory probe's answers on the stdlib; a file not kept is read again, ~0.1 ms)
LINE_CACHE_BYTES = 1 << 20


def _read_all(fd: int, size: int) -> bytes:
    """A file's bytes from its descriptor (more than ``size`` when it grew meanwhile)."""
    parts = []
    while chunk := os.read(fd, max(size + 1, 65536)):
        parts.append(chunk)
    return b"".join(parts)


class _Lines:
    """A file's lines as its bytes and where each line starts: a list of one ``str`` per
    line took ~2.3 times the file's size (~14 MiB for the files a probe's answers touched
    on the stdlib); each line is decoded when asked for."""

    __slots__ = ("data", "starts")

    def __init__(self, data: bytes) -> None:
        self.data = data
        newlines = np.flatnonzero(np.frombuffer(data, np.uint8) == 10)
        self.starts = np.concatenate(([0], newlines + 1)).astype(np.int64)

    @property
    def nbytes(self) -> int:
        return len(self.data) + self.starts.nbytes

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

    def __init__(
        self, root: Path, overlay: dict[str, str], size: int = 512, max_bytes: int = LINE_CACHE_BYTES
    ) -> None:
        self._root = root
        self._root_str = os.path.join(str(root), "")
        self._overlay = overlay
        self._size = size
        self._max_bytes = max_bytes
        self._bytes = 0  # of the kept files' lines
        self._files: dict[str, tuple[tuple[int, int], _Lines | None]] = {}

    def clear(self) -> None:
        """Forget every file's lines (read again on the next conversion)."""
        self._files = {}
        self._bytes = 0

    @property
    def held_bytes(self) -> int:
        """Bytes of the non-ASCII files' lines kept (at most ``max_bytes`` but for one file)."""
        return self._bytes

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
        # One open, fstat and read on the descriptor: Path.stat then Path.read_bytes cost
        # twice as much, and a cold burst's answers read ~800 files (a quarter of its CPU).
        try:
            fd = os.open(self._root_str + os_path(path), os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            key = (st.st_mtime_ns, st.st_size)
            cached = self._files.get(path)
            if cached is not None and cached[0] == key:
                return cached[1]
            data = _read_all(fd, st.st_size)
        except OSError:
            return None
        finally:
            os.close(fd)
        lines = None if data.isascii() else _Lines(data)
        self._forget(path)
        # an ASCII file costs its key alone: many more of them are kept; the lines kept
        # stay within max_bytes (the oldest go first; a larger file alone is still kept)
        size = lines.nbytes if lines is not None else 0
        while self._files and (
            len(self._files) >= self._size * (1 if lines is not None else _ASCII_FACTOR)
            or self._bytes + size > self._max_bytes
        ):
            self._forget(next(iter(self._files)))
        self._files[path] = (key, lines)
        self._bytes += size
        return lines

    def _forget(self, path: str) -> None:
        gone = self._files.pop(path, None)
        if gone is not None and gone[1] is not None:
            self._bytes -= gone[1].nbytes


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

    def with_reader(self, status: IndexStatus) -> IndexStatus:
        """``status`` saying how this project's own index reader reads (it may have
        fallen back to the plain reads since it opened); as given while none is open."""
        store = self._store
        if store is None or not status.exists:
            return status
        return dataclasses.replace(status, reader=store.reader)

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

    def known_versions(self) -> dict[str, int]:
        """The ``files`` and ``chunks`` versions ``index_key`` read last (none before it
        did): an answer remembered under that key reads its tables at them
        (``Store.pinned_versions``) instead of asking LanceDB again."""
        with self._lock:
            seen = self._versions
        if seen is None or seen[0] is not self._store:
            return {}
        return {FILES: seen[2], CHUNKS: seen[3]}

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

    def doing(self) -> str:
        """What the server is doing with this folder, as status says it: the running job,
        or "changes queued" while saved files wait out the re-index's debounce or another
        job waits its turn — never "idle" with work still to do."""
        if self.activity == "idle" and self.writer.busy:
            return "changes queued"
        return self.activity

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

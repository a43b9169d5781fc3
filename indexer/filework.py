"""Turn a walked file into what the store writes: read, decode, parse.

Kept apart from the store (no LanceDB import) so it can run anywhere: in the
indexing thread, or in worker processes (``processed``) while the indexing
thread writes what they parsed (and, for a static model, embedded) before.
"""

from __future__ import annotations

import copyreg
import dataclasses
import logging
import multiprocessing
import os
from collections import deque
from collections.abc import Generator, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .errors import CodesiftError, EmbedError
from .faults import crash_point
from .model import (
    Chunk,
    Edge,
    FileRecord,
    FileStatus,
    FileWrite,
    Position,
    Span,
    Symbol,
    WalkEntry,
    embedding_text,
)
from .parse import parse_file
from .process import cores, exit_with_parent
from .settings import Settings
from .source import read_source

if TYPE_CHECKING:
    from .embed import Embedder

Vectors = npt.NDArray[np.float32]

log = logging.getLogger(__name__)

# Fewer files than this are parsed in the indexing thread: starting a worker (a fresh
# interpreter importing the parser) costs ~0.5 s, more than a few dozen files' parse.
PARALLEL_MIN_FILES = 256
# Files a worker parses per task (one round trip), and files parsed ahead of the one
# the indexing thread takes: more than two of its write batches (200 files), so the
# workers go on parsing while it writes one (with 128 files ahead they sat
# idle through each batch's write on the kernel tree), few enough that parsed files
# waiting to be written stay a small part of memory.
TASK_FILES = 16
AHEAD_FILES = 512


def process_file(entry: WalkEntry, known_hash: str, settings: Settings, project: str) -> FileWrite | None:
    """Read and parse one file into its FileWrite; None when its content hash is
    ``known_hash`` (the index already holds it). Never raises for a bad file."""

    def skipped(reason: str, content_hash: str = "") -> FileWrite:
        rec = FileRecord(
            entry.path, entry.language, entry.size, entry.mtime_ns, content_hash, FileStatus.SKIPPED, reason
        )
        return FileWrite(rec, (), ())

    if entry.skip is not None:
        return skipped(f"{entry.skip}: {entry.detail}" if entry.detail else str(entry.skip))
    source = read_source(entry, settings.index.max_file_bytes)
    if source.skip is not None:
        return skipped(f"{source.skip}: {source.note}" if source.note else str(source.skip))
    if known_hash and known_hash == source.content_hash:
        return None
    try:
        parsed = parse_file(entry.path, source.text, entry.language, project=project, settings=settings.chunk)
    except Exception as exc:  # parse_file falls back to windows; this is the last resort
        # Nothing about one file may stop an index run: a parser bug, a RecursionError on
        # absurd nesting… marks this file failed, with the reason, and the run goes on.
        if not isinstance(exc, CodesiftError):
            log.exception("parsing %s failed", entry.path)
        reason = str(exc) if isinstance(exc, CodesiftError) else f"parser error: {type(exc).__name__}: {exc}"
        rec = FileRecord(
            entry.path,
            entry.language,
            entry.size,
            entry.mtime_ns,
            source.content_hash,
            FileStatus.FAILED,
            reason,
        )
        return FileWrite(rec, (), ())
    note = source.note
    if parsed.had_errors:
        note = (note + "; " if note else "") + "syntax errors: chunked around them"
    record = FileRecord(
        entry.path,
        parsed.language or entry.language,
        entry.size,
        entry.mtime_ns,
        source.content_hash,
        FileStatus.INDEXED,
        note,
    )
    return FileWrite(record, parsed.chunks, parsed.symbols, parsed.edges)


def parse_workers(settings: Settings, files: int) -> int:
    """Worker processes to parse ``files`` files (0: the indexing thread parses them):
    ``index.parse_workers`` when it is 2 or more, one per core for 0 (auto) on two cores
    or more; none for 1, or below ``PARALLEL_MIN_FILES`` files."""
    if files < PARALLEL_MIN_FILES:
        return 0
    wanted = settings.index.parse_workers or cores()
    return wanted if wanted >= 2 else 0


# A parsed file, and — when the workers embed with a static model — its chunks' vectors
# by content hash (None: the indexer embeds them).
Processed = tuple[FileWrite | None, dict[str, Vectors] | None]
# a task's answer: its files, their distinct texts' vectors and each file's (hash, row),
# and what the worker logged
_Rows = list[list[tuple[str, int]]]
_Answer = tuple[list[FileWrite | None], Vectors | None, _Rows, list[tuple[str, int, str]]]


def processed(
    todo: Sequence[tuple[WalkEntry, str]],
    settings: Settings,
    project: str,
    workers: int,
    *,
    embed: bool = False,
) -> Generator[Processed, None, None]:
    """``process_file`` of each (entry, known hash) in order, by ``workers`` processes
    (none: in this thread); with ``embed`` (the index's model is static) the workers
    also embed each file's chunks, as ``embedding_text`` reads them. A pool that cannot
    start or breaks (a worker killed) leaves the files it had not answered to this
    thread: every file is processed once."""
    done = 0
    if workers > 0:
        try:
            for answer in _in_workers(todo, settings, project, workers, embed):
                done += 1
                yield answer
        except Exception as exc:  # a worker killed (BrokenProcessPool), none could start …
            left = len(todo) - done
            log.warning("parse workers stopped (%r); parsing the remaining %d files here", exc, left)
    for entry, known in todo[done:]:
        yield process_file(entry, known, settings, project), None


def _in_workers(
    todo: Sequence[tuple[WalkEntry, str]], settings: Settings, project: str, workers: int, embed: bool
) -> Iterator[Processed]:
    tasks = [list(todo[i : i + TASK_FILES]) for i in range(0, len(todo), TASK_FILES)]
    pool = ProcessPoolExecutor(
        max_workers=workers,
        # spawn, not fork: the indexing process runs LanceDB's and onnxruntime's threads
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_worker,
        initargs=(settings, project, os.getpid(), embed),
    )
    pending: deque[Future[_Answer]] = deque()
    try:
        for task in tasks:
            pending.append(pool.submit(_parse_task, task))
            if len(pending) >= max(2 * workers, AHEAD_FILES // TASK_FILES):
                yield from _answers(pending.popleft())
        while pending:
            yield from _answers(pending.popleft())
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _answers(future: Future[_Answer]) -> Iterator[Processed]:
    writes, matrix, rows, records = future.result()
    for name, level, message in records:  # what the worker logged, logged here
        logging.getLogger(name).log(level, "%s", message)
    for write, mine in zip(writes, rows, strict=True):
        yield write, ({h: matrix[i] for h, i in mine} if matrix is not None else None)


_worker: tuple[Settings, str] | None = None
_embedder: Embedder | None = None  # the static model, when the workers embed
_worker_log: list[tuple[str, int, str]] = []


class _Kept(logging.Handler):
    """A worker's log records (warnings and above), formatted, for the indexing process."""

    def emit(self, record: logging.LogRecord) -> None:
        _worker_log.append((record.name, record.levelno, self.format(record)))


def _start_worker(settings: Settings, project: str, indexer: int, embed: bool) -> None:
    global _worker, _embedder
    _worker = (settings, project)
    if embed:
        from .embed import make_embedder

        _embedder = make_embedder(settings.embed)
    for cls in (FileWrite, FileRecord, Chunk, Symbol, Edge, Span, Position):
        copyreg.pickle(cls, _by_fields)
    root = logging.getLogger()
    root.handlers[:] = [_Kept(logging.WARNING)]
    root.setLevel(logging.WARNING)
    # a worker holds both ends of its task queue and would wait on it for ever once the
    # indexer is killed hard (its pool never shut down)
    exit_with_parent(indexer, 1)


def _by_fields(obj: Any) -> tuple[type, tuple[object, ...]]:
    """A parsed file's objects pickled as their class and field values: unpickled by their
    ``__init__``. The slots dataclasses' own ``__setstate__`` calls ``dataclasses.fields``
    for every object, and unpickling took as much of the indexing process's time as
    embedding and writing the files (117k chunks of the kernel's fs/ and include/)."""
    cls = type(obj)
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return cls, tuple(getattr(obj, name) for name in names)


_FIELDS: dict[type, tuple[str, ...]] = {}


def _parse_task(task: list[tuple[WalkEntry, str]]) -> _Answer:
    assert _worker is not None, "a parse task outside a started worker"
    settings, project = _worker
    crash_point("parse-worker")
    writes = [process_file(entry, known, settings, project) for entry, known in task]
    matrix, rows = _embedded(writes)
    records = _worker_log[:]
    _worker_log.clear()
    return writes, matrix, rows, records


def _embedded(writes: list[FileWrite | None]) -> tuple[Vectors | None, _Rows]:
    """The task's chunk vectors: one row per distinct text, and each file's (content hash,
    row) — a hash the file holds twice takes its last chunk's text, as the indexer's
    batch does. No model, or a text it refuses: none, and the indexer embeds the batch."""
    texts: dict[str, int] = {}
    rows: _Rows = []
    for write in writes:
        mine = {c.content_hash: embedding_text(c.path, c.text) for c in write.chunks} if write else {}
        rows.append([(h, texts.setdefault(text, len(texts))) for h, text in mine.items()])
    if _embedder is None or not texts:
        return None, [[] for _ in writes]
    try:
        return _embedder.embed_documents(list(texts)), rows
    except EmbedError as exc:
        log.warning("a parse worker could not embed its files' chunks; the indexer will: %s", exc)
        return None, [[] for _ in writes]

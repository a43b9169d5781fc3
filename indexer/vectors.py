"""The vectors phase: every chunk without a vector gets one, the main model's
(``embed_pending``: cache first, pools per commit, cancel between slices, refused texts
reported) and the fast tier's (``embed_fast_pending``), after the text phase wrote
the rows."""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .embed import Embedder
from .errors import EmbedError
from .faults import crash_point
from .heap import release_memory
from .model import FileRecord, embedding_text
from .progress import Counters, Progress, ProgressFn, no_progress
from .settings import Settings
from .store import CHUNKS, FAST_PENDING, PENDING, PendingChunk, Store

log = logging.getLogger(__name__)

# A long vectors phase re-folds the rows it rewrote into the FTS index this often, so
# BM25 does not slow down while vectors fill in (an optimize of the stdlib: ~5 s).
OPTIMIZE_EVERY_VECTORS = 10_000
# Chunks embedded between two looks at ``cancel`` when the caller names no step:
# ~3 s on two cores, while a commit (~0.7 s on a 50k-chunk index, whatever its
# size) is paid once per ``embed.commit_chunks``.
EMBED_SLICE_CHUNKS = 256
# Fast-tier vectors stored per commit when they are filled after the text phase.
FAST_POOL_CHUNKS = 8192


def embed_pending(
    store: Store,
    embedder: Embedder,
    settings: Settings,
    counters: Counters | None = None,
    progress: ProgressFn = no_progress,
    cancel: threading.Event | None = None,
    first: Sequence[str] = (),
    step: int = 0,
) -> int:
    """Embed every chunk without a vector (those of ``first`` paths first).

    Pending chunks are read ``embed.commit_chunks`` at a time (identical texts
    embedded once) and embedded ``step`` chunks per call (0: 256), with ``cancel``
    checked between calls; each pool's vectors are stored in one commit, and what
    was embedded before a cancel or an error is stored too. Returns how many
    chunks received a vector. A text the model refuses is reported (a log record
    and a note on its file's ``files`` row), keeps no vector and is passed over
    for the rest of the run; the others go on. When the model fails on a probe
    text too, it is broken, not the file: the error is logged and re-raised and
    the chunks not reached stay pending.
    """
    counters = counters or Counters()
    cancel = cancel or threading.Event()
    total = store.count(CHUNKS, PENDING)
    done = 0
    pool_size = max(1, settings.embed.commit_chunks)
    step = step if step > 0 else EMBED_SLICE_CHUNKS
    key = settings.vector_cache_key(embedder.model_id)
    priority = list(first)
    refused: set[str] = set()  # ids of chunks the model refused in this run: left pending
    refused_now: dict[str, str] = {}  # content hash → the model's reason, for this pool
    progress(Progress("embed", 0, total))
    while total and not cancel.is_set():
        pending: list[PendingChunk] = []
        while priority and not pending:
            pending = _pending(store, pool_size, priority[:500], refused)
            if not pending:
                priority = priority[500:]
        if not pending:
            pending = _pending(store, pool_size, (), refused)
        if not pending:
            break
        by_hash: dict[str, list[str]] = {}
        texts: dict[str, str] = {}
        for p in pending:
            by_hash.setdefault(p.content_hash, []).append(p.id)
            texts[p.content_hash] = embedding_text(p.path, p.text)
        cached = store.cache.lookup(key, embedder.dimension, by_hash)
        missing = [h for h in by_hash if h not in cached]
        counters.from_cache += len(by_hash) - len(missing)
        embedded: list[str] = []
        vectors: list[npt.NDArray[np.float32]] = []
        before = done
        try:
            for start in range(0, len(missing), step):
                if cancel.is_set():
                    break
                part, vecs = _embed_part(embedder, missing[start : start + step], texts, refused_now)
                embedded += part
                vectors.append(vecs)
                cached.update(zip(part, vecs, strict=True))
                counters.embedded += len(part)
                progress(Progress("embed", done + len(embedded), max(total, done + len(embedded))))
        except EmbedError as exc:
            log.error("embedding stopped, %d chunks keep no vector: %s", total - done - len(embedded), exc)
            raise
        finally:
            if refused_now:
                _report_refused(store, pending, refused_now, counters)
                refused.update(p.id for p in pending if p.content_hash in refused_now)
                refused_now.clear()
            if embedded:
                store.cache.put(key, embedder.dimension, embedded, np.concatenate(vectors))
            ids = [i for h in by_hash if h in cached for i in by_hash[h]]
            if ids:
                matrix = np.stack([cached[h] for h in by_hash if h in cached for _ in by_hash[h]])
                store.set_vectors(ids, matrix.astype(np.float32), embedder.dimension)
                crash_point("embed")
                done += len(ids)
                progress(Progress("embed", done, max(total, done)))
        if done // OPTIMIZE_EVERY_VECTORS != before // OPTIMIZE_EVERY_VECTORS:
            store.optimize()  # rows with new vectors left the FTS index: fold them back in
        # A commit (LanceDB's merge rewrites the pool's fragments) and an optimize free
        # tens of MiB that glibc would keep: on the stdlib's 51k chunks RSS grew by ~16 KB
        # a chunk through the phase without this (docs/DECISIONS.md, "index memory").
        release_memory(collect=False)
    return done


def embed_fast_pending(
    store: Store,
    fast: Embedder,
    counters: Counters | None = None,
    progress: ProgressFn = no_progress,
    cancel: threading.Event | None = None,
) -> int:
    """Give a fast-tier vector to every chunk without one. ``codesift index`` writes
    them with the text phase's rows; the language server's text phase writes none
    (grep, BM25 and symbols first), so this fills them before MiniLM starts, and
    catches up after ``--no-embed`` or a failed batch. No cache: the static model
    embeds faster than the cache answers. Pools of ``FAST_POOL_CHUNKS`` per commit (a
    commit rewrites the column's fragments, ~0.7 s at 50k chunks), ``cancel`` looked
    at every ``EMBED_SLICE_CHUNKS`` × 4. Returns how many chunks it filled."""
    if store.fast_dimension() != fast.dimension:
        return 0
    counters = counters or Counters()
    cancel = cancel or threading.Event()
    total = store.count(CHUNKS, FAST_PENDING)
    done = 0
    refused: set[str] = set()
    slice_ = EMBED_SLICE_CHUNKS * 4
    while done < total and not cancel.is_set():
        got = store.pending_vectors(FAST_POOL_CHUNKS + len(refused), fast=True)
        pending = [p for p in got if p.id not in refused]
        if not pending:
            break
        ids: list[str] = []
        parts: list[npt.NDArray[np.float32]] = []
        for start in range(0, len(pending), slice_):
            if cancel.is_set():
                break
            part = pending[start : start + slice_]
            try:
                parts.append(fast.embed_documents([embedding_text(p.path, p.text) for p in part]))
            except EmbedError as exc:
                log.warning("the fast tier could not embed %d chunks: %s", len(part), exc)
                refused.update(p.id for p in part)
                continue
            ids += [p.id for p in part]
            progress(Progress("fast vectors", done + len(ids), total))
        if ids:
            store.set_vectors(ids, np.concatenate(parts), fast.dimension, fast=True)
            done += len(ids)
            counters.fast_embedded += len(ids)
            release_memory(collect=False)  # what the commit freed (``embed_pending``)
    return done


_PROBE_TEXT = "def probe(): return 1"


def _pending(store: Store, limit: int, paths: Sequence[str], refused: set[str]) -> list[PendingChunk]:
    """Pending chunks, less those the model refused earlier in this run."""
    got = store.pending_vectors(limit + len(refused), paths)
    return [p for p in got if p.id not in refused][:limit]


def _embed_part(
    embedder: Embedder, part: list[str], texts: dict[str, str], refused: dict[str, str]
) -> tuple[list[str], npt.NDArray[np.float32]]:
    """Vectors of the texts of ``part`` (content hashes); a text the model refuses on
    its own goes to ``refused`` with the reason. Raises when the model is broken."""
    try:
        return part, embedder.embed_documents([texts[h] for h in part])
    except EmbedError as exc:
        failure = exc
    good: list[str] = []
    rows: list[npt.NDArray[np.float32]] = []
    for h in part:
        try:
            rows.append(embedder.embed_documents([texts[h]]))
            good.append(h)
        except EmbedError as exc:
            refused[h] = str(exc)
    if not good:
        try:
            embedder.embed_documents([_PROBE_TEXT])
        except EmbedError:
            refused.clear()
            raise failure from None
    dim = embedder.dimension
    return good, (np.concatenate(rows) if rows else np.zeros((0, dim), np.float32))


def _report_refused(
    store: Store, pending: Sequence[PendingChunk], refused: dict[str, str], counters: Counters
) -> None:
    """Log and note on their files' rows the chunks the model refused."""
    by_path: dict[str, list[str]] = {}
    for p in pending:
        if p.content_hash in refused:
            by_path.setdefault(p.path, []).append(refused[p.content_hash])
    notes: list[FileRecord] = []
    records = store.file_records(sorted(by_path))
    for path, reasons in by_path.items():
        counters.refused += len(reasons)
        note = f"no vectors for {len(reasons)} chunk{'s' if len(reasons) != 1 else ''}: {reasons[0]}"
        log.warning("%s: %s; the rest of the workspace is embedded", path, note)
        rec = records.get(path)
        if rec is not None and note not in rec.reason:
            notes.append(dataclasses.replace(rec, reason=f"{rec.reason}; {note}" if rec.reason else note))
    store.touch_files(notes)


# ----- status -------------------------------------------------------------------

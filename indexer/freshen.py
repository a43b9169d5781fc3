"""Keep an index fresh one file at a time: what a language server does on save.

``reindex_paths`` re-reads only the paths it is given (saved, created, deleted
or renamed files) with the same rules as the full walk, and replaces their
rows under the writer lock. ``embed_vectors`` fills in pending vectors — the
given paths' first — under the same lock, and stops between batches when
asked, so a later save never waits for a whole workspace's embeddings.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .embed import Embedder
from .errors import IndexMissingError
from .filework import process_file
from .indices import ensure_vector_index, fold_new_rows, needs_optimize
from .model import FileRecord, FileWrite, embedding_text
from .paths import index_path
from .progress import Counters, ProgressFn, no_progress
from .rows import Vectors
from .settings import Settings
from .store import CHUNKS, PENDING, Store
from .sync import (
    fast_tier_for,
    fast_vectors_of,
    flush_writes,
    index_uri_for,
    indexed_hash,
    rebuild_reason,
    wanted_meta,
    writer_lock,
)
from .vectors import embed_fast_pending, embed_pending
from .workspace import IgnoreMatcher
from .worktrees import shared_cache_dir

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class FreshenReport:
    """What one ``reindex_paths`` call did."""

    changed: tuple[str, ...]  # rows replaced (new, edited, or newly skipped / failed)
    removed: tuple[str, ...]  # gone from disk or now ignored: rows deleted
    unchanged: int  # same content as indexed (at most the mtime moved)
    chunks_written: int
    chunks_embedded: int
    vectors_pending: int
    seconds: float


# Saved files with at most this many new chunks are embedded before their rows are
# written (~0.1 s each at most); more go through the interruptible vectors phase.
PRE_EMBED_CHUNKS = 64


def normalise_paths(paths: Iterable[str]) -> list[str]:
    """Workspace-relative POSIX paths, deduplicated, in order; ``..`` and absolute paths dropped."""
    out: dict[str, None] = {}
    for raw in paths:
        parts = [p for p in raw.replace(os.sep, "/").split("/") if p not in ("", ".")]
        if not parts or ".." in parts or raw.startswith("/"):
            log.warning("ignoring a path outside the workspace: %s", raw)
            continue
        out["/".join(parts)] = None
    return list(out)


def _open_for_write(uri: str, root: Path, settings: Settings, embedder: Embedder) -> Store:
    store = Store(uri, cache_dir=shared_cache_dir(root, settings))
    reason = rebuild_reason(store.read_meta(), wanted_meta(settings, embedder))
    if reason:
        raise IndexMissingError(
            f"the index of {root} needs a full build ({reason}): run `codesift index {root}`"
        )
    return store


def reindex_paths(
    root: Path,
    settings: Settings,
    paths: Iterable[str],
    *,
    embedder: Embedder,
    matcher: IgnoreMatcher | None = None,
    project: str = "",
    embed: bool = True,
    wait: bool = True,
    cancel: threading.Event | None = None,
    progress: ProgressFn = no_progress,
) -> FreshenReport:
    """Re-index only ``paths`` (workspace-relative): each file's rows replaced as a unit.

    A path the walk would not yield any more (deleted, now ignored, a directory
    that is gone) loses its rows, as do indexed files under a vanished
    directory. With ``embed`` the pending vectors are filled in afterwards,
    these paths' first. Raises IndexMissingError when there is no usable index
    (none yet, or a schema / model / settings change that needs a full build).
    """
    started = time.perf_counter()
    root = root.resolve()
    project = project or root.name
    wanted = normalise_paths(paths)
    matcher = matcher or IgnoreMatcher(root, settings.index)
    counters = Counters()
    with writer_lock(index_uri_for(root, settings), wait=wait):
        store = _open_for_write(index_uri_for(root, settings), root, settings, embedder)
        # ``wanted`` are OS paths; the index keys files by their stored form (paths.py).
        records = store.file_records([index_path(p) for p in wanted])
        batch: list[FileWrite] = []
        touched: list[FileRecord] = []
        removed: list[str] = []
        unchanged = 0
        for path in wanted:
            entry = matcher.entry(path)
            if entry is None:
                removed += _gone(root, path, records, store)
                continue
            write = process_file(entry, indexed_hash(records.get(entry.path)), settings, project)
            if write is None:
                unchanged += 1
                rec = records[entry.path]
                touched.append(dataclasses.replace(rec, size=entry.size, mtime_ns=entry.mtime_ns))
            else:
                batch.append(write)
        removed = list(dict.fromkeys(removed))
        store.remove_files(removed)
        vectors = _embed_into_cache(store, batch, embedder, settings, counters) if embed else None
        # The fast tier's vectors go in with the rows, whatever the batch's size (a static
        # model embeds ~900 chunks a CPU-second): the saved text is searchable by meaning
        # at once, by the static model until the main model's vectors are in.
        fast = fast_tier_for(settings, embedder) if embed else None
        fast_vectors = fast_vectors_of(batch, fast, counters)
        flush_writes(store, batch, embedder, settings, counters, vectors=vectors, fast_vectors=fast_vectors)
        store.touch_files(touched)
        changed = tuple(w.record.path for w in batch)
        if embed:
            embed_pending(store, embedder, settings, counters, progress, cancel, first=changed)
        pending = store.count(CHUNKS, PENDING)
    report = FreshenReport(
        changed=changed,
        removed=tuple(removed),
        unchanged=unchanged,
        chunks_written=counters.chunks_written,
        chunks_embedded=counters.embedded,
        vectors_pending=pending,
        seconds=time.perf_counter() - started,
    )
    log.info(
        "re-indexed %d paths: %d changed, %d removed, %d unchanged in %.0f ms",
        len(wanted),
        len(changed),
        len(removed),
        unchanged,
        report.seconds * 1000,
    )
    return report


def _embed_into_cache(
    store: Store, batch: list[FileWrite], embedder: Embedder, settings: Settings, counters: Counters
) -> dict[str, Vectors] | None:
    """Embed a few saved files' new chunks before their rows are written, so the rows go
    in once, with their vectors: filling vectors in afterwards is a second merge over
    the whole chunks table (~0.4 s on the stdlib). Returns every vector of the batch
    (cached or new), or None when the batch is left to ``embed_pending``, which can
    be interrupted between steps: a large one, or a failed embedding."""
    chunks = {c.content_hash: embedding_text(c.path, c.text) for w in batch for c in w.chunks}
    if not chunks or len(chunks) > PRE_EMBED_CHUNKS:
        return None
    key = settings.vector_cache_key(embedder.model_id)
    vectors = store.cache.lookup(key, embedder.dimension, chunks)
    counters.from_cache += len(vectors)
    missing = [h for h in chunks if h not in vectors]
    if missing:
        fresh = embedder.embed_documents([chunks[h] for h in missing])
        store.cache.put(key, embedder.dimension, missing, fresh)
        vectors.update(zip(missing, fresh, strict=True))
        counters.embedded += len(missing)
    return vectors


def _gone(root: Path, path: str, records: dict[str, FileRecord], store: Store) -> list[str]:
    """Indexed paths to forget for a path the walk no longer yields (``records``: the
    files rows of the paths asked for)."""
    stored = index_path(path)
    out = [stored] if stored in records else []
    if not (root / path).is_dir():  # a vanished (or ignored) directory takes its files along
        out += list(store.file_records(under=stored))
    return out


def embed_vectors(
    root: Path,
    settings: Settings,
    *,
    embedder: Embedder,
    first: Sequence[str] = (),
    wait: bool = True,
    cancel: threading.Event | None = None,
    progress: ProgressFn = no_progress,
    step_chunks: int = 0,
) -> int:
    """Embed the chunks still without a vector (``first`` paths first) under the writer lock.

    Stops between batches when ``cancel`` is set; what was embedded stays. A
    small ``step_chunks`` makes those stops frequent, so a waiting save is not
    held up by a whole batch (0: the indexer's own step).
    Returns how many chunks received a vector.
    """
    root = root.resolve()
    uri = index_uri_for(root, settings)
    with writer_lock(uri, wait=wait):
        store = _open_for_write(uri, root, settings, embedder)
        fast = fast_tier_for(settings, embedder)
        if fast is not None:
            embed_fast_pending(store, fast, progress=progress, cancel=cancel)
            if not (cancel and cancel.is_set()):  # before MiniLM's minutes: the static tier answers meanwhile
                ensure_vector_index(store, settings.index.vector_index_rows, fast=True)
        if not (cancel and cancel.is_set()):
            fold_new_rows(store)
        done = embed_pending(
            store, embedder, settings, progress=progress, cancel=cancel, first=first, step=step_chunks
        )
        if not (cancel and cancel.is_set()):
            ensure_vector_index(store, settings.index.vector_index_rows)
        if done and needs_optimize(store):
            store.optimize()  # vectors rewrote rows: fold them back into the FTS index
        return done


def optimize_index(root: Path, settings: Settings, *, wait: bool = False) -> bool:
    """After a burst of saves: compact the tables and fold new rows into the indices,
    once enough has piled up (``indices.needs_optimize``). Saves wait for it (2.4 s at
    101k chunks), so a few saves' rows are left to be searched unindexed instead.
    Returns whether it optimised."""
    uri = index_uri_for(root.resolve(), settings)
    with writer_lock(uri, wait=wait):
        store = Store(uri, cache_dir=shared_cache_dir(root.resolve(), settings))
        if store.read_meta() is None:
            return False
        ensure_vector_index(store, settings.index.vector_index_rows)
        ensure_vector_index(store, settings.index.vector_index_rows, fast=True)
        if not needs_optimize(store):
            return False
        store.optimize()
        return True

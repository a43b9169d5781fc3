"""Reconcile a workspace with its index: what changed, one writer, per-file
atomic replace, repair after a crash.

Phase 1 (text) walks, parses and stores chunks, symbols and files rows: grep,
BM25 and symbols work as soon as it ends. Phase 2 (vectors) embeds the chunks
still without a vector, reusing the (model, content hash) cache.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import logging
import os
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from datetime import timedelta
from pathlib import Path

from . import journal, lease
from .clone import clone_sibling
from .clones import register as register_clone
from .compaction import linked_bytes, pylance_installed
from .embed import Embedder, MissingModel, embedder_for_indexing, fast_tier_embedder
from .errors import EmbedError, IndexBusyError, WorkspaceError, store_write_error
from .faults import crash_point
from .filework import parse_workers, processed
from .indices import ensure_indices, ensure_vector_index, fold_new_rows, needs_optimize
from .lease import DEFAULT_LEASE_S, Lease
from .locate import index_exists_at
from .locks import try_flock
from .model import (
    FileRecord,
    FileStatus,
    FileWrite,
    IndexReport,
    IndexStatus,
    SkipReason,
    WalkEntry,
    embedding_text,
)
from .objectstore import is_object_store
from .overlay import HydrateReport, hydrate, overlay_status
from .progress import Counters, Progress, ProgressFn, no_progress
from .rows import Vectors
from .settings import Settings
from .static_embed import StaticEmbedder
from .store import (
    CHUNKS,
    FAST_DIMENSION_KEY,
    FAST_EMBEDDED,
    FAST_MODEL_KEY,
    KEEP_VERSIONS_FOR,
    PENDING,
    SCHEMA_VERSION,
    SYMBOLS,
    IndexMeta,
    Store,
)
from .store import index_uri_for as index_uri_for  # their home was here: callers import them from sync
from .store import open_store as open_store
from .vectors import embed_fast_pending, embed_pending
from .workspace import ignore_note, walk
from .worktrees import per_folder, shared_cache_dir

log = logging.getLogger(__name__)

# ----- the writer lock ----------------------------------------------------------


@contextlib.contextmanager
def writer_lock(
    index_uri: str,
    *,
    wait: bool,
    on_wait: Callable[[str], None] | None = None,
    timeout_s: float = 10.0,
    lease_s: float = DEFAULT_LEASE_S,
    lost: threading.Event | None = None,
) -> Iterator[Lease | None]:
    """One writer per index: an flock on ``<index>/.lock``, or on an object store a
    renewed lease (``indexer.lease``; it yields the Lease, to check before a final write).

    With ``wait`` the caller blocks until the other writer finishes (``on_wait``
    is told once); without it, IndexBusyError says who holds the lock. ``lost`` is
    set when an object store's lease is lost, so the writer stops.
    """
    if is_object_store(index_uri):
        with lease.held(
            index_uri, timeout_s, lease_s=lease_s, wait=wait, on_wait=on_wait, lost=lost
        ) as taken:
            yield taken
        return
    path = os.path.join(index_uri, ".lock")
    try:
        os.makedirs(index_uri, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise store_write_error(index_uri, "taking the writer lock", exc) from exc
    held = False
    try:
        if not try_flock(fd):
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
            message = f"another codesift process (pid {holder}) is writing the index at {index_uri}"
            if not wait:
                raise IndexBusyError(message + "; try again when it finishes")
            if on_wait:
                on_wait(message + "; waiting for it to finish…")
            fcntl.flock(fd, fcntl.LOCK_EX)
        held = True
        with contextlib.suppress(
            OSError
        ):  # who holds it, for the busy message; a full disk fails later, clearly
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield None
    finally:
        if held:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
        os.close(fd)  # closing releases the flock


# ----- indexing -----------------------------------------------------------------


def fast_tier_for(settings: Settings, embedder: Embedder) -> Embedder | None:
    """The fast tier's model beside ``embedder`` (None: one tier; see ``embed.fast_tier``)."""
    return fast_tier_embedder(settings.embed, embedder.model_id)


def wanted_meta(settings: Settings, embedder: Embedder) -> IndexMeta:
    fingerprint = settings.index_fingerprint()
    fast = fast_tier_for(settings, embedder)
    if fast is not None:
        fingerprint[FAST_MODEL_KEY] = fast.model_id
        fingerprint[FAST_DIMENSION_KEY] = str(fast.dimension)
    return IndexMeta(
        schema_version=SCHEMA_VERSION,
        model_id=embedder.model_id,
        dimension=embedder.dimension,
        fingerprint=fingerprint,
    )


def rebuild_reason(have: IndexMeta | None, want: IndexMeta) -> str:
    if have is None:
        return "no index yet"
    if have.schema_version != want.schema_version:
        return f"schema version {have.schema_version} → {want.schema_version}"
    if have.model_id != want.model_id or have.dimension != want.dimension:
        return f"model {have.model_id} ({have.dimension}) → {want.model_id} ({want.dimension})"
    if have.fast_model_id != want.fast_model_id or have.fast_dimension != want.fast_dimension:
        return f"fast tier {_tier_name(have)} → {_tier_name(want)}"
    if have.fingerprint != want.fingerprint:
        return "settings that shape the index changed"
    return ""


def _tier_name(meta: IndexMeta) -> str:
    return f"{meta.fast_model_id} ({meta.fast_dimension})" if meta.fast_model_id else "none"


def index_workspace(
    root: Path,
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    progress: ProgressFn = no_progress,
    embed: bool = True,
    wait: bool = True,
    rebuild: bool = False,
    cancel: threading.Event | None = None,
    project: str = "",
    on_wait: Callable[[str], None] | None = None,
    keep_versions_for: timedelta | None = None,
    locked: bool = False,
) -> IndexReport:
    """Bring the workspace's index up to date and return what was done.

    With ``index.remote`` set, files whose content is the remote index's are
    copied from it first (``overlay.hydrate``) and only the rest are parsed and
    embedded. ``keep_versions_for``: how long optimising keeps old table versions
    (a published index keeps them for readers pinned to the previous publish).
    ``locked``: the caller holds the index's writer lock already (a publish).
    Safe to interrupt at any point (SIGKILL included): the next call repairs.
    """
    started = time.perf_counter()
    root = root.resolve()
    if not root.is_dir():
        raise WorkspaceError(f"workspace root {root} is not a directory")
    project = project or root.name
    uri = index_uri_for(root, settings)
    embedder = embedder or embedder_for_indexing(settings.embed)
    # The fast tier needs no transformer: it fills in even while the main model is missing.
    fast = fast_tier_for(settings, embedder) if embed else None
    semantic_off = ""
    if isinstance(embedder, MissingModel):
        # Grep, BM25, symbols and the graph need no model: index them, leave vectors pending.
        semantic_off = f"semantic search is off, vectors wait for the model: {embedder.error}"
        log.warning("%s", semantic_off)
        embed = False
    cancel = cancel or threading.Event()
    counters = Counters()
    lock = (
        contextlib.nullcontext()
        if locked
        else writer_lock(
            uri, wait=wait, on_wait=on_wait, timeout_s=settings.index.remote_timeout_s, lost=cancel
        )
    )
    with lock:
        cache_dir = shared_cache_dir(root, settings)
        keep = keep_versions_for or KEEP_VERSIONS_FOR
        store = Store(uri, keep_versions_for=keep, cache_dir=cache_dir)
        want = wanted_meta(settings, embedder)
        have = store.read_meta()
        cloned = None
        if not rebuild and store.is_local and rebuild_reason(have, want):
            # A new worktree (or one whose index must be rebuilt): its tables start as
            # hard links to a sibling's built as wanted (``clone``).
            cloned = clone_sibling(uri, root, settings, want, project)
            if cloned is not None:
                counters.phases["clone"] = cloned.seconds
                store = Store(uri, keep_versions_for=keep, cache_dir=cache_dir)  # the new tables
                have = store.read_meta()
        reason = "asked for (--rebuild)" if rebuild else rebuild_reason(have, want)
        if reason:
            log.info("building the index from scratch: %s", reason)
            store.create(want)
        _sweep_orphans(store)
        store.cache.absorb_own()  # an index from before the shared cache: its vectors move there

        t = time.perf_counter()
        progress(Progress("walk", 0, 0))
        entries = list(walk(root, settings.index))
        note = ignore_note(root, settings.index, len(entries)) if reason or not entries else ""
        if note:
            log.warning("%s", note)
        counters.phases["walk"] = time.perf_counter() - t

        hydrated = HydrateReport()
        shares = settings.index
        if (shares.remote or shares.share_worktrees or shares.share_clones) and not cancel.is_set():
            t = time.perf_counter()
            hydrated = hydrate(
                store,
                root,
                settings,
                entries,
                want,
                settings.vector_cache_key(embedder.model_id),
                project,
                cancel=cancel,
                progress=lambda done, total: progress(Progress("remote", done, total)),
            )
            if hydrated.copied_files or hydrated.note:
                counters.phases["remote"] = time.perf_counter() - t

        t = time.perf_counter()
        seen = len(entries)
        # A static main model embeds faster than a second write of the rows costs: its
        # vectors go in with the text phase's rows, and the vectors phase finds none left.
        # The fast tier's do not: grep, BM25 and symbols are complete first (on the stdlib
        # the text phase took 2.5× as long with them: 142 → 358 s at load 9–12), then
        # `embed_fast_pending` fills them, then MiniLM — the language server's order.
        inline = embed and isinstance(embedder, StaticEmbedder)
        linked = (
            {p for p, r in store.file_records().items() if r.status == FileStatus.INDEXED}
            if cloned
            else set()
        )
        changed_paths = _sync_text(
            store, entries, settings, embedder, project, counters, progress, cancel, inline
        )
        if linked:  # the linked files neither re-parsed nor gone from this checkout
            linked = (linked - set(changed_paths)) & set(store.file_records())
        ensure_indices(store)
        counters.phases["parse"] = time.perf_counter() - t

        if fast is not None and not cancel.is_set():
            # Chunks the text phase left without a fast vector (an earlier --no-embed run,
            # a failed batch): none, usually, and then this is one count.
            embed_fast_pending(store, fast, counters, progress, cancel)
            if not cancel.is_set():  # before MiniLM's minutes: the static tier answers meanwhile
                ensure_vector_index(store, settings.index.vector_index_rows, fast=True)

        if embed and not cancel.is_set():
            t = time.perf_counter()
            if fold_new_rows(store):
                counters.phases["optimize"] = time.perf_counter() - t
            t = time.perf_counter()
            embed_pending(store, embedder, settings, counters, progress, cancel, first=changed_paths)
            counters.phases["embed"] = time.perf_counter() - t

        t = time.perf_counter()
        progress(Progress("optimize", 0, 1))
        if embed and not cancel.is_set():
            ensure_vector_index(store, settings.index.vector_index_rows)
        # Not after every rebuild: its indices were built after its rows, so none
        # wait outside them, and compacting the write batches' fragments (then
        # remapping the FTS indices) cost the stdlib 4 s of CPU for no measurable
        # query gain. The embedding phase's commits trigger it when they pile up.
        if needs_optimize(store):
            store.optimize()
        counters.phases["optimize"] = counters.phases.get("optimize", 0.0) + time.perf_counter() - t
        pending = store.count(CHUNKS, PENDING)
        progress(Progress("done", 1, 1))
        if shares.share_clones and store.is_local and not cancel.is_set() and per_folder(shares.index_dir):
            register_clone(root, uri)  # another clone of this repository may start from here
    return IndexReport(
        files_seen=seen,
        files_changed=counters.changed,
        files_removed=counters.removed,
        files_skipped=counters.skipped,
        files_failed=counters.failed,
        chunks_written=counters.chunks_written,
        chunks_embedded=counters.embedded,
        chunks_embedded_fast=counters.fast_embedded,
        chunks_from_cache=counters.from_cache,
        seconds=time.perf_counter() - started,
        phase_seconds=counters.phases,
        rebuilt=bool(reason),
        rebuild_reason=reason,
        vectors_pending=pending,
        note="; ".join(n for n in (note, semantic_off, hydrated.note) if n),
        files_from_remote=hydrated.copied_files,
        chunks_from_remote=hydrated.copied_chunks,
        files_linked=len(linked),
        bytes_linked=cloned.linked_bytes if cloned is not None else 0,
    )


def _sweep_orphans(store: Store) -> None:
    """Rows of paths with no ``files`` row are leftovers of an interrupted removal."""
    known = set(store.file_records())
    orphans = sorted(store.stored_paths() - known)
    if orphans:
        log.info("removing %d files' leftover rows after an interrupted run", len(orphans))
        store.remove_files(orphans)


def _sync_text(
    store: Store,
    entries: Sequence[WalkEntry],
    settings: Settings,
    embedder: Embedder,
    project: str,
    counters: Counters,
    progress: ProgressFn,
    cancel: threading.Event,
    inline: bool = False,
) -> list[str]:
    records = store.file_records()
    walked = {e.path for e in entries}
    removed = sorted(set(records) - walked)
    if removed:
        store.remove_files(removed)
        counters.removed = len(removed)

    todo = [e for e in entries if not _unchanged(e, records.get(e.path))]
    batch: list[FileWrite] = []
    touched: list[FileRecord] = []
    changed: list[str] = []
    total = len(todo)
    progress(Progress("parse", 0, total))
    work = [(e, indexed_hash(records.get(e.path))) for e in todo]
    # parsed (and, for a static model, embedded) by worker processes on a large run,
    # while this thread writes
    given: dict[str, Vectors] = {}  # the batch's vectors the workers computed
    files = processed(work, settings, project, parse_workers(settings, total), embed=inline)
    with contextlib.closing(files) as answers:
        for done, (entry, (write, vectors)) in enumerate(zip(todo, answers, strict=False), 1):
            if cancel.is_set():
                break  # the workers stop; what they parsed ahead is not written
            crash_point("parse")
            if write is None:  # same content, new mtime
                rec = records[entry.path]
                touched.append(dataclasses.replace(rec, size=entry.size, mtime_ns=entry.mtime_ns))
            else:
                counters.changed += 1
                counters.failed += write.record.status == FileStatus.FAILED
                batch.append(write)
                changed.append(entry.path)
                given.update(vectors or {})
            if len(batch) >= settings.index.write_batch_files or done == total:
                _flush_text(store, batch, embedder, settings, counters, records.keys(), inline, given)
                batch, given = [], {}
                progress(Progress("parse", done, total, chunks=counters.chunks_written))
    _flush_text(store, batch, embedder, settings, counters, records.keys(), inline, given)
    store.touch_files(touched)
    if not cancel.is_set():
        journal.clear(store.uri)  # every walked file written, every gone one removed
    counters.skipped = sum(1 for r in store.file_records().values() if r.status == FileStatus.SKIPPED)
    return changed


def _flush_text(
    store: Store,
    batch: list[FileWrite],
    embedder: Embedder,
    settings: Settings,
    counters: Counters,
    known: Collection[str],
    inline: bool,
    given: dict[str, Vectors] | None = None,
) -> None:
    """Write a batch of the text phase, with the main model's vectors when it is static
    (``inline``): ``given`` (the parse workers') when they cover the batch, else computed now."""
    if not batch:
        return
    vectors = None
    if inline:
        whole = given is not None and all(c.content_hash in given for w in batch for c in w.chunks)
        vectors = given if whole else _inline_vectors(batch, embedder)
    if vectors is not None:
        counters.embedded += sum(len(w.chunks) for w in batch)
    flush_writes(store, batch, embedder, settings, counters, known, vectors)


def fast_vectors_of(
    batch: Sequence[FileWrite], fast: Embedder | None, counters: Counters
) -> dict[str, Vectors] | None:
    """The fast tier's vectors of a batch's chunks (None: no tier, or the model failed and
    ``embed_fast_pending`` retries them)."""
    vectors = _inline_vectors(batch, fast) if fast is not None else None
    if vectors is not None:
        counters.fast_embedded += sum(len(w.chunks) for w in batch)
    return vectors


def _inline_vectors(batch: Sequence[FileWrite], embedder: Embedder) -> dict[str, Vectors] | None:
    """Every vector of a batch's chunks, embedded now (no cache: a static model embeds
    faster than the cache answers). None when the model fails: the chunks stay
    pending, and the vectors phase embeds them one pool at a time and reports which
    text it refused."""
    texts = {c.content_hash: embedding_text(c.path, c.text) for w in batch for c in w.chunks}
    if not texts:
        return None
    try:
        rows = embedder.embed_documents(list(texts.values()))
    except EmbedError as exc:
        log.warning("embedding with the text phase failed, the vectors phase retries: %s", exc)
        return None
    return dict(zip(texts, rows, strict=True))


def indexed_hash(record: FileRecord | None) -> str:
    return record.content_hash if record is not None and record.status == FileStatus.INDEXED else ""


# Skips that say nothing about the file's content: redone whatever its size and mtime.
_REDO_SKIPS = tuple(
    str(r)
    for r in (SkipReason.SYMLINK_LOOP, SkipReason.SYMLINK_OUTSIDE, SkipReason.NOT_REGULAR, SkipReason.CHANGED)
)


def _unchanged(entry: WalkEntry, record: FileRecord | None) -> bool:
    """Same size and mtime as when indexed (or skipped, for the same walk reason)."""
    if record is None:
        return False
    if entry.skip is not None:
        return record.status == FileStatus.SKIPPED and record.reason.startswith(str(entry.skip))
    if record.status == FileStatus.SKIPPED and record.reason.startswith(_REDO_SKIPS):
        return False  # it was skipped by the walk (or changed under the read) and is a plain file now
    return record.size == entry.size and record.mtime_ns == entry.mtime_ns


def flush_writes(
    store: Store,
    batch: list[FileWrite],
    embedder: Embedder,
    settings: Settings,
    counters: Counters,
    known: Collection[str] | None = None,
    vectors: dict[str, Vectors] | None = None,
    fast_vectors: dict[str, Vectors] | None = None,
) -> None:
    """Store a batch of files, vectors from the cache where it has them.

    ``known`` — the paths with a ``files`` row after this run's orphan sweep — lets
    a batch of only new files be appended instead of replaced (no rows to delete).
    ``vectors``, when the caller has already looked them up, saves a second lookup;
    ``fast_vectors`` are the fast tier's (dropped when the index has no fast tier).
    """
    if not batch:
        return
    hashes = [c.content_hash for w in batch for c in w.chunks]
    if vectors is None:
        vectors = store.cache.lookup(settings.vector_cache_key(embedder.model_id), embedder.dimension, hashes)
        counters.from_cache += sum(1 for h in hashes if h in vectors)
    fresh = known is not None and not any(w.record.path in known for w in batch)
    store.write_files(batch, embedder.dimension, vectors, fresh=fresh, fast_vectors=fast_vectors)
    counters.chunks_written += len(hashes)


# ----- vectors ------------------------------------------------------------------


def index_status(root: Path, settings: Settings, *, probe_remote: bool = True) -> IndexStatus:
    """What the index of a workspace holds, without changing it.

    With ``index.remote`` set, also the remote's state; ``probe_remote`` contacts it
    once (at most ``index.remote_timeout_s``) to say whether it answers now.
    """
    root = root.resolve()
    uri = index_uri_for(root, settings)
    if not index_exists_at(uri):  # opening a missing index directory would create it
        return IndexStatus(root=str(root), index_path=uri, exists=False)
    cache = shared_cache_dir(root, settings)
    # Reading never writes: a shared cache no index run has made yet is not made here.
    store = Store(uri, cache_dir=cache if cache is not None and cache.is_dir() else None)
    meta = store.read_meta()
    if meta is None:
        return IndexStatus(root=str(root), index_path=uri, exists=False)
    records = store.file_records().values()
    by_status: dict[FileStatus, list[FileRecord]] = {s: [] for s in FileStatus}
    for r in records:
        by_status[r.status].append(r)
    pending = store.count(CHUNKS, PENDING)
    chunks = store.count(CHUNKS)
    fast_done = store.count(CHUNKS, FAST_EMBEDDED) if store.fast_dimension() else 0
    return IndexStatus(
        root=str(root),
        index_path=uri,
        exists=True,
        files_indexed=len(by_status[FileStatus.INDEXED]),
        files_skipped=len(by_status[FileStatus.SKIPPED]),
        files_failed=len(by_status[FileStatus.FAILED]),
        chunks=chunks,
        symbols=store.count(SYMBOLS),
        vectors_done=chunks - pending,
        vectors_pending=pending,
        schema_version=meta.schema_version,
        model=meta.model_id,
        dimension=meta.dimension,
        fast_model=meta.fast_model_id,
        fast_vectors_done=fast_done,
        fast_vectors_pending=chunks - fast_done if meta.fast_model_id else 0,
        index_bytes=store.index_bytes(),
        cache_path=store.cache.uri,
        cache_shared=store.cache.shared,
        cache_bytes=store.cache.disk_bytes(),
        linked_bytes=linked_bytes(uri),
        links_kept=pylance_installed(),
        skipped=tuple(sorted(by_status[FileStatus.SKIPPED], key=lambda r: r.path)),
        failed=tuple(sorted(by_status[FileStatus.FAILED], key=lambda r: r.path)),
        notes=tuple(sorted((r for r in by_status[FileStatus.INDEXED] if r.reason), key=lambda r: r.path)),
        remote=overlay_status(store, settings, root, probe=probe_remote),
        reader=store.reader,
    )

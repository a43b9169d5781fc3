"""The local index as an overlay of a published team index (``index.remote``).

Before the local sync parses anything, ``hydrate`` copies from the remote — as
its newest manifest pins it — the rows and vectors of every file whose content
here is the remote's, through the store's per-file replace (the same crash-safety
protocol as a parse). The sync then finds those files unchanged and parses and
embeds only what differs: edited, added and untracked files. Files deleted here
are never copied, so they hide the remote's rows; files edited here keep their
own rows, so local rows win. Search, symbols and the graph read one local index:
the union is materialised, not assembled per query, so BM25 statistics, the
graph's resolution and every filter see exactly one consistent set of rows, and
a search never waits on the network.

The remote's files and hashes are remembered in ``<index>/remote.json`` with the
outcome of the last contact, so status answers offline and a later sync against
the same publish reads no remote file list again.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .errors import StoreError
from .model import FileStatus, RemoteStatus, WalkEntry
from .objectstore import normalise_uri, within
from .remote import Manifest, RemoteIndex, incompatibility, newest_manifest, source_commit
from .rows import arrow_to_matrix, in_filters
from .settings import Settings
from .source import read_source
from .store import CHUNKS, EDGES, EMBEDDED, FILES, SYMBOLS, IndexMeta, Store
from .worktrees import sibling_index

log = logging.getLogger(__name__)

STATE_FILE = "remote.json"
COPY_BATCH_FILES = 500


@dataclass(frozen=True, slots=True)
class OverlayState:
    """What the local index knows of its remote (``remote.json``)."""

    uri: str = ""
    manifest: str = ""  # Manifest.key of the publish copied from
    commit: str = ""
    published_at: float = 0.0
    model: str = ""
    checked_at: float = 0.0
    reachable: bool = False
    error: str = ""  # why the last contact failed
    refused: str = ""  # why the remote cannot be mixed with this index
    hashes: dict[str, str] = field(default_factory=dict)  # remote path → content hash (indexed files)
    worktree: str = ""  # the sibling worktree copied from (index.share_worktrees), "" for a remote


@dataclass(frozen=True, slots=True)
class HydrateReport:
    copied_files: int = 0
    copied_chunks: int = 0
    cached_vectors: int = 0
    seconds: float = 0.0
    note: str = ""  # the remote was unreachable, refused or empty: the index went on alone


def load_state(index_uri: str) -> OverlayState | None:
    """The overlay state of a local index, or None when it never had a remote."""
    try:
        raw = json.loads((Path(index_uri) / STATE_FILE).read_text(encoding="utf-8"))
        return OverlayState(**raw)
    except (OSError, ValueError, TypeError):
        return None


def save_state(index_uri: str, state: OverlayState) -> None:
    """Write ``remote.json`` atomically (temp file + rename)."""
    folder = Path(index_uri)
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".remote-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(
                {k: getattr(state, k) for k in OverlayState.__dataclass_fields__}, f, separators=(",", ":")
            )
        os.replace(tmp, folder / STATE_FILE)


def remote_uri(settings: Settings, root: Path) -> str:
    """The configured remote as a URI LanceDB opens (a relative path is relative to ``root``)."""
    return normalise_uri(settings.index.remote, base=root) if settings.index.remote else ""


@dataclass(frozen=True, slots=True)
class Source:
    """Where an index run copies from: a published remote, or another worktree's live index."""

    uri: str
    worktree: Path | None = None


def copy_source(settings: Settings, root: Path, own_uri: str) -> Source | None:
    """``index.remote``, else a sibling worktree's index (``index.share_worktrees``) or
    another clone's (``index.share_clones``), else None."""
    if settings.index.remote:
        return Source(remote_uri(settings, root))
    found = sibling_index(root, settings.index, own_uri)
    return Source(found[1], found[0]) if found is not None else None


@contextlib.contextmanager
def _pinned(source: Source, timeout_s: float) -> Iterator[tuple[RemoteIndex, Manifest | None]]:
    """The index to copy from and its publish to pin; a sibling worktree's index as it is
    now, under its writer lock. A remote is asked within ``timeout_s`` in all (connecting
    lists the store too): a silent store costs an index run that long, no more."""
    if source.worktree is None:
        manifest = newest_manifest(source.uri, timeout_s)
        remote = within(
            timeout_s, f"the remote index at {source.uri}", lambda: RemoteIndex(source.uri, timeout_s)
        )
        yield remote, manifest
        return
    from .sync import writer_lock  # sync runs hydrate: imported here, not at the top

    remote = RemoteIndex(source.uri, timeout_s)
    with writer_lock(source.uri, wait=False):
        yield remote, remote.current(source_commit(source.worktree))


def hydrate(
    store: Store,
    root: Path,
    settings: Settings,
    entries: Sequence[WalkEntry],
    want: IndexMeta,
    cache_key: str,
    project: str,
    *,
    cancel: threading.Event | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> HydrateReport:
    """Copy from the remote (or a sibling worktree's index) the rows of files whose content here is its.

    Never raises for the source: unreachable, busy, refused (another model or
    schema) or empty, it returns a report whose ``note`` says so, remembered for
    status, and the local index goes on alone. Local write failures raise as always.
    """
    started = time.perf_counter()
    source = copy_source(settings, root, store.uri)
    if source is None:
        return HydrateReport()
    uri = source.uri
    old = load_state(store.uri)
    base = old if old is not None and old.uri == uri else OverlayState(uri=uri)
    try:
        with _pinned(source, settings.index.remote_timeout_s) as (remote, manifest):
            if manifest is None:
                if source.worktree is not None:
                    return HydrateReport()  # the sibling's index is not complete yet
                note = f"nothing is published at {uri} yet: indexing alone"
                save_state(store.uri, replace(base, checked_at=time.time(), reachable=True, error=note))
                return HydrateReport(note=note, seconds=time.perf_counter() - started)
            refused = incompatibility(manifest.meta, want)
            if refused and source.worktree is not None:
                log.info("not copying from the index of %s: %s", source.worktree, refused)
                return HydrateReport()
            if refused:
                note = f"the index at {uri} is not used: {refused}"
                log.warning("%s", note)
                state = replace(base, checked_at=time.time(), reachable=True, refused=refused, error="")
                save_state(store.uri, state)
                return HydrateReport(note=note, seconds=time.perf_counter() - started)
            hashes = base.hashes if base.manifest == manifest.key else _remote_hashes(remote, manifest)
            report = _copy(
                store, remote, manifest, entries, hashes, settings, cache_key, project, cancel, progress
            )
    except StoreError as exc:
        if source.worktree is not None:
            log.info("not copying from the index of %s this time: %s", source.worktree, exc)
            return HydrateReport(seconds=time.perf_counter() - started)
        at = f" (the local copy is as of {base.commit or 'its last publish'})" if base.manifest else ""
        note = f"{exc}; answering from the local index{at}"
        log.warning("%s", note)
        save_state(store.uri, replace(base, checked_at=time.time(), reachable=False, error=str(exc)))
        return HydrateReport(note=note, seconds=time.perf_counter() - started)
    if not (cancel and cancel.is_set()):
        save_state(
            store.uri,
            OverlayState(
                uri=uri,
                manifest=manifest.key,
                commit=manifest.commit,
                published_at=manifest.published_at,
                model=manifest.meta.model_id,
                checked_at=time.time(),
                reachable=True,
                hashes=hashes,
                worktree=str(source.worktree or ""),
            ),
        )
    return replace(report, seconds=time.perf_counter() - started)


def _remote_hashes(remote: RemoteIndex, manifest: Manifest) -> dict[str, str]:
    try:
        cols = (
            remote.pinned(FILES, manifest)
            .search()
            .where(f"status = '{FileStatus.INDEXED}'")
            .select(["path", "content_hash"])
            .limit(None)
            .to_arrow()
        )
    except StoreError:
        raise
    except Exception as exc:
        raise StoreError(f"cannot read the file list of the remote index at {remote.uri}: {exc}") from exc
    return dict(zip(cols.column("path").to_pylist(), cols.column("content_hash").to_pylist(), strict=True))


def _copy(
    store: Store,
    remote: RemoteIndex,
    manifest: Manifest,
    entries: Sequence[WalkEntry],
    hashes: dict[str, str],
    settings: Settings,
    cache_key: str,
    project: str,
    cancel: threading.Event | None,
    progress: Callable[[int, int], None] | None,
) -> HydrateReport:
    records = store.file_records()
    copy: dict[str, WalkEntry] = {}
    differ: list[str] = []  # remote files changed here and due for a parse: their chunks' vectors help
    for e in entries:
        want_hash = hashes.get(e.path)
        if e.skip is not None or want_hash is None:
            continue
        rec = records.get(e.path)
        if rec is not None and rec.status == FileStatus.INDEXED and rec.content_hash == want_hash:
            continue  # already the remote's content (copied before, or identical)
        if rec is not None and (rec.size, rec.mtime_ns) == (e.size, e.mtime_ns):
            continue  # unchanged here since indexed, and not the remote's: the overlay's own row
        source = read_source(e, settings.index.max_file_bytes)
        if source.skip is None and source.content_hash == want_hash:
            copy[e.path] = e
        else:
            differ.append(e.path)
    if not copy and not differ:
        return HydrateReport()
    tables = {name: remote.pinned(name, manifest) for name in (FILES, CHUNKS, SYMBOLS, EDGES)}
    schemas = {name: store.table(name).schema for name in (FILES, CHUNKS, SYMBOLS, EDGES)}
    dim = manifest.meta.dimension
    copied_files = copied_chunks = cached = 0
    paths = sorted(copy)
    for start in range(0, len(paths), COPY_BATCH_FILES):
        if cancel is not None and cancel.is_set():
            break
        part = paths[start : start + COPY_BATCH_FILES]
        flt = next(in_filters("path", part))
        got = {name: _read(tbl, flt, schemas[name], remote.uri) for name, tbl in tables.items()}
        files = _local_stats(got[FILES], copy)
        chunks = got[CHUNKS]
        if chunks.num_rows:
            chunks = chunks.set_column(
                chunks.schema.get_field_index("project"),
                "project",
                pa.array([project] * chunks.num_rows, pa.string()),
            )
        store.replace_rows(
            files,
            [(CHUNKS, chunks), (SYMBOLS, got[SYMBOLS]), (EDGES, got[EDGES])],
            fresh=not any(p in records for p in part),
        )
        cached += _cache_vectors(store, chunks, cache_key, dim)
        copied_files += files.num_rows
        copied_chunks += chunks.num_rows
        if progress is not None:
            progress(copied_files, len(paths))
    for start in range(0, len(differ), COPY_BATCH_FILES):
        # A file edited here keeps most of its chunks: the remote's vectors of them
        # go to the cache, so the parse that follows embeds only the edited ones.
        flt = next(in_filters("path", differ[start : start + COPY_BATCH_FILES]))
        cached += _cache_vectors(
            store,
            _read(tables[CHUNKS], f"({flt}) AND {EMBEDDED}", schemas[CHUNKS], remote.uri),
            cache_key,
            dim,
        )
    log.info(
        "copied %d files (%d chunks) from the remote index at %s (commit %s); %d vectors cached",
        copied_files,
        copied_chunks,
        remote.uri,
        manifest.commit or "unknown",
        cached,
    )
    return HydrateReport(copied_files=copied_files, copied_chunks=copied_chunks, cached_vectors=cached)


def _read(table: lancedb.table.Table, where: str, schema: pa.Schema, uri: str) -> pa.Table:
    """Rows of the remote, each once: two publishes that overlapped (no lock on object stores)
    can both append a file's rows; the copy keeps the first row of each key."""
    try:
        data = table.search().where(where).limit(None).to_arrow()
    except Exception as exc:
        raise StoreError(f"reading rows of the remote index at {uri} failed: {exc}") from exc
    data = data.select(schema.names).cast(schema)
    keys = data.column("path" if "id" not in schema.names else "id").to_pylist()
    first: dict[str, int] = {}
    for i, k in enumerate(keys):
        first.setdefault(k, i)
    if len(first) < len(keys):
        log.warning(
            "%d duplicate rows in the remote index at %s (overlapping publishes)", len(keys) - len(first), uri
        )
        data = data.take(pa.array(sorted(first.values())))
    return data


def _local_stats(files: pa.Table, walked: dict[str, WalkEntry]) -> pa.Table:
    """The remote's files rows with this checkout's size and mtime (the sync's unchanged test)."""
    paths = files.column("path").to_pylist()
    files = files.set_column(
        files.schema.get_field_index("size"), "size", pa.array([walked[p].size for p in paths], pa.int64())
    )
    return files.set_column(
        files.schema.get_field_index("mtime_ns"),
        "mtime_ns",
        pa.array([walked[p].mtime_ns for p in paths], pa.int64()),
    )


def _cache_vectors(store: Store, chunks: pa.Table, cache_key: str, dim: int) -> int:
    """Put the embedded chunks' vectors in the local cache, keyed by content hash."""
    if not chunks.num_rows:
        return 0
    embedded = chunks.filter(pc.equal(chunks.column("has_vector"), True))
    if not embedded.num_rows:
        return 0
    hashes = embedded.column("content_hash").to_pylist()
    first: dict[str, int] = {}
    for i, h in enumerate(hashes):
        first.setdefault(h, i)
    keep = list(first.values())
    vectors = arrow_to_matrix(embedded.column("vector").take(pa.array(keep)), dim)
    store.cache.put(cache_key, dim, list(first), vectors.astype(np.float32))
    return len(keep)


def overlay_status(
    store: Store, settings: Settings, root: Path, *, probe: bool = True
) -> RemoteStatus | None:
    """The overlay's state; with ``probe``, one quick contact with the remote to say whether it answers."""
    uri = remote_uri(settings, root)
    state = load_state(store.uri)
    if not uri and settings.index.share_worktrees and state is not None and state.worktree:
        uri, probe = state.uri, False  # copied from a sibling worktree's index
    if not uri:
        return None
    if state is None or state.uri != uri:
        state = OverlayState(uri=uri)
    reachable, error, checked = state.reachable, state.error, state.checked_at
    if probe:
        checked = time.time()
        try:
            manifest = newest_manifest(uri, settings.index.remote_timeout_s)
            reachable, error = True, "" if manifest is not None else f"nothing is published at {uri} yet"
            if manifest is not None and manifest.key != state.manifest:
                error = f"a newer publish (commit {manifest.commit or 'unknown'}) waits for `codesift index`"
        except StoreError as exc:
            reachable, error = False, str(exc)
    records = store.file_records()
    overlay = sum(
        1
        for p, r in records.items()
        if r.status == FileStatus.INDEXED and state.hashes.get(p) != r.content_hash
    )
    hidden = sum(1 for p in state.hashes if p not in records)
    return RemoteStatus(
        uri=uri,
        commit=state.commit,
        published_at=state.published_at,
        reachable=reachable,
        checked_at=checked,
        error=error,
        refused=state.refused,
        remote_files=len(state.hashes),
        overlay_files=overlay,
        hidden_files=hidden,
    )

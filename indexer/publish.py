"""Publish a workspace's index to a LanceDB URI for a team (``codesift index --to URI``).

The index at URI is built or refreshed by the ordinary sync — incremental
against what is already there, the same per-file replace — and only then made
visible by one manifest row (``remote.write_manifest``). Readers of the URI
(``index.remote``) see the previous publish until that row lands, so a publish
that fails, is denied or is killed half-way publishes nothing.

One publisher per URI at a time: a local path takes the usual flock, an object
store a renewed lease (``indexer.lease``); the second of two CI jobs waits for
the first, or with ``--no-wait`` exits 3 having published nothing.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import lancedb

from .embed import Embedder
from .errors import StoreError
from .faults import crash_point
from .lease import DEFAULT_LEASE_S
from .model import IndexReport
from .objectstore import explain, is_object_store, normalise_uri, storage_options, within
from .progress import ProgressFn, no_progress
from .remote import PUBLISHED_VERSIONS_KEPT, Manifest, source_commit, write_manifest
from .settings import Settings
from .store import Store
from .sync import index_workspace, writer_lock

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PublishReport:
    """What one publish did: the index run, then the manifest that made it visible (or why not)."""

    uri: str
    index: IndexReport
    published: bool
    commit: str = ""
    seconds: float = 0.0
    note: str = ""


def publish(
    root: Path,
    target: str,
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    progress: ProgressFn = no_progress,
    embed: bool = True,
    rebuild: bool = False,
    wait: bool = True,
    cancel: threading.Event | None = None,
    on_wait: Callable[[str], None] | None = None,
    lease_s: float = DEFAULT_LEASE_S,
) -> PublishReport:
    """Build or refresh the index of ``root`` at ``target`` and publish it.

    Raises StoreError with the store's reason when ``target`` cannot be reached
    or written; nothing new is visible to readers then. One publisher per URI:
    another one waits for it (``wait``) or fails with IndexBusyError; on an
    object store the lock is a lease of ``lease_s`` seconds, renewed while the
    publish runs, so a publisher killed hard holds it that long at most.
    """
    started = time.perf_counter()
    uri = normalise_uri(target)
    check_reachable(uri, settings.index.remote_timeout_s)
    index = dataclasses.replace(settings.index, index_dir=uri, remote="", share_worktrees=False)
    settings = dataclasses.replace(settings, index=index)
    cancel = cancel or threading.Event()
    # The writer lock (an flock, or on an object store a lease) is held over the
    # rows *and* the manifest: a manifest written after another publisher started
    # would pin that one's half-written tables.
    with writer_lock(
        uri,
        wait=wait,
        on_wait=on_wait,
        timeout_s=settings.index.remote_timeout_s,
        lease_s=lease_s,
        lost=cancel,
    ) as lease:
        report = index_workspace(
            root,
            settings,
            embedder=embedder,
            progress=progress,
            embed=embed,
            rebuild=rebuild,
            cancel=cancel,
            keep_versions_for=PUBLISHED_VERSIONS_KEPT,
            locked=True,
        )
        if lease is not None and cancel.is_set():
            lease.check()  # a lost lock says so (LeaseLostError), not "interrupted"
        if cancel.is_set():
            note = "interrupted: the previous publish stays the one readers see"
            return PublishReport(uri, report, False, seconds=time.perf_counter() - started, note=note)
        store = Store(uri, keep_versions_for=PUBLISHED_VERSIONS_KEPT)
        meta = store.read_meta()
        if meta is None:
            raise StoreError(f"the index at {uri} is incomplete after indexing: nothing published")
        crash_point("manifest")
        manifest: Manifest = write_manifest(
            store,
            source_commit(root.resolve()),
            settings.vector_cache_key(meta.model_id),
            fence=lease.check if lease is not None else None,
        )
    note = ""
    if report.vectors_pending:
        note = f"published with {report.vectors_pending} chunks still without vectors: readers embed them"
    log.info(
        "published %s at %s (%d files, %d chunks)",
        manifest.commit or "the workspace",
        uri,
        manifest.files,
        manifest.chunks,
    )
    return PublishReport(uri, report, True, manifest.commit, time.perf_counter() - started, note)


def check_reachable(uri: str, timeout_s: float) -> None:
    """Fail early, with the store's reason, when an object store cannot be listed (wrong bucket,
    no credentials, no network) — before any work is done for it."""
    if not is_object_store(uri):
        return

    def ask() -> None:
        db = lancedb.connect(uri, storage_options=storage_options(uri, timeout_s, quick=True))
        db.list_tables(limit=1)

    try:
        within(timeout_s, "the store", ask)
    except Exception as exc:
        raise StoreError(f"cannot reach {uri}: {explain(exc)}") from exc

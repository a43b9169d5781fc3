"""A new worktree's index as hard links to a sibling worktree's (``index.share_worktrees``).

Lance never changes a file it has written. Data files, deletion files, index
files, transaction files and each version's manifest are created under new
names — on a local disk a staged file linked or renamed into place (lance 13's
``ConditionalPutCommitHandler`` for manifests, object_store's staged uploads for
the rest) — and are only ever removed, by cleanup. So two directories may hold
the same files by hard links: whatever one index writes is a new file of its
own, and whatever one deletes only unlinks its own name (the inode lives while
the other name does). The disk then holds the rows once: an index's optimize
compacts only its own fragments when pylance is installed (``compaction``);
without it LanceDB's compaction rewrites the shared ones into files of its own.

``clone_sibling`` builds a new worktree's tables that way: under the sibling's
writer lock (taken without waiting, as ``overlay.hydrate`` reads it), for each
table at its current version, the files under ``data/``, ``_deletions/``,
``_indices/`` and ``_transactions/`` that version's manifest names are linked and
the manifest is copied, into a staging folder inside the new index; every staged
table is read through once (a file missing fails there). The chunks' ``project``
column is then rewritten there to this workspace's name (drop the column — a
manifest change — and add it back as a constant: one small file per fragment,
the big ones stay shared). The tables are renamed into place, ``meta`` last:
``meta`` is the mark of a whole index (``Store.read_meta``), so a crash before
it leaves "no index yet" and the next run starts over; a crash after leaves a
whole one. The ordinary sync then re-indexes only the files whose content here
differs from the sibling's.

Anything that prevents linking — another file system, a file system without hard
links, a remote or absolute ``index_dir`` — returns None with the reason logged,
and the index run copies rows instead (``overlay.hydrate``).
"""

from __future__ import annotations

import errno
import logging
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import lancedb

from .errors import StoreError
from .faults import crash_point
from .remote import RemoteIndex, incompatibility
from .rows import sql_str
from .store import CHUNKS, EDGES, FILES, META, PUBLISHED, SYMBOLS, IndexMeta
from .worktrees import sibling_index

if TYPE_CHECKING:
    from .settings import Settings

log = logging.getLogger(__name__)

# The tables a clone takes, ``meta`` last: it marks a whole index.
CLONED_TABLES = (FILES, CHUNKS, SYMBOLS, EDGES, META)
# A table's folders of write-once files: linked. Everything else (the manifests'
# version hint, tags) is not: one version's manifest is copied, the rest left.
LINKED_DIRS = ("data", "_deletions", "_indices", "_transactions")
STAGE_PREFIX = ".clone-"
_VERSIONS = "_versions"


@dataclass(frozen=True, slots=True)
class CloneReport:
    """What a clone took from the sibling's index."""

    source: str  # the sibling's index folder
    versions: dict[str, int]  # table → the version cloned
    linked_files: int = 0
    linked_bytes: int = 0  # bytes the clone holds by links: no new disk
    seconds: float = 0.0


def clone_sibling(
    own_uri: str, root: Path, settings: Settings, want: IndexMeta, project: str
) -> CloneReport | None:
    """Make the index at ``own_uri`` a hard-linked clone of a sibling worktree's.

    The caller holds ``own_uri``'s writer lock and found no whole index there, or one
    that must be rebuilt (another schema, model or settings): a sibling built as
    ``want`` replaces it. None:
    no sibling to clone (none indexed, busy, built with other settings) or linking
    failed; the reason is logged and the index run goes on as before.
    """
    if settings.index.remote:
        return None
    found = sibling_index(root, settings.index, own_uri)
    if found is None:
        return None
    source = found[1]
    own = Path(own_uri)
    try:
        if os.stat(source).st_dev != os.stat(own).st_dev:
            log.info("not linking the index of %s (another file system): copying its rows", found[0])
            return None
    except OSError as exc:
        log.info("not linking the index of %s (%s): copying its rows", found[0], exc)
        return None
    from .sync import writer_lock  # sync runs the clone: imported here, not at the top

    started = time.perf_counter()
    _remove_stages(own)
    stage = own / f"{STAGE_PREFIX}{os.getpid()}"
    try:
        with writer_lock(source, wait=False):
            versions = _versions_to_clone(source, want)
            if versions is None:
                return None
            linked, nbytes = 0, 0
            for name in CLONED_TABLES:
                n, b = _link_table(Path(source) / f"{name}.lance", stage / f"{name}.lance", versions[name])
                linked, nbytes = linked + n, nbytes + b
                crash_point("clone")
        _verify(stage)
        _set_project(stage, project)
        # An index built otherwise (older schema, other settings) loses its meta first,
        # as ``Store.create`` does: from here it reads as no index until the clone's is in.
        for name in (META, PUBLISHED):
            shutil.rmtree(own / f"{name}.lance", ignore_errors=True)
        for name in CLONED_TABLES:  # meta last: from its rename on, the index is whole
            if name == META:
                crash_point("clone-meta")
            target = own / f"{name}.lance"
            if target.exists():
                shutil.rmtree(target)  # a table of the index being replaced, or cut short
            os.rename(stage / f"{name}.lance", target)
    except StoreError as exc:  # busy, or its tables cannot be read: copy rows as before
        log.info("not linking the index of %s this time: %s", found[0], exc)
        return None
    except (OSError, RuntimeError, ValueError) as exc:  # lance's errors are these too
        links = isinstance(exc, OSError) and exc.errno in (errno.EXDEV, errno.EPERM, errno.EMLINK)
        hint = " (hard links not supported here)" if links else ""
        log.info("linking the index of %s failed%s: %s; copying its rows instead", found[0], hint, exc)
        return None
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    report = CloneReport(source, versions, linked, nbytes, time.perf_counter() - started)
    log.info(
        "linked the index of %s: %d files (%.1f MB shared on disk) in %.2f s",
        found[0],
        linked,
        nbytes / 1e6,
        report.seconds,
    )
    return report


def _remove_stages(own: Path) -> None:
    """Staging folders of clones killed half-way (the caller holds the index's lock)."""
    for left in own.glob(f"{STAGE_PREFIX}*"):
        shutil.rmtree(left, ignore_errors=True)


def _versions_to_clone(source: str, want: IndexMeta) -> dict[str, int] | None:
    """Each table's current version in the sibling's index (its lock held), or None when
    it is incomplete or was built with other settings."""
    manifest = RemoteIndex(source, 10.0).current("")
    if manifest is None:
        return None
    refused = incompatibility(manifest.meta, want)
    if refused:
        log.info("not linking the index at %s: %s", source, refused)
        return None
    return {name: manifest.versions[name] for name in CLONED_TABLES}


def manifest_name(folder: Path, version: int) -> str:
    """The file name of a table version's manifest (lance's V2 naming, else V1)."""
    v2 = f"{2**64 - 1 - version:020d}.manifest"
    return v2 if (folder / v2).exists() else f"{version}.manifest"


def _link_table(src: Path, dst: Path, version: int) -> tuple[int, int]:
    """Link into ``dst`` the write-once files ``version``'s manifest names and copy the
    manifest: ``dst`` is the table at that version. Returns (files linked, their bytes).

    Files of older versions are left out: linked, they would outlive the sibling's
    pruning of them (a new link is younger than lance's 7-day guard on unverified
    files, so the clone's own cleanup would keep them too)."""
    name = manifest_name(src / _VERSIONS, version)
    manifest = (src / _VERSIONS / name).read_bytes()
    named = _names_in(manifest)
    linked = nbytes = 0
    for sub in LINKED_DIRS:
        for dirpath, _dirs, files in os.walk(src / sub):
            rel = Path(dirpath).relative_to(src)
            for f in files:
                if "#" in f or f.startswith("."):
                    continue  # a write's staging file, not part of any version
                if not _referenced(rel, f, manifest, named):
                    continue
                (dst / rel).mkdir(parents=True, exist_ok=True)
                os.link(src / rel / f, dst / rel / f)
                linked += 1
                nbytes += os.lstat(dst / rel / f).st_size
    (dst / _VERSIONS).mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src / _VERSIONS / name, dst / _VERSIONS / name)
    return linked, nbytes


def _names_in(manifest: bytes) -> set[bytes]:
    """File names a manifest holds as strings (data files, its transaction file). A
    protobuf string is preceded by its length, one byte below 128 that may read as a
    word character: each name is kept with and without its first byte."""
    tokens = re.findall(rb"[\w\-]+\.(?:lance|txn)", manifest)
    return {*tokens, *(t[1:] for t in tokens)}


def _referenced(rel: Path, name: str, manifest: bytes, named: set[bytes]) -> bool:
    """Whether the manifest refers to this file of the table (``rel``: its folder)."""
    top = rel.parts[0]
    if top == "_deletions":
        return True  # named by fragment and version numbers, not strings; small: all kept
    if top == "_indices":  # an index's folder is named by its uuid: 16 bytes in the manifest
        try:
            return bytes.fromhex(rel.parts[1].replace("-", "")) in manifest
        except (IndexError, ValueError):
            return True
    return name.encode() in named


def _verify(stage: Path) -> None:
    """Read every staged table's ``path`` (or ``key``) column: every data and deletion file
    the cloned versions name is opened, so a file missing from the clone fails here, in
    the clone, never later in a search."""
    db = lancedb.connect(str(stage))
    for name in CLONED_TABLES:
        tbl = db.open_table(name)
        column = "key" if name == META else "path"
        tbl.search().select([column]).limit(None).to_arrow()


def _set_project(stage: Path, project: str) -> None:
    """Every chunk of the staged clone carries ``project`` (the sibling's rows carry its
    name; the project filter reads the column). Dropping a column changes only the
    manifest; adding it back as a constant writes one small file per fragment."""
    chunks = lancedb.connect(str(stage)).open_table(CHUNKS)
    if chunks.count_rows(f"project IS NULL OR project <> {sql_str(project)}") == 0:
        return  # no rows, or the same folder name in both worktrees
    chunks.drop_columns(["project"])
    chunks.add_columns({"project": f"CAST({sql_str(project)} AS STRING)"})
    # nullable, as ``chunks_schema`` has it (lancedb annotates each alteration as an
    # iterable of dicts; it takes one dict, as its docs show)
    chunks.alter_columns({"path": "project", "nullable": True})  # type: ignore[dict-item]

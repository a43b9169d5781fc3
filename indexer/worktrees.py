"""Other worktrees of the same repository, and their indexes (``index.share_worktrees``).

A new worktree's first index run copies, from a sibling worktree's index, the
rows and vectors of every file whose content is the same (``overlay.hydrate``),
so ``git worktree add`` costs seconds of copying instead of minutes of embedding.
A sibling's index is live, not published: it is read under its writer lock
(taken without waiting, so two worktrees indexing at once never wait on each
other; the busy one is simply not copied from this time).

Every worktree's index also reads and writes one embedding cache per repository
(``shared_cache_dir``), so the vectors of shared content are stored once.
"""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from .locate import git_common_dir, index_exists_at, index_uri

if TYPE_CHECKING:
    from .settings import IndexSettings, Settings

log = logging.getLogger(__name__)

# Where the repository's shared embedding cache lives, under git's common directory:
# outside every work tree (never committed, never walked), one per repository.
SHARED_CACHE = "codesift/embed-cache"


def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout if done.returncode == 0 else ""


def per_folder(index_dir: str) -> bool:
    """Whether each folder has an index of its own (``index_dir`` relative), not one URI or
    absolute folder for every worktree and clone."""
    return "://" not in index_dir and not Path(index_dir).is_absolute()


def worktree_roots(root: Path) -> list[Path]:
    """The same folder as ``root`` in every other worktree of its repository (main worktree first)."""
    top = _git(root, "rev-parse", "--show-toplevel").strip()
    if not top:
        return []
    try:
        inside = root.resolve().relative_to(Path(top).resolve())
    except ValueError:
        return []
    out: list[Path] = []
    for line in _git(root, "worktree", "list", "--porcelain").splitlines():
        if line.startswith("worktree "):
            tree = Path(line[len("worktree ") :])
            if tree.resolve() != Path(top).resolve():
                out.append(tree / inside)
    return out


def sibling_index(root: Path, index: IndexSettings, own_uri: str) -> tuple[Path, str] | None:
    """Another worktree's index of this folder to copy from (``index.share_worktrees``),
    else another clone's on this machine (``index.share_clones``, ``clones.clone_indexes``):
    (its root, its index path), or None."""
    if not per_folder(index.index_dir):
        return None  # one index shared by every worktree already: nothing to copy
    for other in worktree_roots(root) if index.share_worktrees else []:
        uri = index_uri(other, index.index_dir)
        if uri != own_uri and index_exists_at(uri):
            return other, uri
    if index.share_clones:
        from .clones import clone_indexes

        found = clone_indexes(root, own_uri)
        if found:
            return found[0]
    return None


def shared_cache_dir(root: Path, settings: Settings) -> Path | None:
    """The embedding cache the index of ``root`` shares, or None: the index keeps its own.

    ``index.embed_cache`` names one for every index that names it (clones, other
    repositories); else the worktrees of ``root``'s repository share one, unless
    ``index.share_worktrees`` is off, there is no git repository, or the index is not
    per worktree (a URI or an absolute ``index_dir`` is one index already)."""
    if settings.index.embed_cache:
        return Path(settings.index.embed_cache).expanduser()
    index_dir = settings.index.index_dir
    if not settings.index.share_worktrees or not per_folder(index_dir):
        return None
    common = git_common_dir(root)
    return common / SHARED_CACHE if common is not None else None

"""Other worktrees of the same repository, and their indexes (``index.share_worktrees``).

A new worktree's first index run copies, from a sibling worktree's index, the
rows and vectors of every file whose content is the same (``overlay.hydrate``),
so ``git worktree add`` costs seconds of copying instead of minutes of embedding.
A sibling's index is live, not published: it is read under its writer lock
(taken without waiting, so two worktrees indexing at once never wait on each
other; the busy one is simply not copied from this time).
"""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

from .locate import index_exists_at
from .store import default_index_uri

log = logging.getLogger(__name__)


def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout if done.returncode == 0 else ""


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


def sibling_index(root: Path, index_dir: str, own_uri: str) -> tuple[Path, str] | None:
    """Another worktree's index of this folder to copy from: (its root, its index path), or None."""
    if "://" in index_dir or Path(index_dir).is_absolute():
        return None  # one index shared by every worktree already: nothing to copy
    for other in worktree_roots(root):
        uri = default_index_uri(other, index_dir)
        if uri != own_uri and index_exists_at(uri):
            return other, uri
    return None

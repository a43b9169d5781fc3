"""Which index a read-only question goes to, and whether it exists, without writing anything.

Rules (issue 14: "the index you asked for"):

* An explicit root means that folder's index and no other: no walking up.
* Without one, the nearest folder at or above the current one that holds an
  index answers, but only when it is in the same repository as the current
  folder: an index in a scratch folder above an unrelated checkout is never
  used for that checkout. Two folders are in the same repository when the
  nearest folder holding ``.git`` above each is the same (or neither has one).
* Looking never creates anything: opening a LanceDB directory that is not there
  would create it, so existence is checked on the file system first.
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_INDEX_DIR = ".codesift"


def repository_root(folder: Path) -> Path | None:
    """The nearest folder at or above ``folder`` holding ``.git`` (a directory or a worktree file)."""
    for d in (folder, *folder.parents):
        if os.path.lexists(d / ".git"):
            return d
    return None


def git_common_dir(folder: Path) -> Path | None:
    """Git's common directory of the repository holding ``folder`` (what
    ``git rev-parse --git-common-dir`` prints: the main worktree's ``.git`` for every
    worktree), read from the files git writes, without running git; None outside git."""
    top = repository_root(folder.resolve())
    if top is None:
        return None
    dot_git = top / ".git"
    if dot_git.is_dir():
        return dot_git
    try:  # a worktree's (or submodule's) `.git` file: "gitdir: <its git dir>"
        line = dot_git.read_text(encoding="utf-8").strip()
        if not line.startswith("gitdir:"):
            return None
        git_dir = (top / line[len("gitdir:") :].strip()).resolve()
        common = git_dir / "commondir"  # a worktree's; a submodule's git dir is its own common dir
        if common.is_file():
            return (git_dir / common.read_text(encoding="utf-8").strip()).resolve()
    except OSError:
        return None
    return git_dir if git_dir.is_dir() else None


def enclosing_index_root(start: Path, index_dir: str = DEFAULT_INDEX_DIR) -> Path | None:
    """The nearest folder at or above ``start`` whose index may answer for ``start``.

    That is the nearest one holding ``index_dir``, when it is in the same repository
    as ``start``; None when there is none or the nearest belongs to another repository.
    """
    start = start.resolve()
    repo = repository_root(start)
    for d in (start, *start.parents):
        if (d / index_dir).is_dir():
            return d if repository_root(d) == repo else None
        if repo is not None and d == repo:
            # Above the repository's own root, any index belongs to something else.
            return None
    return None


def index_root_for(explicit: Path | None, cwd: Path, index_dir: str = DEFAULT_INDEX_DIR) -> Path:
    """The workspace root whose index a read-only command uses.

    ``explicit`` (``--root``) wins as given; else the enclosing index of ``cwd``
    under the rules above; else ``cwd`` itself (which then reports "no index").
    """
    if explicit is not None:
        return explicit.resolve()
    return enclosing_index_root(cwd, index_dir) or cwd.resolve()


def index_uri(root: Path, index_dir: str) -> str:
    """Where a workspace's index lives: ``index_dir`` relative to the root, or a URI."""
    if "://" in index_dir:
        return index_dir
    p = Path(index_dir)
    return str(p if p.is_absolute() else (root / p))


def index_exists_at(uri: str) -> bool:
    """Whether an index directory may be there (remote URIs: assumed, the store decides)."""
    return "://" in uri or os.path.isdir(uri)

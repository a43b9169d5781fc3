"""Other clones of the same repository on this machine, and their indexes (``index.share_clones``).

Git lists a repository's worktrees (``worktrees.worktree_roots``) but knows nothing
of a second ``git clone`` of it: a review checkout, a copy per task. So that such a
clone's first index starts from another clone's index as a new worktree's does
(hard links on the same file system, ``clone.clone_sibling``; rows and vectors
copied otherwise, ``overlay.hydrate``), each index run records where it indexed,
per repository, in the user's cache folder (``$XDG_CACHE_HOME/codesift/clones``,
one JSON file per repository): the folder, its index and the folder's path inside
its repository. Nothing else is recorded, nothing leaves the machine, and
``index.share_clones = false`` neither writes nor reads the list.

A repository is known by its root commits (``git rev-list --max-parents=0 HEAD``),
which every full clone shares whatever its remote, branch or folder. Walking a long
history for them takes seconds (the kernel's), so the answer is kept in git's common
directory (``codesift/repository-id``, beside the worktrees' embedding cache). A
shallow clone's first commit is not its repository's: it is not recorded and does
not look.

The list is read without a lock and written under one (``flock`` on a file beside
it), replaced atomically; an entry whose index is gone is dropped at the next write.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from .locate import git_common_dir, index_exists_at, repository_root

log = logging.getLogger(__name__)

# Under git's common directory: the repository's identity, once found.
ID_FILE = "codesift/repository-id"
# Under the user's cache folder: one list of indexed folders per repository.
REGISTRY = "codesift/clones"
# The entries kept per repository (the newest): a bound on a file read per index run.
MAX_ENTRIES = 64


def _git(root: Path, *args: str, timeout: float = 120) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=timeout
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def repository_id(root: Path) -> str | None:
    """The identity of the repository holding ``root`` (a digest of its root commits), or
    None: not in git, no commit yet, or a shallow clone."""
    common = git_common_dir(root)
    if common is None:
        return None
    kept = common / ID_FILE
    with contextlib.suppress(OSError):
        known = kept.read_text(encoding="utf-8").strip()
        if known:
            return known
    if (_git(root, "rev-parse", "--is-shallow-repository") or "").strip() != "false":
        return None  # shallow (its first commit is a graft), or git cannot tell
    roots = sorted((_git(root, "rev-list", "--max-parents=0", "HEAD") or "").split())
    if not roots:
        return None
    found = hashlib.sha256(" ".join(roots).encode()).hexdigest()[:24]
    with contextlib.suppress(OSError):  # a read-only .git: found again next time
        kept.parent.mkdir(parents=True, exist_ok=True)
        staged = kept.with_name(f".{kept.name}.{os.getpid()}")
        staged.write_text(found + "\n", encoding="utf-8")
        os.replace(staged, kept)
    return found


def registry_dir() -> Path:
    """Where the lists live: ``$XDG_CACHE_HOME/codesift/clones`` (``~/.cache`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / REGISTRY


def _inside(root: Path) -> str | None:
    """``root``'s path inside its repository (``.`` for the top), or None outside git."""
    top = repository_root(root.resolve())
    if top is None:
        return None
    return root.resolve().relative_to(top).as_posix()


def _read(path: Path) -> list[dict[str, object]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    entries = data.get("indexes") if isinstance(data, dict) else None
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _alive(index: object) -> bool:
    return isinstance(index, str) and index_exists_at(index)


def register(root: Path, uri: str) -> None:
    """Record that ``root`` (a folder of a git repository) has its index at ``uri``.
    Never raises: a list that cannot be written only means no clone copies from here."""
    repo, inside = repository_id(root), _inside(root)
    if repo is None or inside is None:
        return
    path = registry_dir() / f"{repo}.json"
    try:
        with _locked(path):
            kept = [e for e in _read(path) if e.get("index") != uri and _alive(e.get("index"))]
            entry = {"root": str(root.resolve()), "inside": inside, "index": uri, "at": round(time.time())}
            kept = [entry, *kept][:MAX_ENTRIES]
            staged = path.with_name(f".{path.name}.{os.getpid()}")
            staged.write_text(json.dumps({"indexes": kept}, indent=1) + "\n", encoding="utf-8")
            os.replace(staged, path)
    except OSError as exc:
        log.info("could not record %s among this repository's indexes: %s", root, exc)


def clone_indexes(root: Path, own_uri: str) -> list[tuple[Path, str]]:
    """Indexes of the same folder in other clones of ``root``'s repository on this
    machine, newest first: (the clone's folder, its index URI)."""
    repo, inside = repository_id(root), _inside(root)
    if repo is None or inside is None:
        return []
    out: list[tuple[Path, str]] = []
    for e in _read(registry_dir() / f"{repo}.json"):
        index, folder = e.get("index"), e.get("root")
        if not isinstance(index, str) or not isinstance(folder, str) or e.get("inside") != inside:
            continue
        if index != own_uri and Path(folder).resolve() != root.resolve() and _alive(index):
            out.append((Path(folder), index))
    return out

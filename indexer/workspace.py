"""Which files of a workspace get indexed, and reading them safely.

Selection follows git: a file is walked when ``git ls-files --others --cached
--exclude-standard`` would list it (tracked-and-ignored files excepted, see below),
then ``settings.exclude`` and ``settings.include`` narrow it down.

Decisions, fixed here:

* Ignore rules are git's, read and matched as git does: see ``ignore.py``.
* Entries named ``.git`` are never entered. Other dot-files and dot-directories
  are walked, as git does (``.github/`` is code).
* Tracked files that match an ignore pattern are skipped: the walk reads ignore
  rules, not git's index.
* Symlinks: a link to a file inside the root is indexed under the link's path; a
  link resolving outside the root is reported (``SYMLINK_OUTSIDE``) and not
  followed; a linked directory inside the root is entered once per real
  directory (``SYMLINK_LOOP`` for the second sighting). For ignore rules a link
  counts as what it points to.
* The index directory (``settings.index_dir``) is never walked.
* Order: depth-first with siblings sorted by name, directories as ``name/``:
  file paths come out in plain string order.
"""

from __future__ import annotations

import dataclasses
import errno
import functools
import logging
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .errors import WorkspaceError
from .ignore import IgnoreRules, RuleList, in_git_repository, to_byte_space
from .languages import language_for_path
from .model import SkipReason, WalkEntry
from .paths import index_path
from .settings import IndexSettings
from .source import errno_text, human_size, is_inside, kind_of, real_path

log = logging.getLogger(__name__)


# --- what the walk selects --------------------------------------------------------


class _Selection(IgnoreRules):
    """Everything that decides whether a path is walked, built once per walk."""

    def __init__(self, root: Path, settings: IndexSettings) -> None:
        root_abs = os.path.abspath(root)
        try:
            st = os.stat(root_abs)
        except FileNotFoundError:
            raise WorkspaceError(f"workspace root {root_abs} does not exist") from None
        except OSError as exc:
            raise WorkspaceError(f"workspace root {root_abs}: {exc.strerror}") from exc
        if not stat.S_ISDIR(st.st_mode):
            raise WorkspaceError(f"workspace root {root_abs} is not a directory")
        self.root_abs = root_abs
        self.root_real = os.path.realpath(root_abs)
        self.max_bytes = settings.max_file_bytes
        super().__init__(self.root_real, settings)


# --- entries ----------------------------------------------------------------------


def _first_line(path: str) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            head = f.read(256)
    except OSError:
        return ""
    return head.split(b"\n", 1)[0].decode("utf-8", "replace")


@functools.lru_cache(maxsize=16384)
def _language_by_name(name: str) -> str:
    # language_for_path decides by the last component alone; names repeat a lot.
    return language_for_path(name)


_LINK_CHANGED = "the link changed while it was resolved"


def _skip(rel: str, path: str, st: os.stat_result | None, reason: SkipReason, detail: str) -> WalkEntry:
    size = st.st_size if st is not None and stat.S_ISREG(st.st_mode) else 0
    mtime = st.st_mtime_ns if st is not None else 0
    name = rel.rpartition("/")[2]
    return WalkEntry(index_path(rel), path, size, mtime, _language_by_name(name), reason, detail)


def _file_entry(
    sel: _Selection,
    rel: str,
    path: str,
    link: bool,
    st: os.stat_result | None,
    error: OSError | None,
) -> WalkEntry:
    """What the walk reports for a non-directory (``st`` follows a link; ``error``: it can't)."""
    if link:
        if error is not None or st is None:
            if error is not None and error.errno == errno.ELOOP:
                return _skip(rel, path, None, SkipReason.SYMLINK_LOOP, "symlink cycle")
            try:
                target = os.readlink(path)
            except OSError:
                target = "?"
            return _skip(rel, path, None, SkipReason.UNREADABLE, f"broken symlink to {target}")
        real = real_path(path)
        if real is None:
            return _skip(rel, path, None, SkipReason.CHANGED, _LINK_CHANGED)
        if not is_inside(real, sel.root_real):
            return _skip(rel, path, st, SkipReason.SYMLINK_OUTSIDE, f"points to {real}")
    assert st is not None
    mode = st.st_mode
    if not stat.S_ISREG(mode):
        return _skip(rel, path, st, SkipReason.NOT_REGULAR, kind_of(mode))
    size = st.st_size
    if size > sel.max_bytes:
        detail = f"{human_size(size)} > {human_size(sel.max_bytes)} limit"
        return _skip(rel, path, st, SkipReason.TOO_LARGE, detail)
    # Mode bits answer for almost every file without a syscall; access() covers the rest.
    if (mode & 0o444) != 0o444 and not os.access(path, os.R_OK):
        return _skip(rel, path, st, SkipReason.UNREADABLE, "EACCES: Permission denied")
    name = rel.rpartition("/")[2]
    language = _language_by_name(name)
    if not language and size and "." not in name:
        language = language_for_path(rel, _first_line(path))
    return WalkEntry(index_path(rel), path, size, st.st_mtime_ns, language, root=sel.root_real, link=link)


@dataclass(slots=True)
class _Child:
    key: str  # sort key: directories sort as "name/", as git orders them
    name: str
    rel: str
    rel_b: str
    name_b: str
    path: str
    is_dir: bool
    link: bool
    st: os.stat_result | None  # followed, for links only
    error: OSError | None
    entry: os.DirEntry[str]


@dataclass(slots=True)
class _Frame:
    rel: str  # "" or ending in "/"
    rel_b: str
    lists: tuple[RuleList, ...]
    include: bool | None  # the nearest include verdict of this directory or an ancestor
    key: tuple[int, int]
    children: Iterator[_Child]


def _read_children(
    sel: _Selection, dir_abs: str, rel: str, rel_b: str, parent: tuple[RuleList, ...]
) -> tuple[tuple[RuleList, ...], list[_Child]]:
    with os.scandir(dir_abs) as it:
        entries = list(it)
    lists = parent
    if sel.respect_gitignore and any(e.name == ".gitignore" for e in entries):
        own = sel.read_dir_ignore(dir_abs, rel_b)
        if own is not None:
            lists = (own, *parent)
    children: list[_Child] = []
    for e in entries:
        name = e.name
        if name == ".git":
            continue
        name_b = to_byte_space(name)
        child_rel_b = rel_b + name_b
        st: os.stat_result | None = None
        error: OSError | None = None
        try:
            link = e.is_symlink()
            if link:
                try:
                    st = os.stat(e.path)
                except OSError as exc:
                    error = exc
                is_dir = st is not None and stat.S_ISDIR(st.st_mode)
            else:
                is_dir = e.is_dir(follow_symlinks=False)
        except OSError:
            link, is_dir = False, False
        if sel.ignored(lists, child_rel_b, name_b, is_dir):
            continue
        key = name + "/" if is_dir else name
        children.append(
            _Child(key, name, rel + name, child_rel_b, name_b, e.path, is_dir, link, st, error, e)
        )
    children.sort(key=lambda c: c.key)
    return lists, children


def walk(root: Path, settings: IndexSettings) -> Iterator[WalkEntry]:
    """Every file of the workspace the index should know about, sorted by path.

    Files git would list (``ls-files --others --cached --exclude-standard``), minus
    ``settings.exclude``, narrowed to ``settings.include`` when it is not empty
    (directories are still entered). Files that cannot be indexed come with a
    ``skip`` reason (too large, unreadable, not regular, symlink loop or leaving
    the workspace); so do directories the walk cannot enter. Never raises for a bad
    file or directory inside the workspace.

    Raises WorkspaceError at once (not on first iteration) when the root is
    missing, not a directory, or cannot be listed.
    """
    sel = _Selection(root, settings)
    root_st = os.stat(sel.root_abs)
    key = (root_st.st_dev, root_st.st_ino)
    try:
        lists, children = _read_children(sel, sel.root_abs, "", "", sel.outer_lists)
    except OSError as exc:
        raise WorkspaceError(f"workspace root {sel.root_abs}: {errno_text(exc)}") from exc
    include = True if sel.include is None else None
    return _walk(sel, _Frame("", "", lists, include, key, iter(children)))


def ignore_note(root: Path, settings: IndexSettings, seen: int) -> str:
    """Why the walk saw no file, or far fewer than the folder holds, when rules hid them.

    Said when nothing is left to index (whatever hid the files), and when .gitignore
    rules hide more files than are indexed although the root is in no git
    repository: codesift follows .gitignore files anywhere, as ripgrep does, and a
    source package's .gitignore (Debian's linux-source has ``/*``) can hide it all.
    Empty when neither applies. Costs a second walk: call it on a first build.
    """
    free = sum(1 for _ in walk(root, dataclasses.replace(settings, respect_gitignore=False)))
    if seen == 0:
        if free == 0:
            everything = dataclasses.replace(settings, respect_gitignore=False, exclude=(), include=())
            total = sum(1 for _ in walk(root, everything))
            if total == 0:
                return ""
            return f"nothing to index: index.include / index.exclude leave out all {total} files under {root}"
        return (
            f"nothing to index: .gitignore rules hide all {free} files under {root}"
            f"{'' if in_git_repository(root) else ' (it is in no git repository)'}; "
            "set index.respect_gitignore = false to index them"
        )
    hidden = free - seen
    if settings.respect_gitignore and hidden > seen and not in_git_repository(root):
        return (
            f"{hidden} of {free} files under {root} are hidden by .gitignore rules although it is "
            "in no git repository; set index.respect_gitignore = false to index them"
        )
    return ""


def _walk(sel: _Selection, root: _Frame) -> Iterator[WalkEntry]:
    visited: dict[tuple[int, int], str] = {root.key: "."}  # every directory entered
    stack = [root]
    on_stack = {root.key}
    while stack:
        frame = stack[-1]
        child = next(frame.children, None)
        if child is None:
            on_stack.discard(stack.pop().key)
            continue
        if not child.is_dir:
            if sel.include is None or sel.included(frame.include, child.rel_b, child.name_b, False):
                st = child.st
                if not child.link:
                    try:
                        st = child.entry.stat(follow_symlinks=False)
                    except OSError as exc:
                        yield _skip(child.rel, child.path, None, SkipReason.UNREADABLE, errno_text(exc))
                        continue
                yield _file_entry(sel, child.rel, child.path, child.link, st, child.error)
            continue
        include = sel.include_verdict(child.rel_b, child.name_b, True, frame.include)
        entered = _enter(sel, frame, child, include, visited, on_stack)
        if isinstance(entered, _Frame):
            stack.append(entered)
            on_stack.add(entered.key)
        elif include is True:
            yield entered


def _enter(
    sel: _Selection,
    parent: _Frame,
    child: _Child,
    include: bool | None,
    visited: dict[tuple[int, int], str],
    on_stack: set[tuple[int, int]],
) -> _Frame | WalkEntry:
    """A frame for the directory, or the skip entry that says why it is not entered."""
    if child.link:
        st = child.st
        assert st is not None
        real = real_path(child.path)
        parent_real = real_path(os.path.dirname(child.path))
        if real is None or parent_real is None:
            return _skip(child.rel, child.path, None, SkipReason.CHANGED, _LINK_CHANGED)
        if not is_inside(real, sel.root_real):
            return _skip(child.rel, child.path, st, SkipReason.SYMLINK_OUTSIDE, f"points to {real}")
        # The folder is indexed at its own path, as git and ripgrep see it: walking the
        # link too would index every file twice (serde's serde/src/core → serde_core/src).
        at = os.path.relpath(real, sel.root_real)
        if not is_inside(parent_real, real):
            return _skip(child.rel, child.path, st, SkipReason.SYMLINK_INSIDE, f"indexed at {at}")
    else:
        try:
            st = child.entry.stat(follow_symlinks=False)
        except OSError as exc:
            return _skip(child.rel, child.path, None, SkipReason.UNREADABLE, errno_text(exc))
    key = (st.st_dev, st.st_ino)
    if key in on_stack:
        detail = f"leads back to the enclosing directory {visited[key]}"
        return _skip(child.rel, child.path, st, SkipReason.SYMLINK_LOOP, detail)
    if child.link and key in visited:
        detail = f"directory already walked as {visited[key]}"
        return _skip(child.rel, child.path, st, SkipReason.SYMLINK_LOOP, detail)
    visited[key] = child.rel
    try:
        lists, children = _read_children(sel, child.path, child.rel + "/", child.rel_b + "/", parent.lists)
    except OSError as exc:
        return _skip(child.rel, child.path, st, SkipReason.UNREADABLE, errno_text(exc))
    return _Frame(child.rel + "/", child.rel_b + "/", lists, include, key, iter(children))


# --- one path at a time -----------------------------------------------------------


class IgnoreMatcher:
    """The walk's rules for one path at a time, for a server reacting to file events.

    Build one per workspace and keep it: the global rules are read once, and each
    directory's ``.gitignore`` is re-read only when its mtime or size changes.
    """

    def __init__(self, root: Path, settings: IndexSettings) -> None:
        self._sel = _Selection(root, settings)
        self._cache: dict[str, tuple[tuple[int, int, int], RuleList | None]] = {}

    def _lists_for(self, dir_abs: str, dir_rel_b: str, parent: tuple[RuleList, ...]) -> tuple[RuleList, ...]:
        if not self._sel.respect_gitignore:
            return parent
        path = os.path.join(dir_abs, ".gitignore")
        try:
            st = os.lstat(path)
        except OSError:
            return parent
        signature = (st.st_mtime_ns, st.st_size, st.st_ino)
        cached = self._cache.get(path)
        if cached is None or cached[0] != signature:
            own = self._sel.read_dir_ignore(dir_abs, dir_rel_b)
            cached = (signature, own)
            self._cache[path] = cached
        return parent if cached[1] is None else (cached[1], *parent)

    @staticmethod
    def _parts(rel_path: str) -> list[str] | None:
        parts = [p for p in rel_path.replace(os.sep, "/").split("/") if p not in ("", ".")]
        if not parts or ".." in parts or ".git" in parts:
            return None
        return parts

    def ignored(self, rel_path: str, is_dir: bool = False) -> bool:
        """Whether the walk leaves this path out by its rules (gitignore, exclude, include).

        Looks at the rules only, not at the file system (the path may be gone).
        Paths outside the workspace or inside ``.git`` count as ignored.
        """
        parts = self._parts(rel_path)
        if parts is None:
            return True
        sel = self._sel
        lists = self._lists_for(sel.root_abs, "", sel.outer_lists)
        include: bool | None = True if sel.include is None else None
        dir_abs, rel_b = sel.root_abs, ""
        for i, part in enumerate(parts):
            name_b = to_byte_space(part)
            last = i == len(parts) - 1
            part_is_dir = is_dir or not last
            if sel.ignored(lists, rel_b + name_b, name_b, part_is_dir):
                return True
            include = sel.include_verdict(rel_b + name_b, name_b, part_is_dir, include)
            if not last:
                dir_abs = os.path.join(dir_abs, part)
                rel_b += name_b + "/"
                lists = self._lists_for(dir_abs, rel_b, lists)
        return not is_dir and include is not True

    def entry(self, rel_path: str) -> WalkEntry | None:
        """The entry walk() would yield for this file, or None (ignored, gone, a directory).

        A path through a symlinked directory is None: the walk does not enter one
        (inside the workspace its folder is indexed at its own path).
        """
        parts = self._parts(rel_path)
        if parts is None:
            return None
        sel = self._sel
        lists = self._lists_for(sel.root_abs, "", sel.outer_lists)
        include: bool | None = True if sel.include is None else None
        dir_abs, rel, rel_b = sel.root_abs, "", ""
        for part in parts[:-1]:
            path = os.path.join(dir_abs, part)
            try:
                st = os.stat(path)
                linked = os.path.islink(path)
            except OSError:
                return None
            if not stat.S_ISDIR(st.st_mode):
                return None
            if linked:  # the walk never enters a symlinked folder (see _enter)
                return None
            name_b = to_byte_space(part)
            if sel.ignored(lists, rel_b + name_b, name_b, True):
                return None
            include = sel.include_verdict(rel_b + name_b, name_b, True, include)
            dir_abs, rel, rel_b = path, rel + part + "/", rel_b + name_b + "/"
            lists = self._lists_for(dir_abs, rel_b, lists)
        name = parts[-1]
        path = os.path.join(dir_abs, name)
        try:
            lst = os.lstat(path)
        except OSError:
            return None
        link = stat.S_ISLNK(lst.st_mode)
        st_: os.stat_result | None = lst
        error: OSError | None = None
        if link:
            try:
                st_ = os.stat(path)
            except OSError as exc:
                st_, error = None, exc
        if st_ is not None and stat.S_ISDIR(st_.st_mode):
            return None
        name_b = to_byte_space(name)
        if sel.ignored(lists, rel_b + name_b, name_b, False):
            return None
        if not sel.included(include, rel_b + name_b, name_b, False):
            return None
        return _file_entry(sel, rel + name, path, link, st_, error)

    def is_indexable(self, rel_path: str) -> bool:
        """Whether walk() would yield this file with no skip reason."""
        found = self.entry(rel_path)
        return found is not None and found.skip is None


def is_indexable(root: Path, rel_path: str, settings: IndexSettings) -> bool:
    """Whether walk() would yield ``rel_path`` (workspace-relative) with no skip reason.

    Builds an IgnoreMatcher each call (one ``git config`` run); keep a matcher for
    repeated questions.
    """
    return IgnoreMatcher(root, settings).is_indexable(rel_path)

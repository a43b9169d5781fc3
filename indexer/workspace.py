"""Which files of a workspace get indexed, and reading them safely.

Selection follows git: a file is walked when ``git ls-files --others --cached
--exclude-standard`` would list it (tracked-and-ignored files excepted, see below),
then ``settings.exclude`` and ``settings.include`` narrow it down.

Decisions, fixed here:

* Ignore rules are git's, evaluated the way git evaluates them: per path
  component, top-down, with an "is a directory" flag. A directory that is ignored
  is not entered, so ``!pattern`` cannot re-include a file inside it. Nested
  ``.gitignore`` files are relative to their own directory, deeper files win,
  the last matching line of a file wins; then ``.git/info/exclude``, then
  ``core.excludesFile`` (asked of ``git config`` when git is installed, else
  ``$XDG_CONFIG_HOME/git/ignore`` or ``~/.config/git/ignore``). Patterns match
  UTF-8 bytes as git does (``?`` is one byte). The per-pattern matcher is our own
  small translation of git's wildmatch: pathspec's ``GitIgnoreSpec`` answers
  "does this path or one of its parents match", which cannot tell ``foo/**`` from
  ``foo`` when the question is about the directory ``foo`` itself.
* Outside a git repository ``.gitignore`` files and the global excludes file
  still apply: they say what the user considers noise whether or not ``git init``
  has run. When the workspace is a subdirectory of a repository, the ``.gitignore``
  files between the repository top and the workspace apply too.
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

import errno
import functools
import logging
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .errors import WorkspaceError
from .languages import language_for_path
from .model import SkipReason, WalkEntry, text_hash
from .settings import IndexSettings

log = logging.getLogger(__name__)

BINARY_SNIFF_BYTES = 8192
_BOM = b"\xef\xbb\xbf"
_GIT_CONFIG_TIMEOUT_S = 2.0


# --- git's pattern language -------------------------------------------------------
#
# Strings in "byte space": one character per UTF-8 byte (latin-1), so a pattern
# like "caf?" behaves as in git, where "?" matches one byte.


def _bytes_str(text: str) -> str:
    if text.isascii():
        return text
    return text.encode("utf-8", "surrogateescape").decode("latin-1")


def _text_str(byte_str: str) -> str:
    return byte_str.encode("latin-1").decode("utf-8", "surrogateescape")


_CHAR_CLASSES: dict[str, str] = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "blank": r"\x09\x20",
    "cntrl": r"\x00-\x1f\x7f",
    "digit": "0-9",
    "graph": r"\x21-\x7e",
    "lower": "a-z",
    "print": r"\x20-\x7e",
    "punct": r"\x21-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e",
    "space": r"\x09-\x0d\x20",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}


def _class_char(ch: str) -> str:
    return f"\\x{ord(ch):02x}" if ord(ch) < 256 else f"\\U{ord(ch):08x}"


def _bracket_regex(pat: str, i: int) -> tuple[str, int] | None:
    """Translate a ``[...]`` starting after the ``[`` at ``i``; None: malformed."""
    n = len(pat)
    negated = i < n and pat[i] in "!^"
    if negated:
        i += 1
    parts: list[str] = []
    prev: str | None = None
    first = True
    while True:
        if i >= n:
            return None  # git aborts the whole match: the pattern never matches
        c = pat[i]
        if c == "]" and not first:
            i += 1
            break
        first = False
        if c == "\\":
            if i + 1 >= n:
                return None
            prev = pat[i + 1]
            parts.append(_class_char(prev))
            i += 2
        elif c == "-" and prev is not None and i + 1 < n and pat[i + 1] != "]":
            hi = pat[i + 1]
            i += 2
            if hi == "\\":
                if i >= n:
                    return None
                hi = pat[i]
                i += 1
            if prev <= hi:
                parts.append(f"{_class_char(prev)}-{_class_char(hi)}")
            prev = None
        elif c == "[" and i + 1 < n and pat[i + 1] == ":":
            end = pat.find("]", i + 2)
            if end < 0:
                return None
            if end - 1 < i + 2 or pat[end - 1] != ":":
                parts.append(_class_char("["))  # no ":]": a plain "["
                prev = "["
                i += 1
            else:
                name = pat[i + 2 : end - 1]
                if name not in _CHAR_CLASSES:
                    return None
                parts.append(_CHAR_CLASSES[name])
                prev = None
                i = end + 1
        else:
            parts.append(_class_char(c))
            prev = c
            i += 1
    body = "".join(parts)
    if negated:
        return f"[^/{body}]", i
    if not body:
        return "(?!)", i
    return f"(?!/)[{body}]", i  # with WM_PATHNAME a bracket never matches "/"


def _wildmatch_regex(pat: str) -> str | None:
    """Git's wildmatch with WM_PATHNAME as a regex body; None: never matches."""
    out: list[str] = []
    i, n = 0, len(pat)
    while i < n:
        c = pat[i]
        if c == "*":
            j = i
            while j < n and pat[j] == "*":
                j += 1
            if j - i >= 2 and (i == 0 or pat[i - 1] == "/") and (j == n or pat[j] == "/"):
                if j == n:
                    out.append(".*")
                else:
                    out.append("(?:.*/)?")
                    j += 1
            else:
                out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            bracket = _bracket_regex(pat, i + 1)
            if bracket is None:
                return None
            frag, i = bracket
            out.append(frag)
        elif c == "\\":
            if i + 1 >= n:
                return None
            out.append(re.escape(pat[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _trim_trailing_spaces(line: str) -> str:
    # git's trim_trailing_spaces(): unescaped trailing spaces go, "\ " stays.
    last_space: int | None = None
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == " ":
            if last_space is None:
                last_space = i
        else:
            last_space = None
            if c == "\\":
                i += 1
                if i >= n:
                    return line
        i += 1
    return line if last_space is None else line[:last_space]


@dataclass(frozen=True, slots=True)
class _Rule:
    regex: re.Pattern[str]
    negative: bool
    dir_only: bool
    basename: bool  # no "/" inside: matched against the last path component
    literal: str | None  # the pattern has no wildcard: plain string equality


_WILDCARDS = frozenset("*?[\\")


def _parse_rule(line: str) -> _Rule | None:
    if line.endswith("\r"):
        line = line[:-1]
    if not line or line.startswith("#"):
        return None
    line = _trim_trailing_spaces(line)
    negative = line.startswith("!")
    if negative:
        line = line[1:]
    dir_only = line.endswith("/")
    if dir_only:
        line = line[:-1]
    basename = "/" not in line
    if line.startswith("/"):
        line = line[1:]
    if not line:
        return None
    body = _wildmatch_regex(line)
    if body is None:
        return None
    literal = None if _WILDCARDS.intersection(line) else line
    return _Rule(re.compile(body, re.DOTALL), negative, dir_only, basename, literal)


class _Lookup:
    """The last rule (highest index) of a set that matches one string, in two C calls.

    Plain names go in a dictionary. The rest form one regex of alternatives in
    reverse order, each a capture group: the first alternative that matches is the
    last matching rule.
    """

    __slots__ = ("_exact", "_group_rule", "_regex")

    def __init__(self, indexed: list[tuple[int, _Rule]]) -> None:
        self._exact: dict[str, int] = {}
        generic: list[tuple[int, _Rule]] = []
        for index, rule in indexed:
            if rule.literal is not None:
                self._exact[rule.literal] = index
            else:
                generic.append((index, rule))
        generic.reverse()
        self._group_rule = [-1] + [index for index, _ in generic]
        alternatives = "|".join(f"({rule.regex.pattern})" for _, rule in generic)
        self._regex = re.compile(alternatives, re.DOTALL) if generic else None

    def last_match(self, text: str) -> int:
        """Index of the last matching rule, -1 when none matches."""
        best = self._exact.get(text, -1)
        if self._regex is not None:
            m = self._regex.fullmatch(text)
            if m is not None and m.lastindex is not None:
                return max(best, self._group_rule[m.lastindex])
        return best


class _RuleList:
    """The lines of one ignore file (or settings list), governing paths under ``base``."""

    __slots__ = ("_lookups", "base", "rules")

    def __init__(self, base: str, rules: tuple[_Rule, ...]) -> None:
        self.base = base  # byte space, "" or ending in "/"
        self.rules = rules
        self._lookups = {
            is_dir: tuple(
                _Lookup(
                    [
                        (i, r)
                        for i, r in enumerate(rules)
                        if r.basename is by_name and (is_dir or not r.dir_only)
                    ]
                )
                for by_name in (True, False)
            )
            for is_dir in (False, True)
        }

    @classmethod
    def from_lines(cls, base: str, lines: Iterable[str]) -> _RuleList | None:
        rules = tuple(r for r in map(_parse_rule, lines) if r is not None)
        return cls(base, rules) if rules else None

    def verdict(self, path: str, name: str, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included by a negation; None: no line matches."""
        if self.base:
            if not path.startswith(self.base):
                return None
            path = path[len(self.base) :]
        by_name, by_path = self._lookups[is_dir]
        best = max(by_name.last_match(name), by_path.last_match(path))
        if best < 0:
            return None
        return not self.rules[best].negative


def _read_ignore_file(path: str, base: str, *, in_tree: bool) -> _RuleList | None:
    # git (2.32+) does not follow a symlinked in-tree .gitignore.
    flags = os.O_RDONLY | os.O_NONBLOCK | (os.O_NOFOLLOW if in_tree else 0)
    try:
        fd = os.open(path, flags)
        with os.fdopen(fd, "rb") as f:
            data = f.read()
    except OSError as exc:
        if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
            log.debug("ignore file %s not read: %s", path, exc)
        return None
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    return _RuleList.from_lines(base, data.decode("latin-1").split("\n"))


# --- where the rules come from ----------------------------------------------------


def _git_dir(top: str) -> str | None:
    dotgit = os.path.join(top, ".git")
    if os.path.isdir(dotgit):
        gitdir = dotgit
    else:
        try:
            with open(dotgit, encoding="utf-8", errors="replace") as f:
                first = f.readline().strip()
        except OSError:
            return None
        if not first.startswith("gitdir:"):
            return None
        gitdir = os.path.join(top, first[len("gitdir:") :].strip())
    try:  # a linked worktree keeps info/ in the common dir
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as f:
            gitdir = os.path.join(gitdir, f.read().strip())
    except OSError:
        pass
    return gitdir


def _repo_top(root_real: str) -> str | None:
    current = root_real
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _global_excludes_file(cwd: str) -> str | None:
    """``core.excludesFile``, or git's default under XDG_CONFIG_HOME / HOME."""
    git = shutil.which("git")
    if git is not None:
        try:
            done = subprocess.run(
                [git, "config", "--path", "--get", "core.excludesFile"],
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=_GIT_CONFIG_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            log.debug("git config not usable: %s", exc)
        else:
            value = done.stdout.strip()
            if done.returncode == 0 and value:
                return os.path.join(cwd, os.path.expanduser(value))
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg:
        return os.path.join(xdg, "git", "ignore")
    home = os.environ.get("HOME")
    return os.path.join(home, ".config", "git", "ignore") if home else None


def _is_inside(real: str, root_real: str) -> bool:
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)


class _Selection:
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
        self.respect_gitignore = settings.respect_gitignore
        self.prefix = ""  # the root's path inside its repository, byte space
        outer: list[_RuleList] = []  # deepest first, as git consults them
        if settings.respect_gitignore:
            top = _repo_top(self.root_real)
            if top is not None:
                if top != self.root_real:
                    self.prefix = _bytes_str(os.path.relpath(self.root_real, top)) + "/"
                    outer.extend(self._ancestor_ignores(top))
                gitdir = _git_dir(top)
                if gitdir:
                    info = os.path.join(gitdir, "info", "exclude")
                    outer.extend(_optional(_read_ignore_file(info, "", in_tree=False)))
            excludes = _global_excludes_file(self.root_real)
            if excludes:
                outer.extend(_optional(_read_ignore_file(excludes, "", in_tree=False)))
        self.outer_lists: tuple[_RuleList, ...] = tuple(outer)
        exclude = list(settings.exclude)
        index_dir = settings.index_dir
        if index_dir and "://" not in index_dir and not os.path.isabs(index_dir):
            exclude.append("/" + index_dir.strip("/") + "/")
        self.exclude = _RuleList.from_lines("", map(_bytes_str, exclude))
        self.include = _RuleList.from_lines("", map(_bytes_str, settings.include))

    def _ancestor_ignores(self, top: str) -> list[_RuleList]:
        lists: list[_RuleList] = []
        parts = self.prefix.rstrip("/").split("/")[:-1]
        base, current = "", top
        for part in [None, *parts]:
            if part is not None:
                base += part + "/"
                current = os.path.join(current, _text_str(part))
            found = _read_ignore_file(os.path.join(current, ".gitignore"), base, in_tree=True)
            if found is not None:
                lists.append(found)
        return lists[::-1]

    def ignored(self, lists: tuple[_RuleList, ...], rel_b: str, name_b: str, is_dir: bool) -> bool:
        """Ignored by git's rules (``lists``, deepest first) or by settings.exclude."""
        if self.respect_gitignore:
            top_path = self.prefix + rel_b
            for rule_list in lists:
                verdict = rule_list.verdict(top_path, name_b, is_dir)
                if verdict is not None:
                    if verdict:
                        return True
                    break
        if self.exclude is not None:
            return self.exclude.verdict(rel_b, name_b, is_dir) is True
        return False

    def included(self, inherited: bool | None, rel_b: str, name_b: str, is_dir: bool) -> bool:
        """settings.include: the path's own verdict, else its nearest ancestor's."""
        verdict = self.include_verdict(rel_b, name_b, is_dir, inherited)
        return verdict is True

    def include_verdict(
        self, rel_b: str, name_b: str, is_dir: bool, inherited: bool | None
    ) -> bool | None:
        if self.include is None:
            return True
        own = self.include.verdict(rel_b, name_b, is_dir)
        return inherited if own is None else own

    def read_dir_ignore(self, dir_abs: str, dir_rel_b: str) -> _RuleList | None:
        """The directory's own .gitignore (None: absent, empty or not honoured)."""
        if not self.respect_gitignore:
            return None
        path = os.path.join(dir_abs, ".gitignore")
        return _read_ignore_file(path, self.prefix + dir_rel_b, in_tree=True)


def _optional(rules: _RuleList | None) -> list[_RuleList]:
    return [] if rules is None else [rules]


# --- entries ----------------------------------------------------------------------


def _human_size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    size = float(n)
    for unit in ("KB", "MB", "GB", "TB"):
        size /= 1024
        if size < 1024 or unit == "TB":
            break
    return f"{size:.1f} {unit}"


def _kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a fifo"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a regular file"


def _errno_text(exc: OSError) -> str:
    name = errno.errorcode.get(exc.errno or 0, "")
    reason = exc.strerror or str(exc)
    return f"{name}: {reason}" if name else reason


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


def _skip(
    rel: str, path: str, st: os.stat_result | None, reason: SkipReason, detail: str
) -> WalkEntry:
    size = st.st_size if st is not None and stat.S_ISREG(st.st_mode) else 0
    mtime = st.st_mtime_ns if st is not None else 0
    return WalkEntry(
        rel, path, size, mtime, _language_by_name(rel.rpartition("/")[2]), reason, detail
    )


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
        real = os.path.realpath(path)
        if not _is_inside(real, sel.root_real):
            return _skip(rel, path, st, SkipReason.SYMLINK_OUTSIDE, f"points to {real}")
    assert st is not None
    mode = st.st_mode
    if not stat.S_ISREG(mode):
        return _skip(rel, path, st, SkipReason.NOT_REGULAR, _kind_of(mode))
    size = st.st_size
    if size > sel.max_bytes:
        detail = f"{_human_size(size)} > {_human_size(sel.max_bytes)} limit"
        return _skip(rel, path, st, SkipReason.TOO_LARGE, detail)
    # Mode bits answer for almost every file without a syscall; access() covers the rest.
    if (mode & 0o444) != 0o444 and not os.access(path, os.R_OK):
        return _skip(rel, path, st, SkipReason.UNREADABLE, "EACCES: Permission denied")
    name = rel.rpartition("/")[2]
    language = _language_by_name(name)
    if not language and size and "." not in name:
        language = language_for_path(rel, _first_line(path))
    return WalkEntry(rel, path, size, st.st_mtime_ns, language)


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
    lists: tuple[_RuleList, ...]
    include: bool | None  # the nearest include verdict of this directory or an ancestor
    key: tuple[int, int]
    children: Iterator[_Child]


def _read_children(
    sel: _Selection, dir_abs: str, rel: str, rel_b: str, parent: tuple[_RuleList, ...]
) -> tuple[tuple[_RuleList, ...], list[_Child]]:
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
        name_b = _bytes_str(name)
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
        raise WorkspaceError(f"workspace root {sel.root_abs}: {_errno_text(exc)}") from exc
    include = True if sel.include is None else None
    return _walk(sel, _Frame("", "", lists, include, key, iter(children)))


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
                        yield _skip(
                            child.rel, child.path, None, SkipReason.UNREADABLE, _errno_text(exc)
                        )
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
        real = os.path.realpath(child.path)
        if not _is_inside(real, sel.root_real):
            return _skip(child.rel, child.path, st, SkipReason.SYMLINK_OUTSIDE, f"points to {real}")
    else:
        try:
            st = child.entry.stat(follow_symlinks=False)
        except OSError as exc:
            return _skip(child.rel, child.path, None, SkipReason.UNREADABLE, _errno_text(exc))
    key = (st.st_dev, st.st_ino)
    if key in on_stack:
        detail = f"leads back to the enclosing directory {visited[key]}"
        return _skip(child.rel, child.path, st, SkipReason.SYMLINK_LOOP, detail)
    if child.link and key in visited:
        detail = f"directory already walked as {visited[key]}"
        return _skip(child.rel, child.path, st, SkipReason.SYMLINK_LOOP, detail)
    visited[key] = child.rel
    try:
        lists, children = _read_children(
            sel, child.path, child.rel + "/", child.rel_b + "/", parent.lists
        )
    except OSError as exc:
        return _skip(child.rel, child.path, st, SkipReason.UNREADABLE, _errno_text(exc))
    return _Frame(child.rel + "/", child.rel_b + "/", lists, include, key, iter(children))


# --- one path at a time -----------------------------------------------------------


class IgnoreMatcher:
    """The walk's rules for one path at a time, for a server reacting to file events.

    Build one per workspace and keep it: the global rules are read once, and each
    directory's ``.gitignore`` is re-read only when its mtime or size changes.
    """

    def __init__(self, root: Path, settings: IndexSettings) -> None:
        self._sel = _Selection(root, settings)
        self._cache: dict[str, tuple[tuple[int, int, int], _RuleList | None]] = {}

    def _lists_for(
        self, dir_abs: str, dir_rel_b: str, parent: tuple[_RuleList, ...]
    ) -> tuple[_RuleList, ...]:
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
            name_b = _bytes_str(part)
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

        A path through a symlinked directory is answered as if that directory were
        entered, unless the link leaves the workspace or leads back to an enclosing
        directory (the walk's order-dependent "already walked" case is not judged).
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
            if linked:
                real = os.path.realpath(path)
                if not _is_inside(real, sel.root_real) or _is_inside(
                    os.path.realpath(dir_abs), real
                ):
                    return None
            name_b = _bytes_str(part)
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
        name_b = _bytes_str(name)
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


# --- reading ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SourceText:
    """A file's text as the index sees it.

    ``content_hash`` is ``model.text_hash`` of ``text`` (the decoded text, BOM
    stripped), so an editor buffer's text hashes the same as the saved file.
    ``skip`` is set when the file is not indexed (then ``text`` and
    ``content_hash`` are empty); ``note`` explains a skip, or a caveat of an
    indexed file ("invalid UTF-8: 3 bytes replaced").
    """

    text: str
    content_hash: str
    skip: SkipReason | None = None
    note: str = ""


def read_source(entry: WalkEntry, max_bytes: int) -> SourceText:
    """Read and decode one walked file; never raises for a bad file.

    * A skip the walk already decided is passed on.
    * Larger than ``max_bytes`` now (the file grew since the walk): TOO_LARGE.
    * A NUL byte in the first 8 KiB: BINARY (UTF-16 files land here too).
    * A UTF-8 BOM is stripped.
    * Invalid UTF-8 is decoded with U+FFFD replacement characters and indexed:
      ``skip`` stays None and ``note`` says "invalid UTF-8: N bytes replaced".
    * Not a regular file any more: NOT_REGULAR; any OSError: UNREADABLE with the
      errno text.
    """
    if entry.skip is not None:
        return SourceText("", "", entry.skip, entry.detail)
    try:
        # O_NONBLOCK: a path that turned into a fifo must not hang the reader.
        fd = os.open(entry.abs_path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        return SourceText("", "", SkipReason.UNREADABLE, _errno_text(exc))
    try:
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                return SourceText("", "", SkipReason.NOT_REGULAR, _kind_of(st.st_mode))
            if st.st_size > max_bytes:
                return _too_large(st.st_size, max_bytes)
            data = f.read(max_bytes + 1)
    except OSError as exc:
        return SourceText("", "", SkipReason.UNREADABLE, _errno_text(exc))
    if len(data) > max_bytes:
        return _too_large(len(data), max_bytes)
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return SourceText("", "", SkipReason.BINARY, "NUL byte in the first 8 KiB")
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", "replace")
        bad = len(data) - len(data.decode("utf-8", "ignore").encode("utf-8"))
        note = f"{SkipReason.INVALID_UTF8}: {bad} byte{'s' if bad != 1 else ''} replaced"
        return SourceText(text, text_hash(text), None, note)
    return SourceText(text, text_hash(text))


def _too_large(size: int, max_bytes: int) -> SourceText:
    detail = f"{_human_size(size)} > {_human_size(max_bytes)} limit"
    if size == max_bytes + 1:
        detail = f"more than {_human_size(max_bytes)} (limit)"
    return SourceText("", "", SkipReason.TOO_LARGE, detail)

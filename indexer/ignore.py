"""Git's ignore rules: the pattern language, ignore files, and where git finds them.

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
* ``settings.exclude`` and ``settings.include`` use the same pattern language,
  relative to the workspace root; the index directory is always excluded.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass

from .settings import IndexSettings

log = logging.getLogger(__name__)

_BOM = b"\xef\xbb\xbf"
_GIT_CONFIG_TIMEOUT_S = 2.0


# --- git's pattern language -------------------------------------------------------
#
# Strings in "byte space": one character per UTF-8 byte (latin-1), so a pattern
# like "caf?" behaves as in git, where "?" matches one byte.


# settings.exclude skips folders of these names only when they hold a virtualenv.
VIRTUALENV_NAMES = frozenset({"venv", ".venv"})
VIRTUALENV_MARKERS = ("pyvenv.cfg", "conda-meta")


def to_byte_space(text: str) -> str:
    """A path or pattern as the rules see it: one character per UTF-8 byte."""
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


class RuleList:
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
    def from_lines(cls, base: str, lines: Iterable[str]) -> RuleList | None:
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


def _read_ignore_file(path: str, base: str, *, in_tree: bool) -> RuleList | None:
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
    return RuleList.from_lines(base, data.decode("latin-1").split("\n"))


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


def in_git_repository(root: str | os.PathLike[str]) -> bool:
    """Whether the folder is inside a git work tree (a ``.git`` here or above)."""
    return _repo_top(os.path.realpath(root)) is not None


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


# --- the rules of one workspace ---------------------------------------------------


class IgnoreRules:
    """git's ignore rules plus settings.exclude / settings.include for one workspace.

    Paths handed to the methods are workspace-relative and in byte space
    (``to_byte_space``); ``lists`` are a directory's rule lists, deepest first.
    """

    def __init__(self, root_real: str, settings: IndexSettings) -> None:
        self.root_real = root_real
        self.respect_gitignore = settings.respect_gitignore
        self.prefix = ""  # the root's path inside its repository, byte space
        outer: list[RuleList] = []  # deepest first, as git consults them
        if settings.respect_gitignore:
            top = _repo_top(root_real)
            if top is not None:
                if top != root_real:
                    self.prefix = to_byte_space(os.path.relpath(root_real, top)) + "/"
                    outer.extend(self._ancestor_ignores(top))
                gitdir = _git_dir(top)
                if gitdir:
                    info = os.path.join(gitdir, "info", "exclude")
                    outer.extend(_optional(_read_ignore_file(info, "", in_tree=False)))
            excludes = _global_excludes_file(root_real)
            if excludes:
                outer.extend(_optional(_read_ignore_file(excludes, "", in_tree=False)))
        self.outer_lists: tuple[RuleList, ...] = tuple(outer)
        exclude = list(settings.exclude)
        index_dir = settings.index_dir
        if index_dir and "://" not in index_dir and not os.path.isabs(index_dir):
            exclude.append("/" + index_dir.strip("/") + "/")
        self.exclude = RuleList.from_lines("", map(to_byte_space, exclude))
        self.include = RuleList.from_lines("", map(to_byte_space, settings.include))

    def _ancestor_ignores(self, top: str) -> list[RuleList]:
        lists: list[RuleList] = []
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

    def ignored(self, lists: tuple[RuleList, ...], rel_b: str, name_b: str, is_dir: bool) -> bool:
        """Ignored by git's rules (``lists``, deepest first) or by settings.exclude."""
        if self.respect_gitignore:
            top_path = self.prefix + rel_b
            for rule_list in lists:
                verdict = rule_list.verdict(top_path, name_b, is_dir)
                if verdict is not None:
                    if verdict:
                        return True
                    break
        if self.exclude is not None and self.exclude.verdict(rel_b, name_b, is_dir) is True:
            return not (is_dir and name_b in VIRTUALENV_NAMES and not self._is_virtualenv(rel_b))
        return False

    def _is_virtualenv(self, rel_b: str) -> bool:
        """Whether a folder named like a virtualenv is one (not a source package such as
        the standard library's ``venv``): venv / virtualenv write ``pyvenv.cfg``, conda
        ``conda-meta/``."""
        folder = os.path.join(self.root_real, _text_str(rel_b))
        return any(os.path.exists(os.path.join(folder, marker)) for marker in VIRTUALENV_MARKERS)

    def included(self, inherited: bool | None, rel_b: str, name_b: str, is_dir: bool) -> bool:
        """settings.include: the path's own verdict, else its nearest ancestor's."""
        verdict = self.include_verdict(rel_b, name_b, is_dir, inherited)
        return verdict is True

    def include_verdict(self, rel_b: str, name_b: str, is_dir: bool, inherited: bool | None) -> bool | None:
        """settings.include's verdict for a path (True when there is no include list)."""
        if self.include is None:
            return True
        own = self.include.verdict(rel_b, name_b, is_dir)
        return inherited if own is None else own

    def read_dir_ignore(self, dir_abs: str, dir_rel_b: str) -> RuleList | None:
        """The directory's own .gitignore (None: absent, empty or not honoured)."""
        if not self.respect_gitignore:
            return None
        path = os.path.join(dir_abs, ".gitignore")
        return _read_ignore_file(path, self.prefix + dir_rel_b, in_tree=True)


def _optional(rules: RuleList | None) -> list[RuleList]:
    return [] if rules is None else [rules]

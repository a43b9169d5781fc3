"""In-memory grep over unsaved buffers: the same answers ripgrep gives on disk.

``TextMatcher`` finds a pattern line by line with ripgrep's case rules (RE2,
falling back to the ``regex`` package under a deadline); ``OverlayFilter``
decides which buffer paths ripgrep would have searched.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

import re2
import regex as regex_fallback

from ..errors import QueryError
from ..settings import IndexSettings

if TYPE_CHECKING:  # pathspec (and its hyperscan backend) loads only for unsaved buffers
    import pathspec

logger = logging.getLogger(__name__)

CharSpan = tuple[int, int]


@dataclass(slots=True)
class FileHits:
    """Lines seen in one file: the text of match and context lines, and match spans."""

    lines: dict[int, str] = field(default_factory=dict)
    matches: dict[int, list[CharSpan]] = field(default_factory=dict)
    offsets: dict[int, int] = field(default_factory=dict)  # match line → its byte offset in the file


class TextMatcher:
    """Finds a pattern line by line in memory, with the same case rules as the rg run.

    Literal, case-sensitive: ``str.find``. Anything else: RE2 (linear time).
    A regex RE2 rejects (back-references, look-arounds, some Rust-only syntax)
    falls back to the ``regex`` package, bounded by the time left before
    ``deadline``. Lines end at "\n"; a trailing "\r" is dropped, as ``--crlf`` does.
    """

    def __init__(self, pattern: str, *, regex: bool, case_sensitive: bool, deadline: float):
        self._pattern = pattern
        self._deadline = deadline
        self._plain = not regex and case_sensitive
        self._re2: re2._Regexp | None = None
        self._slow: regex_fallback.Pattern[str] | None = None
        if self._plain:
            return
        options = re2.Options()
        options.log_errors = False
        options.case_sensitive = case_sensitive
        options.literal = not regex
        try:
            self._re2 = re2.compile(pattern, options)
        except re2.error:
            flags = 0 if case_sensitive else regex_fallback.IGNORECASE
            try:
                self._slow = regex_fallback.compile(pattern, flags)
            except regex_fallback.error as exc:
                raise QueryError(
                    f"regex {pattern!r} works on disk but not in unsaved buffers: {exc}"
                ) from exc
            logger.debug("RE2 rejected %r; using the regex package with a deadline", pattern)

    def spans(self, line: str) -> list[CharSpan]:
        """Non-overlapping match spans in one line (empty list: no match).

        Raises TimeoutError when the fallback engine runs past the deadline.
        """
        if self._plain:
            out: list[CharSpan] = []
            at = line.find(self._pattern)
            while at >= 0:
                out.append((at, at + len(self._pattern)))
                at = line.find(self._pattern, at + max(1, len(self._pattern)))
            return out
        if self._re2 is not None:
            return [m.span() for m in self._re2.finditer(line)]
        assert self._slow is not None
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        return [m.span() for m in self._slow.finditer(line, timeout=left)]

    def found_in(self, text: str) -> bool:
        """Whether any line of ``text`` holds a match (one scan of the whole text when it can)."""
        if self._plain:
            return self._pattern in text
        if self._re2 is not None and "^" not in self._pattern and "$" not in self._pattern:
            return self._re2.search(text) is not None
        return any(self.spans(line.removesuffix("\r")) for line in text.split("\n"))

    def search(self, text: str) -> FileHits:
        """Search a whole buffer; every line is kept so passages can be built from it."""
        hits = FileHits()
        if not text:
            return hits
        raw = text.split("\n")
        if raw[-1] == "":
            raw.pop()
        for number, line in enumerate(raw, start=1):
            line = line.removesuffix("\r")
            hits.lines[number] = line
            found = self.spans(line)
            if found:  # may hold only empty matches (`^`): still a match line
                hits.matches[number] = found
        return hits


class OverlayFilter:
    """Decides which overlay paths ripgrep would have searched: globs, .git/, .gitignore.

    Include groups are ANDed (the index's and the call's), each group ORs its globs;
    .gitignore files nest as git reads them, plus .git/info/exclude.
    """

    def __init__(
        self,
        root: Path,
        include: Sequence[Sequence[str]],
        exclude: Sequence[str],
        respect_gitignore: bool,
    ):
        import pathspec

        self._root = root
        self._include = [pathspec.GitIgnoreSpec.from_lines(g) for g in include if g]
        self._exclude = pathspec.GitIgnoreSpec.from_lines(exclude)
        self._respect_gitignore = respect_gitignore
        self._ignore_files: dict[Path, pathspec.GitIgnoreSpec | None] = {}

    def allows(self, path: str) -> bool:
        """True when ripgrep would search ``path`` (workspace-relative POSIX) on disk."""
        parts = path.split("/")
        if ".git" in parts or self._exclude.match_file(path):
            return False
        if any(not spec.match_file(path) for spec in self._include):
            return False
        return not (self._respect_gitignore and self._gitignored(parts))

    def _spec(self, file: Path) -> pathspec.GitIgnoreSpec | None:
        if file not in self._ignore_files:
            try:
                lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                self._ignore_files[file] = None
            else:
                import pathspec

                self._ignore_files[file] = pathspec.GitIgnoreSpec.from_lines(lines)
        return self._ignore_files[file]

    def _gitignored(self, parts: list[str]) -> bool:
        # (depth of the directory holding the rules, rules), shallow first so
        # deeper files override; .git/info/exclude sits below the root's own.
        specs: list[tuple[int, pathspec.GitIgnoreSpec]] = []
        info = self._spec(self._root / ".git" / "info" / "exclude")
        if info is not None:
            specs.append((0, info))
        for depth in range(len(parts)):
            spec = self._spec(self._root.joinpath(*parts[:depth], ".gitignore"))
            if spec is not None:
                specs.append((depth, spec))
        for end in range(1, len(parts) + 1):
            is_dir = end < len(parts)
            verdict: bool | None = None
            for depth, spec in specs:
                if depth >= end:
                    break
                sub = "/".join(parts[depth:end]) + ("/" if is_dir else "")
                result = spec.check_file(sub).include
                if result is not None:
                    verdict = result
            if verdict:
                return True  # an ignored directory hides everything below it
        return False


def normalise_overlay_path(path: str) -> str | None:
    """A buffer key as a workspace-relative POSIX path; None when it leaves the workspace."""
    posix = PurePosixPath(path.replace("\\", "/"))
    if posix.is_absolute() or ".." in posix.parts or str(posix) in ("", "."):
        return None
    return str(posix)


def search_overlay(
    buffers: Mapping[str, str],
    matcher: TextMatcher,
    allowed: OverlayFilter,
    index_settings: IndexSettings,
    deadline: float,
) -> Iterator[tuple[str, FileHits]]:
    """Search unsaved buffers that ripgrep would have searched on disk, by path."""
    limit = index_settings.max_file_bytes
    for path in sorted(buffers):
        text = buffers[path]
        if not allowed.allows(path) or "\x00" in text:
            continue  # excluded, or binary like ripgrep would skip it
        if limit > 0 and len(text.encode("utf-8", "surrogatepass")) > limit:
            continue
        if time.monotonic() >= deadline:
            raise TimeoutError
        hits = matcher.search(text)
        if hits.matches:
            yield path, hits

"""What grep answers with, and the pure pieces that build it: passages of lines around
matches, merged when they are near, long (minified) lines cut down around every match,
byte offsets turned into code points, and smart case. No process, no disk: ``grep``
runs ripgrep and the in-memory matcher and hands their lines to ``build_passages``."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from .grep_memory import CharSpan

CaseMode = Literal["sensitive", "insensitive", "smart"]

# Minified sources put a whole bundle on one line. A line longer than this is
# cut down in passages: context lines to a head, match lines to windows around
# every match (so no match and no highlight is lost).
LONG_LINE_CHARS = 1000
CONTEXT_LINE_KEEP = 200
MATCH_PAD_CHARS = 80
ELLIPSIS = "…"


@dataclass(frozen=True, slots=True)
class Passage:
    """A run of lines around one or more matches in one file."""

    path: str  # workspace-relative POSIX
    start_line: int  # 1-based inclusive
    end_line: int  # 1-based inclusive
    match_lines: tuple[int, ...]  # 1-based line numbers that matched, ascending
    text: str  # lines start..end joined with "\n" (no trailing newline)
    highlights: tuple[CharSpan, ...]  # (start, end) code-point offsets of matches in text


@dataclass(frozen=True, slots=True)
class GrepResult:
    """What one grep found, ordered by path then line."""

    passages: tuple[Passage, ...]
    files: int  # unique files with a match
    matches: int  # matching lines
    truncated: bool  # stopped early: max_matches reached or timed out
    reason: str  # why it was truncated ("" when it was not)
    millis: float


# ── pure pieces: case, merging, passages, offsets ────────────────────────────

_REGEX_NOT_LITERAL = re.compile(
    r"\\(?:[pP]\{[^}]*\}|[pP][A-Za-z]|x\{[0-9A-Fa-f]*\}|u\{[0-9A-Fa-f]*\}|.)"  # escapes
    r"|\(\?P?<[^>]*>"  # group names
    r"|\(\?[A-Za-z-]+[:)]"  # inline flags such as (?U)
    r"|\[:\^?[a-z]+:\]",  # POSIX classes
    re.DOTALL,
)


def is_case_sensitive(pattern: str, *, regex: bool, case: CaseMode) -> bool:
    """Resolve a case mode; ``smart`` is insensitive unless the pattern has an uppercase letter.

    For a regex only literal characters count: ``\\S``, ``\\p{Lu}`` and group
    names do not make a pattern case-sensitive.
    """
    if case == "sensitive":
        return True
    if case == "insensitive":
        return False
    literal = _REGEX_NOT_LITERAL.sub("", pattern) if regex else pattern
    return any(ch.isupper() for ch in literal)


def merge_match_lines(match_lines: Iterable[int], context: int) -> list[tuple[int, ...]]:
    """Group match lines of one file: lines at most ``2 × context`` apart share a passage."""
    groups: list[list[int]] = []
    for line in sorted(set(match_lines)):
        if groups and line - groups[-1][-1] <= 2 * context:
            groups[-1].append(line)
        else:
            groups.append([line])
    return [tuple(g) for g in groups]


def byte_to_char_span(line: bytes, start: int, end: int) -> CharSpan:
    """Convert a byte span within a UTF-8 line (as ripgrep reports it) to code points."""
    if line.isascii():
        return start, end
    head = len(line[:start].decode("utf-8", "replace"))
    return head, head + len(line[start:end].decode("utf-8", "replace"))


def elide_long_line(text: str, spans: Sequence[CharSpan]) -> tuple[str, list[CharSpan]]:
    """Shorten a line past ``LONG_LINE_CHARS``, keeping every match span intact.

    A context line keeps its head; a match line keeps a window of
    ``MATCH_PAD_CHARS`` around each match, windows joined by an ellipsis.
    Returns the new text and the spans moved onto it.
    """
    if len(text) <= LONG_LINE_CHARS:
        return text, list(spans)
    if not spans:
        return text[:CONTEXT_LINE_KEEP] + ELLIPSIS, []
    windows: list[list[int]] = []
    for start, end in sorted(spans):
        lo, hi = max(0, start - MATCH_PAD_CHARS), min(len(text), end + MATCH_PAD_CHARS)
        if windows and lo <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], hi)
        else:
            windows.append([lo, hi])
    pieces: list[str] = []
    shift: list[tuple[int, int, int]] = []  # (window start, window end, offset in output)
    out_len = 0
    for lo, hi in windows:
        if lo > 0 or pieces:
            pieces.append(ELLIPSIS)
            out_len += len(ELLIPSIS)
        shift.append((lo, hi, out_len))
        pieces.append(text[lo:hi])
        out_len += hi - lo
    if windows[-1][1] < len(text):
        pieces.append(ELLIPSIS)
    moved: list[CharSpan] = []
    for start, end in spans:
        for lo, hi, at in shift:
            if lo <= start and end <= hi:
                moved.append((at + start - lo, at + end - lo))
                break
    return "".join(pieces), moved


def build_passages(
    path: str,
    lines: Mapping[int, str],
    matches: Mapping[int, Sequence[CharSpan]],
    context: int,
) -> list[Passage]:
    """Build the passages of one file from its match lines and the lines around them.

    ``lines`` maps 1-based line numbers to text without the line terminator and
    must hold every line of each window that exists; a window ends where the
    file (``lines``) ends. ``matches`` maps each match line to code-point spans
    within that line; an empty span list still marks the line as a match.
    """
    passages: list[Passage] = []
    for group in merge_match_lines(matches, context):
        first, last = group[0], group[-1]
        start = max(1, first - context)
        while start < first and start not in lines:
            start += 1
        end = last + context
        while end > last and end not in lines:
            end -= 1
        # Most lines are plain context: taken as they are, in one pass; only match
        # lines and over-long lines get the per-line work.
        texts = list(map(lines.get, range(start, end + 1), itertools.repeat("")))
        if max(map(len, texts)) > LONG_LINE_CHARS:
            for i, text in enumerate(texts):
                if len(text) > LONG_LINE_CHARS and (start + i) not in matches:
                    texts[i] = elide_long_line(text, ())[0]
        spans_at: dict[int, list[CharSpan]] = {}
        for number in group:
            i = number - start
            size = len(texts[i])
            spans = [(max(0, a), min(size, b)) for a, b in matches[number] if a < b and a < size]
            if size > LONG_LINE_CHARS:
                texts[i], spans = elide_long_line(texts[i], spans)
            spans_at[i] = spans
        highlights: list[CharSpan] = []
        if any(spans_at.values()):
            offsets = [0, *itertools.accumulate(map(len, texts))]  # plus i newlines before line i
            for i in sorted(spans_at):
                at = offsets[i] + i
                highlights.extend((at + a, at + b) for a, b in spans_at[i])
        passages.append(
            Passage(
                path=path,
                start_line=start,
                end_line=end,
                match_lines=group,
                text="\n".join(texts),
                highlights=tuple(highlights),
            )
        )
    return passages


# ── ripgrep ──────────────────────────────────────────────────────────────────

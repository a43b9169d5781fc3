"""grep's pure parts: passage merging, offsets, long lines, case, in-memory search."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from codesift.indexer.search.grep_memory import OverlayFilter, TextMatcher
from codesift.indexer.search.passages import (
    ELLIPSIS,
    LONG_LINE_CHARS,
    CaseMode,
    build_passages,
    byte_to_char_span,
    elide_long_line,
    is_case_sensitive,
    merge_match_lines,
)


def numbered(count: int) -> dict[int, str]:
    return {n: f"line {n}" for n in range(1, count + 1)}


def highlighted(text: str, spans: tuple[tuple[int, int], ...]) -> list[str]:
    return [text[s:e] for s, e in spans]


def matcher(pattern: str, *, regex: bool = False, sensitive: bool = True) -> TextMatcher:
    return TextMatcher(pattern, regex=regex, case_sensitive=sensitive, deadline=time.monotonic() + 10)


# ── merging and windows ──────────────────────────────────────────────────────


def test_grep_passages_merge_matches_within_20_lines() -> None:
    assert merge_match_lines([30, 50], context=10) == [(30, 50)]


def test_grep_passages_split_matches_21_lines_apart() -> None:
    assert merge_match_lines([30, 51], context=10) == [(30,), (51,)]


def test_grep_merge_chains_and_sorts_unordered_lines() -> None:
    assert merge_match_lines([90, 10, 25, 40, 61], context=10) == [(10, 25, 40), (61,), (90,)]


def test_grep_merge_with_zero_context_keeps_each_line_apart() -> None:
    assert merge_match_lines([5, 6], context=0) == [(5,), (6,)]


def test_grep_passage_window_is_ten_lines_either_side() -> None:
    [p] = build_passages("a.py", numbered(100), {50: [(0, 4)]}, context=10)
    assert (p.start_line, p.end_line, p.match_lines) == (40, 60, (50,))
    assert p.text.splitlines() == [f"line {n}" for n in range(40, 61)]


def test_grep_passage_at_file_start_begins_at_line_one() -> None:
    [p] = build_passages("a.py", numbered(100), {3: [(0, 4)]}, context=10)
    assert (p.start_line, p.end_line) == (1, 13)


def test_grep_passage_at_file_end_is_clipped_to_last_line() -> None:
    [p] = build_passages("a.py", numbered(25), {24: [(0, 4)]}, context=10)
    assert (p.start_line, p.end_line) == (14, 25)


def test_grep_merged_passage_marks_every_match_line_and_highlight() -> None:
    lines = numbered(100)
    matches = {n: [(0, 4)] for n in (20, 40, 60)}
    [p] = build_passages("a.py", lines, matches, context=10)
    assert (p.start_line, p.end_line, p.match_lines) == (10, 70, (20, 40, 60))
    assert len(p.highlights) == 3
    rows = p.text.split("\n")
    starts = [s for s, _ in p.highlights]
    assert [p.text[:s].count("\n") + p.start_line for s in starts] == [20, 40, 60]
    assert all(rows[n - p.start_line] == f"line {n}" for n in (20, 40, 60))


def test_grep_passages_split_at_21_lines_are_adjacent_not_overlapping() -> None:
    first, second = build_passages("a.py", numbered(100), {30: [], 51: []}, context=10)
    assert (first.start_line, first.end_line) == (20, 40)
    assert (second.start_line, second.end_line) == (41, 61)


def test_grep_never_drops_a_match_line_500_matches() -> None:
    lines = {n: "hit" for n in range(1, 501)}
    passages = build_passages("a.py", lines, {n: [(0, 3)] for n in lines}, context=10)
    assert [m for p in passages for m in p.match_lines] == list(range(1, 501))
    assert sum(len(p.highlights) for p in passages) == 500


def test_grep_empty_match_marks_the_line_without_a_highlight() -> None:
    [p] = build_passages("a.py", {1: "abc"}, {1: [(0, 0)]}, context=2)
    assert p.match_lines == (1,) and p.highlights == ()


# ── offsets ──────────────────────────────────────────────────────────────────


def test_grep_byte_offsets_become_character_offsets_for_non_ascii() -> None:
    line = "é = '日本' + needle"
    raw = line.encode("utf-8")
    start = raw.index(b"needle")
    assert byte_to_char_span(raw, start, start + 6) == (
        line.index("needle"),
        line.index("needle") + 6,
    )
    assert byte_to_char_span(raw, raw.index("日".encode()), raw.index(b"'", 6)) == (5, 7)


def test_grep_highlights_point_at_matches_in_multiline_non_ascii_passage() -> None:
    lines = {1: "ünïcode first", 2: "naïve → 𝔘 target", 3: "end"}
    col = lines[2].index("target")
    [p] = build_passages("a.py", lines, {2: [(col, col + 6)]}, context=1)
    assert highlighted(p.text, p.highlights) == ["target"]


# ── long (minified) lines ────────────────────────────────────────────────────


def test_grep_long_match_line_keeps_every_match_and_shrinks() -> None:
    text = ("x" * 3000 + "needle") * 5
    spans = [(3000 + i * 3006, 3006 + i * 3006) for i in range(5)]
    shown, moved = elide_long_line(text, spans)
    assert len(shown) < len(text) // 10
    assert [shown[s:e] for s, e in moved] == ["needle"] * 5
    assert shown.startswith(ELLIPSIS)


def test_grep_long_context_line_is_cut_to_a_head() -> None:
    shown, moved = elide_long_line("y" * (LONG_LINE_CHARS + 1), [])
    assert shown.endswith(ELLIPSIS) and len(shown) < 300 and moved == []


def test_grep_passage_with_minified_line_keeps_highlight() -> None:
    minified = "var a=1;" * 1000 + "needle" + ";b=2" * 1000
    col = minified.index("needle")
    [p] = build_passages("app.min.js", {1: "top", 2: minified}, {2: [(col, col + 6)]}, 1)
    assert highlighted(p.text, p.highlights) == ["needle"] and len(p.text) < 400


# ── case modes ───────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("pattern", "regex", "case", "expected"),
    [
        ("foo", False, "smart", False),
        ("Foo", False, "smart", True),
        ("foo", False, "sensitive", True),
        ("Foo", False, "insensitive", False),
        (r"\S+foo\W", True, "smart", False),
        (r"\p{Lu}x(?P<Name>y)", True, "smart", False),
        (r"\S+Foo", True, "smart", True),
    ],
)
def test_grep_case_modes_smart_is_insensitive_unless_uppercase(
    pattern: str, regex: bool, case: CaseMode, expected: bool
) -> None:
    assert is_case_sensitive(pattern, regex=regex, case=case) is expected


# ── in-memory search of unsaved buffers ──────────────────────────────────────


def test_grep_overlay_literal_finds_every_occurrence_with_str_find() -> None:
    hits = matcher("ab").search("ab ab\nnone\nxab\n")
    assert hits.matches == {1: [(0, 2), (3, 5)], 3: [(1, 3)]}
    assert hits.lines == {1: "ab ab", 2: "none", 3: "xab"}


def test_grep_overlay_literal_case_insensitive_treats_regex_chars_literally() -> None:
    hits = matcher("A.B(", sensitive=False).search("a.b( and axb(\nA.B(")
    assert hits.matches == {1: [(0, 4)], 2: [(0, 4)]}


def test_grep_overlay_regex_uses_line_anchors_and_non_ascii_offsets() -> None:
    hits = matcher(r"^déf \w+$", regex=True).search("déf run\n  déf no\r\ndéf ok\r\n")
    assert sorted(hits.matches) == [1, 3]
    assert hits.lines[3] == "déf ok"


def test_grep_overlay_catastrophic_pattern_is_linear_in_re2() -> None:
    started = time.monotonic()
    hits = matcher("(a+)+$", regex=True).search("a" * 100_000 + "b")
    assert hits.matches == {} and time.monotonic() - started < 2


def test_grep_overlay_re2_rejected_pattern_falls_back_with_deadline() -> None:
    assert matcher(r"(ab)\1", regex=True).search("abab\nab").matches == {1: [(0, 4)]}
    late = TextMatcher(r"(ab)\1", regex=True, case_sensitive=True, deadline=time.monotonic() - 1)
    with pytest.raises(TimeoutError):
        late.search("abab")


def test_grep_overlay_filter_obeys_globs_git_dir_and_gitignore(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("build/\n*.log\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / ".gitignore").write_text("!keep.log\n")
    check = OverlayFilter(
        tmp_path, include=(("src/**", "*.md"),), exclude=("vendor/",), respect_gitignore=True
    )
    assert check.allows("src/a.py") and check.allows("README.md")
    assert check.allows("src/keep.log")  # a deeper .gitignore re-includes it
    assert not check.allows("src/x.log")
    assert not check.allows("other/a.py")  # not included
    assert not check.allows("src/vendor/a.py")
    assert not check.allows(".git/src/a.py")
    assert not check.allows("build/src/a.py")

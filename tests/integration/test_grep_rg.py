"""grep against the real ripgrep on generated workspaces."""

from __future__ import annotations

import stat
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from codesift.indexer.errors import QueryError
from codesift.indexer.search import grep as grep_module
from codesift.indexer.search.grep import grep
from codesift.indexer.search.passages import GrepResult, Passage
from codesift.indexer.settings import IndexSettings

from ..conftest import ran_where_file_modes_hold

SETTINGS = IndexSettings()


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def lines_with(total: int, hits: dict[int, str], filler: str = "pass") -> str:
    return "".join(f"{hits.get(n, f'{filler} {n}')}\n" for n in range(1, total + 1))


def run(root: Path, pattern: str, **options: Any) -> GrepResult:
    return grep(root, pattern, **{"index_settings": SETTINGS, **options})


def paths(result: GrepResult) -> list[str]:
    return sorted({p.path for p in result.passages})


def highlighted(p: Passage) -> list[str]:
    return [p.text[s:e] for s, e in p.highlights]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return write(
        tmp_path / "ws",
        {
            "src/auth.py": "class AuthService:\n    def validateCredentials(self):\n        pass\n",
            "src/util.py": "def helper():\n    return 'authservice lower'\n",
            "docs/guide.md": "Use AuthService to log in.\n",
        },
    )


def test_grep_literal_finds_exact_text_and_reports_workspace_relative_paths(ws: Path) -> None:
    result = run(ws, "validateCredentials(")
    assert [(p.path, p.match_lines) for p in result.passages] == [("src/auth.py", (2,))]
    assert (result.files, result.matches, result.truncated) == (1, 1, False)
    assert highlighted(result.passages[0]) == ["validateCredentials("]


def test_grep_regex_matches_and_highlights_each_submatch(ws: Path) -> None:
    result = run(ws, r"def \w+\(", regex=True)
    assert paths(result) == ["src/auth.py", "src/util.py"]
    by_path = {p.path: highlighted(p) for p in result.passages}
    assert by_path["src/auth.py"] == ["def validateCredentials("]
    assert by_path["src/util.py"] == ["def helper("]


def test_grep_case_smart_insensitive_for_lowercase_sensitive_for_uppercase(ws: Path) -> None:
    assert paths(run(ws, "authservice")) == ["docs/guide.md", "src/auth.py", "src/util.py"]
    assert paths(run(ws, "AuthService")) == ["docs/guide.md", "src/auth.py"]


def test_grep_case_sensitive_and_insensitive_modes(ws: Path) -> None:
    assert paths(run(ws, "authservice", case="sensitive")) == ["src/util.py"]
    assert len(paths(run(ws, "AUTHSERVICE", case="insensitive"))) == 3


def test_grep_passage_at_file_start_begins_at_line_one(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": lines_with(50, {3: "needle"})})
    [p] = run(tmp_path, "needle").passages
    assert (p.start_line, p.end_line, p.match_lines) == (1, 13, (3,))
    assert p.text.split("\n")[0] == "pass 1"


def test_grep_passage_at_file_end_is_clipped(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": lines_with(30, {28: "needle"})})
    [p] = run(tmp_path, "needle").passages
    assert (p.start_line, p.end_line) == (18, 30)
    assert p.text.split("\n")[-1] == "pass 30"


def test_grep_passages_merge_matches_exactly_20_lines_apart(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": lines_with(100, {30: "needle", 50: "needle"})})
    [p] = run(tmp_path, "needle").passages
    assert (p.start_line, p.end_line, p.match_lines) == (20, 60, (30, 50))
    assert len(p.text.split("\n")) == 41


def test_grep_passages_split_matches_21_lines_apart(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": lines_with(100, {30: "needle", 51: "needle"})})
    first, second = run(tmp_path, "needle").passages
    assert (first.start_line, first.end_line, first.match_lines) == (20, 40, (30,))
    assert (second.start_line, second.end_line, second.match_lines) == (41, 61, (51,))


def test_grep_never_drops_an_exact_match_500_in_one_file(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": "x = needle\n" * 500})
    result = run(tmp_path, "needle")
    assert [m for p in result.passages for m in p.match_lines] == list(range(1, 501))
    assert result.matches == 500 and not result.truncated


def test_grep_orders_by_path_then_line(tmp_path: Path) -> None:
    body = lines_with(80, {5: "needle", 60: "needle"})
    write(tmp_path, {name: body for name in ("b.py", "a/z.py", "a.py", "c/d/e.py")})
    result = run(tmp_path, "needle")
    assert [(p.path, p.match_lines) for p in result.passages] == [
        (path, (line,)) for path in ("a.py", "a/z.py", "b.py", "c/d/e.py") for line in (5, 60)
    ]


def test_grep_invalid_regex_raises_query_error_quoting_ripgrep(ws: Path) -> None:
    with pytest.raises(QueryError, match=r"invalid regex 'foo\(': unclosed group"):
        run(ws, "foo(", regex=True)


def test_grep_same_text_as_literal_is_not_a_regex(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": "call foo( here\n"})
    assert run(tmp_path, "foo(").matches == 1


def test_grep_empty_pattern_is_a_query_error(ws: Path) -> None:
    with pytest.raises(QueryError, match="empty pattern"):
        run(ws, "")


def test_grep_no_match_is_an_empty_result_not_an_error(ws: Path) -> None:
    result = run(ws, "zzz_not_there")
    assert (result.passages, result.files, result.matches, result.truncated) == ((), 0, 0, False)


def test_grep_catastrophic_pattern_returns_fast(tmp_path: Path) -> None:
    write(tmp_path, {"a.txt": "a" * 200_000 + "b\n"})
    started = time.monotonic()
    result = run(tmp_path, "(a+)+$", regex=True, overlay={"b.txt": "a" * 200_000 + "!"})
    assert time.monotonic() - started < 2.0
    assert result.matches == 0


def test_grep_pattern_matching_every_line_is_capped_by_max_matches(tmp_path: Path) -> None:
    write(tmp_path, {f"f{i}.txt": "same\n" * 100 for i in range(20)})
    result = run(tmp_path, "same", max_matches=250)
    assert result.matches == 250 == sum(len(p.match_lines) for p in result.passages)
    assert result.truncated and "max_matches" in result.reason


def test_grep_timeout_kills_ripgrep_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    slow = tmp_path / "slow-rg"
    slow.write_text("#!/bin/sh\nexec sleep 30\n")
    slow.chmod(slow.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(grep_module, "find_rg", lambda: str(slow))
    started = time.monotonic()
    result = run(tmp_path, "anything", timeout_s=0.3)
    assert time.monotonic() - started < 5
    assert result.truncated and "timed out" in result.reason


def test_grep_respects_gitignore_outside_a_git_repo(tmp_path: Path) -> None:
    write(
        tmp_path,
        {".gitignore": "build/\n*.gen.py\n", "build/out.py": "needle\n", "x.gen.py": "needle\n"},
    )
    write(tmp_path, {"src/keep.py": "needle\n"})
    assert not (tmp_path / ".git").exists()
    assert paths(run(tmp_path, "needle")) == ["src/keep.py"]


def test_grep_respects_gitignore_in_a_git_repo(tmp_path: Path) -> None:
    write(tmp_path, {".gitignore": "secret.txt\n", "secret.txt": "needle\n", "a.py": "needle\n"})
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert paths(run(tmp_path, "needle")) == ["a.py"]
    off = IndexSettings(respect_gitignore=False)
    assert paths(run(tmp_path, "needle", index_settings=off)) == ["a.py", "secret.txt"]


def test_grep_searches_hidden_dirs_but_never_dot_git(tmp_path: Path) -> None:
    write(tmp_path, {".github/workflows/ci.yml": "needle\n", "a.py": "needle\n"})
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".git" / "needle-notes").write_text("needle\n")
    assert paths(run(tmp_path, "needle")) == [".github/workflows/ci.yml", "a.py"]


def test_grep_index_exclude_and_call_exclude_globs(tmp_path: Path) -> None:
    files = {
        "node_modules/lib/x.js": "needle\n",
        "app.min.js": "needle\n",
        "src/a.py": "needle\n",
        "src/gen/b.py": "needle\n",
    }
    write(tmp_path, files)
    assert paths(run(tmp_path, "needle")) == ["src/a.py", "src/gen/b.py"]
    assert paths(run(tmp_path, "needle", exclude=["gen/"])) == ["src/a.py"]


def test_grep_include_globs_from_call_and_index_both_apply(tmp_path: Path) -> None:
    write(tmp_path, {"src/a.py": "needle\n", "src/b.js": "needle\n", "tests/t.py": "needle\n"})
    assert paths(run(tmp_path, "needle", include=["*.py"])) == ["src/a.py", "tests/t.py"]
    only_src = IndexSettings(include=("src/**",))
    assert paths(run(tmp_path, "needle", index_settings=only_src)) == ["src/a.py", "src/b.js"]
    both = run(tmp_path, "needle", index_settings=only_src, include=["*.py"])
    assert paths(both) == ["src/a.py"]


def test_grep_skips_binary_and_too_large_files(tmp_path: Path) -> None:
    write(tmp_path, {"big.txt": "needle\n" + "x" * 5000, "ok.txt": "needle\n"})
    (tmp_path / "blob.bin").write_bytes(b"needle\n\x00\x01needle\n")
    small = IndexSettings(max_file_bytes=1000)
    assert paths(run(tmp_path, "needle", index_settings=small)) == ["ok.txt"]


def test_grep_overlay_replaces_disk_copy_and_finds_unsaved_function(tmp_path: Path) -> None:
    write(tmp_path, {"src/a.py": "def old_name():\n    pass\n", "src/b.py": "old_name()\n"})
    overlay = {"src/a.py": "def old_name():\n    pass\n\n\ndef brand_new_function():\n    pass\n"}
    result = run(tmp_path, "brand_new_function", overlay=overlay)
    assert [(p.path, p.match_lines) for p in result.passages] == [("src/a.py", (5,))]
    unsaved = {"src/a.py": "def renamed():\n    pass\n"}
    assert paths(run(tmp_path, "old_name", overlay=unsaved)) == ["src/b.py"]


def test_grep_overlay_of_new_unsaved_file(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": "x = 1\n"})
    result = run(tmp_path, r"def \w+_draft", regex=True, overlay={"new/mod.py": "def my_draft():"})
    assert [(p.path, highlighted(p)) for p in result.passages] == [("new/mod.py", ["def my_draft"])]


def test_grep_overlay_paths_obey_include_exclude_and_gitignore(tmp_path: Path) -> None:
    write(tmp_path, {".gitignore": "build/\n", "keep.py": "x\n"})
    overlay = {
        "build/gen.py": "needle",
        "node_modules/m.js": "needle",
        "src/a.py": "needle",
        "src/a.js": "needle",
        "skip/c.py": "needle",
    }
    result = run(tmp_path, "needle", overlay=overlay, include=["*.py"], exclude=["skip/"])
    assert paths(result) == ["src/a.py"]


def test_grep_non_ascii_highlight_offsets_are_characters(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": "# ünïcødé → 日本語\nname = 'Ζεύς'  # naïve needle ✓ needle\n"})
    [p] = run(tmp_path, "needle", context=1).passages
    assert highlighted(p) == ["needle", "needle"]
    [q] = run(tmp_path, "ζεύς", context=0).passages
    assert highlighted(q) == ["Ζεύς"]


def test_grep_minified_line_keeps_its_matches_but_not_its_bulk(tmp_path: Path) -> None:
    minified = ";".join(f"var v{i}=1" for i in range(20_000))
    minified = minified[:50_000] + "needle" + minified[50_000:]
    write(tmp_path, {"bundle.js": minified + "\n"})
    [p] = run(tmp_path, "needle").passages
    assert highlighted(p) == ["needle"] and len(p.text) < 1000


def test_grep_unreadable_file_keeps_other_results(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if ran_where_file_modes_hold(request, tmp_path):
        return
    write(tmp_path, {"a.py": "needle\n", "b.py": "needle\n"})
    (tmp_path / "b.py").chmod(0)
    try:
        assert paths(run(tmp_path, "needle")) == ["a.py"]
    finally:
        (tmp_path / "b.py").chmod(0o644)


def test_grep_non_utf8_file_lines_decode_with_character_offsets(tmp_path: Path) -> None:
    (tmp_path / "latin1.txt").write_bytes("café déjà needle\n".encode("latin-1"))
    [p] = run(tmp_path, "needle").passages
    assert highlighted(p) == ["needle"]
    assert p.text.startswith("caf\ufffd")


@pytest.mark.parametrize("dense_line_bytes", [0, 10**9], ids=["windows", "whole-file"])
def test_grep_context_lines_equal_ripgreps_own_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dense_line_bytes: int
) -> None:
    """Context is read from the file by byte offset, not asked of ripgrep: CRLF, empty
    lines, invalid UTF-8, no final newline, matches at both ends and byte-order marks
    must come out as ``rg --context`` prints them, whether a file's windows are cut
    one by one or from the whole file decoded once."""
    import json

    monkeypatch.setattr(grep_module, "DENSE_LINE_BYTES", dense_line_bytes)

    bodies = {
        "crlf.py": b"".join(b"line %d\r\n" % i for i in range(1, 40)).replace(b"line 20", b"needle 20"),
        "edges.py": b"needle first\n" + b"\n" * 5 + b"mid\xff\xfe bytes\n" * 30 + b"needle last",
        "final_nl.py": b"a\nb\nneedle\nc\n\n",
        # ripgrep drops a UTF-8 BOM and reads UTF-16 with a BOM as UTF-8: its offsets
        # count those bytes (a passage once cut line 1 short and repeated line 2)
        "bom8.py": "\ufeff# coding: x -*-\n# needle here\nlast\n".encode(),
        "bom16.txt": "\ufeffone\ntwo needle\nthree\n".encode("utf-16-le"),
    }
    for name, body in bodies.items():
        (tmp_path / name).write_bytes(body)
    ours: dict[tuple[str, int], str] = {}
    for p in run(tmp_path, "needle").passages:
        for i, text in enumerate(p.text.split("\n")):
            ours[(p.path, p.start_line + i)] = text
    rg = subprocess.run(
        [grep_module.find_rg(), "--json", "--context", "10", "--fixed-strings", "needle", "."],
        cwd=tmp_path,
        capture_output=True,
        check=True,
    )
    theirs: dict[tuple[str, int], str] = {}
    for raw in rg.stdout.splitlines():
        msg = json.loads(raw)
        if msg["type"] in ("match", "context"):
            data = msg["data"]
            lines = data["lines"]
            text = lines["text"] if "text" in lines else base64_text(lines["bytes"])
            theirs[(data["path"]["text"].removeprefix("./"), data["line_number"])] = text.removesuffix(
                "\n"
            ).removesuffix("\r")
    assert ours == theirs


def base64_text(encoded: str) -> str:
    import base64

    return base64.b64decode(encoded).decode("utf-8", "replace")

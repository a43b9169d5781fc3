"""The parse step: syntax-aware chunks, splitting, merging, coverage, fallbacks."""

from __future__ import annotations

import threading
import typing

import pytest
from tree_sitter_language_pack import SupportedLanguage

from codesift.indexer import parse as parse_module
from codesift.indexer.model import ChunkKind, ParseResult, SymbolKind, chunk_id, embedding_text, text_hash
from codesift.indexer.parse import parse_file
from codesift.indexer.settings import ChunkSettings
from codesift.indexer.text import search_text

DEFAULTS = ChunkSettings()


def parse(source: str, language: str = "python", settings: ChunkSettings = DEFAULTS) -> ParseResult:
    return parse_file("pkg/mod.py", source, language, project="demo", settings=settings)


def uncovered_lines(source: str, result: ParseResult) -> list[int]:
    covered: set[int] = set()
    for chunk in result.chunks:
        covered.update(range(chunk.start_line, chunk.end_line + 1))
    lines = source.split("\n")
    return [n for n, line in enumerate(lines, 1) if line.strip() and n not in covered]


def big_function(name: str, statements: int, indent: str = "    ") -> list[str]:
    return [f"{indent}def {name}(x):", f'{indent}    """Adds up."""'] + [
        f"{indent}    x = x + {i}" for i in range(statements)
    ]


MIXED = """\
\"\"\"Module doc.\"\"\"

import os
import sys

LIMIT = 10


# Helpers below.
def helper(a, b):
    total = a + b
    total *= 2
    total -= 1
    return total


class Store:
    \"\"\"Keeps things.\"\"\"

    def get(self, key):
        return key

    def put(self, key, value):
        self.items[key] = value


if __name__ == "__main__":
    helper(1, 2)
"""


def test_chunks_carry_ids_hashes_and_the_exact_lines() -> None:
    result = parse(MIXED)
    lines = MIXED.split("\n")
    assert result.language == "python" and not result.had_errors
    for chunk in result.chunks:
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
        assert chunk.content_hash == text_hash(embedding_text(chunk.path, chunk.text))
        assert chunk.id == chunk_id(
            "demo", "pkg/mod.py", chunk.start_line, chunk.end_line, chunk.content_hash
        )
        assert chunk.search_text == search_text(chunk.text)
        assert (chunk.path, chunk.project, chunk.language) == ("pkg/mod.py", "demo", "python")


def test_definitions_and_top_level_blocks_become_chunks() -> None:
    result = parse(MIXED)
    assert [(c.kind, c.start_line, c.end_line, c.symbol) for c in result.chunks] == [
        (ChunkKind.BLOCK, 1, 6, ""),
        (ChunkKind.FUNCTION, 9, 14, "helper"),  # its leading comment belongs to it
        (ChunkKind.CLASS, 17, 24, "Store"),  # small class: one chunk with its methods
        (ChunkKind.BLOCK, 27, 28, ""),
    ]
    holder = {s.qualified_name: s.chunk_id for s in result.symbols}
    store_chunk = result.chunks[2].id
    assert holder["Store"] == holder["Store.get"] == holder["Store.put"] == store_chunk


def test_every_non_blank_line_is_covered() -> None:
    source = "\n".join(
        [
            *["import os", "", "X = 1"],
            *big_function("one", 150, indent=""),
            *["", "class Big:", "    '''Doc.'''", "    FIELD = 1", ""],
            *big_function("method_a", 60),
            "    OTHER = 2",
            *big_function("method_b", 3),
            *["", "", "print(X)", "   ", "# trailing comment"],
        ]
    )
    for settings in (DEFAULTS, ChunkSettings(max_lines=7, min_lines=3, max_chars=120)):
        result = parse(source, settings=settings)
        assert uncovered_lines(source, result) == []
        for chunk in result.chunks:
            assert chunk.text.strip()
            assert len(chunk.text) <= settings.max_chars


def test_large_function_is_split_on_statements_keeping_its_symbol() -> None:
    source = "\n".join(["import os", "", *big_function("compute", 200, indent="")]) + "\n"
    result = parse(source)
    pieces = [c for c in result.chunks if c.symbol == "compute"]
    assert len(pieces) == 3
    assert all(c.kind is ChunkKind.FUNCTION for c in pieces)
    assert all(c.end_line - c.start_line + 1 <= DEFAULTS.max_lines for c in pieces)
    assert [c.start_line for c in pieces] == [3, 3 + 80, 3 + 160]
    assert pieces[-1].end_line == 204
    (symbol,) = result.symbols
    assert symbol.chunk_id == pieces[0].id
    assert symbol.range.start.line == 3 and symbol.range.end.line == 204


def test_split_follows_nested_statements_when_one_statement_is_too_long() -> None:
    body = ["def run(flag):", "    if flag:"] + [f"        a{i} = {i}" for i in range(150)]
    body += ["    return flag"]
    result = parse("\n".join(body) + "\n", settings=ChunkSettings(max_lines=50))
    assert [c.symbol for c in result.chunks] == ["run"] * len(result.chunks)
    # 50 + 50 + 50, and the 3-line tail (< min_lines) joins the last piece
    assert [(c.start_line, c.end_line) for c in result.chunks] == [(1, 50), (51, 100), (101, 153)]
    assert uncovered_lines("\n".join(body), result) == []


def test_large_class_is_split_into_header_and_method_chunks() -> None:
    lines = [
        "import os",
        "",
        "",
        "@register",
        "class Engine(Base):",
        '    """Runs."""',
        "    SPEED = 1",
        "",
    ]
    for name in ("start", "stop", "reset"):
        lines += [*big_function(name, 30), ""]
    lines += ["    LAST = 2"]
    result = parse("\n".join(lines) + "\n")
    got = [(c.kind, c.start_line, c.end_line, c.symbol) for c in result.chunks]
    assert got == [
        (ChunkKind.BLOCK, 1, 1, ""),
        (ChunkKind.CLASS, 4, 7, "Engine"),  # decorator, header, docstring, fields
        (ChunkKind.METHOD, 9, 40, "Engine.start"),
        (ChunkKind.METHOD, 42, 73, "Engine.stop"),
        (ChunkKind.METHOD, 75, 108, "Engine.reset"),  # the tiny trailing field joins it
    ]
    texts = [c.text for c in result.chunks]
    assert sum(text.count("def start") for text in texts) == 1  # no duplicated methods


def test_large_braced_class_keeps_its_closing_brace_with_the_last_method() -> None:
    lines = ["package p;", "", "public class Big {", "    private int a;", ""]
    for m in range(3):
        lines += [f"    // method {m}", f"    public int m{m}(int x) {{"]
        lines += [f"        x += {i};" for i in range(25)] + ["        return x;", "    }", ""]
    lines += ["}"]
    source = "\n".join(lines) + "\n"
    result = parse_file("Big.java", source, "java", project="demo", settings=DEFAULTS)
    assert [(c.kind, c.start_line, c.end_line, c.symbol) for c in result.chunks] == [
        (ChunkKind.BLOCK, 1, 1, ""),
        (ChunkKind.CLASS, 3, 4, "Big"),
        (ChunkKind.METHOD, 6, 34, "Big.m0"),
        (ChunkKind.METHOD, 36, 64, "Big.m1"),
        (ChunkKind.METHOD, 66, 96, "Big.m2"),  # with the class's closing brace
    ]
    assert uncovered_lines(source, result) == []


def test_tiny_neighbour_functions_merge_and_keep_the_first_symbol() -> None:
    source = "def a():\n    return 1\n\ndef b():\n    return 2\n\n\ndef c():\n    return 3\n"
    result = parse(source)
    assert [(c.kind, c.start_line, c.end_line, c.symbol) for c in result.chunks] == [
        (ChunkKind.FUNCTION, 1, 5, "a"),  # a + b reach min_lines: c stays apart
        (ChunkKind.FUNCTION, 8, 9, "c"),
    ]
    ids = {s.name: s.chunk_id for s in result.symbols}
    assert ids["a"] == ids["b"] == result.chunks[0].id
    assert ids["c"] == result.chunks[1].id


def test_tiny_neighbours_of_different_kinds_do_not_merge() -> None:
    source = "import os\n\ndef a():\n    pass\n\nclass B:\n    pass\n"
    result = parse(source)
    assert [c.kind for c in result.chunks] == [
        ChunkKind.BLOCK,
        ChunkKind.FUNCTION,
        ChunkKind.CLASS,
    ]


def test_tiny_blocks_merge_after_a_long_block_is_split() -> None:
    source = "\n".join(f"V{i} = {i}" for i in range(12)) + "\n"
    result = parse(source, settings=ChunkSettings(max_lines=5, min_lines=3))
    # 12 statements → 5 + 5 + 2; the 2-line tail merges only while ≤ max_lines
    assert [(c.start_line, c.end_line) for c in result.chunks] == [(1, 5), (6, 10), (11, 12)]
    result = parse(source, settings=ChunkSettings(max_lines=6, min_lines=3))
    assert [(c.start_line, c.end_line) for c in result.chunks] == [(1, 6), (7, 12)]
    assert all(c.kind is ChunkKind.BLOCK and c.symbol == "" for c in result.chunks)


def test_leading_comments_and_decorators_belong_to_the_definition() -> None:
    source = "x = 1\n\n# Explains f.\n# More.\n@cache\n@trace\ndef f():\n    return 1\n"
    result = parse(source, settings=ChunkSettings(min_lines=1))
    f_chunk = result.chunks[-1]
    assert (f_chunk.kind, f_chunk.start_line, f_chunk.end_line) == (ChunkKind.FUNCTION, 3, 8)
    (_, f_symbol) = result.symbols
    assert f_symbol.range.start.line == 5  # the range starts at the decorators


def test_comment_after_a_blank_line_stays_with_the_block() -> None:
    source = "x = 1\n# about x\n\ndef f():\n    return 1\n"
    result = parse(source, settings=ChunkSettings(min_lines=1))
    assert [(c.start_line, c.end_line) for c in result.chunks] == [(1, 2), (4, 5)]


def test_broken_syntax_still_yields_chunks() -> None:
    source = "def ok():\n    return 1\n\ndef broken(:\n    x = = 2\n\nclass Fine:\n    pass\n"
    result = parse(source)
    assert result.had_errors
    assert result.chunks
    assert uncovered_lines(source, result) == []
    assert "ok" in {s.name for s in result.symbols}


@pytest.mark.parametrize("language", ["python", "go", "java", "typescript", "rust"])
def test_garbage_in_any_grammar_never_raises(language: str) -> None:
    source = "}{ ))) def class fn func <<< \x00 \udcff 😀 ünï\n" * 20
    result = parse(source, language)
    assert uncovered_lines(source, result) == []


def test_unknown_language_gives_line_windows() -> None:
    source = "\n".join(f"line {i}" for i in range(1, 121)) + "\n"
    result = parse(source, language="")
    assert [(c.kind, c.start_line, c.end_line, c.symbol) for c in result.chunks] == [
        (ChunkKind.WINDOW, 1, 50, ""),
        (ChunkKind.WINDOW, 51, 100, ""),
        (ChunkKind.WINDOW, 101, 120, ""),
    ]
    assert result.symbols == () and not result.had_errors


def test_language_without_a_grammar_falls_back_to_windows() -> None:
    result = parse("a\nb\n", language="no-such-grammar")
    assert [(c.kind, c.start_line, c.end_line) for c in result.chunks] == [(ChunkKind.WINDOW, 1, 2)]
    assert result.language == "no-such-grammar"


def test_a_failing_parse_falls_back_to_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(*args: object, **kwargs: object) -> ParseResult:
        raise RuntimeError("grammar bug")

    monkeypatch.setattr(parse_module._FileParse, "run", explode)
    result = parse(MIXED)
    assert result.chunks and all(c.kind is ChunkKind.WINDOW for c in result.chunks)
    assert uncovered_lines(MIXED, result) == []


def test_non_ascii_columns_are_code_points() -> None:
    source = "ÉTAT = 'été'\n\nclass Ünïcode:\n    def méthode(self): return '😀'\n"
    result = parse(source)
    spans = {
        s.name: (
            s.selection_range.start.line,
            s.selection_range.start.column,
            s.selection_range.end.column,
        )
        for s in result.symbols
    }
    assert spans == {"ÉTAT": (1, 0, 4), "Ünïcode": (3, 6, 13), "méthode": (4, 8, 15)}
    method = next(s for s in result.symbols if s.name == "méthode")
    assert method.range.end.column == len("    def méthode(self): return '😀'")


def test_empty_file_gives_no_chunks_and_no_error() -> None:
    for source in ("", "\n\n", "   \n\t\n"):
        assert parse(source) == ParseResult("python", (), (), False)
        assert parse(source, language="").chunks == ()


def test_no_chunk_is_longer_than_max_chars() -> None:
    long_line = "x = '" + "a" * 250 + "'"
    source = "def f():\n" + "\n".join(f"    y{i} = {i}" for i in range(30)) + "\n" + long_line + "\n"
    settings = ChunkSettings(max_chars=100)
    result = parse(source, settings=settings)
    assert all(len(c.text) <= 100 for c in result.chunks)
    assert uncovered_lines(source, result) == []
    sliced = [c for c in result.chunks if c.start_line == c.end_line == 32]
    assert "".join(c.text for c in sliced) == long_line  # one overlong line, cut in slices


def test_crlf_lines_keep_their_text() -> None:
    source = "def f():\r\n    return 1\r\n"
    (chunk,) = parse(source).chunks
    assert chunk.text == "def f():\r\n    return 1\r"
    assert (chunk.start_line, chunk.end_line) == (1, 2)


def test_search_text_equals_the_text_module() -> None:
    samples = [
        MIXED,
        "validateCredentials HTTPServer_v2 __init__ _ __ x1y2 ünïcode Straße",
        "ABéCd fooébar 日本 a\u00a0bC\tD—E\u2028F x\ud800Y ABC",
    ]
    for sample in samples:
        assert parse_module._search_text(sample) == search_text(sample)


def test_parsing_from_many_threads_gives_the_same_result() -> None:
    expected = parse(MIXED)
    results: list[ParseResult] = []

    def work() -> None:
        for _ in range(20):
            results.append(parse(MIXED))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 80 and all(r == expected for r in results)


def test_every_grammar_in_the_pack_chunks_text_without_losing_lines() -> None:
    source = MIXED + "\nfunction f() { return [1, 2]; }\n<div class='x'>ünï 😀</div>\n"
    settings = ChunkSettings(max_lines=8, min_lines=3)
    languages = typing.get_args(SupportedLanguage)
    assert len(languages) >= 170
    for language in languages:
        result = parse(source, language, settings)
        assert result.chunks, language
        assert uncovered_lines(source, result) == [], language
        for symbol in result.symbols:
            assert symbol.kind in SymbolKind and symbol.name


# ----- chunk ids are unique by construction, whatever the content -----------------------

BAD_CONTENT = {
    "a 30,000-character line of one letter": ("python", 'X = "' + "a" * 30_000 + '"\n'),
    "repeated text sliced from one line": ("", "abc " * 20_000 + "\n"),
    "10k-deep nested if (x) { in C on one line": (
        "c",
        "void f() {" + "if (x) {" * 10_000 + "}" * 10_000 + "}\n",
    ),
    "10k-deep nested if (x) { in C, never closed": ("c", "if (x) {" * 10_000),
    "10k-deep nested if (x) { in JavaScript": ("javascript", "if (x) {" * 10_000 + "\n"),
    "10k-deep nested if (x) { in JavaScript, one a line": (
        "javascript",
        "if (x) {\n" * 10_000 + "}\n" * 10_000,
    ),
}


@pytest.mark.parametrize("what", sorted(BAD_CONTENT))
def test_chunk_ids_are_unique_for_repeated_and_deeply_nested_content(what: str) -> None:
    language, source = BAD_CONTENT[what]
    result = parse(source, language)
    ids = [c.id for c in result.chunks]
    assert len(ids) > 1
    assert len(set(ids)) == len(ids)
    assert parse(source, language).chunks == result.chunks  # still stable: same text, same ids


def test_the_first_piece_of_a_repeated_text_keeps_its_plain_id() -> None:
    result = parse('X = "' + "a" * 30_000 + '"\n')
    first = result.chunks[0]
    assert first.id == chunk_id("demo", "pkg/mod.py", first.start_line, first.end_line, first.content_hash)

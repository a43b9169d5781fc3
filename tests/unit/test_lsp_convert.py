"""The engine ↔ protocol translation: names, settings, arguments, positions (no server process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from codesift.indexer.errors import ConfigError, IndexBusyError, QueryError, StoreError
from codesift.indexer.model import ChunkKind, Position, Span, Symbol, SymbolKind
from codesift.indexer.progress import Progress
from codesift.indexer.search.passages import Passage
from codesift.indexer.search.results import Filters, SearchRequest
from codesift.indexer.settings import load_settings
from codesift.server import convert


def test_camel_and_snake_round_trip() -> None:
    assert convert.snake("semanticWeight") == "semantic_weight"
    assert convert.snake("max_file_bytes") == "max_file_bytes"
    assert convert.camel("vector_score_threshold") == "vectorScoreThreshold"


def test_initialization_options_become_snake_case_settings(tmp_path: Path) -> None:
    overrides = convert.settings_overrides({"search": {"semanticWeight": 0.9}, "index": {"maxFileBytes": 10}})
    settings = load_settings(tmp_path, overrides)
    assert settings.search.semantic_weight == 0.9 and settings.index.max_file_bytes == 10


@pytest.mark.parametrize("options", [[1], {"search": 3}, "x"])
def test_malformed_options_raise_config_error(options: object) -> None:
    with pytest.raises(ConfigError):
        convert.settings_overrides(options)


def test_search_arguments_structure_into_a_search_request() -> None:
    request = convert.structure(
        SearchRequest,
        {
            "query": "login",
            "mode": "bm25",
            "exactKeywords": "login",
            "limit": 3,
            "semanticWeight": 1,
            "filters": {"include": "src/**", "kinds": ["method"], "projects": ["ws"]},
        },
    )
    assert request == SearchRequest(
        query="login",
        mode="bm25",
        exact_keywords="login",
        limit=3,
        semantic_weight=1.0,
        filters=Filters(include=("src/**",), kinds=(ChunkKind.METHOD,), projects=("ws",)),
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ({}, "'query' is required"),
        ({"query": 1}, "must be a string"),
        ({"query": "x", "mode": "fuzzy"}, "must be one of"),
        ({"query": "x", "limit": True}, "must be an integer"),
        ({"query": "x", "filters": {"kinds": ["lambda"]}}, "must be one of"),
        ({"query": "x", "colour": "red"}, "unknown option 'colour'"),
        ("x", "must be an object"),
    ],
)
def test_bad_search_arguments_raise_invalid_params_naming_the_key(args: object, says: str) -> None:
    with pytest.raises(JsonRpcInvalidParams, match=says):
        convert.structure(SearchRequest, args)


def test_engine_errors_map_in_one_place() -> None:
    with pytest.raises(JsonRpcInvalidParams), convert.engine_errors():
        raise QueryError("bad regex")
    with pytest.raises(JsonRpcException) as busy, convert.engine_errors():
        raise IndexBusyError("busy")
    assert busy.value.code == convert.INDEX_BUSY
    with pytest.raises(JsonRpcException) as failed, convert.engine_errors():
        raise StoreError("disk full")
    assert failed.value.code == convert.REQUEST_FAILED and "disk full" in failed.value.message


@pytest.mark.parametrize(
    ("encoding", "expected"),
    [
        (lsp.PositionEncodingKind.Utf16, 4),  # 😀 is a surrogate pair
        (lsp.PositionEncodingKind.Utf8, 6),  # 😀 is four bytes
        (lsp.PositionEncodingKind.Utf32, 3),
    ],
)
def test_columns_convert_to_the_negotiated_encoding(encoding: str, expected: int) -> None:
    assert convert.client_column("a😀b = 1", 3, encoding) == expected
    assert convert.client_column("abc = 1", 3, encoding) == 3


def test_spans_become_zero_based_ranges() -> None:
    span = Span(Position(2, 4), Position(2, 9))
    rng = convert.to_range(span, "a.py", lambda _p, _n: "x😀  hello", lsp.PositionEncodingKind.Utf16)
    assert rng == lsp.Range(lsp.Position(1, 5), lsp.Position(1, 10))


def test_grep_passage_matches_become_locations(tmp_path: Path) -> None:
    text = "before\nx = '😀'; needle = 1\nafter"
    start = text.index("needle")
    passage = Passage("a.py", 9, 11, (10,), text, ((start, start + 6),))
    result = convert._passage_json(tmp_path, passage, lsp.PositionEncodingKind.Utf16)
    (match,) = result["matches"]  # type: ignore[misc]
    assert isinstance(match, lsp.Location) and match.uri == (tmp_path / "a.py").as_uri()
    assert match.range == lsp.Range(lsp.Position(9, 10), lsp.Position(9, 16))


def test_progress_maps_text_phase_to_the_first_half_and_vectors_to_the_second() -> None:
    assert convert.progress_report(Progress("parse", 5, 10), "ws").percentage == 26
    copying = convert.progress_report(Progress("remote", 40, 80), "ws")
    assert copying.percentage == 1 and copying.message == "ws: remote 40/80 files copied"
    embed = convert.progress_report(Progress("embed", 10, 10), "ws")
    assert embed.percentage == 98 and embed.message == "ws: embed 10/10 chunks"


def test_line_cache_converts_only_files_that_are_not_ascii(tmp_path: Path) -> None:
    from codesift.server.projects import LineCache

    (tmp_path / "plain.py").write_text("def f():\n    return 1\n")
    (tmp_path / "emoji.py").write_text('x = "😀"; y = 2\n', encoding="utf-8")
    lines = LineCache(tmp_path, {})
    # An ASCII file: no line is kept, every column is the same in every encoding.
    assert lines.line("plain.py", 2) is None
    span = Span(Position(2, 4), Position(2, 10))
    assert convert.to_range(span, "plain.py", lines.line, "utf-16").start.character == 4
    # A line with an astral character: its UTF-16 columns move by one after it.
    assert lines.line("emoji.py", 1) == 'x = "😀"; y = 2'
    after = Span(Position(1, 9), Position(1, 10))  # `y`, code-point column 9
    got = convert.to_range(after, "emoji.py", lines.line, "utf-16")
    assert (got.start.character, got.end.character) == (10, 11)
    assert convert.to_range(after, "emoji.py", lines.line, "utf-32").start.character == 9
    # Unsaved text wins over the disk, ASCII or not.
    lines = LineCache(tmp_path, {"plain.py": 'z = "😀"; w = 3\n'})
    assert convert.to_range(after, "plain.py", lines.line, "utf-16").start.character == 10


def test_line_cache_answers_every_line_as_the_decoded_file_split_on_newlines(tmp_path: Path) -> None:
    from codesift.server.projects import LineCache

    files = {
        "a.py": 'x = "é"\r\n\ny = "😀"\n',  # CRLF, an empty line, a trailing newline
        "b.py": "# ünïcode\nlast line without a newline",
    }
    for name, text in files.items():
        (tmp_path / name).write_bytes(text.encode("utf-8"))
    (tmp_path / "bad.py").write_bytes(b"ok \xe9\nbroken \xf0\x9f\n\xff tail")  # not UTF-8
    lines = LineCache(tmp_path, {})
    for name in (*files, "bad.py"):
        expected = (tmp_path / name).read_bytes().decode("utf-8", "replace").split("\n")
        got = [lines.line(name, i) for i in range(1, len(expected) + 1)]
        assert got == expected
        assert lines.line(name, 0) is None and lines.line(name, len(expected) + 1) is None
    assert lines.line("missing.py", 1) is None


def _sym(name: str, path: str, at: tuple[int, int], to: tuple[int, int], container: str = "") -> Symbol:
    span = Span(Position(*at), Position(*to))
    return Symbol(name, name, SymbolKind.FUNCTION, path, "python", span, span, container, "c")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
def test_workspace_symbols_json_is_the_text_pygls_writes_for_the_lsp_objects(
    tmp_path: Path, encoding: str
) -> None:
    from codesift.server.lsp import create_server
    from codesift.server.projects import LineCache

    (tmp_path / "plain.py").write_text("def f():\n    return 1\n")
    wide = 'x = "😀"; def g(): pass\nclass Ça:\n    def é(self): pass\n'
    (tmp_path / "wide é.py").write_text(wide, encoding="utf-8")
    lines = LineCache(tmp_path, {"open.py": 'y = "ü"; def h(): pass\n'})
    symbols = [
        _sym("f", "plain.py", (1, 4), (1, 5)),
        _sym("g", "wide é.py", (1, 13), (1, 14)),
        _sym("Ça", "wide é.py", (2, 6), (2, 8)),
        _sym("é", "wide é.py", (3, 8), (3, 9), container="Ça"),
        _sym("span", "wide é.py", (1, 9), (3, 9), container="Ça"),  # a selection over several lines
        _sym('q"uote\\', "open.py", (1, 13), (1, 14)),  # an unsaved buffer
        _sym("gone", "missing.py", (4, 2), (4, 6)),
    ]
    expected = create_server().protocol.serialize(
        [convert.workspace_symbol(tmp_path, s, lines.line, encoding) for s in symbols]
    )
    got = json.dumps(convert.workspace_symbols_json(tmp_path, symbols, lines.reader(), encoding))
    assert got == expected.text


def test_a_line_reader_looks_each_file_up_once_for_one_answer(tmp_path: Path) -> None:
    from codesift.server.projects import LineCache

    (tmp_path / "a.py").write_text("é = 1\nb = 2\n", encoding="utf-8")
    cache = LineCache(tmp_path, {"open.py": "ü\nv"})
    read = cache.reader()
    assert [read("a.py", n) for n in (1, 2, 3)] == [cache.line("a.py", n) for n in (1, 2, 3)]
    assert [read("open.py", n) for n in (0, 1, 2, 3)] == [None, "ü", "v", None]
    (tmp_path / "a.py").write_text("ä = 10\n", encoding="utf-8")  # changed while the answer is built
    assert read("a.py", 1) == "é = 1"  # one answer sees one version of each file
    assert cache.reader()("a.py", 1) == "ä = 10"  # the next answer sees the new one


def test_line_cache_keeps_at_most_its_byte_budget_of_lines_and_answers_the_same_after(
    tmp_path: Path,
) -> None:
    from codesift.server.projects import LineCache

    # eight non-ASCII files of ~2 KB each; a budget for about three of them
    for i in range(8):
        (tmp_path / f"f{i}.py").write_text(
            "".join(f"s{i}_{n} = 'é{n}'\n" for n in range(150)), encoding="utf-8"
        )
    lines = LineCache(tmp_path, {}, max_bytes=8_000)
    for round_ in range(2):  # the second round reads again what the budget let go
        for i in range(8):
            assert lines.line(f"f{i}.py", 100) == f"s{i}_99 = 'é99'"
            assert lines.held_bytes <= 8_000, round_
    assert lines.held_bytes > 0
    # one file larger than the budget is still kept (alone) while it is asked for
    (tmp_path / "big.py").write_text("ü = 1\n" * 5_000, encoding="utf-8")
    assert lines.line("big.py", 4_000) == "ü = 1"
    assert lines.held_bytes > 8_000
    assert lines.line("f0.py", 1) == "s0_0 = 'é0'"
    assert lines.held_bytes <= 8_000

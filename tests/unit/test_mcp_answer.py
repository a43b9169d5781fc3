"""MCP answers: the summary states its own length, blocks fit the budget, the last line says what is left."""

from __future__ import annotations

import typing

from codesift.indexer.errors import IndexMissingError, QueryError
from codesift.indexer.files import FileAccessError, FileErrorCode
from codesift.indexer.model import ChunkKind
from codesift.server.mcp_answer import Block, Page, compose, fit_blocks, more_line, numbered, page_answer
from codesift.server.mcp_base import ChunkKindName, error_line


def block(n: int, lines: int = 5, width: int = 60) -> Block:
    return Block(
        f"--- {n}. src/f{n}.py:1-{lines}",
        numbered("\n".join("x" * width for _ in range(lines)), 1),
        f"src/f{n}.py",
        1,
    )


def test_compose_states_its_own_length() -> None:
    for rest in ("", "a" * 5, "b" * 995, "c" * 99_990):
        text = compose(lambda chars: f"[t] {chars:,} characters", rest)
        assert text.startswith(f"[t] {len(text):,} characters\n")


def test_fit_blocks_keeps_whole_blocks_in_order_within_the_room() -> None:
    blocks = [block(i) for i in range(1, 30)]
    body, shown = fit_blocks(blocks, 3_000)
    assert 0 < shown < len(blocks)
    assert len(body) <= 3_000
    assert body.index("--- 1.") < body.index(f"--- {shown}.") and f"--- {shown + 1}." not in body


def test_fit_blocks_cuts_a_first_block_too_big_for_the_room() -> None:
    huge = Block("--- 1. big.py:1-500", numbered("\n".join("y" * 70 for _ in range(500)), 1), "big.py", 1)
    body, shown = fit_blocks([huge, block(2)], 2_000)
    assert shown == 1 and len(body) <= 2_000
    assert 'read_file(path="big.py", start_line=' in body and "end_line=500)" in body


def test_more_line_counts_what_is_left_and_how_to_get_it() -> None:
    blocks = [block(i) for i in range(1, 6)]
    page = Page(blocks, offset=10, limit=5, beyond=5, more_is_floor=True)
    line = more_line("hybrid_search", page, 3, 20_000, "chunks", "or narrow it")
    assert line.startswith("[MORE] at least 7 more chunks: call hybrid_search again with offset=13")
    assert "2 of this page did not fit the 20,000-character budget: src/f4.py:1-5, src/f5.py:1-5" in line
    done = Page(blocks, offset=0, limit=5, beyond=0)
    assert more_line("grep_search", done, 5, 20_000, "passages", "") == "[END] no more passages."


def test_page_answer_fits_the_budget_and_summarises() -> None:
    blocks = [block(i, lines=20) for i in range(1, 40)]
    text = page_answer(
        "grep_search", Page(blocks, 0, 39, 0, total=39), ["a note"], budget=5_000, unit="passages", hint="x"
    )
    assert len(text) <= 5_000
    first = text.split("\n", 1)[0]
    assert first.startswith("[grep_search] ") and f"{len(text):,} characters" in first and "of 39" in first
    assert "[NOTE] a note" in text and "[MORE] " in text


def test_error_lines_name_a_code_and_keep_the_reason() -> None:
    missing = IndexMissingError("no codesift index for /r yet: run `codesift index /r` to build it")
    assert error_line(missing) == f"[ERROR: INDEX_MISSING] {missing}"
    assert error_line(QueryError("bad glob")).startswith("[ERROR: INVALID_ARGUMENT] bad glob")
    denied = FileAccessError(FileErrorCode.ACCESS_DENIED, "outside; allowed roots: /r")
    assert error_line(denied) == "[ERROR: ACCESS_DENIED] outside; allowed roots: /r"


def test_kind_names_in_the_schema_match_chunk_kinds() -> None:
    assert set(typing.get_args(ChunkKindName)) == {k.value for k in ChunkKind}

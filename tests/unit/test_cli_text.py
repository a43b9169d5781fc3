"""The CLI's line writer: plain text for pipes, ANSI styles on a terminal, matches marked per line."""

from __future__ import annotations

import io

import pytest

from codesift.server.cli_text import BOLD_YELLOW, Lines, split_marked


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_spans_over_a_passage_fall_on_their_lines() -> None:
    text = "alpha beta\ngamma\nbeta beta"
    spans = [(6, 10), (17, 21), (22, 26), (3, 14)]  # the last one crosses a line end
    assert split_marked(text, spans) == [
        ("alpha beta", [(3, 10), (6, 10)]),
        ("gamma", [(0, 3)]),
        ("beta beta", [(0, 4), (5, 9)]),
    ]


def test_a_pipe_gets_plain_text_with_its_bytes_as_they_are() -> None:
    out = Lines(io.StringIO())
    assert not out.color
    assert out.marked("a\x1bb\rc", [(0, 1)]) == "a\x1bb\rc"
    assert out.style("x", BOLD_YELLOW) == "x"


def test_a_terminal_gets_colours_and_no_control_characters_from_files(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    out = Lines(Tty())
    assert out.color
    assert out.marked("find me\x1b[2J", [(5, 7), (0, 2)]) == (
        "\x1b[1;33mfi\x1b[0mnd \x1b[1;33mme\x1b[0m\\x1b[2J"
    )
    monkeypatch.setenv("NO_COLOR", "1")
    plain = Lines(Tty())
    assert not plain.color and plain.marked("a\x07", []) == "a\\x07"


def test_lines_are_written_together_on_flush() -> None:
    stream = io.StringIO()
    out = Lines(stream)
    out.add("one")
    out.add()
    out.add("two")
    assert stream.getvalue() == ""
    out.flush()
    assert stream.getvalue() == "one\n\ntwo\n"

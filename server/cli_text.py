"""Lines for ``codesift search / grep / symbols``: ANSI styles on a terminal, plain text otherwise.

rich rendered every line as a styled object: ~5 CPU-seconds for the 1 MB that
``codesift grep getattr`` prints on the standard library, where the grep itself
takes 0.3 s. These answers need only a few colours, so they are written here as
strings, all at once; rich is still used where a table or progress bar helps
(``index``, ``status``). A pipe or a file gets the text alone, never wrapped; a
terminal gets colours unless ``NO_COLOR`` is set or ``TERM`` is ``dumb``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence

TYPE_CHECKING = False  # typing costs the CLI's thin path a few ms
if TYPE_CHECKING:
    from typing import TextIO

BOLD_CYAN = "1;36"
BOLD_YELLOW = "1;33"
BOLD = "1"
CYAN = "36"
DIM = "2"
GREEN = "32"
RED = "31"
YELLOW = "33"

# Control characters a terminal acts on (bell, backspace, vertical tab, form feed,
# carriage return, escape): shown as escapes there, so file content cannot move the
# cursor or change colours. A pipe gets the bytes as they are, as ripgrep's does.
_CONTROL = {c: f"\\x{c:02x}" for c in (7, 8, 11, 12, 13, 27)}


class Lines:
    """Lines for one stream, written together by ``flush``."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stdout
        tty = self.stream.isatty()
        self.terminal = tty
        self.color = tty and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"
        self._lines: list[str] = []

    def text(self, value: str) -> str:
        """File content made safe for this stream."""
        return value.translate(_CONTROL) if self.terminal else value

    def style(self, value: str, code: str) -> str:
        """``value`` in a style (a plain string off a terminal or without colours)."""
        return f"\x1b[{code}m{value}\x1b[0m" if self.color and value else value

    def marked(self, value: str, spans: Iterable[Sequence[int]], code: str = BOLD_YELLOW) -> str:
        """``value`` with the code-point ``spans`` styled (the matches of a line)."""
        if not self.color:
            return self.text(value)
        parts: list[str] = []
        at = 0
        for a, b in _merged(spans, len(value)):
            parts += [self.text(value[at:a]), self.style(self.text(value[a:b]), code)]
            at = b
        parts.append(self.text(value[at:]))
        return "".join(parts)

    def add(self, line: str = "") -> None:
        self._lines.append(line)

    def flush(self) -> None:
        if self._lines:
            self.stream.write("\n".join(self._lines) + "\n")
            self.stream.flush()
            self._lines = []


def split_marked(text: str, spans: Iterable[Sequence[int]]) -> list[tuple[str, list[tuple[int, int]]]]:
    """The lines of ``text``, each with the parts of ``spans`` (offsets into ``text``)
    that fall on it, as offsets into the line. One pass over lines and sorted spans
    (a grep passage of 21 lines and 20 matches was 420 span tests)."""
    ordered = sorted((int(s[0]), int(s[1])) for s in spans)
    out: list[tuple[str, list[tuple[int, int]]]] = []
    start = 0
    first = 0  # spans before this one end before the current line: done with
    for line in text.split("\n"):
        end = start + len(line)
        while first < len(ordered) and ordered[first][1] <= start:
            first += 1
        local: list[tuple[int, int]] = []
        j = first
        while j < len(ordered) and ordered[j][0] < end:
            a, b = ordered[j]
            if b > start:
                local.append((max(a, start) - start, min(b, end) - start))
            j += 1
        out.append((line, local))
        start = end + 1
    return out


def _merged(spans: Iterable[Sequence[int]], size: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted((max(0, int(s[0])), min(size, int(s[1]))) for s in spans):
        if b <= a:
            continue
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out

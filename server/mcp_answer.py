"""Sizing MCP answers: results in order until a character budget, then a line saying what is left.

Pure text, no engine and no protocol: the MCP tools build :class:`Block`\\ s and
a :class:`Page`, and these functions decide what fits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

# Room kept for the summary line and the "[MORE] …" line.
RESERVE = 1_000
MAX_NOTES = 10
MAX_NOTE_CHARS = 500
MAX_CITED = 8


@dataclass(frozen=True, slots=True)
class Block:
    """One result: a header line citing ``cite`` and its (numbered) text lines."""

    head: str
    lines: Sequence[str]
    cite: str  # the file as answers name it; also what "unique files" counts
    first_line: int

    def render(self) -> str:
        return self.head + "\n" + "".join(line + "\n" for line in self.lines) + ("\n" if self.lines else "")

    @property
    def last_line(self) -> int:
        return self.first_line + max(len(self.lines), 1) - 1


@dataclass(frozen=True, slots=True)
class Page:
    """The results asked for (``offset``, ``limit``) and how many follow them."""

    blocks: Sequence[Block]
    offset: int
    limit: int
    beyond: int  # results after this page
    more_is_floor: bool = False  # ``beyond`` is a lower bound: the engine was asked one page ahead
    total: int | None = None  # every result there is, when known (grep)


def plural(n: int, unit: str) -> str:
    """``1 chunk``, ``2 chunks``; ``unit`` is the plural ending in s."""
    return f"{n:,} {unit[:-1] if n == 1 else unit}"


def notes_text(notes: Sequence[str]) -> str:
    """``[NOTE] …`` lines, at most MAX_NOTES of at most MAX_NOTE_CHARS each."""
    kept = [n if len(n) <= MAX_NOTE_CHARS else n[: MAX_NOTE_CHARS - 1] + "…" for n in notes[:MAX_NOTES]]
    if len(notes) > MAX_NOTES:
        kept.append(f"{len(notes) - MAX_NOTES} more notes not shown")
    return "".join(f"[NOTE] {n}\n" for n in kept)


def fit_blocks(blocks: Sequence[Block], room: int) -> tuple[str, int]:
    """The rendered blocks that fit in ``room`` characters (less RESERVE) and how many.

    Blocks go in whole, in order. When not even the first fits, it is cut at a
    line and ends with how to read the rest, so an answer is never empty for
    want of room.
    """
    room = max(room - RESERVE, 200)
    parts: list[str] = []
    used = 0
    for block in blocks:
        text = block.render()
        if used + len(text) <= room:
            parts.append(text)
            used += len(text)
            continue
        if not parts:
            parts.append(_cut(block, room))
        break
    return "".join(parts), len(parts)


def _cut(block: Block, room: int) -> str:
    kept: list[str] = []
    used = len(block.head) + 1
    for line in block.lines:
        if used + len(line) + 1 > room - 200:  # 200: the "… more lines" line
            break
        kept.append(line)
        used += len(line) + 1
    start = block.first_line + len(kept)
    rest = (
        f"      … {len(block.lines) - len(kept)} more lines: "
        f'read_file(path="{block.cite}", start_line={start}, end_line={block.last_line})'
    )
    return block.head + "\n" + "".join(line + "\n" for line in kept) + rest + "\n\n"


def more_line(tool: str, page: Page, shown: int, budget: int, unit: str, hint: str) -> str:
    """The last line: how many more results there are and how to get them."""
    not_shown = len(page.blocks) - shown
    more = not_shown + page.beyond
    if more == 0:
        return f"[END] no more {unit}."
    floor = "at least " if page.more_is_floor else ""
    what = unit[:-1] if more == 1 else unit
    text = f"[MORE] {floor}{more:,} more {what}: call {tool} again with offset={page.offset + shown}"
    if not_shown:
        cited = ", ".join(f"{b.cite}:{b.first_line}-{b.last_line}" for b in page.blocks[shown:][:MAX_CITED])
        if not_shown > MAX_CITED:
            cited += ", …"
        text += (
            f" ({not_shown} of this page did not fit the {budget:,}-character budget: {cited}; "
            "a smaller limit, or read_file on a cited range, also works)"
        )
    return f"{text}, {hint}."


def compose(summary: Callable[[int], str], rest: str) -> str:
    """The summary line (which states the answer's own length) followed by ``rest``."""
    chars = len(rest)
    text = summary(chars) + "\n" + rest
    for _ in range(4):  # the length's digits change the length: settle it
        if len(text) == chars:
            break
        chars = len(text)
        text = summary(chars) + "\n" + rest
    return text

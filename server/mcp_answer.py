"""MCP answers as text: engine results become cited blocks, sized to a character budget.

An answer is a summary line (tool, results, unique files, its own length in
characters), ``[NOTE]`` lines, the blocks that fit, and a last line saying how
many more results there are and how to get them. No protocol here: the MCP
tools call these functions and send the string.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from codesift.indexer.graph import CallSite, Implementation
from codesift.indexer.model import Symbol
from codesift.indexer.search.names import SymbolHit, SymbolMatch
from codesift.indexer.search.passages import Passage
from codesift.indexer.search.results import SearchHit

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
    end_line: int = 0  # the range cited when ``lines`` are not the range's lines (call sites…)

    def render(self) -> str:
        return self.head + "\n" + "".join(line + "\n" for line in self.lines) + ("\n" if self.lines else "")

    @property
    def last_line(self) -> int:
        return self.end_line or self.first_line + max(len(self.lines), 1) - 1


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
    start = block.first_line if block.end_line else block.first_line + len(kept)
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


def page_answer(tool: str, page: Page, notes: Sequence[str], *, budget: int, unit: str, hint: str) -> str:
    """The whole answer for one page of results; ``unit`` is the plural (chunks, passages…)."""
    note_text = notes_text(notes)
    body, shown = fit_blocks(page.blocks, budget - len(note_text))
    files = len({b.cite for b in page.blocks[:shown]})
    footer = more_line(tool, page, shown, budget, unit, hint)
    first, last = page.offset + 1, page.offset + shown

    def summary(chars: int) -> str:
        span = f"results {first}-{last}" if shown else "no results on this page"
        if page.total is not None:
            span += f" of {page.total:,}"
        return (
            f"[{tool}] {plural(shown, unit)} from {plural(files, 'unique files')}, "
            f"{plural(chars, 'characters')} (budget {budget:,}); {span}"
        )

    return compose(summary, note_text + body + footer)


def numbered(text: str, first: int, marks: frozenset[int] = frozenset()) -> list[str]:
    """Lines prefixed with their number; with ``marks``, match lines get ``:`` and context ``-``."""

    def sep(n: int) -> str:
        if not marks:
            return "  "
        return ": " if n in marks else "- "

    return [f"{first + i:>5}{sep(first + i)}{line}" for i, line in enumerate(text.split("\n"))]


def hit_block(n: int, cite: str, hit: SearchHit) -> Block:
    """A search hit: its rank, path:lines, kind and symbol, score and sources, then its text."""
    c = hit.chunk
    what = f"{c.kind} {c.symbol}" if c.symbol else str(c.kind)
    stale = "  (file changed since indexed: read_file shows the current text)" if hit.stale else ""
    via = f"  via {' -> '.join(hit.via)}" if hit.via else ""
    if hit.vector_model:
        via += f"  vectors: {hit.vector_model}"
    head = (
        f"--- {n}. {cite}:{c.start_line}-{c.end_line}  {what}  score {hit.score:.3f} "
        f"({'+'.join(hit.sources)}){via}{stale}"
    )
    return Block(head, numbered(c.text, c.start_line), cite, c.start_line)


def passage_block(n: int, cite: str, p: Passage) -> Block:
    """A grep passage: path:lines and how many lines matched, then the marked lines."""
    matches = len(p.match_lines)
    head = f"--- {n}. {cite}:{p.start_line}-{p.end_line}  ({matches} matching line{'s' * (matches != 1)})"
    return Block(head, numbered(p.text, p.start_line, frozenset(p.match_lines)), cite, p.start_line)


def symbol_block(cite: str, h: SymbolHit) -> Block:
    """One line per symbol: path:lines, kind, qualified name, how it matched (members indented)."""
    s = h.symbol
    indent = "    " if h.match is SymbolMatch.MEMBER else ""
    head = (
        f"{indent}{cite}:{s.range.start.line}-{s.range.end.line}  {s.kind.name.lower()} "
        f"{s.qualified_name}  ({h.match.name.lower().replace('_', ' ')} match)"
    )
    return Block(head, [], cite, s.range.start.line)


MAX_SITES = 8  # call sites quoted per caller
MAX_SITE_CHARS = 160


def _quote(line: int, text: str | None) -> str:
    text = (text or "").strip()
    if len(text) > MAX_SITE_CHARS:
        text = text[: MAX_SITE_CHARS - 1] + "…"
    return f"{line:>5}: {text}".rstrip()


def _what(s: Symbol) -> str:
    return f"{s.kind.name.lower().replace('_', ' ')} {s.qualified_name}"


def caller_block(
    n: int, cite: str, site: CallSite, callee: str, depth: int, source: Callable[[int], str | None]
) -> Block:
    """A caller: path:lines of the calling definition, what it calls, then its call sites quoted.

    An unresolved caller says so: the call's name matches but its target is not certain.
    """
    lines = sorted({r.start.line for r in site.from_ranges})
    sites = ", ".join(map(str, lines))
    if site.caller is not None:
        first, last = site.caller.range.start.line, site.caller.range.end.line
        what = _what(site.caller)
    else:
        first, last = lines[0], lines[-1]
        what = "top-level code"
    hop = f" (depth {depth})" if depth > 1 else ""
    head = f"--- {n}. {cite}:{first}-{last}  {what}  calls {callee} at line{'s' * (len(lines) != 1)} {sites}"
    head += hop
    if not site.resolved:
        head += "  UNRESOLVED: possible caller only (its call's target could not be resolved)"
    quoted = [_quote(line, source(line)) for line in lines[:MAX_SITES]]
    if len(lines) > MAX_SITES:
        quoted.append(f"      … {len(lines) - MAX_SITES} more call sites")
    return Block(head, quoted, cite, first, last)


def implementation_block(
    n: int, cite: str, impl: Implementation, source: Callable[[int], str | None]
) -> Block:
    """An implementation: path:lines, how it implements (subclass, override…), of what, its declaration."""
    if impl.symbol is not None and impl.how.value != "extension":
        first, last = impl.symbol.range.start.line, impl.symbol.range.end.line
        decl = impl.symbol.selection_range.start.line
        what = _what(impl.symbol)
    else:
        first = decl = impl.location.span.start.line
        last = impl.location.span.end.line
        if impl.symbol is not None:
            what = _what(impl.symbol)
        elif impl.how.value == "subclass":
            what = f"{impl.extended} (a class inside a function)"
        else:
            what = f"{impl.extended or 'a type'} (outside the index)"
    head = f"--- {n}. {cite}:{first}-{last}  {impl.how.value}: {what}  of {impl.of}"
    return Block(head, [_quote(decl, source(decl))], cite, first, last)


def text_answer(
    summary: Callable[[int, int], str],
    notes: Sequence[str],
    items: Sequence[str],
    *,
    budget: int,
    unit: str,
    hint: str,
) -> str:
    """A text (markdown) answer cut at whole items to the budget.

    ``items`` are the answer's pieces in order; ``summary(chars, shown)`` is its first line.
    """
    note_text = notes_text(notes)
    room = max(budget - len(note_text) - RESERVE, 200)
    parts: list[str] = []
    used = 0
    for item in items:
        if used + len(item) > room:
            break
        parts.append(item)
        used += len(item)
    left = len(items) - len(parts)
    if left:
        footer = f"[MORE] {plural(left, unit)} did not fit the {budget:,}-character budget: {hint}."
    else:
        footer = f"[END] no more {unit}."
    body = "".join(parts)
    if body and not body.endswith("\n"):
        body += "\n"
    return compose(lambda chars: summary(chars, len(parts)), note_text + body + footer)

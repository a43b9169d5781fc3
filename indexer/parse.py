"""Source → chunks and symbols: syntax-aware chunking, line windows where no grammar.

How a file becomes chunks:

* The mapping of the language (``indexer/languages``) finds the definitions of
  each scope: the file, then the body of every class and namespace.
* A scope is cut into consecutive pieces. Each function, method and class is a
  piece; the statements between them are block pieces (``BLOCK`` at top level and
  in namespaces, ``CLASS`` parts inside a class). Comments, decorators and
  attributes right above a definition (no blank line between) belong to it.
* A class of at most ``max_lines`` is one ``CLASS`` chunk holding its methods. A
  longer class is cut into its header/field parts (``CLASS``) and its members.
  Namespaces are always cut into their members.
* A function or block longer than ``max_lines`` is cut at the starts of its
  statements (descending into statements that are themselves too long), greedily
  up to ``max_lines`` per piece; every piece keeps the function's symbol. A piece
  with no inner boundary at all is cut every ``max_lines`` lines.
* Merging: consecutive blocks of the same scope merge when one of them is shorter
  than ``min_lines`` and the result fits ``max_lines``; consecutive definitions of
  the same kind and container (functions, methods, classes) merge while both are
  shorter than ``min_lines``. A merged chunk keeps the first one's kind and
  symbol. A closing part of a class or namespace shorter than ``min_lines`` (a
  lone ``}`` or ``end``) joins the chunk before it; a namespace header shorter
  than ``min_lines`` joins the chunk after it.
* No chunk is longer than ``max_chars``: longer ones are cut by lines, and a
  single line longer than that into ``max_chars`` slices of that line.
* Blank lines at a chunk's edges are dropped; every other line of the file is in
  some chunk, so grep-like search over chunks loses nothing.
"""

from __future__ import annotations

import bisect
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum
from typing import cast

from tree_sitter import Node, Parser, Tree

from . import grammars
from .edges import extract_edges
from .languages import c_family, rust, swift
from .languages.base import Definition, Item, Mapping, Role, error_count, outline
from .languages.gomod import module_symbols
from .languages.mappings import mapping_for
from .model import (
    Chunk,
    ChunkKind,
    ParseResult,
    Position,
    Span,
    Symbol,
    SymbolKind,
    chunk_id,
    embedding_text,
    text_hash,
)
from .settings import ChunkSettings
from .text import piece_parts

log = logging.getLogger(__name__)

# Parsers are not thread-safe: each thread keeps its own, per language.
_per_thread = threading.local()

# Grammars whose parse a lone macro line can derail (``c_family.repaired``).
_C_FAMILY = frozenset({"c", "cpp", "cuda"})

_SPLIT_DEPTH = 4  # how deep a too-long statement is searched for inner boundaries

# ``_search_text``: ASCII bytes other than letters and digits become spaces
# (bytes ≥ 0x80 stay: they are parts of runs, see ``text.piece_parts``).
_RUN_BYTES = bytes(b if b >= 0x80 or chr(b).isalnum() else 0x20 for b in range(256))
_MAX_CACHED_WORDS = 200_000


def parse_file(path: str, text: str, language: str, *, project: str, settings: ChunkSettings) -> ParseResult:
    """Chunks and symbols of one file.

    ``path`` is workspace-relative POSIX; ``language`` a tree-sitter-language-pack
    name, or "" for line windows of ``settings.window_lines`` lines. Never raises
    for any text: broken syntax still yields chunks (``had_errors``), and a grammar
    that fails altogether falls back to line windows.
    """
    if not text or text.isspace():
        return ParseResult(language, (), (), False)
    lines = text.split("\n")
    result = _parse(path, lines, language, project, settings, text)
    if language == "gomod":  # the module path, for the graph's Go imports
        result = replace(result, symbols=(*result.symbols, *module_symbols(path, lines, result.chunks)))
    return result


def _parse(
    path: str, lines: list[str], language: str, project: str, settings: ChunkSettings, text: str
) -> ParseResult:
    tools = _tools(language) if language else None
    if tools is not None:
        try:
            language, mapping, tree = _read(path, language, tools, text.encode("utf-8", "surrogatepass"))
            return _FileParse(path, lines, language, project, settings, mapping).run(tree, text)
        except Exception:  # a grammar or mapping bug must never lose a file
            log.warning("parsing %s as %s failed; indexing line windows", path, language, exc_info=True)
    chunks = _Chunker(path, lines, language, project, settings).windows()
    return ParseResult(language, tuple(chunks), (), False)


def _read(
    path: str, language: str, tools: tuple[Parser, Mapping], source: bytes
) -> tuple[str, Mapping, Tree]:
    """The file's tree, and the language and mapping that read it: a ``.h`` file the C
    grammar reads with errors and the C++ grammar with fewer is C++ (abseil's headers:
    ``namespace absl {`` made each one function named ``absl``)."""
    parser, mapping = tools
    tree = _tree(parser, source, language)
    if language == "c" and path.endswith(".h") and tree.root_node.has_error:
        cpp = _tools("cpp")
        if cpp is not None:
            other = _tree(cpp[0], source, "cpp")
            if error_count(other.root_node) < error_count(tree.root_node):
                return "cpp", cpp[1], other
    return language, mapping, tree


def _tree(parser: Parser, source: bytes, language: str) -> Tree:
    """The grammar's tree, with the repairs its language takes (rows and columns unchanged)."""
    tree = parser.parse(source)
    if tree.root_node.has_error and language == "swift":
        fixed = swift.repaired(source, tree.root_node, lambda b: parser.parse(b).root_node)
        if fixed is not None:  # body-less functions given `{}`: rows and names unchanged
            tree = parser.parse(fixed)
    elif language == "rust":
        unwrapped = rust.unwrapped(source, tree.root_node, parser.parse)
        if unwrapped is not None:  # `cfg_rt! { items }` read as its items: rows and columns unchanged
            tree = unwrapped
    elif tree.root_node.has_error and language in _C_FAMILY:
        blanked = c_family.repaired(source, tree.root_node, parser.parse)
        if blanked is not None:  # lone macro lines blanked: rows and columns unchanged
            tree = blanked
    return tree


def _tools(language: str) -> tuple[Parser, Mapping] | None:
    cache: dict[str, tuple[Parser, Mapping] | None] | None = getattr(_per_thread, "tools", None)
    if cache is None:
        cache = {}
        _per_thread.tools = cache
    if language not in cache:
        try:
            cache[language] = (grammars.parser(language), mapping_for(language))
        except Exception:  # unknown name or a grammar that will not load
            log.info("no tree-sitter grammar for %r; using line windows", language)
            cache[language] = None
    return cache[language]


class _Splits(dict[bytes, str]):
    """Run of ASCII letters and digits (UTF-8 bytes) → its parts, lower case, joined
    by spaces; computed once per run."""

    def __missing__(self, run: bytes) -> str:
        if len(self) >= _MAX_CACHED_WORDS:
            self.clear()
        split = " ".join(piece_parts(run.decode("utf-8", "surrogatepass")))
        self[run] = split
        return split


def _search_text(text: str) -> str:
    """``text.search_text(text)``, computed in C as far as it goes.

    The parts of identifiers never cross a character outside ``[A-Za-z0-9]``, so
    the text's UTF-8 bytes are cut there (one ``bytes.translate``, one ``split``)
    and each run is split once and remembered: runs repeat a lot. On the standard
    library's .py files: 0.86 s → 0.61 s against a per-identifier memo over
    ``re.findall``. The unit tests check that the result equals ``text.search_text``.
    """
    splits: _Splits | None = getattr(_per_thread, "splits", None)
    if splits is None:
        splits = _per_thread.splits = _Splits()
    runs = text.encode("utf-8", "surrogatepass").translate(_RUN_BYTES).split()
    return " ".join(filter(None, map(splits.__getitem__, runs)))


def _span(node: Node) -> tuple[int, int]:
    """1-based inclusive lines of a node (a node ending at column 0 ends the line before)."""
    start_row = node.start_point[0]
    end_row, end_col = node.end_point
    if end_col == 0 and end_row > start_row:
        end_row -= 1
    return start_row + 1, end_row + 1


class _Merge(Enum):
    NORMAL = "normal"  # may merge with a neighbour of the same group
    STICKY = "sticky"  # stays a chunk of its own
    ABSORB_PREV = "absorb-prev"  # when tiny, joins the chunk before it
    ABSORB_NEXT = "absorb-next"  # when tiny, joins the chunk after it


@dataclass(slots=True)
class _Seg:
    start: int
    end: int
    kind: ChunkKind
    symbol: str
    group: tuple[str, ...] | None = None
    merge: _Merge = _Merge.NORMAL


class _Chunker:
    """Line bookkeeping shared by syntax-aware chunking and line windows."""

    def __init__(
        self, path: str, lines: list[str], language: str, project: str, settings: ChunkSettings
    ) -> None:
        self.path = path
        self.lines = lines
        self.language = language
        self.project = project
        self.max_lines = max(1, settings.max_lines)
        self.min_lines = max(0, settings.min_lines)
        self.max_chars = max(1, settings.max_chars)
        self.window_lines = max(1, settings.window_lines)

    def windows(self) -> list[Chunk]:
        """Fixed windows of ``window_lines`` lines, kind ``WINDOW``."""
        n, size = len(self.lines), self.window_lines
        segs = [_Seg(s, min(n, s + size - 1), ChunkKind.WINDOW, "") for s in range(1, n + 1, size)]
        return self.chunks([seg for seg in segs if self.trim(seg)])

    def blank(self, line: int) -> bool:
        return not self.lines[line - 1].strip()

    def trim(self, seg: _Seg) -> bool:
        """Drop blank lines at the edges; False when nothing is left."""
        while seg.start <= seg.end and self.blank(seg.start):
            seg.start += 1
        while seg.end >= seg.start and self.blank(seg.end):
            seg.end -= 1
        return seg.start <= seg.end

    def chunks(self, segs: list[_Seg]) -> list[Chunk]:
        """Chunks for segments, cut to ``max_chars``."""
        out: list[Chunk] = []
        # Pieces of one long line share its place and may share their text ("aaaa…"
        # sliced): the n-th repeat of a (place, text) key gets n in its id, so ids are
        # unique within the file by construction and the first keeps its plain id.
        repeats: dict[str, int] = {}
        for seg in segs:
            for start, end, text in self.capped(seg.start, seg.end):
                digest = text_hash(embedding_text(self.path, text))
                key = chunk_id(self.project, self.path, start, end, digest)
                n = repeats.get(key, 0)
                repeats[key] = n + 1
                out.append(
                    Chunk(
                        id=key if n == 0 else chunk_id(self.project, self.path, start, end, f"{digest}#{n}"),
                        path=self.path,
                        project=self.project,
                        language=self.language,
                        kind=seg.kind,
                        symbol=seg.symbol,
                        start_line=start,
                        end_line=end,
                        text=text,
                        search_text=_search_text(text),
                        content_hash=digest,
                    )
                )
        return out

    def capped(self, start: int, end: int) -> list[tuple[int, int, str]]:
        """``(start, end, text)`` pieces of at most ``max_chars`` characters."""
        lines, cap = self.lines, self.max_chars
        text = "\n".join(lines[start - 1 : end])
        if len(text) <= cap:
            return [(start, end, text)] if text.strip() else []
        pieces: list[tuple[int, int, str]] = []

        def flush(a: int, b: int) -> None:
            piece = "\n".join(lines[a - 1 : b])
            if a <= b and piece.strip():
                pieces.append((a, b, piece))

        first, size = start, 0
        for line_no in range(start, end + 1):
            line = lines[line_no - 1]
            if len(line) > cap:  # one line alone is too long: slice it
                flush(first, line_no - 1)
                pieces.extend(
                    (line_no, line_no, line[k : k + cap])
                    for k in range(0, len(line), cap)
                    if line[k : k + cap].strip()
                )
                first, size = line_no + 1, 0
                continue
            if size + len(line) > cap and first < line_no:
                flush(first, line_no - 1)
                first, size = line_no, 0
            size += len(line) + 1
        flush(first, end)
        return pieces


class _FileParse(_Chunker):
    """One file through its grammar: the outline, then segments, then chunks and symbols."""

    def __init__(
        self,
        path: str,
        lines: list[str],
        language: str,
        project: str,
        settings: ChunkSettings,
        mapping: Mapping,
    ) -> None:
        super().__init__(path, lines, language, project, settings)
        self.mapping = mapping
        self.segs: list[_Seg] = []
        self._attachable: dict[str, bool] = {}

    def run(self, tree: Tree, text: str) -> ParseResult:
        root = tree.root_node
        items = outline(root, self.mapping)
        self.scope(items, 1, len(self.lines), "top", "")
        chunks = self.chunks(self.merged())
        symbols = self.symbols(items, chunks)
        column = None if text.isascii() else self.column
        edges = extract_edges(root, self.language, self.mapping, items, self.path, column)
        return ParseResult(self.language, tuple(chunks), tuple(symbols), root.has_error, edges)

    # -- cutting a scope into segments -------------------------------------------------

    def attachable(self, node: Node) -> bool:
        found = self._attachable.get(node.type)
        if found is None:
            found = bool(self.mapping.attached.search(node.type))
            self._attachable[node.type] = found
        return found

    def scope(self, items: list[Item], lo: int, hi: int, where: str, symbol: str) -> None:
        """Segments covering lines ``lo..hi`` of a file, class or namespace scope."""
        cursor, run, first = lo, list[Node](), True
        for item in items:
            d = item.boundary
            if d is None:
                run.append(item.node)
                continue
            start, end = _span(item.node)
            while run and self.attachable(run[-1]):  # comments / decorators right above
                a, b = _span(run[-1])
                before = _span(run[-2])[1] if len(run) > 1 else cursor - 1
                if b + 1 < start or a <= before:
                    break
                start = a
                run.pop()
            start = max(start, cursor)
            if start > end:  # shares its only line with what came before
                continue
            self.statements(cursor, start - 1, run, where, symbol, "head" if first else "middle")
            self.definition(d, start, end, where, symbol)
            cursor, run, first = end + 1, [], False
        self.statements(cursor, hi, run, where, symbol, "only" if first else "tail")

    def statements(
        self, start: int, end: int, nodes: list[Node], where: str, symbol: str, position: str
    ) -> None:
        """Statements between definitions: blocks, or a class's header / field parts."""
        if start > end:
            return
        if where == "class":
            kind = ChunkKind.CLASS
            merge = _Merge.STICKY if position == "head" else _Merge.ABSORB_PREV
            group: tuple[str, ...] | None = None
        else:
            kind, group, merge = ChunkKind.BLOCK, ("block", symbol), _Merge.NORMAL
            if where == "namespace" and position == "head":
                merge = _Merge.ABSORB_NEXT
            elif where == "namespace" and position == "tail":
                merge = _Merge.ABSORB_PREV
        for a, b in self.pack(start, end, self.cuts(nodes, 0)):
            self.segs.append(_Seg(a, b, kind, symbol, group, merge))

    def definition(self, d: Definition, start: int, end: int, where: str, symbol: str) -> None:
        """One definition: a chunk, pieces of a long one, or its members' segments."""
        qualified = d.qualified_name
        fits = end - start + 1 <= self.max_lines
        if d.continues:  # blank lines between the clauses are no block
            while self.segs and self.size(self.segs[-1].start, self.segs[-1].end) <= 0:
                self.segs.pop()
        last = self.segs[-1] if self.segs else None
        if d.continues and last is not None and last.symbol == qualified and last.end < start:
            if end - last.start + 1 <= self.max_lines:  # a further clause: the function's chunk grows
                last.end = end
                return
            self.segs.append(_Seg(start, end, last.kind, qualified, None, _Merge.STICKY))
            return
        if d.role is Role.FUNCTION:
            method = where == "class" or d.kind in (SymbolKind.METHOD, SymbolKind.CONSTRUCTOR)
            kind = ChunkKind.METHOD if method else ChunkKind.FUNCTION
            if fits:
                self.segs.append(_Seg(start, end, kind, qualified, ("def", kind, symbol)))
            else:
                self.split(d, start, end, kind)
        elif d.role is Role.CLASS:
            if fits:
                self.segs.append(_Seg(start, end, ChunkKind.CLASS, qualified, ("class", symbol)))
            elif any(item.boundary is not None for item in d.members):
                self.scope(d.members, start, end, "class", qualified)
            else:
                self.split(d, start, end, ChunkKind.CLASS)
        elif any(item.boundary is not None for item in d.members):
            self.scope(d.members, start, end, "namespace", qualified)
        else:
            inner = d.body.named_children if d.body is not None else d.node.named_children
            for a, b in self.pack(start, end, self.cuts(inner, 0)):
                self.segs.append(_Seg(a, b, ChunkKind.BLOCK, qualified, ("block", qualified)))

    def split(self, d: Definition, start: int, end: int, kind: ChunkKind) -> None:
        """A long definition cut on inner statements; a tiny last piece joins the one before."""
        inner = (d.body if d.body is not None else d.node).named_children
        pieces = self.pack(start, end, self.cuts(inner, 0))
        if len(pieces) > 1 and self.size(*pieces[-1]) < self.min_lines:
            last = pieces.pop()
            pieces[-1] = (pieces[-1][0], last[1])
        for a, b in pieces:
            self.segs.append(_Seg(a, b, kind, d.qualified_name, None, _Merge.STICKY))

    def cuts(self, nodes: list[Node], depth: int) -> list[int]:
        """Lines where a piece may start: statement starts, inside long statements too."""
        out: list[int] = []
        for node in nodes:
            if not node.is_named:
                continue
            a, b = _span(node)
            out.append(a)
            if b - a >= self.max_lines and depth < _SPLIT_DEPTH:
                out.extend(self.cuts(node.children, depth + 1))
        return out

    def pack(self, start: int, end: int, cuts: list[int]) -> list[tuple[int, int]]:
        """Greedy pieces of at most ``max_lines``, cut only at ``cuts`` when possible."""
        m = self.max_lines
        if end - start + 1 <= m:
            return [(start, end)]
        pieces: list[tuple[int, int]] = []
        first, prev = start, start
        for cut in sorted({c for c in cuts if start < c <= end}):
            if cut - first > m:
                if prev > first:
                    pieces.append((first, prev - 1))
                    first = prev
                if cut - first > m:  # one statement with nothing to cut inside
                    pieces.append((first, cut - 1))
                    first = cut
            prev = cut
        pieces.append((first, end))
        out: list[tuple[int, int]] = []
        for a, b in pieces:
            while b - a + 1 > m:
                out.append((a, a + m - 1))
                a += m
            out.append((a, b))
        return out

    def size(self, start: int, end: int) -> int:
        """Lines from the first to the last non-blank line."""
        while start <= end and self.blank(start):
            start += 1
        while end >= start and self.blank(end):
            end -= 1
        return end - start + 1

    # -- merging -----------------------------------------------------------------------

    def merged(self) -> list[_Seg]:
        """Trimmed segments with tiny neighbours merged (see the module docstring)."""
        segs = [seg for seg in self.segs if self.trim(seg)]
        tiny = self.min_lines
        kept: list[_Seg] = []
        for seg in segs:
            if seg.merge is _Merge.ABSORB_PREV and kept and seg.end - seg.start + 1 < tiny:
                kept[-1].end = seg.end
            else:
                kept.append(seg)
        forward: list[_Seg] = []
        for seg in reversed(kept):
            if seg.merge is _Merge.ABSORB_NEXT and forward and seg.end - seg.start + 1 < tiny:
                forward[-1].start = seg.start
            else:
                forward.append(seg)
        forward.reverse()
        out: list[_Seg] = []
        for seg in forward:
            if out and self.mergeable(out[-1], seg):
                out[-1].end = seg.end
            else:
                out.append(seg)
        return out

    def mergeable(self, a: _Seg, b: _Seg) -> bool:
        if a.group is None or a.group != b.group:
            return False
        if a.merge is not _Merge.NORMAL or b.merge is not _Merge.NORMAL:
            return False
        len_a, len_b = a.end - a.start + 1, b.end - b.start + 1
        if a.group[0] == "block":
            return (len_a < self.min_lines or len_b < self.min_lines) and (
                b.end - a.start + 1 <= self.max_lines
            )
        return len_a < self.min_lines and len_b < self.min_lines

    # -- symbols -----------------------------------------------------------------------

    def symbols(self, items: list[Item], chunks: list[Chunk]) -> list[Symbol]:
        """Symbols of every definition, in document order, each pointing at its chunk."""
        starts = [c.start_line for c in chunks]
        out: list[Symbol] = []

        def holder(line: int, qualified: str) -> str:
            i = bisect.bisect_right(starts, line) - 1
            while i > 0 and starts[i - 1] == starts[i]:
                i -= 1  # a long line cut into slices: the first slice
            best = ""
            j = i
            while 0 <= j < len(chunks) and chunks[j].start_line <= line:
                if chunks[j].end_line >= line:
                    if chunks[j].symbol == qualified:
                        return chunks[j].id
                    best = best or chunks[j].id
                j += 1
            return best

        def visit(items: list[Item]) -> None:
            folded = _folded_overloads(items, self.language)
            for item in items:
                for d in item.defs:
                    if d.kind is not None and d.name and id(d) not in folded and not d.continues:
                        out.append(self.symbol(d, holder))
                    if d.members:
                        visit(d.members)

        visit(items)
        return out

    def symbol(self, d: Definition, holder: Callable[[int, str], str]) -> Symbol:
        name_node = d.name_node if d.name_node is not None else d.node
        selection = self.node_span(name_node)
        return Symbol(
            name=d.name,
            qualified_name=d.qualified_name,
            kind=cast(SymbolKind, d.kind),
            path=self.path,
            language=self.language,
            range=self.node_span(d.outer),
            selection_range=selection,
            container=d.container,
            chunk_id=holder(selection.start.line, d.qualified_name),
            arity=self.mapping.arity(d.node),
            params=self.mapping.parameter_types(d.node),
            partial=self.mapping.partial(d.node),
        )

    def node_span(self, node: Node) -> Span:
        start_row, start_col = node.start_point
        end_row, end_col = node.end_point
        return Span(
            Position(start_row + 1, self.column(start_row, start_col)),
            Position(end_row + 1, self.column(end_row, end_col)),
        )

    def column(self, row: int, byte_col: int) -> int:
        """Byte column (tree-sitter) → code-point column."""
        if row >= len(self.lines):
            return byte_col
        line = self.lines[row]
        if line.isascii():
            return byte_col
        return len(line.encode("utf-8", "surrogatepass")[:byte_col].decode("utf-8", "replace"))


# TypeScript's overload signatures and bodiless declarations of a function or method
_TS_SIGNATURES = frozenset({"function_signature", "method_signature"})
_TS_FUNCTIONS = frozenset({"function_declaration", "method_definition", *_TS_SIGNATURES})


def _folded_overloads(items: list[Item], language: str = "python") -> set[int]:
    """Overload stubs of one scope — Python's ``@overload`` functions, TypeScript's overload
    signatures (``function f(a: string): string;`` above ``function f(a: any) {…}``) —
    folded into one symbol: the implementation, or the first stub when there is none (a
    ``.pyi``, a ``.d.ts``, an interface). Returns the ``id``s of those left out."""
    typescript = language in ("typescript", "tsx")
    kinds = _TS_FUNCTIONS if typescript else frozenset({"function_definition"})
    stub = _is_signature if typescript else _is_overload
    by_name: dict[str, list[Definition]] = {}
    for item in items:
        for d in item.defs:
            if d.node.type in kinds and d.qualified_name:
                by_name.setdefault(d.qualified_name, []).append(d)
    out: set[int] = set()
    for defs in by_name.values():
        stubs = [d for d in defs if stub(d)]
        if not stubs or len(defs) < 2:
            continue
        keep = next((d for d in defs if not stub(d)), stubs[0])
        out.update(id(d) for d in defs if d is not keep and stub(d))
    return out


def _is_signature(d: Definition) -> bool:
    return d.node.type in _TS_SIGNATURES


def _is_overload(d: Definition) -> bool:
    if d.outer.type != "decorated_definition":
        return False
    for dec in d.outer.named_children:
        if dec.type == "decorator":
            text = (dec.text or b"").decode("utf-8", "replace").lstrip("@").strip()
            if text == "overload" or text.endswith(".overload"):
                return True
    return False

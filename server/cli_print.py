"""What ``codesift search / grep / symbols`` print from their JSON answer.

Standard library and ``cli_text`` only: both the click commands (``cli_search``)
and the thin path (``thin``, which answers through a running server without
importing click) print with these functions, so the two print the same bytes.
Each ``print_*`` returns the command's exit code (1: nothing found).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from .cli_text import BOLD, BOLD_CYAN, CYAN, DIM, GREEN, RED, YELLOW, Lines, split_marked

TYPE_CHECKING = False  # typing costs the thin path a few ms
if TYPE_CHECKING:
    from typing import Any

MEMBER_MATCH = 7  # SymbolMatch.MEMBER (a class's member brought in by its class); a test keeps them equal
# LSP SymbolKind names by number (1…26, the engine's SymbolKind): importing the engine's
# model costs more than the rest of an answer's printing; a test keeps them equal.
SYMBOL_KINDS = [
    "file",
    "module",
    "namespace",
    "package",
    "class",
    "method",
    "property",
    "field",
    "constructor",
    "enum",
    "interface",
    "function",
    "variable",
    "constant",
    "string",
    "number",
    "boolean",
    "array",
    "object",
    "key",
    "null",
    "enum_member",
    "struct",
    "event",
    "operator",
    "type_parameter",
]


def print_json(payload: object) -> None:
    """A JSON answer (already plain values), as ``click.echo`` writes it."""
    sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def say_index(root: object) -> None:
    """Name the index an answer came from (stderr, so stdout stays the answer alone)."""
    note = Lines(sys.stderr)
    note.add(note.style(f"index: {root}", DIM))
    note.flush()


def _hit_text(out: Lines, text: str, start_line: int, spans: Sequence[Sequence[int]], max_lines: int) -> None:
    lines = split_marked(text, spans)
    for i, (line, local) in enumerate(lines[:max_lines]):
        out.add(out.style(f"{start_line + i:>6} │ ", DIM) + out.marked(line, local))
    if len(lines) > max_lines:
        out.add(out.style(f"       … {len(lines) - max_lines} more lines", DIM))


def print_search(payload: dict[str, Any], files: bool) -> int:
    """A search's hits on stdout, its report on stderr."""
    say_index(payload["index_root"])
    hits: list[dict[str, Any]] = payload["hits"]
    out = Lines()
    for hit in hits:
        stale = " " + out.style("(changed since indexed)", RED) if hit["stale"] else ""
        what = f" {hit['kind']} {hit['symbol']}" if hit["symbol"] else f" {hit['kind']}"
        if hit["via"]:
            what += " " + out.style(f"(via {' → '.join(hit['via'])})", DIM)
        where = out.style(out.text(hit["path"]), BOLD_CYAN) + f":{hit['start_line']}-{hit['end_line']}"
        score = out.style(f"{hit['score']:.3f}", GREEN)
        out.add(f"{where}  {score} {out.style('+'.join(hit['sources']), DIM)}{out.text(what)}{stale}")
        if not files:
            _hit_text(out, hit["text"], hit["start_line"], hit["highlights"], 8)
    out.flush()
    _print_report(payload["report"])
    return 0 if hits else 1


def _print_report(report: dict[str, Any]) -> None:
    err = Lines(sys.stderr)
    per = ", ".join(f"{k} {v}" for k, v in report["per_source"].items())
    model = report.get("vector_model") or ""
    vectors = f" (vectors: {model})" if model else ""
    err.add(
        err.style(
            f"{report['chunks']} chunks from {report['unique_files']} files, "
            f"{report['chars']:,} characters; {per}{vectors}; {report['millis'].get('total', 0):.0f} ms",
            DIM,
        )
    )
    for note in dict.fromkeys(report["notes"]):  # each condition once
        err.add(f"{err.style('note:', YELLOW)} {err.text(note)}")
    err.flush()


def print_grep(payload: dict[str, Any], pattern: str) -> int:
    """A grep's passages on stdout (ripgrep-style ``line:`` / ``line-``), its tally on stderr."""
    say_index(payload["index_root"])
    passages: list[dict[str, Any]] = payload["passages"]
    out = Lines()
    for p in passages:
        out.add(out.style(out.text(p["path"]), BOLD_CYAN))
        matched = set(p["match_lines"])
        n = p["start_line"]
        if not out.color:  # a pipe or a file (most output): the lines as they are, no spans
            for line in p["text"].split("\n"):
                out.add(f"{n:>6}{':' if n in matched else '-'} {out.text(line)}")
                n += 1
        else:
            for line, local in split_marked(p["text"], p["highlights"]):
                number = out.style(f"{n:>6}:", GREEN) if n in matched else out.style(f"{n:>6}-", DIM)
                out.add(f"{number} {out.marked(line, local)}")
                n += 1
        out.add()
    out.flush()
    err = Lines(sys.stderr)
    err.add(
        err.style(
            f"{payload['matches']} matching lines in {payload['files']} files, "
            f"{sum(len(p['text']) for p in passages):,} characters; {payload['millis']:.0f} ms",
            DIM,
        )
    )
    if payload["truncated"]:
        err.add(f"{err.style('note:', YELLOW)} stopped early: {payload['reason']}")
    if not passages:
        err.add(f"no match for {pattern!r}")
    err.flush()
    return 0 if passages else 1


def print_symbols(payload: dict[str, Any], name: str) -> int:
    """Definitions, a class's members indented under it."""
    say_index(payload["index_root"])
    hits: list[dict[str, Any]] = payload["symbols"]
    out = Lines()
    for h in hits:
        s = h["symbol"]
        indent = "    " if h["match"] == MEMBER_MATCH else ""
        kind = out.style(SYMBOL_KINDS[s["kind"] - 1], DIM)
        where = out.style(out.text(s["path"]), CYAN) + f":{s['selection_range']['start']['line']}"
        out.add(f"{indent}{out.style(out.text(s['qualified_name']), BOLD)} {kind} {where}")
    out.flush()
    if not hits:
        sys.stderr.write(f"no symbol matches {name!r}\n")
        sys.stderr.flush()
        return 1
    return 0

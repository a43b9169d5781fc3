"""The one translator between the engine's types and the protocol's.

Engine positions are 1-based lines and 0-based code-point columns; LSP
positions are 0-based lines and columns in the negotiated encoding (UTF-16
unless the client offered another). Wire objects are camelCase; engine
settings and requests are snake_case. Engine errors become JSON-RPC errors
here and nowhere else.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import re
import types as pytypes
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from enum import Enum
from pathlib import Path
from typing import Literal, TypeVar

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.uris import to_fs_path

from codesift.indexer.errors import CodesiftError, ConfigError, IndexBusyError, QueryError
from codesift.indexer.graph import (
    Callee,
    CallSite,
    Dependency,
    Implementation,
    Location,
    ModuleDependencies,
    Reference,
)
from codesift.indexer.model import IndexStatus, Span, Symbol
from codesift.indexer.paths import os_path
from codesift.indexer.progress import Progress
from codesift.indexer.research import Finding, ResearchResult
from codesift.indexer.search.names import SymbolHit
from codesift.indexer.search.passages import GrepResult, Passage
from codesift.indexer.search.results import SearchHit, SearchReport, SearchResult

T = TypeVar("T")

# LSP's RequestFailed: the request was valid but the server could not answer it.
REQUEST_FAILED = -32803
INDEX_BUSY = -32802  # ServerCancelled: try again later

LineText = Callable[[str, int], str | None]  # (workspace-relative path, 1-based line) → text


# ----- names: camelCase on the wire, snake_case in the engine ----------------------------


def snake(name: str) -> str:
    """``semanticWeight`` → ``semantic_weight`` (snake_case passes through)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def camel(name: str) -> str:
    """``semantic_weight`` → ``semanticWeight``."""
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def settings_overrides(options: object) -> dict[str, object]:
    """initializationOptions / workspace configuration → the engine's override layer.

    ``{"search": {"semanticWeight": 0.9}}`` → ``{"search": {"semantic_weight": 0.9}}``.
    Raises ConfigError when the shape is wrong (values are checked by load_settings).
    """
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ConfigError(f"codesift settings must be an object; got {type(options).__name__}")
    out: dict[str, object] = {}
    for section, values in options.items():
        if not isinstance(values, Mapping):
            raise ConfigError(f"codesift settings: {section!r} must be an object")
        out[snake(str(section))] = {snake(str(k)): v for k, v in values.items()}
    return out


# ----- command arguments ------------------------------------------------------------------


# The LSP ``integer`` type.
INT_MIN, INT_MAX = -(2**31), 2**31 - 1


def invalid(message: str) -> JsonRpcInvalidParams:
    """The error every malformed request answers with."""
    return JsonRpcInvalidParams(message=message)


def structure(cls: type[T], value: object, where: str = "arguments") -> T:
    """A camelCase JSON object → a frozen engine dataclass, checked field by field.

    Unknown keys, missing required keys and wrong types raise InvalidParams
    naming the offending key.
    """
    if not isinstance(value, Mapping):
        raise invalid(f"{where} must be an object; got {type(value).__name__}")
    assert dataclasses.is_dataclass(cls)
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    kwargs: dict[str, object] = {}
    for key, raw in value.items():
        name = snake(str(key))
        if name not in fields:
            allowed = ", ".join(camel(n) for n in fields)
            raise invalid(f"{where}: unknown option {key!r} (options: {allowed})")
        kwargs[name] = _value(hints[name], raw, f"{where}.{key}")
    for name, f in fields.items():
        no_default = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if no_default and name not in kwargs:
            raise invalid(f"{where}: {camel(name)!r} is required")
    return cls(**kwargs)


def _value(hint: object, raw: object, where: str) -> object:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, pytypes.UnionType):
        if raw is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _value(inner[0], raw, where)
    if origin is Literal:
        if raw not in args:
            raise invalid(f"{where} must be one of {', '.join(map(str, args))}; got {raw!r}")
        return raw
    if origin is tuple:
        items = [raw] if isinstance(raw, str) else raw
        if not isinstance(items, list):
            raise invalid(f"{where} must be a list; got {raw!r}")
        return tuple(_value(args[0], item, where) for item in items)
    if isinstance(hint, type) and issubclass(hint, Enum):
        try:
            return hint(raw)
        except ValueError:
            raise invalid(f"{where} must be one of {', '.join(str(m.value) for m in hint)}") from None
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return structure(hint, raw, where)
    if hint is bool:
        if not isinstance(raw, bool):
            raise invalid(f"{where} must be true or false; got {raw!r}")
        return raw
    if hint is int:
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise invalid(f"{where} must be an integer; got {raw!r}")
        if not INT_MIN <= raw <= INT_MAX:  # an LSP integer; the engine bounds each option further
            raise invalid(f"{where} is out of range: {raw}")
        return raw
    if hint is float:
        if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
            raise invalid(f"{where} must be a finite number; got {raw!r}")
        return float(raw)
    if hint is str:
        if not isinstance(raw, str):
            raise invalid(f"{where} must be a string; got {raw!r}")
        return raw
    raise invalid(f"{where}: unsupported option type")  # pragma: no cover


@contextlib.contextmanager
def engine_errors() -> Iterator[None]:
    """Map engine errors to JSON-RPC errors, in one place: bad input → InvalidParams."""
    try:
        yield
    except (QueryError, ConfigError) as exc:
        raise invalid(str(exc)) from exc
    except IndexBusyError as exc:
        raise JsonRpcException(str(exc), INDEX_BUSY) from exc
    except CodesiftError as exc:
        raise JsonRpcException(str(exc), REQUEST_FAILED) from exc


# ----- positions and locations --------------------------------------------------------------


def file_uri(root: Path, rel_path: str) -> str:
    """The URI of a workspace-relative path (as the index stores it: see indexer/paths.py)."""
    return (root / os_path(rel_path)).as_uri()


def line_link(root: Path, rel_path: str, line: int) -> str:
    """A Markdown link target that opens the file at the line (1-based): the absolute path,
    percent-encoded as in a file URI, with a ``#L<line>`` fragment. Not the ``file:`` URI
    itself: Markdown renderers (markdown-it in VS Code's preview) refuse that scheme."""
    return f"{file_uri(root, rel_path).removeprefix('file://')}#L{line}"


def uri_path(uri: str) -> Path | None:
    """The file-system path of a ``file:`` URI (None for other schemes)."""
    path = to_fs_path(uri)
    return None if path is None else Path(path)


def client_column(line_text: str | None, column: int, encoding: str) -> int:
    """A code-point column → the client's units (UTF-16 code units, UTF-8 bytes or code points)."""
    if line_text is None or column <= 0 or line_text.isascii() or encoding == lsp.PositionEncodingKind.Utf32:
        return max(column, 0)
    prefix = line_text[:column]
    if encoding == lsp.PositionEncodingKind.Utf8:
        return len(prefix.encode("utf-8", "surrogatepass"))
    return len(prefix.encode("utf-16-le", "surrogatepass")) // 2


def engine_column(line_text: str | None, character: int, encoding: str) -> int:
    """The client's column (UTF-16 code units, UTF-8 bytes or code points) → a code-point column."""
    if (
        line_text is None
        or character <= 0
        or line_text.isascii()
        or encoding == lsp.PositionEncodingKind.Utf32
    ):
        return max(character, 0)
    units = 0
    for i, ch in enumerate(line_text):
        if units >= character:
            return i
        units += client_column(ch, 1, encoding)
    return len(line_text) + (character - units)


def engine_position(position: lsp.Position, path: str, lines: LineText, encoding: str) -> tuple[int, int]:
    """An LSP position → the engine's (1-based line, code-point column)."""
    line = position.line + 1
    return line, engine_column(lines(path, line), position.character, encoding)


def to_range(span: Span, path: str, lines: LineText, encoding: str) -> lsp.Range:
    """An engine span (1-based lines, code-point columns) → an LSP range."""
    start, end = span.start, span.end
    first = lines(path, start.line)
    last = first if end.line == start.line else lines(path, end.line)
    return lsp.Range(
        start=lsp.Position(line=start.line - 1, character=client_column(first, start.column, encoding)),
        end=lsp.Position(line=end.line - 1, character=client_column(last, end.column, encoding)),
    )


def line_range(start_line: int, end_line: int) -> lsp.Range:
    """Whole lines ``start_line``..``end_line`` (1-based, inclusive): ends at the next line's start."""
    return lsp.Range(
        start=lsp.Position(line=start_line - 1, character=0), end=lsp.Position(line=end_line, character=0)
    )


def workspace_symbol(root: Path, sym: Symbol, lines: LineText, encoding: str) -> lsp.WorkspaceSymbol:
    """An engine symbol → a WorkspaceSymbol whose location is its name."""
    return lsp.WorkspaceSymbol(
        name=sym.name,
        kind=lsp.SymbolKind(int(sym.kind)),
        location=lsp.Location(
            uri=file_uri(root, sym.path), range=to_range(sym.selection_range, sym.path, lines, encoding)
        ),
        container_name=sym.container or None,
    )


def workspace_symbols_json(
    root: Path, symbols: Iterable[Symbol], lines: LineText, encoding: str
) -> list[dict[str, object]]:
    """``workspace_symbol`` of each symbol as the JSON object pygls writes for it (same
    keys in the same order, ``containerName`` left out when empty), built without the
    attrs objects and cattrs: a cold 100-symbol answer spent most of its conversion on
    them and on a path-to-URI per symbol (one per file here)."""
    uris: dict[str, str] = {}
    out: list[dict[str, object]] = []
    for sym in symbols:
        path = sym.path
        uri = uris.get(path)
        if uri is None:
            uri = uris[path] = file_uri(root, path)
        start, end = sym.selection_range.start, sym.selection_range.end
        first = lines(path, start.line)
        last = first if end.line == start.line else lines(path, end.line)
        begin = {"line": start.line - 1, "character": client_column(first, start.column, encoding)}
        until = {"line": end.line - 1, "character": client_column(last, end.column, encoding)}
        item: dict[str, object] = {
            "location": {"uri": uri, "range": {"start": begin, "end": until}},
            "name": sym.name,
            "kind": int(lsp.SymbolKind(int(sym.kind))),
        }
        if sym.container:
            item["containerName"] = sym.container
        out.append(item)
    return out


def location(root: Path, loc: Location, lines: LineText, encoding: str) -> lsp.Location:
    """An engine location (workspace-relative path and span) → an LSP location."""
    return lsp.Location(uri=file_uri(root, loc.path), range=to_range(loc.span, loc.path, lines, encoding))


# ----- the reference graph: call hierarchy, implementations, references ---------------------


def call_hierarchy_item(root: Path, sym: Symbol, lines: LineText, encoding: str) -> lsp.CallHierarchyItem:
    """A definition → a call hierarchy item; ``data`` names it for the follow-up requests."""
    return lsp.CallHierarchyItem(
        name=sym.name,
        kind=lsp.SymbolKind(int(sym.kind)),
        uri=file_uri(root, sym.path),
        range=to_range(sym.range, sym.path, lines, encoding),
        selection_range=to_range(sym.selection_range, sym.path, lines, encoding),
        detail=sym.container or None,
        data={"path": sym.path, "qualifiedName": sym.qualified_name},
    )


def _top_level_item(
    root: Path, path: str, sites: Sequence[Span], lines: LineText, encoding: str
) -> lsp.CallHierarchyItem:
    """A file's top-level code as a caller: the file, from its start to its last call site."""
    last = max(sites, key=lambda s: (s.end.line, s.end.column))
    end = to_range(last, path, lines, encoding).end
    start = lsp.Position(line=0, character=0)
    return lsp.CallHierarchyItem(
        name=Path(path).name,
        kind=lsp.SymbolKind.File,
        uri=file_uri(root, path),
        range=lsp.Range(start=start, end=end),
        selection_range=lsp.Range(start=start, end=start),
        detail="top-level code",
        data={"path": path, "qualifiedName": ""},
    )


def item_key(item: lsp.CallHierarchyItem) -> tuple[str, str] | None:
    """(workspace-relative path, qualified name) of an item this server made; None otherwise."""
    data = item.data
    if isinstance(data, Mapping):
        path, name = data.get("path"), data.get("qualifiedName")
        if isinstance(path, str) and isinstance(name, str):
            return path, name
    return None


def incoming_calls(
    root: Path, sites: Sequence[CallSite], lines: LineText, encoding: str
) -> list[lsp.CallHierarchyIncomingCall]:
    """Resolved callers → incoming calls, call sites as ``fromRanges`` (unresolved ones are left out)."""
    out: list[lsp.CallHierarchyIncomingCall] = []
    for site in sites:
        if not site.resolved:
            continue
        caller = (
            call_hierarchy_item(root, site.caller, lines, encoding)
            if site.caller is not None
            else _top_level_item(root, site.path, site.from_ranges, lines, encoding)
        )
        ranges = [to_range(r, site.path, lines, encoding) for r in site.from_ranges]
        out.append(lsp.CallHierarchyIncomingCall(from_=caller, from_ranges=ranges))
    return out


def outgoing_calls(
    root: Path, caller: Symbol, calls: Sequence[Callee], lines: LineText, encoding: str
) -> list[lsp.CallHierarchyOutgoingCall]:
    """Resolved callees → outgoing calls; ``fromRanges`` are the call sites inside ``caller``."""
    return [
        lsp.CallHierarchyOutgoingCall(
            to=call_hierarchy_item(root, c.callee, lines, encoding),
            from_ranges=[to_range(r, caller.path, lines, encoding) for r in c.from_ranges],
        )
        for c in calls
        if c.callee is not None
    ]


def implementation_locations(
    root: Path, impls: Sequence[Implementation], lines: LineText, encoding: str
) -> list[lsp.Location]:
    """Implementations → the locations of their names (extensions: the conformance), each once."""
    seen: set[Location] = set()
    out: list[lsp.Location] = []
    for impl in impls:
        if impl.location not in seen:
            seen.add(impl.location)
            out.append(location(root, impl.location, lines, encoding))
    return out


def reference_locations(
    root: Path, refs: Sequence[Reference], declaration: Symbol | None, lines: LineText, encoding: str
) -> list[lsp.Location]:
    """References → locations, the declaration's name first when given."""
    locs = [r.location for r in refs]
    if declaration is not None:
        locs.insert(0, Location(declaration.path, declaration.selection_range))
    return [location(root, loc, lines, encoding) for loc in locs]


# ----- command results (JSON, camelCase, with LSP locations) -------------------------------


def _report_json(report: SearchReport) -> dict[str, object]:
    return {camel(f.name): getattr(report, f.name) for f in dataclasses.fields(report)}


def hit_json(root: Path, hit: SearchHit) -> dict[str, object]:
    """One search hit: location of its lines plus text, score, sources and highlights."""
    c = hit.chunk
    return {
        "location": lsp.Location(uri=file_uri(root, c.path), range=line_range(c.start_line, c.end_line)),
        "path": c.path,
        "project": c.project,
        "startLine": c.start_line,
        "endLine": c.end_line,
        "score": hit.score,
        "matchType": hit.match_type.value,
        "sources": [s.value for s in hit.sources],
        "symbol": c.symbol,
        "kind": c.kind.value,
        "language": c.language,
        "text": c.text,
        "highlights": [list(h) for h in hit.highlights],
        "stale": hit.stale,
        "vectorModel": hit.vector_model,
    }


def search_json(found: Sequence[tuple[Path, SearchResult]], limit: int, notes: Sequence[str]) -> object:
    """Results of one search over several projects: best hits first, one merged report."""
    hits = sorted(((root, h) for root, r in found for h in r.hits), key=lambda rh: -rh[1].score)[:limit]
    reports = [r.report for _, r in found]
    per: dict[str, int] = {}
    for r in reports:
        for k, v in r.per_source.items():
            per[k] = per.get(k, 0) + v
    return {
        "hits": [hit_json(root, h) for root, h in hits],
        "report": {
            "chars": sum(len(h.chunk.text) for _, h in hits),
            "uniqueFiles": len({(root, h.chunk.path) for root, h in hits}),
            "chunks": len(hits),
            "perSource": per,
            "millis": max((r.millis.get("total", 0.0) for r in reports), default=0.0),
            "notes": [*notes, *(n for r in reports for n in r.notes)],
            "droppedByThreshold": sum(r.dropped_by_threshold for r in reports),
            "keywords": reports[0].keywords if reports else "",
            # which model's vectors ranked the vector source, per project that ran it
            "vectorModel": ", ".join(dict.fromkeys(r.vector_model for r in reports if r.vector_model)),
            "projects": [_report_json(r) for r in reports],
        },
    }


def _passage_json(root: Path, p: Passage, encoding: str) -> dict[str, object]:
    lines = p.text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    matches: list[lsp.Location] = []
    for a, b in p.highlights:
        i = max(0, next((k for k in range(len(lines)) if offsets[k + 1] > a), len(lines) - 1))
        j = max(0, next((k for k in range(len(lines)) if offsets[k + 1] > b - 1), len(lines) - 1))
        rng = lsp.Range(
            start=lsp.Position(p.start_line + i - 1, client_column(lines[i], a - offsets[i], encoding)),
            end=lsp.Position(p.start_line + j - 1, client_column(lines[j], b - offsets[j], encoding)),
        )
        matches.append(lsp.Location(uri=file_uri(root, p.path), range=rng))
    return {
        "location": lsp.Location(uri=file_uri(root, p.path), range=line_range(p.start_line, p.end_line)),
        "path": p.path,
        "startLine": p.start_line,
        "endLine": p.end_line,
        "matchLines": list(p.match_lines),
        "matches": matches,
        "text": p.text,
    }


def grep_json(found: Sequence[tuple[Path, GrepResult]], encoding: str) -> object:
    """Grep passages of every project, each with its match locations."""
    return {
        "passages": [_passage_json(root, p, encoding) for root, r in found for p in r.passages],
        "files": sum(r.files for _, r in found),
        "matches": sum(r.matches for _, r in found),
        "truncated": any(r.truncated for _, r in found),
        "reasons": [r.reason for _, r in found if r.reason],
        "millis": max((r.millis for _, r in found), default=0.0),
    }


def symbols_json(
    found: Sequence[tuple[Path, Sequence[SymbolHit]]],
    lines: Callable[[Path], LineText],
    encoding: str,
    notes: Sequence[str] = (),
) -> object:
    """Symbol hits of every project with their locations and how they matched."""
    out: list[dict[str, object]] = []
    for root, hits in found:
        for h in hits:
            s = h.symbol
            out.append(
                {
                    "name": s.name,
                    "qualifiedName": s.qualified_name,
                    "kind": lsp.SymbolKind(int(s.kind)),
                    "containerName": s.container,
                    "location": lsp.Location(
                        uri=file_uri(root, s.path), range=to_range(s.range, s.path, lines(root), encoding)
                    ),
                    "selectionRange": to_range(s.selection_range, s.path, lines(root), encoding),
                    "match": h.match.name.lower(),
                    "score": h.score,
                    "language": s.language,
                }
            )
    return {"symbols": out, "notes": list(notes)}


def status_json(statuses: Sequence[tuple[IndexStatus, str]]) -> object:
    """Index status of every project plus what the server is doing with it."""
    out: list[dict[str, object]] = []
    for st, activity in statuses:
        row = {
            camel(f.name): getattr(st, f.name)
            for f in dataclasses.fields(st)
            if f.name not in ("skipped", "failed", "notes", "remote")
        }
        row["remote"] = (
            None
            if st.remote is None
            else {
                **{camel(f.name): getattr(st.remote, f.name) for f in dataclasses.fields(st.remote)},
                "state": st.remote.state,
            }
        )
        row["skipped"] = [{"path": r.path, "reason": r.reason} for r in st.skipped[:100]]
        row["failed"] = [{"path": r.path, "reason": r.reason} for r in st.failed[:100]]
        row["activity"] = activity
        row["uri"] = Path(st.root).as_uri()
        out.append(row)
    return {"projects": out}


def _finding_json(root: Path, f: Finding) -> dict[str, object]:
    return {
        "name": f.name,
        "location": lsp.Location(uri=file_uri(root, f.path), range=line_range(f.start_line, f.end_line)),
        "path": f.path,
        "startLine": f.start_line,
        "endLine": f.end_line,
        "relation": f.relation,
        "depth": f.depth,
        "via": list(f.via),
        "sites": list(f.sites),
    }


def _dependencies_json(
    root: Path, deps: ModuleDependencies, lines: LineText, encoding: str
) -> dict[str, object]:
    def side(items: Sequence[Dependency]) -> list[dict[str, object]]:
        return [
            {
                "name": d.name,
                "paths": list(d.paths),
                "external": d.external,
                "locations": [location(root, loc, lines, encoding) for loc in d.locations],
            }
            for d in items
        ]

    return {
        "module": deps.module,
        "files": list(deps.files),
        "imports": side(deps.imports),
        "importedBy": side(deps.imported_by),
    }


def research_json(
    root: Path, project: str, result: ResearchResult, markdown: str, lines: LineText, encoding: str
) -> dict[str, object]:
    """One project's research answer: the structured result with LSP locations, plus markdown."""
    return {
        "project": project,
        "question": result.question,
        "kind": result.kind.value,
        "subject": result.subject,
        "subjects": list(result.subjects),
        "findings": [_finding_json(root, f) for f in result.findings],
        "dependencies": (
            None
            if result.dependencies is None
            else _dependencies_json(root, result.dependencies, lines, encoding)
        ),
        "notes": list(result.notes),
        "markdown": markdown,
    }


# ----- progress -----------------------------------------------------------------------------

_PHASE_SHARE = {
    "walk": (0, 1),
    "remote": (1, 2),  # copying from index.remote: seconds, its files counted in the message
    "parse": (2, 50),
    # the fast tier's catch-up (the language server's text phase writes no vectors): flat
    # at 50 %, counted in the message, so the bar never moves back when MiniLM starts
    "fast vectors": (50, 50),
    "embed": (50, 98),
    "optimize": (98, 100),
    "done": (100, 100),
}


def progress_report(p: Progress, project: str) -> lsp.WorkDoneProgressReport:
    """An engine progress tick → a report: text phase 0–50 %, vectors 50–98 %."""
    lo, hi = _PHASE_SHARE.get(p.phase, (0, 100))
    frac = p.done / p.total if p.total else 0.0
    pct = int(lo + (hi - lo) * min(max(frac, 0.0), 1.0))
    counts = f" {p.done}/{p.total}" if p.total else ""
    what = {"remote": "files copied", "parse": "files", "embed": "chunks", "fast vectors": "chunks"}.get(
        p.phase, ""
    )
    return lsp.WorkDoneProgressReport(
        message=f"{project}: {p.phase}{counts} {what}".rstrip(), percentage=pct, cancellable=True
    )

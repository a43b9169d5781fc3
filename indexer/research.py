"""``code_research``: questions answered by composing the graph and search. No LLM.

Understood questions (case-insensitive):

* ``implementations of X`` (``implementers of``, ``subclasses of``, ``impls of``)
* ``what calls X`` / ``callers of X`` / ``who calls X()`` — callers traced up the
  chain to ``depth``, each definition once (cycles cut)
* ``related to X`` — graph neighbours (callers, callees, supertypes, subtypes)
  and search hits for the name
* a question in words ("how does click format help") — search hits, each of the
  best ``WORDED_SEEDS`` definitions followed by what it calls (resolved edges only):
  how a thing is done is mostly in the code its best match calls
* ``dependencies of module M`` / ``module map of M`` — what M imports, who imports M

Anything else is read as "related to <question>".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from .embed import Embedder
from .errors import QueryError
from .graph import (
    Graph,
    ModuleDependencies,
    callees,
    callers,
    implementations,
    module_dependencies,
)
from .model import Symbol
from .search import bounds
from .search.bounds import check_int, check_query
from .search.hybrid import search
from .search.results import SearchMode, SearchRequest
from .settings import Settings
from .store import Store

MAX_DEPTH = 20  # caller chains traced at most this far
# A worded question: the best search hits whose callees are listed under them. Three
# keep the answer about the question (on click, "how does click format help" →
# Command.format_help, then format_usage, format_help_text, format_options, format_epilog).
WORDED_SEEDS = 3


class ResearchKind(StrEnum):
    IMPLEMENTATIONS = "implementations"
    CALLERS = "callers"
    RELATED = "related"
    DEPENDENCIES = "dependencies"


_PATTERNS: tuple[tuple[ResearchKind, re.Pattern[str]], ...] = (
    (
        ResearchKind.IMPLEMENTATIONS,
        re.compile(
            r"^(?:(?:all|the|find|list|show)\s+)*(?:implementations?|implementers?|impls?|subclasses|"
            r"subtypes|conformances?|conforming types)\s+(?:of|for|to)\s+(.+)$",
            re.I,
        ),
    ),
    (ResearchKind.CALLERS, re.compile(r"^(?:what|who|which functions?)\s+calls?\s+(.+)$", re.I)),
    (ResearchKind.CALLERS, re.compile(r"^(?:callers|call chain|uses)\s+(?:of|for|to)\s+(.+)$", re.I)),
    (
        ResearchKind.DEPENDENCIES,
        re.compile(
            r"^(?:dependencies|deps|imports|module map|module dependencies)\s+(?:of|for)\s+"
            r"(?:the\s+)?(?:module|package)?\s*(.+)$",
            re.I,
        ),
    ),
    (
        ResearchKind.RELATED,
        re.compile(r"^(?:related|neighbou?rs|components related)\s+(?:to|of)\s+(.+)$", re.I),
    ),
)


@dataclass(frozen=True, slots=True)
class Finding:
    """One answer: a definition (or a file's top level) with where it is and how it relates."""

    name: str  # qualified name; for top-level code the file path
    path: str
    start_line: int
    end_line: int
    relation: str  # "subclass", "extension", "caller", "callee", "supertype", "search"…
    depth: int = 1  # hops from the subject (callers: 1 = direct)
    via: tuple[str, ...] = ()  # the chain from the subject to it
    sites: tuple[int, ...] = ()  # lines of the call sites / declarations that link it


@dataclass(frozen=True, slots=True)
class ResearchResult:
    question: str
    kind: ResearchKind
    subject: str
    subjects: tuple[str, ...]  # the definitions the subject named (path:qualified name)
    findings: tuple[Finding, ...]
    dependencies: ModuleDependencies | None = None
    notes: tuple[str, ...] = ()


def parse_question(question: str) -> tuple[ResearchKind, str]:
    """The kind of question and its subject, e.g. ("callers", "login")."""
    q = question.strip().rstrip("?").strip()
    for kind, pattern in _PATTERNS:
        m = pattern.match(q)
        if m:
            subject = m.group(1).strip().strip("`'\"").strip()
            return kind, re.sub(r"\(\s*\)$", "", subject)
    return ResearchKind.RELATED, q


def code_research(
    store: Store,
    question: str,
    settings: Settings,
    *,
    root: Path,
    embedder: Embedder | None = None,
    graph: Graph | None = None,
    depth: int = 3,
    limit: int = 50,
) -> ResearchResult:
    """Answer one research question with locations; see the module docstring for the forms."""
    if not question.strip():
        raise QueryError("empty research question")
    check_int("depth", depth, 1, MAX_DEPTH)
    check_int("limit", limit, 1, bounds.MAX_LIMIT)
    check_query("question", question)
    graph = graph or Graph(store)
    kind, subject = parse_question(question)
    if kind is ResearchKind.DEPENDENCIES:
        deps = module_dependencies(graph, subject)
        missing = () if deps.files else (f"no module or directory {subject!r} in the index",)
        return ResearchResult(question, kind, subject, deps.files, (), deps, missing)
    targets = graph.find(subject)
    names = tuple(f"{s.path}:{s.qualified_name}" for s in targets)
    notes: list[str] = []
    if not targets and kind is not ResearchKind.RELATED:
        return ResearchResult(question, kind, subject, (), (), None, (f"no definition named {subject!r}",))
    if kind is ResearchKind.IMPLEMENTATIONS:
        findings = _implementations(graph, targets)
    elif kind is ResearchKind.CALLERS:
        findings, cut = _caller_chain(graph, targets, depth, limit)
        if cut:
            notes.append(f"stopped at depth {depth}; ask with a larger depth for more")
        maybe = _unresolved_callers(graph, targets, limit - len(findings))
        if maybe:
            notes.append(
                f"{sum(len(f.sites) for f in maybe)} unresolved call site(s) could be {subject!r}: "
                "their receiver's type is not stated (or names more than one definition), so they are "
                "listed apart, not counted as callers"
            )
        findings += maybe
    else:
        findings = _related(graph, targets)
        hits = _search_related(store, subject, settings, root, embedder, findings, limit)
        findings += hits if targets else _with_callees(graph, hits)
    if not any(f.relation != UNRESOLVED_CALLER for f in findings):
        notes.append(
            f"nothing resolved for {kind.value} of {subject!r}"
            if findings
            else f"nothing found for {kind.value} of {subject!r}"
        )
    return ResearchResult(question, kind, subject, names, tuple(findings[:limit]), None, tuple(notes))


def _finding(
    sym: Symbol, relation: str, depth: int = 1, via: tuple[str, ...] = (), sites: tuple[int, ...] = ()
) -> Finding:
    return Finding(
        sym.qualified_name, sym.path, sym.range.start.line, sym.range.end.line, relation, depth, via, sites
    )


def _implementations(graph: Graph, targets: list[Symbol]) -> list[Finding]:
    out: list[Finding] = []
    seen: set[tuple[str, int]] = set()
    for target in targets:
        for impl in implementations(graph, target):
            line = impl.location.span.start.line
            if (impl.location.path, line) in seen:
                continue
            seen.add((impl.location.path, line))
            if impl.symbol is not None and impl.how.value != "extension":
                out.append(_finding(impl.symbol, impl.how.value, via=(impl.of,), sites=(line,)))
            else:
                name = impl.name or "(extension)"
                out.append(
                    Finding(name, impl.location.path, line, line, impl.how.value, 1, (impl.of,), (line,))
                )
    return out


def _caller_chain(graph: Graph, targets: list[Symbol], depth: int, limit: int) -> tuple[list[Finding], bool]:
    out: list[Finding] = []
    seen: set[Symbol] = set(targets)
    seen_files: set[str] = set()
    frontier: list[tuple[Symbol, tuple[str, ...]]] = [(t, (t.qualified_name,)) for t in targets]
    cut = False
    for level in range(1, depth + 1):
        next_frontier: list[tuple[Symbol, tuple[str, ...]]] = []
        for callee, chain in frontier:
            for site in callers(graph, callee):
                lines = tuple(r.start.line for r in site.from_ranges)
                if site.caller is None:  # top-level code of a file: the chain ends there
                    if site.path not in seen_files:
                        seen_files.add(site.path)
                        out.append(
                            Finding(site.path, site.path, lines[0], lines[-1], "caller", level, chain, lines)
                        )
                    continue
                if site.caller in seen:  # a cycle, or reached by a shorter chain
                    continue
                seen.add(site.caller)
                out.append(_finding(site.caller, "caller", level, chain, lines))
                next_frontier.append((site.caller, (*chain, site.caller.qualified_name)))
                if len(out) >= limit:
                    return _chain_order(out), True
        frontier = next_frontier
        if not frontier:
            break
    else:
        cut = bool(frontier) and any(callers(graph, s) for s, _ in frontier)
    return _chain_order(out), cut


def _chain_order(findings: Sequence[Finding]) -> list[Finding]:
    """Callers found level by level, ordered as a tree: each one right after the caller
    it calls (``via`` names the chain), so every face that indents by depth shows a
    caller under its callee — not under whichever direct caller was listed last."""
    children: dict[tuple[str, ...], list[Finding]] = {}
    for f in findings:
        children.setdefault(f.via, []).append(f)
    out: list[Finding] = []
    placed: set[int] = set()

    def place(f: Finding) -> None:
        out.append(f)
        placed.add(id(f))
        for child in children.get((*f.via, f.name), []):
            if id(child) not in placed:
                place(child)

    for f in findings:
        if id(f) not in placed and f.depth == 1:
            place(f)
    out += [f for f in findings if id(f) not in placed]  # a chain whose link is not listed
    return out


#: the relation of an unresolved call site that lists the subject among its candidates
UNRESOLVED_CALLER = "unresolved caller"


def _unresolved_callers(graph: Graph, targets: list[Symbol], room: int) -> list[Finding]:
    """Calls the graph could not resolve that have a subject among their candidates, after
    the resolved chain: marked as such, never merged into it."""
    out: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    for target in targets:
        for site in callers(graph, target, include_unresolved=True):
            if site.resolved or room <= len(out):
                continue
            name = site.caller.qualified_name if site.caller is not None else site.path
            if (site.path, name) in seen:
                continue
            seen.add((site.path, name))
            lines = tuple(r.start.line for r in site.from_ranges)
            start, end = (
                (site.caller.range.start.line, site.caller.range.end.line)
                if site.caller is not None
                else (lines[0], lines[-1])
            )
            out.append(
                Finding(name, site.path, start, end, UNRESOLVED_CALLER, 1, (target.qualified_name,), lines)
            )
    return out


def _related(graph: Graph, targets: list[Symbol]) -> list[Finding]:
    out: list[Finding] = []
    seen: set[Symbol] = set(targets)

    def add(sym: Symbol | None, relation: str, sites: tuple[int, ...] = ()) -> None:
        if sym is not None and sym not in seen:
            seen.add(sym)
            out.append(_finding(sym, relation, sites=sites))

    for t in targets:
        for base in graph.resolver.bases(t):
            add(base, "supertype")
        for impl in implementations(graph, t):
            add(impl.symbol, impl.how.value)
        for site in callers(graph, t):
            add(site.caller, "caller", tuple(r.start.line for r in site.from_ranges))
        for c in callees(graph, t):
            add(c.callee, "callee", tuple(r.start.line for r in c.from_ranges))
    return out


def _search_related(
    store: Store,
    subject: str,
    settings: Settings,
    root: Path,
    embedder: Embedder | None,
    already: list[Finding],
    limit: int,
) -> list[Finding]:
    mode: SearchMode = "hybrid" if embedder is not None else "bm25"
    result = search(
        store, SearchRequest(subject, mode=mode, limit=min(limit, 10)), settings, root=root, embedder=embedder
    )
    have = {(f.path, f.start_line) for f in already}
    out: list[Finding] = []
    for hit in result.hits:
        c = hit.chunk
        if (c.path, c.start_line) in have:
            continue
        out.append(Finding(c.symbol or c.path, c.path, c.start_line, c.end_line, "search"))
    return out


def _with_callees(graph: Graph, hits: list[Finding]) -> list[Finding]:
    """Search hits for a worded question, each of the first ``WORDED_SEEDS`` definitions
    followed by its resolved callees (depth 2, ``via`` the hit), each definition once."""
    out: list[Finding] = []
    seen = {(h.path, h.start_line) for h in hits}
    seeds = 0
    for hit in hits:
        out.append(hit)
        if seeds >= WORDED_SEEDS:
            continue
        sym = next(
            (s for s in graph.find(hit.name) if s.path == hit.path and s.range.start.line == hit.start_line),
            None,
        )
        if sym is None:
            continue
        seeds += 1
        for c in callees(graph, sym):
            callee = c.callee
            if callee is None or (callee.path, callee.range.start.line) in seen:
                continue
            seen.add((callee.path, callee.range.start.line))
            sites = tuple(r.start.line for r in c.from_ranges)
            out.append(_finding(callee, "callee", depth=2, via=(hit.name,), sites=sites))
    return out


def render_markdown(result: ResearchResult, link: Callable[[str, int], str] | None = None) -> str:
    """A readable answer: a heading, the subject's definitions, then findings with locations.

    ``link(path, line)``, when given, makes each location a Markdown link to that target (an
    editor's rendered view opens the code there); without it locations are plain text."""

    def at(path: str, line: int, shown: str | None = None) -> str:
        text = shown or f"{path}:{line}"
        return f"[{text}]({link(path, line)})" if link else text

    lines = [f"# {result.kind.value.capitalize()}: {result.subject}", ""]
    if result.subjects and result.kind is not ResearchKind.DEPENDENCIES:
        lines.append("Defined at: " + ", ".join(f"`{s}`" for s in result.subjects))
        lines.append("")
    if result.dependencies is not None:
        deps = result.dependencies
        lines.append(f"Files: {len(deps.files)}")
        lines += ["", "## Imports", ""]
        for d in deps.imports:
            where = ", ".join(at(loc.path, loc.span.start.line) for loc in d.locations[:5])
            what = "external" if d.external else ", ".join(d.paths[:3])
            lines.append(f"- `{d.name}` ({what}) — {where}")
        lines += ["", "## Imported by", ""]
        for d in deps.imported_by:
            where = ", ".join(at(loc.path, loc.span.start.line) for loc in d.locations[:5])
            lines.append(f"- `{d.name}` — {where}")
    elif result.kind is ResearchKind.CALLERS:
        maybe = [f for f in result.findings if f.relation == UNRESOLVED_CALLER]
        for f in result.findings:
            if f.relation == UNRESOLVED_CALLER:
                continue
            indent = "  " * (f.depth - 1)
            sites = ", ".join(at(f.path, n, str(n)) for n in f.sites)
            lines.append(f"{indent}- `{f.name}` — {at(f.path, f.start_line)} (calls at line {sites})")
        if maybe:
            lines += ["", "## Unresolved calls that could be it", ""]
            for f in maybe:
                sites = ", ".join(at(f.path, n, str(n)) for n in f.sites)
                where = at(f.path, f.start_line)
                lines.append(f"- (unresolved) `{f.name}` — {where} (calls at line {sites})")
    else:
        for f in result.findings:
            via = f", called by `{f.via[-1]}`" if f.via and f.relation == "callee" else ""
            via = via or (f" via `{f.via[-1]}`" if f.via else "")
            span = at(f.path, f.start_line, f"{f.path}:{f.start_line}-{f.end_line}")
            indent = "  " * (f.depth - 1)
            lines.append(f"{indent}- **{f.relation}** `{f.name}` — {span}{via}")
    for note in result.notes:
        lines += ["", f"> {note}"]
    return "\n".join(lines).rstrip() + "\n"

"""The reference-graph tools for agents: find_callers, find_implementations, code_research.

They share one :class:`Graph` per root, kept beside the cached store; it refreshes
itself from the index before each question."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

from pydantic import Field

from codesift.indexer.errors import (
    CodesiftError,
    IndexMissingError,
    QueryError,
    StoreError,
)
from codesift.indexer.graph import CallSite, Graph, Implementation, callers, implementations
from codesift.indexer.model import Symbol
from codesift.indexer.research import code_research as run_research
from codesift.indexer.research import render_markdown
from codesift.indexer.search.symbols import SymbolIndex, find_symbols
from codesift.indexer.settings import Settings
from codesift.indexer.store import Store

from .mcp_answer import (
    Block,
    Page,
    caller_block,
    implementation_block,
    page_answer,
    plural,
    text_answer,
)
from .mcp_base import (
    MAX_CALLER_DEPTH,
    MAX_GRAPH_RESULTS,
    MAX_LIMIT,
    DefinitionNotFound,
    Offset,
    ToolsBase,
    _answer,
    _check_page,
    error_line,
)

log = logging.getLogger(__name__)


class GraphTools(ToolsBase):
    """The graph tools, over the cached stores and graphs of ToolsBase."""

    def _graphs(self) -> tuple[list[tuple[Path, Settings, Store, SymbolIndex]], list[str]]:
        """The indexed roots (with their settings and stores) and notes for the others."""
        found: list[tuple[Path, Settings, Store, SymbolIndex]] = []
        failures: list[CodesiftError] = []
        for root in self.roots:
            settings = self.workspaces.settings(root)
            try:
                store, index = self.workspaces.store(root, settings)
            except (IndexMissingError, StoreError) as exc:
                failures.append(exc)
                continue
            found.append((root, settings, store, index))
        if not found:
            raise failures[0]
        return found, [error_line(f) for f in failures]

    def _definitions(self, name: str) -> tuple[list[tuple[Path, Graph, threading.Lock, Symbol]], list[str]]:
        """The definitions ``name`` means in every indexed root; DefinitionNotFound (with the
        nearest names symbol search knows) when there is none."""
        if not name.strip():
            raise QueryError("name must not be empty")
        roots, notes = self._graphs()
        found: list[tuple[Path, Graph, threading.Lock, Symbol]] = []
        for root, _, store, _ in roots:
            graph, lock = self.workspaces.graph(root, store)
            with lock:
                found += [(root, graph, lock, s) for s in graph.find(name)]
        if not found:
            near: list[str] = []
            for root, _, store, index in roots:
                for h in find_symbols(store, name, limit=5, index=index):
                    s = h.symbol
                    near.append(f"{s.qualified_name} ({self.cite(root, s.path)}:{s.range.start.line})")
            hint = f"; nearest names: {', '.join(near[:5])}" if near else ""
            raise DefinitionNotFound(
                f"no definition named {name!r} in the index{hint}; symbol_search finds definitions "
                "by partial name"
            )
        if len(found) > 1 or notes:
            defs = "; ".join(
                f"{self.cite(root, s.path)}:{s.range.start.line} {s.kind.name.lower()} {s.qualified_name}"
                for root, _, _, s in found[:8]
            )
            more = f" and {len(found) - 8} more" if len(found) > 8 else ""
            notes.insert(0, f"{name!r} names {plural(len(found), 'definitions')}: {defs}{more}")
        return found, notes

    def _source(self, root: Path, rel: str) -> Callable[[int], str | None]:
        """A file's line by number (1-based), from disk; None when unreadable."""
        lines: list[str] | None = None

        def line(n: int) -> str | None:
            nonlocal lines
            if lines is None:
                try:
                    lines = (root / rel).read_text(encoding="utf-8", errors="replace").split("\n")
                except OSError:
                    lines = []
            return lines[n - 1] if 0 < n <= len(lines) else None

        return line

    def _graph_page(
        self,
        tool: str,
        blocks: list[Block],
        total: int,
        notes: list[str],
        page: tuple[int, int],
        unit: str,
        hint: str,
    ) -> str:
        """One page (``limit``, ``offset``) of ``total`` results as an answer."""
        limit, offset = page
        return page_answer(
            tool,
            Page(blocks, offset, limit, max(0, total - offset - limit), total=total),
            notes,
            budget=self.budget,
            unit=unit,
            hint=hint,
        )

    @_answer
    def find_callers(
        self,
        name: Annotated[
            str,
            Field(
                description="The called definition: a name or qualified name ('validate', "
                "'AuthService.login', 'json.loads')."
            ),
        ],
        depth: Annotated[
            int,
            Field(
                description=f"Follow callers of callers this many levels, 1-{MAX_CALLER_DEPTH} (default 1: "
                "direct callers only)."
            ),
        ] = 1,
        include_unresolved: Annotated[
            bool,
            Field(
                description="Also list possible callers whose call could not be resolved but may be to "
                "it, marked UNRESOLVED (default false)."
            ),
        ] = False,
        limit: Annotated[
            int | None, Field(description=f"Callers per answer, 1-{MAX_LIMIT} (default 20).")
        ] = None,
        offset: Offset = 0,
    ) -> str:
        """Who calls a definition: each calling function or method (or a file's top-level code) with
        path:start-end and its call sites quoted by line.

        Calls are resolved through imports, classes and receivers; a call whose
        target could not be resolved is only listed with include_unresolved and
        then marked UNRESOLVED (a possible caller, not a certain one). With
        depth > 1 the callers of the callers follow, each definition once."""
        limit = 20 if limit is None else limit
        _check_page(limit, offset)
        if not 1 <= depth <= MAX_CALLER_DEPTH:
            raise QueryError(f"depth must be between 1 and {MAX_CALLER_DEPTH}; got {depth}")
        targets, notes = self._definitions(name)
        found: list[tuple[Path, CallSite, str, int]] = []
        hidden = 0
        for root, graph, lock, target in targets:
            with lock:
                seen: set[Symbol] = {t for r, _, _, t in targets if r == root}
                listed: set[tuple[str, str, str]] = set()
                frontier = [target]
                for level in range(1, depth + 1):
                    following: list[Symbol] = []
                    for callee in frontier:
                        for site in callers(graph, callee, include_unresolved=True):
                            if not site.resolved and not include_unresolved:
                                hidden += 1
                                continue
                            if site.caller is not None and site.caller in seen and site.resolved:
                                continue
                            key = (
                                site.path,
                                site.caller.qualified_name if site.caller else "",
                                callee.qualified_name,
                            )
                            if key in listed:
                                continue
                            listed.add(key)
                            found.append((root, site, callee.qualified_name, level))
                            if site.caller is not None and site.resolved:
                                seen.add(site.caller)
                                following.append(site.caller)
                    frontier = following[:MAX_GRAPH_RESULTS]
                    if not frontier or len(found) >= MAX_GRAPH_RESULTS:
                        break
        found.sort(key=lambda f: (not f[1].resolved, f[3]))  # certain first, then by depth
        if hidden:
            notes.append(
                f"{plural(hidden, 'possible callers')} whose calls could not be resolved not shown: "
                "include_unresolved=true lists them (marked UNRESOLVED)"
            )
        if any(not site.resolved for _, site, _, _ in found):
            notes.append(
                "entries marked UNRESOLVED are possible callers only: the name matches, "
                "the target is uncertain"
            )
        if not found:
            certain = "resolved " if hidden else ""
            notes.append(f"no {certain}calls to {name!r} found in the index")
        blocks = [
            caller_block(
                offset + i + 1,
                self.cite(root, site.path),
                site,
                callee,
                level,
                self._source(root, site.path),
            )
            for i, (root, site, callee, level) in enumerate(found[offset : offset + limit])
        ]
        return self._graph_page(
            "find_callers",
            blocks,
            len(found),
            notes,
            (limit, offset),
            "callers",
            "or name a qualified definition (Class.method) to narrow it",
        )

    @_answer
    def find_implementations(
        self,
        name: Annotated[
            str,
            Field(
                description="A class, interface, protocol or trait ('Shape', 'io.Reader'), or a method "
                "('Shape.area') for its overrides."
            ),
        ],
        limit: Annotated[
            int | None, Field(description=f"Implementations per answer, 1-{MAX_LIMIT} (default 20).")
        ] = None,
        offset: Offset = 0,
    ) -> str:
        """What implements a type: subclasses and implementers (transitively), Swift extensions and Rust
        impls adding a conformance, Python Protocol and Go interface structural implementers; for a method,
        its overrides.

        Each result cites path:start-end, how it implements (subclass, extension, override,
        structural, method-set), the supertype it implements and its declaration line."""
        limit = 20 if limit is None else limit
        _check_page(limit, offset)
        targets, notes = self._definitions(name)
        found: list[tuple[Path, Implementation]] = []
        seen: set[tuple[Path, str, int]] = set()
        for root, graph, lock, target in targets:
            with lock:
                impls = implementations(graph, target)
            for impl in impls:
                key = (root, impl.location.path, impl.location.span.start.line)
                if key not in seen:
                    seen.add(key)
                    found.append((root, impl))
        if not found:
            kinds = ", ".join(sorted({t.kind.name.lower() for _, _, _, t in targets}))
            notes.append(f"nothing in the index implements, extends or overrides {name!r} ({kinds})")
        blocks = [
            implementation_block(
                offset + i + 1,
                self.cite(root, impl.location.path),
                impl,
                self._source(root, impl.location.path),
            )
            for i, (root, impl) in enumerate(found[offset : offset + limit])
        ]
        return self._graph_page(
            "find_implementations",
            blocks,
            len(found),
            notes,
            (limit, offset),
            "implementations",
            "or ask about a more specific type",
        )

    @_answer
    def code_research(
        self,
        question: Annotated[
            str,
            Field(
                description="'implementations of X', 'what calls X' / 'callers of X', 'related to X', "
                "'dependencies of module M'; anything else is read as 'related to <question>'."
            ),
        ],
        depth: Annotated[
            int,
            Field(description=f"How far caller chains are followed, 1-{MAX_CALLER_DEPTH} (default 3)."),
        ] = 3,
    ) -> str:
        """Answers a structural question by composing the reference graph and search (no LLM):
        implementations, caller chains, related components, module dependencies.

        The answer is markdown: the subject's definitions, then findings with
        path:line (callers indented by depth). Use find_callers or
        find_implementations to page through long lists."""
        if not question.strip():
            raise QueryError("question must not be empty")
        if not 1 <= depth <= MAX_CALLER_DEPTH:
            raise QueryError(f"depth must be between 1 and {MAX_CALLER_DEPTH}; got {depth}")
        roots, notes = self._graphs()
        items: list[str] = []
        findings = 0
        files: set[tuple[Path, str]] = set()
        for root, settings, store, _ in roots:
            embedder = self._embedder_for("hybrid", settings, notes)
            graph, lock = self.workspaces.graph(root, store)
            with lock:
                result = run_research(
                    store, question, settings, root=root, embedder=embedder, graph=graph, depth=depth
                )
            findings += len(result.findings)
            files |= {(root, f.path) for f in result.findings}
            if result.dependencies is not None:
                deps = result.dependencies
                findings += len(deps.imports) + len(deps.imported_by)
                files |= {(root, loc.path) for d in (*deps.imports, *deps.imported_by) for loc in d.locations}
            text = render_markdown(result)
            if len(self.roots) > 1:
                text = f"## root {root}\n\n{text}\n"
            items += [line + "\n" for line in text.rstrip("\n").split("\n")]
        total = len(items)

        def summary(chars: int, shown: int) -> str:
            span = "" if shown == total else f"; {shown:,} of {total:,} lines shown"
            return (
                f"[code_research] {plural(findings, 'findings')} from {plural(len(files), 'unique files')}, "
                f"{plural(chars, 'characters')} (budget {self.budget:,}){span}"
            )

        return text_answer(
            summary,
            notes,
            items,
            budget=self.budget,
            unit="lines",
            hint="ask a narrower question, or page with find_callers / find_implementations (offset)",
        )

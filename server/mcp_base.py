"""Shared pieces of the MCP tools: configuration, argument types, error lines,
the per-root cache of stores, graphs and embedders, and the tools' common base."""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal, ParamSpec

from mcp.types import CallToolResult, TextContent
from pydantic import Field

from codesift.indexer.embed import Embedder, make_embedder
from codesift.indexer.errors import (
    CodesiftError,
    ConfigError,
    EmbedError,
    IndexMissingError,
    QueryError,
    StoreError,
)
from codesift.indexer.files import FileAccessError
from codesift.indexer.graph import Graph
from codesift.indexer.model import ChunkKind
from codesift.indexer.search.results import Filters, SearchMode
from codesift.indexer.search.symbols import SymbolIndex
from codesift.indexer.settings import EmbedSettings, Settings, load_settings
from codesift.indexer.store import Store
from codesift.indexer.sync import open_store

log = logging.getLogger(__name__)

DEFAULT_BUDGET = 20_000
MIN_BUDGET = 2_000
MAX_LIMIT = 100
MAX_OFFSET = 1_000
MAX_HOPS = 3
MAX_CALLER_DEPTH = 5
MAX_GRAPH_RESULTS = 1_000  # callers / implementations gathered before paging


ChunkKindName = Literal["function", "method", "class", "block", "window"]
CaseName = Literal["smart", "sensitive", "insensitive"]

Include = Annotated[
    list[str] | None,
    Field(description="Only paths matching one of these gitignore-style globs, e.g. 'src/auth/**', '*.py'."),
]
Exclude = Annotated[
    list[str] | None, Field(description="Never paths matching these globs, e.g. '**/tests/**'.")
]
Languages = Annotated[
    list[str] | None, Field(description="Only these languages, e.g. ['python', 'typescript', 'go'].")
]
Kinds = Annotated[
    list[ChunkKindName] | None,
    Field(description="Only chunks of these kinds (function, method, class, block, window)."),
]
Limit = Annotated[
    int | None,
    Field(description=f"Results per answer, 1-{MAX_LIMIT} (default: the search.agent_limit setting, 10)."),
]
Offset = Annotated[int, Field(description=f"Skip this many results, to page on (0-{MAX_OFFSET}; default 0).")]
Projects = Annotated[
    list[str] | None,
    Field(description="Only these projects (workspace roots by folder name), e.g. ['api']; default: all."),
]

P = ParamSpec("P")


@dataclass(frozen=True, slots=True)
class McpConfig:
    """What ``codesift mcp`` was started with."""

    roots: tuple[Path, ...]  # workspace roots: searched, and readable by read_file
    allow_roots: tuple[Path, ...] = ()  # further folders read_file may read
    budget: int = DEFAULT_BUDGET  # most characters in one answer

    def __post_init__(self) -> None:
        if not self.roots:
            raise ConfigError("the MCP server needs at least one workspace root")
        if self.budget < MIN_BUDGET:
            raise ConfigError(f"the answer budget must be at least {MIN_BUDGET} characters")


class DefinitionNotFound(QueryError):
    """No definition has the name a graph tool was asked about."""


def error_line(exc: CodesiftError) -> str:
    """The one place engine errors become ``[ERROR: CODE] reason``."""
    if isinstance(exc, FileAccessError):
        code = exc.code.value
    elif isinstance(exc, DefinitionNotFound):
        code = "NOT_FOUND"
    elif isinstance(exc, IndexMissingError):
        code = "INDEX_MISSING"
    elif isinstance(exc, QueryError):
        code = "INVALID_ARGUMENT"
    elif isinstance(exc, ConfigError):
        code = "CONFIG"
    elif isinstance(exc, EmbedError):
        code = "EMBEDDING_UNAVAILABLE"
    elif isinstance(exc, StoreError):
        code = "INDEX_UNREADABLE"
    else:
        code = "ENGINE"
    return f"[ERROR: {code}] {exc}"


def _answer(fn: Callable[P, str]) -> Callable[P, CallToolResult]:
    """Run a tool body; its text becomes the answer, an error an ``[ERROR: …]`` answer."""

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> CallToolResult:
        try:
            text = fn(*args, **kwargs)
        except CodesiftError as exc:
            text = error_line(exc)
        except Exception as exc:  # a bug must still answer, not hang the agent
            log.exception("tool %s failed", fn.__name__)
            text = f"[ERROR: INTERNAL] {type(exc).__name__}: {exc}"
        return CallToolResult(
            content=[TextContent(type="text", text=text)], is_error=text.startswith("[ERROR:")
        )

    return run


def _check_page(limit: int, offset: int) -> None:
    if not 1 <= limit <= MAX_LIMIT:
        raise QueryError(f"limit must be between 1 and {MAX_LIMIT}; got {limit}")
    if not 0 <= offset <= MAX_OFFSET:
        raise QueryError(f"offset must be between 0 and {MAX_OFFSET}; got {offset}")


def _filters(
    include: Sequence[str] | None,
    exclude: Sequence[str] | None,
    languages: Sequence[str] | None,
    kinds: Sequence[str] | None = None,
) -> Filters:
    try:
        chunk_kinds = tuple(ChunkKind(k) for k in kinds or ())
    except ValueError as exc:
        raise QueryError(f"{exc}; kinds are {', '.join(k.value for k in ChunkKind)}") from exc
    return Filters(
        include=tuple(include or ()),
        exclude=tuple(exclude or ()),
        languages=tuple(languages or ()),
        kinds=chunk_kinds,
    )


@dataclass
class _Workspaces:
    """Settings, stores and embedders of the workspace roots, opened on first use."""

    roots: tuple[Path, ...]
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stores: dict[Path, tuple[Store, SymbolIndex]] = field(default_factory=dict)
    _graphs: dict[Path, tuple[Store, Graph, threading.Lock]] = field(default_factory=dict)
    _embedders: dict[EmbedSettings, Embedder] = field(default_factory=dict)

    def settings(self, root: Path) -> Settings:
        return load_settings(root)

    def store(self, root: Path, settings: Settings) -> tuple[Store, SymbolIndex]:
        """The root's index; IndexMissingError (saying how to build it) when there is none."""
        with self._lock:
            cached = self._stores.get(root)
        if cached is not None and cached[0].read_meta() is not None:
            return cached
        store = open_store(root, settings)
        opened = (store, SymbolIndex(store))
        with self._lock:
            self._stores[root] = opened
        return opened

    def graph(self, root: Path, store: Store) -> tuple[Graph, threading.Lock]:
        """The root's reference graph (one per store; it follows the index) and the lock its users hold."""
        with self._lock:
            held = self._graphs.get(root)
            if held is None or held[0] is not store:
                held = self._graphs[root] = (store, Graph(store), threading.Lock())
            return held[1], held[2]

    def embedder(self, settings: Settings) -> Embedder:
        with self._lock:
            found = self._embedders.get(settings.embed)
            if found is None:
                # queries only: no pre-packed weights (OnnxEmbedder)
                found = self._embedders[settings.embed] = make_embedder(settings.embed, prepack=False)
            return found


class ToolsBase:
    """What every tool needs: the roots, the cached workspaces, the budget, citing paths."""

    def __init__(self, config: McpConfig) -> None:
        self.config = config
        self.roots = tuple(Path(os.path.realpath(r)) for r in config.roots)
        self.readable = (*self.roots, *(Path(os.path.realpath(r)) for r in config.allow_roots))
        self.workspaces = _Workspaces(self.roots)
        self.budget = config.budget

    # ----- helpers ------------------------------------------------------------------

    def cite(self, root: Path, rel: str) -> str:
        """How answers name a file: relative to the root when there is one root, else absolute."""
        return rel if len(self.roots) == 1 else str(root / rel)

    def roots_named(self, projects: Sequence[str] | None) -> tuple[Path, ...]:
        """The roots a ``projects`` filter selects (all without one); an unknown name is an
        INVALID_ARGUMENT answer listing the projects there are."""
        if not projects:
            return self.roots
        names = {root.name for root in self.roots}
        unknown = [p for p in projects if p not in names]
        if unknown:
            raise QueryError(
                f"argument 'projects': no project named {', '.join(map(repr, unknown))}; "
                f"the projects are {', '.join(sorted(names))}"
            )
        return tuple(root for root in self.roots if root.name in projects)

    def agent_limit(self) -> int:
        return int(self.workspaces.settings(self.roots[0]).search.agent_limit)

    def _embedder_for(self, mode: SearchMode, settings: Settings, notes: list[str]) -> Embedder | None:
        if mode not in ("hybrid", "vector"):
            return None
        try:
            return self.workspaces.embedder(settings)
        except EmbedError as exc:
            if mode == "vector":
                raise
            notes.append(f"semantic search unavailable, BM25 and grep answered alone: {exc}")
            return None

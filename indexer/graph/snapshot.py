"""The symbols and edges of an index, in memory, kept in step with the store.

The store holds edges as written (``to_name``), never resolved: resolution
depends on other files (what they define, what they re-export), so a stored
answer would go stale whenever a target file changed. The snapshot reloads
only the files whose ``files`` row (the commit marker, written last) changed,
then the resolver answers from memory.
"""

from __future__ import annotations

import logging
import posixpath
import threading
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from ..heap import release_memory
from ..languages.bindings import IN, IS, SEPARATOR, WITH
from ..model import Edge, EdgeKind, FileStatus, Symbol, SymbolKind
from ..rows import edges_from_table, symbols_from_table
from ..store import EDGES, FILES, SYMBOLS, Store, in_filters

log = logging.getLogger(__name__)

#: symbol kinds that hold members and take part in inheritance
TYPE_KINDS = frozenset(
    {SymbolKind.CLASS, SymbolKind.INTERFACE, SymbolKind.STRUCT, SymbolKind.ENUM, SymbolKind.OBJECT}
)
CALLABLE_KINDS = frozenset({SymbolKind.FUNCTION, SymbolKind.METHOD, SymbolKind.CONSTRUCTOR})
_VALUE_KINDS = frozenset({SymbolKind.VARIABLE, SymbolKind.CONSTANT, SymbolKind.FIELD, SymbolKind.PROPERTY})
_FULL_RELOAD = 300  # more changed files than this: read whole tables


@dataclass(slots=True)
class FileGraph:
    """One file's definitions and references."""

    path: str
    language: str
    content_hash: str
    symbols: list[Symbol] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)


def python_module(path: str) -> str:
    """``pkg/sub/mod.py`` → ``pkg.sub.mod``; ``pkg/__init__.py`` → ``pkg``."""
    stem = path.rsplit(".", 1)[0] if path.endswith((".py", ".pyi", ".pyw")) else path
    parts = stem.split("/")
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def package_module(path: str, packages: set[str]) -> str:
    """A Python file's module name from its package root: the highest directory of an
    unbroken chain of packages (``__init__.py``) above it. ``src/click/core.py`` with
    ``src/click/__init__.py`` → ``click.core``; a file outside packages → its path."""
    parts = python_module(path).split(".")
    dirs = path.split("/")[:-1]
    top = len(dirs)
    while top > 0 and "/".join(dirs[:top]) in packages:
        top -= 1
    if top == len(dirs) and posixpath.basename(path) != "__init__.py":
        top = 0  # not in a package: the path-based name
    return ".".join(parts[top:]) or parts[-1]


def module_key(path: str) -> str:
    """A file's path without its extension (``src/a.ts`` → ``src/a``): how JS, Rust, C name modules."""
    head, dot, ext = path.rpartition(".")
    return head if dot and "/" not in ext else path


class Snapshot:
    """Every file's symbols and edges, with the lookups resolution needs."""

    def __init__(self, store: Store | None) -> None:
        self.store = store
        self.files: dict[str, FileGraph] = {}
        self.generation = 0  # bumped whenever the content changes
        self._files_version: int | None = None
        self._lock = threading.Lock()
        self._reset_lookups()

    # ----- loading ---------------------------------------------------------------

    def refresh(self) -> bool:
        """Reload the files that changed since the last call; True when anything did."""
        if self.store is None:
            return False
        with self._lock:
            version = self.store.table(FILES).version
            if version == self._files_version:
                return False
            rows = (
                self.store.table(FILES)
                .to_arrow()
                .select(["path", "language", "content_hash", "status"])
                .to_pylist()
            )
            want = {
                str(r["path"]): (str(r["language"] or ""), str(r["content_hash"] or ""))
                for r in rows
                if r["status"] == str(FileStatus.INDEXED)
            }
            gone = [p for p in self.files if p not in want]
            changed = [
                p for p, (_, h) in want.items() if p not in self.files or self.files[p].content_hash != h
            ]
            for p in gone:
                del self.files[p]
            if changed:
                self._load(changed, want)
            self._files_version = version
            if gone or changed:
                self.generation += 1
                self._reset_lookups()
                self._build_lookups()
                if len(changed) > _FULL_RELOAD:  # the columns and old lookups: ~180 MiB on the stdlib
                    release_memory(collect=False)
                return True
            return False

    @classmethod
    def of(cls, files: Iterable[FileGraph]) -> Snapshot:
        """A snapshot of given files, with no store behind it (tests, one-off tools)."""
        snap = cls(None)
        snap.files = {f.path: f for f in files}
        snap.generation = 1
        snap._build_lookups()
        return snap

    def _load(self, paths: Sequence[str], want: dict[str, tuple[str, str]]) -> None:
        assert self.store is not None
        fresh = {p: FileGraph(p, want[p][0], want[p][1]) for p in paths}
        if len(paths) > _FULL_RELOAD:  # the symbols are the symbol index's own objects
            self._fill(fresh, self.store.all_symbols(), self.store.table(EDGES).to_arrow())
        else:
            for flt in in_filters("path", list(paths)):
                sym_rows = self.store.table(SYMBOLS).search().where(flt).limit(None).to_arrow()
                edge_rows = self.store.table(EDGES).search().where(flt).limit(None).to_arrow()
                self._fill(fresh, symbols_from_table(sym_rows), edge_rows)
        self.files.update(fresh)

    @staticmethod
    def _fill(fresh: dict[str, FileGraph], symbols: Iterable[Symbol], edge_rows: pa.Table) -> None:
        for sym in symbols:
            fg = fresh.get(sym.path)
            if fg is not None:
                fg.symbols.append(sym)
        for e in edges_from_table(edge_rows):
            fg = fresh.get(e.path)
            if fg is not None:
                fg.edges.append(e)

    # ----- lookups ---------------------------------------------------------------

    def _reset_lookups(self) -> None:
        self.by_name: dict[str, list[Symbol]] = defaultdict(list)
        self.by_qname: dict[tuple[str, str], Symbol] = {}
        self.members: dict[tuple[str, str], list[Symbol]] = defaultdict(list)
        # members whose container has no symbol in their file: impl / extension / Go receiver methods
        self.detached: dict[str, list[Symbol]] = defaultdict(list)
        self.edges_by_last: dict[str, list[Edge]] = defaultdict(list)
        self.edges_from: dict[tuple[str, str], list[Edge]] = defaultdict(list)
        # inherit / implement edges by the scope that declares them (extensions, impls included)
        self.edges_by_scope: dict[str, list[Edge]] = defaultdict(list)
        self.imports: dict[str, dict[str, list[Edge]]] = {}
        self.star_imports: dict[str, list[Edge]] = defaultdict(list)
        self.imports_by_name: dict[str, list[Edge]] = defaultdict(list)  # import edges by imported name
        self.python_modules: dict[str, str] = {}
        self.module_names: dict[str, str] = {}  # path → its dotted name from the package root
        self.module_suffixes: dict[str, list[str]] = defaultdict(list)
        self.module_keys: dict[str, str] = {}
        self.dirs: dict[str, list[str]] = defaultdict(list)
        # typed bindings (see languages/bindings.py): (path, scope, name) → the marked edges;
        # scope is the class for ``self.x`` (name ``self.x``), the function for ``return``
        self.bindings: dict[tuple[str, str, str], list[Edge]] = defaultdict(list)
        # attribute name → the (path, class or extension scope) that type it
        self.attributes: dict[str, list[tuple[str, str]]] = defaultdict(list)

    def _build_lookups(self) -> None:
        packages = {posixpath.dirname(p) for p in self.files if posixpath.basename(p) == "__init__.py"}
        rooted_paths: dict[str, list[str]] = defaultdict(list)
        for fg in self.files.values():
            path = fg.path
            self.dirs[posixpath.dirname(path)].append(path)
            self.module_keys[module_key(path)] = path
            if fg.language == "python":
                mod = python_module(path)
                self.python_modules[mod] = path
                rooted = package_module(path, packages)
                self.module_names[path] = rooted
                if rooted != mod:
                    rooted_paths[rooted].append(path)
                parts = mod.split(".")
                for i in range(1, len(parts)):
                    self.module_suffixes[".".join(parts[i:])].append(path)
            qnames = set()
            for s in fg.symbols:
                self.by_name[s.name].append(s)
                qnames.add(s.qualified_name)
                self.by_qname.setdefault((path, s.qualified_name), s)
            for s in fg.symbols:
                if s.container:
                    self.members[(path, s.container)].append(s)
                    if s.container not in qnames:
                        self.detached[s.container].append(s)
            binds: dict[str, list[Edge]] = defaultdict(list)
            for e in fg.edges:
                self.edges_from[(path, e.from_symbol)].append(e)
                if e.kind is EdgeKind.IMPORT:
                    if e.to_name not in ("", "*"):
                        self.imports_by_name[e.to_name].append(e)
                    if e.alias == "*":
                        self.star_imports[path].append(e)
                    elif e.alias:
                        binds[e.alias].append(e)
                else:
                    if e.alias:
                        for key in self._binding_keys(e):
                            self.bindings[key].append(e)
                    self.edges_by_last[e.last_name].append(e)
                    if e.kind in (EdgeKind.INHERIT, EdgeKind.IMPLEMENT):
                        self.edges_by_scope[e.from_symbol].append(e)
            self.imports[path] = dict(binds)
        for rooted, paths in rooted_paths.items():  # `import click.core` for src/click/core.py
            if len(paths) == 1:
                self.python_modules.setdefault(rooted, paths[0])

    def _binding_keys(self, e: Edge) -> list[tuple[str, str, str]]:
        """Where a marked edge's bindings live (one edge may type several names, ``ctx;self.ctx``):
        ``self.x`` on the class (its own body, or the class around the method that assigns
        it), the rest on the edge's own scope."""
        here = self.binding_scope(e.path, e.from_symbol)
        out = []
        for label in e.alias.removeprefix(WITH).removeprefix(IS).removeprefix(IN).split(SEPARATOR):
            scope, _, name = label.rpartition(">")  # `C.run>param`: a name of another scope
            if not _:
                scope = here
            if name.startswith("self."):
                owner = self.by_qname.get((e.path, scope))
                if owner is not None and owner.kind not in TYPE_KINDS:
                    scope = scope.rpartition(".")[0]  # a method's `self.x`: its class's attribute
                self.attributes[name[5:]].append((e.path, scope))
            out.append((e.path, scope, name))
        return out

    def binding_scope(self, path: str, scope: str) -> str:
        """The function, class or module ("") around code in ``scope`` (a variable is no scope)."""
        while scope:
            s = self.by_qname.get((path, scope))
            if s is None or s.kind not in _VALUE_KINDS:
                break
            scope = scope.rpartition(".")[0]
        return scope

    # ----- questions ---------------------------------------------------------------

    def module_name(self, path: str) -> str:
        """A Python file's dotted module name, from its package root."""
        return self.module_names.get(path) or python_module(path)

    def language(self, path: str) -> str:
        fg = self.files.get(path)
        return fg.language if fg is not None else ""

    def symbol(self, path: str, qualified_name: str) -> Symbol | None:
        return self.by_qname.get((path, qualified_name))

    def symbols_named(self, name: str) -> list[Symbol]:
        return self.by_name.get(name, [])

    def top_level(self, path: str, name: str) -> Symbol | None:
        return self.by_qname.get((path, name))

    def edges_of(self, path: str) -> list[Edge]:
        fg = self.files.get(path)
        return fg.edges if fg is not None else []

    def symbols_of(self, path: str) -> list[Symbol]:
        fg = self.files.get(path)
        return fg.symbols if fg is not None else []

    def all_edges(self) -> Iterable[Edge]:
        for fg in self.files.values():
            yield from fg.edges

    def symbol_at(self, path: str, line: int, column: int) -> Symbol | None:
        """The innermost definition whose range holds the position (1-based line)."""
        best: Symbol | None = None
        for s in self.symbols_of(path):
            start, end = s.range.start, s.range.end
            inside = (start.line, start.column) <= (line, column) <= (end.line, end.column)
            if inside and (best is None or (start.line, start.column) >= _start(best)):
                best = s
        return best


def _start(s: Symbol) -> tuple[int, int]:
    return s.range.start.line, s.range.start.column

"""Questions to the reference graph: callers, callees, implementations, references,
module dependencies. Every answer carries locations an LSP call hierarchy can use."""

from __future__ import annotations

import posixpath
from collections import defaultdict
from dataclasses import dataclass
from enum import StrEnum

from ..languages.bindings import as_written
from ..model import Edge, EdgeKind, Position, Span, Symbol, SymbolKind
from ..store import Store
from .modules import Module, family
from .resolve import Resolver
from .snapshot import CALLABLE_KINDS, OVERLOADING, TYPE_KINDS, Snapshot

_CALL = (EdgeKind.CALL,)
_IMPORT = (EdgeKind.IMPORT,)
_SUPERTYPE = (EdgeKind.INHERIT, EdgeKind.IMPLEMENT)


class Graph:
    """The reference graph of one index, held in memory and refreshed before each question.

    Cheap to keep (one per store, e.g. in the language server); the first question
    loads the symbols and edges tables, later ones reload only changed files.
    """

    def __init__(self, store: Store | None, snapshot: Snapshot | None = None) -> None:
        self.snapshot = snapshot if snapshot is not None else Snapshot(store)
        self.resolver = Resolver(self.snapshot)

    def refresh(self) -> None:
        """Catch up with the store (only files whose ``files`` row changed are re-read)."""
        self.snapshot.refresh()

    def find(self, name: str) -> list[Symbol]:
        """Definitions a user means by ``name``: a qualified name (``JSONDecoder.decode``),
        a module-qualified one (``json.loads``, ``email.mime.base.MIMEBase``), or a bare name."""
        self.refresh()
        snap = self.snapshot
        name = name.strip().replace("::", ".").rstrip("()")
        if not name:
            return []
        last = name.rsplit(".", 1)[-1]
        exact = [s for s in snap.symbols_named(last) if s.qualified_name == name]
        if exact:
            return exact
        if "." in name:
            parts = name.split(".")
            for i in range(len(parts) - 1, 0, -1):
                mod = self.resolver.python_module(".".join(parts[:i]))
                if mod is None:
                    continue
                target = self.resolver.in_module(mod, parts[i], 0)
                for part in parts[i + 1 :]:
                    target = self.resolver.member_of(target, part, 0) if target is not None else None
                if isinstance(target, Symbol):
                    return [target]
            return [s for s in snap.symbols_named(last) if s.qualified_name.endswith("." + name)]
        return list(snap.symbols_named(name))

    def symbol_at(self, path: str, line: int, column: int) -> Symbol | None:
        """The innermost definition at a position (1-based line, code-point column)."""
        self.refresh()
        return self.snapshot.symbol_at(path, line, column)

    def resolve(self, edge: Edge) -> Edge:
        """``edge`` with ``to_symbol`` (or ``candidates``) filled in."""
        self.refresh()
        return self.resolver.resolved_edge(edge)


@dataclass(frozen=True, slots=True)
class Location:
    path: str
    span: Span


@dataclass(frozen=True, slots=True)
class CallSite:
    """Calls from one caller to the symbol asked about: an incoming call."""

    caller: Symbol | None  # None: the file's top-level code
    path: str
    from_ranges: tuple[Span, ...]  # the call sites, inside the caller
    resolved: bool = True  # False: unresolved calls that list the symbol among their candidates


@dataclass(frozen=True, slots=True)
class Callee:
    """Calls from the symbol asked about to one target: an outgoing call."""

    name: str  # as written
    callee: Symbol | None  # None: unresolved
    from_ranges: tuple[Span, ...]
    candidates: tuple[Symbol, ...] = ()


class ImplementationKind(StrEnum):
    SUBCLASS = "subclass"  # a class / interface naming it as a supertype
    EXTENSION = "extension"  # a Swift extension / Rust impl adding the conformance
    OVERRIDE = "override"  # a method of an implementation with the same name
    STRUCTURAL = "structural"  # Python Protocol: has every method it asks for
    METHOD_SET = "method-set"  # Go: its methods cover the interface's


@dataclass(frozen=True, slots=True)
class Implementation:
    symbol: Symbol | None  # None: an extension of a type that is not in the index
    location: Location
    how: ImplementationKind
    of: str  # the qualified name of the supertype it implements (the path's last step)
    # no symbol: the type as written — an extension's (`String`), a local class's (`test_x.Source`)
    extended: str = ""

    @property
    def name(self) -> str:
        """The implementing type: its qualified name, or the extended type as written."""
        return self.symbol.qualified_name if self.symbol is not None else self.extended


@dataclass(frozen=True, slots=True)
class Reference:
    location: Location
    kind: EdgeKind
    from_symbol: str


@dataclass(frozen=True, slots=True)
class Dependency:
    """One module a module imports (or is imported by), with the import sites."""

    name: str  # a workspace path, or the module as written when outside the workspace
    paths: tuple[str, ...]  # files of the workspace it resolved to; () when external
    locations: tuple[Location, ...]

    @property
    def external(self) -> bool:
        return not self.paths


@dataclass(frozen=True, slots=True)
class ModuleDependencies:
    module: str
    files: tuple[str, ...]
    imports: tuple[Dependency, ...]
    imported_by: tuple[Dependency, ...]


def edge_span(e: Edge) -> Span:
    return Span(Position(e.line, e.column), Position(e.end_line, e.end_column))


def _namesakes(graph: Graph, symbol: Symbol) -> set[Symbol]:
    """``symbol`` and the definitions of the same name and kind in its file and scope: a
    conditional redefinition (``if WIN: def f(): … else: def f(): …``) is the same name,
    and a call resolved to the first ``f`` calls whichever one the module defines. Overloads
    (``add(int)``, ``add(String, int)`` in Java) are definitions of their own."""
    if symbol.partial:  # the parts of a C# partial type are one type
        return set(graph.resolver.parts(symbol))
    if symbol.language in OVERLOADING:
        return {symbol}
    return {
        s
        for s in graph.snapshot.symbols_named(symbol.name)
        if s.path == symbol.path and s.qualified_name == symbol.qualified_name and s.kind is symbol.kind
    } | {symbol}


def _targets(graph: Graph, symbol: Symbol) -> set[Symbol]:
    """What a call to ``symbol`` resolves to: itself (or a redefinition of it), or its class
    for a constructor."""
    found = _namesakes(graph, symbol)
    if symbol.kind is SymbolKind.CONSTRUCTOR and symbol.container:
        cls = graph.resolver.enclosing_type(symbol.path, symbol.qualified_name)
        if cls is not None:
            found.add(cls)
    return found


def _local_names(graph: Graph, names: set[str]) -> set[str]:
    """The names and every alias an import gives them (``from m import total as t``), transitively."""
    out = set(names)
    todo = list(names)
    while todo:
        for e in graph.snapshot.imports_of(todo.pop()):
            if e.alias not in ("", "*") and e.alias not in out:
                out.add(e.alias)
                todo.append(e.alias)
    return out


def callers(graph: Graph, symbol: Symbol, *, include_unresolved: bool = False) -> list[CallSite]:
    """Incoming calls of ``symbol``, grouped by calling definition, call sites as ``from_ranges``.

    With ``include_unresolved`` the unresolved calls that list ``symbol`` among
    their candidates come too, marked ``resolved=False``.
    """
    graph.refresh()
    wanted = _targets(graph, symbol)
    names = _local_names(graph, {s.name for s in wanted})
    groups: dict[tuple[str, str, bool], list[Span]] = defaultdict(list)
    for name in names:
        for e in graph.snapshot.edges(graph.snapshot.named_rows(name, _CALL)):
            r = graph.resolver.resolve(e)
            if r.symbol in wanted:
                groups[(e.path, e.from_symbol, True)].append(edge_span(e))
            elif include_unresolved and r.symbol is None and symbol in r.candidates:
                groups[(e.path, e.from_symbol, False)].append(edge_span(e))
    out = [
        CallSite(graph.snapshot.symbol(path, frm) if frm else None, path, tuple(spans), ok)
        for (path, frm, ok), spans in groups.items()
    ]
    out.sort(key=lambda c: (not c.resolved, c.path, c.from_ranges[0].start.line))
    return out


def callees(graph: Graph, symbol: Symbol) -> list[Callee]:
    """Outgoing calls of ``symbol``, grouped by target (unresolved ones by name, with candidates)."""
    graph.refresh()
    groups: dict[tuple[str, Symbol | None], list[Span]] = defaultdict(list)
    cands: dict[tuple[str, Symbol | None], tuple[Symbol, ...]] = {}
    for e in graph.snapshot.edges_from(symbol.path, symbol.qualified_name):
        if e.kind is not EdgeKind.CALL:
            continue
        r = graph.resolver.resolve(e)
        key = (as_written(e.to_name) if r.symbol is None else r.symbol.qualified_name, r.symbol)
        groups[key].append(edge_span(e))
        cands[key] = r.candidates
    out = [
        Callee(name, target, tuple(spans), cands[(name, target)]) for (name, target), spans in groups.items()
    ]
    out.sort(key=lambda c: (c.from_ranges[0].start.line, c.from_ranges[0].start.column))
    return out


def references(graph: Graph, symbol: Symbol) -> list[Reference]:
    """Every resolved use of ``symbol``: calls, supertypes, imports, type references."""
    graph.refresh()
    out: list[Reference] = []
    snap = graph.snapshot
    names = _local_names(graph, {symbol.name})
    candidates = [e for n in names for e in (*snap.edges_named(n), *snap.imports_of(n))]
    same = _namesakes(graph, symbol)
    for e in candidates:
        r = graph.resolver.resolve(e)
        if r.symbol in same:
            out.append(Reference(Location(e.path, edge_span(e)), e.kind, e.from_symbol))
    out.sort(key=lambda r: (r.location.path, r.location.span.start.line, r.location.span.start.column))
    return out


def implementations(graph: Graph, symbol: Symbol) -> list[Implementation]:
    """Implementations of a type (transitively: subclasses, implementers, extensions,
    Python Protocol structural implementers, Go types whose method sets satisfy it)
    or, for a method, its overrides."""
    graph.refresh()
    if symbol.kind in CALLABLE_KINDS or symbol.kind is SymbolKind.PROPERTY:
        return _overrides(graph, symbol)
    if symbol.kind not in TYPE_KINDS:
        return []
    symbol = graph.resolver.parts(symbol)[0]
    found = _subtypes(graph, symbol)
    have = {i.symbol for i in found} | {symbol}
    if symbol.language == "python" and _is_protocol(graph, symbol):
        found += [i for i in _structural(graph, symbol) if i.symbol not in have]
    if symbol.language == "go" and symbol.kind is SymbolKind.INTERFACE:
        found += [i for i in _method_set(graph, symbol) if i.symbol not in have]
    return found


def _subtypes(graph: Graph, root: Symbol) -> list[Implementation]:
    snap, res = graph.snapshot, graph.resolver
    out: list[Implementation] = []
    seen: set[Symbol] = {root}
    queue = [root]
    while queue:
        base = queue.pop(0)
        supertype_edges = [
            e for n in _local_names(graph, {base.name}) for e in snap.edges(snap.named_rows(n, _SUPERTYPE))
        ]
        for e in supertype_edges:
            if e.kind not in (EdgeKind.INHERIT, EdgeKind.IMPLEMENT) or res.resolve(e).symbol != base:
                continue
            own = snap.symbol(e.path, e.from_symbol)
            extended = ""
            if own is not None and _inside(e, own):
                sub: Symbol | None = own
                how = ImplementationKind.SUBCLASS
                where = Location(own.path, own.selection_range)
            elif res.local_class(e.path, e.from_symbol):  # a class inside a function
                sub, how = None, ImplementationKind.SUBCLASS
                where = Location(e.path, edge_span(e))
                extended = e.from_symbol
            else:  # an extension / impl block (maybe in the type's own file): declared there
                sub = own if own is not None else res.type_for_scope(e.path, e.from_symbol)
                how = ImplementationKind.EXTENSION
                where = Location(e.path, edge_span(e))
                extended = e.from_symbol
            out.append(Implementation(sub, where, how, base.qualified_name, extended))
            if sub is not None and sub not in seen:
                seen.add(sub)
                queue.append(sub)
    return out


def _inside(e: Edge, sym: Symbol) -> bool:
    """Whether an edge is written inside a definition (a class header), not in an extension of it."""
    start, end = sym.range.start, sym.range.end
    return (start.line, start.column) <= (e.line, e.column) <= (end.line, end.column)


def _overrides(graph: Graph, method: Symbol) -> list[Implementation]:
    cls = graph.resolver.enclosing_type(method.path, method.qualified_name)
    if cls is None:
        return []
    out: list[Implementation] = []
    seen: set[Symbol] = {method}
    for impl in implementations(graph, cls):
        if impl.symbol is None:
            continue
        m = _override_in(graph, impl.symbol, method)
        if m is not None and m not in seen:
            seen.add(m)
            out.append(
                Implementation(
                    m, Location(m.path, m.selection_range), ImplementationKind.OVERRIDE, method.qualified_name
                )
            )
    return out


def _override_in(graph: Graph, sub: Symbol, method: Symbol) -> Symbol | None:
    """The member of ``sub`` that overrides ``method``: the one of that name, or — where
    overloads are told apart (Java, C#, Kotlin) — the one of that name that takes the same
    arguments; none when several could (``add(String)`` beside an override of ``add(int)``)."""
    if method.language not in OVERLOADING:
        return graph.resolver.own_member(sub, method.name)
    same = [
        m
        for m in graph.resolver.own_members(sub)
        if m.name == method.name and m.kind in CALLABLE_KINDS and m.arity == method.arity
    ]
    return same[0] if len(same) == 1 else None


def _is_protocol(graph: Graph, cls: Symbol) -> bool:
    return any(e.last_name == "Protocol" for e in graph.resolver.supertype_edges(cls))


def _required_methods(graph: Graph, cls: Symbol) -> set[str]:
    names: set[str] = set()
    for t in [cls, *graph.resolver.bases(cls)]:
        for m in graph.resolver.own_members(t):
            if m.kind in CALLABLE_KINDS and not (m.name.startswith("__") and m.name != "__call__"):
                names.add(m.name)
    return names


def _structural(graph: Graph, protocol: Symbol) -> list[Implementation]:
    required = _required_methods(graph, protocol)
    if not required:
        return []
    snap = graph.snapshot
    owners: set[tuple[str, str]] | None = None
    for name in required:
        here = {
            (s.path, s.container)
            for s in snap.symbols_named(name)
            if s.language == "python" and s.container and s.kind in CALLABLE_KINDS
        }
        owners = here if owners is None else owners & here
    out: list[Implementation] = []
    for path, container in sorted(owners or ()):
        cls = snap.symbol(path, container)
        if cls is None or cls == protocol or cls.kind not in TYPE_KINDS or _is_protocol(graph, cls):
            continue
        where = Location(cls.path, cls.selection_range)
        out.append(Implementation(cls, where, ImplementationKind.STRUCTURAL, protocol.qualified_name))
    return out


def _method_set(graph: Graph, interface: Symbol) -> list[Implementation]:
    required = _required_methods(graph, interface)
    if not required:
        return []
    snap = graph.snapshot
    owners: set[tuple[str, str]] | None = None
    for name in required:
        here = {
            (posixpath.dirname(s.path), s.container)
            for s in snap.symbols_named(name)
            if s.language == "go" and s.container and s.kind is SymbolKind.METHOD
        }
        owners = here if owners is None else owners & here
    out: list[Implementation] = []
    for directory, container in sorted(owners or ()):
        files = snap.dirs.get(directory, [])
        t = next((s for p in files if (s := snap.symbol(p, container)) is not None), None)
        if t is None or t == interface or t.kind is SymbolKind.INTERFACE:
            continue
        where = Location(t.path, t.selection_range)
        out.append(Implementation(t, where, ImplementationKind.METHOD_SET, interface.qualified_name))
    return out


def module_files(graph: Graph, module: str) -> tuple[str, ...]:
    """The files of a module: a path, a directory, or a Python dotted name."""
    graph.refresh()
    snap = graph.snapshot
    module = module.strip().rstrip("/")
    if module in snap.files:
        return (module,)
    under = tuple(sorted(p for p in snap.files if p.startswith(module + "/")))
    if under:
        return under
    mod = graph.resolver.python_module(module)
    if mod is not None:
        path = mod.paths[0]
        if path.endswith("/__init__.py"):
            package = path[: -len("/__init__.py")]
            return tuple(sorted(p for p in snap.files if p.startswith(package + "/")))
        return mod.paths
    return ()


def module_dependencies(graph: Graph, module: str) -> ModuleDependencies:
    """What a module imports (workspace files and external modules) and who imports it."""
    files = module_files(graph, module)
    inside = set(files)
    snap, res = graph.snapshot, graph.resolver
    imports: dict[str, tuple[tuple[str, ...], list[Location]]] = {}
    for path in files:
        for e in snap.edges_of(path, kinds=_IMPORT):
            targets = _import_paths(res, e)
            if targets and set(targets) <= inside:
                continue  # inside the module itself
            name = _dependency_name(targets, e, snap)
            imports.setdefault(name, (targets, []))[1].append(Location(e.path, edge_span(e)))
    imported_by: dict[str, list[Location]] = defaultdict(list)
    for fg in snap.files.values():
        if fg.path in inside:
            continue
        for e in snap.edges_of(fg.path, kinds=_IMPORT):
            if set(_import_paths(res, e)) & inside:
                imported_by[fg.path].append(Location(e.path, edge_span(e)))
    return ModuleDependencies(
        module=module,
        files=files,
        imports=tuple(
            Dependency(name, paths, tuple(locs)) for name, (paths, locs) in sorted(imports.items())
        ),
        imported_by=tuple(
            Dependency(path, (path,), tuple(locs)) for path, locs in sorted(imported_by.items())
        ),
    )


def _import_paths(res: Resolver, e: Edge) -> tuple[str, ...]:
    r = res.resolve(e)
    if r.module is not None:
        return r.module.paths
    if r.symbol is not None:
        return (r.symbol.path,)
    return ()


def _dependency_name(targets: tuple[str, ...], e: Edge, snap: Snapshot) -> str:
    if not targets:
        return e.module or e.to_name
    if len(targets) == 1:
        path = targets[0]
        return snap.module_name(path) if snap.language(path) == "python" else path
    return posixpath.dirname(targets[0]) or targets[0]


__all__ = [
    "CallSite",
    "Callee",
    "Dependency",
    "Graph",
    "Implementation",
    "ImplementationKind",
    "Location",
    "Module",
    "ModuleDependencies",
    "Reference",
    "callees",
    "callers",
    "family",
    "implementations",
    "module_dependencies",
    "module_files",
    "references",
]

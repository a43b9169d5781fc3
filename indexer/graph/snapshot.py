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
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from ..heap import arrow_on_system_pool, keep_long_lived, release_memory
from ..languages.bindings import (
    ATTRIBUTES,
    HOLDS,
    IN,
    IS,
    PART,
    SEPARATOR,
    WITH,
    read_attributes_record,
)
from ..model import Edge, EdgeKind, FileStatus, Symbol, SymbolKind
from ..rows import SYMBOL_COLUMNS, in_filters, present
from ..store import EDGES, FILES, SYMBOLS, Store
from ..symtab import HashIndex, SymbolColumns, SymbolRows, concat, group_starts, pair_slot
from .columns import (
    EDGE_COLUMNS,
    KIND_CODE,
    EdgeColumns,
    Groups,
    PackedStrings,
    Rows,
    Strings,
    bisect_id,
    edges_arrow,
    encode,
)

log = logging.getLogger(__name__)

#: symbol kinds that hold members and take part in inheritance
TYPE_KINDS = frozenset(
    {SymbolKind.CLASS, SymbolKind.INTERFACE, SymbolKind.STRUCT, SymbolKind.ENUM, SymbolKind.OBJECT}
)
CALLABLE_KINDS = frozenset({SymbolKind.FUNCTION, SymbolKind.METHOD, SymbolKind.CONSTRUCTOR})
# languages whose overloads (methods of one name in one class) are told apart by argument
# count (``Symbol.arity``, ``Edge.args``): each is a definition of its own
OVERLOADING = frozenset({"java", "csharp", "kotlin"})
_VALUE_KINDS = frozenset({SymbolKind.VARIABLE, SymbolKind.CONSTANT, SymbolKind.FIELD, SymbolKind.PROPERTY})
_KIND_OF = {int(k): k for k in SymbolKind}
_NO_ROWS: Rows = np.zeros(0, np.int32)
_REMEMBERED = 100_000  # lookups of each kind remembered (see ``Snapshot.symbol``)
_FULL_RELOAD = 300  # more changed files than this: read whole tables
_BATCH = 65_536  # edge rows read at a time


@dataclass(slots=True)
class FileGraph:
    """One file's definitions and references. ``edges`` are what ``Snapshot.of`` is given;
    a snapshot holds every file's edges as columns (``Snapshot.edges_of`` reads them), and
    its symbols as rows of the snapshot's ``SymbolColumns`` (``SymbolRows``)."""

    path: str
    language: str
    content_hash: str
    symbols: Sequence[Symbol] = field(default_factory=list)
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
    """Every file's symbols and edges, with the lookups resolution needs. The edges are
    columns (``EdgeColumns``): ``Edge`` objects are made for the rows a question reads."""

    def __init__(self, store: Store | None) -> None:
        self.store = store
        self.files: dict[str, FileGraph] = {}
        self.generation = 0  # bumped whenever the content changes
        self._files_version: int | None = None
        self._lock = threading.Lock()
        self.columns = EdgeColumns.empty()
        self._file_rows: dict[str, tuple[int, int]] = {}
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
                .search()
                .select(["path", "language", "content_hash", "status"])
                .limit(None)
                .to_arrow()
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
            with arrow_on_system_pool():
                new_edges = self._load(changed, want) if changed else None
                if gone or changed:
                    self._set_edges(new_edges, set(changed))
                del new_edges
            self._files_version = version
            if gone or changed:
                self.generation += 1
                self._reset_lookups()
                self._build_lookups()
                if len(changed) > _FULL_RELOAD:  # the columns and old lookups
                    release_memory(collect=False)
                    keep_long_lived()
                return True
            return False

    @classmethod
    def of(cls, files: Iterable[FileGraph]) -> Snapshot:
        """A snapshot of given files, with no store behind it (tests, one-off tools)."""
        snap = cls(None)
        snap.files = {f.path: f for f in files}
        for f in snap.files.values():
            if not isinstance(f.symbols, SymbolRows):
                cols = SymbolColumns.of(f.symbols)
                f.symbols = SymbolRows(cols, np.arange(len(cols), dtype=np.int32))
        edges = [e for f in snap.files.values() for e in f.edges if e.path == f.path]
        snap._set_edges(encode(edges_arrow(edges).to_batches()), set(snap.files))
        for f in snap.files.values():
            f.edges = []  # held as columns
        snap.generation = 1
        snap._build_lookups()
        return snap

    def _load(self, paths: Sequence[str], want: dict[str, tuple[str, str]]) -> pa.Table:
        """The changed files' symbols (into ``files``) and their edges, encoded."""
        assert self.store is not None
        fresh = {p: FileGraph(p, want[p][0], want[p][1]) for p in paths}
        edges = self.store.table(EDGES)
        if len(paths) > _FULL_RELOAD:  # the symbols are the symbol index's own columns
            self._fill(fresh, self.store.all_symbols())
            reader = edges.search().select(present(EDGE_COLUMNS, edges.schema)).limit(None).to_batches(_BATCH)
            table = encode(reader)
        else:
            parts = []
            for flt in in_filters("path", list(paths)):
                sym_rows = self.store.table(SYMBOLS).search().where(flt).limit(None).to_arrow()
                self._fill(fresh, SymbolColumns(sym_rows.select(present(SYMBOL_COLUMNS, sym_rows.schema))))
                rows = edges.search().where(flt).select(present(EDGE_COLUMNS, edges.schema))
                parts.append(encode(rows.limit(None).to_batches()))
            table = pa.concat_tables(parts) if parts else encode(())
        self.files.update(fresh)
        return table

    @staticmethod
    def _fill(fresh: dict[str, FileGraph], cols: SymbolColumns) -> None:
        """Each fresh file's symbols: its rows of ``cols``, in their order."""
        order, starts = group_starts(cols.path.ids, len(cols.path.values))
        for k, path in enumerate(cols.path.values):
            fg = fresh.get(path)
            if fg is not None:
                fg.symbols = SymbolRows(cols, order[starts[k] : starts[k + 1]])

    def _set_edges(self, new: pa.Table | None, fresh: set[str]) -> None:
        """The edge columns again: the kept files' rows, then ``new``'s rows of the files in
        ``fresh``, grouped by file in ``files``' order (each file's rows in table order)."""
        rank = {p: i for i, p in enumerate(self.files)}
        old = self.columns
        kept = np.array(
            [i for i, p in enumerate(old.path.values) if p in rank and p not in fresh] or [-1], np.int64
        )
        old_rows = np.flatnonzero(np.isin(old.path.ids, kept)).astype(np.int32)
        parts = [old.arrow(old_rows)] if len(old_rows) else []
        if new is not None and new.num_rows:
            parts.append(new)
        table = pa.concat_tables(parts).unify_dictionaries() if parts else encode(())
        paths = Strings(table.column("path"))
        is_new = np.zeros(table.num_rows, bool)
        is_new[len(old_rows) :] = True
        path_rank = np.array([rank.get(p, -1) for p in paths.values] or [-1], np.int64)
        in_fresh = np.array([p in fresh for p in paths.values] or [False], bool)
        row_rank = path_rank[paths.ids] if table.num_rows else np.zeros(0, np.int64)
        ok = (row_rank >= 0) & (in_fresh[paths.ids] == is_new) if table.num_rows else np.zeros(0, bool)
        take = np.flatnonzero(ok)
        take = take[np.argsort(row_rank[take], kind="stable")]
        self.columns = EdgeColumns(table.take(pa.array(take)))
        ids = self.columns.path.ids
        self._file_rows = {}
        if len(ids):
            bounds = np.flatnonzero(np.diff(ids)) + 1
            starts = [0, *bounds.tolist()]
            ends = [*bounds.tolist(), len(ids)]
            for lo, hi in zip(starts, ends, strict=True):
                self._file_rows[self.columns.path.values[int(ids[lo])]] = (lo, hi)

    # ----- lookups ---------------------------------------------------------------

    def _reset_lookups(self) -> None:
        # every file's symbols as rows of one ``SymbolColumns`` (``_symbol_lookups``)
        self.symtab = SymbolColumns.of(())
        nothing = np.zeros(0, np.int32)
        self._sym_order = nothing  # rows in the files' order, each file's in its own
        self._by_name = self._name_starts = nothing
        self._by_qname = HashIndex(np.zeros(0, np.int64), nothing)
        self._member_keys = np.zeros(0, np.int64)
        self._members = self._member_starts = nothing
        # members whose container has no symbol in their file: impl / extension / Go receiver methods
        self.detached: dict[str, list[int]] = defaultdict(list)
        self._rows_by_qname: dict[tuple[str, str], int] = {}
        self._named: dict[str, list[Symbol]] = {}
        self._members_found: dict[tuple[str, str], list[Symbol]] = {}
        self.python_modules: dict[str, str] = {}
        self.module_names: dict[str, str] = {}  # path → its dotted name from the package root
        self.module_suffixes: dict[str, list[str]] = defaultdict(list)
        self.module_keys: dict[str, str] = {}
        self.dirs: dict[str, list[str]] = defaultdict(list)
        self.go_modules: dict[str, str] = {}  # a go.mod's module path → its folder
        # edge rows by key (see ``_build_edge_lookups``)
        empty = Groups(np.zeros(0, np.int64), np.zeros(0, np.int32), 0)
        self._by_last = self._from = self._by_scope = self._bindings = empty
        # a Python file's attributes record (its inherit edges' aliases), read when asked
        self._attribute_records: dict[str, list[str]] = defaultdict(list)
        self._attributes_read: dict[str, dict[str, frozenset[str]]] = {}
        self._pairs = np.zeros(0, np.int64)
        # import edges' rows: by file and the name they bind (a group per (path, alias), its
        # key hashed), star imports by file, by imported name (the stdlib's 14.5k import
        # ``Edge``s in dicts of lists took ~4 MiB; ``Edge``s are made as read, and those of
        # the bindings asked are remembered)
        self._imports = self._star_imports = self._imports_by_name = empty
        self._import_index = HashIndex(np.zeros(0, np.int64), np.zeros(0, np.int32))
        self._imports_found: dict[tuple[str, str], list[Edge]] = {}
        # typed bindings (see languages/bindings.py): (path, scope, name) → a group of marked
        # edges; scope is the class for ``self.x`` (name ``self.x``), the function for ``return``
        # a group id per (path, scope, name) key: the keys hashed (``HashIndex``), each group's
        # key kept as three ids to check a found one against — the path's and the scope's in
        # the edge columns' tables (a scope no edge is written in: after them, in
        # ``_binding_scopes``), the name's in ``_binding_names`` (a dict of the tuples took
        # ~16 MiB for the stdlib's 140k keys; three lists of strings ~3.4 MiB for its 74k)
        self._binding_index = HashIndex(np.zeros(0, np.int64), np.zeros(0, np.int32))
        self._binding_key_ids = np.zeros((0, 3), np.int32)
        self._binding_scopes: list[str] = []
        self._binding_names = PackedStrings([])
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
        self._symbol_lookups()
        folders: dict[str, list[str]] = defaultdict(list)
        for fg in self.files.values():
            if fg.language == "gomod":
                for s in fg.symbols:
                    if s.kind is SymbolKind.MODULE:
                        folders[s.name].append(posixpath.dirname(fg.path))
        # longest module paths first (a nested module owns its folder); a module path two
        # go.mod files declare (a copy, a fork) names no folder: which one is not known
        for module in sorted(folders, key=len, reverse=True):
            if len(folders[module]) == 1:
                self.go_modules[module] = folders[module][0]
        for rooted, paths in rooted_paths.items():  # `import click.core` for src/click/core.py
            if len(paths) == 1:
                self.python_modules.setdefault(rooted, paths[0])
        self._build_edge_lookups()
        # what building asked (a scope's kind for every marked edge) is not worth remembering
        self._rows_by_qname.clear()

    def _symbol_lookups(self) -> None:
        """Every file's symbols as rows of one ``SymbolColumns`` (the store's own, shared with
        the symbol index, after a full read; else the kept and fresh files' rows put together)
        and the lookups over them: rows grouped by name, by (path, container), and hashed by
        (path, qualified name)."""
        views = [fg.symbols for fg in self.files.values()]
        sources = {id(v.columns): v.columns for v in views if isinstance(v, SymbolRows)}
        if len(sources) == 1:
            (cols,) = sources.values()
        else:
            cols = concat([(v.columns, v.rows) for v in views if isinstance(v, SymbolRows)])
            at = 0
            for fg in self.files.values():
                n = len(fg.symbols)
                fg.symbols = SymbolRows(cols, np.arange(at, at + n, dtype=np.int32))
                at += n
        self.symtab = cols
        parts = [fg.symbols.rows for fg in self.files.values() if isinstance(fg.symbols, SymbolRows)]
        order = np.concatenate(parts).astype(np.int32) if parts else np.zeros(0, np.int32)
        self._sym_order = order
        n = len(order)
        by, self._name_starts = group_starts(cols.name.ids[order], len(cols.name.values))
        self._by_name = order[by]
        path_ids = cols.path.ids[order]
        qual = cols.qualified
        hashes = np.fromiter(
            (hash((p, qual[r])) for p, r in zip(path_ids.tolist(), order.tolist(), strict=True)), np.int64, n
        )
        self._by_qname = HashIndex(hashes, order)
        cont_ids = cols.container.ids[order]
        has = np.flatnonzero(cont_ids != cols.container.id(""))
        width = max(len(cols.container.values), 1)
        pair = path_ids[has].astype(np.int64) * width + cont_ids[has]
        self._member_keys, inverse = np.unique(pair, return_inverse=True)
        by, self._member_starts = group_starts(inverse.reshape(-1), len(self._member_keys))
        self._members = order[has[by]]
        homed = [
            self._qname_row(p, cols.container.values[c]) >= 0
            for p, c in (divmod(int(k), width) for k in self._member_keys.tolist())
        ]
        for k, i in zip(inverse.reshape(-1).tolist(), has.tolist(), strict=True):
            if not homed[k]:
                row = int(order[i])
                self.detached[cols.container[row]].append(row)

    def _qname_row(self, path_id: int, qualified: str) -> int:
        """The first row (in the files' order) of that path id and qualified name; -1 if none."""
        cols = self.symtab
        want = b""
        for r in self._by_qname.get((path_id, qualified)).tolist():
            want = want or qualified.encode("utf-8", "surrogatepass")
            if cols.path.ids[r] == path_id and cols.qualified.raw(r) == want:
                return int(r)
        return -1

    def _build_edge_lookups(self) -> None:
        """Rows by key for the non-import edges; the import edges (4% of the stdlib's, read
        on every resolution) as ``Edge`` objects in dicts."""
        c = self.columns
        rows = np.arange(c.size, dtype=np.int32)
        kind = c.kind
        imp = kind == KIND_CODE[EdgeKind.IMPORT]
        other = ~imp
        supertype = (kind == KIND_CODE[EdgeKind.INHERIT]) | (kind == KIND_CODE[EdgeKind.IMPLEMENT])
        n_from = len(c.from_symbol.values)
        self._by_last = Groups(c.last_name_ids(rows[other]), rows[other], len(c.last_names))
        # (path, from_symbol): one key per distinct pair, in sorted order
        pair = c.path.ids.astype(np.int64) * max(n_from, 1) + c.from_symbol.ids
        self._pairs, pair_id = np.unique(pair, return_inverse=True)
        self._from = Groups(pair_id.reshape(-1), rows, len(self._pairs))
        self._by_scope = Groups(c.from_symbol.ids[supertype], rows[supertype], n_from)
        self._import_lookups(rows[imp])
        no_alias = c.alias.id("")
        # a Python file's inherit edges carry what its classes bind, in parts (no typed binding)
        records = rows[supertype & (c.alias.ids != no_alias)]
        self._attribute_records = defaultdict(list)
        for path, _, alias in c.places(records):
            if alias.startswith(ATTRIBUTES):
                self._attribute_records[path].append(alias)
        self._attributes_read = {}
        marked = rows[other & ~supertype & (c.alias.ids != no_alias)]
        # One edge may type several names (``ctx;self.ctx``): a row in each of their groups.
        groups: list[int] = []
        members: list[int] = []
        ids: dict[tuple[str, str, str], int] = {}  # while building only
        scopes: dict[str, str] = {}  # one string a scope for ``attributes`` (while building)
        for row, (path, scope, alias) in zip(marked.tolist(), c.places(marked), strict=True):
            for key in self._binding_keys(path, scope, alias, scopes):
                groups.append(ids.setdefault(key, len(ids)))
                members.append(row)
        self._bindings = Groups(np.asarray(groups, np.int64), np.asarray(members, np.int32), len(ids))
        del groups, members
        hashes = np.fromiter((hash(k) for k in ids), np.int64, len(ids))
        self._binding_index = HashIndex(hashes, np.arange(len(ids), dtype=np.int32))
        self._set_binding_keys(list(ids))
        del ids
        c.forget_decoded()

    def _import_lookups(self, imp: Rows) -> None:
        """The import edges' rows by key (see ``_reset_lookups``)."""
        c = self.columns
        to_ids, alias_ids = c.to_name.ids[imp], c.alias.ids[imp]
        named = (to_ids != c.to_name.id("")) & (to_ids != c.to_name.id("*"))
        self._imports_by_name = Groups(to_ids[named], imp[named], len(c.to_name.values))
        star = alias_ids == c.alias.id("*")
        self._star_imports = Groups(c.path.ids[imp[star]], imp[star], len(c.path.values))
        binds = ~star & (alias_ids != c.alias.id(""))
        pair = c.path.ids[imp[binds]].astype(np.int64) * max(len(c.alias.values), 1) + alias_ids[binds]
        keys, group = np.unique(pair, return_inverse=True)
        self._imports = Groups(group.reshape(-1), imp[binds], len(keys))
        firsts = self._imports.rows[self._imports.starts[:-1]] if len(keys) else _NO_ROWS
        hashes = np.fromiter((hash((p, a)) for p, _, a in c.places(firsts)), np.int64, len(firsts))
        self._import_index = HashIndex(hashes, np.arange(len(keys), dtype=np.int32))

    def _set_binding_keys(self, keys: list[tuple[str, str, str]]) -> None:
        """Each binding group's (path, scope, name) as three ids (see ``_reset_lookups``)."""
        c = self.columns
        scope_id = {v: i for i, v in enumerate(c.from_symbol.values)}
        extra = sorted({k[1] for k in keys} - scope_id.keys())
        scope_id.update((v, len(c.from_symbol.values) + i) for i, v in enumerate(extra))
        names = sorted({k[2] for k in keys})
        name_id = {v: i for i, v in enumerate(names)}
        self._binding_key_ids = np.array(
            [(c.path.id(p), scope_id[sc], name_id[n]) for p, sc, n in keys] or np.zeros((0, 3)), np.int32
        )
        self._binding_scopes = extra
        self._binding_names = PackedStrings(names)

    def _binding_scope_of(self, scope_id: int) -> str:
        table = self.columns.from_symbol.values
        return table[scope_id] if scope_id < len(table) else self._binding_scopes[scope_id - len(table)]

    def _binding_keys(
        self, path: str, from_symbol: str, alias: str, scopes: dict[str, str]
    ) -> list[tuple[str, str, str]]:
        """Where a marked edge's bindings live (one edge may type several names, ``ctx;self.ctx``):
        ``self.x`` on the class (its own body, or the class around the method that assigns
        it), the rest on the edge's own scope. ``scopes`` gives one string object a scope for
        ``attributes``."""
        here = self.binding_scope(path, from_symbol)
        out = []
        for label in (
            alias.removeprefix(WITH).removeprefix(IS).removeprefix(IN).removeprefix(HOLDS).split(SEPARATOR)
        ):
            scope, other_scope, name = label.rpartition(">")  # `C.run>param`: a name of another scope
            name = name.partition(PART)[0]  # `cmd@1`: the name `cmd`
            if not other_scope:
                scope = here
            if name.startswith("self."):
                owner = self.kind_of(path, scope)
                if owner is not None and owner not in TYPE_KINDS:
                    scope = scope.rpartition(".")[0]  # a method's `self.x`: its class's attribute
                self.attributes[name[5:]].append((path, scopes.setdefault(scope, scope)))
            out.append((path, scope, name))
        return out

    def bound_attributes(self, path: str) -> dict[str, frozenset[str]] | None:
        """What attributes each class of a Python file binds, typed or not (a class binding
        none is not listed); None when the file carries no record (too few inherit edges)."""
        found = self._attributes_read.get(path)
        if found is None:
            aliases = self._attribute_records.get(path)
            if not aliases:
                return None
            found = self._attributes_read[path] = read_attributes_record(aliases)
        return found

    def binding_scope(self, path: str, scope: str) -> str:
        """The function, class or module ("") around code in ``scope`` (a variable is no scope)."""
        while scope:
            kind = self.kind_of(path, scope)
            if kind is None or kind not in _VALUE_KINDS:
                break
            scope = scope.rpartition(".")[0]
        return scope

    # ----- edges by key ------------------------------------------------------------

    def edges(self, rows: Rows) -> list[Edge]:
        """The edges of these rows (``*_rows`` lookups), in their order."""
        return self.columns.edges(rows)

    def named_rows(self, last_name: str, kinds: Collection[EdgeKind] | None = None) -> Rows:
        """Rows of the non-import edges whose name ends in ``last_name`` (only ``kinds``)."""
        c = self.columns
        rows = self._by_last.get(bisect_id(c.last_names, last_name))
        if kinds is None or not len(rows):
            return rows
        at = c.kind[rows]
        keep = np.zeros(len(rows), bool)
        for k in kinds:
            keep |= at == KIND_CODE[k]
        return rows[keep]

    def edges_named(self, last_name: str) -> list[Edge]:
        """The non-import edges whose name ends in ``last_name``."""
        return self.edges(self.named_rows(last_name))

    def edges_from(self, path: str, scope: str) -> list[Edge]:
        """The edges written in definition ``scope`` of ``path`` ("" at file level)."""
        c = self.columns
        i = pair_slot(self._pairs, c.path.id(path), c.from_symbol.id(scope), len(c.from_symbol.values))
        return self.edges(self._from.get(i)) if i >= 0 else []

    def supertype_edges_in(self, scope: str) -> list[Edge]:
        """Inherit / implement edges declared in a scope of that name, in any file."""
        return self.edges(self._by_scope.get(self.columns.from_symbol.id(scope)))

    def imports_binding(self, path: str, name: str) -> list[Edge]:
        """The import edges of ``path`` that bind ``name`` (an alias or an imported name), in
        the order written (a list the caller must not change)."""
        found = self._imports_found.get((path, name))
        if found is not None:
            return found
        c = self.columns
        for g in self._import_index.get((path, name)).tolist():
            rows = self._imports.get(g)
            first = int(rows[0])
            if (
                c.path.values[int(c.path.ids[first])] == path
                and c.alias.values[int(c.alias.ids[first])] == name
            ):
                found = self.edges(rows)
                if len(self._imports_found) >= _REMEMBERED:
                    self._imports_found.clear()
                self._imports_found[(path, name)] = found
                return found
        return []

    def star_imports_of(self, path: str) -> list[Edge]:
        """The star imports of ``path`` (``from m import *``, ``using N;``), in the order written."""
        return self.edges(self._star_imports.get(self.columns.path.id(path)))

    def imports_of(self, name: str) -> list[Edge]:
        """Import edges that import ``name`` (by its name in the module it comes from)."""
        return self.edges(self._imports_by_name.get(self.columns.to_name.id(name)))

    def has_binding(self, path: str, scope: str, name: str) -> bool:
        return self._binding_group(path, scope, name) >= 0

    def binding_edges(self, path: str, scope: str, name: str) -> list[Edge]:
        """The marked edges that type ``name`` in ``scope`` of ``path``."""
        gid = self._binding_group(path, scope, name)
        return [] if gid < 0 else self.edges(self._bindings.get(gid))

    def _binding_group(self, path: str, scope: str, name: str) -> int:
        paths = self.columns.path.values
        for g in self._binding_index.get((path, scope, name)).tolist():
            p, sc, n = self._binding_key_ids[g].tolist()
            if paths[p] == path and self._binding_names[n] == name and self._binding_scope_of(sc) == scope:
                return int(g)
        return -1

    # ----- questions ---------------------------------------------------------------

    def module_name(self, path: str) -> str:
        """A Python file's dotted module name, from its package root."""
        return self.module_names.get(path) or python_module(path)

    def language(self, path: str) -> str:
        fg = self.files.get(path)
        return fg.language if fg is not None else ""

    # Lookups asked again (resolution asks for the same scopes and names over and over)
    # are remembered until the snapshot changes: only what questions touched, and at most
    # _REMEMBERED of each kind (then forgotten and remembered afresh).

    def _qname(self, path: str, qualified_name: str) -> int:
        key = (path, qualified_name)
        row = self._rows_by_qname.get(key)
        if row is None:
            p = self.symtab.path.id(path)
            row = self._qname_row(p, qualified_name) if p >= 0 else -1
            if len(self._rows_by_qname) >= _REMEMBERED:
                self._rows_by_qname.clear()
            self._rows_by_qname[key] = row
        return row

    def symbol(self, path: str, qualified_name: str) -> Symbol | None:
        row = self._qname(path, qualified_name)
        return self.symtab.symbol(row) if row >= 0 else None

    def kind_of(self, path: str, qualified_name: str) -> SymbolKind | None:
        """``symbol(path, qualified_name).kind``, without making the ``Symbol``."""
        row = self._qname(path, qualified_name)
        return _KIND_OF[int(self.symtab.kind[row])] if row >= 0 else None

    def symbols_named(self, name: str) -> list[Symbol]:
        """The symbols named ``name``, in the files' order (a list the caller must not change)."""
        found = self._named.get(name)
        if found is None:
            k = self.symtab.name.id(name)
            rows = self._by_name[self._name_starts[k] : self._name_starts[k + 1]] if k >= 0 else _NO_ROWS
            found = self.symtab.symbols(rows)
            if len(self._named) >= _REMEMBERED:
                self._named.clear()
            self._named[name] = found
        return found

    def members_of(self, path: str, container: str) -> list[Symbol]:
        """The symbols whose container is ``container`` in ``path``, in the file's order (a
        list the caller must not change)."""
        found = self._members_found.get((path, container))
        if found is None:
            found = self._members_of(path, container)
            if len(self._members_found) >= _REMEMBERED:
                self._members_found.clear()
            self._members_found[(path, container)] = found
        return found

    def _members_of(self, path: str, container: str) -> list[Symbol]:
        cols = self.symtab
        k = pair_slot(
            self._member_keys, cols.path.id(path), cols.container.id(container), len(cols.container.values)
        )
        if k < 0:
            return []
        return cols.symbols(self._members[self._member_starts[k] : self._member_starts[k + 1]])

    def detached_of(self, container: str) -> list[Symbol]:
        """Members of ``container`` declared in files where no symbol has that name."""
        rows = self.detached.get(container)
        return self.symtab.symbols(rows) if rows else []

    def top_level(self, path: str, name: str) -> Symbol | None:
        return self.symbol(path, name)

    def edge_rows_of(
        self, path: str, kinds: Collection[EdgeKind] | None = None, lines: tuple[int, int] | None = None
    ) -> Rows:
        """Rows of a file's edges, in the order written; only ``kinds``, only within
        ``lines`` (first, last; 1-based, inclusive) when given."""
        lo, hi = self._file_rows.get(path, (0, 0))
        rows = np.arange(lo, hi, dtype=np.int32)
        c = self.columns
        if kinds is not None:
            rows = rows[np.isin(c.kind[lo:hi], [KIND_CODE[k] for k in kinds])]
        if lines is not None:
            at = c.line[rows]
            rows = rows[(at >= lines[0]) & (at <= lines[1])]
        return rows

    def edges_of(
        self, path: str, kinds: Collection[EdgeKind] | None = None, lines: tuple[int, int] | None = None
    ) -> list[Edge]:
        """A file's edges (see ``edge_rows_of``)."""
        return self.edges(self.edge_rows_of(path, kinds, lines))

    def symbols_of(self, path: str) -> Sequence[Symbol]:
        fg = self.files.get(path)
        return fg.symbols if fg is not None else []

    def all_edges(self) -> Iterable[Edge]:
        for path in self.files:
            yield from self.edges_of(path)

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

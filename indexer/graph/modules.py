"""Which files an import or a qualified path names, per language: a Python module, a
JS/TS file (``./util.js`` is ``util.ts``), a Go package folder (by ``go.mod``'s module
path), a C header, a Rust module walked from its crate root, a fully qualified name
matched against paths. A base of :class:`.resolve.Resolver`, which answers the member
lookups a walk asks (``member_of``)."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from ..model import Edge, Symbol, SymbolKind
from .snapshot import Snapshot, module_key

_FAMILY = {
    "typescript": "js",
    "tsx": "js",
    "javascript": "js",
    "c": "c",
    "cpp": "c",
    "cuda": "c",
}
_JS_EXTENSIONS = ("", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", "/index.ts", "/index.tsx", "/index.js")
_TS_SOURCES = {".js": (".ts", ".tsx", ".d.ts"), ".jsx": (".tsx",), ".mjs": (".mts",), ".cjs": (".cts",)}
MAX_DEPTH = 16


def family(language: str) -> str:
    """Languages that can reference each other's definitions (JS and TS, C and C++)."""
    return _FAMILY.get(language, language)


@dataclass(frozen=True, slots=True)
class Module:
    """A module as a set of files: a Python or JS file, a Go package directory."""

    name: str
    paths: tuple[str, ...]


Target = Symbol | Module


class ModuleFinder:
    """Module lookups over one snapshot (see the module docstring)."""

    snap: Snapshot

    def member_of(self, target: Target, name: str, depth: int) -> Target | None:
        raise NotImplementedError

    def rust_path(self, edge: Edge, depth: int) -> Target | None:
        """A Rust ``use crate::a::b::C`` / ``use self::a::C``, walked module by module from
        the crate's root file (``lib.rs`` / ``main.rs`` above the file) or the file's own
        module, through ``mod a;`` declarations and ``pub use`` re-exports; None when the
        path starts elsewhere (``super``, another crate) or a step finds nothing."""
        parts = edge.module.split(".") if edge.module else []
        if not parts or parts[0] not in ("crate", "self"):
            return None
        start = self.rust_crate_root(edge.path) if parts[0] == "crate" else edge.path
        if not start:
            return None
        target: Target | None = Module(start, (start,))
        for part in parts[1:] + ([edge.to_name] if edge.to_name not in ("", "*") else []):
            if target is None:
                return None
            target = self.member_of(target, part, depth + 1)
        if edge.to_name == "*" and isinstance(target, Symbol) and target.kind is SymbolKind.MODULE:
            file = self.rust_module_file(target)  # `use crate::a::*`: every item of a
            return Module(file, (file,)) if file else None
        return target

    def rust_crate_root(self, path: str) -> str:
        """The root file of the crate ``path`` is in: the nearest ``lib.rs`` or ``main.rs``
        in its folder or a folder above it, or "" — also when a folder holds both and
        ``path`` is neither (which crate declares it is not known)."""
        if posixpath.basename(path) in ("lib.rs", "main.rs"):
            return path
        folder = posixpath.dirname(path)
        while True:
            roots = [posixpath.join(folder, r) if folder else r for r in ("lib.rs", "main.rs")]
            found = [r for r in roots if r in self.snap.files]
            if found:
                return found[0] if len(found) == 1 else ""
            if not folder:
                return ""
            folder = posixpath.dirname(folder)

    def rust_module_file(self, module: Symbol) -> str:
        """The file of a Rust module declared without a body (``mod bound;`` in ``lib.rs``
        is ``bound.rs`` or ``bound/mod.rs`` beside it; in ``de.rs``, ``de/bound.rs``), or ""."""
        here = posixpath.dirname(module.path)
        stem = posixpath.basename(module_key(module.path))
        folder = here if stem in ("lib", "main", "mod") else posixpath.join(here, stem)
        base = posixpath.join(folder, *module.qualified_name.split("."))
        for candidate in (base + ".rs", base + "/mod.rs"):
            if candidate in self.snap.files:
                return candidate
        return ""

    def python_module(self, dotted: str) -> Module | None:
        snap = self.snap
        path = snap.python_modules.get(dotted)
        if path is None:
            found = snap.module_suffixes.get(dotted, [])
            if len(found) != 1:
                return None
            path = found[0]
        return Module(snap.module_name(path), (path,))

    def js_module(self, importer: str, spec: str) -> Module | None:
        if not spec.startswith("."):
            return None  # a package from node_modules: outside the workspace
        base = posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))
        stem, dot, ext = base.rpartition(".")
        # TypeScript imports its own sources by the name they compile to (`./util.js` is
        # `./util.ts`), and looks for the source first, as tsc does
        for source in _TS_SOURCES.get(dot + ext, ()) if "/" not in ext else ():
            if stem + source in self.snap.files:
                return Module(base, (stem + source,))
        for ext in _JS_EXTENSIONS:
            p = self.snap.module_keys.get(module_key(base + ext)) if ext else self.snap.module_keys.get(base)
            if p is not None and self.snap.files.get(p) is not None and (not ext or p.endswith(ext)):
                return Module(base, (p,))
        return None

    def go_package(self, import_path: str) -> Module | None:
        """The folder an import path names: by a ``go.mod``'s module path in the index
        (``github.com/go-chi/chi/v5`` is the folder of its go.mod, ``…/v5/middleware`` the
        ``middleware`` folder in it; the longest module path first), else the folder the
        path ends with."""
        for module, folder in self.snap.go_modules.items():
            if import_path == module or import_path.startswith(module + "/"):
                rest = import_path[len(module) + 1 :]
                d = posixpath.join(folder, rest) if folder and rest else folder or rest
                return self._go_files(import_path, d)
        parts = import_path.split("/")
        for i in range(len(parts)):
            found = self._go_files(import_path, "/".join(parts[i:]))
            if found is not None:
                return found
        return None

    def _go_files(self, import_path: str, folder: str) -> Module | None:
        files = [p for p in self.snap.dirs.get(folder, []) if p.endswith(".go")]
        return Module(import_path, tuple(files)) if files else None

    def header(self, importer: str, spec: str) -> Module | None:
        local = posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))
        if local in self.snap.files:
            return Module(spec, (local,))
        found = [p for p in self.snap.files if p == spec or p.endswith("/" + spec)]
        return Module(spec, tuple(found)) if len(found) == 1 else None

    def qualified(self, parts: list[str], lang: str) -> Symbol | None:
        """A fully qualified name (``a.b.C``, ``std.collections.HashMap``) matched against
        qualified names and paths; only a unique match counts."""
        parts = [p for p in parts if p not in ("", "crate", "self", "super")]
        if not parts:
            return None
        fam = family(lang)
        want = ".".join(parts)
        found = []
        for s in self.snap.symbols_named(parts[-1]):
            if family(s.language) != fam:
                continue
            where = module_key(s.path).removesuffix("/mod").replace("/", ".")  # Rust: `a/mod.rs` is `a`
            full = f"{where}.{s.qualified_name}"
            owner = ".".join(parts[:-1])
            if (
                s.qualified_name == want
                or s.qualified_name.endswith("." + want)
                or full.endswith("." + want)
                or (owner and (where == owner or where.endswith("." + owner)) and _top_of(s, where, want))
            ):
                found.append(s)
        return found[0] if len(found) == 1 else None


def _top_of(s: Symbol, where: str, want: str) -> bool:
    """Whether ``s``, in the module ``where`` an import names, is what it imports: a
    definition at the module's top, or one nested in the class the file is named after
    (Java's ``import a.Bar.Inner`` from ``a/Bar.java``) — never a namesake nested deeper
    (Rust's ``use crate::a::URL`` is not ``a::inner::URL``)."""
    head, _, tail = s.qualified_name.partition(".")
    if not tail:
        return True
    return where.rsplit(".", 1)[-1] == head and f".{where}.{tail}".endswith("." + want)


def absolute_module(module: str, importer: str) -> str:
    """``..pkg.mod`` imported from ``a/b/c.py`` → ``a.pkg.mod``; absolute names unchanged."""
    if not module.startswith("."):
        return module
    dots = len(module) - len(module.lstrip("."))
    rest = module[dots:]
    package = importer.split("/")[:-1]  # a module's package is its directory (also for __init__.py)
    if dots > 1:
        package = package[: len(package) - (dots - 1)] if dots - 1 <= len(package) else []
    return ".".join([*package, rest] if rest else package)

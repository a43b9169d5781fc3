"""Resolution and graph queries over parsed files (real tree-sitter, no store)."""

from __future__ import annotations

import textwrap

import pytest

from codesift.indexer.graph import Graph, ImplementationKind, callees, callers, implementations, references
from codesift.indexer.graph.snapshot import FileGraph, Snapshot
from codesift.indexer.languages import language_for_path
from codesift.indexer.model import EdgeKind, Symbol, SymbolKind
from codesift.indexer.parse import parse_file
from codesift.indexer.settings import Settings


def graph_of(files: dict[str, str]) -> Graph:
    parsed = []
    for path, text in files.items():
        lang = language_for_path(path)
        r = parse_file(path, textwrap.dedent(text).lstrip("\n"), lang, project="p", settings=Settings().chunk)
        parsed.append(FileGraph(path, lang, "h", list(r.symbols), list(r.edges)))
    return Graph(None, Snapshot.of(parsed))


def one(graph: Graph, name: str) -> Symbol:
    found = graph.find(name)
    assert len(found) == 1, found
    return found[0]


def caller_names(graph: Graph, name: str) -> set[str]:
    return {c.caller.qualified_name if c.caller else c.path for c in callers(graph, one(graph, name))}


def call_edge(graph: Graph, path: str, to_name: str):  # type: ignore[no-untyped-def]
    (edge,) = [e for e in graph.snapshot.edges_of(path) if e.kind is EdgeKind.CALL and e.to_name == to_name]
    return graph.resolve(edge)


def test_self_method_call_resolves_into_base_class() -> None:
    g = graph_of(
        {
            "base.py": "class Base:\n    def save(self):\n        pass\n",
            "child.py": """
                from base import Base
                class Child(Base):
                    def run(self):
                        self.save()
                """,
        }
    )
    assert call_edge(g, "child.py", "self.save").to_symbol == "Base.save"
    assert caller_names(g, "Base.save") == {"Child.run"}


def test_super_call_resolves_to_the_base_not_the_override() -> None:
    g = graph_of(
        {
            "m.py": """
                class A:
                    def f(self): pass
                class B(A):
                    def f(self):
                        super().f()
                """
        }
    )
    assert call_edge(g, "m.py", "super.f").to_symbol == "A.f"


def test_aliased_import_resolves() -> None:
    g = graph_of(
        {
            "pkg/__init__.py": "",
            "pkg/tools.py": "def helper():\n    pass\n",
            "app.py": "from pkg.tools import helper as h\nimport pkg.tools as t\n"
            "def main():\n    h()\n    t.helper()\n",
        }
    )
    assert call_edge(g, "app.py", "h").to_symbol == "helper"
    assert call_edge(g, "app.py", "t.helper").to_symbol == "helper"
    assert caller_names(g, "helper") == {"main"}


def test_relative_import_resolves() -> None:
    g = graph_of(
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "def helper():\n    pass\n",
            "pkg/sub/__init__.py": "",
            "pkg/sub/b.py": "from ..a import helper\nfrom . import c\n"
            "def run():\n    helper()\n    c.other()\n",
            "pkg/sub/c.py": "def other():\n    pass\n",
        }
    )
    assert call_edge(g, "pkg/sub/b.py", "helper").to_symbol == "helper"
    resolved = call_edge(g, "pkg/sub/b.py", "c.other")
    assert resolved.to_symbol == "other"


def test_a_relative_import_in_a_workspace_that_is_the_package_resolves() -> None:
    # the workspace is the package itself (requests' own folder opened): its modules are
    # `api`, `sessions`, and `from . import sessions` in `api.py` names `sessions.py`
    g = graph_of(
        {
            "__init__.py": "from . import api\n",
            "sessions.py": "class Session:\n    def request(self):\n        pass\n",
            "api.py": "from . import sessions\ndef request():\n    return sessions.Session().request()\n",
        }
    )
    assert call_edge(g, "api.py", "sessions.Session").to_symbol == "Session"


def test_reexport_through_package_init_resolves() -> None:
    g = graph_of(
        {
            "json2/__init__.py": "from .decoder import loads\n",
            "json2/decoder.py": "def loads(s):\n    return s\n",
            "app.py": "import json2\ndef f():\n    return json2.loads('x')\n",
        }
    )
    target = one(g, "json2.loads")
    assert target.path == "json2/decoder.py"
    assert caller_names(g, "json2.loads") == {"f"}


def test_ambiguous_name_stays_unresolved_with_candidates() -> None:
    g = graph_of(
        {
            "a.py": "class A:\n    def close(self):\n        pass\n",
            "b.py": "class B:\n    def close(self):\n        pass\n",
            "use.py": "def shut(thing):\n    thing.close()\n",
        }
    )
    edge = call_edge(g, "use.py", "?.close")  # an untyped parameter: a receiver of unknown type
    assert edge.to_symbol == ""
    assert set(edge.candidates) == {"a.py:A.close", "b.py:B.close"}
    assert callers(g, one(g, "A.close")) == []
    maybe = callers(g, one(g, "A.close"), include_unresolved=True)
    assert [(c.caller.qualified_name if c.caller else "", c.resolved) for c in maybe] == [("shut", False)]


def test_unknown_receiver_with_one_candidate_is_still_not_guessed() -> None:
    g = graph_of(
        {"a.py": "class A:\n    def only(self):\n        pass\n", "b.py": "def f(x):\n    x.only()\n"}
    )
    edge = call_edge(g, "b.py", "?.only")
    assert edge.to_symbol == "" and edge.candidates == ("a.py:A.only",)


def test_python_bare_name_from_another_file_without_import_is_not_guessed() -> None:
    g = graph_of({"a.py": "def helper():\n    pass\n", "b.py": "def f():\n    helper()\n"})
    assert call_edge(g, "b.py", "helper").to_symbol == ""


def test_java_same_package_and_unique_global_definition_resolve() -> None:
    g = graph_of(
        {
            "src/a/Util.java": "class Util { static void help() {} }\n",
            "src/a/Main.java": "class Main { void run() { Util.help(); go(); } void go() {} }\n",
        }
    )
    assert call_edge(g, "src/a/Main.java", "Util.help").to_symbol == "Util.help"
    assert call_edge(g, "src/a/Main.java", "go").to_symbol == "Main.go"  # implicit this


def test_method_overrides_are_implementations_of_the_method() -> None:
    g = graph_of(
        {
            "m.py": """
                class Shape:
                    def area(self): raise NotImplementedError
                class Square(Shape):
                    def area(self): return 1
                class Unit(Square):
                    def area(self): return 2
                """
        }
    )
    found = implementations(g, one(g, "Shape.area"))
    assert {(i.symbol.qualified_name if i.symbol else "", i.how) for i in found} == {
        ("Square.area", ImplementationKind.OVERRIDE),
        ("Unit.area", ImplementationKind.OVERRIDE),
    }


def test_subclasses_are_found_transitively() -> None:
    g = graph_of(
        {
            "a.py": "class Base:\n    pass\n",
            "b.py": "from a import Base\nclass Mid(Base):\n    pass\nclass Leaf(Mid):\n    pass\n",
        }
    )
    assert [i.symbol.qualified_name for i in implementations(g, one(g, "Base")) if i.symbol] == [
        "Mid",
        "Leaf",
    ]


def test_python_protocol_structural_implementers() -> None:
    g = graph_of(
        {
            "p.py": """
                from typing import Protocol
                class Closer(Protocol):
                    def close(self) -> None: ...
                    def flush(self) -> None: ...
                """,
            "impl.py": """
                class File:
                    def close(self): pass
                    def flush(self): pass
                class Half:
                    def close(self): pass
                """,
        }
    )
    found = implementations(g, one(g, "Closer"))
    assert [(i.symbol.qualified_name if i.symbol else "", i.how) for i in found] == [
        ("File", ImplementationKind.STRUCTURAL)
    ]


def test_go_types_whose_method_sets_satisfy_an_interface() -> None:
    g = graph_of(
        {
            "store/store.go": "package store\ntype Store interface {\n\tGet() int\n\tPut(v int)\n}\n",
            "store/mem.go": "package store\ntype Mem struct{}\nfunc (m *Mem) Get() int { return 0 }\n"
            "func (m *Mem) Put(v int) { m.Get() }\n",
            "store/half.go": "package store\ntype Half struct{}\nfunc (h Half) Get() int { return 1 }\n",
        }
    )
    found = implementations(g, one(g, "Store"))
    assert [(i.symbol.qualified_name if i.symbol else "", i.how) for i in found] == [
        ("Mem", ImplementationKind.METHOD_SET)
    ]
    assert call_edge(g, "store/mem.go", "self.Get").to_symbol == "Mem.Get"


def test_swift_extension_conformance_is_an_implementation() -> None:
    g = graph_of(
        {
            "Auth.swift": "protocol AuthProtocol {\n    func login() -> Bool\n}\nstruct Token {}\n",
            "Token+Auth.swift": "extension Token: AuthProtocol {\n"
            "    func login() -> Bool { return true }\n}\n",
        }
    )
    found = implementations(g, one(g, "AuthProtocol"))
    assert [(i.symbol.qualified_name if i.symbol else "", i.how, i.location.path) for i in found] == [
        ("Token", ImplementationKind.EXTENSION, "Token+Auth.swift")
    ]
    overrides = implementations(g, one(g, "AuthProtocol.login"))
    assert [i.symbol.path for i in overrides if i.symbol] == ["Token+Auth.swift"]


def test_swift_extension_names_its_type_and_reports_at_its_own_line() -> None:
    g = graph_of(
        {
            "Conv.swift": "protocol URLConvertible {}\nstruct Endpoint {\n    let path: String\n}\n"
            "extension Endpoint: URLConvertible {}\nextension String: URLConvertible {}\n",
            "Auth.swift": "struct Request {\n    struct Authentication {}\n}\n"
            "extension Request.Authentication {\n    func login() {}\n}\n",
        }
    )
    found = implementations(g, one(g, "URLConvertible"))
    assert [(i.name, i.how, i.location.span.start.line) for i in found] == [
        ("Endpoint", ImplementationKind.EXTENSION, 5),
        ("String", ImplementationKind.EXTENSION, 6),
    ]
    login = one(g, "login")
    assert login.qualified_name == "Request.Authentication.login"
    assert g.resolver.enclosing_type(login.path, login.qualified_name) == one(g, "Authentication")


NESTED_URL = """
public struct ValidatorResults {}
extension ValidatorResults {
    public struct URL {
        public let isValidURL: Bool
        func check() {}
    }
}
extension ValidatorResults.URL: ValidatorResult {
    func again() { self.check() }
}
protocol ValidatorResult {}
"""
FOUNDATION_URL = """
import Foundation
public protocol URLConvertible {
    func asURL() throws -> URL
}
extension URL: URLConvertible {
    public func asURL() throws -> URL { self.check(); return self }
}
"""


def test_swift_bare_name_is_never_a_type_nested_in_another() -> None:
    """Foundation's `URL` extended in one package is not the other's `ValidatorResults.URL`."""
    g = graph_of({"Vapor/URL.swift": NESTED_URL, "Alamofire/URLConvertible.swift": FOUNDATION_URL})
    nested = one(g, "ValidatorResults.URL")
    assert g.resolver.type_for_scope("Alamofire/URLConvertible.swift", "URL") is None
    assert g.resolver.type_for_scope("Vapor/URL.swift", "ValidatorResults.URL") == nested
    found = implementations(g, one(g, "URLConvertible"))
    assert [(i.symbol, i.name) for i in found] == [(None, "URL")]
    assert "asURL" not in {m.name for m in g.resolver.own_members(nested)}
    assert not call_edge(g, "Alamofire/URLConvertible.swift", "self.check").to_symbol
    assert call_edge(g, "Vapor/URL.swift", "self.check").to_symbol == "ValidatorResults.URL.check"
    assert [i.name for i in implementations(g, one(g, "ValidatorResult"))] == ["ValidatorResults.URL"]


@pytest.mark.parametrize(
    ("files", "path", "scope"),
    [
        # Java / Kotlin / C#: an inner class is no answer for an extension-less bare name
        ({"Outer.java": "class Outer {\n    static class URL {}\n}\n"}, "Other.java", "URL"),
        ({"Outer.kt": "class Outer {\n    class URL\n}\n"}, "Other.kt", "URL"),
        ({"Outer.cs": "namespace N {\n    class Outer {\n        class URL {}\n    }\n}\n"}, "O.cs", "URL"),
        # the same file: a nested type is not the top-level name either
        ({"Both.swift": "struct Outer {\n    struct URL {}\n}\nextension URL {}\n"}, "Both.swift", "URL"),
    ],
)
def test_a_nested_type_is_not_a_bare_scope_name(files: dict[str, str], path: str, scope: str) -> None:
    g = graph_of({**files, path: files.get(path, "")})
    assert g.resolver.type_for_scope(path, scope) is None


def test_a_type_in_a_module_or_namespace_keeps_its_bare_name() -> None:
    g = graph_of(
        {
            "src/a.rs": "pub mod m {\n    pub struct Foo;\n}\n",
            "src/b.rs": "use crate::a::m::Foo;\nimpl Foo {\n    fn x(&self) {}\n}\n",
            "N.cs": "namespace N {\n    class Outer {}\n}\n",
            "Other.cs": "",
        }
    )
    assert g.resolver.type_for_scope("src/b.rs", "Foo") == one(g, "m.Foo")
    assert g.resolver.type_for_scope("Other.cs", "Outer") == one(g, "N.Outer")


def test_rust_trait_impl_and_self_calls() -> None:
    g = graph_of(
        {
            "src/lib.rs": "trait Draw { fn draw(&self); }\nstruct Circle {}\n"
            "impl Draw for Circle { fn draw(&self) { self.r(); } }\nimpl Circle { fn r(&self) {} }\n",
        }
    )
    assert [i.symbol.qualified_name for i in implementations(g, one(g, "Draw")) if i.symbol] == ["Circle"]
    assert call_edge(g, "src/lib.rs", "self.r").to_symbol == "Circle.r"


def test_typescript_import_and_reexport_resolve() -> None:
    g = graph_of(
        {
            "src/util.ts": "export function fmt(x: string) { return x; }\n",
            "src/index.ts": "export { fmt } from './util';\n",
            "src/app.ts": "import { fmt as f } from './index';\nexport function main() { f('x'); }\n",
        }
    )
    assert call_edge(g, "src/app.ts", "f").to_symbol == "fmt"
    assert one(g, "fmt").path == "src/util.ts"


def test_typescript_imports_its_own_sources_by_their_compiled_names() -> None:
    # ESM TypeScript (zod, vitest): `./util.js` is `./util.ts`, `./view.jsx` `./view.tsx`
    g = graph_of(
        {
            "src/util.ts": "export function fmt(x: string) { return x; }\n",
            "src/view.tsx": "export function draw() { return 1; }\n",
            "src/index.ts": "export * from './util.js';\n",
            "src/app.ts": (
                "import { fmt } from './util.js';\nimport * as v from './view.jsx';\n"
                "import * as all from './index.js';\n"
                "export function main() { fmt('x'); v.draw(); all.fmt('y'); }\n"
            ),
        }
    )
    assert call_edge(g, "src/app.ts", "fmt").to_symbol == "fmt"
    assert call_edge(g, "src/app.ts", "v.draw").to_symbol == "draw"
    assert call_edge(g, "src/app.ts", "all.fmt").to_symbol == "fmt"


def test_a_namespace_re_export_binds_one_name_not_each_member() -> None:
    # zod's core: `export * as regexes from "./regexes.js"` beside `export * from "./schemas.js"`
    g = graph_of(
        {
            "src/regexes.ts": "export const number = /^[0-9]+$/;\n",
            "src/schemas.ts": "export function number() { return 1; }\n",
            "src/index.ts": "export * as regexes from './regexes';\nexport * from './schemas';\n",
            "src/app.ts": "import * as z from './index';\nexport function main() { z.number(); }\n",
        }
    )
    (edge,) = [e for e in g.snapshot.edges_of("src/app.ts") if e.kind is EdgeKind.CALL]
    target = g.resolver.resolve(edge).symbol
    assert target is not None and (target.path, target.qualified_name) == ("src/schemas.ts", "number")
    (ns,) = [e for e in g.snapshot.edges_of("src/index.ts") if e.module == "./regexes"]
    assert (ns.to_name, ns.alias) == ("", "regexes")


def test_rust_module_paths_walk_mod_declarations_and_pub_use() -> None:
    # serde_derive: `mod bound;` in lib.rs is bound.rs; `use crate::internals::{attr, Ctxt}`
    # where internals/mod.rs declares `pub mod attr;` and re-exports `pub use self::ctxt::Ctxt;`
    g = graph_of(
        {
            "src/lib.rs": "mod bound;\nmod de;\nmod internals;\n",
            "src/bound.rs": "pub fn with_bound() {}\n",
            "src/internals/mod.rs": "pub mod attr;\nmod ctxt;\npub use self::ctxt::Ctxt;\n",
            "src/internals/attr.rs": "pub struct Field;\nimpl Field {\n    pub fn skip(&self) {}\n}\n",
            "src/internals/ctxt.rs": "pub struct Ctxt;\nimpl Ctxt {\n    pub fn error(&self) {}\n}\n",
            "src/de.rs": (
                "use crate::bound;\nuse crate::internals::{attr, Ctxt};\n"
                "fn f(cx: &Ctxt, field: &attr::Field) {\n    bound::with_bound();\n    cx.error();\n"
                "    field.skip();\n}\n"
            ),
            # a folder with both crate roots: which one declares `x.rs` is not known
            "two/lib.rs": "mod x;\n",
            "two/main.rs": "mod x;\n",
            "two/x.rs": "pub fn g() {}\n",
        }
    )
    got = {
        e.to_name: (r.symbol.path, r.symbol.qualified_name) if r.symbol is not None else None
        for e in g.snapshot.edges_of("src/de.rs")
        if e.kind is EdgeKind.CALL and (r := g.resolver.resolve(e))
    }
    assert got == {
        "bound.with_bound": ("src/bound.rs", "with_bound"),
        "cx.error": ("src/internals/ctxt.rs", "Ctxt.error"),
        "field.skip": ("src/internals/attr.rs", "Field.skip"),
    }
    assert g.resolver.rust_crate_root("src/internals/attr.rs") == "src/lib.rs"
    assert g.resolver.rust_crate_root("two/x.rs") == ""


def test_callers_carry_call_site_ranges_and_callees_the_unresolved_candidates() -> None:
    g = graph_of({"m.py": "def g():\n    pass\n\ndef f():\n    g()\n    g()\n    unknown()\n\ng()\n"})
    sites = callers(g, one(g, "g"))
    by_caller = {(c.caller.qualified_name if c.caller else c.path): c for c in sites}
    assert set(by_caller) == {"f", "m.py"}
    assert [r.start.line for r in by_caller["f"].from_ranges] == [5, 6]
    assert by_caller["m.py"].caller is None
    out = callees(g, one(g, "f"))
    assert [(c.name, c.callee is not None) for c in out] == [("g", True), ("unknown", False)]
    assert {r.kind for r in references(g, one(g, "g"))} == {EdgeKind.CALL}


def test_python_local_class_is_named_by_itself_and_overloads_fold() -> None:
    g = graph_of(
        {
            "m.py": "from typing import overload\n\nclass Base: ...\n\n"
            "def test_x():\n    class Source(Base):\n        pass\n    return Source()\n\n"
            "class Command:\n    @overload\n    def main(self, a: int) -> None: ...\n"
            "    @overload\n    def main(self, a: str) -> None: ...\n"
            "    def main(self, a):\n        self.run()\n    def run(self): ...\n",
        }
    )
    found = implementations(g, one(g, "Base"))
    assert [(i.symbol, i.name, i.how, i.location.span.start.line) for i in found] == [
        (None, "test_x.Source", ImplementationKind.SUBCLASS, 6)
    ]
    main = one(g, "Command.main")  # one symbol: the implementation, not its stubs
    assert main.range.start.line == 15
    assert [c.callee.qualified_name for c in callees(g, main) if c.callee] == ["Command.run"]


def test_python_modules_are_named_from_their_package_root() -> None:
    g = graph_of(
        {
            "src/click/__init__.py": "from .core import Command\n",
            "src/click/core.py": "from ._compat import term\n\nclass Command:\n    def run(self):\n"
            "        return term()\n",
            "src/click/_compat.py": "def term(): ...\n",
        }
    )
    (imp,) = [e for e in g.snapshot.edges_of("src/click/core.py") if e.kind is EdgeKind.IMPORT]
    r = g.resolver.resolve(imp)
    assert r.symbol is not None and r.symbol.qualified_name == "term"
    assert g.snapshot.module_name("src/click/_compat.py") == "click._compat"
    assert g.resolver.python_module("click.core") == g.resolver.python_module("src.click.core")
    assert g.resolver.python_module("click.core").name == "click.core"  # type: ignore[union-attr]


def test_an_import_names_a_module_top_or_the_file_class_member_never_a_deeper_namesake() -> None:
    g = graph_of(
        {
            "src/a.rs": "pub mod inner {\n    pub struct Url;\n    impl Url {\n"
            "        pub fn go(&self) {}\n    }\n}\n",
            "src/b.rs": "use crate::a::Url;\nfn f(u: Url) {\n    u.go();\n}\n",
            "src/p/Bar.java": "package p;\npublic class Bar {\n    public static class Inner {\n"
            "        public void run() {}\n    }\n}\n",
            "src/q/Use.java": "package q;\nimport p.Bar.Inner;\nclass Use {\n    void m(Inner i) {\n"
            "        i.run();\n    }\n}\n",
        }
    )
    assert call_edge(g, "src/b.rs", "u.go").to_symbol == ""
    assert call_edge(g, "src/q/Use.java", "i.run").to_symbol == "Bar.Inner.run"


def called(graph: Graph, path: str, to_name: str) -> Symbol | None:
    """What the one call written ``to_name`` in ``path`` resolves to."""
    (edge,) = [e for e in graph.snapshot.edges_of(path) if e.kind is EdgeKind.CALL and e.to_name == to_name]
    return graph.resolver.resolve(edge).symbol


def test_kotlin_extension_functions_are_members_of_the_extended_type() -> None:
    """`fun Table.ext()` is a member of `Table` (as a Swift extension's function is): found
    through a typed receiver, `this` and a bare name in another extension of `Table`, and
    listed with the type; a bare `ext()` whose implicit receiver is unknown (a lambda with a
    receiver) is not guessed, and a member of the implicit receiver wins over a namesake
    top-level function."""
    g = graph_of(
        {
            "src/a/Table.kt": "package a\n\nclass Table {\n    fun own() {}\n    fun put() {}\n}\n",
            "src/a/Ext.kt": (
                "package a\n\nfun Table.ext(x: Int): Int = x\n"
                "fun Table.other() {\n    ext(1)\n    this.own()\n    put()\n}\n"
                "fun <T> T.also2(): T = this\nfun put() {}\n"
                "fun use(t: Table) {\n    t.ext(1)\n    build { ext(2) }\n}\n"
            ),
        }
    )
    ext = one(g, "Table.ext")
    assert ext.container == "Table" and ext.kind is SymbolKind.METHOD
    assert one(g, "also2").container == ""  # a generic receiver extends no type we know
    assert g.resolver.own_member(one(g, "Table"), "ext") == ext
    assert called(g, "src/a/Ext.kt", "t.ext") == ext
    assert called(g, "src/a/Ext.kt", "this.own") == one(g, "Table.own")
    assert called(g, "src/a/Ext.kt", "put") == one(g, "Table.put")
    bare = [e for e in g.snapshot.edges_of("src/a/Ext.kt") if e.to_name == "ext"]
    inside, in_lambda = (g.resolver.resolve(e) for e in bare)
    assert inside.symbol == ext
    assert in_lambda.symbol is None and ext in in_lambda.candidates


def test_csharp_dotted_namespace_sees_its_outer_namespaces() -> None:
    """`namespace A.B.C { … }` is inside `A.B` and `A`: their types in other files are seen
    without a `using`, innermost first."""
    g = graph_of(
        {
            "Lib.cs": (
                "namespace A.B {\n    public class Foo { public static void Go() {} }\n}\n"
                "namespace A {\n    public class Top { public static void Up() {} }\n"
                "    public class Foo { public static void Go() {} }\n}\n"
            ),
            "Use.cs": (
                "namespace A.B.C {\n    public class User {\n"
                "        void M() { Foo.Go(); Top.Up(); }\n    }\n}\n"
            ),
            "Other.cs": "namespace Z {\n    public class User {\n        void M() { Top.Up(); }\n    }\n}\n",
        }
    )
    assert called(g, "Use.cs", "Foo.Go") == one(g, "A.B.Foo.Go")
    assert called(g, "Use.cs", "Top.Up") == one(g, "A.Top.Up")
    assert called(g, "Other.cs", "Top.Up") is None


def test_csharp_file_scoped_namespace_names_as_a_block_namespace() -> None:
    """`namespace A.B.C;` qualifies the declarations after it as `namespace A.B.C { … }`
    qualifies its body: the same symbols, and the same lookups through `A.B` and `A`."""
    block = (
        "using System;\nnamespace A.B.C {\n    public class User {\n"
        "        void M() { Foo.Go(); Top.Up(); Near.By(); }\n    }\n"
        "    class Near { public static void By() {} }\n}\n"
    )
    scoped = (
        "using System;\nnamespace A.B.C;\npublic class User {\n"
        "    void M() { Foo.Go(); Top.Up(); Near.By(); }\n}\n"
        "class Near { public static void By() {} }\n"
    )
    lib = (
        "namespace A.B;\npublic class Foo { public static void Go() {} }\n"
        "public class Top { public static void Up() {} }\n"
    )
    top = "namespace A {\n    public class Top { public static void Up() {} }\n}\n"
    graphs = [graph_of({"Lib.cs": lib, "Top.cs": top, "Use.cs": use}) for use in (block, scoped)]
    names = [
        sorted((s.qualified_name, s.container, s.kind) for s in g.snapshot.files["Use.cs"].symbols)
        for g in graphs
    ]
    assert names[0] == names[1]
    assert ("A.B.C.User.M", "A.B.C.User", SymbolKind.METHOD) in names[1]
    for g in graphs:
        assert called(g, "Use.cs", "Foo.Go") == one(g, "A.B.Foo.Go")
        assert called(g, "Use.cs", "Top.Up") == one(g, "A.B.Top.Up")  # `A.B` before `A`
        assert called(g, "Use.cs", "Near.By") == one(g, "A.B.C.Near.By")
        assert caller_names(g, "A.B.Foo.Go") == {"A.B.C.User.M"}


def test_a_type_named_in_a_class_body_is_the_type_not_a_base_constructor() -> None:
    """C# / Java constructors are named like their class: `class R : JsonReader` and a
    `JsonReader r` parameter inside a subclass name the class, while `new JsonReader()`
    may name the constructor."""
    g = graph_of(
        {
            "Lib.cs": (
                "namespace A {\n    public class JsonReader {\n        public JsonReader() {}\n    }\n"
                "    public class R : JsonReader {\n"
                "        void M(JsonReader r) { new JsonReader(); }\n    }\n}\n"
            )
        }
    )
    reader = [s for s in g.find("A.JsonReader") if s.kind is SymbolKind.CLASS]
    edges = {e.kind: e for e in g.snapshot.edges_of("Lib.cs") if e.to_name == "JsonReader"}
    assert g.resolver.resolve(edges[EdgeKind.INHERIT]).symbol == reader[0]
    assert g.resolver.resolve(edges[EdgeKind.REFERENCE]).symbol == reader[0]
    assert g.resolver.bases(one(g, "A.R")) == (reader[0],)


@pytest.mark.parametrize(
    ("path", "code"),
    [
        (
            "T.cs",
            "namespace A {\n    public class T { public static void Go() {} }\n"
            "    class U {\n        void M<T>(T t) { T.Go(); }\n    }\n}\n",
        ),
        ("T.java", "class T { static void Go() {} }\nclass U {\n    <T> void m(T t) { T.Go(); }\n}\n"),
        ("T.kt", "class T { fun Go() {} }\nclass U {\n    fun <T> m(t: T) { T.Go() }\n}\n"),
        ("T.swift", "struct T { static func Go() {} }\nstruct U {\n    func m<T>(t: T) { T.Go() }\n}\n"),
        ("T.ts", "export class T { static Go() {} }\nclass U {\n    m<T>(t: T) { T.Go(); }\n}\n"),
        ("src/t.rs", "pub struct T;\nimpl T { pub fn Go() {} }\nfn m<T>(t: T) { T::Go(); }\n"),
    ],
    ids=["csharp", "java", "kotlin", "swift", "typescript", "rust"],
)
def test_a_generic_parameter_is_never_a_class_of_its_name(path: str, code: str) -> None:
    """`T` in `M<T>(T t)` is whatever the caller says: no reference edge to a class `T`, and
    `T.Go()` is a call on a receiver of unknown type (candidates, never resolved)."""
    g = graph_of({path: code})
    edges = g.snapshot.edges_of(path)
    in_m = [e for e in edges if e.from_symbol.rsplit(".", 1)[-1] in ("m", "M")]
    assert not [e for e in in_m if e.kind is EdgeKind.REFERENCE and e.to_name == "T"]
    (call,) = [e for e in edges if e.kind is EdgeKind.CALL and e.last_name == "Go"]
    r = g.resolver.resolve(call)
    assert r.symbol is None and r.candidates


def test_a_conditional_redefinition_has_the_calls_of_its_name() -> None:
    """`if WIN: def f() … else: def f() …` defines one name: a call of `f` calls whichever
    the module defines, so both definitions list it (jedi and pyright do too)."""
    g = graph_of(
        {
            "compat.py": "import sys\nif sys.platform == 'win32':\n    def f():\n        return 1\n"
            "else:\n    def f():\n        return 2\n",
            "use.py": "from compat import f\n\ndef g():\n    f()\n",
        }
    )
    first, second = sorted(g.find("f"), key=lambda s: s.range.start.line)
    for sym in (first, second):
        assert {c.caller.qualified_name for c in callers(g, sym) if c.caller} == {"g"}
        assert [r.location.path for r in references(g, sym) if r.kind is EdgeKind.CALL] == ["use.py"]


def test_an_import_inside_a_function_binds_its_name_there_only() -> None:
    """`from ._impl import raw as f` inside `raw()` names `f` in `raw` only: an `f` called in
    another function of the file is something else (click's `prompt` calls a local `f`)."""
    g = graph_of(
        {
            "pkg/__init__.py": "",
            "pkg/_impl.py": "def raw():\n    return 1\n",
            "pkg/termui.py": "def prompt(f=None):\n    return f()\n\n"
            "def raw():\n    from ._impl import raw as f\n\n    return f()\n",
        }
    )
    local, imported = sorted(
        (e for e in g.snapshot.edges_of("pkg/termui.py") if e.kind is EdgeKind.CALL), key=lambda e: e.line
    )
    assert g.resolver.resolve(local).symbol is None
    target = g.resolver.resolve(imported).symbol
    assert target is not None and target.path == "pkg/_impl.py"


def test_a_function_variable_shadows_every_definition_of_its_name() -> None:
    """A parameter, local or closure variable is whatever it holds, never a definition of its
    name outside the function (vapor's `configure(app)` in `group(configure:)` is the closure
    passed, not the top-level `configure`): unresolved, with the namesakes as candidates. A
    typed variable is followed through its type; `global`, a nested import and `self` keep
    their meaning."""
    g = graph_of(
        {
            "pkg/__init__.py": "",
            "pkg/conf.py": (
                "import json\n\ndef configure(app):\n    pass\n\ndef dumps(x):\n    pass\n\n"
                "class Context:\n    def invoke(self):\n        pass\n\n"
                "def group(configure, json, ctx: Context):\n    configure(1)\n    json.dumps(2)\n"
                "    ctx.invoke()\n\n"
                "def later(items):\n    for configure in items:\n        configure.run()\n\n"
                "def top():\n    global configure\n    configure(3)\n\n"
                "def plain():\n    configure(4)\n    json.dumps(5)\n"
            ),
            "App.swift": "func configure(_ app: Int) {}\n",
            "Routes.swift": (
                "struct Routes {\n    func group(configure: (Int) -> ()) {\n        configure(1)\n    }\n"
                "    func boot() {\n        configure(2)\n    }\n"
                "    func each() {\n        [1].forEach { configure in configure(3) }\n    }\n"
                "    static func range(_ range: Int) -> Routes {\n        .range(range)\n    }\n"
                "    func pick(v: Int) {\n        switch v {\n        case Routes.range(1): break\n"
                "        default: Routes.range(2)\n        }\n    }\n}\n"
            ),
        }
    )

    def calls(path: str) -> dict[int, tuple[str, str | None]]:
        out = {}
        for e in g.snapshot.edges_of(path):
            if e.kind is EdgeKind.CALL:
                r = g.resolver.resolve(e)
                out[e.line] = (e.to_name, r.symbol.qualified_name if r.symbol is not None else None)
        return out

    py = calls("pkg/conf.py")
    assert py[14] == ("?.configure", None) and py[15] == ("?.dumps", None)  # parameters
    assert py[16] == ("ctx.invoke", "Context.invoke")  # typed: through its type
    assert py[20] == ("?.run", None)  # a loop variable
    assert py[24] == ("configure", "configure")  # `global configure`: the module's
    assert py[27] == ("configure", "configure")  # no variable of that name here
    (defined,) = [s for s in g.find("configure") if s.path == "pkg/conf.py"]
    unresolved = [e for e in g.snapshot.edges_of("pkg/conf.py") if e.to_name == "?.configure"]
    assert defined in g.resolver.resolve(unresolved[0]).candidates
    assert {c.caller.qualified_name for c in callers(g, defined) if c.caller} == {"top", "plain"}
    swift = calls("Routes.swift")
    # `.range(…)` returned as a `Routes`: a member of that type, never the variable
    assert swift[12] == ("Routes.range", "Routes.range")
    assert swift[17] == ("Routes.range", "Routes.range")  # `Routes` matched in a case binds nothing
    assert swift[3] == ("?.configure", None)  # the closure parameter
    assert swift[6] == ("configure", "configure")  # the top-level function
    assert [e.to_name for e in g.snapshot.edges_of("Routes.swift") if e.line == 9][-1] == "?.configure"


def test_a_local_rebound_from_its_own_method_call_is_unresolved_not_a_crash() -> None:
    # `proc = Popen(…)` then `proc = proc.__enter__()` (the stdlib's test_subprocess): the
    # second binding's type depends on the call it binds; following it recursed until
    # Python's stack gave out (`callers Popen.__enter__` ended in RecursionError)
    g = graph_of(
        {
            "m.py": """
                class Res:
                    def __enter__(self):
                        return self
                    def close(self):
                        pass

                def use():
                    r = Res()
                    r = r.__enter__()
                    r.close()
                """,
        }
    )
    assert caller_names(g, "Res.__enter__") == set()
    assert not call_edge(g, "m.py", "r.__enter__").to_symbol
    assert caller_names(g, "Res.close") == set()


PARTIAL = {
    "Reader.cs": """namespace Lib {
public partial class Reader : Base {
    public void Read() { Skip(); }
}
}
""",
    "Reader.Async.cs": """namespace Lib {
public partial class Reader : IAsync {
    public void Skip() {}
    public void ReadAsync() { Read(); }
}
}
""",
    "Use.cs": """namespace Lib {
public class Base {}
public interface IAsync {}
public class Use {
    public void Run(Reader r) { r.Read(); r.Skip(); }
}
}
""",
}


def test_csharp_partial_class_parts_are_one_type() -> None:
    """`partial class Reader` in two files: one type with the members and bases of both
    (before, two definitions of one name: every reference to it stayed unresolved)."""
    g = graph_of(PARTIAL)
    parts = g.find("Lib.Reader")
    assert sorted(p.path for p in parts) == ["Reader.Async.cs", "Reader.cs"] and all(p.partial for p in parts)
    assert not one(g, "Lib.Use").partial
    assert caller_names(g, "Lib.Reader.Skip") == {"Lib.Reader.Read", "Lib.Use.Run"}
    assert caller_names(g, "Lib.Reader.Read") == {"Lib.Reader.ReadAsync", "Lib.Use.Run"}
    for part in parts:
        assert {m.name for m in g.resolver.own_members(part)} == {"Read", "Skip", "ReadAsync"}
        assert [i.symbol.qualified_name for i in implementations(g, one(g, "Lib.Base")) if i.symbol] == [
            "Lib.Reader"
        ]
    assert [i.symbol.qualified_name for i in implementations(g, one(g, "Lib.IAsync")) if i.symbol] == [
        "Lib.Reader"
    ]
    # the parameter type `Reader` resolves to the type, whichever part is asked about
    for part in parts:
        assert {r.location.path for r in references(g, part)} == {"Use.cs"}


def test_csharp_a_property_named_as_its_type_has_the_type_as_its_type() -> None:
    """C#'s "Color Color": in `private Encoder Encoder { get; }` the type is the class, and
    `Encoder.Encode()` calls the class's method through the property (before, the type
    position named the property itself, and the call stayed unresolved)."""
    g = graph_of(
        {
            "Encoder.cs": "namespace Lib {\npublic class Encoder {\n    public void Encode() {}\n}\n}\n",
            "Writer.cs": (
                "namespace Lib {\npublic class Writer {\n    private Encoder Encoder { get; }\n"
                "    public void Write() { Encoder.Encode(); }\n}\n}\n"
            ),
        }
    )
    (ref,) = [e for e in g.snapshot.edges_of("Writer.cs") if e.kind is EdgeKind.REFERENCE]
    assert g.resolver.resolve(ref).symbol == one(g, "Lib.Encoder")
    assert caller_names(g, "Lib.Encoder.Encode") == {"Lib.Writer.Write"}


@pytest.mark.parametrize(
    ("lang", "files"),
    [
        (
            "csharp",
            {
                "W.cs": "namespace L {\npublic class W { public void Flush() {} }\n}\n",
                "Base.cs": "namespace L {\npublic class Base { protected W _inner; }\n}\n",
                "U.cs": (
                    "namespace L {\npublic class U : Base {\n    private W _writer;\n"
                    "    private System.Collections.Generic.List<W> W;\n"
                    "    public void A() { _writer.Flush(); }\n"
                    "    public void B() { _inner.Flush(); }\n"
                    "    public void C() { Run(_writer => _writer.Flush()); }\n"
                    "    public void D() { W.Flush(); }\n}\n}\n"
                ),
            },
        ),
        (
            "java",
            {
                "src/l/W.java": "package l;\npublic class W { public void flush() {} }\n",
                "src/l/Base.java": "package l;\npublic class Base { protected W _inner; }\n",
                "src/l/U.java": (
                    "package l;\npublic class U extends Base {\n    private W _writer;\n"
                    "    public void a() { _writer.flush(); }\n"
                    "    public void b() { _inner.flush(); }\n"
                    "    public void c() { run(_writer -> _writer.flush()); }\n}\n"
                ),
            },
        ),
    ],
)
def test_a_field_written_without_this_is_the_field(lang: str, files: dict[str, str]) -> None:
    """`_writer.Flush()` in a method is `this._writer.Flush()` (a field of the class, or of a
    base); a lambda parameter of that name shadows it, and (C#) a field whose type is not
    stated (a generic list named `W`) is the field still, never the class `W`."""
    g = graph_of(files)
    path = next(p for p in files if "/U." in p or p.startswith("U."))
    got = {}
    for e in g.snapshot.edges_of(path):
        if e.kind is EdgeKind.CALL and e.to_name.lower().endswith("flush"):
            r = g.resolver.resolve(e)
            got[e.from_symbol.rsplit(".", 1)[-1].lower()] = r.symbol.qualified_name if r.symbol else None
    flush = "L.W.Flush" if lang == "csharp" else "W.flush"
    want = {"a": flush, "b": flush, "c": None} | ({"d": None} if lang == "csharp" else {})
    assert got == want


def test_a_header_reached_along_many_include_paths_is_searched_once_per_name() -> None:
    # a.h … e.h each include base.h, main.c includes all five: a call of base()'s function
    # reaches base.h along five paths; the answer is the same, the header is searched once
    headers = {f"{x}.h": f'#include "base.h"\nint {x}_fn(void);\n' for x in "abcde"}
    includes = "".join(f'#include "{x}.h"\n' for x in "abcde")
    g = graph_of(
        {
            "base.h": "int base_fn(int x) { return x; }\n",
            **headers,
            "main.c": includes + "int main(void) { return base_fn(1) + base_fn(2); }\n",
        }
    )
    resolver = g.resolver
    searched: list[tuple[str, str, int]] = []
    find = resolver._find_in_module

    def counting(mod, name, depth):  # type: ignore[no-untyped-def]
        searched.append((mod.paths[0] if mod.paths else mod.name, name, depth))
        return find(mod, name, depth)

    resolver._find_in_module = counting  # type: ignore[method-assign]
    edges = [e for e in g.snapshot.edges_of("main.c") if e.kind is EdgeKind.CALL and e.to_name == "base_fn"]
    assert len(edges) == 2
    assert [g.resolve(e).to_symbol for e in edges] == ["base_fn", "base_fn"]
    assert searched, "the call is resolved through the includes"
    assert len(searched) == len(set(searched))


def test_the_resolvers_memory_of_answers_stays_bounded_and_answers_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A long session's questions would otherwise come to remember every edge of the
    index: past ``MEMO_MAX`` remembered answers the resolver forgets them between two
    questions (never inside one: an import's mark against cycles stays while it runs)."""
    from codesift.indexer.graph import resolve

    files = {
        f"pkg/m{i}.py": f"""
            from pkg.base import Base, helper
            from pkg import m{(i + 1) % 12} as nxt

            class C{i}(Base):
                def run(self):
                    helper()
                    self.step()
                    nxt.f{(i + 1) % 12}()
                    return C{i}().run()

            def f{i}():
                return C{i}().run()
            """
        for i in range(12)
    }
    files["pkg/base.py"] = "class Base:\n    def step(self):\n        pass\n\ndef helper():\n    pass\n"
    files["pkg/__init__.py"] = ""
    unbounded = graph_of(files)
    edges = [e for path in files for e in unbounded.snapshot.edges_of(path)]
    expected = [unbounded.resolver.resolve(e) for e in edges]
    assert sum(r.symbol is not None for r in expected) >= 48
    assert len(unbounded.resolver._memo) > 60  # every edge remembered below the cap
    monkeypatch.setattr(resolve, "MEMO_MAX", 10)
    bounded = graph_of(files)
    for _ in range(2):
        assert [bounded.resolver.resolve(e) for e in edges] == expected
        held = bounded.resolver._memo, bounded.resolver._imports
        assert len(held[0]) + len(held[1]) <= 10 + 16  # the cap, and what the last question added

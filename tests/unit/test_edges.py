"""Edge extraction per language: real tree-sitter grammars on small snippets."""

from __future__ import annotations

import textwrap

import pytest

from codesift.indexer.model import EdgeKind
from codesift.indexer.parse import parse_file
from codesift.indexer.settings import Settings


def edges(language: str, source: str, path: str = "f") -> set[tuple[str, str, str]]:
    result = parse_file(path, textwrap.dedent(source), language, project="p", settings=Settings().chunk)
    return {(str(e.kind), e.from_symbol, e.to_name) for e in result.edges}


def imports(language: str, source: str) -> set[tuple[str, str, str]]:
    result = parse_file("f", textwrap.dedent(source), language, project="p", settings=Settings().chunk)
    return {(e.module, e.to_name, e.alias) for e in result.edges if e.kind is EdgeKind.IMPORT}


def test_python_calls_bases_imports_and_annotations() -> None:
    src = """
        import os.path, json as j
        from .pkg import mod as m
        from ..up import *
        class A(Base, mod.Mixin):
            @decorate
            def m(self, x: Foo) -> None:
                self.n(); super().m(); foo(); j.loads(x); x.y().z()
        """
    got = edges("python", src)
    assert {
        ("inherit", "A", "Base"),
        ("inherit", "A", "mod.Mixin"),
        ("reference", "A.m", "decorate"),
        ("reference", "A.m", "Foo"),
        ("call", "A.m", "self.n"),
        ("call", "A.m", "super.m"),
        ("call", "A.m", "foo"),
        ("call", "A.m", "j.loads"),
        ("call", "A.m", "x.y"),
        ("call", "A.m", "?.z"),
    } <= got
    assert imports("python", src) == {
        ("os.path", "", "os"),
        ("json", "", "j"),
        (".pkg", "mod", "m"),
        ("..up", "*", "*"),
    }


def test_javascript_and_typescript() -> None:
    js = """
        import def, { a as b } from './x';
        export { q } from './q';
        class A extends B { m() { this.n(); foo(); new D(); } }
        """
    assert {
        ("inherit", "A", "B"),
        ("call", "A.m", "this.n"),
        ("call", "A.m", "foo"),
        ("call", "A.m", "D"),
    } <= (edges("javascript", js))
    assert imports("javascript", js) == {("./x", "default", "def"), ("./x", "a", "b"), ("./q", "q", "q")}
    ts = """
        class K<T> extends Base<T> implements I, J<T> { m(a: Bar): void { this.q(a); } }
        interface I extends L {}
        """
    for language in ("typescript", "tsx"):
        got = edges(language, ts)
        assert {
            ("inherit", "K", "Base"),
            ("implement", "K", "I"),
            ("implement", "K", "J"),
            ("reference", "K.m", "Bar"),
            ("call", "K.m", "this.q"),
            ("inherit", "I", "L"),
        } <= got


def test_go_receiver_calls_become_self() -> None:
    src = """
        package main
        import str "strings"
        type I interface { Reader; M() int }
        func (s *S) M() int { s.N(); str.ToUpper("x"); helper(); return 0 }
        """
    got = edges("go", src)
    assert {("inherit", "I", "Reader"), ("call", "S.M", "self.N"), ("call", "S.M", "str.ToUpper")} <= got
    assert ("call", "S.M", "helper") in got
    assert imports("go", src) == {("strings", "", "str")}


def test_rust_impl_trait_and_use_lists() -> None:
    src = """
        use std::collections::{HashMap, hash_map::Entry as E};
        struct P {}
        impl Trait for P { fn f(&self) { self.g(); Self::h(); crate::x::y(); } }
        trait T: Super {}
        """
    got = edges("rust", src)
    assert {
        ("implement", "P", "Trait"),
        ("call", "P.f", "self.g"),
        ("call", "P.f", "Self.h"),
        ("call", "P.f", "crate.x.y"),
        ("inherit", "T", "Super"),
    } <= got
    assert imports("rust", src) == {
        ("std.collections", "HashMap", "HashMap"),
        ("std.collections.hash_map", "Entry", "E"),
    }


def test_java_csharp_kotlin() -> None:
    java = """
        import java.util.List;
        class A extends B implements I { void m() { this.n(); foo(); x.y().z(); new D(); } }
        """
    assert {
        ("inherit", "A", "B"),
        ("implement", "A", "I"),
        ("call", "A.m", "this.n"),
        ("call", "A.m", "foo"),
        ("call", "A.m", "x.y"),
        ("call", "A.m", "?.z"),
        ("call", "A.m", "D"),
    } <= edges("java", java)
    assert imports("java", java) == {("java.util", "List", "List")}
    cs = """
        using J = Newtonsoft.Json;
        namespace N { class A : B, IC { void M() { this.N(); base.M(); X.Y.Z(); } } }
        """
    assert {
        ("inherit", "N.A", "B"),
        ("inherit", "N.A", "IC"),
        ("call", "N.A.M", "this.N"),
        ("call", "N.A.M", "super.M"),
        ("call", "N.A.M", "X.Y.Z"),
    } <= edges("csharp", cs)
    assert imports("csharp", cs) == {("Newtonsoft.Json", "", "J")}
    kt = """
        import x.y.W as V
        class A : B(), I { fun m() { this.n(); foo() } }
        """
    assert {("inherit", "A", "B"), ("implement", "A", "I"), ("call", "A.m", "this.n")} <= edges("kotlin", kt)
    assert imports("kotlin", kt) == {("x.y", "W", "V")}


def test_c_and_cpp() -> None:
    assert {("call", "f", "g"), ("call", "f", "s.h")} <= edges(
        "c", '#include "x.h"\nvoid f(S *s) { g(1); s->h(2); }\n'
    )
    cpp = (
        "namespace n { class A : public B { void m() { this->n(); ns::f(); } }; }\n"
        "void A::m2() { helper(); }\n"
    )
    assert {
        ("inherit", "n.A", "B"),
        ("call", "n.A.m", "this.n"),
        ("call", "n.A.m", "ns.f"),
        ("call", "A.m2", "helper"),
    } <= edges("cpp", cpp)


def test_swift_extension_conformances_are_implement_edges() -> None:
    src = """
        class A: B, P { func m() { self.n(); foo() } }
        extension A: Q, R { func z() {} }
        protocol P: Base { func n() }
        """
    got = edges("swift", src)
    assert {
        ("inherit", "A", "B"),
        ("inherit", "A", "P"),
        ("implement", "A", "Q"),
        ("implement", "A", "R"),
        ("inherit", "P", "Base"),
        ("call", "A.m", "self.n"),
    } <= got


@pytest.mark.parametrize("language", ["ruby", "markdown", ""])
def test_languages_without_an_edge_query_give_no_edges(language: str) -> None:
    assert edges(language, "def f\n  g()\nend\n") == set()


def test_edge_locations_point_at_the_name() -> None:
    result = parse_file(
        "f.py", "def f():\n    obj.save()\n", "python", project="p", settings=Settings().chunk
    )
    (call,) = [e for e in result.edges if e.kind is EdgeKind.CALL]
    assert (call.line, call.column, call.end_line, call.end_column) == (2, 8, 2, 12)

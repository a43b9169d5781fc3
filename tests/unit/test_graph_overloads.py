"""Overloads (Java, C#, Kotlin): a call reaches the overload whose parameters take its
argument count; overloads it cannot tell apart stay unresolved with them as candidates,
never the first one guessed (real tree-sitter, no store). Java's `put(count)` passes a
field, whose type the call's method does not state (what the types the code states
choose: ``test_graph_overload_types.py``)."""

from __future__ import annotations

import pytest

from codesift.indexer.graph import callers, implementations
from codesift.indexer.model import ANY_ARITY, EdgeKind, arity, takes

from .test_graph_resolve import graph_of

JAVA = """package a;
class Buf {
    Buf add(int x) { return this; }
    Buf add(String s, int n) { return this; }
    void put(int x) {}
    void put(String s) {}
    void all(String f, Object... rest) {}
    void all(int x) {}
    void run(Buf b) {
        b.add(1);
        b.add("x", 2);
        put(count);
        all("%s", 1, 2);
    }
    int count;
}
"""

CSHARP = """namespace A {
class Buf {
    Buf Add(int x) { return this; }
    Buf Add(string s, int n, bool v = false) { return this; }
    void Put(int x) {}
    void Put(string s) {}
    void All(string f, params object[] rest) {}
    void All(int x, int y) {}
    void Run(Buf b) {
        b.Add(1);
        b.Add("x", 2);
        Put(3);
        All("{0}", 1, 2);
    }
}
}
"""

KOTLIN = """package a
class Buf {
    fun add(x: Int): Buf = this
    fun add(s: String, n: Int, v: Boolean = false): Buf = this
    fun put(x: Int) {}
    fun put(s: String) {}
    fun all(f: String, vararg rest: Int) {}
    fun all(x: Int, y: Int) {}
    fun run(b: Buf) {
        b.add(1)
        b.add("x", 2)
        put(3)
        all("%s", 1, 2)
    }
}
"""

CASES = {"java": ("src/a/Buf.java", JAVA), "csharp": ("Buf.cs", CSHARP), "kotlin": ("src/a/Buf.kt", KOTLIN)}


def resolved_lines(lang: str) -> dict[str, int | None]:
    """Each call of ``run`` (by name as written, in order) → the line of what it resolves to."""
    path, text = CASES[lang]
    g = graph_of({path: text})
    out: dict[str, int | None] = {}
    for e in g.snapshot.edges_of(path):
        if e.kind is EdgeKind.CALL and e.from_symbol.lower().endswith("run"):
            r = g.resolver.resolve(e)
            key = f"{e.to_name}@{e.line}"
            out[key] = r.symbol.selection_range.start.line if r.symbol is not None else None
    return out


@pytest.mark.parametrize("lang", ["java", "csharp", "kotlin"])
def test_a_call_reaches_the_overload_that_takes_its_argument_count(lang: str) -> None:
    found = resolved_lines(lang)
    add, add2 = (v for k, v in found.items() if k.lower().startswith("b.add"))
    assert (add, add2) == (3, 4)  # `add(1)` → `add(int)`, `add("x", 2)` → the two-or-three one
    (every,) = (v for k, v in found.items() if k.lower().startswith("all"))
    assert every == 7  # three arguments: only the varargs overload takes them


@pytest.mark.parametrize("lang", ["java", "csharp", "kotlin"])
def test_overloads_taking_the_same_count_stay_unresolved_with_both_as_candidates(lang: str) -> None:
    path, text = CASES[lang]
    g = graph_of({path: text})
    (edge,) = [e for e in g.snapshot.edges_of(path) if e.kind is EdgeKind.CALL and e.to_name.lower() == "put"]
    r = g.resolver.resolve(edge)
    assert r.symbol is None
    assert sorted(c.selection_range.start.line for c in r.candidates) == [5, 6]


@pytest.mark.parametrize("lang", ["java", "csharp", "kotlin"])
def test_callers_of_one_overload_are_the_calls_it_takes(lang: str) -> None:
    path, text = CASES[lang]
    g = graph_of({path: text})
    one, two = sorted(
        (s for s in g.find("Buf.add") + g.find("Buf.Add")), key=lambda s: s.selection_range.start.line
    )
    assert [c.from_ranges[0].start.line for c in callers(g, one)] == [10]
    assert [c.from_ranges[0].start.line for c in callers(g, two)] == [11]
    put = next(s for s in g.find("Buf.put") + g.find("Buf.Put"))
    assert callers(g, put) == []
    unresolved = callers(g, put, include_unresolved=True)
    assert [(c.from_ranges[0].start.line, c.resolved) for c in unresolved] == [(12, False)]


def test_parameter_lists_give_the_argument_counts_a_definition_takes() -> None:
    sources = {
        "src/a/J.java": (
            "package a;\nclass J {\n  J(int a, String... r) {}\n  void z() {}\n"
            "  void two(int a, int b) {}\n}\n"
        ),
        "K.cs": (
            "static class K {\n  static string F(this string s, int a, params object[] r) => s;\n"
            "  void D(int a, int b = 1) {}\n}\n"
        ),
        "src/a/K.kt": "package a\nfun f(a: Int, b: Int = 2, vararg c: Int) {}\nfun g() {}\n",
    }
    g = graph_of(sources)
    got = {s.qualified_name: s.arity for path in sources for s in g.snapshot.symbols_of(path)}
    assert got["J.J"] == arity(1, None)
    assert got["J.z"] == arity(0, 0)
    assert got["J.two"] == arity(2, 2)
    assert got["K.F"] == arity(1, None)  # `"s".F(1)`: the receiver is not an argument
    assert got["K.D"] == arity(1, 2)
    assert got["f"] == arity(1, None)
    assert got["g"] == arity(0, 0)
    assert takes(arity(1, 2), 2) and not takes(arity(1, 2), 3) and not takes(arity(1, 2), 0)
    assert takes(ANY_ARITY, 7) and takes(arity(0, 0), -1)


def test_argument_counts_of_calls_count_trailing_lambdas_and_not_spreads() -> None:
    code = "package a\nfun use() {\n    g(1) { it }\n    h(*xs)\n    k()\n}\n"
    g = graph_of({"src/a/U.kt": code})
    got = {e.to_name: e.args for e in g.snapshot.edges_of("src/a/U.kt") if e.kind is EdgeKind.CALL}
    assert got == {"g": 2, "h": -1, "k": 0}


def test_an_override_is_the_overload_that_takes_the_same_arguments() -> None:
    base = "package a;\nclass Base {\n    void add(int x) {}\n    void add(String s, int n) {}\n}\n"
    sub = "package a;\nclass Sub extends Base {\n    void add(String s, int n) {}\n}\n"
    g = graph_of({"src/a/Base.java": base, "src/a/Sub.java": sub})
    one, two = sorted(g.find("Base.add"), key=lambda s: s.selection_range.start.line)
    assert implementations(g, one) == []
    assert [i.symbol.qualified_name for i in implementations(g, two) if i.symbol] == ["Sub.add"]


def test_typescript_overload_signatures_fold_into_the_implementation() -> None:
    """`function pick(a: string): string;` above `function pick(a: any) {…}` is one function
    (as Python's `@overload` stubs are): one symbol, at the implementation, and calls reach
    it; an interface's overloads (no implementation) are one symbol at the first."""
    code = (
        "export function pick(a: string): string;\nexport function pick(a: number, b: number): number;\n"
        "export function pick(a: any, b?: any): any { return a; }\n"
        "interface I {\n  f(a: string): void;\n  f(a: number): void;\n}\n"
        "class C {\n  m(x: string): void;\n  m(x: any): void {}\n  run() { this.m(1); pick(1, 2); }\n}\n"
    )
    g = graph_of({"a.ts": code})
    lines = {s.qualified_name: [] for s in g.snapshot.symbols_of("a.ts")}
    for s in g.snapshot.symbols_of("a.ts"):
        lines[s.qualified_name].append(s.selection_range.start.line)
    assert lines["pick"] == [3] and lines["I.f"] == [5] and lines["C.m"] == [10]
    calls = [g.resolver.resolve(e).symbol for e in g.snapshot.edges_of("a.ts") if e.kind is EdgeKind.CALL]
    assert sorted((s.qualified_name, s.selection_range.start.line) for s in calls if s) == [
        ("C.m", 10),
        ("pick", 3),
    ]

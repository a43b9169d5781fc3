"""Java overloads of one argument count told apart by the argument types the code states
(literals, parameters and locals of the call's own method, ``new Foo()``) against the
overloads' parameter types, in Java's phases — strict, loose (boxing), varargs —; a call
resolves only when one overload may be Java's choice, never by "most specific" (real
tree-sitter, no store)."""

from __future__ import annotations

from codesift.indexer.graph.resolve import Resolution
from codesift.indexer.model import EdgeKind

from .test_graph_resolve import graph_of

PATH = "src/a/C.java"


def calls(code: str, path: str = PATH) -> dict[int, Resolution]:
    """The resolution of the first call on each line, by line."""
    g = graph_of({path: code})
    out: dict[int, Resolution] = {}
    for e in g.snapshot.edges_of(path):
        if e.kind is EdgeKind.CALL:
            out.setdefault(e.line, g.resolver.resolve(e))
    return out


def line_of(r: Resolution) -> int | None:
    return r.symbol.selection_range.start.line if r.symbol is not None else None


def candidate_lines(r: Resolution) -> list[int]:
    return sorted(c.selection_range.start.line for c in r.candidates)


STRICT = """package a;
class Animal {}
class Dog extends Animal {}
class C {
    void f(long x) {}
    void f(String s) {}
    void g(int x) {}
    void g(Integer x) {}
    void h(Animal a) {}
    void h(String s) {}
    void use(Dog d) {
        f(1);
        g(2);
        h(d);
        h(new Dog());
    }
}
"""


def test_strict_phase_widening_identity_and_subtypes_choose_the_overload() -> None:
    got = calls(STRICT)
    assert line_of(got[12]) == 5  # `f(1)`: int widens to long; String takes no int
    assert line_of(got[13]) == 7  # `g(2)`: g(int) in the strict phase, before boxing to Integer
    assert line_of(got[14]) == 9  # `h(d)` with `Dog d`: Dog extends Animal in the workspace
    assert line_of(got[15]) == 9


LOOSE = """package a;
class C {
    void f(Integer x) {}
    void f(String s) {}
    void g(Object o) {}
    void g(int[] a) {}
    void use(boolean b) {
        f(1);
        g(b);
    }
}
"""


def test_loose_phase_boxes_a_primitive() -> None:
    got = calls(LOOSE)
    assert line_of(got[8]) == 3  # `f(1)`: int boxes to Integer
    assert line_of(got[9]) == 5  # `g(b)`: boolean boxes to Boolean, an Object; never an int[]


VARARGS = """package a;
class C {
    void k(String s, String t) {}
    void k(String s, int... rest) {}
    void m(Object o) {}
    void m(String s) {}
    void use() {
        k("a", 1);
        m("x");
    }
}
"""


def test_varargs_phase_and_two_applicable_stay_candidates() -> None:
    got = calls(VARARGS)
    assert line_of(got[8]) == 4  # `k("a", 1)`: only as varargs
    # `m("x")`: both applicable in the strict phase; the most specific is not picked
    assert line_of(got[9]) is None and candidate_lines(got[9]) == [5, 6]


TYPE_VARIABLE = """package a;
class ArrayUtils {
    static <T> T[] insert(int index, T[] array, T... values) { return array; }
    static boolean[] insert(int index, boolean[] array, boolean... values) { return array; }
    static byte[] insert(int index, byte[] array, byte... values) { return array; }
    static boolean[] addFirst(final boolean[] array, final boolean element) {
        return insert(0, array, element);
    }
    static <T> T[] addFirst(final T[] array, final T element) {
        return insert(0, array, element);
    }
}
"""


def test_a_type_variable_takes_no_primitive_array() -> None:
    got = calls(TYPE_VARIABLE, "src/a/ArrayUtils.java")
    assert line_of(got[7]) == 4  # boolean[] is no T[]; byte[] takes no boolean[]
    # `T[] array` of the caller's own T: an array of some class, which only T[] takes
    assert line_of(got[10]) == 3


UNKNOWN = """package a;
class C {
    void q(int[] a, int i) {}
    void q(long[] a, int i) {}
    void q(int[] a, String s) {}
    void use(int[] arr) {
        q(arr, size);
    }
    int size;
}
"""


def test_an_unknown_argument_leaves_the_overloads_the_known_ones_allow() -> None:
    (r,) = calls(UNKNOWN).values()
    assert r.symbol is None
    assert candidate_lines(r) == [3, 5]  # `size` is a field: not read; q(long[], …) takes no int[]


TWICE = """package a;
class C {
    void r(long x) {}
    void r(String s) {}
    void use(boolean c) {
        if (c) {
            int v = 1;
            r(v);
        } else {
            String v = "a";
            r(v);
        }
        long w = 2;
        r(w);
    }
}
"""


def test_a_local_declared_with_two_types_stays_unknown() -> None:
    got = calls(TWICE)
    assert line_of(got[8]) is None and candidate_lines(got[8]) == [3, 4]
    assert line_of(got[11]) is None and candidate_lines(got[11]) == [3, 4]
    assert line_of(got[14]) == 3  # `long w`, declared once


def test_a_class_type_variable_is_what_a_subclass_or_a_receiver_binds_it_to() -> None:
    code = (
        "package a;\nclass Box<T> {\n    void put(T t) {}\n    void put(int i) {}\n}\n"
        "class Strings extends Box<String> {\n    void use(Integer n) {\n        put(n);\n    }\n}\n"
    )
    got = calls(code)
    # in a `Box<String>` put(T) takes no Integer: javac unboxes to put(int); neither is picked
    assert line_of(got[8]) is None and candidate_lines(got[8]) == [3, 4]


def test_parameter_and_argument_types_as_the_parser_writes_them() -> None:
    code = (
        "package a;\nclass C<E extends Number> {\n"
        "    <T> void m(int i, T[] a, E e, java.util.List<String> l, int d[], String... r) {}\n"
        "    void use(String s, char[] cs) {\n"
        "        m(1L, cs, null, new StringBuilder(), (Object) s, 'c' + s, 2.5f, C.class, s.length());\n"
        "    }\n}\n"
    )
    g = graph_of({PATH: code})
    (m,) = g.find("C.m")
    assert m.params == "int,'T[],'E:,List,int[],String..."
    (call,) = [e for e in g.snapshot.edges_of(PATH) if e.kind is EdgeKind.CALL and e.to_name == "m"]
    assert call.arg_types == "long,char[],null,StringBuilder,Object,String,float,Class,?"


INHERITED = """package a;
class Top {
    void d(String s, boolean[] a) {}
    void d(String s, Object o) {}
}
class Mid extends Top {
    void d(String s, Object o) {}
    void d(String s, java.util.List<String> l) {}
}
class Leaf extends Mid {
    void d(String s, boolean[] a) {
        super.d(s, a);
    }
    void e(String s) {
        super.d(s, 1);
    }
}
"""


def test_overloads_a_class_inherits_are_candidates_too() -> None:
    got = calls(INHERITED)
    # Mid's own d(String, Object) takes a boolean[], and so does Top's d(String, boolean[]):
    # both applicable (Java takes the most specific, which is not read here)
    assert line_of(got[12]) is None and candidate_lines(got[12]) == [3, 7]
    assert line_of(got[15]) == 7  # an int boxes to an Object; it is no boolean[] or List


OWN_AND_INHERITED = """package a;
class Range<T> {
    T fit(T element) { return element; }
    <E> E pick(E element) { return element; }
}
class LongRange extends Range<Long> {
    long fit(long element) { return element; }
    long pick(long element) { return element; }
    void use(Long boxed, Object o) {
        fit(boxed);
        fit(o.hashCode());
        pick(boxed);
    }
}
class Shown extends java.text.Format {
    String format(Object a, StringBuffer b, java.text.FieldPosition p) { return ""; }
    String use(Object o) {
        return format(o);
    }
}
"""


def test_a_method_the_class_inherits_is_an_overload_of_its_own() -> None:
    got = calls(OWN_AND_INHERITED)
    # a Long is an E (strict: E is inferred per call), a long only by unboxing (loose)
    assert line_of(got[12]) == 4
    # Range's T is what `extends Range<Long>` binds it to, which is not read: either
    assert line_of(got[10]) is None and candidate_lines(got[10]) == [3, 7]
    assert line_of(got[11]) is None and candidate_lines(got[11]) == [3, 7]  # not known: either
    # one argument: not the three `Shown` declares; `java.text.Format`'s own, outside the workspace
    assert line_of(got[18]) is None and candidate_lines(got[18]) == [16]


def test_objects_own_methods_are_overloads_only_for_their_count() -> None:
    code = (
        "package a;\nclass Arr {\n    static int[] clone(int[] a) { return a; }\n"
        "    static long[] clone(long[] a) { return a; }\n"
        "    int[] use(int[] x) {\n        return clone(x);\n    }\n}\n"
    )
    got = calls(code)
    assert line_of(got[6]) == 3  # `Object.clone()` takes no argument

"""A value the code does not type — what a caller passes an unannotated parameter (no
default, or a ``None`` one) and copies of it — adds no type and stops no stated one: a name
whose other values are all of one class holds that class (pyright's ``C | Unknown``). Two
stated classes, or only passed values, stay unresolved with candidates (real tree-sitter,
no store; the models are :mod:`.test_graph_types`'s)."""

from __future__ import annotations

import pytest

from codesift.indexer.languages.bindings import RECORD_PART, attributes_records, read_attributes_record
from codesift.indexer.model import EdgeKind

from .test_graph_resolve import graph_of
from .test_graph_types import graph, resolved

# a SAX reader: a handler made in `__init__`, or whatever the setter was given
READER = (
    "class Reader:\n    def __init__(self):\n        self.handler = Context()\n"
    "    def set_handler(self, handler):\n        self.handler = handler\n"
)


@pytest.mark.parametrize(
    ("code", "call", "want"),
    [
        # an attribute made in `__init__` and set from a setter's unannotated parameter
        (
            READER + "    def run(self):\n        self.handler.invoke()\n",
            "self.handler.invoke",
            "Context.invoke",
        ),
        # the same through a method the setter calls, and a parameter passed on twice
        (
            "class Jar:\n    def __init__(self, policy=None):\n        if policy is None:\n"
            "            policy = Context()\n        self._policy = policy\n"
            "    def set_policy(self, policy):\n        p = policy\n        self._policy = p\n"
            "    def run(self):\n        self._policy.invoke()\n",
            "self._policy.invoke",
            "Context.invoke",
        ),
        # a `None` default copied into an attribute a method replaces (in a class with bases)
        (
            "class Pull(Sub):\n    def __init__(self, factory=None):\n        self.factory = factory\n"
            "    def start(self):\n        if self.factory is None:\n            self.factory = Context()\n"
            "    def run(self):\n        self.factory.invoke()\n",
            "self.factory.invoke",
            "Context.invoke",
        ),
        # a local: `C()` on one path, the caller's value on the other
        (
            "def f(k, v):\n    x = v\n    if k:\n        x = Context()\n    x.invoke()\n",
            "x.invoke",
            "Context.invoke",
        ),
        ("def f(c, k):\n    if k:\n        c = Context()\n    c.invoke()\n", "c.invoke", "Context.invoke"),
        # a `None` default replaced by `C()` under `if x is None`, where the guard rule did not reach
        (
            "def f(k, c=None):\n    if k:\n        if c is None:\n            c = Context()\n"
            "    c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        (
            "class H(Sub):\n    def go(self, c=None):\n        if c is None:\n            c = Context()\n"
            "        c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        (
            "def f(c=None):\n    if c == 0:\n        c = Context()\n    c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        # a guard converting to the class it tests
        (
            "def f(c):\n    if isinstance(c, Context):\n        c = Context(c)\n    c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        # a function returning its parameter on one path and `C()` on the other
        (
            "def mk(k, v):\n    if k:\n        return v\n    return Context()\n"
            "def f():\n    h = mk(1)\n    h.invoke()\n",
            "h.invoke",
            "Context.invoke",
        ),
        # several stated classes sharing the method (round 5's rule) beside a passed value
        (
            "def f(k, v):\n    x = v\n    if k:\n        x = Sub()\n    elif v:\n        x = Context()\n"
            "    x.invoke()\n",
            "x.invoke",
            "Context.invoke",
        ),
        # after the statement that binds it, whatever ran before
        (
            "def f(c=None):\n    c.other()\n    if c is None:\n        c = Context()\n    c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
    ],
)
def test_a_stated_value_beside_a_passed_one_types_the_name(code: str, call: str, want: str) -> None:
    assert resolved(graph(code), "use.py", call) == want


@pytest.mark.parametrize(
    ("code", "call"),
    [
        # only what callers pass: untyped
        (
            "class Reader:\n    def set_handler(self, handler):\n        self.handler = handler\n"
            "    def run(self):\n        self.handler.invoke()\n",
            "self.handler.invoke",
        ),
        ("def f(c=None):\n    c.invoke()\n", "c.invoke"),
        ("def f(v):\n    x = v\n    x.invoke()\n", "x.invoke"),
        # two stated classes (with different methods) beside a passed value
        (
            "def f(k, v):\n    x = v\n    if k:\n        x = Context()\n    elif v:\n        x = Plain()\n"
            "    x.invoke()\n",
            "x.invoke",
        ),
        (
            "class Reader:\n    def __init__(self):\n        self.handler = Context()\n"
            "    def set_handler(self, handler):\n        self.handler = handler\n"
            "    def reset(self):\n        self.handler = Plain()\n"
            "    def run(self):\n        self.handler.invoke()\n",
            "self.handler.invoke",
        ),
        # a value of a call that states nothing, a literal default (an `int`), a loop, `*args`
        (
            "class Reader:\n    def __init__(self):\n        self.handler = Context()\n"
            "    def set_handler(self, handler):\n        self.handler = unknown()\n"
            "    def run(self):\n        self.handler.invoke()\n",
            "self.handler.invoke",
        ),
        ("def f(k, c=0):\n    if k:\n        c = Context()\n    c.invoke()\n", "c.invoke"),
        (
            "def f(k, c):\n    for c in unknown():\n        pass\n    if k:\n        c = Context()\n"
            "    c.invoke()\n",
            "c.invoke",
        ),
        ("def f(*c):\n    if not c:\n        c = Context()\n    c.invoke()\n", "c.invoke"),
        # the function tests the passed value against another class: a Plain or a Context
        (
            "def f(c):\n    if not isinstance(c, Plain):\n        c = Context(c)\n    c.invoke()\n",
            "c.invoke",
        ),
        ("def f(c):\n    if isinstance(c, str):\n        c = Context(c)\n    c.invoke()\n", "c.invoke"),
        # before the statement that binds the stated value, the name is the caller's
        ("def f(c=None):\n    c.invoke()\n    if c is None:\n        c = Context()\n", "c.invoke"),
        (
            "def f(c, k):\n    d = c\n    d.invoke()\n    if k:\n        c = Context()\n    return c\n",
            "d.invoke",
        ),
        # right after `self.x = passed`, up to the next binding of `self.x` in that block
        (
            READER + "    def use(self, h):\n        self.handler = h\n        self.handler.invoke()\n",
            "self.handler.invoke",
        ),
        # a nested function's parameter is no value of the outer name
        ("def f():\n    x = Context()\n    def g(x):\n        x.invoke()\n", "x.invoke"),
    ],
)
def test_a_passed_value_alone_or_beside_two_classes_stays_unresolved(code: str, call: str) -> None:
    assert resolved(graph(code), "use.py", call) is None


def _calls(files: dict[str, str], path: str) -> dict[str, str | None]:
    g = graph_of(files)
    out: dict[str, str | None] = {}
    for e in g.snapshot.edges_of(path):
        if e.kind is EdgeKind.CALL:
            r = g.resolver.resolve(e)
            out[f"{e.line}:{e.to_name}"] = r.symbol.qualified_name if r.symbol is not None else None
    return out


DOM = (
    "class Impl:\n    def create(self): ...\n"
    "class Document:\n    implementation = Impl()\n"
    "class Plain:\n    implementation = None\n"
)


def test_an_attribute_set_from_a_class_attribute_through_its_module() -> None:
    """PullDOM's ``self.factory = xml.dom.minidom.Document.implementation`` beside
    ``self.factory = factory`` (a ``None`` default): what that class's body binds the
    attribute to (a ``holds:`` reference edge, read at query time); a class attribute the
    body does not type, or a module path through a variable of the method, types nothing."""
    use = (
        "import dom\n"
        "class Pull:\n    def __init__(self, factory=None):\n        self.factory = factory\n"
        "        self.plain = factory\n"
        "    def start(self, dom2):\n        if self.factory is None:\n"
        "            self.factory = dom.Document.implementation\n"
        "            self.plain = dom.Plain.implementation\n"
        "            self.local = dom2.Document.implementation\n"
        "    def run(self):\n        self.factory.create()\n        self.plain.create()\n"
        "        self.local.create()\n"
    )
    calls = _calls({"dom.py": DOM, "use.py": use}, "use.py")
    assert calls["12:self.factory.create"] == "Impl.create"
    assert calls["13:self.plain.create"] is None
    assert calls["14:self.local.create"] is None


# a reader in its own file: the handler it makes, or the one a caller sets
BASE = (
    "class Handler:\n    def start(self): ...\n"
    "class Other:\n    def start(self): ...\n"
    "class Reader:\n    def __init__(self):\n        self._handler = Handler()\n"
    "    def set_handler(self, handler):\n        self._handler = handler\n"
    "class Incremental(Reader):\n    def feed(self): ...\n"
    "class Locator:\n    def line(self):\n        return -1\n"
    "class Numbered:\n    def __init__(self):\n        self._handler = 0\n"
    "class Typed:\n    def __init__(self):\n        self._handler = Other()\n"
)


def _start(base: str, header: str, body: str = "") -> str | None:
    run = "    def run(self):\n        self._handler.start()\n"
    use = f"from base import *\nimport base\n{header}\n{body}{run}"
    calls = _calls({"base.py": base, "use.py": use}, "use.py")
    return next(v for k, v in calls.items() if k.endswith("self._handler.start"))


@pytest.mark.parametrize(
    "header",
    [
        "class Filter(Reader):",  # its base, in another file
        "class Filter(base.Reader):",
        "class Filter(Incremental, Locator):",  # through a base of the base, beside a mixin
        "class Filter(Incremental, object):",
    ],
)
def test_an_attribute_a_class_does_not_bind_is_its_bases_in_another_file(header: str) -> None:
    """The SAX parsers (``ExpatParser(xmlreader.IncrementalParser, xmlreader.Locator)``,
    ``XMLFilterBase(xmlreader.XMLReader)``) call ``self._cont_handler.…``, which only
    ``XMLReader`` binds: a ``ContentHandler`` it makes, or whatever a caller sets."""
    assert _start(BASE, header) == "Handler.start"


@pytest.mark.parametrize(
    ("header", "body"),
    [
        # the class binds it too, to a value the code does not type (or defines a method of
        # that name)
        ("class Filter(Reader):", "    def __init__(self):\n        self._handler = 1\n"),
        ("class Filter(Reader):", "    def _handler(self): ...\n"),
        # another base binds it untyped, or to another class; a base that does not resolve
        ("class Filter(Reader, Numbered):", ""),
        ("class Filter(Reader, Typed):", ""),
        ("class Filter(Reader, Unknown):", ""),
        ("class Filter(Reader, base.Unknown):", ""),
    ],
)
def test_an_attribute_of_the_bases_stays_unresolved_when_not_one_class(header: str, body: str) -> None:
    assert _start(BASE, header, body) is None


def test_a_base_in_a_file_without_a_record_is_not_known() -> None:
    """A file whose classes have no bases carries no record of what they bind (it has no
    inherit edge to carry it): a mixin there may bind the attribute to anything."""
    base = BASE.replace("class Incremental(Reader):\n    def feed(self): ...\n", "")
    mixin = "class Mixin:\n    def __init__(self):\n        self._handler = 0\n"
    use = (
        "from base import *\nfrom mixin import Mixin\n"
        "class Filter(Reader, Mixin):\n    def run(self):\n        self._handler.start()\n"
        "class Plain(Reader):\n    def run(self):\n        self._handler.start()\n"
    )
    calls = _calls({"base.py": base, "mixin.py": mixin, "use.py": use}, "use.py")
    assert calls["5:self._handler.start"] is None
    assert calls["8:self._handler.start"] == "Handler.start"


def test_the_attributes_record_is_cut_into_parts_the_inherit_edges_carry() -> None:
    """LanceDB reads a fragment holding a ~30 kB alias 100-300 times slower: the record is
    cut into parts of at most ``RECORD_PART`` characters, one an inherit edge, a class's
    entry whole; when they do not fit (a class's entry too long, too few edges) there is no
    record and the file's classes are not known."""
    bound = {f"C{i}": [f"attribute_{j}" for j in range(40)] for i in range(12)}
    parts = attributes_records(bound, 10)
    assert parts is not None and len(parts) > 1
    assert all(len(p) <= RECORD_PART for p in parts)
    assert read_attributes_record(parts) == {c: frozenset(n) for c, n in bound.items()}
    assert attributes_records(bound, 1) is None
    assert attributes_records({"C": [f"a{j}" for j in range(2000)]}, 5) is None
    assert attributes_records({}, 1) == ["attrs:"]

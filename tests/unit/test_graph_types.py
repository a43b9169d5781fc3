"""Receiver types the code states (real tree-sitter, no store): calls through typed names
resolve, and a name whose type the code does not state stays unresolved with candidates."""

from __future__ import annotations

import pytest

from codesift.indexer.graph import Graph, callees
from codesift.indexer.model import EdgeKind

from .test_graph_resolve import graph_of

MODELS = """
import collections.abc as cabc
import typing as t
from typing import Optional

class Context:
    def invoke(self): ...
    def child(self) -> "Context": ...
    def parent(self) -> Context: ...
    def __enter__(self) -> Context: ...

class Plain:
    def invoke(self): ...
    def __enter__(self): ...

def make() -> Context: ...
def unknown(): ...
def items() -> list[Context]: ...
def gen() -> cabc.Iterator[Context]: ...
def agen() -> cabc.AsyncIterator[Context]: ...
def split() -> tuple[str | None, Context | None, list[str]]: ...
def pair() -> t.Tuple[Plain, Context]: ...
def many() -> tuple[Context, ...]: ...
def kind() -> type[Context] | None: ...
def kinds() -> list[Context] | None: ...
def named() -> cabc.Iterator[tuple[str, Context]]: ...
def pairs() -> list[tuple[Context, Plain]]: ...

class Session:
    def fetch(self): ...
    def __enter__(self):
        return self

class Tuned(Session):
    def fetch(self): ...

class Kept(Session):
    pass

class Typed:
    def fetch(self): ...
    def __enter__(self) -> t.Self: ...

class Maybe:
    def fetch(self): ...
    def __enter__(self):
        if unknown():
            return self
        return Plain()

class Builder:
    def where(self):
        return self
    def fetch(self): ...

class Narrow(Builder):
    def fetch(self): ...

class Caller:
    def __call__(self) -> Plain: ...
    def invoke(self): ...

class Sub(Context):
    def other(self): ...

class Over(Context):
    def invoke(self): ...

default_context = Context()
made_context = make()
twice = Context()
twice = Plain()
unstated = unknown()
rebound = Context()

def rebind():
    global rebound
    rebound = Plain()
"""


# a class whose attribute declares its items (`for c in box.items`: a Context)
BOX = "class Box:\n    def __init__(self):\n        self.items: list[Context] = []\n        self.other = []\n"


def resolved(graph: Graph, path: str, line_text: str) -> str | None:
    """What the call whose line holds ``line_text`` resolves to (its qualified name)."""
    lines = graph_source[path].split("\n")
    found = []
    for e in graph.snapshot.edges_of(path):
        if e.kind is EdgeKind.CALL and line_text in lines[e.line - 1]:
            found.append(e)
    assert found, line_text
    r = graph.resolver.resolve(found[-1])
    if r.symbol is not None:
        return r.symbol.qualified_name
    assert r.candidates, f"{line_text}: unresolved and no candidates"
    return None


graph_source: dict[str, str] = {}


def graph(code: str) -> Graph:
    import textwrap

    use = "import typing as t\nfrom models import *\n" + textwrap.dedent(code).lstrip("\n")
    files = {"models.py": MODELS, "use.py": use}
    graph_source.clear()
    graph_source.update({p: textwrap.dedent(t).lstrip("\n") for p, t in files.items()})
    return graph_of(files)


@pytest.mark.parametrize(
    ("code", "call", "want"),
    [
        ("def f(ctx: Context):\n    ctx.invoke()\n", "ctx.invoke", "Context.invoke"),
        ("def f(ctx: Optional[Context] = None):\n    ctx.invoke()\n", "ctx.invoke", "Context.invoke"),
        ("def f(ctx: Context | None):\n    ctx.invoke()\n", "ctx.invoke", "Context.invoke"),
        ("def f():\n    x = Context()\n    x.invoke()\n", "x.invoke", "Context.invoke"),
        ("def f():\n    x = make()\n    x.invoke()\n", "x.invoke", "Context.invoke"),
        ("def f(c: Context):\n    x = c.parent()\n    x.invoke()\n", "x.invoke", "Context.invoke"),
        ("def f():\n    with Context() as c:\n        c.invoke()\n", "c.invoke", "Context.invoke"),
        # `__enter__` returns `self` (or `-> Self`): the object entered, of the class called
        ("def f():\n    with Session() as s:\n        s.fetch()\n", "s.fetch", "Session.fetch"),
        ("def f():\n    with Tuned() as s:\n        s.fetch()\n", "s.fetch", "Tuned.fetch"),
        ("def f():\n    with Kept() as s:\n        s.fetch()\n", "s.fetch", "Session.fetch"),
        ("def f():\n    with Typed() as s:\n        s.fetch()\n", "s.fetch", "Typed.fetch"),
        # a forward reference written as a string
        ("def f(c: 'Context'):\n    c.invoke()\n", "c.invoke", "Context.invoke"),
        ("def f(c: t.Optional['Context']):\n    c.invoke()\n", "c.invoke", "Context.invoke"),
        ("def f(c: Context):\n    c.child().invoke()\n", "invoke", "Context.invoke"),
        ('def f():\n    x: "Context" = unknown()\n    x.invoke()\n', "x.invoke", "Context.invoke"),
        ("import models\ndef f(c: 'models.Context'):\n    c.invoke()\n", "c.invoke", "Context.invoke"),
        # a chain through a method returning `self`: the receiver, of the class called
        ("def f():\n    Session().__enter__().fetch()\n", "fetch", "Session.fetch"),
        ("def f():\n    Builder().where().where().fetch()\n", "fetch", "Builder.fetch"),
        ("def f():\n    Narrow().where().fetch()\n", "fetch", "Narrow.fetch"),
        ("def f(b: Narrow):\n    b.where().fetch()\n", "fetch", "Narrow.fetch"),
        ("class Own(Builder):\n    def go(self):\n        self.where().fetch()\n", "fetch", "Builder.fetch"),
        ("def f():\n    x: Context = unknown()\n    x.invoke()\n", "x.invoke", "Context.invoke"),
        ("def f():\n    x = None\n    x = Context()\n    x.invoke()\n", "x.invoke", "Context.invoke"),
        ("g = Context()\ndef f():\n    g.invoke()\n", "g.invoke", "Context.invoke"),
        ("def f():\n    Context().invoke()\n", "Context().invoke", "Context.invoke"),
        ("def f():\n    make().parent().invoke()\n", "invoke", "Context.invoke"),
        ("def f():\n    x = Context().parent()\n    x.invoke()\n", "x.invoke", "Context.invoke"),
        (
            "class C:\n    def __init__(self):\n        self.c = Context()\n    def run(self):\n"
            "        self.c.invoke()\n",
            "self.c.invoke",
            "Context.invoke",
        ),
        (
            "class C:\n    c: Context\n    def run(self):\n        self.c.invoke()\n",
            "self.c.invoke",
            "Context.invoke",
        ),
        # a module-level alias is the class itself
        ("Ctx = Context\ndef f():\n    x = Ctx()\n    x.invoke()\n", "x.invoke", "Context.invoke"),
        (
            "import models\nCtx = models.Context\ndef f():\n    Ctx().invoke()\n",
            "Ctx().invoke",
            "Context.invoke",
        ),
        ("Ctx = Context\ndef f():\n    Ctx()\n", "Ctx", "Context"),
        # a copy of a typed name: an attribute set from a parameter, a local from another
        (
            "class C:\n    def __init__(self, command: Context):\n        self.command = command\n"
            "    def run(self):\n        self.command.invoke()\n",
            "self.command.invoke",
            "Context.invoke",
        ),
        (
            "class C:\n    def __init__(self, c: Context | None = None):\n        self.c = c\n"
            "    def run(self):\n        self.c.invoke()\n",
            "self.c.invoke",
            "Context.invoke",
        ),
        ("def f(c: Context):\n    x = c\n    x.invoke()\n", "x.invoke", "Context.invoke"),
        (
            "def f():\n    with Context() as c:\n        x = c\n        x.invoke()\n",
            "x.invoke",
            "Context.invoke",
        ),
        # a loop variable over what the code says its items are
        ("def f():\n    for c in items():\n        c.invoke()\n", "c.invoke", "Context.invoke"),
        (
            "def f():\n    return [\n        c.invoke()\n        for c in gen()\n    ]\n",
            "c.invoke",
            "Context.invoke",
        ),
        ("def f(cs: list[Context]):\n    for c in cs:\n        c.invoke()\n", "c.invoke", "Context.invoke"),
        (
            "def f(cs: t.Sequence[Context] | None):\n    for c in cs:\n        c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        (
            "def f(cs: tuple[Context, ...]):\n    for c in cs:\n        c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        (
            "class C:\n    def __init__(self, cs):\n        self.cs: list[Context] = cs or []\n"
            "    def run(self):\n        for c in self.cs:\n            c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        # an attribute a base in the file binds, where the class binds none of that name
        (
            "class B:\n    def __init__(self, c: Context):\n        self.c = c\nclass M(B):\n    pass\n"
            "class S(M):\n    def run(self):\n        self.c.invoke()\n",
            "self.c.invoke",
            "Context.invoke",
        ),
        (
            "class B:\n    def __init__(self, cs: list[Context]):\n        self.cs = cs\nclass S(B):\n"
            "    def run(self):\n        for c in self.cs:\n            c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        # what `cast` says
        ("def f(v):\n    g = t.cast(Context, v)\n    g.invoke()\n", "g.invoke", "Context.invoke"),
        # a guard that converts the parameter: a `Context` on every path after it
        (
            "def f(c):\n    if c is None:\n        return\n    if not isinstance(c, Context):\n"
            "        c = Context(c)\n    c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        # what every `return` of an unannotated function gives: a class called, the class of
        # `self` (`self.__class__(…)`, `cls(…)`), a typed local, None
        (
            "def mk(k):\n    if k:\n        return None\n    return Context()\nmk(1).invoke()\n",
            "invoke",
            "Context.invoke",
        ),
        (
            "def mk():\n    c = make()\n    return c\ndef f():\n    x = mk()\n    x.invoke()\n",
            "x.invoke",
            "Context.invoke",
        ),
        (
            "class G:\n    def clone(self):\n        return self.__class__()\n    def run(self): ...\n"
            "    def go(self):\n        g = self.clone()\n        g.run()\n",
            "g.run",
            "G.run",
        ),
        (
            "class G:\n    @classmethod\n    def make(cls):\n        return cls()\n    def run(self): ...\n"
            "def f():\n    G.make().run()\n",
            "run",
            "G.run",
        ),
        # inside `if isinstance(x, C)` (alone, in an `and`, an `elif`), `x` is a `C`
        ("def f(c):\n    if isinstance(c, Context):\n        c.invoke()\n", "c.invoke", "Context.invoke"),
        (
            "def f(c, k):\n    if k:\n        pass\n    elif isinstance(c, Plain) and k:\n"
            "        c.invoke()\n",
            "c.invoke",
            "Plain.invoke",
        ),
        (
            "def f(c: Plain):\n    if isinstance(c, Context):\n        if k:\n            c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        # one item of a call's declared tuple (`cmd_name, cmd, args = self.resolve_command(…)`)
        ("def f():\n    name, c, rest = split()\n    c.invoke()\n", "c.invoke", "Context.invoke"),
        ("def f():\n    p, c = pair()\n    p.invoke()\n", "p.invoke", "Plain.invoke"),
        # a declared return type wins over what the returns give
        ("def mk() -> Plain:\n    return Context()\nmk().invoke()\n", "mk().invoke", "Plain.invoke"),
        # a class held in a name (`type[X]`, a class-body alias): calling it makes an X
        ("def f():\n    k = kind()\n    c = k()\n    c.invoke()\n", "c.invoke", "Context.invoke"),
        ("def f(k: t.Type[Context]):\n    c = k()\n    c.invoke()\n", "c.invoke", "Context.invoke"),
        ("def f(k: type[Context]):\n    k2 = k\n    k2().invoke()\n", "invoke", "Context.invoke"),
        (
            "class H:\n    maker = Context\n    def go(self):\n        c = self.maker()\n"
            "        c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        (
            "class H:\n    maker: type[Context] = Context\n    def go(self):\n"
            "        self.maker().invoke()\n",
            "invoke",
            "Context.invoke",
        ),
        ("M = kind()\ndef f():\n    c = M()\n    c.invoke()\n", "c.invoke", "Context.invoke"),
        # a mapping's values: `d[k]`, `d.get(k)`, `d.values()`, `d.items()` of `dict[K, V]`
        ("def f(d: dict[str, Context], k):\n    c = d[k]\n    c.invoke()\n", "c.invoke", "Context.invoke"),
        (
            "def f(d: t.Mapping[str, Context], k):\n    c = d.get(k)\n    c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        (
            "class P:\n    def __init__(self):\n        self._opts: dict[str, Context] = {}\n"
            "    def run(self, k):\n        o = self._opts.get(k)\n        o.invoke()\n",
            "o.invoke",
            "Context.invoke",
        ),
        (
            "def f(d: dict[str, Context]):\n    for c in d.values():\n        c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        (
            "def f(d: dict[str, Context] | None):\n    e = d\n    for k, c in e.items():\n"
            "        c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        # a loop's tuple target over a call whose items are declared tuples
        ("def f():\n    for name, c in named():\n        c.invoke()\n", "c.invoke", "Context.invoke"),
        ("def f():\n    for c, p in pairs():\n        p.invoke()\n", "p.invoke", "Plain.invoke"),
        ("def f():\n    for c, p in pairs():\n        c.invoke()\n", "c.invoke", "Context.invoke"),
        # after `x = value`, up to the next statement that binds `x` again, `x` is that value
        ("def f():\n    x = Context()\n    x = Plain()\n    x.invoke()\n", "x.invoke", "Plain.invoke"),
        (
            "def f(v):\n    g = t.cast(Context, v)\n    g = Plain()\n    g.invoke()\n",
            "g.invoke",
            "Plain.invoke",
        ),
        (
            "def f(s, xs):\n    if k:\n        s = Context()\n        if s:\n            for y in xs:\n"
            "                s.invoke()\n    s = Plain()\n",
            "s.invoke",
            "Context.invoke",
        ),
        (
            "def f(xs):\n    for x in xs:\n        c = make()\n        with c:\n            c.invoke()\n"
            "    for c in xs:\n        pass\n",
            "c.invoke",
            "Context.invoke",
        ),
        # a copy of a `self` attribute the class types (`response = self.__response`)
        (
            "class C:\n    def __init__(self):\n        self.c = Context()\n    def run(self):\n"
            "        c = self.c\n        c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        # values of several classes that all have the same method (a subclass that keeps it)
        (
            "def f(k):\n    if k:\n        x = Sub()\n    else:\n        x = Context()\n    x.invoke()\n",
            "x.invoke",
            "Context.invoke",
        ),
        (
            "def f(k):\n    x = None\n    if k:\n        x = Sub()\n    else:\n        x = Context()\n"
            "    x.invoke()\n",
            "x.invoke",
            "Context.invoke",
        ),
        # a declared type wins over the flow, as for a type checker
        (
            "def f(x: Plain):\n    x = unknown()\n    x = Context()\n    x.invoke()\n",
            "x.invoke",
            "Plain.invoke",
        ),
        # a module-level name that holds no class the code states is still that name
        ("R = unknown()\ndef f():\n    R(1)\n", "R(1)", "R"),
        # `enumerate` over stated items; `except C as e`; `list[C] | None`
        ("def f():\n    for i, c in enumerate(items()):\n        c.invoke()\n", "c.invoke", "Context.invoke"),
        (
            "def f(cs: list[Context]):\n    for i, c in enumerate(cs):\n        c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        (
            "def f():\n    try:\n        pass\n    except Context as e:\n        e.invoke()\n"
            "    except Plain as e:\n        e.invoke()\n",
            "e.invoke",
            "Plain.invoke",
        ),
        ("def f():\n    for c in kinds():\n        c.invoke()\n", "c.invoke", "Context.invoke"),
        # an unannotated parameter's default value states its type, as for pyright (a call's
        # result, a module-level name of a top-level function's file); a copy into `self.x`
        ("def f(c=Context()):\n    c.invoke()\n", "c.invoke", "Context.invoke"),
        ("def f(a, *, c=make()):\n    c.invoke()\n", "c.invoke", "Context.invoke"),
        ("class H:\n    def go(self, c=Context()):\n        c.invoke()\n", "c.invoke", "Context.invoke"),
        ("DEFAULT = Context()\ndef f(c=DEFAULT):\n    c.invoke()\n", "c.invoke", "Context.invoke"),
        (
            "class H:\n    def __init__(self, p=Context()):\n        self.p = p\n"
            "    def go(self):\n        self.p.invoke()\n",
            "self.p.invoke",
            "Context.invoke",
        ),
        # a function whose returns give values of several classes that share the method
        # (`getConnection`: an HTTPSConnection or an HTTPConnection), called into a name
        (
            "def mk(k):\n    if k:\n        c = Sub()\n    else:\n        c = Context()\n    return c\n"
            "def f():\n    h = mk(1)\n    h.invoke()\n",
            "h.invoke",
            "Context.invoke",
        ),
        (
            "class H:\n    def mk(self, k):\n        if k:\n            return Sub()\n"
            "        return Context()\n    def go(self):\n        h = self.mk(1)\n        h.invoke()\n",
            "h.invoke",
            "Context.invoke",
        ),
        (
            "def mk(k, c: Sub):\n    if k:\n        return c\n    return Context()\n"
            "def f():\n    h = mk(1)\n    h.invoke()\n",
            "h.invoke",
            "Context.invoke",
        ),
        # a default naming another module's variable (`policy=compat32`), in a method, copied
        (
            "from models import default_context\nclass M:\n    def __init__(self, p=default_context):\n"
            "        self.p = p\n    def go(self):\n        self.p.invoke()\n",
            "self.p.invoke",
            "Context.invoke",
        ),
        # a module-level name of another file, bound once there (imported, or a module's)
        ("def f():\n    default_context.invoke()\n", "default_context.invoke", "Context.invoke"),
        ("def f():\n    made_context.invoke()\n", "made_context.invoke", "Context.invoke"),
        (
            "import models\nmodels.default_context.invoke()\n",
            "models.default_context.invoke",
            "Context.invoke",
        ),
        ("from models import default_context as d\nd.invoke()\n", "d.invoke", "Context.invoke"),
        # a module-level copy of a module-level variable (`lastResort = _defaultLastResort`)
        ("_made = Context()\nlast = _made\ndef f():\n    last.invoke()\n", "last.invoke", "Context.invoke"),
        ("last = default_context\ndef f():\n    last.invoke()\n", "last.invoke", "Context.invoke"),
        # a module's variable read into a local (`root = logging.root`), and a copy of it
        (
            "import models\ndef f():\n    c = models.default_context\n    c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        (
            "import models\ndef f(k):\n    c = models.made_context\n    d = c\n    d.invoke()\n",
            "d.invoke",
            "Context.invoke",
        ),
        # a function returning what a class's attribute holds (`return self._opener`,
        # `return Document.implementation`), directly or through a local
        (
            "class H:\n    def __init__(self):\n        self.c = Context()\n    def get(self):\n"
            "        return self.c\n    def go(self):\n        self.get().invoke()\n",
            "invoke",
            "Context.invoke",
        ),
        (
            "class H:\n    impl = Context()\ndef get(k):\n    if k:\n        return None\n    return H.impl\n"
            "def f():\n    get(1).invoke()\n",
            "invoke",
            "Context.invoke",
        ),
        (
            "class H:\n    impl = Context()\ndef f():\n    c = H.impl\n    c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        (
            "class H:\n    def reset(self):\n        self.c = Context()\n    def get(self):\n"
            "        doc = self.c\n        return doc\n    def go(self):\n        self.get().invoke()\n",
            "invoke",
            "Context.invoke",
        ),
        # after `assert isinstance(x, C)` (alone or in an `and`), up to a rebinding: a C
        ("def f(x):\n    assert isinstance(x, Context)\n    x.invoke()\n", "x.invoke", "Context.invoke"),
        (
            "def f(x, k):\n    assert k and isinstance(x, Context), 'no'\n    if k:\n        x.invoke()\n"
            "    x = Plain()\n",
            "x.invoke",
            "Context.invoke",
        ),
        # a function imported in a class body is the class's member (`Message.walk`)
        (
            "class M:\n    def go(self):\n        self.make()\n    from models import make\n",
            "self.make",
            "make",
        ),
        # a chained assignment: every target holds the value (`self.headers = self.msg = f()`)
        ("def f():\n    a = b = Context()\n    a.invoke()\n", "a.invoke", "Context.invoke"),
        ("def f():\n    a = b = make()\n    b.invoke()\n", "b.invoke", "Context.invoke"),
        (
            "class H:\n    def __init__(self):\n        self.c = self._c = Context()\n"
            "    def go(self):\n        self.c.invoke()\n",
            "self.c.invoke",
            "Context.invoke",
        ),
        (
            "def f(c: Context):\n    a = b = c\n    a.invoke()\n",
            "a.invoke",
            "Context.invoke",
        ),
        # a parameter's `None` default replaced by `if x is None: x = value` (as `x=value`):
        # a call's result, a module's variable, a class called (`cls=None` … `cls = JSONEncoder`)
        (
            "def f(c=None):\n    if c is None:\n        c = Context()\n    c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        (
            "def f(k, c=None):\n    if k:\n        return\n    else:\n        if c is None:\n"
            "            c = make()\n        c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        (
            "def f(c=None):\n    if c is None:\n        c = default_context\n    c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        (
            "def f(cls=None):\n    if cls is None:\n        cls = Context\n    return cls(k=1).invoke()\n",
            "invoke",
            "Context.invoke",
        ),
        (
            "def f(c=None):\n    if not c:\n        c = default_context\n    c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        (  # a guard's class copied into an attribute, called there (`self._factory(tag, attrs)`)
            "class P:\n    def __init__(self, factory=None):\n        if factory is None:\n"
            "            factory = Context\n        self._factory = factory\n    def go(self):\n"
            "        self._factory().invoke()\n",
            "invoke",
            "Context.invoke",
        ),
        (  # more in the guard's block; an import's dotted path naming the parameter before it
            "def f(cookiejar=None):\n    import email.cookiejar\n    if cookiejar is None:\n"
            "        cookiejar = Context()\n        k = 1\n    cookiejar.invoke()\n",
            "cookiejar.invoke",
            "Context.invoke",
        ),
        (  # a method of a class whose bases (of this module, to `object`) do not define it
            "class Base(object):\n    def go(self): ...\nclass Mid(Base): ...\nclass H(Mid):\n"
            "    def __init__(self, jar=None):\n        if jar is None:\n            jar = Context()\n"
            "        self.jar = jar\n    def use(self):\n        self.jar.invoke()\n",
            "self.jar.invoke",
            "Context.invoke",
        ),
        (
            "class Base:\n    pass\nclass H(Base):\n    def go(self, c=make()):\n        c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        # a parameter typed `str` by its default, converted by `if isinstance(x, str): x = C(x)`
        # (`formataddr(pair, charset='utf-8')`): after it, in its block, a C
        (
            "def f(name, c='utf-8'):\n    if name:\n        if isinstance(c, str):\n"
            "            c = Context(c)\n        c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        # a local holding a method read from an attribute (`fixname = self._fixname`,
        # `close_handler = self.target.close`): calling it calls that method
        (
            "class P:\n    'a docstring'\n    def _fix(self, t):\n        return t\n    def go(self, t):\n"
            "        fix = self._fix\n        fix(t)\n",
            "fix(t)",
            "P._fix",
        ),
        (
            "class T:\n    def close(self) -> Context: ...\nclass P:\n    def __init__(self):\n"
            "        self.t = T()\n    def done(self):\n        close = self.t.close\n        close()\n",
            "close()",
            "T.close",
        ),
        (
            "class T:\n    def close(self) -> Context: ...\nclass P:\n    def __init__(self):\n"
            "        self.t = T()\n    def done(self):\n        close = self.t.close\n"
            "        return close()\n    def go(self):\n        self.done().invoke()\n",
            "invoke",
            "Context.invoke",
        ),
        (  # tested against `None` before the guard: not read (`json.loads`)
            "def f(k, cls=None):\n    if cls is None and k:\n        return\n    if cls is None:\n"
            "        cls = Context\n    cls().invoke()\n",
            "invoke",
            "Context.invoke",
        ),
        (
            "class P:\n    def __init__(self, target=None):\n        if target is None:\n"
            "            target = Context()\n        self.target = self._target = target\n"
            "    def go(self):\n        self.target.invoke()\n",
            "self.target.invoke",
            "Context.invoke",
        ),
        # `x or value` of a parameter `x=None`: the statement `x = x or value` replaces the
        # default as the guard does; `self._parser = _parser or XMLParser(…)`, the one place
        # the function names the parameter, holds the value
        (
            "def f(c=None):\n    c = c or Context()\n    c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        (
            "class P:\n    def __init__(self, *, _parser=None):\n        self._parser = _parser or make()\n"
            "    def go(self):\n        self._parser.invoke()\n    def close(self):\n"
            "        self._parser = None\n",
            "self._parser.invoke",
            "Context.invoke",
        ),
        # a declared name keeps its type over plain assignments of untyped values (a type
        # checker holds them to the declaration)
        (
            "def f(ctx: Context):\n    ctx.invoke()\n    while ctx.parent is not None:\n"
            "        ctx = ctx.parent\n",
            "ctx.invoke",
            "Context.invoke",
        ),
        ("def f(c: Context, o):\n    c.invoke()\n    c = o\n", "c.invoke", "Context.invoke"),
        ("def f(c: Context, o):\n    c.invoke()\n    c, d = o\n", "c.invoke", "Context.invoke"),
        (
            "class H:\n    def __init__(self, c: Context):\n        self.c: Context = c\n"
            "    def reset(self, o):\n        self.c = o\n    def go(self):\n        self.c.invoke()\n",
            "self.c.invoke",
            "Context.invoke",
        ),
        # an `isinstance` block narrows up to a statement binding the name again, and a copy
        # made there holds the narrowed value
        (
            "def f(c, k):\n    if isinstance(c, Context):\n        c.invoke()\n        c = k\n",
            "c.invoke",
            "Context.invoke",
        ),
        (
            "def f(c):\n    if isinstance(c, Context):\n        d = c\n        d.invoke()\n",
            "d.invoke",
            "Context.invoke",
        ),
        (
            "def f(c, k):\n    if isinstance(c, Plain):\n        if isinstance(c, Context):\n"
            "            d = c\n        c = k\n    d.invoke()\n",
            "d.invoke",
            "Context.invoke",
        ),
        # a method returning its receiver (or a new object of the receiver's class) gives, bound
        # to a name, what the receiver holds: the receiver's class, not the method's
        ("def f():\n    b = Builder()\n    w = b.where()\n    w.fetch()\n", "w.fetch", "Builder.fetch"),
        ("def f():\n    b = Narrow()\n    w = b.where()\n    w.fetch()\n", "w.fetch", "Narrow.fetch"),
        (
            "class A:\n    def copy(self):\n        return self.__class__()\n    def m(self): ...\n"
            "class B(A):\n    def m(self): ...\ndef f(b: B):\n    c = b.copy()\n    c.m()\n",
            "c.m",
            "B.m",
        ),
        (
            "class A:\n    def clone(self):\n        n = self.__class__.__new__(self.__class__)\n"
            "        return n\nclass B(A):\n    def m(self): ...\n"
            "default = B()\nstrict = default.clone()\nstrict.m()\n",
            "strict.m",
            "B.m",
        ),
        # a loop over an attribute of a typed receiver: the items its class declares
        (BOX + "def f(b: Box):\n    for c in b.items:\n        c.invoke()\n", "c.invoke", "Context.invoke"),
        (BOX + "def f(b: Box):\n    [c.invoke() for c in b.items]\n", "c.invoke", "Context.invoke"),
        (
            BOX + "box = Box()\ndef f():\n    for c in box.items:\n        c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        (
            BOX + "class H:\n    def __init__(self, b: Box):\n        self.b = b\n    def go(self):\n"
            "        for c in self.b.items:\n            c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
        (
            BOX + "def f(x):\n    if isinstance(x, Box):\n        b = x\n        x = None\n"
            "        for c in b.items:\n            c.invoke()\n",
            "c.invoke",
            "Context.invoke",
        ),
    ],
)
def test_a_stated_type_resolves_the_call(code: str, call: str, want: str) -> None:
    assert resolved(graph(code), "use.py", call) == want


@pytest.mark.parametrize(
    ("code", "call"),
    [
        # the type is not stated, or two statements disagree: never a guess
        ("def f(ctx):\n    ctx.invoke()\n", "ctx.invoke"),
        ("def f():\n    unknown().invoke()\n", "invoke"),
        ("def outer():\n    def inner() -> Context: ...\n\ndef f():\n    outer().invoke()\n", "invoke"),
        ("def f():\n    Plain().__enter__().invoke()\n", "invoke"),
        ("def f():\n    x = unknown()\n    x.invoke()\n", "x.invoke"),
        (
            "def f(k):\n    if k:\n        x = Context()\n    else:\n        x = Plain()\n    x.invoke()\n",
            "x.invoke",
        ),
        ("def f(xs):\n    x = Context()\n    for x in xs:\n        x.invoke()\n", "x.invoke"),
        ("def f(xs):\n    x = Context()\n    [x.invoke() for x in xs]\n", "x.invoke"),
        ("def f():\n    x = Context()\n    x, y = 1, 2\n    x.invoke()\n", "x.invoke"),
        ("def f(*x: Context):\n    x.invoke()\n", "x.invoke"),
        ("def f(x: Context, xs):\n    [x.invoke() for x in xs]\n", "x.invoke"),
        ("def f(x: Context):\n    g = lambda x: x.invoke()\n", "x.invoke"),
        ("def f(x: Context):\n    def inner(x):\n        x.invoke()\n", "x.invoke"),
        ("def f():\n    with Plain() as p:\n        p.invoke()\n", "p.invoke"),  # __enter__ unannotated
        ("def f():\n    with Maybe() as m:\n        m.fetch()\n", "m.fetch"),  # self or a Plain
        # a string that is a value, or more than a name: no forward reference
        ("def f(c: t.Literal['Context']):\n    c.invoke()\n", "c.invoke"),
        ("def f(c: t.Annotated[Plain, 'Context']):\n    c.invoke()\n", "c.invoke"),
        ("def f(c: 'Context | Plain'):\n    c.invoke()\n", "c.invoke"),
        # a method making an object of a class it is given, not its own: no type
        (
            "class A:\n    def copy(self):\n        n = self.__class__.__new__(Plain)\n        return n\n"
            "    def m(self): ...\nclass B(A):\n    def m(self): ...\n"
            "def f(b: B):\n    c = b.copy()\n    c.m()\n",
            "c.m",
        ),
        ("g = Context()\ndef f():\n    g = Plain()\ndef h():\n    g.invoke()\n", "g.invoke"),
        # a copy of a `self` attribute the class does not type, or types two ways
        (
            "class C:\n    def __init__(self, c):\n        self.c = c\n    def run(self):\n"
            "        c = self.c\n        c.invoke()\n",
            "c.invoke",
        ),
        (
            "class C:\n    def __init__(self):\n        self.c = Context()\n    def o(self):\n"
            "        self.c = Plain()\n    def run(self):\n        c = self.c\n        c.invoke()\n",
            "c.invoke",
        ),
        # a copy of an untyped name, of itself, or one value among others of another type
        (
            "class C:\n    def __init__(self, c):\n        self.c = c\n    def run(self):\n"
            "        self.c.invoke()\n",
            "self.c.invoke",
        ),
        ("def f(a):\n    b = a\n    a = b\n    b.invoke()\n", "b.invoke"),
        (
            "class C:\n    def __init__(self, c: Context):\n        self.c = c\n    def other(self):\n"
            "        self.c = Plain()\n    def run(self):\n        self.c.invoke()\n",
            "self.c.invoke",
        ),
        # a loop over something whose items the code does not state, or states two ways
        ("def f():\n    for c in unknown():\n        c.invoke()\n", "c.invoke"),
        ("def f(cs: dict[str, Context]):\n    for c in cs:\n        c.invoke()\n", "c.invoke"),
        ("def f(cs: tuple[Context, Plain]):\n    for c in cs:\n        c.invoke()\n", "c.invoke"),
        ("def f(cs: list[Context]):\n    cs = unknown()\n    for c in cs:\n        c.invoke()\n", "c.invoke"),
        ("def f(cs: list[Context]):\n    for a, b in cs:\n        a.invoke()\n", "a.invoke"),
        (
            "def f(xs):\n    for c in items():\n        c.invoke()\n    for c in xs:\n        pass\n",
            "c.invoke",
        ),
        (
            "class C:\n    def __init__(self, cs):\n        self.cs: list[Context] = cs or []\n"
            "    def other(self):\n        self.cs = 3\n    def run(self):\n        for c in self.cs:\n"
            "            c.invoke()\n",
            "c.invoke",
        ),
        (
            "async def f():\n    async for c in agen():\n        c.invoke()\n",
            "c.invoke",
        ),
        # the class binds the attribute itself, or a base from outside the workspace might
        (
            "class B:\n    def __init__(self, c: Context):\n        self.c = c\nclass S(B):\n"
            "    def __init__(self, c):\n        self.c = c\n    def run(self):\n        self.c.invoke()\n",
            "self.c.invoke",
        ),
        (
            "class B:\n    def __init__(self, c: Context):\n        self.c = c\nclass S(B, ext.Mixin):\n"
            "    def run(self):\n        self.c.invoke()\n",
            "self.c.invoke",
        ),
        (
            "def f(v, k):\n    g = t.cast(Context, v)\n    if k:\n        g = Plain()\n    g.invoke()\n",
            "g.invoke",
        ),
        # after `x = value` only up to the next statement that binds `x`, never in a loop
        # that rebinds it later, nor in a function made there
        (
            "def f(xs):\n    x = Context()\n    for y in xs:\n        x.invoke()\n        x = Plain()\n",
            "x.invoke",
        ),
        (
            "def f(k):\n    x = Context()\n    if k:\n        x = Plain()\n    x.invoke()\n",
            "x.invoke",
        ),
        ("def f():\n    x = Context()\n    h = lambda: x.invoke()\n    x = Plain()\n", "x.invoke"),
        ("def f(k):\n    if k:\n        x = Context()\n    x.invoke()\n    x = Plain()\n", "x.invoke"),
        # an alias bound twice, or rebound in a function
        ("Ctx = Context\nCtx = Plain\ndef f():\n    Ctx().invoke()\n", "Ctx().invoke"),
        (
            "Ctx = Context\ndef g():\n    global Ctx\n    Ctx = Plain\ndef f():\n    Ctx().invoke()\n",
            "Ctx().invoke",
        ),
        # an isinstance guard that does not convert on every path, or comes after a use
        (
            "def f(c):\n    c.invoke()\n    if not isinstance(c, Context):\n        c = Context(c)\n",
            "c.invoke",
        ),
        ("def f(c):\n    if not isinstance(c, Context):\n        c = Plain(c)\n    c.invoke()\n", "c.invoke"),
        # outside the narrowing `if`, in its `else`, after a rebinding, in a function made there,
        # for a tuple of classes or an attribute
        ("def f(c):\n    if isinstance(c, Context):\n        pass\n    c.invoke()\n", "c.invoke"),
        (
            "def f(c):\n    if isinstance(c, Context):\n        pass\n    else:\n        c.invoke()\n",
            "c.invoke",
        ),
        ("def f(c):\n    if isinstance(c, Context):\n        c = g()\n        c.invoke()\n", "c.invoke"),
        ("def f(c):\n    if isinstance(c, Context):\n        h = lambda: c.invoke()\n", "c.invoke"),
        ("def f(c):\n    if isinstance(c, (Context, Plain)):\n        c.invoke()\n", "c.invoke"),
        ("def f(self):\n    if isinstance(self.c, Context):\n        self.c.invoke()\n", "self.c.invoke"),
        # an item the tuple does not type, a tuple of any length, a starred target, no tuple
        ("def f():\n    name, c, rest = split()\n    name.invoke()\n", "name.invoke"),
        ("def f():\n    a, b = many()\n    b.invoke()\n", "b.invoke"),
        ("def f():\n    name, *c = split()\n    c.invoke()\n", "c.invoke"),
        ("def f():\n    a, b = make()\n    b.invoke()\n", "b.invoke"),
        # calling an instance (a declared `X`, not `type[X]`), or a class that may be either
        ("def f(k: Caller):\n    c = k()\n    c.invoke()\n", "c.invoke"),
        ("def f(k: Context):\n    c = k()\n    c.invoke()\n", "c.invoke"),
        ("def f():\n    k = kind()\n    k = Context()\n    c = k()\n    c.invoke()\n", "c.invoke"),
        (
            "class H:\n    maker = Context\n    def other(self):\n        self.maker = Context()\n"
            "    def go(self):\n        c = self.maker()\n        c.invoke()\n",
            "c.invoke",
        ),
        ("def f():\n    c = make()\n    d = c()\n    d.invoke()\n", "d.invoke"),
        # a mapping whose values are not stated, a lookup with a default, a rebound mapping
        ("def f(d: dict, k):\n    c = d[k]\n    c.invoke()\n", "c.invoke"),
        ("def f(d: dict[str, Context], k):\n    c = d.get(k, 3)\n    c.invoke()\n", "c.invoke"),
        ("def f(d: dict[str, Context], k):\n    d = g()\n    c = d[k]\n    c.invoke()\n", "c.invoke"),
        ("def f(d: dict[str, list[Context]], k):\n    c = d[k]\n    c.invoke()\n", "c.invoke"),
        # a tuple target over items that are no declared tuple, or a tuple of any length
        ("def f():\n    for a, c in items():\n        c.invoke()\n", "c.invoke"),
        ("def f():\n    for a, c in many():\n        c.invoke()\n", "c.invoke"),
        # values of several classes whose methods differ, or one value the code does not state
        (
            "def f(k):\n    if k:\n        x = Over()\n    else:\n        x = Context()\n    x.invoke()\n",
            "x.invoke",
        ),
        (
            "def f(k):\n    if k:\n        x = unknown()\n    else:\n        x = Context()\n    x.invoke()\n",
            "x.invoke",
        ),
        # `enumerate` over unstated items, its index; an `except` of a tuple, or rebound
        ("def f(xs):\n    for i, c in enumerate(xs):\n        c.invoke()\n", "c.invoke"),
        ("def f():\n    for c, i in enumerate(items()):\n        c.invoke()\n", "c.invoke"),
        (
            "def f():\n    try:\n        pass\n    except (Context, Plain) as e:\n        e.invoke()\n",
            "e.invoke",
        ),
        (
            "def f():\n    try:\n        pass\n    except Context as e:\n        e = unknown()\n"
            "        e.invoke()\n",
            "e.invoke",
        ),
        # a default that states nothing (`None`, an unstated call, a name bound twice, a name
        # in a method, which may be the class body's) or a parameter rebound in the body
        ("def f(c=None):\n    c.invoke()\n", "c.invoke"),
        ("def f(c=unknown()):\n    c.invoke()\n", "c.invoke"),
        ("D = Context()\nD = Plain()\ndef f(c=D):\n    c.invoke()\n", "c.invoke"),
        (
            "D = Context()\nclass H:\n    D = Plain()\n    def go(self, c=D):\n        c.invoke()\n",
            "c.invoke",
        ),
        ("def f(k, c=Context()):\n    if k:\n        c = Plain()\n    c.invoke()\n", "c.invoke"),
        ("def f(c=Context()):\n    for c in g():\n        pass\n    c.invoke()\n", "c.invoke"),
        # a default naming a variable bound twice in its module, a class (not an instance), an
        # outer function's local, a name the class binds as an attribute
        ("from models import twice\ndef f(c=twice):\n    c.invoke()\n", "c.invoke"),
        ("def f(c=Context):\n    c.invoke()\n", "c.invoke"),
        (
            "D = Context()\ndef g():\n    D = Plain()\n    def f(c=D):\n        c.invoke()\n",
            "c.invoke",
        ),
        (
            "D = Context()\nclass H:\n    def __init__(self):\n        self.D = Plain()\n"
            "    def go(self, c=D):\n        c.invoke()\n",
            "c.invoke",
        ),
        # a method of a class with bases: pyright takes a base method's annotation first
        ("class H(Sub):\n    def go(self, c=Context()):\n        c.invoke()\n", "c.invoke"),
        # returns of several classes whose method differs, or one unstated return among them
        (
            "def mk(k):\n    if k:\n        return Over()\n    return Context()\n"
            "def f():\n    h = mk(1)\n    h.invoke()\n",
            "h.invoke",
        ),
        (
            "def mk(k):\n    c = unknown()\n    if k:\n        c = Sub()\n    return c\n"
            "def f():\n    h = mk(1)\n    h.invoke()\n",
            "h.invoke",
        ),
        (
            "def mk(k):\n    if k:\n        return Sub()\n    return Context()\n"
            "def f(k):\n    h = mk(1)\n    if k:\n        h = Plain()\n    h.invoke()\n",
            "h.invoke",
        ),
        # a module-level copy of a variable bound twice; `m.x` read from a variable (a
        # parameter named like a module, an outer function's local), from a variable bound twice
        ("last = twice\ndef f():\n    last.invoke()\n", "last.invoke"),
        ("def f(models):\n    c = models.default_context\n    c.invoke()\n", "c.invoke"),
        (
            "import models\ndef f():\n    models = unknown()\n    def g():\n"
            "        c = models.default_context\n        c.invoke()\n    return g\n",
            "c.invoke",
        ),
        ("import models\ndef f():\n    c = models.twice\n    c.invoke()\n", "c.invoke"),
        # `assert isinstance`: before it, after a rebinding, in a function made after it, a tuple
        ("def f(x):\n    x.invoke()\n    assert isinstance(x, Context)\n", "x.invoke"),
        ("def f(x, y):\n    assert isinstance(x, Context)\n    x = y\n    x.invoke()\n", "x.invoke"),
        (
            "def f(x):\n    assert isinstance(x, Context)\n    def g():\n        x.invoke()\n    return g\n",
            "x.invoke",
        ),
        ("def f(x):\n    assert isinstance(x, (Context, Plain))\n    x.invoke()\n", "x.invoke"),
        # the function that binds an attribute does not return it because another one does
        (
            "class H:\n    def reset(self):\n        self.c = Context()\n    def get(self):\n"
            "        doc = self.c\n        return doc\n    def go(self):\n        self.reset().invoke()\n",
            "invoke",
        ),
        (
            "class H:\n    impl = Context()\n    impl = Plain()\ndef f():\n    c = H.impl\n    c.invoke()\n",
            "c.invoke",
        ),
        # another file's module-level name bound twice, to an unstated value, or rebound in a
        # function of its file through `global`
        ("def f():\n    twice.invoke()\n", "twice.invoke"),
        ("def f():\n    unstated.invoke()\n", "unstated.invoke"),
        ("def f():\n    rebound.invoke()\n", "rebound.invoke"),
        ("import models\nmodels.twice.invoke()\n", "models.twice.invoke"),
        # returns that disagree, or that say nothing: a generator, a coroutine, another value
        ("def mk(k):\n    if k:\n        return Plain()\n    return Context()\nmk(1).invoke()\n", "invoke"),
        ("def mk(k):\n    yield 1\n    return Context()\nmk(1).invoke()\n", "invoke"),
        ("async def mk():\n    return Context()\nmk().invoke()\n", "invoke"),
        ("def mk(v):\n    return v\nmk(1).invoke()\n", "invoke"),
        (
            "def mk():\n    def inner():\n        return Context()\n    return inner\nmk().invoke()\n",
            "invoke",
        ),
        # a chained assignment of an unstated value, or a target bound again to another class
        ("def f():\n    a = b = unknown()\n    a.invoke()\n", "a.invoke"),
        ("def f(k):\n    a = b = Context()\n    if k:\n        a = Plain()\n    a.invoke()\n", "a.invoke"),
        # `if x is None: x = value`: a read before it or outside its block, another value
        # after it, a method of a class with bases, `if x == 0`, a name in a nested function
        ("def f(c=None):\n    c.invoke()\n    if c is None:\n        c = Context()\n", "c.invoke"),
        (
            "class P:\n    def __init__(self, t=None):\n        self.t = t\n        if t is None:\n"
            "            t = Context()\n    def go(self):\n        self.t.invoke()\n",
            "self.t.invoke",
        ),
        (
            "def f(k, c=None):\n    if c is None:\n        c = Context()\n    if k:\n        c = Plain()\n"
            "    c.invoke()\n",
            "c.invoke",
        ),
        # `x or value`: a default other than `None`, a read of `x` before `x = x or value`,
        # the attribute's parameter named again in the function, a method a base may define,
        # `and`, a name that is no parameter
        ("def f(c=Plain()):\n    c = c or Context()\n    c.invoke()\n", "c.invoke"),
        ("def f(c=None):\n    c.invoke()\n    c = c or Context()\n", "c.invoke"),
        (
            "def f(k, c=None):\n    if k:\n        c = c or Context()\n    c.invoke()\n",
            "c.invoke",
        ),
        (
            "class P:\n    def __init__(self, p=None):\n        self.p = p or Context()\n        p.x = 1\n"
            "    def go(self):\n        self.p.invoke()\n",
            "self.p.invoke",
        ),
        (
            "class P:\n    def __init__(self, p=None):\n        self.p = p or Context()\n"
            "    def go(self, p=None):\n        self.p = p\n        self.p.invoke()\n",
            "self.p.invoke",
        ),
        (
            "class H(Sub):\n    def __init__(self, p=None):\n        self.p = p or Context()\n"
            "    def go(self):\n        self.p.invoke()\n",
            "self.p.invoke",
        ),
        ("def f(c=None):\n    c = c and Context()\n    c.invoke()\n", "c.invoke"),
        ("def f(k):\n    c = k or Context()\n    c.invoke()\n", "c.invoke"),
        # a base of this module that defines the method (or mentions its name), a base bound
        # twice, a `from m import *` after the base (it may bind the name again)
        (
            "class Base:\n    def go(self, c): ...\nclass H(Base):\n    def go(self, c=Context()):\n"
            "        c.invoke()\n",
            "c.invoke",
        ),
        (
            "class Base:\n    go = None\nclass Mid(Base): ...\nclass H(Mid):\n"
            "    def go(self, c=Context()):\n        c.invoke()\n",
            "c.invoke",
        ),
        (
            "class Base: ...\nBase = unknown()\nclass H(Base):\n    def go(self, c=Context()):\n"
            "        c.invoke()\n",
            "c.invoke",
        ),
        (
            "class Base: ...\nfrom models import *\nclass H(Base):\n    def go(self, c=Context()):\n"
            "        c.invoke()\n",
            "c.invoke",
        ),
        (
            "def outer():\n    def f(cls=None):\n        if cls is None:\n            cls = Context\n"
            "        cls().invoke()\n    return f\n",
            "invoke",
        ),
        # a method read into a local where the class also binds an attribute of its name, or
        # from an attribute whose type is not stated
        (
            "class P:\n    def __init__(self):\n        self.go = unknown()\n    def go(self): ...\n"
            "    def run(self):\n        invoke = self.go\n        invoke()\n",
            "invoke()",
        ),
        (
            "class P:\n    def __init__(self, t):\n        self.t = t\n    def run(self):\n"
            "        invoke = self.t.invoke\n        invoke()\n",
            "invoke()",
        ),
        # `if isinstance(x, str): x = C(x)`: the default no `str`, no default, bound before it,
        # the use outside its block, a method a base may define
        ("def f(c=1):\n    if isinstance(c, str):\n        c = Context(c)\n    c.invoke()\n", "c.invoke"),
        ("def f(c):\n    if isinstance(c, str):\n        c = Context(c)\n    c.invoke()\n", "c.invoke"),
        (
            "def f(c='x'):\n    c = unknown()\n    if isinstance(c, str):\n        c = Context(c)\n"
            "    c.invoke()\n",
            "c.invoke",
        ),
        (
            "def f(k, c='x'):\n    if k:\n        if isinstance(c, str):\n            c = Context(c)\n"
            "    c.invoke()\n",
            "c.invoke",
        ),
        (
            "class H(Sub):\n    def go(self, c='x'):\n        if isinstance(c, str):\n"
            "            c = Context(c)\n        c.invoke()\n",
            "c.invoke",
        ),
        # `cls` outside a class is a variable (a classmethod's is the class)
        ("def f(cls):\n    cls.invoke()\n", "cls.invoke"),
        # a declared name rebound by a loop or a `with`: not an assignment held to the declaration
        ("def f(x: Context, xs):\n    x.invoke()\n    for x in xs:\n        pass\n", "x.invoke"),
        ("def f(x: Context, xs):\n    x.invoke()\n    with xs as x:\n        pass\n", "x.invoke"),
        # a nested def's annotated parameter is not the outer function's variable of that name
        (
            "def f():\n    def stuff(a: Context):\n        return a.invoke()\n    a = stuff.x\n"
            "    a.invoke()\n",
            "a.invoke",
        ),
        # a copy of a tested name after its rebinding, or in a function made in the block
        (
            "def f(c, k):\n    if isinstance(c, Context):\n        c = k\n        d = c\n"
            "        d.invoke()\n",
            "d.invoke",
        ),
        (
            "def f(c):\n    if isinstance(c, Context):\n        def g():\n            d = c\n"
            "            d.invoke()\n",
            "d.invoke",
        ),
        # a loop over an attribute of an untyped receiver, or one whose class states no items
        (BOX + "def f(b):\n    for c in b.items:\n        c.invoke()\n", "c.invoke"),
        (BOX + "def f(b: Box):\n    for c in b.other:\n        c.invoke()\n", "c.invoke"),
        (
            "class Box:\n    def __init__(self):\n        self.items = unknown()\n"
            "def f(b: Box):\n    for c in b.items:\n        c.invoke()\n",
            "c.invoke",
        ),
    ],
)
def test_an_unstated_type_stays_unresolved_with_candidates(code: str, call: str) -> None:
    assert resolved(graph(code), "use.py", call) is None


def test_a_value_read_from_a_module_is_a_reference_edge_and_from_a_variable_none() -> None:
    """``c = models.default_context`` reads the module's variable (a reference edge, typing
    ``c``); ``c = m.default_context`` on a parameter ``m`` reads an unknown object: no edge,
    also where the straight-line flow after the assignment would narrow ``c``."""
    g = graph(
        "import models\ndef f(m, k):\n    a = models.default_context\n    c = m.default_context\n"
        "    if k:\n        c.invoke()\n    c = Plain()\n"
    )
    refs = {e.to_name for e in g.snapshot.edges_of("use.py") if e.kind is EdgeKind.REFERENCE}
    assert "models.default_context" in refs
    assert not {r for r in refs if r.endswith(".default_context") and r != "models.default_context"}


SWIFT = {
    "Auth.swift": """
extension Request {
    public var auth: Authentication { .init(request: self) }
    public struct Authentication {
        let request: Request
    }
}
extension Request.Authentication {
    public func login(_ x: Int) { self.cache.insert(x) }
    var cache: Cache { Cache() }
}
final class Cache { func insert(_ x: Int) {} }
final class Request { func go() {} }
""",
}


def swift_call(code: str, call: str) -> str | None:
    g = graph_of({**SWIFT, "Use.swift": code})
    (edge,) = [e for e in g.snapshot.edges_of("Use.swift") if e.kind is EdgeKind.CALL and e.to_name == call]
    r = g.resolver.resolve(edge)
    return r.symbol.qualified_name if r.symbol is not None else None


def test_swift_typed_parameters_locals_and_extension_properties() -> None:
    code = "func h(request: Request) {\n    request.auth.login(1)\n    let c = Cache()\n    c.insert(2)\n}\n"
    assert swift_call(code, "request.auth.login") == "Request.Authentication.login"
    assert swift_call(code, "c.insert") == "Cache.insert"
    assert swift_call("func h(c: Cache?) {\n    c.insert(1)\n}\n", "c.insert") == "Cache.insert"
    # a function's declared return type, a generic one types nothing
    made = "func make() -> Cache? { nil }\nfunc any<T>() -> T { fatalError() }\n"
    assert (
        swift_call(made + "func h() {\n    let c = make()\n    c.insert(1)\n}\n", "c.insert")
        == "Cache.insert"
    )
    assert swift_call(made + "func h() {\n    make().insert(1)\n}\n", "make().insert") == "Cache.insert"
    assert swift_call(made + "func h() {\n    let c = any()\n    c.insert(1)\n}\n", "c.insert") is None
    # a property an extension declares, through `self`
    g = graph_of(SWIFT)
    (edge,) = [e for e in g.snapshot.edges_of("Auth.swift") if e.to_name == "self.cache.insert"]
    assert g.resolver.resolve(edge).symbol == g.find("Cache.insert")[0]


@pytest.mark.parametrize(
    ("code", "call", "want"),
    [
        # an implicit member `.name(…)` is a member of the type its context states: a
        # property's annotation, the declared result of the function or property returning it
        ("var c: Cache { .init() }\n", "Cache", "Cache"),
        (
            "func h() -> Cache {\n    if true { return .make() }\n    return Cache()\n}\n",
            "Cache.make",
            "Cache.make",
        ),
        ("final class Box {\n    static let shared: Cache = .make()\n}\n", "Cache.make", "Cache.make"),
        (
            "extension Request {\n    static func mk() -> Request.Authentication {\n"
            "        .init(request: Request())\n    }\n}\n",
            "Request.Authentication",
            "Request.Authentication",
        ),
        ("func h(c: Cache = .make(), d: Cache? = .make()) {}\n", "Cache.make", "Cache.make"),
        (  # `self = .make()` in a value type's `init`: a value of that type
            "struct Box {\n    static func make() -> Box { Box() }\n    init(k: Int) {\n"
            "        self = .make()\n    }\n}\n",
            "Box.make",
            "Box.make",
        ),
        (  # a chain from an implicit member starts at the stated type (`.shared.make()`)
            "extension Cache {\n    static let shared = Cache()\n}\nlet c: Cache = .shared.make()\n",
            "Cache.shared.make",
            "Cache.make",
        ),
        (
            "extension Cache {\n    static let shared = Cache()\n    func f() { g(.shared.make()) }\n}\n",
            "?.shared.make",
            None,
        ),
        # … else a receiver we do not know (it was the scope's own namesake: vapor's
        # `let storage = Mutex<AuthenticationStorage>(.init())` in a class was `Request.init`)
        (
            "extension Cache {\n    static func make() -> Cache { Cache() }\n"
            "    func f() { g(.make()) }\n}\n",
            "?.make",
            None,
        ),
        ("final class Box {\n    init() {}\n    let c = Mutex<Cache>(.init())\n}\n", "?.init", None),
        ("extension Cache {\n    static func make() -> Cache? { .make() }\n}\n", "?.make", None),
        (
            "func h() -> Cache {\n    let f = { () -> Cache in return .make() }\n    return f()\n}\n",
            "?.make",
            None,
        ),
        ("extension Cache {\n    static func make() -> Self { .make() }\n}\n", "?.make", None),
    ],
)
def test_swift_implicit_member_is_a_member_of_the_stated_type(code: str, call: str, want: str | None) -> None:
    made = "extension Cache {\n    static func make() -> Cache { Cache() }\n}\n"
    assert swift_call(made + code if ".make" in code and "func make" not in code else code, call) == want


@pytest.mark.parametrize(
    "code",
    [
        "func h(request: Request, xs: [Int]) {\n    xs.map { request in request.go() }\n}\n",
        "func h(request: Request?) {\n    if let request = request { request.go() }\n}\n",
        "func h(xs: [Request]) {\n    for request in xs { request.go() }\n}\n",
        "func h(request: Request) {\n    let (request, y) = pair\n    request.go()\n}\n",
    ],
)
def test_swift_shadowing_bindings_leave_the_name_untyped(code: str) -> None:
    assert swift_call(code, "?.go") is None  # an untyped variable: a receiver of unknown type


JAVA = {
    "src/a/Foo.java": "package a;\npublic class Foo {\n    Bar made() { return null; }\n"
    "    void go() {}\n}\n",
    "src/a/Bar.java": "package a;\npublic class Bar {\n    void run() {}\n"
    "    Foo back() { return null; }\n}\n",
    "src/a/T.java": "package a;\npublic class T {\n    void run() {}\n}\n",
}


def written(to_name: str, call: str) -> bool:
    """An edge written ``call``, or ``?.rest`` when the first name is a local the code does not
    type (Java, C#, Kotlin, Python: it never names a definition outside the function)."""
    return to_name == call or ("." in call and to_name == "?." + call.partition(".")[2])


def java_call(body: str, call: str, fields: str = "") -> str | None:
    code = f"package a;\nclass Use {{\n{fields}    <T> void m(Foo f) {{\n{body}    }}\n}}\n"
    g = graph_of({**JAVA, "src/a/Use.java": code})
    (edge,) = [
        e
        for e in g.snapshot.edges_of("src/a/Use.java")
        if e.kind is EdgeKind.CALL and written(e.to_name, call)
    ]
    r = g.resolver.resolve(edge)
    return r.symbol.qualified_name if r.symbol is not None else None


@pytest.mark.parametrize(
    ("body", "call", "want"),
    [
        ("        f.go();\n", "f.go", "Foo.go"),
        ("        var b = new Bar();\n        b.run();\n", "b.run", "Bar.run"),
        ("        Bar c = f.made();\n        c.back().go();\n", "c.back().go", "Foo.go"),
        ("        f.made().run();\n", "f.made().run", "Bar.run"),
        ("        this.foo.go();\n", "this.foo.go", "Foo.go"),
        # a generic parameter named like a class is not that class
        ("        T t = null;\n        t.run();\n", "t.run", None),
        ("        for (Bar x : xs) { }\n        Bar x = null;\n        x.run();\n", "x.run", None),
    ],
)
def test_java_declared_types_resolve_calls(body: str, call: str, want: str | None) -> None:
    assert java_call(body, call, fields="    private Foo foo;\n") == want


TS_LIB = """export class Foo {
  go(): void {}
  made(): Bar { return new Bar(); }
}
export class Bar { run(): void {} }
export function make(): Foo { return new Foo(); }
"""


def ts_call(body: str, call: str) -> str | None:
    code = (
        'import { Foo, Bar, make } from "./foo";\nexport class Use {\n  private foo: Foo;\n'
        "  constructor(private readonly bar: Bar) { this.q = new Foo(); }\n"
        f"  m<T>(f: Foo, g?: Foo | undefined, t: T) {{\n{body}  }}\n}}\n"
    )
    g = graph_of({"src/foo.ts": TS_LIB, "src/use.ts": code})
    (edge,) = [e for e in g.snapshot.edges_of("src/use.ts") if e.kind is EdgeKind.CALL and e.to_name == call]
    r = g.resolver.resolve(edge)
    return r.symbol.qualified_name if r.symbol is not None else None


@pytest.mark.parametrize(
    ("body", "call", "want"),
    [
        ("    f.go();\n", "f.go", "Foo.go"),
        ("    g.go();\n", "g.go", "Foo.go"),
        ("    const c = new Bar();\n    c.run();\n", "c.run", "Bar.run"),
        ("    const d = make();\n    d.go();\n", "d.go", "Foo.go"),
        ("    this.foo.go();\n", "this.foo.go", "Foo.go"),
        ("    this.bar.run();\n", "this.bar.run", "Bar.run"),
        ("    this.q.go();\n", "this.q.go", "Foo.go"),
        ("    f.made().run();\n", "f.made().run", "Bar.run"),
        ("    t.go();\n", "t.go", None),  # a generic parameter
        ("    xs.map(f => f.go());\n", "f.go", None),  # the arrow's `f` shadows
        ("    let c = new Bar();\n    c = other();\n    c.run();\n", "c.run", None),
    ],
)
def test_typescript_declared_types_resolve_calls(body: str, call: str, want: str | None) -> None:
    assert ts_call(body, call) == want


GO_LIB = """package srv

type Router struct{}

func (r *Router) Handle() {}

type Server struct {
	router *Router
	name   string
}

func NewServer() *Server { return &Server{} }

func Open() (*Router, error) { return nil, nil }

func (s *Server) listen() {}

type Box[T any] struct{}

func (b *Box[T]) Put() {}
"""


def go_call(body: str, call: str) -> str | None:
    code = f"package srv\n\nfunc (s *Server) Start(r *Router) {{\n{body}}}\n"
    g = graph_of({"srv/lib.go": GO_LIB, "srv/use.go": code})
    (edge,) = [e for e in g.snapshot.edges_of("srv/use.go") if e.kind is EdgeKind.CALL and e.to_name == call]
    r = g.resolver.resolve(edge)
    assert r.symbol is not None or r.candidates, call
    return r.symbol.qualified_name if r.symbol is not None else None


@pytest.mark.parametrize(
    ("body", "call", "want"),
    [
        ("\ts.listen()\n", "self.listen", "Server.listen"),
        ("\ts.router.Handle()\n", "self.router.Handle", "Router.Handle"),
        ("\tr.Handle()\n", "r.Handle", "Router.Handle"),
        ("\tvar a Router\n\ta.Handle()\n", "a.Handle", "Router.Handle"),
        ("\tb := Server{}\n\tb.listen()\n", "b.listen", "Server.listen"),
        ("\tc := &Router{}\n\tc.Handle()\n", "c.Handle", "Router.Handle"),
        ("\td := NewServer()\n\td.listen()\n", "d.listen", "Server.listen"),
        ("\te, err := Open()\n\te.Handle()\n\t_ = err\n", "e.Handle", "Router.Handle"),
        ("\tx, y := &Router{}, Server{}\n\ty.listen()\n\tx.Handle()\n", "y.listen", "Server.listen"),
        # the second result of Open is not its first
        ("\terr, e := Open()\n\te.Handle()\n\t_ = err\n", "e.Handle", None),
        # a function literal's parameter is a name of its own: the one around keeps its type
        ("\tvar g Router\n\tgo func(g *Server) {}(nil)\n\tg.Handle()\n", "g.Handle", "Router.Handle"),
        ("\tg := NewServer()\n\tgo func(g ...*Router) {}()\n\tg.listen()\n", "g.listen", "Server.listen"),
        # a range variable, an inner `:=` leave the name untyped
        ("\tfor _, f := range xs {\n\t\tf.Handle()\n\t}\n", "f.Handle", None),
        ("\tvar h Router\n\tif true {\n\t\th := Server{}\n\t\t_ = h\n\t}\n\th.Handle()\n", "h.Handle", None),
        ("\tk := pick()\n\tk.Handle()\n", "k.Handle", None),
        # a generic type's value types nothing
        ("\tm := Box[int]{}\n\tm.Put()\n", "m.Put", None),
    ],
)
def test_go_declared_types_resolve_calls(body: str, call: str, want: str | None) -> None:
    assert go_call(body, call) == want


def test_go_a_function_literal_s_parameter_types_its_uses_inside_it_only() -> None:
    # chi's `r := chi.NewRouter()` then `r.Get("/", func(w …, r *http.Request) { r.URL… })`
    body = (
        "\tg := NewServer()\n"
        "\tgo func(g *Router) {\n\t\tg.Handle()\n\t\tfunc() { g.Handle() }()\n\t}(nil)\n"
        "\tgo func(g ...*Router) {\n\t\tg.Handle()\n\t}()\n"
        "\tg.listen()\n"
    )
    code = f"package srv\n\nfunc (s *Server) Start(r *Router) {{\n{body}}}\n"
    g = graph_of({"srv/lib.go": GO_LIB, "srv/use.go": code})
    calls = {
        (e.line, e.column): g.resolver.resolve(e).symbol
        for e in g.snapshot.edges_of("srv/use.go")
        if e.kind is EdgeKind.CALL and e.to_name.endswith((".Handle", ".listen"))
    }
    got = {at: s.qualified_name if s is not None else None for at, s in calls.items()}
    # inside the first literal (and a closure in it) `g` is its *Router; inside the
    # variadic one a slice (untyped); after them the Server of `NewServer()`
    assert got == {(6, 4): "Router.Handle", (7, 13): "Router.Handle", (10, 4): None, (12, 3): "Server.listen"}


def test_an_unresolved_call_on_a_narrowed_name_is_shown_as_written() -> None:
    code = "package srv\n\nfunc Start() {\n\tgo func(g *Elsewhere) {\n\t\tg.Run()\n\t}(nil)\n}\n"
    g = graph_of({"srv/lib.go": GO_LIB, "srv/use.go": code})
    assert any("#" in e.to_name for e in g.snapshot.edges_of("srv/use.go"))  # narrowed inside
    (start,) = g.find("Start")
    assert [c.name for c in callees(g, start)] == ["g.Run"]


def test_go_an_import_of_the_module_at_the_workspace_root_names_its_folder() -> None:
    # chi: go.mod at the root says `module github.com/go-chi/chi/v5`; its examples and
    # subpackages import it by that path, and the package is named `chi`, not `v5`
    g = graph_of(
        {
            "go.mod": "module github.com/go-chi/chi/v5\n\ngo 1.20\n",
            "chi.go": "package chi\n\nfunc NewRouter() *Mux { return &Mux{} }\n",
            "mux.go": "package chi\n\ntype Mux struct{}\n\nfunc (mx *Mux) Use() {}\n",
            "middleware/nocache.go": (
                'package middleware\n\nimport "github.com/go-chi/chi/v5"\n\n'
                "func Profiler() {\n\tr := chi.NewRouter()\n\tr.Use()\n}\n"
            ),
            "middleware/go.go": (
                'package middleware\n\nimport "gopkg.in/yaml.v3"\n\nfunc Y() { yaml.Marshal() }\n'
            ),
        }
    )
    edges = {
        e.to_name: e for e in g.snapshot.edges_of("middleware/nocache.go") if e.kind is not EdgeKind.IMPORT
    }
    (chi,) = [e for e in g.snapshot.edges_of("middleware/nocache.go") if e.kind is EdgeKind.IMPORT]
    assert chi.alias == "chi"
    assert g.resolver.resolve(chi).module is not None
    made = g.resolver.resolve(edges["chi.NewRouter"]).symbol
    assert made is not None and made.qualified_name == "NewRouter"
    used = g.resolver.resolve(edges["r.Use"]).symbol
    assert used is not None and used.qualified_name == "Mux.Use"
    (yaml,) = [e for e in g.snapshot.edges_of("middleware/go.go") if e.kind is EdgeKind.IMPORT]
    assert yaml.alias == "yaml"


RUST_LIB = """pub struct Bar { n: u8 }
impl Bar {
    pub fn new() -> Bar { Bar { n: 0 } }
    pub fn create() -> Self { Bar { n: 0 } }
    pub fn with(self, n: u8) -> Self { Bar { n } }
    pub fn run(&self) {}
}
pub trait Make {
    fn made() -> Self;
    fn again(&self) -> Self { let m = Self::made(); m }
}
pub struct Foo<T> { bar: Bar, g: T }
impl<T> Foo<T> {
    pub fn go(&self) {}
}
pub fn make() -> Bar { Bar::new() }
"""


def rust_call(body: str, call: str) -> str | None:
    head = "use crate::lib::{make, Bar, Foo};\nimpl<T> Foo<T> {\n    fn m(&self, b: &mut Bar, t: T) {\n"
    code = f"{head}{body}    }}\n}}\n"
    g = graph_of({"src/lib.rs": RUST_LIB, "src/use.rs": code})
    (edge,) = [e for e in g.snapshot.edges_of("src/use.rs") if e.kind is EdgeKind.CALL and e.to_name == call]
    r = g.resolver.resolve(edge)
    assert r.symbol is not None or r.candidates, call
    return r.symbol.qualified_name if r.symbol is not None else None


@pytest.mark.parametrize(
    ("body", "call", "want"),
    [
        ("        self.bar.run();\n", "self.bar.run", "Bar.run"),
        ("        b.run();\n", "b.run", "Bar.run"),
        ("        let x: Bar = todo();\n        x.run();\n", "x.run", "Bar.run"),
        ("        let y = Bar::new();\n        y.run();\n", "y.run", "Bar.run"),
        ("        let z = Bar { n: 1 };\n        z.run();\n", "z.run", "Bar.run"),
        ("        let d = make();\n        d.run();\n", "d.run", "Bar.run"),
        # `-> Self` is the impl's type; a method of a call's result
        ("        let e = Bar::create();\n        e.run();\n", "e.run", "Bar.run"),
        ("        let f = Bar::new().with(2);\n        f.run();\n", "f.run", "Bar.run"),
        ("        let g = self.bar.with(2);\n        g.run();\n", "g.run", None),
        ("        let h = b.with(2);\n        h.run();\n", "h.run", "Bar.run"),
        # a generic parameter, a loop / closure binding of the name, an unknown value
        ("        t.run();\n", "t.run", None),
        ("        for w in v { w.run(); }\n        let w = Bar::new();\n", "w.run", None),
        ("        let c = Bar::new();\n        v.map(|c| c.run());\n", "c.run", None),
        ("        let k = pick();\n        k.run();\n", "k.run", None),
    ],
)
def test_rust_declared_types_resolve_calls(body: str, call: str, want: str | None) -> None:
    assert rust_call(body, call) == want


def test_rust_self_in_a_trait_is_no_type() -> None:
    """`-> Self` in a trait is whichever type implements it: a call on its result stays
    unresolved (with candidates), while the impl's own `-> Self` types its result."""
    code = (
        "pub struct Bar;\nimpl Bar {\n    fn made() -> Self { Bar }\n    fn run(&self) {}\n}\n"
        "pub trait Make {\n    fn made() -> Self;\n    fn run(&self);\n"
        "    fn again(&self) { Self::made().run(); }\n}\n"
        "fn f() { Bar::made().run(); }\n"
    )
    g = graph_of({"src/lib.rs": code})
    calls = {
        e.to_name: g.resolver.resolve(e) for e in g.snapshot.edges_of("src/lib.rs") if e.kind is EdgeKind.CALL
    }
    trait_call = calls["Self.made().run"]
    assert trait_call.symbol is None and trait_call.candidates
    impl_call = calls["Bar.made().run"].symbol
    assert impl_call is not None and impl_call.qualified_name == "Bar.run"


KOTLIN_LIB = """package a

class Foo {
    fun go() {}
    fun made(): Bar = Bar()
}

class Bar {
    fun run() {}
}

class T {
    fun run() {}
}

fun make(): Foo = Foo()
"""


def kotlin_call(body: str, call: str) -> str | None:
    code = (
        "package a\n\nclass Use(private val bar: Bar, plain: Foo) {\n    private val foo: Foo = Foo()\n"
        f"    var q = Foo()\n    fun <T> m(f: Foo, g: Foo?, t: T) {{\n{body}    }}\n}}\n"
    )
    g = graph_of({"src/a/Lib.kt": KOTLIN_LIB, "src/a/Use.kt": code})
    (edge,) = [
        e for e in g.snapshot.edges_of("src/a/Use.kt") if e.kind is EdgeKind.CALL and written(e.to_name, call)
    ]
    r = g.resolver.resolve(edge)
    assert r.symbol is not None or r.candidates, call
    return r.symbol.qualified_name if r.symbol is not None else None


@pytest.mark.parametrize(
    ("body", "call", "want"),
    [
        ("        f.go()\n", "f.go", "Foo.go"),
        ("        g.go()\n", "g.go", "Foo.go"),
        ("        val b = Bar()\n        b.run()\n", "b.run", "Bar.run"),
        ("        val c: Bar = f.made()\n        c.run()\n", "c.run", "Bar.run"),
        ("        val d = f.made()\n        d.run()\n", "d.run", "Bar.run"),
        ("        val e = make()\n        e.go()\n", "e.go", "Foo.go"),
        ("        var h: Foo? = null\n        h.go()\n", "h.go", "Foo.go"),
        ("        this.foo.go()\n", "this.foo.go", "Foo.go"),
        ("        this.bar.run()\n", "this.bar.run", "Bar.run"),
        ("        this.q.go()\n", "this.q.go", "Foo.go"),
        ("        f.made().run()\n", "f.made().run", "Bar.run"),
        # a generic parameter, a lambda's / loop's / destructured name, an unknown value
        ("        t.run()\n", "t.run", None),
        ("        xs.map { f -> f.go() }\n", "f.go", None),
        ("        for (b in xs) { b.run() }\n        val b = Bar()\n", "b.run", None),
        ("        val (k, l) = pair\n        k.run()\n", "k.run", None),
        ("        val n by lazy { Bar() }\n        n.run()\n", "n.run", None),
        ("        val o = pick()\n        o.run()\n", "o.run", None),
    ],
)
def test_kotlin_declared_types_resolve_calls(body: str, call: str, want: str | None) -> None:
    assert kotlin_call(body, call) == want


CSHARP_LIB = """namespace A {
    public class Foo {
        public void Go() {}
        public Bar Made() { return new Bar(); }
        public static Foo Make() { return new Foo(); }
    }
    public class Bar {
        public void Run() {}
    }
    public class T {
        public void Run() {}
    }
}
"""


def csharp_call(body: str, call: str) -> str | None:
    code = (
        "namespace A {\n    class Use {\n        private Foo foo;\n        Bar Prop { get; set; }\n"
        f"        void M<T>(Foo f, Foo? g, T t) {{\n{body}        }}\n    }}\n}}\n"
    )
    g = graph_of({"src/Lib.cs": CSHARP_LIB, "src/Use.cs": code})
    (edge,) = [
        e for e in g.snapshot.edges_of("src/Use.cs") if e.kind is EdgeKind.CALL and written(e.to_name, call)
    ]
    r = g.resolver.resolve(edge)
    assert r.symbol is not None or r.candidates, call
    return r.symbol.qualified_name if r.symbol is not None else None


@pytest.mark.parametrize(
    ("body", "call", "want"),
    [
        ("            f.Go();\n", "f.Go", "A.Foo.Go"),
        ("            g.Go();\n", "g.Go", "A.Foo.Go"),
        ("            var b = new Bar();\n            b.Run();\n", "b.Run", "A.Bar.Run"),
        ("            Bar c = f.Made();\n            c.Run();\n", "c.Run", "A.Bar.Run"),
        ("            var d = f.Made();\n            d.Run();\n", "d.Run", "A.Bar.Run"),
        ("            var e = Foo.Make();\n            e.Go();\n", "e.Go", "A.Foo.Go"),
        ("            Foo h = null;\n            h.Go();\n", "h.Go", "A.Foo.Go"),
        ("            this.foo.Go();\n", "this.foo.Go", "A.Foo.Go"),
        ("            this.Prop.Run();\n", "this.Prop.Run", "A.Bar.Run"),
        ("            f.Made().Run();\n", "f.Made().Run", "A.Bar.Run"),
        # a generic parameter, lambda / foreach / pattern / out variables, an unknown value
        ("            t.Run();\n", "t.Run", None),
        ("            xs.Select(f => f.Go());\n", "f.Go", None),
        ("            foreach (var k in xs) { k.Run(); }\n            var k = new Bar();\n", "k.Run", None),
        ("            if (o is Bar p) { p.Run(); }\n", "p.Run", None),
        ("            Parse(out var q);\n            q.Run();\n", "q.Run", None),
        ("            var o = Pick();\n            o.Run();\n", "o.Run", None),
    ],
)
def test_csharp_declared_types_resolve_calls(body: str, call: str, want: str | None) -> None:
    assert csharp_call(body, call) == want


@pytest.mark.parametrize(
    ("path", "code", "caller", "other"),
    [
        (
            "m.go",
            "package m\nfunc start(x int) int { return x }\n"
            "func run(start func(int) int) int { return start(1) }\n"
            "func other() int { return start(2) }\n"
            "func lit() { f := func(start func()) { start() }; f(nil) }\n",
            "run",
            "other",
        ),
        (
            "r.rs",
            "fn start(x: i32) -> i32 { x }\nfn run(start: fn(i32) -> i32) -> i32 { start(1) }\n"
            "fn other() -> i32 { start(2) }\n",
            "run",
            "other",
        ),
        (
            "t.ts",
            "function start(x: number) { return x }\n"
            "function run(start: (n: number) => number) { return start(1) }\n"
            "function other(f: (start: number) => number) { return start(2) }\n",
            "run",
            "other",
        ),
        (
            "B.kt",
            "class Job {\n    fun start(block: () -> Unit) { block() }\n"
            "    fun launch(start: (Int) -> Unit) { start(1) }\n    fun go() { start({}) }\n}\n",
            "Job.launch",
            "Job.go",
        ),
        (
            "C.cs",
            "using System;\nclass Job {\n    void start(int x) {}\n"
            "    void Launch(Action<int> start) { start(1); }\n    void Go() { start(2); }\n}\n",
            "Job.Launch",
            "Job.Go",
        ),
    ],
)
def test_a_call_of_a_parameter_is_not_a_function_of_that_name(
    path: str, code: str, caller: str, other: str
) -> None:
    """``start(1)`` inside ``run(start: …)`` calls what was passed: unresolved, with the
    functions named ``start`` as candidates; a call of ``start`` where no parameter is so
    named (a function type's own parameter names nothing) still finds the function."""
    g = graph_of({path: code})
    calls = [e for e in g.snapshot.edges_of(path) if e.kind is EdgeKind.CALL and e.last_name == "start"]
    by_caller = {e.from_symbol: g.resolver.resolve(e) for e in calls}
    passed = by_caller[caller]
    assert passed.symbol is None
    assert [s.name for s in passed.candidates] == ["start"]
    named = by_caller[other].symbol
    assert named is not None and named.name == "start"
    assert all(r.symbol is None for scope, r in by_caller.items() if scope.endswith("lit"))


def test_kotlin_a_parameter_of_a_class_type_is_called_only_through_its_invoke() -> None:
    """``flow { … }`` beside a parameter ``flow: Flow<T>`` calls the function ``flow`` (a
    class-typed parameter is callable only through an ``operator fun invoke``); a nullable
    function type and a function-typed parameter with a receiver are called themselves."""
    code = (
        "class Flow<T>\nfun <T> flow(block: () -> Unit): Flow<T> = Flow()\n"
        "fun <T> combine(flow: Flow<T>): Flow<T> = flow { }\n"
        "fun <T> maybe(flow: (() -> Unit)?) { flow() }\n"
        "fun <T> each(flow: suspend Flow<T>.(value: T) -> Unit) { flow(1) }\n"
    )
    g = graph_of({"F.kt": code})
    calls = {
        e.from_symbol: g.resolver.resolve(e) for e in g.snapshot.edges_of("F.kt") if e.last_name == "flow"
    }
    combined = calls["combine"].symbol
    assert combined is not None and combined.qualified_name == "flow"
    assert calls["maybe"].symbol is None and calls["each"].symbol is None


def test_kotlin_a_call_of_a_typed_name_whose_class_has_invoke_runs_invoke() -> None:
    """``start(block)`` inside ``fun start(start: CoroutineStart, …)`` runs
    ``CoroutineStart.invoke``, not the function itself; a class without ``invoke`` leaves
    the call to the function of that name."""
    code = (
        "enum class CoroutineStart { DEFAULT; operator fun invoke(block: () -> Unit) {} }\n"
        "class Plain\nfun plain(x: Int) {}\n"
        "class Job {\n    fun start(start: CoroutineStart, block: () -> Unit) {\n"
        "        start(block)\n    }\n"
        "    fun other(plain: Plain) { plain(1) }\n}\n"
    )
    g = graph_of({"J.kt": code})
    calls = {
        e.last_name: g.resolver.resolve(e) for e in g.snapshot.edges_of("J.kt") if e.kind is EdgeKind.CALL
    }
    started, planned = calls["start"].symbol, calls["plain"].symbol
    assert started is not None and started.qualified_name == "CoroutineStart.invoke"
    assert planned is not None and planned.qualified_name == "plain"

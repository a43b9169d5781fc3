"""What type a local name or attribute holds, where the code states it (Python).

The graph resolves ``ctx.invoke`` only when it knows what ``ctx`` is. The parser
reads it from the code and never guesses: a name is typed when every binding of
it in its scope says the same thing —

* an annotation (``ctx: Context``, ``x: Optional[Foo] = None``, ``-> Foo``): the
  declared type wins over assignments of calls, as for a type checker;
* otherwise every assignment is a call of the same callee (``x = Foo(…)``,
  ``x = self.make()``) or ``None``: the callee's result (a class → its instance,
  a function → its return annotation, resolved at query time);
* ``with Foo() as x``: what ``Foo().__enter__`` is annotated to return;
* a module-level alias (``Charset = _charset.Charset``, the only binding of the
  name): the name is that class or function itself;
* an unannotated parameter's default, as pyright infers it (``c=Context()``,
  ``c=make()``, a module-level variable written as a name, here or imported:
  ``policy=compat32``, a ``holds:`` mark): what that value is — ``None``, anything
  else, or any default in a method of a class with bases that may define the method
  (pyright takes a base method's annotation first; bases of the same module that do not
  define it, up to ``object``, are no such bases) types nothing; a ``None`` default
  replaced by a guard (``if x is None: x = value`` or ``if not x:``, every other read of
  ``x`` after it in its block) is typed as ``x=value`` would be;
* a parameter converted by a guard at the top of the body (``if not isinstance(x,
  C): x = C(x)``, no ``else``, no ``x.m`` before it): the conversion's ``C``;
* a copy of a typed name of the same scope (``self.ctx = ctx``, ``x = c``): what
  that name is (a value of the declared type, which does not win over other values);
  each target of a chained assignment (``a = b = f()``) holds the value;
* ``x = cast(Foo, v)``: a ``Foo`` value;
* a loop variable (``for p in …`` or a comprehension's clause) over a call whose
  return annotation says its items (``-> list[Foo]``, ``Iterator[Foo]``,
  ``tuple[Foo, ...]``…), over a name or ``self`` attribute annotated so: ``Foo``.
  What iterating a name gives is kept under ``name[]`` and any binding of the name
  that does not state it leaves it untyped.

What a caller passes an unannotated parameter (no default, or a ``None`` one) and
copies of it (``self.h = h``) are values the code does not type: they add no type and
stop none — a name whose other values are all of one class holds it (``self.h =
Handler()`` in ``__init__`` beside ``self.h = h`` in a setter: a ``Handler``, as
pyright reads ``Handler | Unknown``); a name with no other value stays untyped. Before the
statement that binds the stated value (and right after ``self.h = h``) the name is the
caller's value only: untyped there. A function testing the name against another class
(``isinstance(x, D)``) states that class too: untyped.

Any other binding of the name in the scope (a loop over anything else, a tuple
unpacking, ``*args``, a literal default, ``+=``, a walrus, an import, a nested
``def``, a lambda variable, ``except … as``, a call of something else) leaves it
untyped — except that a local whose values are of several classes (``x = A()`` in one
branch, ``B()`` in another; marks ``x|``), or a function whose returns are (``return|``),
lets the resolver type ``x.m`` / ``h = f(); h.m`` when every class has the same ``m``.
Attributes (``self.x = Foo()``, a class-body ``x: Foo``) are pooled per
class over all its methods; a class that binds no attribute ``x`` has the one base
in the same file that binds it, or (read by the graph, through each file's record of
what its classes bind, :attr:`Marks.bound_attributes`) what its bases in any file bind
it to, when all that do agree on one class. Module-level names count only when no other scope
in the file binds the same name; such a name is read from other files too (``from m
import default``, ``m.default.run()``).

The answer marks existing edges: the call or type reference edge at the
callee / annotation gets ``alias`` = the bound names, ``;``-separated when one
edge types several (``ctx;self.ctx``), ``scope>name`` for a name of another
scope than the edge's (a loop in ``C.run`` over an attribute typed in
``__init__``); ``return`` / ``return[]`` for a function's return type / its items;
prefixed ``with:`` for a ``with`` target, ``in:`` for a loop over a call, ``holds:`` for a
parameter's default written as a variable's name and a function's ``x = mod.var``;
``name@1`` for item 1 of a call's declared tuple and ``return#1`` for that item's
annotation. Edges keep their meaning; the resolver reads the marks.

This module holds what every binder shares (the marks, :class:`Collector`, the rule
that decides when bindings agree); each language's binder is a module of its own:
:mod:`.python_bindings`, :mod:`.java_bindings`, :mod:`.typescript_bindings`,
:mod:`.go_bindings`, :mod:`.rust_bindings`, :mod:`.swift_bindings`,
:mod:`.kotlin_bindings`, :mod:`.csharp_bindings`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass

from tree_sitter import Node, Query, QueryCursor

from .. import grammars
from .base import node_text

Point = tuple[int, int]


class Marks(dict[tuple[int, int], str]):
    """The end point (row, byte column) of a callee / annotation node → the bound name;
    and what the edges need to know of the names a function binds as variables:
    ``variables`` (scope → the names a parameter, assignment, loop, pattern… binds in that
    function: they shadow any definition of the same name outside it), ``typed`` (the
    (scope, name) of those whose type the marks state) and ``members`` (the end points of
    bare names that are members, never a variable: Swift's ``.range(…)``) and
    ``parameters`` (scope → the names of the function's own parameters: a bare call of one,
    ``start(1)``, calls what was passed, never a function of that name)."""

    def __init__(self) -> None:
        super().__init__()
        self.variables: dict[str, set[str]] = {}
        self.typed: set[tuple[str, str]] = set()
        self.members: set[tuple[int, int]] = set()  # end points of names read as members, not variables
        self.parameters: dict[str, set[str]] = {}
        # where an `isinstance` test narrows a name: (block start, block end, name, the name
        # the narrowed uses take: `x#12c4`, bound to the tested class) and the nested
        # functions inside that block, where it does not hold (they run later)
        self.narrowed: list[tuple[Point, Point, str, str]] = []
        self.unnarrowed: list[tuple[Point, Point]] = []
        # Python: each class of the file → the attributes its body and methods bind, typed or
        # not (a class reads the attributes of its bases in other files only when it binds none
        # of that name itself: see ``graph/bound.py``); written on the file's inherit edges
        self.bound_attributes: dict[str, list[str]] = {}


RETURN = "return"
ITEMS = "[]"  # suffix: what iterating the name gives (`return[]`, `params[]`, `self.params[]`)
IN = "in:"  # a loop variable over a call: `for p in self.get_params()` — an item of its result
SEPARATOR = ";"  # between the names one edge's mark binds (`ctx;self.ctx`)
WITH = "with:"
IS = "is:"  # a module-level alias: `Charset = _charset.Charset` names that class itself
# a parameter's default written as a name (`policy=compat32`): what the name holds (the
# reference edge at the name resolves to a module-level variable, here or imported)
HOLDS = "holds:"
# the alias of a Python file's inherit edges: the attributes each class of the file binds
# (`ATTRIBUTES` + `C=a,b;D=c`, in parts; a class binding none is left out)
ATTRIBUTES = "attrs:"
PART = "@"  # a label's suffix: `cmd@1` is the item 1 of the marked call's tuple result
RETURN_PART = "#"  # `return#1`: the item 1 of a function's declared tuple result
# suffix: what calling the name gives, when the name holds a class (`k: type[Foo]`, a class
# body's `maker = Foo`, `k = f()` with `f() -> type[Foo]`): an instance of it; `return()`
CALLED = "()"
VALUES = "{}"  # suffix: a mapping's values (`d{}` of `d: dict[str, Foo]`)
# suffix: one of the values a local's bindings give, when they disagree (`x = A()` / `x = B()`
# in two branches): `x.m` is known when every one of them has the same `m`
ONE_OF = "|"
# a narrowed name: `x#12c4`, the name `x` inside the block (an `isinstance` test's, a Go
# function literal's) that starts at row 12, column 4
_NARROWED = re.compile(r"#[0-9]+c[0-9]+")
# Swift's `$0` of an SDK closure, written through its receiver: `self.storage{withLock$0}.m`
_CLOSURE_ARGUMENT = re.compile(r"^[^{]*\{[A-Za-z0-9_]+(\$[0-9]+)\}")


# the longest alias a record part takes: LanceDB (storage 2.2) reads a fragment holding a
# string of ~30 kB in the alias column 100-300 times slower (the stdlib's edges: 0.06 → 1.6 s)
RECORD_PART = 4000


def attributes_records(bound: dict[str, list[str]], parts: int) -> list[str] | None:
    """:attr:`Marks.bound_attributes` as aliases for ``parts`` inherit edges, each at most
    :data:`RECORD_PART` long, a class's entry whole in one (``attrs:C=a,b;D=c``; a class
    binding none is left out, an empty record is ``attrs:``); None when they do not fit."""
    out: list[str] = []
    part = ATTRIBUTES
    for cls, names in sorted(bound.items()):
        entry = f"{cls}={','.join(names)}"
        if len(ATTRIBUTES) + len(entry) > RECORD_PART:
            return None
        if len(part) + len(SEPARATOR) + len(entry) > RECORD_PART:
            out.append(part)
            part = ATTRIBUTES
        part += (SEPARATOR if part != ATTRIBUTES else "") + entry
    out.append(part)
    return out if len(out) <= parts else None


def read_attributes_record(aliases: list[str]) -> dict[str, frozenset[str]]:
    """:func:`attributes_records` read back: class → the attribute names it binds."""
    out: dict[str, frozenset[str]] = {}
    for alias in aliases:
        for entry in alias.removeprefix(ATTRIBUTES).split(SEPARATOR):
            cls, _, names = entry.partition("=")
            if cls:
                out[cls] = frozenset(names.split(",")) if names else frozenset()
    return out


def narrowed_name(name: str, at: Point) -> str:
    """The name ``name`` takes inside the block that starts at ``at`` (row, column)."""
    return f"{name}#{at[0]}c{at[1]}"


def as_written(name: str) -> str:
    """A call's name as the code writes it: ``x#12c4.m`` → ``x.m``,
    ``self.storage{withLock$0}.m`` → ``$0.m``."""
    if "{" in name:
        name = _CLOSURE_ARGUMENT.sub(r"\1", name)
    return _NARROWED.sub("", name) if "#" in name else name


_compiled: dict[tuple[str, str], Query] = {}


def compiled_query(language: str, text: str) -> Query:
    """The binding query ``text`` for ``language``, compiled on first use and kept."""
    query = _compiled.get((language, text))
    if query is None:
        query = _compiled[(language, text)] = Query(grammars.language(language), text)
    return query


def captures_in_order(query: Query, root: Node) -> list[tuple[str, list[Node]]]:
    """``query``'s captures in ``root`` in an order fixed by the source alone: each
    capture's nodes in document order, the captures by where their first node starts.
    Tree-sitter's own order of the nodes of one capture is not document order and changes
    with what the process parsed before, so two runs over the same files bound names in
    different orders and wrote different edges (an index must not depend on that)."""
    found = QueryCursor(query).captures(root)
    groups = [(sorted(nodes, key=_span), capture) for capture, nodes in found.items() if nodes]
    groups.sort(key=lambda group: (_span(group[0][0]), group[1]))
    return [(capture, nodes) for nodes, capture in groups]


def _span(node: Node) -> tuple[int, int]:
    return node.start_byte, node.end_byte


def captures(query: Query, root: Node) -> Iterator[tuple[str, Node]]:
    """Every (capture name, node) of ``query`` in ``root``, capture by capture, in the
    order :func:`captures_in_order` fixes."""
    for capture, nodes in captures_in_order(query, root):
        for node in nodes:
            yield capture, node


@dataclass(frozen=True, slots=True)
class _Binding:
    # "ann", "call", "with", "is", "in", "holds", "none", "unknown", "copy", "val" (a copied "ann"),
    # "self" (`return self`: the receiver)
    how: str
    node: Node | None = None  # the annotation's type name / the callee / a copy's source name
    scope: str = ""  # a copy's: the scope its source name is bound in ("attr:C": C's attribute)
    suffix: str = ""  # a copy's: "" for the source name itself, ITEMS for what iterating it gives

    @property
    def text(self) -> str:
        return node_text(self.node)


_UNKNOWN = _Binding("unknown")
# untyped, and no variable: a nested `def` / `class` or an import (the resolver finds those
# itself), a `global` declaration (the name is the module's)
_DEFINED = _Binding("unknown", scope="def")
_GLOBAL = _Binding("unknown", scope="global")
_NONE = _Binding("none")
# a value the code does not type: what a caller passes an unannotated parameter (no default or
# a `None` one), and copies of it. It adds no type and does not stop a stated one: a name
# whose other values are all of one class `C` holds a `C` (pyright's `C | Unknown`) — `C`'s
# method runs whenever that value is there; a name with no other value stays untyped
_PASSED = _Binding("passed")
_UNTYPED = frozenset({"none", "passed"})  # values that leave the other bindings to type a name
_ELSEWHERE = "*"  # a copied binding whose node is in another scope than the name it types
Found = dict[tuple[str, str, str], list[_Binding]]


def _own_scope(scope: str, name: Node | None) -> bool:
    """Whether a definition is the scope its code is credited to: a function nested in
    another (or a method of an anonymous class) is not, and its return type is not the
    outer one's."""
    return name is not None and scope.rsplit(".", 1)[-1] == node_text(name)


def _type_parameter(node: Node) -> list[str]:
    """The name a generic parameter declares (``T`` of ``<T: P>`` / ``<T extends P>``)."""
    first = next((c for c in node.named_children if c.type in ("type_identifier", "identifier")), None)
    return [node_text(first)] if first is not None else []


def _without_generics(
    found: dict[tuple[str, str, str], list[_Binding]], generics: set[str]
) -> dict[tuple[str, str, str], list[_Binding]]:
    """A type written as a generic parameter's name (anywhere in the file) types nothing:
    ``T`` is whatever the caller says, never a class of that name."""
    if not generics:
        return found
    out: dict[tuple[str, str, str], list[_Binding]] = {}
    for key, bindings in found.items():
        out[key] = [_UNKNOWN if b.how == "ann" and b.text.split(".")[0] in generics else b for b in bindings]
    return out


def _decide(found: dict[tuple[str, str, str], list[_Binding]], elsewhere: set[str]) -> Marks:
    marks = Marks()
    labels: dict[tuple[int, int], tuple[str, list[str]]] = {}
    for (kind, scope, name), bindings in found.items():
        if kind == "local" and not scope and _base_name(name) in elsewhere:
            continue
        derived = name.endswith((ITEMS, CALLED, VALUES))
        variable = kind == "local" and scope and not derived and _variable(bindings)
        if variable:
            marks.variables.setdefault(scope, set()).add(name)
        chosen = _agreed(_copied(found, bindings, set()))
        if not chosen and variable:
            one_of = bool(chosen := _one_of(_copied(found, bindings, set())))
        elif not chosen and kind == RETURN and not name:  # `return c`: every value `c` may hold
            one_of = bool(chosen := _one_of(_spread(found, bindings, set())))
        else:
            one_of = False
        if not chosen:
            continue
        if variable or (kind == "local" and scope and name.endswith(CALLED)):
            marks.typed.add((scope, name))
        label = RETURN + name if kind == RETURN else f"self.{name}" if kind == "attr" else name
        label += ONE_OF if one_of else ""
        for b in chosen:
            assert b.node is not None
            # `cmd@1`: the item 1 of the call's result (`in:` marks: of each item it gives)
            part = b.suffix if b.how in ("part", "in") else ""
            prefix = _PREFIXES.get(b.how, "")
            # a type stated in another scope (an attribute's items in a method's loop): the
            # label says whose name it binds, `C.run>param`
            named = f"{scope}>{label}" if b.scope == _ELSEWHERE else label
            named += part
            at = (b.node.end_point.row, b.node.end_point.column)
            first, names = labels.setdefault(at, (prefix, []))
            if first != prefix or named in names:
                continue  # one edge, two kinds of binding: keep the first (and each name once)
            names.append(named)
            marks[at] = prefix + SEPARATOR.join(names)
    return marks


_PREFIXES = {"with": WITH, "is": IS, "in": IN, "holds": HOLDS}


def _base_name(name: str) -> str:
    """The name a derived binding is of: ``x`` of ``x[]``, ``x()``, ``x{}``."""
    return name[:-2] if name.endswith((ITEMS, CALLED, VALUES)) else name


def _variable(bindings: list[_Binding]) -> bool:
    """Whether a function's bindings of a name make it a variable of that function: some
    binding is one (not only a nested definition or an import) and none says ``global``."""
    return all(b is not _GLOBAL for b in bindings) and any(b is not _DEFINED for b in bindings)


def _copied(found: Found, bindings: list[_Binding], seen: set[tuple[str, str, str]]) -> list[_Binding]:
    """``bindings`` with each copy (``self.ctx = ctx``, ``x = y``) replaced by what its
    source name is bound to in the same scope, when those bindings agree; a copy of an
    untyped name (or of itself) is untyped."""
    if all(b.how != "copy" for b in bindings):
        return bindings
    out: list[_Binding] = []
    for b in bindings:
        if b.how != "copy":
            out.append(b)
            continue
        kind, _, where = b.scope.rpartition(":")  # "attr:C" for a class's attribute
        key = (kind or "local", where, b.text + b.suffix)
        source = found.get(key) if key not in seen else None
        spread = _copied(found, source, seen | {key}) if source else []
        agreed = _agreed(spread)
        # a value of the declared type, not a declaration: it does not win over other values
        # (a copy of a copy of another scope's name is bound there too: `doc = self.document;
        # return doc` types the function's result through the attribute's edge)
        copies = [
            _Binding(
                "val" if a.how == "ann" else a.how,
                a.node,
                _ELSEWHERE if kind or a.scope == _ELSEWHERE else "",
            )
            for a in agreed
        ]
        passed = any(a.how == "passed" for a in spread) and all(a.how in _UNTYPED for a in spread)
        out.extend(copies or [_PASSED if passed else _UNKNOWN])  # `self.h = handler`: passed on
    return out


def _spread(found: Found, bindings: list[_Binding], seen: set[tuple[str, str, str]]) -> list[_Binding]:
    """``bindings`` with each copy of a name of the same scope (``return c``) replaced by
    every binding of that name (copies spread in turn): the values it may hold. A copy of
    another scope's name, of an item or of itself stays a copy (which no rule accepts)."""
    out: list[_Binding] = []
    for b in bindings:
        key = ("local", b.scope, b.text)
        source = found.get(key) if b.how == "copy" and ":" not in b.scope and not b.suffix else None
        if source is None or key in seen:
            out.append(b)
            continue
        # a value of the declared type, not a declaration (as `_copied` makes it)
        out += [
            _Binding("val", a.node) if a.how == "ann" else a for a in _spread(found, source, seen | {key})
        ]
    return out


def _agreed(bindings: list[_Binding]) -> list[_Binding]:
    """The bindings that type a name, or none when they do not agree (or one is unknown)."""
    if any(b.how == "unknown" for b in bindings):
        return []  # a loop / lambda / comprehension / closure variable, a nested def's parameter…
    declared = [b for b in bindings if b.how == "ann"]
    if declared:
        return declared if len({b.text for b in declared}) == 1 else []
    calls = [b for b in bindings if b.how not in _UNTYPED]
    if not calls or len({(b.how, b.text, b.suffix) for b in calls}) != 1:
        return []
    return calls


def _one_of(bindings: list[_Binding]) -> list[_Binding]:
    """The calls of a name whose calls disagree (every binding a call's result, a value of a
    class or ``None``, at least two callees): the resolver types ``x.m`` when all of them
    have the same ``m``. Anything else (an unknown, an annotation, a loop): none."""
    if any(b.how not in ("call", "val", "none", "passed") for b in bindings):
        return []
    calls = [b for b in bindings if b.how not in _UNTYPED]
    return calls if len({(b.how, b.text) for b in calls}) > 1 else []


def annotated(target: Node | None) -> _Binding:
    """A declared type's binding: its name, or untyped when it names no class."""
    return _Binding("ann", target) if target is not None else _UNKNOWN


def value_after_equals(node: Node) -> Node | None:
    """The value after ``=`` in a declaration whose grammar gives it no field."""
    after = False
    for c in node.children:
        if c.type == "=":
            after = True
        elif after and c.is_named:
            return c
    return None


class Collector:
    """One file's bindings as a binder finds them: ``found`` per (kind, scope, name), the
    names bound in a scope other than the module's (``elsewhere``) and the generic
    parameters' names (``generics``); :meth:`marks` turns them into marks. A name bound
    in one of ``classes`` is that class's attribute, any other a local."""

    def __init__(self, classes: Collection[str] = ()) -> None:
        self.classes = classes
        self.found: Found = defaultdict(list)
        self.elsewhere: set[str] = set()
        self.generics: set[str] = set()
        self.members: set[tuple[int, int]] = set()
        self.parameters: dict[str, set[str]] = defaultdict(set)

    def bind(self, scope: str, name: str, b: _Binding) -> None:
        key = ("attr", scope, name) if scope in self.classes else ("local", scope, name)
        self.found[key].append(b)
        if scope:
            self.elsewhere.add(name)

    def parameter(self, scope: str, name: str, b: _Binding) -> None:
        """A parameter of the function ``scope``: bound, and a bare call of it is its value."""
        self.bind(scope, name, b)
        if scope:
            self.parameters[scope].add(name)

    def unknown(self, scope: str, names: Iterable[str]) -> None:
        """Names a binding leaves untyped (a loop, lambda, pattern variable…)."""
        for name in names:
            self.bind(scope, name, _UNKNOWN)

    def attribute(self, owner: str, name: str, b: _Binding) -> None:
        """A binding of ``owner``'s attribute from outside its body (a field, ``this.x``)."""
        self.found[("attr", owner, name)].append(b)

    def returns(self, scope: str, name: Node | None, target: Node | None) -> None:
        """A function's declared return type, when the function is its own scope."""
        if target is not None and _own_scope(scope, name):
            self.found[(RETURN, scope, "")].append(_Binding("ann", target))

    def marks(self, rule: Callable[[Found], Found] | None = None) -> Marks:
        """The marks: generic parameters type nothing, then the language's ``rule``."""
        found = _without_generics(self.found, self.generics)
        marks = _decide(rule(found) if rule is not None else found, self.elsewhere)
        marks.members = self.members
        marks.parameters = dict(self.parameters)
        return marks


def identifiers_in(node: Node, names: Collection[str], skip: Collection[str] = ()) -> list[str]:
    """The names a binding pattern binds: ``node`` itself when it is one of ``names``,
    else every such node below it, not looking inside node types in ``skip``."""
    if node.type in names:
        return [node_text(node)]
    out: list[str] = []
    stack = [node]
    while stack:
        n = stack.pop()
        for c in n.named_children:
            if c.type in names:
                out.append(node_text(c))
            elif c.type not in skip:
                stack.append(c)
    return out

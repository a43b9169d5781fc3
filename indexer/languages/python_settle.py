"""How the Python bindings found in one file are settled before they become marks.

:func:`.python_bindings.python_marks` walks the tree and collects every binding of every
name (``Found``); these passes then adjust what was collected, each on its own rule, before
:func:`.bindings._decide` reads it: a copy made inside an ``isinstance`` block copies the
narrowed name; a declaration wins over plain reassignments of its own function; a nested
``def``'s declaration types no outer variable; a method's default or ``x = a.b`` that reads a
variable is untyped; ``fix = self._fix`` calls the method; derived bindings (``name()``,
``name{}``) are kept only where they say something; a class inherits the attributes its one
base in the file binds.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection

from tree_sitter import Node

from .base import node_text
from .bindings import (
    _DEFINED,
    _ELSEWHERE,
    _UNKNOWN,
    CALLED,
    ITEMS,
    VALUES,
    Found,
    _agreed,
    _Binding,
    _copied,
    _variable,
)

# bindings that may state a class: an annotation, a class alias, a name a `None` default's
# guard puts in (`if cls is None: cls = JSONEncoder`)
# bindings that may state a class: an annotation, a class alias, a name a `None` default's
# guard puts in (`if cls is None: cls = JSONEncoder`)
_STATING = frozenset({"ann", "val", "holds"})


def _copies_narrowed(found: Found, tests: list[tuple[str, int, int, str, str]]) -> None:
    """A copy made inside an ``if isinstance(x, C):`` block of its function (``other = x``),
    before any statement there binds ``x`` again, copies the narrowed ``x``: a ``C`` (see
    :func:`.python_narrowing._isinstance_tests`; of nested tests, the innermost). A copy in a
    function nested there has another scope (it runs later): unchanged."""
    if not tests:
        return
    for bindings in found.values():
        for i, b in enumerate(bindings):
            if b.how != "copy" or b.node is None or ":" in b.scope or b.scope == _ELSEWHERE:
                continue
            at = b.node.start_byte
            around = [
                (start, narrowed)
                for scope, start, end, tested, narrowed in tests
                if b.scope == scope and b.text == tested and start <= at < end and not _made_in(b.node, start)
            ]
            if around:  # the innermost test's block
                narrowed = max(around)[1]
                bindings[i] = _Binding("copy", b.node, b.scope, narrowed[len(b.text) :] + b.suffix)


def _made_in(node: Node, start: int) -> bool:
    """Whether ``node`` is inside a function, lambda or class that starts at or after
    ``start`` (a nested ``def`` is no symbol, so its code shares the outer scope's name)."""
    parent = node.parent
    while parent is not None and parent.start_byte >= start:
        if parent.type in ("function_definition", "lambda", "class_definition"):
            return True
        parent = parent.parent
    return False


def _tested_elsewhere(found: Found, tested: dict[tuple[str, str], set[str]]) -> None:
    """A name that holds a caller's value beside one stated class ``C`` holds a ``C``
    (:data:`.bindings._PASSED`) — unless the function tests it against another class
    (``isinstance(x, D)``, as spelled): then the code states two classes for what the name may
    hold (``if not isinstance(c, D): c = C(c)`` leaves a ``D`` or a ``C``), and it is untyped."""
    for (scope, name), classes in tested.items():
        bindings = found.get(("local", scope, name), [])
        values = _copied(found, bindings, set())
        if not any(b.how == "passed" for b in values):
            continue
        chosen = _agreed(values)
        if chosen and any(c != chosen[0].text for c in classes):
            bindings.append(_UNKNOWN)


def _declared_wins(found: Found, reassigned: list[tuple[tuple[str, str, str], int, Node]]) -> None:
    """A name its scope declares (``ctx: Context`` as a parameter, ``self.params: list[P] =
    …``) keeps that type over the plain assignments of the same scope (``ctx = ctx.parent``,
    ``x = o``), whatever they assign: a type checker holds every assignment to the
    declaration (and types an untyped value as the declared type), as it does for calls of
    other callees, where the annotation already wins. Only the name itself: what iterating
    or calling it gives stays as those assignments leave it. A loop, ``with``, ``except``, a
    comprehension's or a nested function's binding is not such an assignment (in Python a
    comprehension's variable is a name of its own): it still leaves the name untyped; nor is
    an assignment in another function than the declaration (a nested ``def`` is no symbol:
    its names share the scope of the function around it)."""
    by_key: dict[tuple[str, str, str], list[tuple[int, Node]]] = defaultdict(list)
    for key, i, target in reassigned:
        by_key[key].append((i, target))
    for key, spots in by_key.items():
        bindings = found.get(key, [])
        declared = [b.node for b in bindings if b.how == "ann" and b.node is not None]
        if not declared:
            continue
        homes = {_function_around(n) for n in declared}
        dropped = {
            i
            for i, target in spots
            if key[0] == "attr" or (len(homes) == 1 and _function_around(target) in homes)
        }
        found[key] = [b for i, b in enumerate(bindings) if i not in dropped or b.how == "ann"]


def _declared_here_only(found: Found) -> None:
    """A function's name declared in one function and bound by a value in another (an
    annotated parameter of a nested ``def``, which is no symbol and so shares the scope of the
    function around it, and ``a = stuff.x`` there): two variables under one key, and the
    annotation types neither — the outer one holds that value, not the declared type."""
    for (kind, scope, name), bindings in found.items():
        if kind != "local" or not scope or name.endswith((ITEMS, CALLED, VALUES)):
            continue
        homes = {_function_around(b.node) for b in bindings if b.how == "ann" and b.node is not None}
        if homes and any(
            b.how != "ann" and b.node is not None and _function_around(b.node) not in homes for b in bindings
        ):
            bindings.append(_UNKNOWN)


def _function_around(node: Node) -> tuple[int, int] | None:
    """The span of the innermost function, lambda or class around ``node`` (None: the module)."""
    parent = node.parent
    while parent is not None:
        if parent.type in ("function_definition", "lambda", "class_definition"):
            return (parent.start_byte, parent.end_byte)
        parent = parent.parent
    return None


def _called_methods(
    found: Found, lazy: Found, methods_read: list[tuple[str, str, Node]], methods: set[tuple[str, str]]
) -> None:
    """``fix = self._fix`` where the class defines ``_fix`` as a method and binds no
    attribute of that name: calling ``fix`` calls that method (a reference edge at
    ``self._fix``), not what an attribute ``_fix`` holds."""
    for scope, name, right in methods_read:
        attr = right.child_by_field_name("attribute")
        owner = scope.rpartition(".")[0]
        member = node_text(attr) if attr is not None else ""
        bound = found.get(("attr", owner, member), [])  # its `def` (or nothing), else an attribute
        if attr is None or (owner, member) not in methods or any(b is not _DEFINED for b in bound):
            continue
        calls = lazy.get(("local", scope, name + CALLED), [])
        for i, b in enumerate(calls):
            if b.how == "copy" and b.node is not None and b.node.start_byte == attr.start_byte:
                calls[i] = _Binding("ref", right)


def _keep_derived(found: Found, lazy: Found, called: Collection[str]) -> None:
    """Into ``found``, the ``name()`` / ``name{}`` bindings worth deciding: those that state a
    class (an annotation, a class alias, a guard's name), a call's result for a name that is called, and
    copies of a kept one (``self.k = k``: only when ``k()`` is kept). A binding of the name
    that says nothing of them makes them untyped (one untyped binding stands for all)."""
    copies: Found = {}
    for (kind, where, derived), bindings in lazy.items():
        base = derived[: -len(CALLED)]  # CALLED and VALUES are both two characters
        if len(bindings) < len(found.get((kind, where, base), ())):
            bindings.append(_UNKNOWN)  # another binding of the name states nothing of it
        spelled = f"self.{base}" if kind == "attr" else base
        if any(b.how in _STATING for b in bindings) or (derived.endswith(CALLED) and spelled in called):
            found[(kind, where, derived)] = bindings
        elif any(b.how == "copy" for b in bindings):
            copies[(kind, where, derived)] = bindings
    kept = True
    while kept and copies:  # copies of copies: until none is kept
        kept = False
        for key, bindings in list(copies.items()):
            if any(b.how == "copy" and _source(b) in found for b in bindings):
                found[key] = copies.pop(key)
                kept = True


def _source(b: _Binding) -> tuple[str, str, str]:
    """The key a copy reads (as :func:`.bindings._copied` does)."""
    kind, _, where = b.scope.rpartition(":")
    return (kind or "local", where, b.text + b.suffix)


def _inherit_attributes(
    found: Found, bases: dict[str, tuple[int, list[str]]], classes: Collection[str]
) -> None:
    """A class that binds no attribute ``x`` anywhere in its body or methods has its base's
    ``x`` (``MissingParameter(BadParameter)`` uses the ``self.param`` BadParameter sets),
    when exactly one of its bases in this file binds it. Bases in other files are not
    seen here: their attributes stay untyped for the subclass. Classes come in source
    order (the captures' order is not), so a base's own inherited attributes are there first."""
    for cls, (_, names) in sorted(bases.items(), key=lambda item: item[1][0]):
        owner = cls.rpartition(".")[0]
        local = [f"{owner}.{n}" if owner and f"{owner}.{n}" in classes else n for n in names]
        known = [b for b in local if b in classes and b != cls]
        if not known or len(known) != len(names):
            continue  # a base from elsewhere (or a call, `metaclass=`) may bind any attribute
        own = {name for kind, scope, name in found if kind == "attr" and scope == cls}
        inherited: dict[str, list[list[_Binding]]] = {}
        for base in known:
            for (kind, scope, name), bindings in list(found.items()):
                if kind == "attr" and scope == base and name not in own:
                    inherited.setdefault(name, []).append(bindings)
        for name, sources in inherited.items():
            if len(sources) == 1:
                agreed = _copied(found, sources[0], set())
                found[("attr", cls, name)] = [_Binding(b.how, b.node, _ELSEWHERE) for b in agreed]


def _unshadowed(found: Found, classes: Collection[str]) -> None:
    """A method's default written as a name its class binds (``D = Plain()`` in the class
    body, or any attribute ``D``: one key holds both) is that class's name, not the module's:
    untyped. ``x = a.b`` in a function reads a module's variable only when ``a`` is no
    variable of that function or of a function around it (else: untyped)."""
    for (kind, scope, _), bindings in found.items():
        owner = scope.rpartition(".")[0]
        if kind != "local":
            for i, b in enumerate(bindings):  # `self.x = a.b` in a method: `a` of that method
                if b.how == "holds" and b.scope and _reads_a_variable(found, b.scope, b):
                    bindings[i] = _UNKNOWN
            continue
        for i, b in enumerate(bindings):
            if b.how != "holds":
                continue
            if b.node is not None and b.node.type == "attribute":
                if _reads_a_variable(found, scope, b):
                    bindings[i] = _UNKNOWN
            elif owner in classes and ("attr", owner, b.text) in found:
                bindings[i] = _UNKNOWN


def _reads_a_variable(found: Found, scope: str, b: _Binding) -> bool:
    """Whether ``b`` is ``x = a.b``'s binding where ``a`` is a variable (not a module's name)."""
    attribute = b.how == "holds" and b.node is not None and b.node.type == "attribute"
    return attribute and _variable_around(found, scope, b.text.partition(".")[0])


def _variable_around(found: Found, scope: str, name: str) -> bool:
    """Whether ``name`` is a variable of the function ``scope`` or of one around it."""
    while scope:
        bindings = found.get(("local", scope, name))
        if bindings and _variable(bindings):
            return True
        scope = scope.rpartition(".")[0]
    return False

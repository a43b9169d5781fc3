"""What a Python statement binds: assignment targets, ``with`` items, loop variables,
parameters and their defaults, each as a :class:`.bindings._Binding` (the value a name
holds). :mod:`.python_bindings` walks a file's scopes and calls these per statement."""

from __future__ import annotations

from collections.abc import Callable, Collection

from tree_sitter import Node

from .base import node_text
from .bindings import (
    _NONE,
    _PASSED,
    _UNKNOWN,
    CALLED,
    ITEMS,
    PART,
    VALUES,
    _Binding,
    _own_scope,
    annotated,
)
from .python_narrowing import _guarded, _member_name, _none_guard, _none_guarded, or_value
from .python_types import (
    _callee,
    _class_of,
    _dotted,
    _item_type,
    _named,
    _type_name,
    _value_type,
)


def _names(target: Node) -> list[str]:
    """The names a binding target binds: ``x``, ``self.x``; tuples and stars unpacked;
    subscripts and other attributes bind no name."""
    t = target.type
    if t == "identifier":
        return [node_text(target)]
    if t == "attribute":
        obj, attr = target.child_by_field_name("object"), target.child_by_field_name("attribute")
        if obj is not None and attr is not None and obj.type == "identifier" and node_text(obj) == "self":
            return [f"self.{node_text(attr)}"]
        return []
    if t in ("subscript", "call", "string", "integer", "none", "true", "false"):
        return []
    out: list[str] = []
    for child in target.named_children:
        out += _names(child)
    return out


Bind = Callable[..., None]  # (scope, target, binding[, the items' binding])


def _value_binding(value: Node | None) -> _Binding:
    if value is not None and value.type == "none":
        return _NONE
    callee = _callee(value)
    if callee is not None and node_text(callee) in _CASTS:  # `t.cast(Group, v)`: a Group
        args = value.child_by_field_name("arguments") if value is not None else None
        first = args.named_children[0] if args is not None and args.named_child_count else None
        ok = first is not None and first.type in ("identifier", "attribute") and _dotted(first)
        return _Binding("val", first) if ok else _UNKNOWN
    if callee is not None and node_text(callee) == "self.__class__.__new__" and not _of_own_class(value):
        return _UNKNOWN  # `self.__class__.__new__(Other)`: an `Other`, not this class
    return _Binding("call", callee) if callee is not None else _UNKNOWN


def _of_own_class(call: Node | None) -> bool:
    """Whether ``call``'s arguments are ``self.__class__`` alone."""
    args = call.child_by_field_name("arguments") if call is not None else None
    inner = args.named_children if args is not None else []
    return len(inner) == 1 and node_text(inner[0]) == "self.__class__"


_CASTS = frozenset({"cast", "t.cast", "typing.cast"})


def _assignment(node: Node, scope: str, bind: Bind, classes: Collection[str]) -> None:
    left = node.child_by_field_name("left")
    if left is None:
        return
    declared = node.child_by_field_name("type")
    target = _type_name(declared)
    if target is not None:
        made = _UNKNOWN if _named(declared) else annotated(_class_of(declared))
        bind(scope, left, _Binding("ann", target), call=made)
        return
    if declared is not None:  # `x: list[Foo] = …`: no class we name, but its items are Foos
        items, values = annotated_items(_item_type(declared)), annotated(_value_type(declared))
        bind(scope, left, _UNKNOWN, items, values=values)
        return
    right = node.child_by_field_name("right")
    while right is not None and right.type == "assignment":  # `a = b = f()`: each target holds f()
        right = right.child_by_field_name("right")
    if left.type not in ("identifier", "attribute"):
        callee = _callee(right)
        targets = left.named_children if left.type in ("pattern_list", "tuple_pattern") else []
        if callee is not None and targets and all(t.type == "identifier" for t in targets):
            for i, target in enumerate(targets):  # `a, b = f()`: the parts of f's `-> tuple[A, B]`
                bind(scope, target, _Binding("part", callee, suffix=f"{PART}{i}"))
            return
        bind(scope, left, _UNKNOWN)  # other unpacking: nothing typed
        return
    top = node.parent is not None and node.parent.type == "module"
    named = right is not None and right.type in ("identifier", "attribute") and _dotted(right)
    if top and left.type == "identifier" and named and right is not None:
        bind(scope, left, _Binding("is", right))  # `Charset = _charset.Charset`: an alias
        return
    if scope in classes and left.type == "identifier" and named and right is not None:
        # a class body's `maker = Foo`: the class Foo (a reference edge); calling it makes a Foo
        bind(scope, left, _Binding("val", right), call=_Binding("val", right))
        return
    if scope and right is not None and right.type == "identifier" and _replaces_a_default(node):
        # `if cls is None: cls = JSONEncoder`, a parameter's `None` default replaced: what the
        # name holds (a module's variable, as `cls=name` would), or the class calling it makes
        replaced = _Binding("holds", right)
        bind(scope, left, replaced, call=replaced)
        return
    if scope and right is not None and right.type == "identifier" and node_text(right) != "self":
        # `self.ctx = ctx`: what `ctx` is here, its items and what calling it gives what `ctx`'s are
        copies = (_Binding("copy", right, scope, suffix) for suffix in ("", ITEMS, CALLED, VALUES))
        bind(scope, left, *copies)
        return
    held = _attribute_held(right, scope, classes)
    if held is not None:
        # `response = self.__response` in a method, `impl = Document.implementation`: what
        # the class's attribute holds
        bind(scope, left, *(_Binding(held.how, held.node, held.scope, suffix) for suffix in _SUFFIXES))
        return
    if left.type == "identifier" and right is not None and _read_from_a_name(right):
        # `root = logging.root`: what that module's variable holds (a reference edge at it;
        # untyped when `logging` is a variable of the function, see `python_settle._unshadowed`)
        bind(scope, left, _Binding("holds", right))
        return
    attribute = left.type == "attribute" and bool(_names(left))
    if (
        attribute
        and scope
        and scope not in classes
        and right is not None
        and _read_from_a_name(right, deep=True)
    ):
        # `self.factory = xml.dom.minidom.Document.implementation` in a method: what that
        # module's variable or class's attribute holds (the binding keeps its function, whose
        # variables `_unshadowed` looks at)
        bind(scope, left, _Binding("holds", right, scope))
        return
    looked_up = _looked_up(right, scope, classes)
    if looked_up is not None:  # `x = d[k]` / `d.get(k)`: one of `d`'s values
        bind(scope, left, looked_up)
        return
    if scope and left.type == "identifier" and _method_read(right):
        # `close = self.target.close`: calling `close` calls what the attribute names (a
        # reference edge, kept when `close` is called)
        bind(scope, left, _UNKNOWN, call=_Binding("ref", right))
        return
    defaulted = _or_default(node, left, right) if scope else None
    value = _value_binding(defaulted if defaulted is not None else right)
    bind(scope, left, value, call=value if value.how in ("call", "none") else _UNKNOWN)


_SUFFIXES = ("", ITEMS, CALLED, VALUES)


def _attribute_held(value: Node | None, scope: str, classes: Collection[str]) -> _Binding | None:
    """A copy of what a class's attribute holds, read as a value: ``self.x`` in a method of
    its class, ``C.x`` of a class ``C`` at the top of the file (a class body's ``x =
    Foo()``, or ``self.x`` bound in its methods); None for anything else."""
    if value is None or value.type != "attribute" or scope in classes:
        return None
    obj, attr = value.child_by_field_name("object"), value.child_by_field_name("attribute")
    if obj is None or attr is None or obj.type != "identifier":
        return None
    name, owner = node_text(obj), scope.rpartition(".")[0]
    if name == "self":
        return _Binding("copy", attr, "attr:" + owner) if scope and owner in classes else None
    return _Binding("copy", attr, "attr:" + name) if name in classes else None


def _method_read(value: Node | None) -> bool:
    """``a.b.m`` read from an attribute (``self.target.close``), not called."""
    if value is None or value.type != "attribute":
        return False
    obj = value.child_by_field_name("object")
    return obj is not None and obj.type == "attribute" and _dotted(value)


def _read_from_a_name(value: Node, *, deep: bool = False) -> bool:
    """``a.b`` read from a name that is not ``self`` (a module's variable, when ``a`` is a
    module); ``deep``: also ``a.C.b`` (a class's attribute; a local's ``x = a.b.m`` is
    :func:`_method_read`'s)."""
    obj = value.child_by_field_name("object") if value.type == "attribute" else None
    while deep and obj is not None and obj.type == "attribute":
        obj = obj.child_by_field_name("object")
    return obj is not None and obj.type == "identifier" and node_text(obj) != "self" and _dotted(value)


def _mapping(node: Node | None, scope: str, classes: Collection[str]) -> _Binding | None:
    """A copy of the values of the mapping ``node`` names: a name of the scope, or a
    ``self`` attribute in a method of its class."""
    if node is None:
        return None
    if node.type == "identifier" and node_text(node) != "self":
        return _Binding("copy", node, scope, VALUES)
    owner = scope.rpartition(".")[0]
    attr = node.child_by_field_name("attribute") if node.type == "attribute" else None
    if attr is not None and _names(node) and owner in classes:
        return _Binding("copy", attr, "attr:" + owner, VALUES)
    return None


def _looked_up(value: Node | None, scope: str, classes: Collection[str]) -> _Binding | None:
    """``d[k]`` or ``d.get(k)`` (one argument): one of the values of ``d``."""
    if value is None or not scope:
        return None
    if value.type == "subscript" and len(value.children_by_field_name("subscript")) == 1:
        return _mapping(value.child_by_field_name("value"), scope, classes)
    fn = value.child_by_field_name("function") if value.type == "call" else None
    args = value.child_by_field_name("arguments")
    if fn is None or fn.type != "attribute" or args is None or args.type != "argument_list":
        return None
    attr = fn.child_by_field_name("attribute")
    one = len(args.named_children) == 1 and args.named_children[0].type not in _NOT_POSITIONAL
    if attr is None or node_text(attr) != "get" or not one:
        return None
    return _mapping(fn.child_by_field_name("object"), scope, classes)


def _with(item: Node, scope: str, bind: Bind) -> None:
    pattern = item.child_by_field_name("value")
    if pattern is None or pattern.type != "as_pattern":
        return
    target = next((c for c in pattern.named_children if c.type == "as_pattern_target"), None)
    if target is None:
        return
    value = pattern.named_children[0] if pattern.named_child_count else None
    callee = _callee(value)
    bind(scope, target, _Binding("with", callee) if callee is not None else _UNKNOWN)


def annotated_items(target: Node | None) -> _Binding:
    """The items' binding of a container annotation: their class, or untyped."""
    return _Binding("ann", target) if target is not None else _UNKNOWN


def _loop(node: Node, scope: str, bind: Bind, classes: Collection[str]) -> None:
    """``for x in …`` (a statement or a comprehension's clause): ``x`` is an item of a call's
    result (``self.get_params(ctx)``: its return annotation's items), of a name or of the
    class's attribute (``self.params``: their annotations' items); ``for i, x in
    enumerate(…)`` over the same, ``x`` such an item. Anything else, another tuple target or
    ``async for``, leaves the names untyped."""
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if left is None:
        return
    if right is None or any(c.type == "async" for c in node.children):
        bind(scope, left, _UNKNOWN)
        return
    if left.type == "identifier":
        bind(scope, left, _item_binding(right, scope, classes))
        return
    pair = left.named_children if left.type in ("pattern_list", "tuple_pattern") else []
    names = all(n.type == "identifier" for n in pair)
    over = _enumerated(right)
    if over is not None and len(pair) == 2 and names:
        bind(scope, pair[0], _UNKNOWN)  # the index
        bind(scope, pair[1], _item_binding(over, scope, classes))
        return
    callee = _callee(right)
    mapping = _mapping(callee.child_by_field_name("object"), scope, classes) if callee is not None else None
    method = node_text(callee).rsplit(".", 1)[-1] if callee is not None and callee.type == "attribute" else ""
    if mapping is not None and method == "items" and len(pair) == 2 and names:  # `for k, v in d.items()`
        bind(scope, pair[0], _UNKNOWN)
        bind(scope, pair[1], mapping)
        return
    if callee is not None and len(pair) > 1 and names:  # `for a, b in f()`: the parts of its items
        for i, target in enumerate(pair):
            bind(scope, target, _Binding("in", callee, suffix=f"{PART}{i}"))
        return
    bind(scope, left, _UNKNOWN)


def _enumerated(value: Node) -> Node | None:
    """``xs`` of ``enumerate(xs)`` (one positional argument), else None."""
    fn = value.child_by_field_name("function") if value.type == "call" else None
    args = value.child_by_field_name("arguments") if fn is not None else None
    if fn is None or args is None or node_text(fn) != "enumerate" or args.type != "argument_list":
        return None
    inner = args.named_children
    return inner[0] if len(inner) == 1 and inner[0].type not in _NOT_POSITIONAL else None


_NOT_POSITIONAL = frozenset(
    {"keyword_argument", "list_splat", "dictionary_splat", "parenthesized_expression"}
)


def _item_binding(right: Node, scope: str, classes: Collection[str]) -> _Binding:
    """What iterating ``right`` gives, where the code states it: an item of a call's result,
    of a name, of a ``self`` attribute of the method's class."""
    callee = _callee(right)
    mapping = _mapping(callee.child_by_field_name("object"), scope, classes) if callee is not None else None
    if mapping is not None and node_text(callee).endswith(".values"):  # `for v in d.values()`
        return mapping
    if callee is not None:
        return _Binding("in", callee)
    if right.type == "identifier":
        return _Binding("copy", right, scope, ITEMS)
    if right.type == "attribute" and _names(right) and scope.rpartition(".")[0] in classes:
        owner = "attr:" + scope.rpartition(".")[0]  # `self.params` in a method of its class
        attr = right.child_by_field_name("attribute")
        return _Binding("copy", attr, owner, ITEMS) if attr is not None else _UNKNOWN
    if right.type == "attribute" and _attribute_path(right):
        # `for p in cmd.params`: an item of the attribute of what `cmd` holds, read at query
        # time (a reference edge at `cmd.params`, kept where marked; see `edges-python.scm`)
        return _Binding("in", right)
    return _UNKNOWN


def _attribute_path(node: Node) -> bool:
    """Whether ``node`` is ``name.attr`` or ``name.a.attr`` of plain names, ``self.a.attr``
    (not ``self.attr``, which its class's own bindings answer, nor ``cls.attr``, a class's)."""
    parts = node_text(node).split(".")
    if not _dotted(node) or any(not p.isidentifier() for p in parts):
        return False
    return parts[0] != "cls" and (parts[0] != "self" or len(parts) > 2)


def _parameters(params: Node, scope: str, bind: Bind, tops: TopClasses | None = None) -> None:
    """What a function's parameters bind; ``tops``: the file's top-level classes looked up so
    far (by name), shared by its functions."""
    guarded = _guarded(params.parent)
    # only a default needs it (a method of a derived class looks at its bases)
    defaults = any(p.type == "default_parameter" for p in params.named_children)
    where = _where(params.parent, tops) if defaults else ""
    nones = [
        node_text(name)
        for p in params.named_children
        if p.type == "default_parameter"
        and (value := p.child_by_field_name("value")) is not None
        and value.type == "none"
        and (name := p.child_by_field_name("name")) is not None
    ]
    # `x=None` replaced by `if x is None: x = value`: as if `value` were the default
    replaced = _none_guarded(params.parent, nones) if nones and where != "derived" else set()
    # what a caller passes an unannotated parameter types nothing, and stops no stated value
    # of the name (`if x is None: x = C()`; `self.h = C()` beside `self.h = h`); not for a
    # nested `def`'s parameters (no symbol: they would share the outer function's name)
    fn = params.parent
    own = fn is not None and _own_scope(scope, fn.child_by_field_name("name"))
    for i, p in enumerate(params.named_children):
        if p.type == "identifier":
            first = i == 0 and node_text(p) in ("self", "cls")
            if node_text(p) not in guarded:
                bind(scope, p, _PASSED if own and not first else _UNKNOWN)
        elif p.type in ("typed_parameter", "typed_default_parameter"):
            name = p.child_by_field_name("name") or (p.named_children[0] if p.named_child_count else None)
            if name is None:
                continue
            declared = p.child_by_field_name("type")
            target = _type_name(declared)
            plain = name.type == "identifier"
            if not plain or _named(declared):  # `ctx: Context`, the common case: nothing more
                bind(scope, name, annotated(target) if plain else _UNKNOWN)
                continue
            items = annotated_items(_item_type(declared))
            made, values = annotated(_class_of(declared)), annotated(_value_type(declared))
            bind(scope, name, annotated(target), items, made, values)
        elif p.type == "default_parameter":
            name = p.child_by_field_name("name")
            if name is not None and node_text(name) in replaced:
                bind(scope, name, _NONE, call=_NONE)  # the guard's value alone types it
            elif name is not None:
                value = p.child_by_field_name("value")
                if value is not None and value.type == "none" and own:
                    bind(scope, name, _PASSED)  # `x=None`: the caller's value or `None`
                else:
                    top = where == "top"
                    bind(scope, name, _default_binding(value, top) if where != "derived" else _UNKNOWN)
        else:  # *args, **kwargs
            bind(scope, p, _UNKNOWN)


def _replaces_a_default(assign: Node) -> bool:
    """Whether ``assign`` is the guard ``if x is None: x = name`` of a parameter ``x=None`` of a
    function at the top of the module (or a method of a class there without bases): the
    names its defaults see are the module's (see :func:`_default_binding`)."""
    wrapped = assign.parent is not None and assign.parent.type == "expression_statement"
    statement = assign.parent if wrapped and assign.parent is not None else assign
    block = statement.parent
    guard = block.parent if block is not None and block.named_children[0] == statement else None
    if guard is None or guard.type != "if_statement":
        return False
    name = _none_guard(guard)
    fn = guard.parent
    while fn is not None and fn.type not in _SCOPES:
        fn = fn.parent
    if name is None or fn is None or fn.type != "function_definition" or _where(fn) != "top":
        return False
    params = fn.child_by_field_name("parameters")
    defaults = params.named_children if params is not None else []
    none = any(
        p.type == "default_parameter"
        and node_text(p.child_by_field_name("name")) == name
        and (v := p.child_by_field_name("value")) is not None
        and v.type == "none"
        for p in defaults
    )
    return none and name in _none_guarded(fn, [name])


_SCOPES = frozenset({"function_definition", "lambda", "class_definition"})


def _or_default(assign: Node, left: Node, right: Node | None) -> Node | None:
    """``value`` of ``… = x or value`` where ``x`` is an unannotated parameter whose default is
    ``None`` (of a function at the top of the module, or a method of a class there that no
    base may define: see :func:`_where`), so ``None`` on the premise the defaults' rules take
    and the expression is ``value``: the statement ``x = x or value`` that replaces the
    default (a guard of :func:`_none_guarded`), or another target (``self._parser = _parser
    or XMLParser(…)``) where that is the only place the function names ``x``. Else None."""
    value = or_value(right)
    tested = right.child_by_field_name("left") if right is not None and value is not None else None
    fn = assign.parent
    while fn is not None and fn.type not in _SCOPES:
        fn = fn.parent
    if tested is None or fn is None or fn.type != "function_definition" or _where(fn) != "top":
        return None
    name = node_text(tested)
    params = fn.child_by_field_name("parameters")
    none = any(
        p.type == "default_parameter"
        and node_text(p.child_by_field_name("name")) == name
        and (v := p.child_by_field_name("value")) is not None
        and v.type == "none"
        for p in (params.named_children if params is not None else [])
    )
    if not none:
        return None
    if left.type == "identifier" and node_text(left) == name:
        return value if name in _none_guarded(fn, [name]) else None
    body = fn.child_by_field_name("body")
    return value if body is not None and _reads(body, name) == 1 else None


def _reads(node: Node, name: str) -> int:
    """How many times ``name`` is written as a variable below ``node`` (read or bound)."""
    n, stack = 0, [node]
    while stack:
        c = stack.pop()
        if c.type == "identifier" and node_text(c) == name and not _member_name(c):
            n += 1
        stack.extend(c.named_children)
    return n


def _default_binding(value: Node | None, top: bool) -> _Binding:
    """What an unannotated parameter's default states, as pyright infers it: a call's result
    (``c=Context()``, ``c=make()``) or, in a function or method at the top of the module, a
    module-level variable written as a name (``policy=compat32``: a reference edge, typed by
    what that variable's module binds it to, here or imported). ``None``, any other value,
    or a name in a nested function's default (its outer function's names are seen there):
    untyped. A method's default named like a name its class binds: see :func:`.python_settle._unshadowed`;
    a method of a class with bases: see :func:`_where`."""
    if value is not None and value.type == "identifier" and top and node_text(value) != "self":
        return _Binding("holds", value)
    b = _value_binding(value)
    return b if b.how in ("call", "val") else _UNKNOWN


def _where(function: Node | None, tops: TopClasses | None = None) -> str:
    """Where a ``def`` is, for its defaults: "top" (a statement of the module, or a method of
    a class at the module's top: the names its defaults see are the module's and that
    class's), "derived" (a method of a class with bases that may define it: pyright gives
    an unannotated parameter the annotation of a base's method of the same name first,
    which may be in any file; bases of this module that do not define it, nor theirs, are
    no such bases), "" (nested in a function or another class)."""
    parent = function.parent if function is not None else None
    if parent is not None and parent.type == "decorated_definition":
        parent = parent.parent
    if parent is not None and parent.type == "block" and parent.parent is not None:
        cls = parent.parent
        if cls.type != "class_definition" or _where(cls) != "top":
            return ""
        name = function.child_by_field_name("name") if function is not None else None
        method = node_text(name) if name is not None else ""
        return "derived" if _overridable(cls, method, set(), {} if tops is None else tops) else "top"
    return "top" if parent is not None and parent.type == "module" else ""


TopClasses = dict[str, Node | None]  # a file's top-level class of a name, or None


def _overridable(cls: Node, method: str, seen: set[str], tops: TopClasses) -> bool:
    """Whether a base of the top-level class ``cls`` may define ``method``: any base but a
    class of this module bound once at its top (and ``object``), or one that binds the name
    in its body, or whose bases may."""
    bases = cls.child_by_field_name("superclasses")
    for base in bases.named_children if bases is not None else []:
        name = node_text(base) if base.type == "identifier" else ""
        if name == "object":
            continue
        if name and name not in seen and name not in tops:
            tops[name] = _top_class(cls, name)
        found = tops.get(name) if name and name not in seen else None
        if found is None or _binds(found, method) or _overridable(found, method, seen | {name}, tops):
            return True
    return False


def _top_class(cls: Node, name: str) -> Node | None:
    """The class ``name`` names at the top of ``cls``'s module, when that ``class`` is the one
    statement there that defines or mentions it (an assignment, an import, a branch may
    bind it: then None)."""
    module = cls.parent
    if module is not None and module.type == "decorated_definition":
        module = module.parent
    found: list[Node] = []
    star = -1  # where the last `from m import *` starts: it may bind any name
    for stmt in module.named_children if module is not None else []:
        node = stmt.child_by_field_name("definition") if stmt.type == "decorated_definition" else stmt
        if node is None:
            continue
        if node.type in ("class_definition", "function_definition"):
            if node_text(node.child_by_field_name("name")) == name:
                found.append(node)
        elif node.type == "import_from_statement" and any(c.type == "wildcard_import" for c in node.children):
            star = node.start_byte
        elif _may_bind(node, name):
            found.append(node)
    one = found[0] if len(found) == 1 and found[0].type == "class_definition" else None
    return one if one is not None and star < one.start_byte else None


def _may_bind(stmt: Node, name: str) -> bool:
    """Whether a module's statement (not a ``def`` / ``class``) may bind ``name``: an
    assignment or an import that does, any other statement that mentions it (a branch, a
    ``try``, a walrus…); an expression statement never does."""
    inner = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_child_count else stmt
    if inner.type in ("comment", "string", "call") or name not in node_text(inner):
        return False
    if inner.type in ("assignment", "augmented_assignment"):
        left = inner.child_by_field_name("left")
        right = inner.child_by_field_name("right")
        nested = right is not None and right.type == "assignment" and _may_bind(right, name)
        return nested or (left is not None and name in _names(left))
    if inner.type in ("import_statement", "import_from_statement"):
        for item in inner.children_by_field_name("name"):
            alias = item.child_by_field_name("alias") if item.type == "aliased_import" else None
            first = alias or (item.named_children[0] if item.type == "dotted_name" else item)
            if node_text(first) == name:
                return True
        return False
    return True


def _binds(cls: Node, name: str) -> bool:
    """Whether a class body binds ``name`` (a method, an attribute, an import…)."""
    body = cls.child_by_field_name("body")
    return body is not None and name in node_text(body)

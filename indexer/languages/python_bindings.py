"""What type a Python name or attribute holds, where the code states it.

The design is :mod:`.bindings`'s (its docstring lists what types a name and what leaves
it untyped); this module reads Python's tree. Beyond the shared rules it types:

* what every ``return`` of an unannotated function gives (a call's result, a typed
  local, ``None``; a ``yield`` or ``async def`` leaves it untyped);
* a name inside the block of ``if isinstance(name, C):``, up to a statement that binds it
  again: uses there read a narrowed name (``x#12c4``) bound to ``C``
  (:attr:`.bindings.Marks.narrowed`), and so does a copy made there (``other = name``);
* ``a, b = f()``: each name by the matching item of ``f``'s declared tuple;
* after ``assert isinstance(name, C)``, up to a statement that binds it again: a ``C``;
* ``x = mod.var`` in a function (``root = logging.root``): what that module-level variable
  holds (a ``holds:`` reference edge; none when ``mod`` is a variable of the function);
* ``return self.x`` / ``return C.x`` (``x = C.x``): what the class's attribute holds;
* ``fix = self._fix`` (a method the class defines), ``close = self.target.close``: calling
  the local calls that method (``fix()``);
* after ``if isinstance(x, str): x = C(x)`` of a parameter whose default is a ``str``
  literal (so the test always holds): a ``C``.

What this module collects is settled by the passes of :mod:`.python_settle` before it
becomes marks.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection

from tree_sitter import Node

from .base import node_text
from .bindings import (
    _DEFINED,
    _GLOBAL,
    _NONE,
    _PASSED,
    _UNKNOWN,
    CALLED,
    ITEMS,
    RETURN,
    RETURN_PART,
    VALUES,
    Found,
    Marks,
    Point,
    _Binding,
    _decide,
    _own_scope,
    annotated,
    captures,
    compiled_query,
    narrowed_name,
)
from .python_narrowing import _asserted, _converted, _identifiers_below, _isinstance_tests, _rebinds
from .python_regions import (
    Region,
    _assigned_regions,
    _copy_regions,
    _parameter_regions,
    _point,
)
from .python_settle import (
    _called_methods,
    _copies_narrowed,
    _declared_here_only,
    _declared_wins,
    _inherit_attributes,
    _keep_derived,
    _reads_a_variable,
    _tested_elsewhere,
    _unshadowed,
)
from .python_statements import (
    Bind,
    TopClasses,
    _assignment,
    _attribute_held,
    _loop,
    _names,
    _parameters,
    _value_binding,
    _where,
    _with,
)
from .python_types import (
    _class_of,
    _dotted,
    _item_node,
    _item_type,
    _named,
    _tuple_parts,
    _type_name,
)

_QUERY = """
(assignment) @assign
(augmented_assignment left: (_) @unknown)
(for_statement) @for
(for_in_clause) @for
(named_expression name: (_) @unknown)
(with_item) @with
(except_clause) @except
(parameters) @params
(lambda_parameters) @unknown
(function_definition) @def
(lambda) @lambda
(delete_statement) @delete
(class_definition name: (_) @defname)
(import_statement) @import
(import_from_statement) @import
(global_statement) @global
(nonlocal_statement) @unknown
(case_pattern) @unknown
(return_statement) @return
(yield) @yield
(if_statement) @if
(elif_clause) @if
(assert_statement) @assert
"""


def python_marks(
    root: Node, at: Callable[[int], str], classes: set[str], called: Collection[str] = ()
) -> Marks:
    """The typed bindings of one file, as marks on the edges' end points. ``called``: the
    names the file's calls are written as (``k``, ``self.maker``): only those get what
    calling them gives when a call's result is all that states it."""
    found: dict[tuple[str, str, str], list[_Binding]] = defaultdict(list)
    elsewhere: set[str] = set()  # names bound in a scope other than the module's
    bases: dict[str, tuple[int, list[str]]] = {}  # class → (where, the names of its bases)
    narrowings: list[tuple[list[Node], str, str]] = []  # (statements, name, narrowed name)
    # what calling each name gives (`name()`) and a mapping's values (`name{}`): only the
    # bindings that say something; kept for the names whose bindings state them (or, for
    # `name()`, that are called)
    lazy: Found = defaultdict(list)
    # `x = value` statements of a function: (scope, statement, name, its binding)
    assigned: list[tuple[str, Node, str, _Binding]] = []
    last: dict[int, tuple[_Binding, str]] = {}  # an identifier target's start → (binding, name)
    spots: dict[str, list[int]] = defaultdict(list)  # a name → where targets binding it start
    functions: list[tuple[int, int, Point, Point]] = []  # every def, lambda and class (bytes, points)
    asserted: list[Region] = []  # after `assert isinstance(x, C)`: x is a C
    tops: TopClasses = {}  # the file's top-level classes by name, as methods' defaults look them up
    methods_read: list[tuple[str, str, Node]] = []  # `fix = self._fix`: (scope, `fix`, `self._fix`)
    methods: set[tuple[str, str]] = set()  # (class, name) of each method a class body defines
    # `if isinstance(x, str): x = C(x)` of a parameter `x='…'`: (scope, the `if`, what it reads)
    conversions: list[tuple[str, Node, tuple[str, Node, Node, list[Node]]]] = []
    # where a plain assignment (`x = value`, `self.x = value`) put its binding of a name:
    # (key, index in its list); a declared name keeps its annotation over these
    reassigned: list[tuple[tuple[str, str, str], int, Node]] = []
    # `if isinstance(x, C)`: (scope, where it holds: start and end byte, x, x#…)
    tests: list[tuple[str, int, int, str, str]] = []
    # what a caller passes: a function's parameters it types by nothing (the function, their
    # names) and `x = p` / `self.x = p` copies of a name (scope, statement, target, source)
    passed_params: list[tuple[str, Node, list[str]]] = []
    passed_copies: list[tuple[str, Node, str, str]] = []
    classes_tested: dict[tuple[str, str], set[str]] = defaultdict(set)  # isinstance(x, C): (scope, x) → C
    assigning = False

    def scope_of(node: Node) -> str:
        return at(node.start_byte)

    def bind(
        scope: str,
        target: Node,
        b: _Binding,
        item: _Binding = _UNKNOWN,
        call: _Binding = _UNKNOWN,
        values: _Binding = _UNKNOWN,
    ) -> None:
        """``b`` for each name ``target`` binds, ``item`` for what iterating it gives (under
        ``name[]``), ``call`` for what calling it gives (``name()``, when it holds a class),
        ``values`` for its values (``name{}``, a mapping's): any binding that states no item
        type (no class, no value type) leaves the items (calls, values) untyped."""
        for name in _names(target):
            last[target.start_byte] = (b, name)
            spots[name].append(target.start_byte)
            if name.startswith("self."):
                owner = scope.rpartition(".")[0]
                if scope in classes or owner not in classes:
                    continue  # `self.x` in a class body (or outside a method) binds no attribute
                kind, where, name = "attr", owner, name[5:]
            elif scope in classes:  # a class body: the class's attribute
                kind, where = "attr", scope
                elsewhere.add(name)
            else:
                kind, where = "local", scope
                if scope:
                    elsewhere.add(name)
            if assigning:
                reassigned.append(((kind, where, name), len(found[(kind, where, name)]), target))
            found[(kind, where, name)].append(b)
            found[(kind, where, name + ITEMS)].append(item)
            if call is not _UNKNOWN:
                lazy[(kind, where, name + CALLED)].append(call)
            if values is not _UNKNOWN:
                lazy[(kind, where, name + VALUES)].append(values)

    for capture, node in captures(compiled_query("python", _QUERY), root):
        fn = node if capture in ("def", "lambda") else node.parent if capture == "defname" else None
        if fn is not None:
            functions.append((fn.start_byte, fn.end_byte, _point(fn.start_point), _point(fn.end_point)))
        if capture == "unknown":
            bind(scope_of(node), node, _UNKNOWN)
        elif capture == "delete":
            for deleted in _identifiers_below(node):
                spots[deleted].append(node.start_byte)
        elif capture == "assign":
            scope = scope_of(node)
            assigning = node.child_by_field_name("type") is None  # `x: T = …` declares
            _assignment(node, scope, bind, classes)
            assigning = False
            bound_method = _self_member(node, scope, classes)
            if bound_method is not None:
                methods_read.append(bound_method)
            left = node.child_by_field_name("left")
            right = node.child_by_field_name("right")
            copied = right is not None and right.type == "identifier" and node_text(right) != "self"
            if copied and right is not None and left is not None and scope and scope not in classes:
                names = _names(left) if left.type in ("identifier", "attribute") else []
                passed_copies += [(scope, node, name, node_text(right)) for name in names]
            if scope and scope not in classes and left is not None and left.type == "identifier":
                bound, bound_name = last.get(left.start_byte, (_UNKNOWN, ""))
                if bound.how not in ("unknown", "none"):
                    assigned.append((scope, node, bound_name, bound))
        elif capture == "for":
            _loop(node, scope_of(node), bind, classes)
        elif capture == "with":
            _with(node, scope_of(node), bind)
        elif capture == "params":
            scope = scope_of(node)
            _parameters(node, scope, bind, tops)
            untyped = [n for n, at in _parameter_names(node) if last.get(at, (_UNKNOWN, ""))[0] is _PASSED]
            if untyped and node.parent is not None:
                passed_params.append((scope, node.parent, untyped))
        elif capture == "def":
            name = node.child_by_field_name("name")
            if name is not None:
                bind(_outer_scope(node, at), name, _DEFINED)
                owner, _, own = scope_of(node).rpartition(".")
                if owner in classes and own == node_text(name):
                    methods.add((owner, own))
            ret = node.child_by_field_name("return_type")
            scope = scope_of(node)
            if ret is not None and _own_scope(scope, name):
                _return_type(ret, scope, found)
        elif capture == "return" or capture == "yield":
            _returned(node, capture == "yield", at, found, classes)
        elif capture == "if":
            scope = scope_of(node)
            if scope and scope not in classes:
                for tested, spelled in _classes_tested(node.child_by_field_name("condition")):
                    classes_tested[(scope, tested)].add(spelled)
                for tested, cls, statements in _isinstance_tests(node):
                    narrowed = narrowed_name(tested, node.start_point)
                    found[("local", scope, narrowed)].append(_Binding("val", cls))
                    narrowings.append((statements, tested, narrowed))
                    tests.append((scope, statements[0].start_byte, statements[-1].end_byte, tested, narrowed))
                conversion = (
                    _converted(node)
                    if "isinstance" in node_text(node.child_by_field_name("condition"))
                    else None
                )
                if conversion is not None:
                    conversions.append((scope, node, conversion))
        elif capture == "assert":
            scope = scope_of(node)
            if scope and scope not in classes:
                for tested, cls, after in _asserted(node):
                    classes_tested[(scope, tested)].add(node_text(cls))
                    narrowed = narrowed_name(tested, node.start_point)
                    found[("local", scope, narrowed)].append(_Binding("val", cls))
                    nested = [f for stmt in after for f in _nested_functions(stmt)]
                    start, end = _point(node.end_point), _point(after[-1].end_point)
                    asserted.append((start, end, tested, narrowed, nested))
        elif capture == "except":
            _except(node, scope_of(node), classes, bind, found, narrowings)
        elif capture == "defname":
            bind(_outer_scope(node.parent or node, at), node, _DEFINED)
            bases[at(node.start_byte)] = (node.start_byte, _base_names(node.parent))
        elif capture == "import":
            scope = scope_of(node)
            for item in node.children_by_field_name("name"):
                alias = item.child_by_field_name("alias") if item.type == "aliased_import" else None
                first = alias or (item.named_children[0] if item.type == "dotted_name" else item)
                bind(scope, first, _DEFINED)
        elif capture == "global":
            for name in node.named_children:
                bind(scope_of(node), name, _GLOBAL)
                bind("", name, _UNKNOWN)
    ordered = sorted(functions)
    passed = _parameter_regions(passed_params, found, spots, ordered, tests)
    passed += _copy_regions(passed_copies, found, spots, ordered, classes)
    _copies_narrowed(found, tests)
    _tested_elsewhere(found, classes_tested)
    _unshadowed(found, classes)
    _declared_wins(found, reassigned)
    _declared_here_only(found)
    # the straight-line flow of `x = a.b` too: none where `a` is a variable of the function
    assigned = [(sc, n, name, b) for sc, n, name, b in assigned if not _reads_a_variable(found, sc, b)]
    _called_methods(found, lazy, methods_read, methods)
    _keep_derived(found, lazy, called)
    _inherit_attributes(found, bases, classes)
    regions = [
        (
            _point(stmts[0].start_point),
            _point(stmts[-1].end_point),
            tested,
            narrowed,
            [f for stmt in stmts for f in _nested_functions(stmt)],
        )
        for stmts, tested, narrowed in narrowings
    ]
    regions += asserted
    regions += _conversions(conversions, found, spots)
    regions += _assigned_regions(assigned, found, spots, ordered)
    regions += passed
    marks = _decide(found, elsewhere)
    marks.bound_attributes = _bound_attributes(found, methods)
    for start, end, tested, narrowed, nested in regions:
        marks.narrowed.append((start, end, tested, narrowed))
        marks.unnarrowed += nested
    marks.unnarrowed = sorted(set(marks.unnarrowed))  # regions overlap: each function once
    return marks


def _bound_attributes(found: Found, methods: set[tuple[str, str]]) -> dict[str, list[str]]:
    """Each class → the attributes its body and methods bind (typed or not); its methods
    (the symbol table has those) and what iterating, calling or reading a mapping gives
    (derived from the attribute itself) are left out."""
    out: dict[str, set[str]] = defaultdict(set)
    for kind, where, name in found:
        if kind == "attr" and not name.endswith((ITEMS, CALLED, VALUES)) and (where, name) not in methods:
            out[where].add(name)
    return {cls: sorted(names) for cls, names in out.items()}


def _conversions(
    conversions: list[tuple[str, Node, tuple[str, Node, Node, list[Node]]]],
    found: Found,
    spots: dict[str, list[int]],
) -> list[Region]:
    """After ``if isinstance(x, str): x = C(x)`` converting a parameter whose default is a
    ``str`` (see :func:`.python_narrowing._converted`): ``x`` is a ``C`` — unless the function
    binds ``x`` before the ``if`` (then it need not be the parameter's string) or is a
    method a base may define (see :func:`.python_statements._where`)."""
    out: list[Region] = []
    for scope, node, (name, value, fn, after) in conversions:
        body = fn.child_by_field_name("body")
        if body is None or any(body.start_byte <= at < node.start_byte for at in spots.get(name, [])):
            continue
        if _where(fn) == "derived":
            continue  # pyright types the parameter by a base's method first
        narrowed = narrowed_name(name, node.start_point)
        found[("local", scope, narrowed)].append(_value_binding(value))
        nested = [f for stmt in after for f in _nested_functions(stmt)]
        out.append((_point(node.end_point), _point(after[-1].end_point), name, narrowed, nested))
    return out


def _self_member(node: Node, scope: str, classes: Collection[str]) -> tuple[str, str, Node] | None:
    """``(scope, x, self.m)`` for a method's ``x = self.m``, else None."""
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if left is None or right is None or left.type != "identifier" or right.type != "attribute":
        return None
    obj = right.child_by_field_name("object")
    if obj is None or node_text(obj) != "self":
        return None
    owner = scope.rpartition(".")[0]
    return (scope, node_text(left), right) if scope not in classes and owner in classes else None


def _return_type(ret: Node, scope: str, found: Found) -> None:
    """What a function's return annotation states: the class (``-> Foo``), its items
    (``-> list[Foo]``) and their tuple parts (``-> Iterator[tuple[str, Foo]]``), the class a
    returned class makes (``-> type[Foo]``), its tuple parts (``-> tuple[str, Foo | None]``)."""
    target = _type_name(ret)
    if target is not None:
        found[(RETURN, scope, "")].append(_Binding("ann", target))
    if _named(ret):
        return  # `-> Foo`: nothing more to read
    item = _item_type(ret)
    if item is not None:
        found[(RETURN, scope, ITEMS)].append(_Binding("ann", item))
    for i, part in enumerate(_tuple_parts(_item_node(ret))):
        found[(RETURN, scope, f"{ITEMS}{RETURN_PART}{i}")].append(annotated(part))
    made = _class_of(ret)  # `-> type[Foo]`: calling the result makes a Foo
    if made is not None:
        found[(RETURN, scope, CALLED)].append(_Binding("ann", made))
    for i, part in enumerate(_tuple_parts(ret)):  # `-> tuple[str, Command | None]`
        found[(RETURN, scope, f"{RETURN_PART}{i}")].append(annotated(part))


def _classes_tested(condition: Node | None) -> list[tuple[str, str]]:
    """``(x, C)`` for each ``isinstance(x, C)`` in a condition, negated or not, each class
    of a tuple (``isinstance(x, (C, D))``)."""
    out: list[tuple[str, str]] = []
    stack = [condition] if condition is not None else []
    while stack:
        n = stack.pop()
        if n.type == "call" and node_text(n.child_by_field_name("function")) == "isinstance":
            args = n.child_by_field_name("arguments")
            pair = args.named_children if args is not None else []
            if len(pair) == 2 and pair[0].type == "identifier":
                classes = pair[1].named_children if pair[1].type == "tuple" else [pair[1]]
                out += [(node_text(pair[0]), node_text(c)) for c in classes]
        elif n.type not in ("lambda", "function_definition"):
            stack.extend(n.named_children)
    return out


def _parameter_names(params: Node) -> list[tuple[str, int]]:
    """Each plain parameter's name (``x``, ``x=…``) and where it starts."""
    out: list[tuple[str, int]] = []
    for p in params.named_children:
        name = p if p.type == "identifier" else p.child_by_field_name("name")
        if name is not None and name.type == "identifier" and p.type in ("identifier", "default_parameter"):
            out.append((node_text(name), name.start_byte))
    return out


def _except(
    node: Node,
    scope: str,
    classes: Collection[str],
    bind: Bind,
    found: Found,
    narrowings: list[tuple[list[Node], str, str]],
) -> None:
    """``except C as e:``: in its block ``e`` is a ``C`` (a narrowed name, as in an
    ``isinstance`` block), unless the block rebinds it; ``e`` itself stays untyped in the
    scope (another ``except`` may bind it to another class). A tuple of classes types nothing."""
    pattern = next((c for c in node.named_children if c.type == "as_pattern"), None)
    target = (
        next((c for c in pattern.named_children if c.type == "as_pattern_target"), None) if pattern else None
    )
    if pattern is None or target is None:
        return
    bind(scope, target, _UNKNOWN)
    cls = pattern.named_children[0]
    block = next((c for c in node.named_children if c.type == "block"), None)
    name = node_text(target.named_children[0]) if target.named_child_count == 1 else ""
    ok = (
        cls.type in ("identifier", "attribute")
        and _dotted(cls)
        and target.named_children[0].type == "identifier"
    )
    if ok and block is not None and scope and scope not in classes and not _rebinds(block, name):
        narrowed = narrowed_name(name, node.start_point)
        found[("local", scope, narrowed)].append(_Binding("val", cls))
        narrowings.append((block.named_children, name, narrowed))


def _nested_functions(block: Node) -> list[tuple[Point, Point]]:
    out: list[tuple[Point, Point]] = []
    stack = [block]
    while stack:
        n = stack.pop()
        if n.type in ("lambda", "function_definition", "class_definition"):
            out.append((n.start_point, n.end_point))
        else:
            stack.extend(n.named_children)
    return out


def _returned(
    node: Node, yields: bool, at: Callable[[int], str], found: Found, classes: Collection[str]
) -> None:
    """What a ``return`` gives the function it is in, when the function states no return
    type: a call's result (``return Foo(…)``, ``return self.__class__(…)``), a copy of a
    typed local (``return ctx``), the receiver (``return self``), what a class's attribute
    holds (``return self._opener``, ``return Document.implementation``), ``None``; anything else,
    or a ``yield`` (a generator), leaves the result untyped. An ``async def`` returns a
    coroutine: nothing here."""
    fn = node.parent
    while fn is not None and fn.type not in ("function_definition", "lambda", "class_definition"):
        fn = fn.parent
    if fn is None or fn.type != "function_definition" or fn.child_by_field_name("return_type") is not None:
        return
    scope = at(fn.start_byte)
    if not _own_scope(scope, fn.child_by_field_name("name")) or any(c.type == "async" for c in fn.children):
        return
    value = None if yields else node.named_children[0] if node.named_child_count else None
    if yields:
        b = _UNKNOWN
    elif value is None:
        b = _NONE
    elif value.type == "identifier" and node_text(value) == "self":
        b = _Binding("self", value)  # the receiver itself, whatever class it is (`__enter__`)
    elif value.type == "identifier":
        b = _Binding("copy", value, scope)
    else:
        b = _attribute_held(value, scope, classes) or _value_binding(value)
    found[(RETURN, scope, "")].append(b)


def _base_names(cls: Node | None) -> list[str]:
    superclasses = cls.child_by_field_name("superclasses") if cls is not None else None
    return [node_text(b) for b in superclasses.named_children] if superclasses is not None else []


def _outer_scope(definition: Node, at: Callable[[int], str]) -> str:
    """The scope a ``def`` / ``class`` name is bound in: the one around its statement."""
    parent = definition.parent
    if parent is not None and parent.type == "decorated_definition":
        parent = parent.parent
    if parent is None or parent.type == "module":
        return ""
    return at(parent.start_byte)

"""Where ``isinstance`` narrows a Python name, read from the tree for
:mod:`.python_bindings`: the block of ``if isinstance(x, C):`` (``_isinstance_tests``),
the statements after ``assert isinstance(x, C)`` (``_asserted``) and a guard at the top
of a function that converts a parameter (``if not isinstance(x, C): x = C(…)``,
``_guarded``); a parameter's ``None`` default replaced by a guard (``if x is None: x =
value``, ``_none_guarded``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from tree_sitter import Node

from .base import node_text
from .python_types import _callee, _dotted


def _isinstance_tests(node: Node) -> list[tuple[str, Node, list[Node]]]:
    """``(name, class, statements)`` for each ``isinstance(name, C)`` an ``if`` / ``elif``
    condition asserts (alone or in an ``and``): in the statements of its block up to the first
    one that binds the name again (all of them when none does), the name holds a ``C``. A
    tuple of classes or an attribute (``self.x``: a call may change it) narrows nothing."""
    cond, block = node.child_by_field_name("condition"), node.child_by_field_name("consequence")
    if cond is None or block is None:
        return []
    out: list[tuple[str, Node, list[Node]]] = []
    for name, cls in _tested(cond):
        before: list[Node] = []
        for statement in block.named_children:
            if _rebinds(statement, name):
                break
            before.append(statement)
        if before:
            out.append((name, cls, before))
    return out


def _asserted(node: Node) -> list[tuple[str, Node, list[Node]]]:
    """``(name, class, statements)`` for each ``isinstance(name, C)`` an ``assert`` states
    (alone or in an ``and``): in the statements of its block after it, up to the first one
    that binds the name again, the name holds a ``C``."""
    cond = node.named_children[0] if node.named_child_count else None
    if cond is None:
        return []
    out: list[tuple[str, Node, list[Node]]] = []
    for name, cls in _tested(cond):
        after: list[Node] = []
        sibling = node.next_named_sibling
        while sibling is not None and not _rebinds(sibling, name):
            after.append(sibling)
            sibling = sibling.next_named_sibling
        if after:
            out.append((name, cls, after))
    return out


def _tested(cond: Node) -> list[tuple[str, Node]]:
    """``(name, class)`` of each ``isinstance(name, C)`` a condition states (alone or in an
    ``and``); a tuple of classes or an attribute (``self.x``: a call may change it): none."""
    out: list[tuple[str, Node]] = []
    stack = [cond]
    while stack:
        n = stack.pop()
        if n.type == "parenthesized_expression":
            stack.extend(n.named_children)
        elif n.type == "boolean_operator" and any(c.type == "and" for c in n.children):
            stack.extend(c for c in (n.child_by_field_name("left"), n.child_by_field_name("right")) if c)
        elif n.type == "call" and node_text(n.child_by_field_name("function")) == "isinstance":
            args = n.child_by_field_name("arguments")
            pair = args.named_children if args is not None else []
            ok = len(pair) == 2 and pair[0].type == "identifier"
            ok = ok and pair[1].type in ("identifier", "attribute")
            if ok and _dotted(pair[1]):
                out.append((node_text(pair[0]), pair[1]))
    return out


# node type → the field holding what it binds ("": the whole node)
_REBINDING = {
    "assignment": "left", "augmented_assignment": "left", "for_statement": "left",
    "for_in_clause": "left", "named_expression": "name", "as_pattern_target": "",
    "delete_statement": "", "global_statement": "", "nonlocal_statement": "", "parameters": "",
    "lambda_parameters": "", "import_statement": "", "import_from_statement": "",
    "function_definition": "name", "class_definition": "name", "case_pattern": "",
}  # fmt: skip


def _rebinds(block: Node, name: str) -> bool:
    """Whether ``name`` is bound anywhere in ``block`` (an assignment's or a loop's target,
    a ``del``, a parameter…)."""
    stack = [block]
    while stack:
        n = stack.pop()
        field = _REBINDING.get(n.type)
        target = (n.child_by_field_name(field) if field else n) if field is not None else None
        if target is not None and any(i == name for i in _identifiers_below(target)):
            return True
        stack.extend(n.named_children)
    return False


def _identifiers_below(node: Node) -> Iterator[str]:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "identifier":
            yield node_text(n)
        stack.extend(n.named_children)


def _guarded(function: Node | None) -> set[str]:
    """Parameters a guard at the top of the function body converts:
    ``if not isinstance(x, C): x = C(…)`` (no ``elif`` / ``else``) leaves ``x`` a ``C``
    on every path, so the assignment alone types it — unless ``x`` is used as a receiver
    (``x.m``) before the guard, where it is still whatever the caller passed."""
    body = function.child_by_field_name("body") if function is not None else None
    stmts = body.named_children if body is not None else []
    guards = [(i, name) for i, stmt in enumerate(stmts) if (name := _isinstance_guard(stmt)) is not None]
    out: set[str] = set()
    if not guards:
        return out  # the common case: no walk of the body at all (it was 9% of indexing)
    used: set[str] = set()  # names used as receivers in the statements so far
    done = 0
    for i, name in guards:
        for stmt in stmts[done:i]:
            used.update(_receivers(stmt))
        done = i
        if name not in used:
            out.add(name)
    return out


def _converted(node: Node) -> tuple[str, Node, Node, list[Node]] | None:
    """``(x, value, function, statements)`` for ``if isinstance(x, T): x = value`` (``T`` a
    builtin literal type, no ``elif`` / ``else``, nothing after the assignment in the block
    binding ``x`` again) where ``x`` is a parameter of the function around it whose default
    is a ``T`` literal (``charset='utf-8'`` … ``if isinstance(charset, str): charset =
    Charset(charset)``): typed by its default, as pyright types it, ``x`` is always converted;
    in the statements after the ``if`` in its block, up to one binding ``x`` again, it is the
    value. Whether ``x`` is bound before the ``if`` is the caller's to check."""
    if node.type != "if_statement" or node.child_by_field_name("alternative") is not None:
        return None
    cond, then = node.child_by_field_name("condition"), node.child_by_field_name("consequence")
    args = cond.child_by_field_name("arguments") if cond is not None and cond.type == "call" else None
    pair = args.named_children if args is not None and cond is not None else []
    if cond is None or node_text(cond.child_by_field_name("function")) != "isinstance" or len(pair) != 2:
        return None
    literal = _LITERALS.get(node_text(pair[1]))
    statements = then.named_children if then is not None else []
    assign = statements[0] if statements and pair[0].type == "identifier" else None
    if literal is None or assign is None or assign.type != "assignment":
        return None
    name, value = node_text(pair[0]), assign.child_by_field_name("right")
    if node_text(assign.child_by_field_name("left")) != name or value is None or value.type != "call":
        return None
    if any(_rebinds(stmt, name) for stmt in statements[1:]):
        return None
    fn = node.parent
    while fn is not None and fn.type not in ("function_definition", "lambda", "class_definition"):
        fn = fn.parent
    params = (
        fn.child_by_field_name("parameters") if fn is not None and fn.type == "function_definition" else None
    )
    default = next(
        (
            p.child_by_field_name("value")
            for p in (params.named_children if params is not None else [])
            if p.type == "default_parameter" and node_text(p.child_by_field_name("name")) == name
        ),
        None,
    )
    if fn is None or default is None or not literal(default):
        return None
    after: list[Node] = []
    sibling = node.next_named_sibling
    while sibling is not None and not _rebinds(sibling, name):
        after.append(sibling)
        sibling = sibling.next_named_sibling
    return (name, value, fn, after) if after else None


def _string_prefix(node: Node) -> str | None:
    """ "b" for a bytes literal, "" for a str one (``'…'``, ``f'…'``, ``r'…'``), None for
    anything else."""
    start = node.children[0] if node.type == "string" and node.children else None
    if start is None or start.type != "string_start":
        return None
    return "b" if "b" in node_text(start).lower() else ""


def _str_literal(node: Node) -> bool:
    return _string_prefix(node) == ""


def _bytes_literal(node: Node) -> bool:
    return _string_prefix(node) == "b"


def _int_literal(node: Node) -> bool:
    return node.type == "integer"


def _float_literal(node: Node) -> bool:
    return node.type == "float"


# the builtin type `isinstance` names → whether a default is a literal of it
_LITERALS: dict[str, Callable[[Node], bool]] = {
    "str": _str_literal,
    "bytes": _bytes_literal,
    "int": _int_literal,
    "float": _float_literal,
}


def _none_guarded(function: Node | None, names: list[str]) -> set[str]:
    """Which of ``names`` (parameters whose default is ``None``) a guard replaces:
    ``if x is None: x = value`` or ``if not x: x = value`` (no ``elif`` / ``else``; the
    assignment first in its block, nothing after it there binding ``x`` again) or the
    statement ``x = x or value`` (the same test and assignment in one expression), the
    function's only one for ``x``, where every other read of ``x`` in the function is in the
    statements after the guard in its block (tests ``x is None`` / ``x is not None`` / ``not
    x`` and an import's dotted path aside) — there ``x`` is ``value`` or what the caller
    passed, as with ``x=value`` as the default (the idiom for a default made per call). A
    read before it or outside that block (``x`` still ``None`` or the caller's): not replaced."""
    body = function.child_by_field_name("body") if function is not None else None
    if body is None:
        return set()
    text = node_text(body)
    # else no walk at all
    names = [n for n in names if f"{n} is None" in text or f"not {n}" in text or f"{n} or " in text]
    if not names:
        return set()
    guards: dict[str, list[Node]] = {}
    reads: dict[str, list[int]] = {}
    stack = [body]
    while stack:
        n = stack.pop()
        name = _none_guard(n) if n.type == "if_statement" else _or_guard(n)
        if name in names:
            guards.setdefault(name, []).append(n)
            continue  # its test and its assignment are the guard's own
        if n.type == "identifier" and node_text(n) in names and not _member_name(n) and not _none_tested(n):
            reads.setdefault(node_text(n), []).append(n.start_byte)
        stack.extend(n.named_children)
    out: set[str] = set()
    for name, found in guards.items():
        if len(found) != 1 or found[0].parent is None:
            continue
        after, end = found[0].end_byte, found[0].parent.end_byte
        if all(after <= at < end for at in reads.get(name, [])):
            out.add(name)
    return out


def _none_guard(stmt: Node) -> str | None:
    """``x`` of ``if x is None: x = value`` or ``if not x: x = value`` (no ``elif`` / ``else``;
    the assignment first in the block, nothing after it binding ``x`` again)."""
    if stmt.child_by_field_name("alternative") is not None:
        return None
    cond, then = stmt.child_by_field_name("condition"), stmt.child_by_field_name("consequence")
    if cond is None:
        return None
    parts = [c.type for c in cond.children] if cond.type == "comparison_operator" else []
    # `if x is None:`, or `if not x:` (`None` is false too)
    tested = cond.children[0] if parts == ["identifier", "is", "none"] else None
    if cond.type == "not_operator":
        tested = cond.child_by_field_name("argument")
    if tested is None or tested.type != "identifier":
        return None
    statements = then.named_children if then is not None else []
    assign = statements[0] if statements else None
    if assign is not None and assign.type == "expression_statement":
        assign = assign.named_children[0] if assign.named_child_count == 1 else None
    if assign is None or assign.type != "assignment" or assign.child_by_field_name("type") is not None:
        return None
    left, name = assign.child_by_field_name("left"), node_text(tested)
    right = assign.child_by_field_name("right")
    ok = left is not None and left.type == "identifier" and node_text(left) == name
    ok = ok and right is not None and right.type != "assignment"
    return name if ok and not any(_rebinds(s, name) for s in statements[1:]) else None


def _or_guard(stmt: Node) -> str | None:
    """``x`` of the statement ``x = x or value`` in a block (``value`` not an assignment)."""
    if stmt.parent is None or stmt.parent.type != "block":
        return None
    assign = stmt
    if stmt.type == "expression_statement":
        assign = stmt.named_children[0] if stmt.named_child_count == 1 else stmt
    if assign.type != "assignment" or assign.child_by_field_name("type") is not None:
        return None
    left, right = assign.child_by_field_name("left"), assign.child_by_field_name("right")
    value = or_value(right)
    tested = right.child_by_field_name("left") if right is not None and value is not None else None
    same = left is not None and tested is not None and left.type == "identifier" == tested.type
    return node_text(left) if same and left is not None and node_text(left) == node_text(tested) else None


def or_value(node: Node | None) -> Node | None:
    """``value`` of ``x or value`` (``x`` a name; ``value`` not an assignment), else None."""
    if node is None or node.type != "boolean_operator":
        return None
    operator = node.child_by_field_name("operator")
    tested, value = node.child_by_field_name("left"), node.child_by_field_name("right")
    if operator is None or operator.type != "or" or tested is None or tested.type != "identifier":
        return None
    return value if value is not None and value.type != "assignment" else None


def _none_tested(n: Node) -> bool:
    """Whether a name is only tested there (``x is None``, ``x is not None``, ``not x``): its
    value is neither used nor copied."""
    p = n.parent
    if p is not None and p.type == "not_operator":
        return True
    parts = p.named_children if p is not None and p.type == "comparison_operator" else []
    return len(parts) == 2 and parts[1].type == "none" and parts[0].start_byte == n.start_byte


def _member_name(n: Node) -> bool:
    """Whether an identifier names a member, a keyword or a module (``o.x``, ``f(x=1)``,
    ``import http.cookiejar``), not a variable read."""
    p = n.parent
    if p is None or p.type == "dotted_name":
        return p is not None
    field = "attribute" if p.type == "attribute" else "name" if p.type == "keyword_argument" else ""
    other = p.child_by_field_name(field) if field else None
    return other is not None and other.start_byte == n.start_byte


def _isinstance_guard(stmt: Node) -> str | None:
    if stmt.type != "if_statement" or stmt.child_by_field_name("alternative") is not None:
        return None
    cond, then = stmt.child_by_field_name("condition"), stmt.child_by_field_name("consequence")
    call = cond.child_by_field_name("argument") if cond is not None and cond.type == "not_operator" else None
    args = call.child_by_field_name("arguments") if call is not None and call.type == "call" else None
    if call is None or args is None or node_text(call.child_by_field_name("function")) != "isinstance":
        return None
    pair = args.named_children
    if len(pair) != 2 or pair[0].type != "identifier" or pair[1].type not in ("identifier", "attribute"):
        return None
    name, cls = node_text(pair[0]), node_text(pair[1])
    only = then.named_children if then is not None else []
    assign = only[0] if len(only) == 1 else None
    if assign is not None and assign.type == "expression_statement":
        assign = assign.named_children[0] if assign.named_child_count == 1 else None
    if assign is None or assign.type != "assignment" or node_text(assign.child_by_field_name("left")) != name:
        return None
    callee = _callee(assign.child_by_field_name("right"))
    return name if callee is not None and node_text(callee) == cls else None


def _receivers(node: Node) -> set[str]:
    """Names used as the object of an attribute anywhere below ``node``."""
    out: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "attribute":
            obj = n.child_by_field_name("object")
            if obj is not None and obj.type == "identifier":
                out.add(node_text(obj))
        stack.extend(n.named_children)
    return out

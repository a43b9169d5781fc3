"""Where ``isinstance`` narrows a Python name, read from the tree for
:mod:`.python_bindings`: the block of ``if isinstance(x, C):`` (``_isinstance_tests``),
the statements after ``assert isinstance(x, C)`` (``_asserted``) and a guard at the top
of a function that converts a parameter (``if not isinstance(x, C): x = C(…)``,
``_guarded``)."""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from .base import node_text
from .python_types import _callee, _dotted


def _isinstance_tests(node: Node) -> list[tuple[str, Node, Node]]:
    """``(name, class, block)`` for each ``isinstance(name, C)`` an ``if`` / ``elif`` condition
    asserts (alone or in an ``and``), when the block never rebinds the name: inside it the
    name holds a ``C``. A tuple of classes, an attribute (``self.x``: a call may change it)
    or a rebinding in the block narrows nothing."""
    cond, block = node.child_by_field_name("condition"), node.child_by_field_name("consequence")
    if cond is None or block is None:
        return []
    return [(name, cls, block) for name, cls in _tested(cond) if not _rebinds(block, name)]


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

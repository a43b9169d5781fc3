"""Generic signatures of the Swift SDK the graph may read: a closure whose parameter is the
receiver's generic argument.

``self.storage.withLock { $0.insert(instance) }`` calls ``insert`` on the ``Value`` of
``storage: Mutex<Value>``: the Synchronization module declares ``withLock(_ body: (inout
Value) throws(E) -> Result)``. That declaration is outside the index, so ``$0`` has no
type the code states and ``$0.insert`` stays unresolved. :data:`SIGNATURES` states such
declarations of the SDK's published API, one entry each, and the graph reads them only
where the code states the rest:

* the receiver's type is written with its generic argument, in the same file as an
  ``import`` of the entry's module: a property, local or parameter annotated ``Mutex<Foo>``
  (``Foo?``, ``A.B`` too) or initialised ``Mutex<Foo>(…)``; ``Mutex(Foo())`` states
  nothing, nor does a generic parameter (``Mutex<T>``);
* ``$0`` is the first parameter of the closure that is the call's trailing closure, or its
  one unlabelled argument (``withLock({ … })``: the SDK's parameter is ``_ body``, so a
  ``body:`` label is some other method), not of a closure nested inside it;
* no type of the entry's name is defined in the workspace (a project's own ``Mutex`` wins:
  its ``withLock`` says what its closure gets, which the graph does not read), nor a
  method of the entry's name in an extension of it (an overload the table does not know).

The binder (:mod:`.swift_bindings`) binds ``storage{withLock$0}`` — what the closure of
``storage.withLock`` gets — to a reference edge at ``Foo``; the parser writes the call
``$0.insert`` there as ``self.storage{withLock$0}.insert``, which the resolver walks as it
walks ``self.storage.x``. Anything else stays unresolved with its candidates, as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Node

from ..model import EdgeKind
from .base import node_text
from .bindings import Point, captures, compiled_query

# an edge as ``edges.py`` collects it: (line, byte column, order found, kind, scope, to_name,
# end line, end byte column, module, alias)
Row = tuple[int, int, int, EdgeKind, str, str, int, int, str, str]


@dataclass(frozen=True, slots=True)
class ClosureValue:
    """``type<Value>.method(_ body: (inout Value) … )``, declared in ``module``: the first
    parameter of the closure passed to ``method`` is the receiver's first generic argument."""

    module: str
    type: str
    method: str


SIGNATURES = (
    # Synchronization (Swift 6): `struct Mutex<Value: ~Copyable>`,
    # `borrowing func withLock<Result, E>(_ body: (inout sending Value) throws(E) -> sending Result)`
    ClosureValue("Synchronization", "Mutex", "withLock"),
    # the same closure type; the result is optional (nil when the lock is taken)
    ClosureValue("Synchronization", "Mutex", "withLockIfAvailable"),
    # swift-nio's NIOConcurrencyHelpers: `struct NIOLockedValueBox<Value>`,
    # `func withLockedValue<T>(_ mutate: (inout Value) throws -> T) rethrows -> T`
    ClosureValue("NIOConcurrencyHelpers", "NIOLockedValueBox", "withLockedValue"),
)
_BY_TYPE: dict[str, list[ClosureValue]] = {}
for _entry in SIGNATURES:
    _BY_TYPE.setdefault(_entry.type, []).append(_entry)
# one entry a method name: a bound name's suffix names its entry (a unit test holds it)
_BY_METHOD = {entry.method: entry for entry in SIGNATURES}

ARGUMENT = "$0"  # the closure's first parameter, as Swift writes it
_LABEL = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\$0\}$")


def label(method: str) -> str:
    """The suffix of the name bound to what the closure of ``method`` gets: ``{withLock$0}``."""
    return "{" + method + ARGUMENT + "}"


def labelled(name: str) -> ClosureValue | None:
    """The entry whose method a bound name's suffix names (``Mutex.withLock`` for
    ``self.storage{withLock$0}``), or None for any other name."""
    found = _LABEL.search(name) if name.endswith("}") else None
    return _BY_METHOD.get(found.group(1)) if found is not None else None


def imported_modules(root: Node) -> set[str]:
    """The modules a file imports (``import Synchronization``, ``import struct
    Synchronization.Mutex``, ``@preconcurrency import X``, inside ``#if`` too)."""
    out: set[str] = set()
    for _, node in captures(compiled_query("swift", "(import_declaration) @i"), root):
        ident = next((c for c in node.named_children if c.type == "identifier"), None)
        if ident is not None and ident.named_child_count:
            out.add(node_text(ident.named_children[0]))
    return out


def stated_value(declared: Node | None, modules: set[str]) -> tuple[list[ClosureValue], Node] | None:
    """The table's entries for a type written ``Mutex<Foo>`` (``Synchronization.Mutex<Foo>``)
    and the node of ``Foo``'s last name, when the file imports the entry's module and the
    argument is a plain type name (``Foo``, ``A.B``, ``Foo?``); else None."""
    if declared is None or declared.type != "user_type":
        return None
    names = [c for c in declared.named_children if c.type == "type_identifier"]
    arguments = [c for c in declared.named_children if c.type == "type_arguments"]
    if not names or len(arguments) != 1 or arguments[0] != declared.named_children[-1]:
        return None
    entries = [e for e in _BY_TYPE.get(node_text(names[-1]), []) if e.module in modules]
    qualified = [node_text(n) for n in names[:-1]]
    if not entries or (qualified and qualified != [entries[0].module]):
        return None
    inner = arguments[0].named_children
    if len(inner) != 1:
        return None
    value: Node | None = inner[0]
    if value is not None and value.type == "optional_type":  # `Mutex<Foo?>`: `$0?.m()` calls Foo's `m`
        value = value.child_by_field_name("wrapped")
    if value is None or value.type != "user_type":
        return None
    parts = value.named_children
    if not parts or any(p.type != "type_identifier" for p in parts):
        return None  # `Mutex<[Foo]>`, `Mutex<Box<Foo>>`: not a Foo
    return entries, parts[-1]


def closure_rows(found: list[Row], values: list[Node], root: Node, at: Callable[[int], str]) -> list[Row]:
    """One file's edges (sorted) with a reference edge at each type argument that says what a
    closure gets (``Foo`` of ``Mutex<Foo>``: the binder's ``values``, which carry its marks),
    and each call or reference on such a closure's ``$0`` written through its receiver
    (``$0.insert`` → ``self.storage{withLock$0}.insert``). ``at`` names the scope of a byte."""
    ends = {(row[6], row[7]) for row in found}
    added: list[Row] = []
    for node in values:
        (r0, c0), (r1, c1) = node.start_point, node.end_point
        if (r1, c1) not in ends:
            written = node_text(node.parent or node)  # `A.B` of `Mutex<A.B>`
            added.append(
                (
                    r0,
                    c0,
                    len(found) + len(added),
                    EdgeKind.REFERENCE,
                    at(node.start_byte),
                    written,
                    r1,
                    c1,
                    "",
                    "",
                )
            )
    rows = sorted(found + added) if added else found
    callees = {(row[6], row[7]): row[5] for row in rows if row[3] is EdgeKind.CALL}
    on_argument = any(name.startswith(ARGUMENT + ".") for name in callees.values())
    receivers = closure_receivers(root, callees) if on_argument else {}
    if not receivers:
        return rows
    out: list[Row] = []
    for row in rows:
        receiver = receivers.get((row[6], row[7])) if row[5].startswith(ARGUMENT + ".") else None
        out.append(row if receiver is None else (*row[:5], receiver + row[5][len(ARGUMENT) :], *row[6:]))
    return out


def closure_receivers(root: Node, callees: dict[Point, str]) -> dict[Point, str]:
    """Where an edge on ``$0`` ends (``$0.insert`` of ``self.storage.withLock { $0.insert(x)
    }``) → what ``$0`` is written as for the resolver (``self.storage{withLock$0}``), for
    each ``$0`` of a closure passed to a method of the table. ``callees`` gives the name
    written for each call edge by where it ends (``self.storage.withLock``)."""
    out: dict[Point, str] = {}
    for _, node in captures(compiled_query("swift", '((simple_identifier) @a (#eq? @a "$0"))'), root):
        chain = node
        while chain.parent is not None and chain.parent.type == "navigation_expression":
            if chain.parent.child_by_field_name("target") != chain:
                break
            chain = chain.parent
        if chain is node:
            continue  # `$0` alone, no member of it
        receiver = _receiver(_closure(node), callees)
        if receiver is not None:
            out[(chain.end_point.row, chain.end_point.column)] = receiver
    return out


def _closure(node: Node) -> Node | None:
    """The closure ``$0`` belongs to: the innermost one around it."""
    up = node.parent
    while up is not None and up.type != "lambda_literal":
        up = up.parent
    return up


def _receiver(closure: Node | None, callees: dict[Point, str]) -> str | None:
    """``R{m$0}`` when ``closure`` is the trailing closure or the one unlabelled argument of a
    call ``R.m(…)`` whose ``m`` is a method of the table and ``R`` a plain dotted name."""
    if closure is None or any(c.type == "lambda_function_type" for c in closure.named_children):
        return None
    holder = closure.parent
    if holder is not None and holder.type == "value_argument":
        argument = holder
        if argument.child_by_field_name("name") is not None or any(
            c.type == "value_argument_label" for c in argument.named_children
        ):
            return None  # `withLock(body: { … })`: the SDK's parameter has no label
        arguments = argument.parent
        if arguments is None or sum(c.type == "value_argument" for c in arguments.named_children) != 1:
            return None
        holder = arguments.parent
        if holder is None or any(c.type == "lambda_literal" for c in holder.named_children):
            return None
    elif holder is not None and holder.type == "call_suffix":
        given = [c for c in holder.named_children if c.type == "value_arguments"]
        if any(c.type == "value_argument" for g in given for c in g.named_children):
            return None  # `withLock(x) { … }`: not the one-parameter method
        if sum(c.type == "lambda_literal" for c in holder.named_children) != 1:
            return None
    else:
        return None
    call = holder.parent if holder is not None and holder.type == "call_suffix" else None
    callee = call.named_children[0] if call is not None and call.named_child_count else None
    if call is None or callee is None or callee.type != "navigation_expression":
        return None
    written = callees.get((callee.end_point.row, callee.end_point.column), "")
    receiver, _, method = written.rpartition(".")
    parts = receiver.split(".")
    plain = all(p and p != "?" and p[0] != "$" and not p.endswith(")") and "{" not in p for p in parts)
    if method not in _BY_METHOD or not receiver or not plain:
        return None
    return receiver + label(method)

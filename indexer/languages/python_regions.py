"""Straight-line regions of a function where a Python name holds one value.

Within a block, a statement's binding holds up to the first later statement of the
block that binds the name again (or the block's end). :mod:`.python_bindings` turns
each region into a narrowed name (``x#12c4``) bound to that value
(:attr:`.bindings.Marks.narrowed`); a function made inside a region is left out of it
(the name may be rebound before it runs). The regions:

* after ``x = value``, for a name whose bindings in the scope disagree;
* before the statement that first binds again a parameter holding what a caller passes
  (``if x is None: x = C()``): only the caller's value;
* after ``x = p`` / ``self.x = p`` of such a name: the caller's value again.
"""

from __future__ import annotations

import bisect
from collections.abc import Collection

from tree_sitter import Node

from .bindings import _PASSED, _UNTYPED, Found, Point, _agreed, _Binding, _copied, narrowed_name


def _point(p: tuple[int, int]) -> Point:
    return (p[0], p[1])


Region = tuple[
    Point, Point, str, str, list[tuple[Point, Point]]
]  # start, end, name, narrowed name, functions


def _assigned_regions(
    assigned: list[tuple[str, Node, str, _Binding]],
    found: Found,
    spots: dict[str, list[int]],
    functions: list[tuple[int, int, Point, Point]],
) -> list[Region]:
    """Straight-line flow: after ``x = value`` (a statement of a function's block), up to the
    first later statement of that block that binds ``x`` again (or the block's end), ``x``
    holds that value — a narrowed name bound to it, as an ``isinstance`` block's is. Only
    for a name whose bindings in the scope disagree (else the scope already types it) and
    that no annotation declares (a declared type wins, as for a type checker). ``spots``:
    where each name is bound (any scope: a nested function's parameter ends it too, as a
    ``del`` does); ``functions``: every def, lambda and class, sorted (in one made in the
    region the name may be rebound before it runs)."""
    out: list[Region] = []
    typed: dict[tuple[str, str], bool] = {}  # (scope, name) → already typed (or no need)
    for scope, node, name, b in assigned:
        stmt = node.parent if node.parent is not None and node.parent.type == "expression_statement" else node
        block = stmt.parent
        if b.how in ("unknown", "none") or block is None or block.type != "block":
            continue
        skip = typed.get((scope, name))
        if skip is None:
            bindings = found.get(("local", scope, name), [])
            declared = any(x.how == "ann" for x in bindings)
            skip = len(bindings) < 2 or declared or bool(_agreed(_copied(found, bindings, set())))
            typed[(scope, name)] = skip
        if skip:
            continue
        after = _region_after(stmt, name, spots, functions)
        if after is None:
            continue  # the next statement binds the name again
        end, nested = after
        narrowed = narrowed_name(name, stmt.start_point)
        found[("local", scope, narrowed)].append(b)
        out.append((_point(stmt.end_point), end, name, narrowed, nested))
    return out


def _parameter_regions(
    params: list[tuple[str, Node, list[str]]],
    found: Found,
    spots: dict[str, list[int]],
    functions: list[tuple[int, int, Point, Point]],
    tests: list[tuple[str, int, int, str, str]],
) -> list[Region]:
    """A parameter that holds what a caller passes (no annotation, no default or a ``None``
    one) and that its function binds again: before the body's statement holding the first
    such binding, it is only the caller's value — uses there (and copies made there, through
    ``tests``) read a narrowed name that is untyped, though the name holds the later stated
    value (``if x is None: x = C()``) for the rest of the function."""
    out: list[Region] = []
    for scope, fn, names in params:
        body = fn.child_by_field_name("body")
        if body is None or not body.named_children:
            continue
        for name in names:
            at = sorted(s for s in spots.get(name, []) if body.start_byte <= s < body.end_byte)
            if not at:
                continue
            stmt = next((c for c in body.named_children if c.start_byte <= at[0] < c.end_byte), None)
            if stmt is None or stmt.start_byte == body.named_children[0].start_byte:
                continue
            narrowed = narrowed_name(name, body.start_point)
            found[("local", scope, narrowed)].append(_PASSED)
            tests.append((scope, body.start_byte, stmt.start_byte, name, narrowed))
            nested = _functions_between(functions, body.start_byte, stmt.start_byte)
            out.append((_point(body.start_point), _point(stmt.start_point), name, narrowed, nested))
    return out


def _copy_regions(
    copies: list[tuple[str, Node, str, str]],
    found: Found,
    spots: dict[str, list[int]],
    functions: list[tuple[int, int, Point, Point]],
    classes: Collection[str],
) -> list[Region]:
    """After ``x = p`` / ``self.x = p`` of a name that holds only what a caller passes, up to
    the block's next statement that binds the target again: the target is that value (a
    narrowed name, untyped), though its other bindings state a class for the rest of the
    scope — right after ``self.h = h``, ``self.h.m()`` is the caller's object."""
    out: list[Region] = []
    for scope, node, target, source in copies:
        bindings = found.get(("local", scope, source), [])
        values = _copied(found, bindings, set())
        if not values or any(b.how not in _UNTYPED for b in values) or all(b.how == "none" for b in values):
            continue
        owner = scope.rpartition(".")[0]
        key = ("attr", owner, target[5:]) if target.startswith("self.") else ("local", scope, target)
        if key[0] == "attr" and owner not in classes:
            continue
        if len(found.get(key, [])) < 2:
            continue  # the copy is all the target holds: untyped already
        stmt = node.parent if node.parent is not None and node.parent.type == "expression_statement" else node
        after = _region_after(stmt, target, spots, functions)
        if after is None:
            continue
        end, nested = after
        narrowed = narrowed_name(target, stmt.start_point)
        if key[0] == "local":
            found[("local", scope, narrowed)].append(_PASSED)
        out.append((_point(stmt.end_point), end, target, narrowed, nested))
    return out


def _region_after(
    stmt: Node, name: str, spots: dict[str, list[int]], functions: list[tuple[int, int, Point, Point]]
) -> tuple[Point, list[tuple[Point, Point]]] | None:
    """Where the value ``stmt`` binds to ``name`` holds: up to the first later statement of its
    block that binds ``name`` again (or the block's end), with the functions made there (in
    them it may be rebound before they run); None when the next statement rebinds it."""
    block = stmt.parent
    if block is None or block.type != "block":
        return None
    at = sorted(spots.get(name, []))
    i = bisect.bisect_right(at, stmt.end_byte)
    stop = at[i] if i < len(at) else block.end_byte
    sibling, last = stmt.next_named_sibling, None
    while sibling is not None and sibling.end_byte <= stop:
        last, sibling = sibling, sibling.next_named_sibling
    if last is None:
        return None
    end = _point(sibling.start_point) if sibling is not None else _point(block.end_point)
    end_byte = sibling.start_byte if sibling is not None else block.end_byte
    return end, _functions_between(functions, stmt.end_byte, end_byte)


def _functions_between(
    functions: list[tuple[int, int, Point, Point]], start: int, end: int
) -> list[tuple[Point, Point]]:
    """The spans of the functions (sorted by start) made between two bytes."""
    starts = [f[0] for f in functions]
    return [
        (f[2], f[3])
        for f in functions[bisect.bisect_left(starts, start) : bisect.bisect_left(starts, end)]
        if f[1] <= end
    ]

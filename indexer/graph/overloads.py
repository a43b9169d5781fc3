"""Java overloads of one argument count told apart by the argument types the code states
(``Edge.arg_types``) against each overload's parameter types (``Symbol.params``; the
notation is :mod:`..languages.java_types`'s).

Java picks in phases (JLS 15.12.2): strict (identity, primitive widening, subtyping),
loose (+ boxing and unboxing), varargs; the first phase in which some overload is
applicable chooses among that phase's applicable ones. Here each overload is, in each
phase, applicable (``YES``), possibly applicable (``MAYBE``: an argument whose type is not
known, a relation between types outside the workspace, a bounded type variable) or not
(``NO``). The overloads that might be Java's choice are those not ``NO`` in the phases up
to the first one in which some overload is surely applicable; a call resolves only when
that is one overload. Never by "most specific": two applicable stay candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import IntEnum

UNKNOWN = "?"


class Fit(IntEnum):
    NO = 0
    MAYBE = 1
    YES = 2


_PRIMITIVES = frozenset({"byte", "short", "char", "int", "long", "float", "double", "boolean"})
# primitive widening (JLS 5.1.2): what each widens to
_WIDER = {
    "byte": {"short", "int", "long", "float", "double"},
    "short": {"int", "long", "float", "double"},
    "char": {"int", "long", "float", "double"},
    "int": {"long", "float", "double"},
    "long": {"float", "double"},
    "float": {"double"},
    "double": set(),
    "boolean": set(),
}
_BOX = {
    "byte": "Byte",
    "short": "Short",
    "char": "Character",
    "int": "Integer",
    "long": "Long",
    "float": "Float",
    "double": "Double",
    "boolean": "Boolean",
}
_UNBOX = {v: k for k, v in _BOX.items()}
_NUMBER = ("Number", "Comparable", "Serializable", "Constable")
# the supertypes of final java.lang classes (each is also itself and ``Object``): an
# argument of one of these is a subtype of exactly these
FINAL_SUPERTYPES: dict[str, frozenset[str]] = {
    "String": frozenset({"CharSequence", "Comparable", "Serializable", "Constable", "ConstantDesc"}),
    "Integer": frozenset({*_NUMBER, "ConstantDesc"}),
    "Long": frozenset({*_NUMBER, "ConstantDesc"}),
    "Float": frozenset({*_NUMBER, "ConstantDesc"}),
    "Double": frozenset({*_NUMBER, "ConstantDesc"}),
    "Short": frozenset(_NUMBER),
    "Byte": frozenset(_NUMBER),
    "Character": frozenset({"Comparable", "Serializable", "Constable"}),
    "Boolean": frozenset({"Comparable", "Serializable", "Constable"}),
    "Class": frozenset(
        {"Serializable", "GenericDeclaration", "Type", "AnnotatedElement", "TypeDescriptor", "OfField"}
    ),
}
# what an array is a subtype of besides arrays
_ARRAY_SUPERTYPES = frozenset({"Object", "Cloneable", "Serializable"})

#: whether a class (simple name) is a subtype of another: ``Fit.MAYBE`` when not known
Subtype = Callable[[str, str], Fit]


def _split(t: str) -> tuple[str, int, bool, bool]:
    """(element, dimensions, type variable, bounded) of one type of the notation."""
    dims = 0
    while t.endswith("[]"):
        t, dims = t[:-2], dims + 1
    if t.startswith("'"):
        bounded = t.endswith(":")
        return t[1:].rstrip(":"), dims, True, bounded
    return t, dims, False, False


def _convert(arg: str, param: str, loose: bool, subtype: Subtype) -> Fit:
    """Whether an argument of type ``arg`` goes to a parameter of type ``param``."""
    if arg == UNKNOWN or param == UNKNOWN or not arg or not param:
        return Fit.MAYBE
    pe, pd, tvar, bounded = _split(param)
    if arg == "null":
        return Fit.NO if pd == 0 and not tvar and pe in _PRIMITIVES else Fit.YES
    ae, ad, a_tvar, a_bounded = _split(arg)
    if a_tvar:
        return _convert_type_variable(ad, a_bounded, (pe, pd, tvar, bounded), loose)
    a_prim = ad == 0 and ae in _PRIMITIVES
    if tvar:
        sure = Fit.MAYBE if bounded else Fit.YES
        if a_prim:  # `<T> f(T)` with an int: T is Integer, by boxing
            return sure if loose and pd == 0 else Fit.NO
        if ad < pd:
            return Fit.NO
        if ad == pd and ae in _PRIMITIVES:
            return Fit.NO  # T[] takes no int[]: T is never a primitive
        return sure
    if pd == 0 and pe in _PRIMITIVES:
        if a_prim:
            return Fit.YES if ae == pe or pe in _WIDER[ae] else Fit.NO
        if ad == 0 and ae in _UNBOX and loose:
            p = _UNBOX[ae]
            return Fit.YES if p == pe or pe in _WIDER[p] else Fit.NO
        return Fit.NO
    if a_prim:  # a primitive to a reference parameter: by boxing, loose only
        if not loose:
            return Fit.NO
        box = _BOX[ae]
        return Fit.YES if pe in (box, "Object") or pe in FINAL_SUPERTYPES[box] else Fit.NO
    if pd == 0:
        if ad > 0:
            return Fit.YES if pe in _ARRAY_SUPERTYPES else Fit.NO
        return subtype(ae, pe)
    if ad < pd:
        return Fit.NO
    if ad > pd:
        return Fit.YES if pe in _ARRAY_SUPERTYPES else Fit.NO
    if ae in _PRIMITIVES or pe in _PRIMITIVES:
        return Fit.YES if ae == pe else Fit.NO
    return subtype(ae, pe)


def _convert_type_variable(ad: int, a_bounded: bool, param: tuple[str, int, bool, bool], loose: bool) -> Fit:
    """An argument whose type is a type variable of the caller (``'T``, ``'T[]``): a
    reference of a class not known, never an array (a bound is never an array type)."""
    pe, pd, tvar, bounded = param
    if pd == 0 and not tvar and pe in _PRIMITIVES:
        # unboxing through a bound (`T extends Integer`) is not read
        return Fit.MAYBE if loose and ad == 0 and a_bounded else Fit.NO
    if ad < pd:
        return Fit.NO
    if tvar:
        return Fit.MAYBE if bounded else Fit.YES
    if ad > pd or (ad and not pd):
        return Fit.YES if pe in _ARRAY_SUPERTYPES else Fit.NO
    if pe in _PRIMITIVES:
        return Fit.NO
    return Fit.YES if pe == "Object" else Fit.MAYBE


def _all(fits: Sequence[Fit]) -> Fit:
    return min(fits, default=Fit.YES)


def applicable(params: str, args: Sequence[str], phase: int, subtype: Subtype) -> Fit:
    """Whether an overload of parameters ``params`` is applicable to ``args`` in ``phase``
    (1 strict, 2 loose, 3 varargs)."""
    if not params and args:
        return Fit.MAYBE  # parameters not known
    ps = params.split(",") if params else []
    varargs = bool(ps) and ps[-1].endswith("...")
    if phase < 3:
        if varargs:
            ps = [*ps[:-1], ps[-1][:-3] + "[]"]
        if len(ps) != len(args):
            return Fit.NO
        return _all([_convert(a, p, phase == 2, subtype) for a, p in zip(args, ps, strict=True)])
    if not varargs or len(args) < len(ps) - 1:
        return Fit.NO
    fixed, element = ps[:-1], ps[-1][:-3]
    fits = [_convert(a, p, True, subtype) for a, p in zip(args, fixed, strict=False)]
    fits += [_convert(a, element, True, subtype) for a in args[len(fixed) :]]
    return _all(fits)


def choices(overloads: Sequence[tuple[str, object]], arg_types: str, subtype: Subtype) -> list[object]:
    """The overloads (``(params, what)`` pairs) that might be Java's choice for a call of
    ``arg_types``: those possibly applicable in the phases up to the first one with a
    surely applicable overload, in their order."""
    args = arg_types.split(",")
    found: dict[int, object] = {}
    for phase in (1, 2, 3):
        sure = False
        for i, (params, what) in enumerate(overloads):
            fit = applicable(params, args, phase, subtype)
            if fit is not Fit.NO:
                found.setdefault(i, what)
            sure = sure or fit is Fit.YES
        if sure:
            break
    return [found[i] for i in sorted(found)]

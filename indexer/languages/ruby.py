"""Ruby: classes, modules, methods and singleton methods."""

from __future__ import annotations

from typing import ClassVar

from ..model import SymbolKind
from .base import Mapping, Role, Rule


class RubyMapping(Mapping):
    """A ``module`` chunks like a class (mixins carry methods); its symbol is a module."""

    rules: ClassVar[dict[str, Rule]] = {
        "class": Rule(SymbolKind.CLASS, Role.CLASS),
        "module": Rule(SymbolKind.MODULE, Role.CLASS),
        "method": Rule(SymbolKind.FUNCTION, Role.FUNCTION),
        "singleton_method": Rule(SymbolKind.METHOD, Role.FUNCTION),
    }
    constructor_names = frozenset({"initialize"})

"""Which mapping a language uses: a specific one, or the generic rule."""

from __future__ import annotations

from .base import GenericMapping, Mapping
from .c_family import CMapping, CppMapping
from .elixir import ElixirMapping
from .go import GoMapping
from .haskell import HaskellMapping
from .java_family import CSharpMapping, JavaMapping, KotlinMapping
from .lua import LuaMapping
from .php import PhpMapping
from .python import PythonMapping
from .ruby import RubyMapping
from .rust import RustMapping
from .swift import SwiftMapping
from .web import JavaScriptMapping

_SPECIFIC: dict[str, type[Mapping]] = {
    "python": PythonMapping,
    "javascript": JavaScriptMapping,
    "typescript": JavaScriptMapping,
    "tsx": JavaScriptMapping,
    "go": GoMapping,
    "rust": RustMapping,
    "java": JavaMapping,
    "c": CMapping,
    "cpp": CppMapping,
    "cuda": CppMapping,
    "csharp": CSharpMapping,
    "swift": SwiftMapping,
    "kotlin": KotlinMapping,
    "ruby": RubyMapping,
    "php": PhpMapping,
    "haskell": HaskellMapping,
    "elixir": ElixirMapping,
    "lua": LuaMapping,
}


def mapping_for(language: str) -> Mapping:
    """A fresh mapping for a tree-sitter-language-pack language name.

    Mappings are cheap, stateless apart from a per-instance cache, and not shared
    between threads: the parser keeps one per thread and language.
    """
    return _SPECIFIC.get(language, GenericMapping)()


def has_specific_mapping(language: str) -> bool:
    """Whether the language has hand-written definitions (and so full symbols)."""
    return language in _SPECIFIC

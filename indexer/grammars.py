"""Tree-sitter grammars: the language pack's, except where a newer one is pinned.

``tree-sitter-language-pack`` bundles one grammar per language at the version of
its release; for Swift that grammar fails on today's code (typed ``throws(E)``,
``borrowing`` / ``consume``), so the standalone ``tree-sitter-swift`` wheel
replaces it. A replacement that does not import or load falls back to the pack.
"""

from __future__ import annotations

import importlib
import logging
from typing import cast

from tree_sitter import Language, Parser
from tree_sitter_language_pack import SupportedLanguage, get_language

log = logging.getLogger(__name__)

#: language → the module of a newer grammar (its ``language()`` gives the pointer)
NEWER = {"swift": "tree_sitter_swift"}
_loaded: dict[str, Language] = {}


def language(name: str) -> Language:
    """The grammar of ``name``; raises like the pack for a language it does not know."""
    found = _loaded.get(name)
    if found is None:
        found = _newer(name) or get_language(cast(SupportedLanguage, name))
        _loaded[name] = found
    return found


def parser(name: str) -> Parser:
    """A new parser for ``name`` (parsers are not shared between threads)."""
    return Parser(language(name))


def _newer(name: str) -> Language | None:
    module = NEWER.get(name)
    if module is None:
        return None
    try:
        return Language(importlib.import_module(module).language())
    except Exception:  # not installed, or an ABI this tree-sitter cannot load
        log.warning("the %s grammar %s does not load; using the language pack's", name, module, exc_info=True)
        return None

"""Workspace-relative paths as the index stores them: always valid UTF-8, never lossy.

POSIX file names are bytes. Python hands a name that is not UTF-8 over as a str
holding lone surrogates (``os.fsdecode``'s surrogateescape), which Arrow,
LanceDB, JSON and the terminal all refuse. The index therefore stores such a
path the way git prints it (``core.quotePath``): in double quotes, each byte
that is not UTF-8 as a three-digit octal escape, ``\\`` and ``"`` escaped::

    latin1_\\xff.py (bytes)  →  "latin1_\\377.py"

A path is quoted only when it needs to be: when it holds a byte that does not
decode, or when it starts with ``"`` (so a plain path never looks quoted). The
mapping is one-to-one, so ``os_path(index_path(p)) == p`` for every name, and
every ordinary path is stored exactly as it is.
"""

from __future__ import annotations

import os
import re

_QUOTE = '"'
_ESCAPE = re.compile(r'\\([0-7]{3}|\\|")')


def _has_surrogate(text: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in text)


def index_path(os_rel: str) -> str:
    """The stored form of a workspace-relative path given as ``os.fsdecode`` gives it."""
    if not _has_surrogate(os_rel) and not os_rel.startswith(_QUOTE):
        return os_rel
    out: list[str] = []
    for ch in os_rel:
        if "\udc80" <= ch <= "\udcff":
            out.append(f"\\{ord(ch) - 0xDC00:03o}")
        elif ch in '\\"':
            out.append("\\" + ch)
        else:
            out.append(ch)
    return _QUOTE + "".join(out) + _QUOTE


def os_path(stored: str) -> str:
    """The path to hand to the OS for a stored path (the inverse of ``index_path``)."""
    if len(stored) < 2 or not (stored.startswith(_QUOTE) and stored.endswith(_QUOTE)):
        return stored

    def unescape(match: re.Match[str]) -> str:
        code = match.group(1)
        if len(code) == 1:
            return code
        # An octal escape stands for one raw byte: bytes ≥ 0x80 that did not decode.
        return os.fsdecode(bytes([int(code, 8)]))

    return _ESCAPE.sub(unescape, stored[1:-1])

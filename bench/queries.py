"""Real queries for latency figures: sentences people wrote about the code, and names in it."""

from __future__ import annotations

import ast
import random
import re
from pathlib import Path

from codesift.indexer.store import Store

_SENTENCE = re.compile(r"(.+?[.!?])(\s|$)")


def docstring_queries(root: Path, n: int, seed: int = 7) -> list[str]:
    """First sentences of public functions' docstrings under root: n distinct, 4-14 words."""
    found: set[str] = set()
    files = sorted(root.rglob("*.py"))
    random.Random(seed).shuffle(files)
    for path in files:
        if ".codesift" in path.parts:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith("_"):
                doc = ast.get_docstring(node)
                if not doc:
                    continue
                text = " ".join(doc.split())
                m = _SENTENCE.match(text)
                sentence = (m.group(1) if m else text).strip()
                if 4 <= len(sentence.split()) <= 14:
                    found.add(sentence)
        if len(found) >= n * 3:
            break
    return random.Random(seed).sample(sorted(found), min(n, len(found)))


def symbol_names(store: Store, n: int, seed: int = 11, min_len: int = 5) -> list[str]:
    """n distinct names of functions and classes from the symbols table."""
    tbl = store.table("symbols")
    names = tbl.search().select(["name"]).limit(None).to_arrow().column("name").to_pylist()
    pool = sorted({x for x in names if len(x) >= min_len and not x.startswith("_")})
    return random.Random(seed).sample(pool, min(n, len(pool)))


def words_of(name: str) -> str:
    """``spin_lock_irqsave`` / ``parseHeader`` → ``spin lock irqsave`` / ``parse header``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ")
    return " ".join(spaced.lower().split())

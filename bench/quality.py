"""Retrieval quality on the standard library, CodeSearchNet style.

The first sentence of each public function's docstring is the query; that
function is the answer; docstrings are stripped from the indexed copy so the
query's words are not simply found in the answer. Reports MRR@10 and
Recall@1/5/10 per search mode.
"""

from __future__ import annotations

import ast
import random
import re
import shutil
import sysconfig
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from codesift.indexer.embed import Embedder
from codesift.indexer.graph import Graph
from codesift.indexer.search.hybrid import search
from codesift.indexer.search.results import SearchMode, SearchRequest
from codesift.indexer.settings import Settings
from codesift.indexer.store import Store

STDLIB = Path(sysconfig.get_paths()["stdlib"])
# A spread of the standard library: enough code to make ranking hard, small
# enough to embed in minutes on two cores.
DEFAULT_PACKAGES = (
    "email",
    "json",
    "http",
    "urllib",
    "logging",
    "concurrent",
    "xml/etree",
    "importlib",
    "unittest",
    "csv.py",
    "argparse.py",
    "configparser.py",
    "shutil.py",
    "tarfile.py",
    "zipfile.py",
    "textwrap.py",
    "difflib.py",
    "calendar.py",
    "smtplib.py",
    "ftplib.py",
)


@dataclass(frozen=True, slots=True)
class Case:
    query: str
    path: str  # workspace-relative
    name: str  # qualified name
    line: int  # 1-based line of the def


@dataclass(frozen=True, slots=True)
class Scores:
    mode: str
    queries: int
    mrr10: float
    recall1: float
    recall5: float
    recall10: float
    p50_ms: float
    p95_ms: float


def _first_sentence(doc: str) -> str:
    text = " ".join(doc.strip().split())
    m = re.match(r"(.+?[.!?])(\s|$)", text)
    return (m.group(1) if m else text).strip()


def _docstring_spans(tree: ast.AST) -> list[tuple[int, int]]:
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                end = body[0].end_lineno or body[0].lineno
                spans.append((body[0].lineno, end))
    return spans


def _strip(source: str, tree: ast.AST) -> str:
    """Docstrings replaced by ``pass`` (line count kept, so lines still match)."""
    lines = source.splitlines()
    for start, end in _docstring_spans(tree):
        indent = re.match(r"\s*", lines[start - 1]).group(0)  # type: ignore[union-attr]
        lines[start - 1] = indent + "pass"
        for i in range(start, end):
            lines[i] = ""
    return "\n".join(lines) + "\n"


def _files(packages: Iterable[str]) -> list[Path]:
    out: list[Path] = []
    for pkg in packages:
        p = STDLIB / pkg
        if p.is_file():
            out.append(p)
        elif p.is_dir():
            out.extend(sorted(x for x in p.rglob("*.py") if "test" not in x.parts))
    return out


def build_corpus(dest: Path, packages: Sequence[str] = DEFAULT_PACKAGES) -> list[Case]:
    """Copy the packages to ``dest`` with docstrings stripped; return every query case."""
    if dest.exists():
        shutil.rmtree(dest)
    cases: list[Case] = []
    for src in _files(packages):
        rel = src.relative_to(STDLIB).as_posix()
        source = src.read_text(encoding="utf-8")
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(_strip(source, tree), encoding="utf-8")
        stack: list[tuple[ast.AST, str]] = [(tree, "")]
        while stack:
            node, prefix = stack.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.ClassDef):
                    stack.append((child, f"{prefix}{child.name}."))
                elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    doc = ast.get_docstring(child)
                    if not doc or child.name.startswith("_"):
                        continue
                    query = _first_sentence(doc)
                    if len(query.split()) >= 4:
                        cases.append(Case(query, rel, prefix + child.name, child.lineno))
    return cases


def sample(cases: Sequence[Case], n: int, seed: int = 13) -> list[Case]:
    rng = random.Random(seed)
    return rng.sample(list(cases), min(n, len(cases)))


# (label, search mode, hops): multi-hop is hybrid widened twice over the reference graph.
MODES: tuple[tuple[str, SearchMode, int], ...] = (
    ("bm25", "bm25", 0),
    ("vector", "vector", 0),
    ("hybrid", "hybrid", 0),
    ("multi-hop", "hybrid", 2),
)


def evaluate(
    store: Store,
    root: Path,
    settings: Settings,
    embedder: Embedder,
    cases: Sequence[Case],
    modes: Sequence[tuple[str, SearchMode, int]] = MODES,
) -> list[Scores]:
    """Rank of the answer (the chunk covering its ``def`` line) among the top 10, per mode."""
    graph = Graph(store)
    results: list[Scores] = []
    for label, mode, hops in modes:
        rr: list[float] = []
        hits_at: dict[int, int] = {1: 0, 5: 0, 10: 0}
        times: list[float] = []
        for case in cases:
            t = time.perf_counter()
            res = search(
                store,
                SearchRequest(case.query, mode=mode, limit=10, hops=hops),
                settings,
                root=root,
                embedder=embedder,
                graph=graph,
            )
            times.append((time.perf_counter() - t) * 1000)
            rank = next(
                (
                    i
                    for i, h in enumerate(res.hits, 1)
                    if h.chunk.path == case.path and h.chunk.start_line <= case.line <= h.chunk.end_line
                ),
                0,
            )
            rr.append(1.0 / rank if rank else 0.0)
            for k in hits_at:
                hits_at[k] += bool(rank and rank <= k)
        n = max(len(cases), 1)
        times.sort()
        results.append(
            Scores(
                mode=label,
                queries=len(cases),
                mrr10=sum(rr) / n,
                recall1=hits_at[1] / n,
                recall5=hits_at[5] / n,
                recall10=hits_at[10] / n,
                p50_ms=times[len(times) // 2] if times else 0.0,
                p95_ms=times[int(len(times) * 0.95)] if times else 0.0,
            )
        )
    return results

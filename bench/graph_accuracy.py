"""Reference-graph accuracy and speed: codesift's incoming calls against jedi's and pyright's.

    python -m bench.graph_accuracy                  # json + email from the stdlib, 50 functions
    python -m bench.graph_accuracy --n 50 --seed 0 --packages json email
    python -m bench.graph_accuracy --tree click=/work/benchdata/repos/click
    python -m bench.graph_accuracy --stats DIR      # edge counts / unresolved share per language
    python -m bench.graph_accuracy --latency DIR    # callers / impls / multi-hop p50 on DIR
    python -m bench.graph_accuracy --swift DIR...   # Swift files losing a declaration per tree

Unit of comparison: a call site (path, line, column of the called name). The
references of jedi (``Script.get_references``) and of pyright
(``textDocument/references`` from ``pyright-langserver``) over the same copied
packages, keeping references followed by ``(``, are the reference; precision =
codesift ∩ ref / codesift, recall = codesift ∩ ref / ref, micro-averaged over the
sampled functions. Needs jedi and pyright (both in the ``bench`` extra; the
``pyright`` wheel fetches its node package with npm on first use); a missing
pyright leaves its columns out.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import shutil
import statistics
import sys
import sysconfig
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

from codesift.indexer.graph import Graph, callers, implementations
from codesift.indexer.graph.snapshot import CALLABLE_KINDS, TYPE_KINDS
from codesift.indexer.model import EdgeKind, Symbol
from codesift.indexer.search.hybrid import search
from codesift.indexer.search.results import SearchRequest
from codesift.indexer.settings import load_settings
from codesift.indexer.sync import index_workspace, open_store

STDLIB = Path(sysconfig.get_paths()["stdlib"])
Site = tuple[str, int, int]


def build(root: Path) -> Graph:
    settings = load_settings(root)
    index_workspace(root, settings, embed=False)
    return Graph(open_store(root, settings))


def sample_functions(graph: Graph, n: int, seed: int) -> list[Symbol]:
    graph.refresh()
    pool = [
        s
        for fg in sorted(graph.snapshot.files.values(), key=lambda f: f.path)
        for s in fg.symbols
        if s.kind in CALLABLE_KINDS and not s.name.startswith("__") and fg.language == "python"
    ]
    return random.Random(seed).sample(pool, min(n, len(pool)))


def jedi_call_sites(root: Path, sym: Symbol) -> set[Site]:
    import jedi

    project = jedi.Project(str(root))
    script = jedi.Script(path=str(root / sym.path), project=project)
    line, col = sym.selection_range.start.line, sym.selection_range.start.column
    out: set[Site] = set()
    texts: dict[Path, list[str]] = {}
    for ref in script.get_references(line, col, include_builtins=False):
        if ref.module_path is None or ref.line is None or ref.column is None:
            continue
        path = Path(ref.module_path)
        if ref.is_definition() or not path.is_relative_to(root):
            continue  # typeshed stubs, the real stdlib: outside the compared workspace
        if (ref.line, ref.column) == (line, col) and path == root / sym.path:
            continue  # the definition itself
        lines = texts.setdefault(path, path.read_text(encoding="utf-8", errors="replace").split("\n"))
        text = lines[ref.line - 1]
        if _is_call(text[: ref.column], text[ref.column + len(ref.name) :]):
            out.add((path.relative_to(root).as_posix(), ref.line, ref.column))
    return out


def _is_call(before: str, after: str) -> bool:
    """A reference followed by ``(`` that is not a ``def`` (pyright lists ``@overload`` stubs
    and conditional redefinitions as references)."""
    return after.lstrip().startswith("(") and not before.rstrip().endswith(("def", "class"))


def pyright_exe() -> str | None:
    """``pyright-langserver`` next to this interpreter, else on PATH."""
    here = Path(sys.executable).parent / "pyright-langserver"
    return str(here) if here.exists() else shutil.which("pyright-langserver")


def pyright_call_sites(root: Path, syms: list[Symbol], stdlib: Sequence[str] = ()) -> list[set[Site]] | None:
    """Each symbol's call sites by pyright's find-references, or None without pyright.

    Pyright resolves a standard-library module name to its own typeshed stubs before any
    file in the workspace: with ``email`` copied in, ``from email import utils`` would be
    typeshed's ``email.utils`` and no call across the copied modules would count (every
    "codesift only" site of the first runs). The copied ``stdlib`` packages are taken out
    of a copy of its typeshed, named in a ``pyrightconfig.json`` (``typeshedPath``)."""
    exe = pyright_exe()
    if exe is None:
        return None
    if stdlib:
        _without_stubs(root, exe, stdlib)
    return asyncio.run(_pyright(exe, root, syms))


def _without_stubs(root: Path, exe: str, packages: Sequence[str]) -> None:
    import json

    import pyright

    places = [Path(pyright.__file__).parent, Path(exe).resolve().parent.parent]
    found = next((t for p in places for t in p.rglob("typeshed-fallback") if (t / "stdlib").is_dir()), None)
    if found is None:
        print("pyright's typeshed not found: its stdlib stubs hide the copied packages", file=sys.stderr)
        return
    typeshed = root.parent / "typeshed"
    shutil.copytree(found / "stdlib", typeshed / "stdlib", ignore=shutil.ignore_patterns(*packages))
    (root / "pyrightconfig.json").write_text(json.dumps({"typeshedPath": str(typeshed)}))


async def _pyright(exe: str, root: Path, syms: list[Symbol]) -> list[set[Site]]:
    from lsprotocol import types as lsp
    from pygls.lsp.client import LanguageClient

    client = LanguageClient("codesift-bench", "1")

    @client.feature(lsp.WORKSPACE_CONFIGURATION)
    def configuration(params: lsp.ConfigurationParams) -> list[object]:
        return [None for _ in params.items]

    @client.feature(lsp.WINDOW_LOG_MESSAGE)
    def log_message(params: lsp.LogMessageParams) -> None:
        return None

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def diagnostics(params: lsp.PublishDiagnosticsParams) -> None:
        return None

    await client.start_io(exe, "--stdio")
    await client.initialize_async(
        lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(),
            root_uri=root.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        )
    )
    client.initialized(lsp.InitializedParams())
    opened: set[str] = set()
    texts: dict[Path, list[str]] = {}
    out: list[set[Site]] = []
    for sym in syms:
        path = root / sym.path
        uri = path.as_uri()
        if uri not in opened:
            opened.add(uri)
            text = path.read_text(encoding="utf-8", errors="replace")
            client.text_document_did_open(
                lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "python", 1, text))
            )
        line, col = sym.selection_range.start.line, sym.selection_range.start.column
        refs = await client.text_document_references_async(
            lsp.ReferenceParams(
                text_document=lsp.TextDocumentIdentifier(uri),
                position=lsp.Position(line - 1, col),
                context=lsp.ReferenceContext(include_declaration=False),
            )
        )
        sites: set[Site] = set()
        for ref in refs or []:
            where = Path(url2pathname(urlparse(ref.uri).path))
            if not where.is_relative_to(root):
                continue
            r_line, r_col = ref.range.start.line + 1, ref.range.start.character
            if (r_line, r_col) == (line, col) and where == path:
                continue
            lines = texts.setdefault(where, where.read_text(encoding="utf-8", errors="replace").split("\n"))
            text = lines[r_line - 1]
            if _is_call(text[:r_col], text[ref.range.end.character :]):
                sites.add((where.relative_to(root).as_posix(), r_line, r_col))
        out.append(sites)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return out


def codesift_call_sites(graph: Graph, sym: Symbol) -> set[Site]:
    return {(c.path, r.start.line, r.start.column) for c in callers(graph, sym) for r in c.from_ranges}


def accuracy(
    packages: list[str], n: int, seed: int, verbose: bool, trees: dict[str, Path] | None = None
) -> dict[str, float]:
    """Incoming calls of ``n`` sampled functions against jedi and pyright, over stdlib
    ``packages`` and ``trees`` (name → a package directory) copied into one workspace."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        skip = shutil.ignore_patterns("__pycache__", "test*", ".codesift")
        for pkg in packages:
            shutil.copytree(STDLIB / pkg, root / pkg, ignore=skip)
        for name, src in (trees or {}).items():
            shutil.copytree(src, root / name, ignore=shutil.ignore_patterns("__pycache__", ".codesift"))
        graph = build(root)
        chosen = sample_functions(graph, n, seed)
        ours = [codesift_call_sites(graph, sym) for sym in chosen]
        refs = {"jedi": [jedi_call_sites(root, sym) for sym in chosen]}
        by_pyright = pyright_call_sites(root, chosen, packages)
        if by_pyright is not None:
            refs["pyright"] = by_pyright
        out: dict[str, float] = {"functions": len(chosen), "call sites codesift": sum(map(len, ours))}
        for who, found in refs.items():
            tp = sum(len(o & r) for o, r in zip(ours, found, strict=True))
            fp = sum(len(o - r) for o, r in zip(ours, found, strict=True))
            fn = sum(len(r - o) for o, r in zip(ours, found, strict=True))
            out[f"functions with callers ({who})"] = sum(1 for r in found if r)
            out[f"call sites {who}"] = tp + fn
            out[f"precision vs {who}"] = round(tp / (tp + fp), 3) if tp + fp else 1.0
            out[f"recall vs {who}"] = round(tp / (tp + fn), 3) if tp + fn else 1.0
            if verbose:
                _disagreements(who, chosen, ours, found)
        return out


def _disagreements(who: str, chosen: list[Symbol], ours: list[set[Site]], found: list[set[Site]]) -> None:
    for sym, o, r in zip(chosen, ours, found, strict=True):
        if o != r:
            print(f"{sym.path}:{sym.qualified_name}", file=sys.stderr)
            for site in sorted(o - r):
                print(f"   codesift only (not {who}) {site}", file=sys.stderr)
            for site in sorted(r - o):
                print(f"   {who} only {site}", file=sys.stderr)


def edge_stats(graph: Graph) -> dict[str, dict[str, float]]:
    """Per language: edges, and among non-import edges the share resolved, unresolved with
    candidates in the index, and unresolved with none (builtins, external packages)."""
    graph.refresh()
    counts: dict[str, Counter[str]] = {}
    for fg in graph.snapshot.files.values():
        c = counts.setdefault(fg.language, Counter())
        for e in graph.snapshot.edges_of(fg.path):
            c["edges"] += 1
            if e.kind is EdgeKind.IMPORT:
                continue
            r = graph.resolver.resolve(e)
            c["resolved" if r.resolved else "candidates" if r.candidates else "external"] += 1
    out: dict[str, dict[str, float]] = {}
    for lang, c in sorted(counts.items()):
        refs = c["resolved"] + c["candidates"] + c["external"]
        if not c["edges"]:
            continue
        out[lang] = {
            "edges": c["edges"],
            "resolved": round(c["resolved"] / max(refs, 1), 3),
            "unresolved (candidates)": round(c["candidates"] / max(refs, 1), 3),
            "unresolved (no candidate)": round(c["external"] / max(refs, 1), 3),
        }
    return out


#: one real repository per graph language (benchdata names; all on the allowed list)
GRAPH_REPOS = {
    "python": "click",
    "swift": "vapor",
    "go": "chi",
    "typescript": "zod",
    "rust": "serde",
    "csharp": "newtonsoft-json",
    "java": "commons-lang",
    "kotlin": "exposed",
}
_DECLARATION = re.compile(rb"\b(func|init|class|struct|enum|protocol|extension|actor|def|fn|fun|interface)\b")


def parse_failures(root: Path, language: str, suffix: str) -> dict[str, int]:
    """Files of ``language`` under ``root`` the grammar reports errors in, and those where an
    ERROR node swallows a declaration (symbols lost), after the repairs the parser makes
    (Swift: body-less functions, see ``languages.swift.repaired``)."""
    from codesift.indexer import grammars
    from codesift.indexer.languages import swift

    parser = grammars.parser(language)
    files = errors = losing = 0
    for f in sorted(root.rglob(f"*{suffix}")):
        files += 1
        src = f.read_bytes()
        top = parser.parse(src).root_node
        fixed = swift.repaired(src, top, lambda b: parser.parse(b).root_node) if language == "swift" else None
        if fixed is not None:
            src, top = fixed, parser.parse(fixed).root_node
        if not top.has_error:
            continue
        errors += 1
        stack, swallowed = [top], False
        while stack and not swallowed:
            node = stack.pop()
            if node.type == "ERROR":
                swallowed = _DECLARATION.search(src[node.start_byte : node.end_byte]) is not None
            else:
                stack.extend(c for c in node.children if c.has_error)
        losing += swallowed
    return {"files": files, "with parse errors": errors, "losing a declaration": losing}


def resolved_share(repos: Path, work: Path) -> dict[str, dict[str, float]]:
    """Per graph language, on its repository (copied, indexed without vectors): the share
    of non-import edges resolved, and unresolved with / without candidates."""
    from .benchdata import SEMBLE_ALLOWED, check_allowed

    out: dict[str, dict[str, float]] = {}
    for lang, name in GRAPH_REPOS.items():
        if not check_allowed([name], SEMBLE_ALLOWED, "graph tier") or not (repos / name).is_dir():
            continue
        root = work / f"graph-{name}"
        if not root.exists():
            shutil.copytree(repos / name, root, ignore=shutil.ignore_patterns(".codesift", ".git"))
        row = edge_stats(build(root)).get(lang)
        if row is not None:
            out[f"{lang} ({name})"] = row
    return out


def latency(root: Path, samples: int = 200) -> dict[str, float]:
    settings = load_settings(root)
    store = open_store(root, settings)
    graph = Graph(store)
    t = time.perf_counter()
    graph.refresh()
    load = time.perf_counter() - t
    rng = random.Random(1)
    syms = [s for fg in graph.snapshot.files.values() for s in fg.symbols]
    funcs = rng.sample([s for s in syms if s.kind in CALLABLE_KINDS], samples)
    types = rng.sample([s for s in syms if s.kind in TYPE_KINDS], samples)

    def p50(fn, items) -> float:  # type: ignore[no-untyped-def]
        times = []
        for x in items:
            t = time.perf_counter()
            fn(x)
            times.append((time.perf_counter() - t) * 1000)
        return round(statistics.median(times), 2)

    words = ["decode", "encoder", "socket timeout", "parse header", "thread pool", "json", "mime", "cookie"]
    return {
        "graph load (s)": round(load, 2),
        "callers p50 cold (ms)": p50(lambda s: callers(graph, s), funcs),
        "callers p50 warm (ms)": p50(lambda s: callers(graph, s), funcs),
        "implementations p50 (ms)": p50(lambda s: implementations(graph, s), types),
        "multi-hop depth 2 p50 (ms)": p50(
            lambda q: search(store, SearchRequest(q, mode="bm25", hops=2), settings, root=root, graph=graph),
            words * 3,
        ),
        "bm25 without hops p50 (ms)": p50(
            lambda q: search(store, SearchRequest(q, mode="bm25"), settings, root=root, graph=graph),
            words * 3,
        ),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--packages", nargs="*", default=["json", "email"])
    ap.add_argument("--tree", action="append", default=[], help="NAME=DIR: a package tree to add")
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--stats", type=Path, help="an indexed workspace: edge statistics per language")
    ap.add_argument("--latency", type=Path, help="an indexed workspace: graph query latency")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every disagreement")
    ap.add_argument(
        "--swift", type=Path, nargs="+", help="trees: Swift files losing a declaration to a parse error"
    )
    args = ap.parse_args(argv)
    if args.swift:
        total = 0
        for tree in args.swift:
            fails = parse_failures(tree, "swift", ".swift")
            total += fails["losing a declaration"]
            print(tree, fails)
        print("Swift files losing a declaration:", total)
        return 0 if total == 0 else 1
    if args.stats:
        for lang, row in edge_stats(Graph(open_store(args.stats, load_settings(args.stats)))).items():
            print(lang, row)
        return 0
    if args.latency:
        for k, v in latency(args.latency).items():
            print(f"{k:<32} {v}")
        return 0
    trees = {name: Path(d) for name, _, d in (t.partition("=") for t in args.tree)}
    result = accuracy(args.packages, args.n, args.seed, args.verbose, trees)
    for k, v in result.items():
        print(f"{k:<32} {v}")
    ok = result["precision vs jedi"] >= 0.95
    print("precision target ≥ 0.95:", "PASS" if ok else "MISS")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

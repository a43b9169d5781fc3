"""``codesift callers``, ``callees``, ``impls`` and ``research``: the reference graph."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .cli_common import (
    engine_errors,
    err,
    find_root,
    out,
    print_json,
    root_option,
    say_index,
    to_jsonable,
    with_index,
)

if TYPE_CHECKING:
    from codesift.indexer.graph import Callee, CallSite, Graph, Implementation
    from codesift.indexer.model import Symbol


def _graph_targets(root: Path, name: str) -> tuple[Graph, list[Symbol]]:
    """The graph of the workspace and the definitions NAME means; exit 1 when none."""
    from codesift.indexer.graph import Graph
    from codesift.indexer.settings import load_settings
    from codesift.indexer.store import open_store

    graph = Graph(open_store(root, load_settings(root)))
    targets = graph.find(name)
    if not targets:
        err.print(f"no definition named {name!r} in the index")
        sys.exit(1)
    return graph, targets


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _where(sym: Symbol | None, path: str = "") -> str:
    if sym is None:
        return f"[cyan]{path}[/] (top level)"
    return f"[bold]{sym.qualified_name}[/] [cyan]{sym.path}[/]:{sym.selection_range.start.line}"


def _answer(
    root: Path | None,
    name: str,
    as_json: bool,
    key: str,
    lookup: Callable[[Graph, Symbol], Sequence[Any]],
    show: Callable[[Any], None],
    note: Callable[[Symbol], str] | None = None,
) -> None:
    """``lookup`` for each definition NAME means, printed (``show`` a line each) or as
    JSON under ``key``; exit 1 when every definition has none."""
    root = find_root(root)
    with engine_errors():
        graph, targets = _graph_targets(root, name)
        found = [(t, lookup(graph, t)) for t in targets]
    if as_json:
        answer = [{"symbol": t, key: items} for t, items in found]
        print_json({"index_root": str(root), "results": to_jsonable(answer)})
        return
    say_index(root)
    noun = key.removesuffix("s")
    for target, items in found:
        extra = note(target) if note is not None and not items else ""
        out.print(f"{_where(target)} [dim]— {_count(len(items), noun)}[/]{extra}")
        for item in items:
            show(item)
    if not any(items for _, items in found):
        sys.exit(1)


@click.command()
@click.argument("name")
@root_option
@click.option(
    "--unresolved", is_flag=True, help="Also unresolved calls that list NAME among their candidates."
)
@click.option("--json", "as_json", is_flag=True, help="Print callers as JSON.")
def callers(name: str, root: Path | None, unresolved: bool, as_json: bool) -> None:
    """Who calls NAME (loads, json.loads, JSONDecoder.decode): callers with call sites."""
    from codesift.indexer.graph import callers as graph_callers

    def show(site: CallSite) -> None:
        lines = ", ".join(str(r.start.line) for r in site.from_ranges)
        mark = "" if site.resolved else " [yellow](unresolved: a candidate)[/]"
        out.print(f"  ← {_where(site.caller, site.path)} [dim]line {lines}[/]{mark}")

    maybe: dict[Symbol, int] = {}

    def lookup(graph: Graph, target: Symbol) -> list[CallSite]:
        sites = graph_callers(graph, target, include_unresolved=True)
        maybe[target] = sum(len(s.from_ranges) for s in sites if not s.resolved)
        return sites if unresolved else [s for s in sites if s.resolved]

    def note(target: Symbol) -> str:
        # no resolved caller is not the same as no caller: say what could be one
        n = maybe.get(target, 0)
        return f" [yellow]({_count(n, 'unresolved call')} may be it: --unresolved lists them)[/]" if n else ""

    _answer(root, name, as_json, "callers", lookup, show, note)


@click.command()
@click.argument("name")
@root_option
@click.option("--json", "as_json", is_flag=True, help="Print callees as JSON.")
def callees(name: str, root: Path | None, as_json: bool) -> None:
    """What NAME calls: resolved targets, and unresolved calls with their candidates."""
    from codesift.indexer.graph import callees as graph_callees

    def show(c: Callee) -> None:
        lines = ", ".join(str(r.start.line) for r in c.from_ranges)
        if c.callee is not None:
            out.print(f"  → {_where(c.callee)} [dim]line {lines}[/]")
        else:
            n = len(c.candidates)
            hint = f"{n} candidate{'' if n == 1 else 's'}" if n else "outside the index"
            out.print(f"  → {c.name} [yellow](unresolved, {hint})[/] [dim]line {lines}[/]")

    _answer(root, name, as_json, "callees", graph_callees, show)


@click.command()
@click.argument("name")
@root_option
@click.option("--json", "as_json", is_flag=True, help="Print implementations as JSON.")
def impls(name: str, root: Path | None, as_json: bool) -> None:
    """Implementations of NAME: subclasses, implementers, extensions (transitive); overrides of a method."""
    from codesift.indexer.graph import implementations

    def show(impl: Implementation) -> None:
        loc = impl.location
        what = impl.name or "(extension)"
        out.print(
            f"  {impl.how.value:<10} [bold]{what}[/] [cyan]{loc.path}[/]:{loc.span.start.line} "
            f"[dim](of {impl.of})[/]"
        )

    _answer(root, name, as_json, "implementations", implementations, show)


@click.command()
@click.argument("question")
@root_option
@click.option("--depth", type=int, default=3, show_default=True, help="How far caller chains are traced.")
@click.option("--limit", type=int, default=50, show_default=True)
@click.option("--no-semantic", is_flag=True, help="Related: search with BM25 only (no model load).")
@click.option("--json", "as_json", is_flag=True, help="Print the structured result as JSON.")
def research(
    question: str, root: Path | None, depth: int, limit: int, no_semantic: bool, as_json: bool
) -> None:
    """Answer "implementations of X", "what calls X", "related to X", "dependencies of module M"."""
    from codesift.indexer.embed import make_embedder
    from codesift.indexer.research import ResearchKind, code_research, parse_question, render_markdown
    from codesift.indexer.settings import load_settings
    from codesift.indexer.store import open_store

    root = find_root(root)
    with engine_errors():
        settings = load_settings(root)
        store = open_store(root, settings)
        kind, _ = parse_question(question)
        wants_model = kind is ResearchKind.RELATED and not no_semantic
        embedder = make_embedder(settings.embed) if wants_model else None
        result = code_research(
            store, question, settings, root=root, embedder=embedder, depth=depth, limit=limit
        )
    if as_json:
        print_json(with_index(root, result))
        return
    say_index(root)
    click.echo(render_markdown(result), nl=False)
    if not result.findings and result.dependencies is None:
        sys.exit(1)

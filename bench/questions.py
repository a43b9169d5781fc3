"""Ordinary questions a new user asks, checked for the implementing code near the top.

Issue 13's first-contact check: on pallets/click (the semble tier's checkout and
index), each question below must have one of its implementing definitions among
the first three hits of ``codesift search``; on this checkout (the index ``make
demo`` builds), ``make demo``'s own query must put ``Store.write_files`` first.

The accepted answers were chosen by reading click's source, before any ranking
rule was written for them: the definition that does what the question asks.

    python -m bench.questions [--data DIR]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from codesift.indexer.embed import Embedder, make_embedder
from codesift.indexer.search.hybrid import search
from codesift.indexer.search.results import SearchRequest
from codesift.indexer.settings import Settings, load_settings
from codesift.indexer.store import Store
from codesift.indexer.sync import open_store

from . import semble_data
from .benchdata import data_dir
from .report import Table

ROOT = Path(__file__).resolve().parent.parent
TOP = 3


@dataclass(frozen=True, slots=True)
class Question:
    query: str
    answers: tuple[str, ...]  # qualified symbols, any of which answers it


CLICK = (
    Question("how is the progress bar rendered", ("ProgressBar.render_progress",)),
    Question("shell completion for bash", ("BashComplete",)),
    Question(
        "how are exceptions shown to the user and the exit code set",
        ("ClickException", "ClickException.show", "Command.main", "UsageError.show"),
    ),
    Question("how are command line options parsed", ("_OptionParser.parse_args", "Command.parse_args")),
    Question("how does click prompt the user for input", ("prompt", "Option.prompt_for_value")),
    # Parameter reads an option's own envvar; Option's overrides add the auto_envvar_prefix
    # name (os.environ) and the flag parsing: each is the code that reads it.
    Question(
        "how are environment variables read for options",
        (
            "Parameter.resolve_envvar_value",
            "Option.resolve_envvar_value",
            "Parameter.value_from_envvar",
            "Option.value_from_envvar",
        ),
    ),
    Question("how is the help text formatted", ("HelpFormatter", "Command.format_help")),
    Question("how does click open a file lazily", ("LazyFile", "LazyFile.open")),
)
DEMO = Question("how are a file's chunks replaced in the index", ("Store.write_files",))


def rank_of(
    store: Store, root: Path, settings: Settings, embedder: Embedder | None, question: Question, top: int
) -> tuple[int, list[str]]:
    """The rank (from 1) of the first hit defining one of the answers (0: none in ``top``),
    and the symbols of the first ``top`` hits."""
    res = search(store, SearchRequest(question.query, limit=top), settings, root=root, embedder=embedder)
    symbols = [h.chunk.symbol for h in res.hits[:top]]
    rank = next((i for i, s in enumerate(symbols, 1) if s in question.answers), 0)
    return rank, symbols


def check_click(table: Table, data: Path, embedder: Embedder | None = None) -> None:
    """Each click question's rank, and how many answer in the top 3."""
    bench = semble_data.open_bench(data)
    if "click" not in bench.specs or not bench.index_dir("click").is_dir():
        print(f"questions: click skipped: no click checkout and index under {data} (make bench-data)")
        return
    settings = semble_data.repo_settings(bench, "click", {})
    embedder = embedder or make_embedder(settings.embed)
    store = open_store(bench.root("click"), settings)
    answered = 0
    for q in CLICK:
        rank, symbols = rank_of(store, bench.root("click"), settings, embedder, q, TOP)
        answered += rank > 0
        table.add("question", f"click: {q.query[:48]}", rank, "rank", f"1..{TOP}", rank > 0)
        if not rank:
            print(f"         top {TOP}: {', '.join(symbols)}")
    table.add(
        "question",
        f"click questions answered in the top {TOP}",
        answered,
        "",
        f"{len(CLICK)}",
        answered == len(CLICK),
    )


def check_demo(table: Table, root: Path = ROOT, embedder: Embedder | None = None) -> None:
    """``make demo``'s query on this checkout's own index (built by ``make demo``)."""
    settings = load_settings(root)
    if not (root / settings.index.index_dir).is_dir():
        print(f"questions: demo query skipped: {root} has no index yet (run `make demo` first)")
        return
    embedder = embedder or make_embedder(settings.embed)
    rank, symbols = rank_of(open_store(root, settings), root, settings, embedder, DEMO, TOP)
    table.add("question", f"demo: {DEMO.query}", rank, "rank", "1", rank == 1)
    if rank != 1:
        print(f"         top {TOP}: {', '.join(symbols)}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.questions", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="bench data folder (for click)")
    args = parser.parse_args(argv)
    table = Table()
    check_click(table, data_dir(args.data))
    check_demo(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

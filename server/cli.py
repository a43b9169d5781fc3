"""The ``codesift`` command line: translate flags, call the engine, print.

Every command has ``--json``. Errors from the engine print their reason on
stderr and exit 2 (1 is kept for "ran, found nothing" where it applies).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import TypeVar

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from codesift.indexer.errors import CodesiftError, IndexBusyError
from codesift.indexer.settings import Settings, load_settings
from codesift.indexer.sync import Progress as IndexProgress
from codesift.indexer.sync import index_status, index_workspace

err = Console(stderr=True)
out = Console()

T = TypeVar("T")

EXIT_ERROR = 2
EXIT_BUSY = 3


def to_jsonable(value: object) -> object:
    """Dataclasses, enums and tuples → plain JSON values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    return value


def print_json(value: object) -> None:
    click.echo(json.dumps(to_jsonable(value), indent=2, ensure_ascii=False))


@contextmanager
def engine_errors() -> Iterator[None]:
    """Map engine errors to a readable line on stderr and an exit code, in one place."""
    try:
        yield
    except IndexBusyError as exc:
        err.print(f"[yellow]codesift:[/] {exc}")
        sys.exit(EXIT_BUSY)
    except CodesiftError as exc:
        err.print(f"[red]codesift:[/] {exc}")
        sys.exit(EXIT_ERROR)


def _settings(root: Path, overrides: dict[str, dict[str, object]]) -> Settings:
    return load_settings(root, {k: v for k, v in overrides.items() if v})


@click.group()
@click.option("-v", "--verbose", count=True, help="More logging on stderr (-vv for debug).")
def main(verbose: int) -> None:
    """codesift: hybrid code search — grep, BM25, vectors, symbols — over a local index."""
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)


class _Bar:
    """A rich progress bar fed by the engine's progress callback."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tasks: dict[str, TaskID] = {}
        self.started: dict[str, float] = {}

    def __call__(self, p: IndexProgress) -> None:
        if p.phase not in self.tasks:
            for task in self.tasks.values():
                self.progress.update(task, visible=True)
            self.tasks[p.phase] = self.progress.add_task(p.phase, total=p.total or None, rate="")
            self.started[p.phase] = time.perf_counter()
        task = self.tasks[p.phase]
        elapsed = max(time.perf_counter() - self.started[p.phase], 1e-6)
        unit = "files" if p.phase == "parse" else "chunks"
        rate = f"{p.done / elapsed:,.0f} {unit}/s"
        if p.phase == "parse" and p.chunks:
            rate += f", {p.chunks / elapsed:,.0f} chunks/s"
        self.progress.update(task, completed=p.done, total=p.total or None, rate=rate)


@main.command()
@click.argument("root", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--no-embed", is_flag=True, help="Text phase only (grep, BM25, symbols); vectors stay pending.")
@click.option("--rebuild", is_flag=True, help="Throw the index away and build it again.")
@click.option("--no-wait", is_flag=True, help="Exit (code 3) instead of waiting when another index run holds the lock.")
@click.option("--include", multiple=True, help="Only index paths matching this glob (repeatable).")
@click.option("--exclude", multiple=True, help="Also exclude paths matching this glob (repeatable).")
@click.option("--max-file-bytes", type=int, default=None, help="Skip files larger than this.")
def index(
    root: Path,
    as_json: bool,
    no_embed: bool,
    rebuild: bool,
    no_wait: bool,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    max_file_bytes: int | None,
) -> None:
    """Build or refresh the index of ROOT (default: the current directory)."""
    with engine_errors():
        settings = load_settings(root)
        idx: dict[str, object] = {}
        if include:
            idx["include"] = list(include)
        if exclude:
            idx["exclude"] = [*settings.index.exclude, *exclude]
        if max_file_bytes is not None:
            idx["max_file_bytes"] = max_file_bytes
        if idx:
            settings = load_settings(root, {"index": idx})
        quiet = as_json or not err.is_terminal

        def on_wait(message: str) -> None:
            err.print(f"[yellow]codesift:[/] {message}")

        if quiet:
            report = index_workspace(
                root, settings, embed=not no_embed, wait=not no_wait, rebuild=rebuild, on_wait=on_wait
            )
        else:
            columns = (
                TextColumn("{task.description:>8}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
            )
            with Progress(*columns, console=err, transient=False) as bar:
                report = index_workspace(
                    root,
                    settings,
                    embed=not no_embed,
                    wait=not no_wait,
                    rebuild=rebuild,
                    progress=_Bar(bar),
                    on_wait=on_wait,
                )
    if as_json:
        print_json(report)
        return
    phases = ", ".join(f"{k} {v:.1f}s" for k, v in report.phase_seconds.items())
    if report.rebuilt:
        out.print(f"built from scratch ({report.rebuild_reason})")
    out.print(
        f"{report.files_seen} files seen: {report.files_changed} changed, {report.files_removed} removed, "
        f"{report.files_skipped} skipped, {report.files_failed} failed; "
        f"{report.chunks_written} chunks written, {report.chunks_embedded} embedded "
        f"({report.chunks_from_cache} from cache) in {report.seconds:.1f}s [{phases}]"
    )
    if report.vectors_pending:
        out.print(f"[yellow]{report.vectors_pending} chunks still wait for vectors[/] (run `codesift index` again)")


@main.command()
@click.argument("root", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.option("--all", "show_all", is_flag=True, help="List every skipped or failed file with its reason.")
def status(root: Path, as_json: bool, show_all: bool) -> None:
    """What the index of ROOT holds: files, chunks, symbols, vectors, skipped files and why."""
    with engine_errors():
        st = index_status(root, load_settings(root))
    if as_json:
        print_json(st)
        return
    if not st.exists:
        out.print(f"no index for {st.root} yet: run `codesift index {root}` to build it")
        sys.exit(1)
    table = Table(title=f"codesift index of {st.root}", show_header=False)
    rows = [
        ("index", st.index_path),
        ("files indexed", f"{st.files_indexed:,}"),
        ("files skipped", f"{st.files_skipped:,}"),
        ("files failed", f"{st.files_failed:,}"),
        ("chunks", f"{st.chunks:,}"),
        ("symbols", f"{st.symbols:,}"),
        ("vectors", f"{st.vectors_done:,} done, {st.vectors_pending:,} pending"),
        ("model", f"{st.model} ({st.dimension} dims)"),
        ("schema", str(st.schema_version)),
        ("size on disk", f"{st.index_bytes / 1e6:,.1f} MB"),
    ]
    for k, v in rows:
        table.add_row(k, v)
    out.print(table)
    limit = None if show_all else 10
    for title, records in (("skipped", st.skipped), ("failed", st.failed), ("notes", st.notes)):
        if records:
            out.print(f"[bold]{title}[/] ({len(records)}):")
            for r in records[:limit]:
                out.print(f"  {r.path}: {r.reason}")
            if limit and len(records) > limit:
                out.print(f"  … and {len(records) - limit} more (--all lists them)")


if __name__ == "__main__":  # pragma: no cover
    main()

"""The ``codesift`` command line: translate flags, call the engine, print.

This module holds the group, ``index``, ``status``, ``serve`` and ``mcp``;
searching is in ``cli_search``, the reference graph in ``cli_graph``. Every
command has ``--json``. Errors from the engine print their reason on stderr and
exit 2 (1 is kept for "ran, found nothing" where it applies).
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .cli_common import EXIT_ERROR, EXIT_NOTHING, engine_errors, err, find_root, out, print_json, with_index
from .cli_graph import callees, callers, impls, research
from .cli_search import grep, search, symbols

if TYPE_CHECKING:
    from codesift.indexer.model import IndexReport, IndexStatus, RemoteStatus
    from codesift.indexer.progress import Progress as IndexProgress
    from codesift.indexer.settings import Settings


@click.group()
@click.version_option(package_name="codesift", prog_name="codesift", message="%(prog)s %(version)s")
@click.option("-v", "--verbose", count=True, help="More logging on stderr (-vv for debug).")
def main(verbose: int) -> None:
    """codesift: hybrid code search — grep, BM25, vectors, symbols — over a local index."""
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    # The language server raises codesift's loggers to INFO for window/logMessage;
    # stderr keeps to the level asked for here (a client shows both streams).
    for handler in logging.getLogger().handlers:
        handler.setLevel(level)


class _Bar:
    """A rich progress bar fed by the engine's progress callback: one line per phase."""

    def __init__(self, progress: Any) -> None:
        self.progress = progress
        self.tasks: dict[str, Any] = {}
        self.started: dict[str, float] = {}
        self.current = ""

    def _finish(self, phase: str) -> None:
        task = self.tasks[phase]
        total = self.progress.tasks[task].total or self.progress.tasks[task].completed or 1
        self.progress.update(task, completed=total, total=total)

    def __call__(self, p: IndexProgress) -> None:
        if p.phase != self.current and self.current in self.tasks:
            self._finish(self.current)
        if p.phase == "done":
            return
        self.current = p.phase
        if p.phase not in self.tasks:
            self.tasks[p.phase] = self.progress.add_task(p.phase, total=p.total or None, rate="")
            self.started[p.phase] = time.perf_counter()
        elapsed = max(time.perf_counter() - self.started[p.phase], 1e-6)
        rate = ""
        if p.phase == "parse":
            rate = f"{p.done / elapsed:,.0f} files/s, {p.chunks / elapsed:,.0f} chunks/s"
        elif p.phase == "embed":
            rate = f"{p.done / elapsed:,.1f} chunks/s"
        self.progress.update(self.tasks[p.phase], completed=p.done, total=p.total or None, rate=rate)


@main.command()
@click.argument("root", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--no-embed", is_flag=True, help="Text phase only (grep, BM25, symbols); vectors stay pending.")
@click.option("--rebuild", is_flag=True, help="Throw the index away and build it again.")
@click.option(
    "--no-wait", is_flag=True, help="Exit (code 3) instead of waiting when another index run holds the lock."
)
@click.option("--include", multiple=True, help="Only index paths matching this glob (repeatable).")
@click.option("--exclude", multiple=True, help="Also exclude paths matching this glob (repeatable).")
@click.option("--max-file-bytes", type=int, default=None, help="Skip files larger than this.")
@click.option(
    "--to",
    "to",
    default=None,
    metavar="URI",
    help="Publish: build or refresh the index at this LanceDB URI (s3://, gs://, az://, file://, a path) "
    "for editors that set index.remote to it.",
)
@click.option(
    "--lease",
    "lease_s",
    type=click.FloatRange(min=2.0),
    default=None,
    metavar="SECONDS",
    help="With --to an object store: how long this publish's lock on URI lasts without a renewal; "
    "a publisher killed hard holds it this long (default 120).",
)
def index(
    root: Path,
    as_json: bool,
    no_embed: bool,
    rebuild: bool,
    no_wait: bool,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    max_file_bytes: int | None,
    to: str | None,
    lease_s: float | None,
) -> None:
    """Build or refresh the index of ROOT (default: the current directory); --to URI publishes it."""
    from codesift.indexer.publish import PublishReport, publish
    from codesift.indexer.settings import load_settings
    from codesift.indexer.sync import index_workspace

    from .allocator import limit_arenas_for_index_run

    limit_arenas_for_index_run()
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
            click.echo(f"codesift: {message}", err=True)

        published: PublishReport | None = None

        def run(root: Path, settings: Settings, **kwargs: Any) -> IndexReport:
            nonlocal published
            if to is None:
                return index_workspace(root, settings, **kwargs)
            if lease_s is not None:
                kwargs["lease_s"] = lease_s
            published = publish(root, to, settings, **kwargs)
            return published.index

        if quiet:
            report = run(
                root, settings, embed=not no_embed, wait=not no_wait, rebuild=rebuild, on_wait=on_wait
            )
        else:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            columns = (
                TextColumn("{task.description:>8}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
            )
            with Progress(*columns, console=err.get(), transient=False) as bar:
                report = run(
                    root,
                    settings,
                    embed=not no_embed,
                    wait=not no_wait,
                    rebuild=rebuild,
                    progress=_Bar(bar),
                    on_wait=on_wait,
                )
    if as_json:
        print_json(with_index(root.resolve(), published or report))
        return
    from rich.markup import escape

    phases = ", ".join(f"{k} {v:.1f}s" for k, v in report.phase_seconds.items())
    if report.rebuilt:
        out.print(f"built from scratch ({report.rebuild_reason})")
    out.print(
        f"{report.files_seen} files seen: {report.files_changed} changed, {report.files_removed} removed, "
        f"{report.files_skipped} skipped, {report.files_failed} failed; "
        f"{report.chunks_written} chunks written, {report.chunks_embedded} embedded "
        f"({report.chunks_from_cache} from cache) in {report.seconds:.1f}s " + escape(f"[{phases}]")
    )
    if report.vectors_pending:
        out.print(
            f"[yellow]{report.vectors_pending} chunks still wait for vectors[/] (run `codesift index` again)"
        )
    if report.files_from_remote:
        copied = f"{report.files_from_remote} files ({report.chunks_from_remote} chunks)"
        out.print(f"{copied} copied from the remote index, rows and vectors")
    if report.files_linked:
        shared = f"{report.bytes_linked / 1e6:.1f} MB"
        out.print(
            f"{report.files_linked} files kept from a sibling worktree's index, linked ({shared} shared)"
        )
    if report.note:
        out.print(f"[yellow]{escape(report.note)}[/]")
    if published is not None:
        at = f"commit {published.commit}" if published.commit else "the workspace"
        if published.published:
            out.print(f"published {at} at {escape(published.uri)} in {published.seconds:.1f}s")
        if published.note:
            out.print(f"[yellow]{escape(published.note)}[/]")


@main.command()
@click.argument("root", type=click.Path(file_okay=False, path_type=Path), required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.option("--all", "show_all", is_flag=True, help="List every skipped or failed file with its reason.")
def status(root: Path | None, as_json: bool, show_all: bool) -> None:
    """What the index of ROOT holds: files, chunks, symbols, vectors, skipped files and why.

    Without ROOT: the index search would use here (the nearest one above, same repository).
    """
    from codesift.indexer.settings import load_settings
    from codesift.indexer.sync import index_status

    root = find_root(root)
    with engine_errors():
        st = index_status(root, load_settings(root))
    server = _server_info(root)
    if as_json:
        print_json({**with_index(Path(st.root), st), "server": server})
        sys.exit(0 if st.exists else EXIT_NOTHING)
    if not st.exists:
        click.echo(f"codesift: no index for {st.root} yet: run `codesift index {root}` to build it", err=True)
        sys.exit(EXIT_NOTHING)
    from rich.table import Table

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
        *_fast_tier_rows(st),
        ("schema", str(st.schema_version)),
        ("size on disk", f"{st.index_bytes / 1e6:,.1f} MB"),
        ("reads", _reader_row(st.reader)),
        ("embedding cache", _cache_row(st)),
        *_linked_rows(st),
        *_remote_rows(st.remote),
        ("server", _server_row(server)),
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


def _reader_row(reader: str) -> str:
    if reader == "io_uring":
        return "io_uring (CODESIFT_IO_URING=0 turns it off)"
    return f"{reader} (io_uring off, refused here, or not a local index)"


def _cache_row(st: IndexStatus) -> str:
    if not st.cache_shared:
        return "in the index"
    return f"{st.cache_path} (shared by the repository's worktrees, {st.cache_bytes / 1e6:,.1f} MB)"


def _linked_rows(st: IndexStatus) -> list[tuple[str, str]]:
    if not st.linked_bytes:
        return []
    from rich.markup import escape

    from codesift.indexer.compaction import LINKS_HINT

    shared = f"{st.linked_bytes / 1e6:,.1f} MB by hard links"
    if st.links_kept:
        return [("shared with other worktrees", f"{shared}, kept through optimizes")]
    return [
        ("shared with other worktrees", f"{shared}; the next optimize rewrites them ({escape(LINKS_HINT)})")
    ]


def _server_info(root: Path) -> dict[str, object] | None:
    """What the server answering the CLI for ``root`` says of itself (None: none runs)."""
    from .endpoint import address, request_meta

    reply = request_meta(address(root.resolve()), "info")
    ok = reply.get("ok") if reply else None
    return ok if isinstance(ok, dict) else None


def _server_row(server: dict[str, object] | None) -> str:
    from .endpoint import BACKGROUND

    if server is None:
        return "none (search, grep and symbols answer in-process)"
    pid = server.get("pid")
    if server.get("kind") != BACKGROUND:
        return f"{server.get('kind')}, pid {pid} (an editor's: it stops with the editor)"
    timeout = float(str(server.get("idle_timeout_s") or 0))
    idle = float(str(server.get("idle_s") or 0))
    ends = f"exits after {timeout:g} s without a command" if timeout > 0 else "runs until `codesift stop`"
    return f"background, pid {pid}; {ends} (idle {idle:.0f} s); `codesift stop` stops it"


def _fast_tier_rows(st: IndexStatus) -> list[tuple[str, str]]:
    """The fast tier's model and vectors, when the index has one."""
    if not st.fast_model:
        return []
    return [
        ("fast tier", f"{st.fast_model}: {st.fast_vectors_done:,} done, {st.fast_vectors_pending:,} pending"),
    ]


def _remote_rows(remote: RemoteStatus | None) -> list[tuple[str, str]]:
    if remote is None:
        return []
    when = ""
    if remote.published_at:
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(remote.published_at))
    rows = [
        ("remote", remote.uri),
        ("remote commit", f"{remote.commit or 'none copied yet'}" + (f" (published {when})" if when else "")),
        ("remote state", remote.state),
        (
            "overlay",
            f"{remote.overlay_files:,} files of this machine's own, {remote.hidden_files:,} remote files "
            f"deleted here, {remote.remote_files:,} files in the remote",
        ),
    ]
    if remote.refused:
        rows.append(("remote refused", remote.refused))
    if remote.error:
        rows.append(("remote note", remote.error))
    return rows


@main.command()
@click.argument("root", type=click.Path(file_okay=False, path_type=Path), required=False)
@click.option("--stdio", is_flag=True, help="Talk over stdin/stdout (the default).")
@click.option("--tcp", "tcp", default=None, metavar="HOST:PORT", help="Listen on a TCP socket instead.")
@click.option(
    "--background",
    is_flag=True,
    help="Instead of the language server: answer `search`, `grep` and `symbols` for ROOT's index "
    "on its CLI socket until idle (what those commands start by themselves; see `codesift stop`).",
)
@click.option(
    "--idle",
    "idle_s",
    type=click.FloatRange(min=0),
    default=None,
    metavar="SECONDS",
    help="With --background: exit after this long without a command (default: cli.server_idle_s, "
    "600; 0: never).",
)
@click.option("--warm", type=click.Choice(["search", "grep", "symbols"]), default=None, hidden=True)
def serve(
    root: Path | None,
    stdio: bool,
    tcp: str | None,
    background: bool,
    idle_s: float | None,
    warm: str | None,
) -> None:
    """Run the language server (stdio by default; --tcp HOST:PORT to listen on a socket),
    or with --background the CLI's background server for ROOT's index."""
    from .allocator import use_system_malloc

    use_system_malloc()  # may replace this process: before anything reads stdin
    if background:
        _serve_background(root, idle_s, warm or "")
        return
    if root is not None or idle_s is not None:
        raise click.UsageError("ROOT and --idle go with --background")
    from codesift.server.lsp import create_server

    server = create_server()
    if tcp is None:
        server.start_io()
        return
    host, _, port = tcp.rpartition(":")
    if not port.isdigit():
        raise click.BadParameter(f"expected HOST:PORT, got {tcp!r}", param_hint="--tcp")
    server.start_tcp(host or "127.0.0.1", int(port))


def _serve_background(root: Path | None, idle_s: float | None, warm: str) -> None:
    from codesift.indexer.locate import index_exists_at, index_uri
    from codesift.indexer.settings import load_settings

    from .background import serve as serve_background

    root = find_root(root).resolve()
    with engine_errors():
        settings = load_settings(root)
    if not index_exists_at(index_uri(root, settings.index.index_dir)):
        click.echo(f"codesift: no index for {root} yet: run `codesift index {root}` to build it", err=True)
        sys.exit(EXIT_NOTHING)
    sys.exit(serve_background(root, settings.cli.server_idle_s if idle_s is None else idle_s, warm))


@main.command()
@click.argument("root", type=click.Path(file_okay=False, path_type=Path), required=False)
@click.option("--all", "every", is_flag=True, help="Stop the background servers of every index.")
def stop(root: Path | None, every: bool) -> None:
    """Stop the background server answering the CLI for ROOT's index (default: the index
    search would use here). Exit 1 when none runs or it is an editor's language server."""
    from .endpoint import address, runtime_dir

    if every:
        sockets = sorted(runtime_dir().glob("*.sock")) if runtime_dir().is_dir() else []
        stopped = [_stop_at(path, quiet_editor=True) for path in sockets]
        if not any(stopped):
            click.echo("codesift: no background server runs", err=True)
            sys.exit(EXIT_NOTHING)
        return
    root = find_root(root).resolve()
    if not _stop_at(address(root), quiet_editor=False):
        sys.exit(EXIT_NOTHING)


def _stop_at(path: Path, *, quiet_editor: bool) -> bool:
    """Stop the background server at socket ``path`` and wait until it let go of it."""
    from .endpoint import BACKGROUND, request_meta

    info = request_meta(path, "info")
    ok = info.get("ok") if info else None
    if not isinstance(ok, dict):
        if not quiet_editor:
            click.echo("codesift: no server answers the CLI for this index", err=True)
        return False
    if ok.get("kind") != BACKGROUND:
        if not quiet_editor:
            click.echo(
                f"codesift: {ok.get('root')} is answered by an editor's {ok.get('kind')} "
                f"(pid {ok.get('pid')}): it stops with the editor",
                err=True,
            )
        return False
    reply = request_meta(path, "stop")
    if not reply or not reply.get("stopping"):
        click.echo(f"codesift: the server for {ok.get('root')} did not stop: {reply}", err=True)
        return False
    _wait_released(Path(str(ok["root"])))
    click.echo(f"stopped the background server for {ok.get('root')} (pid {ok.get('pid')})")
    return True


def _wait_released(root: Path, timeout_s: float = 10.0) -> None:
    """Until the server of ``root`` has let go of its socket (so the next command starts afresh)."""
    import os

    from codesift.indexer.locks import try_flock

    from .endpoint import lock_path

    deadline = time.monotonic() + timeout_s
    fd = os.open(lock_path(root), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        while not try_flock(fd) and time.monotonic() <= deadline:
            time.sleep(0.05)
    finally:
        os.close(fd)  # lets go at once: the lock was only a way to wait


@main.command("mcp")
@click.option(
    "--root",
    "roots",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Workspace root to search (repeatable; default: the nearest folder above holding .codesift/).",
)
@click.option(
    "--allow-root",
    "allow_roots",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="A further folder read_file may read (repeatable); workspace roots always are.",
)
@click.option(
    "--budget",
    type=click.IntRange(min=2_000),
    default=None,
    help="Most characters in one tool answer (default: search.agent_budget_chars, 20000).",
)
def mcp_command(roots: tuple[Path, ...], allow_roots: tuple[Path, ...], budget: int | None) -> None:
    """Run the MCP server for AI agents over stdio: hybrid/grep/vector/symbol search, read_file, status."""
    from codesift.indexer.settings import load_settings

    try:
        from codesift.server.mcp import create_server
        from codesift.server.mcp_base import McpConfig
    except ImportError as exc:
        if exc.name is None or not exc.name.startswith("mcp"):
            raise
        click.echo("codesift: the MCP server needs the mcp extra: pip install 'codesift[mcp]'", err=True)
        sys.exit(EXIT_ERROR)

    with engine_errors():
        resolved = tuple(r.resolve() for r in roots) or (find_root(None),)
        settings = load_settings(resolved[0])
        extra = tuple((resolved[0] / r).resolve() for r in settings.search.agent_allowed_roots)
        config = McpConfig(
            roots=resolved,
            allow_roots=tuple(r.resolve() for r in allow_roots) + extra,
            budget=budget or settings.search.agent_budget_chars,
        )
    create_server(config).run("stdio")


for _command in (search, grep, symbols, callers, callees, impls, research):
    main.add_command(_command)


if __name__ == "__main__":  # pragma: no cover
    main()

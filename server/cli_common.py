"""What the ``codesift`` commands share: consoles, JSON output, engine errors, the root.

Imports stay light here and in every command module: ``codesift --version`` and
``--help`` must not load rich, LanceDB or the model (lancedb alone costs 1.3–1.8 s).
The engine is imported inside each command, when it runs.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

import click

if TYPE_CHECKING:
    from rich.console import Console

    from codesift.indexer.embed import Embedder
    from codesift.indexer.graph import Graph
    from codesift.indexer.search.symbols import SymbolIndex
    from codesift.indexer.settings import Settings
    from codesift.indexer.store import Store

EXIT_NOTHING = 1
EXIT_ERROR = 2
EXIT_BUSY = 3


class _LazyConsole:
    """A rich Console made on first use (rich costs ~40 ms to import)."""

    def __init__(self, stderr: bool) -> None:
        self._stderr = stderr
        self._console: Console | None = None

    def get(self) -> Console:
        if self._console is None:
            from rich.console import Console

            stream = sys.stderr if self._stderr else sys.stdout
            # A pipe or a file gets whole lines: no wrapping at 80 columns, no colour.
            wide = None if stream.isatty() else 1_000_000
            self._console = Console(stderr=self._stderr, width=wide, soft_wrap=not stream.isatty())
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.get(), name)


err: Any = _LazyConsole(stderr=True)
out: Any = _LazyConsole(stderr=False)


def to_jsonable(value: object) -> object:
    """Dataclasses, enums and tuples → plain JSON values."""
    if value is None or isinstance(value, bool | int | float | str):
        return value.value if isinstance(value, Enum) else value
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    import dataclasses  # imports inspect: off the fast path, which sends plain values

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.value
    return value


def print_json(value: object) -> None:
    click.echo(json.dumps(to_jsonable(value), indent=2, ensure_ascii=False))


def exit_code(exc: Exception) -> int:
    """The README's exit code for an engine error: no index → 1 ("nothing there"),
    another writer with ``--no-wait`` → 3, any other → 2."""
    from codesift.indexer.errors import IndexBusyError, IndexMissingError

    if isinstance(exc, IndexBusyError):
        return EXIT_BUSY
    if isinstance(exc, IndexMissingError):
        return EXIT_NOTHING
    return EXIT_ERROR


@contextmanager
def engine_errors() -> Iterator[None]:
    """Map engine errors to a readable line on stderr and the README's exit codes, in one place."""
    from codesift.indexer.errors import CodesiftError

    try:
        yield
    except CodesiftError as exc:
        click.echo(f"codesift: {exc}", err=True)
        sys.exit(exit_code(exc))


class Parts(Protocol):
    """What a command's answer is computed with: in this process (``LocalParts``) or
    in a running server, whose store, model and symbol index are already loaded."""

    root: Path
    settings: Settings

    def store(self) -> Store: ...

    def embedder(self) -> Embedder: ...

    def symbol_index(self) -> SymbolIndex | None: ...

    def graph(self, hops: int) -> AbstractContextManager[Graph | None]: ...


class LocalParts:
    """The engine's parts opened by this process for one command."""

    def __init__(self, root: Path) -> None:
        from codesift.indexer.settings import load_settings

        self.root = root
        self.settings = load_settings(root)

    def store(self) -> Store:
        from codesift.indexer.store import open_store

        return open_store(self.root, self.settings)

    def embedder(self) -> Embedder:
        from codesift.indexer.embed import make_embedder

        return make_embedder(self.settings.embed)

    def symbol_index(self) -> SymbolIndex | None:
        return None  # find_symbols reads the table itself

    def graph(self, hops: int) -> AbstractContextManager[Graph | None]:
        return nullcontext(None)  # the search loads one when it follows references


def answer(
    root: Path, command: str, args: dict[str, Any], compute: Callable[..., dict[str, object]]
) -> dict[str, Any]:
    """A command's JSON answer: from the server running for this index when there is
    one (``endpoint``), else ``compute(LocalParts(root), **args)`` here. Errors end the
    command the same way on both paths (a line on stderr, the README's exit code)."""
    from .endpoint import consult

    reply, outcome = consult(root, command, cast(dict[str, Any], to_jsonable(args)))
    if reply is None:
        with engine_errors():
            parts = LocalParts(root)
            payload = compute(parts, **args)
        if outcome == "absent":
            start_background(root, parts.settings, command)
        return payload
    if "usage" in reply:
        raise click.BadParameter(str(reply["usage"]))
    if "error" in reply:
        click.echo(f"codesift: {reply['error']['message']}", err=True)
        sys.exit(int(reply["error"]["exit"]))
    return dict(reply["ok"])


def start_background(root: Path, settings: Settings, command: str) -> None:
    """After an in-process answer, with no server listening for ``root``: start a
    background one (server/background.py) when allowed and ``root`` has an index."""
    from .background import start, wanted

    if not wanted(settings.cli.background_server):
        return
    from codesift.indexer.locate import index_exists_at, index_uri

    if not index_exists_at(index_uri(root, settings.index.index_dir)):
        return  # grep answers without an index; a server for it would hold nothing
    start(root, settings.cli.server_idle_s, command)


def find_root(explicit: Path | None) -> Path:
    """The workspace whose index a read-only command answers from.

    ``--root DIR`` means DIR's index and no other. Without it, the nearest index at
    or above the current folder, when it is in the same repository; else the current
    folder (which then says "no index"). A --root that is not a folder exits 2.
    """
    from codesift.indexer.locate import index_root_for

    if explicit is not None and not explicit.is_dir():
        click.echo(f"codesift: {explicit}: no such folder", err=True)
        sys.exit(EXIT_ERROR)
    return index_root_for(explicit, Path.cwd())


def say_index(root: Path) -> None:
    """Name the index an answer came from (stderr, so stdout stays the answer alone)."""
    err.print(f"[dim]index: {root}[/]", highlight=False)


def with_index(root: Path, payload: object) -> dict[str, object]:
    """A JSON answer that names its index root: a dict gains ``index_root``; a list is
    wrapped as ``{"index_root": …, key: list}`` by the caller."""
    body = to_jsonable(payload)
    assert isinstance(body, dict)
    return {"index_root": str(root), **body}


root_option = click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Answer from this folder's index only (default: the nearest index above, same repository).",
)

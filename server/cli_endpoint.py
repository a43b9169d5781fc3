"""A project of the language server answers ``codesift search`` / ``grep`` / ``symbols``.

The CLI's own ``*_payload`` functions run here with the project's parts (its open
store, loaded model and in-memory symbol names) instead of ones the CLI process
would open, so the answer is the CLI's, only sooner. Unsaved editor buffers are
left out: the CLI reads the files on disk. The settings are read from the
workspace's files as the CLI reads them (an editor's own options do not apply
to a CLI answer); when they describe another index than the project's (another
index folder, chunking or model), the server refuses and the CLI answers itself.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import click

from codesift.indexer.errors import CodesiftError
from codesift.indexer.settings import Settings, load_settings

from .cli_common import Parts, exit_code
from .cli_search import grep_payload, search_payload, symbols_payload
from .endpoint import Endpoint, Reply

if TYPE_CHECKING:
    from codesift.indexer.embed import Embedder
    from codesift.indexer.graph import Graph
    from codesift.indexer.search.symbols import SymbolIndex
    from codesift.indexer.store import Store

    from .projects import Project

COMMANDS: dict[str, Callable[..., dict[str, object]]] = {
    "search": search_payload,
    "grep": grep_payload,
    "symbols": symbols_payload,
}


class ProjectParts:
    """A project's loaded parts, with the settings the CLI would read."""

    def __init__(self, project: Project, settings: Settings) -> None:
        self.root = project.root
        self.settings = settings
        self._project = project

    def store(self) -> Store:
        return self._project.store()

    def embedder(self) -> Embedder:
        return self._project.embedders.get(self.settings.embed)

    def symbol_index(self) -> SymbolIndex | None:
        return self._project.symbol_index()

    @contextlib.contextmanager
    def graph(self, hops: int) -> Iterator[Graph | None]:
        if hops <= 0:
            yield None
            return
        with self._project.graph() as graph:
            yield graph


def answer(project: Project, command: str, args: dict[str, Any]) -> Reply:
    """One CLI request: ``{"ok": payload}``, an engine error with its exit code, a usage
    error, or a refusal (then the CLI answers in-process)."""
    compute = COMMANDS.get(command)
    if compute is None:
        return {"refused": f"unknown command {command!r}"}
    try:
        settings = load_settings(project.root)
    except CodesiftError as exc:
        return {"refused": f"settings: {exc}"}
    ours = project.settings
    if (settings.index, settings.chunk, settings.embed) != (ours.index, ours.chunk, ours.embed):
        return {"refused": "the editor's settings describe another index than the workspace's files"}
    parts: Parts = ProjectParts(project, settings)
    try:
        return {"ok": compute(parts, **args)}
    except TypeError as exc:  # arguments of another CLI version
        return {"refused": f"bad arguments: {exc}"}
    except click.UsageError as exc:
        return {"usage": exc.message}
    except CodesiftError as exc:
        return {"error": {"exit": exit_code(exc), "message": str(exc)}}


def open_endpoint(project: Project) -> Endpoint | None:
    """Publish the project's CLI socket; closed with the project. None when it cannot be
    published (another server holds it; logged)."""
    endpoint = Endpoint(project.root, lambda command, args: answer(project, command, args))
    if not endpoint.open():
        return None
    project.on_close.append(endpoint.close)
    return endpoint

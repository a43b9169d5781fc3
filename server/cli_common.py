"""What the ``codesift`` commands share: consoles, JSON output, engine errors, the root."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path

import click
from rich.console import Console

from codesift.indexer.errors import CodesiftError, IndexBusyError

err = Console(stderr=True)
out = Console()

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
        click.echo(f"codesift: {exc}", err=True)
        sys.exit(EXIT_BUSY)
    except CodesiftError as exc:
        click.echo(f"codesift: {exc}", err=True)
        sys.exit(EXIT_ERROR)


def find_root(start: Path) -> Path:
    """The nearest ancestor of ``start`` holding a ``.codesift`` index, else ``start``."""
    start = start.resolve()
    for d in (start, *start.parents):
        if (d / ".codesift").is_dir():
            return d
    return start


root_option = click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Workspace root (default: the nearest folder above holding .codesift/).",
)

"""The CLI's thin path (server/thin.py) reads a command line as click does, or leaves it to click.

Every command line here is parsed both ways: the thin parser must either give
exactly the parameters the click command gets, or give up (None) so that click
answers; a command line click rejects is never one the thin path accepts. The
common questions must be handled thin (else the path would be correct but useless).
``--version`` is read from the installed metadata as ``importlib.metadata`` reads it.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from codesift.server.cli_search import grep, search, symbols
from codesift.server.thin import THIN_ENV, installed_version, parse

COMMANDS = {"search": search, "grep": grep, "symbols": symbols}

HANDLED = [
    ("search", ["parse a url"]),
    ("search", ["q", "--mode", "bm25", "--limit", "3"]),
    ("search", ["q", "--limit=3", "--files", "--json"]),
    ("search", ["--include", "*.py", "q", "--include", "src/**", "--exclude=**/tests/**"]),
    ("search", ["q", "--lang", "python", "--kind", "function", "--project", "ws", "--hops", "2"]),
    ("search", ["q", "--semantic-weight", "0.5", "--keyword-weight", "1e-1", "--grep-weight", "2"]),
    ("search", ["q", "--min-similarity", "0.2", "--threshold", "0.9", "--keywords", "foo bar"]),
    ("search", ["q", "--mode", "vector", "--root", "."]),
    ("search", ["--", "-q"]),
    ("search", [""]),
    ("grep", ["getattr"]),
    ("grep", ["def \\w+", "--regex", "-C", "2"]),
    ("grep", ["x", "-e", "-i"]),
    ("grep", ["x", "-i", "-s"]),
    ("grep", ["x", "-s", "-i", "-S"]),
    ("grep", ["x", "--ignore-case", "--case-sensitive"]),
    ("grep", ["x", "-C5", "--context=7", "--max-matches", "10"]),
    ("grep", ["x", "--include=a", "--include", "b", "--exclude", "c", "--json"]),
    ("grep", ["-", "--smart-case"]),
    ("symbols", ["urlparse"]),
    ("symbols", ["Temp", "--limit", "5", "--json"]),
    ("symbols", ["--limit", " 7 ", "x"]),
]

LEFT_TO_CLICK = [
    ("search", ["q", "--help"]),
    ("search", ["--help"]),
    ("search", []),
    ("search", ["a", "b"]),
    ("search", ["q", "--mode", "fuzzy"]),
    ("search", ["q", "--mode", "BM25"]),
    ("search", ["q", "--limit", "many"]),
    ("search", ["q", "--limit"]),
    ("search", ["q", "--limit", "-1"]),
    ("search", ["q", "--files=yes"]),
    ("search", ["q", "--no-such-option"]),
    ("search", ["q", "--lim", "3"]),
    ("search", ["q", "--keywords", "--json"]),
    ("search", ["q", "--semantic-weight", "heavy"]),
    ("grep", ["-x"]),
    ("grep", ["x", "-ei"]),
    ("grep", ["x", "-C"]),
    ("grep", ["x", "-C", "lots"]),
    ("grep", ["x", "-h"]),
    ("grep", ["x", "--regex=1"]),
    ("symbols", ["x", "--limit", "1.5"]),
    ("symbols", ["x", "-v"]),
]


def click_params(command: str, argv: list[str]) -> dict[str, object] | None:
    try:
        with COMMANDS[command].make_context(command, list(argv)) as ctx:
            return dict(ctx.params)
    except (click.exceptions.Exit, click.UsageError):
        return None


@pytest.mark.parametrize(("command", "argv"), HANDLED + LEFT_TO_CLICK)
def test_the_thin_parser_reads_a_command_line_as_click_or_leaves_it_to_click(
    command: str, argv: list[str]
) -> None:
    thin = parse(command, argv)
    if thin is None:
        assert (command, argv) in LEFT_TO_CLICK, "a common command line must be handled thin"
        return
    assert (command, argv) in HANDLED, "this command line is click's to answer"
    assert thin == click_params(command, argv)


def test_every_option_of_the_click_commands_is_known_to_the_thin_parser() -> None:
    """A new option added to a click command must be added to the thin parser (or the
    thin path would hand every use of it to click: correct, but slow)."""
    from codesift.server.thin import _SPECS

    for name, command in COMMANDS.items():
        spellings = {o for p in command.params if isinstance(p, click.Option) for o in p.opts}
        assert spellings - {"--help"} == set(_SPECS[name][1]), name


def test_version_is_read_as_importlib_metadata_reads_it() -> None:
    assert installed_version() == importlib.metadata.version("codesift")


def _run(args: list[str], cwd: Path, thin: bool) -> tuple[subprocess.CompletedProcess[str], bool]:
    """Run ``codesift ARGS`` through the entry point; also whether click was imported."""
    code = (
        "import sys\nfrom codesift.server.thin import main\n"
        f"sys.argv = ['codesift', *{args!r}]\n"
        "try:\n    main()\nfinally:\n    sys.stderr.write('\\nCLICK=%s' % ('click' in sys.modules))"
    )
    env = {**os.environ, THIN_ENV: "1" if thin else "0"}
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    stderr, _, flag = run.stderr.rpartition("\nCLICK=")
    return subprocess.CompletedProcess(run.args, run.returncode, run.stdout, stderr), flag == "True"


def test_codesift_version_prints_as_click_does_without_importing_it(tmp_path: Path) -> None:
    thin, thin_click = _run(["--version"], tmp_path, thin=True)
    full, full_click = _run(["--version"], tmp_path, thin=False)
    assert (thin.returncode, thin.stdout, thin.stderr) == (full.returncode, full.stdout, full.stderr)
    assert thin.stdout == f"codesift {importlib.metadata.version('codesift')}\n"
    assert not thin_click and full_click

"""The ``codesift`` entry point: a thin path for questions a running server answers.

``codesift search / grep / symbols`` through a running server (an editor's language
server, or the background one the CLI starts) spend most of their time starting
Python and importing click (~80 ms with logging); the answer itself is one
socket exchange and some printing. So the entry point first tries a thin path
that imports only the standard library, ``endpoint`` (the socket's client half),
``cli_print`` and ``codesift.indexer.locate`` (which index answers: stdlib only):

- it parses the command's arguments itself, into the same values the click
  command would get (a test compares the two on many command lines); anything it
  is not sure of — ``--help``, an unknown option, a value that does not convert,
  a value that starts with ``-``, a ``--root`` that is not a folder, a missing or
  extra argument — goes to the click command, which answers or fails as always;
- it asks the server for the root; with no server answering (none listens, a
  refusal, another code version, a usage error to report) it hands over to the
  click command, which asks again and answers in-process as before (and starts a
  background server);
- it prints the answer with the click command's own printing (``cli_print``), so
  the bytes are the same, and ends with the same exit code.

Answered in-process instead (no server), ``search / grep / symbols`` run without the
garbage collector and end with ``os._exit`` once their output is flushed
(``CODESIFT_FAST_EXIT=0``: the usual exit). ``codesift --version`` reads the installed
package's metadata file without click or ``importlib.metadata``. ``CODESIFT_THIN=0`` turns the thin path off.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable
from pathlib import Path

TYPE_CHECKING = False  # typing costs this path a few ms
if TYPE_CHECKING:
    from typing import Any

    _Kind = Any

THIN_ENV = "CODESIFT_THIN"
FAST_EXIT_ENV = "CODESIFT_FAST_EXIT"  # "0": a one-shot read command exits the usual way
_NAME = "codesift"

# Per command: the positional argument's name, then each option's spellings →
# (parameter, how it takes a value). Kinds: "str", "int", "float", ("choice", …),
# "multi" (repeatable string), "flag" (True), ("const", value) (a flag_value option).
_ROOT: dict[str, tuple[str, _Kind]] = {"--root": ("root", "str")}
_JSON: dict[str, tuple[str, _Kind]] = {"--json": ("as_json", "flag")}

_SPECS: dict[str, tuple[str, dict[str, tuple[str, _Kind]], dict[str, Any]]] = {
    "search": (
        "query",
        {
            **_ROOT,
            "--mode": ("mode", ("choice", "hybrid", "bm25", "vector", "grep")),
            "--keywords": ("keywords", "str"),
            "--limit": ("limit", "int"),
            "--include": ("include", "multi"),
            "--exclude": ("exclude", "multi"),
            "--lang": ("lang", "multi"),
            "--kind": ("kind", "multi"),
            "--project": ("project", "multi"),
            "--semantic-weight": ("semantic_weight", "float"),
            "--keyword-weight": ("keyword_weight", "float"),
            "--grep-weight": ("grep_weight", "float"),
            "--min-similarity": ("min_similarity", "float"),
            "--threshold": ("threshold", "float"),
            "--hops": ("hops", "int"),
            "--files": ("files", "flag"),
            **_JSON,
        },
        {
            "mode": "hybrid",
            "keywords": None,
            "limit": None,
            "include": (),
            "exclude": (),
            "lang": (),
            "kind": (),
            "project": (),
            "semantic_weight": None,
            "keyword_weight": None,
            "grep_weight": None,
            "min_similarity": None,
            "threshold": None,
            "hops": 0,
            "files": False,
        },
    ),
    "grep": (
        "pattern",
        {
            **_ROOT,
            "--regex": ("regex", "flag"),
            "-e": ("regex", "flag"),
            "--ignore-case": ("case", ("const", "insensitive")),
            "-i": ("case", ("const", "insensitive")),
            "--case-sensitive": ("case", ("const", "sensitive")),
            "-s": ("case", ("const", "sensitive")),
            "--smart-case": ("case", ("const", "smart")),
            "-S": ("case", ("const", "smart")),
            "--context": ("context", "int"),
            "-C": ("context", "int"),
            "--include": ("include", "multi"),
            "--exclude": ("exclude", "multi"),
            "--max-matches": ("max_matches", "int"),
            **_JSON,
        },
        {
            "regex": False,
            "case": "smart",
            "context": None,
            "include": (),
            "exclude": (),
            "max_matches": 10000,
        },
    ),
    "symbols": ("name", {**_ROOT, "--limit": ("limit", "int"), **_JSON}, {"limit": 50}),
}


def parse(command: str, argv: list[str]) -> dict[str, Any] | None:
    """The click command's parameters for ``argv`` (the words after the command's name):
    every one, with its default when not given, ``root`` as a ``Path`` or None; None
    when the thin path leaves this command line to click."""
    positional_name, options, defaults = _SPECS[command]
    params: dict[str, Any] = {"root": None, "as_json": False, **defaults}
    multi: dict[str, list[str]] = {}
    positional: list[str] = []
    words = iter(argv)
    for word in words:
        if word == "--":
            positional.extend(words)
            break
        if not word.startswith("-") or word == "-":
            positional.append(word)
            continue
        name, eq, inline = word.partition("=")
        if not name.startswith("--"):
            name, inline, eq = word[:2], word[2:], "=" if len(word) > 2 else ""
        spec = options.get(name)
        if spec is None:
            return None  # --help, an unknown option, combined short flags: click's
        dest, kind = spec
        if kind == "flag" or (isinstance(kind, tuple) and kind[0] == "const"):
            if eq:
                return None
            params[dest] = True if kind == "flag" else kind[1]
            continue
        value: str | None = inline if eq else next(words, None)
        if value is None or (not eq and value.startswith("-")):
            return None  # a missing value, or one click may read as an option
        converted = _convert(value, kind)
        if converted is None:
            return None
        if kind == "multi":
            multi.setdefault(dest, []).append(value)
        else:
            params[dest] = converted
    if len(positional) != 1:
        return None
    params[positional_name] = positional[0]
    params.update({k: tuple(v) for k, v in multi.items()})
    if params["root"] is not None:
        params["root"] = Path(params["root"])
    return params


def _convert(value: str, kind: _Kind) -> object | None:
    if kind in ("str", "multi"):
        return value
    if isinstance(kind, tuple):  # a choice
        return value if value in kind[1:] else None
    number: Callable[[str], object] = int if kind == "int" else float
    try:
        return number(value)
    except ValueError:
        return None


def _answer(command: str, params: dict[str, Any]) -> int | None:
    """Ask the server for ``root`` and print its answer: the exit code, or None when
    no server answered (the click command then answers)."""
    from codesift.indexer.locate import index_root_for

    from .endpoint import consult

    explicit: Path | None = params["root"]
    if explicit is not None and not explicit.is_dir():
        return None  # click says "no such folder" (or that it is a file)
    root = index_root_for(explicit, Path.cwd())
    positional_name = _SPECS[command][0]
    args = {
        k: list(v) if isinstance(v, tuple) else v for k, v in params.items() if k not in ("root", "as_json")
    }
    reply, _outcome = consult(root, command, args)
    if reply is None or "usage" in reply or ("ok" not in reply and "error" not in reply):
        return None
    if "error" in reply:
        if "\x1b" in str(reply["error"]["message"]):
            return None  # click.echo strips terminal escapes off a pipe: let it print this one
        sys.stderr.write(f"codesift: {reply['error']['message']}\n")
        sys.stderr.flush()
        return int(reply["error"]["exit"])
    from . import cli_print

    payload = reply["ok"]
    if params["as_json"]:
        cli_print.print_json(payload)
        return 0
    if command == "search":
        return cli_print.print_search(payload, params["files"])
    if command == "grep":
        return cli_print.print_grep(payload, params[positional_name])
    return cli_print.print_symbols(payload, params[positional_name])


def installed_version() -> str | None:
    """codesift's version from the metadata ``importlib.metadata`` would find first on
    ``sys.path`` (a ``*.dist-info/METADATA`` or ``*.egg-info/PKG-INFO``); None when none."""
    for entry in sys.path:
        folder = entry or "."
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in sorted(names):
            stem, dot, suffix = name.rpartition(".")
            if suffix not in ("dist-info", "egg-info") or not dot:
                continue
            if stem.partition("-")[0].lower().replace("_", "-") != _NAME:
                continue
            meta = os.path.join(folder, name, "METADATA" if suffix == "dist-info" else "PKG-INFO")
            try:
                with open(meta, encoding="utf-8") as f:
                    for line in f:
                        if line.startswith("Version:"):
                            return line.partition(":")[2].strip()
                        if not line.strip():
                            break
            except OSError:
                continue
    return None


def main() -> None:
    argv = sys.argv[1:]
    if os.environ.get(THIN_ENV, "") != "0":
        if argv == ["--version"] and (found := installed_version()):
            sys.stdout.write(f"{_NAME} {found}\n")
            sys.stdout.flush()
            sys.exit(0)
        if argv and argv[0] in _SPECS and (params := parse(argv[0], argv[1:])) is not None:
            code = _answer(argv[0], params)
            if code is not None:
                sys.exit(code)
    # A read command answered here (no server) is one short process: the collector's
    # passes over the ~100k objects LanceDB, pydantic, pyarrow and numpy make as they
    # import (they free < 1k) and its last one at exit cost a cold search ~0.25 s.
    one_shot = bool(argv) and argv[0] in _SPECS and os.environ.get(FAST_EXIT_ENV, "") != "0"
    if one_shot:
        gc.disable()
    from .cli import main as click_main

    if not one_shot:
        click_main()
        return
    try:
        click_main()
    except SystemExit as done:
        _exit_now(done.code)
        raise
    finally:
        gc.freeze()  # a traceback to print: the usual exit, without a full collection


def _exit_now(code: object) -> None:
    """End a one-shot read command (answered in this process) as soon as its output is
    out: stdout and stderr flushed, then ``os._exit`` with the command's exit code. With
    LanceDB, pydantic, pyarrow and numpy imported, the interpreter's own exit — a full
    collection, then ~500 modules torn down — costs a cold search ~0.1 s and frees
    nothing. Nothing is left to run: a read command writes nothing,
    the model's loading thread is joined, log records are written as they are made.
    A message to print as the exit (``sys.exit("...")``) or output that cannot be
    flushed (a closed pipe) returns: the interpreter exits the usual way."""
    if code is not None and not isinstance(code, int):
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code or 0)


if __name__ == "__main__":  # pragma: no cover
    main()

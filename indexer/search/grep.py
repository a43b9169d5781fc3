"""Exact grep: ripgrep over the files on disk, RE2 over unsaved buffers.

Every matching line comes back inside a passage of ±``context`` lines; matches
at most ``2 × context`` lines apart in one file share a passage. Nothing is
scored or filtered away: the only limits are ``max_matches`` and the timeout,
and hitting either says so in the result.

Both engines are linear-time (ripgrep's Rust regex, Google RE2), so a
catastrophic pattern such as ``(a+)+$`` costs no more than a plain one. Only a
pattern RE2 rejects but ripgrep accepts falls back to the ``regex`` package,
and then under the call's deadline.
"""

from __future__ import annotations

import base64
import codecs
import json
import logging
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from ..errors import ConfigError, QueryError, WorkspaceError
from ..paths import index_path, os_path
from ..settings import IndexSettings
from . import bounds
from .bounds import check_globs, check_int, check_query
from .grep_memory import (
    FileHits,
    OverlayFilter,
    TextMatcher,
    normalise_overlay_path,
    search_overlay,
)
from .passages import (
    CaseMode,
    GrepResult,
    Passage,
    build_passages,
    byte_to_char_span,
    is_case_sensitive,
)

if TYPE_CHECKING:  # pathspec loads only when the index has include globs
    import pathspec

logger = logging.getLogger(__name__)

_STDERR_KEEP = 16_000
# A file whose context windows would span this many bytes a line or more is decoded
# whole: then one decode and split beat finding each window's lines.
DENSE_LINE_BYTES = 64
_decode_json = json.JSONDecoder().decode


def find_rg() -> str:
    """The ``rg`` binary: the one installed next to this interpreter, else on PATH."""
    name = "rg.exe" if os.name == "nt" else "rg"
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("rg")
    if found is None:
        raise ConfigError("ripgrep (rg) is not installed: pip install ripgrep==14.1.0")
    return found


def rg_arguments(
    pattern: str,
    *,
    regex: bool,
    case_sensitive: bool,
    index_settings: IndexSettings,
    include: Sequence[str],
    exclude: Sequence[str],
    max_matches: int,
    sort_paths: bool = False,
) -> list[str]:
    """The ripgrep command line (without the binary) for one grep call, run in the root.

    Match lines only: the context lines are read from the files afterwards
    (``_fill_context``). As JSON, ±10 lines of context are ~20 decoded messages
    per match, which made grep 2-3.5× slower than rg itself on the kernel tree.
    """
    args = ["--json", "--no-config", "--hidden", "--no-require-git", "--no-ignore-dot"]
    args += ["--max-count", str(max_matches)]
    if sort_paths:  # one thread, files in path order: the first max_matches are the same each time
        args += ["--sort", "path"]
    args += ["--case-sensitive" if case_sensitive else "--ignore-case"]
    # --crlf lets `$` match before "\r\n"; a literal needs no help.
    args += ["--crlf"] if regex else ["--fixed-strings"]
    if index_settings.max_file_bytes > 0:
        args += ["--max-filesize", str(index_settings.max_file_bytes)]
    if not index_settings.respect_gitignore:
        args += ["--no-ignore-vcs"]
    # ripgrep ORs positive globs; the call's include narrows the index's, and
    # then grep() applies the index's include to the results itself.
    for glob in include or index_settings.include:
        args += ["--glob", glob]
    # The last matching glob wins in ripgrep, so exclusions come after inclusions.
    for glob in (*index_settings.exclude, *exclude):
        args += ["--glob", "!" + glob]
    args += ["--glob", "!.git", "--regexp", pattern, "--", "./"]
    return args


# Beyond these a request is a mistake: a context of 10⁹ lines read every file whole
# for every match, and the answer had to be built in memory.


def _query_error(pattern: str, stderr: str) -> QueryError | None:
    text = stderr.strip()
    if "regex parse error" in text:
        detail = next(
            (ln[len("error:") :].strip() for ln in text.splitlines() if ln.startswith("error:")),
            text.splitlines()[-1],
        )
        return QueryError(f"invalid regex {pattern!r}: {detail}")
    if "error parsing glob" in text:
        detail = text.removeprefix("rg: ").removeprefix("error parsing glob ")
        return QueryError(f"invalid glob {detail}")
    if 'literal "\\n" is not allowed' in text:
        return QueryError(f"pattern {pattern!r} spans lines: grep matches within one line")
    return None


def _path_of(data: Mapping[str, object]) -> str:
    raw = data.get("path")
    assert isinstance(raw, dict)
    path = str(raw["text"]) if "text" in raw else os.fsdecode(base64.b64decode(str(raw["bytes"])))
    return index_path(path.removeprefix("./"))


def _text_of(lines: Mapping[str, str]) -> tuple[str, bytes | None]:
    """A line's text without its terminator, and its bytes when offsets need converting."""
    if "text" in lines:
        text = lines["text"].removesuffix("\n").removesuffix("\r")
        return text, None if text.isascii() else text.encode("utf-8")
    body = base64.b64decode(lines["bytes"]).removesuffix(b"\n").removesuffix(b"\r")
    return body.decode("utf-8", "replace"), body


@dataclass(slots=True)
class _RgRun:
    files: dict[str, FileHits] = field(default_factory=dict)
    matches: int = 0
    truncated: str = ""


def _add_file(run: _RgRun, path: str, hits: FileHits, max_matches: int) -> None:
    """Add one file's hits, keeping at most ``max_matches`` match lines in all."""
    room = max_matches - run.matches
    if len(hits.matches) > room:
        for number in sorted(hits.matches)[room:]:
            del hits.matches[number]
        run.truncated = f"stopped at max_matches ({max_matches} matching lines)"
    if hits.matches:
        run.files[path] = hits
        run.matches += len(hits.matches)


def _fill_context(root: Path, path: str, hits: FileHits, context: int) -> None:
    """Add the lines within ``context`` of each match, read from the file ripgrep matched.

    From each match line's byte offset (ripgrep reports it) the window's ends are
    found by looking for newlines around it, so the cost follows the matches, not
    the file's size; each window is then decoded once and split (a newline byte is
    never part of a UTF-8 sequence, so this equals decoding line by line). Matches
    go in line order, and a window starts after the lines the one before filled.
    Lines split as ripgrep splits them (at "\n", a trailing "\r" dropped), decoded
    with U+FFFD for invalid UTF-8. A file that is gone or unreadable since keeps its
    match lines alone.
    """
    try:
        raw = _as_ripgrep_reads(root / os_path(path))
    except OSError:
        return
    size = len(raw)
    lines = hits.lines
    if len(hits.offsets) * (2 * context + 1) * DENSE_LINE_BYTES >= size:
        _fill_context_whole(raw, hits, context)
        return
    done = 0  # lines up to this one are filled
    for number, offset in sorted(hits.offsets.items()):
        first, start = number, offset  # the window's first line and where it starts
        low = max(1, number - context, done + 1)
        while first > low and start > 0:
            start = raw.rfind(b"\n", 0, start - 1) + 1
            first -= 1
        last, end = number, raw.find(b"\n", offset)  # the window's last line and where it ends
        high = number + context
        while last < high and end != -1 and end + 1 < size:
            # a final "\n" ends the last line; it starts none
            end = raw.find(b"\n", end + 1)
            last += 1
        text = raw[start : size if end == -1 else end].decode("utf-8", "replace")
        window = [t.removesuffix("\r") for t in text.split("\n")] if "\r" in text else text.split("\n")
        # The match lines ripgrep gave are these same lines: overwriting them changes nothing.
        lines.update(enumerate(window, start=first))
        done = max(done, last)


def _fill_context_whole(raw: bytes, hits: FileHits, context: int) -> None:
    """``_fill_context`` for a file whose windows cover much of it: decoded and split
    once, the windows then taken as slices (no per-line work in Python)."""
    text = raw.decode("utf-8", "replace")
    every = text.split("\n")
    if text.endswith("\n"):
        every.pop()  # a final "\n" ends the last line; it starts none
    lines = hits.lines
    done = 0
    for number in sorted(hits.offsets):
        first, last = max(1, number - context, done + 1), min(len(every), number + context)
        if last >= first:
            window = every[first - 1 : last]
            if any(t.endswith("\r") for t in window):
                window = [t.removesuffix("\r") for t in window]
            lines.update(enumerate(window, start=first))
        done = max(done, last)


def _as_ripgrep_reads(path: Path) -> bytes:
    """A file's bytes as ripgrep searched them, so its offsets point at the right lines:
    ripgrep drops a UTF-8 byte-order mark and transcodes UTF-16 with a BOM to UTF-8
    (its offsets count those bytes, not the file's)."""
    raw = path.read_bytes()
    if raw.startswith(codecs.BOM_UTF8):
        return raw[len(codecs.BOM_UTF8) :]
    if raw[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        return raw.decode("utf-16", "replace").encode("utf-8")
    return raw


def _read_stderr(stream: IO[bytes], sink: list[bytes]) -> None:
    kept = 0
    for chunk in iter(lambda: stream.read(8192), b""):
        if kept < _STDERR_KEEP:
            sink.append(chunk)
            kept += len(chunk)


def _gitignore_spec(lines: Sequence[str]) -> pathspec.GitIgnoreSpec:
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(lines)


def _run_rg(
    root: Path,
    args: list[str],
    pattern: str,
    *,
    skip: Iterable[str],
    keep: pathspec.GitIgnoreSpec | None,
    max_matches: int,
    timeout_s: float,
    on_file: Callable[[str, FileHits], None],
) -> _RgRun:
    """Run ripgrep and collect its hits per file; ``on_file`` sees each file as soon as
    ripgrep is done with it, so reading context overlaps ripgrep's walk."""
    run = _RgRun()
    skipped = set(skip)
    try:
        proc = subprocess.Popen(
            [find_rg(), *args],
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as exc:
        raise ConfigError(f"cannot run ripgrep: {exc}") from exc
    assert proc.stdout is not None and proc.stderr is not None
    timed_out = threading.Event()

    def expire() -> None:
        timed_out.set()
        proc.kill()

    timer = threading.Timer(timeout_s, expire)
    timer.daemon = True
    stderr: list[bytes] = []
    reader = threading.Thread(target=_read_stderr, args=(proc.stderr, stderr), daemon=True)
    timer.start()
    reader.start()
    finished = False
    current = FileHits()
    try:
        for raw in proc.stdout:
            try:
                message = _decode_json(raw.decode("utf-8", "replace"))
            except ValueError:
                if timed_out.is_set():
                    break  # killed mid-line
                raise
            kind = message.get("type")
            data = message.get("data", {})
            if kind == "begin":
                current = FileHits()
            elif kind == "context":
                current.lines[int(data["line_number"])] = _text_of(data["lines"])[0]
            elif kind == "match":
                number = int(data["line_number"])
                current.offsets[number] = int(data["absolute_offset"])
                text, body = _text_of(data["lines"])
                current.lines[number] = text
                current.matches[number] = [
                    (sm["start"], sm["end"])
                    if body is None
                    else byte_to_char_span(body, int(sm["start"]), int(sm["end"]))
                    for sm in data["submatches"]
                ]
            elif kind == "end":
                path = _path_of(data)
                if data.get("binary_offset") is not None or not current.matches:
                    continue  # a binary file: ripgrep stopped at a NUL byte
                if path in skipped or (keep is not None and not keep.match_file(path)):
                    continue
                _add_file(run, path, current, max_matches)
                if current.matches:
                    on_file(path, current)
                if run.truncated:
                    proc.kill()
                    break
            elif kind == "summary":
                finished = True
    finally:
        timer.cancel()
        proc.stdout.close()
        code = proc.wait()
        reader.join(timeout=5)
    if timed_out.is_set() and not run.truncated:
        run.truncated = f"timed out after {timeout_s:g} s"
    message_text = b"".join(stderr).decode("utf-8", "replace")
    if code == 2 and not finished and not run.truncated:
        error = _query_error(pattern, message_text)
        if error is not None:
            raise error
        raise WorkspaceError(f"ripgrep failed in {root}: {message_text.strip() or 'exit code 2'}")
    if code == 2 and message_text:
        logger.warning("ripgrep reported errors (results kept): %s", message_text.strip()[:2000])
    return run


# ── the engine function ──────────────────────────────────────────────────────


def grep(
    root: Path,
    pattern: str,
    *,
    regex: bool = False,
    case: CaseMode = "smart",
    context: int = 10,
    index_settings: IndexSettings,
    overlay: Mapping[str, str] | None = None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    max_matches: int = 10000,
    timeout_s: float = 10.0,
    sort_paths: bool = False,
) -> GrepResult:
    """Grep a workspace for a literal (default) or a regex; passages of ±``context`` lines.

    Files on disk are searched by ripgrep with the workspace's ignore rules:
    .gitignore (also outside a git repository), hidden files but never
    ``.git/``, ``index_settings`` include / exclude / size limit, the call's
    ``include`` / ``exclude`` globs; binary files are skipped. ``overlay`` maps
    workspace-relative paths to unsaved buffer text: those paths are searched
    in memory instead of on disk (also when they do not exist on disk yet).

    Every match line is returned, ordered by path then line, up to
    ``max_matches`` matching lines; hitting that or ``timeout_s`` sets
    ``truncated`` with the reason. ripgrep searches files in parallel, so which
    matches a cut at ``max_matches`` keeps can differ between calls; with
    ``sort_paths`` it walks in path order on one thread (slower on big trees) and
    keeps the same ones every time, for callers that page. Raises QueryError for an
    empty pattern, an invalid regex or glob, and WorkspaceError when the root is
    not a directory.
    """
    started = time.monotonic()
    deadline = started + timeout_s
    if pattern == "":
        raise QueryError("empty pattern")
    check_int("context", context, 0, bounds.MAX_CONTEXT)
    check_int("max_matches", max_matches, 1, bounds.MAX_MATCHES)
    check_query("pattern", pattern)
    check_globs("include", include)
    check_globs("exclude", exclude)
    if not root.is_dir():
        raise WorkspaceError(f"workspace root is not a directory: {root}")
    sensitive = is_case_sensitive(pattern, regex=regex, case=case)

    buffers: dict[str, str] = {}
    for key, text in (overlay or {}).items():
        norm = normalise_overlay_path(key)
        if norm is None:
            logger.warning("ignoring overlay path outside the workspace: %s", key)
        else:
            buffers[norm] = text

    both_includes = bool(include) and bool(index_settings.include)
    args = rg_arguments(
        pattern,
        regex=regex,
        case_sensitive=sensitive,
        index_settings=index_settings,
        include=include,
        exclude=exclude,
        max_matches=max_matches,
        sort_paths=sort_paths,
    )
    run = _run_rg(
        root,
        args,
        pattern,
        skip=buffers,
        keep=_gitignore_spec(index_settings.include) if both_includes else None,
        max_matches=max_matches,
        timeout_s=timeout_s,
        on_file=lambda path, hits: _fill_context(root, path, hits, context) if context > 0 else None,
    )

    if buffers and not run.truncated:
        matcher = TextMatcher(pattern, regex=regex, case_sensitive=sensitive, deadline=deadline)
        allowed = OverlayFilter(
            root,
            include=(index_settings.include, include),
            exclude=(*index_settings.exclude, *exclude),
            respect_gitignore=index_settings.respect_gitignore,
        )
        try:
            for path, hits in search_overlay(buffers, matcher, allowed, index_settings, deadline):
                _add_file(run, path, hits, max_matches)
                if run.truncated:
                    break
        except TimeoutError:
            run.truncated = f"timed out after {timeout_s:g} s"

    passages: list[Passage] = []
    for path in sorted(run.files):
        hits = run.files[path]
        passages.extend(build_passages(path, hits.lines, hits.matches, context))
    return GrepResult(
        passages=tuple(passages),
        files=len(run.files),
        matches=run.matches,
        truncated=bool(run.truncated),
        reason=run.truncated,
        millis=(time.monotonic() - started) * 1000,
    )

"""Wall time of the ``codesift`` command a person types, beside ripgrep: cold (no server:
in-process), with the background server the CLI starts for itself, and with an
editor's language server running for the index (the CLI asks either over its socket).

    python -m bench.cli_wall ROOT [--runs 7] [--no-language-server] [--cold-only]

ROOT must be indexed. Each command runs as its own process, output read in full
from a pipe, as ``rg`` does beside it. The background server is started the way a
person's first call starts it (one ``codesift grep``), and stopped with ``codesift
stop``; then a real ``codesift serve`` is started (its vectors job is cancelled when
the index has none, so the CLI does not compete with embedding).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from codesift.indexer.search.grep import find_rg
from codesift.server.background import BACKGROUND_ENV
from codesift.server.endpoint import NO_SERVER_ENV, address, request_meta

from .server_probe import started_client

GREPS = ["getattr", "def __init__", "NotImplementedError", "socket.timeout", "ZeroDivisionError"]
SEARCHES = ["parse a url into its parts", "open a temporary file", "read a config file"]
SYMBOLS = ["urlparse", "TemporaryDirectory", "HTTPConnection"]


def _codesift() -> list[str]:
    script = Path(sys.executable).parent / "codesift"
    return [str(script)] if script.exists() else [sys.executable, "-m", "codesift.server.cli"]


def _run_ms(args: Sequence[str], root: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) milliseconds of one command, its output read in full."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    run = subprocess.run(args, cwd=root, env=env, capture_output=True, check=False)
    wall = (time.perf_counter() - t) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(args)} exited {run.returncode}: {run.stderr[-500:]!r}")
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu


def _p50(
    args: Callable[[], Sequence[str]], root: Path, env: dict[str, str], runs: int
) -> tuple[float, float]:
    _run_ms(args(), root, env)  # the first run warms the page cache and the server's model
    samples = [_run_ms(args(), root, env) for _ in range(runs)]
    return statistics.median(w for w, _ in samples), statistics.median(c for _, c in samples)


def _commands(cs: list[str]) -> list[tuple[str, Callable[[str], list[str]], list[str]]]:
    return [
        ("grep PATTERN", lambda p: [*cs, "grep", p], GREPS),
        ("search QUERY", lambda q: [*cs, "search", q], SEARCHES),
        ("symbols NAME", lambda n: [*cs, "symbols", n], SYMBOLS),
    ]


def _per(
    root: Path, items: Sequence[str], make: Callable[[str], list[str]], env: dict[str, str], runs: int
) -> tuple[float, float]:
    """The median over ``items`` of each one's p50 wall and CPU milliseconds."""
    got = [_p50(lambda i=i: make(i), root, env, runs) for i in items]  # type: ignore[misc]
    return statistics.median(w for w, _ in got), statistics.median(c for _, c in got)


def _quiet_env(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k not in (NO_SERVER_ENV, BACKGROUND_ENV, "CI")}


def measure_cold(root: Path, runs: int = 7) -> dict[str, float]:
    """``--version``, ``--help``, rg, and each command in-process (no server: the cold path)."""
    cs = _codesift()
    off = {**_quiet_env(dict(os.environ)), NO_SERVER_ENV: "1"}
    rg = [find_rg(), "-n", "--no-config", "--fixed-strings", "--regexp"]
    fig: dict[str, float] = {}
    wall, cpu = _p50(lambda: [*cs, "--version"], root, off, runs)
    fig["codesift --version (ms)"] = wall
    fig["codesift --version, CPU (ms)"] = cpu
    fig["codesift --help (ms)"] = _p50(lambda: [*cs, "--help"], root, off, runs)[0]
    fig["rg -n PATTERN (ms)"] = _per(root, GREPS, lambda p: [*rg, p, "./"], off, runs)[0]
    for name, make, items in _commands(cs):
        fig[f"codesift {name}, no server (ms)"] = _per(root, items, make, off, runs)[0]
    for name in ("grep PATTERN", "search QUERY"):
        fig[f"codesift {name.split()[0]} ÷ rg, no server (×)"] = (
            fig[f"codesift {name}, no server (ms)"] / fig["rg -n PATTERN (ms)"]
        )
    return fig


def measure_with_server(root: Path, label: str, runs: int = 7) -> dict[str, float]:
    """Each command through the server answering for ``root`` (``label`` names it)."""
    cs = _codesift()
    on = _quiet_env(dict(os.environ))
    fig: dict[str, float] = {}
    for name, make, items in _commands(cs):
        wall, cpu = _per(root, items, make, on, runs)
        fig[f"codesift {name}, {label} (ms)"] = wall
        fig[f"codesift {name}, {label}, CLI CPU (ms)"] = cpu
    return fig


def background_figures(root: Path, runs: int = 7) -> dict[str, float]:
    """Start the CLI's background server as a first call does, time the commands through
    it, stop it."""
    cs = _codesift()
    env = {**_quiet_env(dict(os.environ)), BACKGROUND_ENV: "1"}
    subprocess.run([*cs, "grep", GREPS[0]], cwd=root, env=env, capture_output=True, check=False)
    deadline = time.monotonic() + 120
    while (reply := request_meta(address(root), "info")) is None or reply.get("ok", {}).get(
        "kind"
    ) != "background":
        if time.monotonic() > deadline:
            raise RuntimeError(f"no background server came up for {root}")
        time.sleep(0.2)
    try:
        return measure_with_server(root, "background server", runs)
    finally:
        subprocess.run([*cs, "stop", str(root)], env=env, capture_output=True, check=False)


async def _with_language_server(root: Path, pause_vectors: bool, runs: int) -> dict[str, float]:
    client = await started_client(root, pause_vectors=pause_vectors, idle_s=900)
    try:
        if not address(root).exists():
            raise RuntimeError(f"the server published no CLI socket at {address(root)}")
        return await asyncio.to_thread(measure_with_server, root, "language server running", runs)
    finally:
        await client.shutdown_async(None)
        client.exit(None)
        await asyncio.sleep(0.5)
        await client.stop()


def cli_wall(
    root: Path,
    *,
    pause_vectors: bool = False,
    runs: int = 7,
    language_server: bool = True,
    cold_only: bool = False,
) -> dict[str, float]:
    """Time the CLI on ``root`` (indexed) cold, through its background server and through
    a language server, beside rg; the ratios to rg printed. ``cold_only``: no server is
    started (nothing writes to ``root``'s index)."""
    root = root.resolve()
    fig = measure_cold(root, runs)
    if cold_only:
        return fig
    fig.update(background_figures(root, runs))
    if language_server:
        fig.update(asyncio.run(_with_language_server(root, pause_vectors, runs)))
    rg = fig["rg -n PATTERN (ms)"]
    for label in ("background server", "language server running"):
        key = f"codesift grep PATTERN, {label} (ms)"
        if key in fig:
            fig[f"codesift grep ÷ rg, {label} (×)"] = fig[key] / rg
    return fig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--pause-vectors", action="store_true")
    parser.add_argument("--no-language-server", action="store_true")
    parser.add_argument("--cold-only", action="store_true", help="no server: the in-process path only")
    args = parser.parse_args()
    load = os.getloadavg()
    figures = cli_wall(
        args.root,
        pause_vectors=args.pause_vectors,
        runs=args.runs,
        language_server=not args.no_language_server,
        cold_only=args.cold_only,
    )
    print(
        json.dumps(
            {"load before": load, **figures, "load after": os.getloadavg()}, indent=2, ensure_ascii=False
        )
    )


if __name__ == "__main__":
    main()

"""Wall time of the ``codesift`` command a person types, beside ripgrep: with a running
server for the index (the CLI asks it over its socket) and without one (in-process).

    python -m bench.cli_wall ROOT [--runs 7]

ROOT must be indexed. A real ``codesift serve`` is started on it (its vectors job is
cancelled when the index has none, so the CLI does not compete with embedding),
then each command runs as its own process, output read in full from a pipe, as
``rg`` does beside it.
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
from codesift.server.endpoint import NO_SERVER_ENV, address

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


def measure(root: Path, runs: int = 7) -> dict[str, float]:
    """p50 wall milliseconds of each command through the server and in-process, and rg's;
    the CLI process's own CPU time beside them (the wall time on a loaded machine is
    mostly waiting for a core)."""
    cs = _codesift()
    on = dict(os.environ)
    off = {**on, NO_SERVER_ENV: "1"}
    rg = [find_rg(), "-n", "--no-config", "--fixed-strings", "--regexp"]
    fig: dict[str, float] = {}
    wall, cpu = _p50(lambda: [*cs, "--version"], root, on, runs)
    fig["codesift --version (ms)"] = wall
    fig["codesift --version, CPU (ms)"] = cpu

    def per(
        items: Sequence[str], make: Callable[[str], list[str]], env: dict[str, str]
    ) -> tuple[float, float]:
        got = [_p50(lambda i=i: make(i), root, env, runs) for i in items]  # type: ignore[misc]
        return statistics.median(w for w, _ in got), statistics.median(c for _, c in got)

    fig["rg -n PATTERN (ms)"] = per(GREPS, lambda p: [*rg, p, "./"], on)[0]
    for name, make, items in (
        ("grep PATTERN", lambda p: [*cs, "grep", p], GREPS),
        ("search QUERY", lambda q: [*cs, "search", q], SEARCHES),
        ("symbols NAME", lambda n: [*cs, "symbols", n], SYMBOLS),
    ):
        wall, cpu = per(items, make, on)
        fig[f"codesift {name}, server running (ms)"] = wall
        fig[f"codesift {name}, server running, CLI CPU (ms)"] = cpu
        fig[f"codesift {name}, no server (ms)"] = per(items, make, off)[0]
    fig["codesift grep ÷ rg, server running (×)"] = (
        fig["codesift grep PATTERN, server running (ms)"] / fig["rg -n PATTERN (ms)"]
    )
    fig["codesift grep ÷ rg, no server (×)"] = (
        fig["codesift grep PATTERN, no server (ms)"] / fig["rg -n PATTERN (ms)"]
    )
    return fig


async def _with_server(root: Path, pause_vectors: bool, runs: int) -> dict[str, float]:
    client = await started_client(root, pause_vectors=pause_vectors, idle_s=900)
    try:
        if not address(root).exists():
            raise RuntimeError(f"the server published no CLI socket at {address(root)}")
        return await asyncio.to_thread(measure, root, runs)
    finally:
        await client.shutdown_async(None)
        client.exit(None)
        await asyncio.sleep(0.5)
        await client.stop()


def cli_wall(root: Path, *, pause_vectors: bool = False, runs: int = 7) -> dict[str, float]:
    """Start a server on ``root`` (indexed), then time the CLI with and without it."""
    return asyncio.run(_with_server(root.resolve(), pause_vectors, runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--pause-vectors", action="store_true")
    args = parser.parse_args()
    figures = cli_wall(args.root, pause_vectors=args.pause_vectors, runs=args.runs)
    print(json.dumps({"load": os.getloadavg(), **figures}, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()

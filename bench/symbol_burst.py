"""A burst of concurrent ``workspace/symbol`` requests to a real ``codesift serve``: p50/p95.

Search-as-you-type sends a request per keystroke, and an editor with several
windows more: the burst must not queue every request behind the slowest one.

    python -m bench.symbol_burst ROOT [--requests 200] [--rounds 3] [--pause-vectors]

ROOT must be indexed (``codesift index ROOT``); the server is started on it, left
to become idle, then sent each burst all at once: a cold one (queries it has not
answered yet) and warm ones (the same queries again, as search-as-you-type and
several editor windows repeat them). ``--pause-vectors`` cancels the server's
vectors job (an index built with ``--no-embed``), so the burst does not compete
with embedding.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path

from lsprotocol import types as lsp

from .raw_client import started_raw
from .server_probe import started_client

# What people type into a symbol box: names, prefixes, camel humps, a few words.
QUERIES = [
    "Path",
    "urlparse",
    "HTTPConnection",
    "json loads",
    "TemporaryDirectory",
    "read config file",
    "Thread",
    "join",
    "parse",
    "ArgumentParser",
    "open url",
    "dumps",
    "SSLContext",
    "Counter",
    "getLogger",
    "compress data",
    "Decimal",
    "run",
    "socket",
    "escape html",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _burst(root: Path, requests: int, rounds: int, pause_vectors: bool) -> dict[str, object]:
    client = await started_client(root, pause_vectors=pause_vectors, idle_s=1800)
    for q in ("warm", "warm up the model"):  # model loaded, symbol names in memory
        await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=q))

    async def one(query: str) -> tuple[float, int]:
        t = time.perf_counter()
        got = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=query))
        return (time.perf_counter() - t) * 1000, len(got or [])

    figures: dict[str, object] = {}
    for round_ in range(rounds + 1):
        kind = "cold" if round_ == 0 else "warm"
        t = time.perf_counter()
        done = await asyncio.gather(*(one(QUERIES[i % len(QUERIES)]) for i in range(requests)))
        wall = (time.perf_counter() - t) * 1000
        latencies = [ms for ms, _ in done]
        figures[f"burst {round_} ({kind})"] = {
            "p50 ms": round(statistics.median(latencies), 1),
            "p95 ms": round(percentile(latencies, 0.95), 1),
            "max ms": round(max(latencies), 1),
            "wall ms": round(wall),
            "empty answers": sum(1 for _, n in done if n == 0),
        }
    single = []
    for q in QUERIES:
        t = time.perf_counter()
        await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=q))
        single.append((time.perf_counter() - t) * 1000)
    await client.shutdown_async(None)
    client.exit(None)
    await asyncio.sleep(0.5)
    await client.stop()
    figures["one at a time, warm: p50 ms"] = round(statistics.median(single), 1)
    figures.update(await _raw_burst(root, requests, rounds, pause_vectors))
    figures["requests per burst"] = requests
    figures["distinct queries"] = len(QUERIES)
    return figures


async def _raw_burst(root: Path, requests: int, rounds: int, pause_vectors: bool) -> dict[str, object]:
    """The same bursts from the raw client: each latency ends when the response's last byte is read."""
    client = await started_raw(root, pause_vectors=pause_vectors, idle_s=1800)
    figures: dict[str, object] = {}
    try:
        for q in ("warm", "warm up the model"):
            await client.request("workspace/symbol", {"query": q})
        for round_ in range(rounds + 1):
            kind = "cold" if round_ == 0 else "warm"
            t = time.perf_counter()
            sent = [
                client.send_request("workspace/symbol", {"query": QUERIES[i % len(QUERIES)]})
                for i in range(requests)
            ]
            done = await asyncio.gather(*sent)
            latencies = [(arrived - t) * 1000 for arrived, _ in done]
            figures[f"raw client, burst {round_} ({kind})"] = {
                "p50 ms": round(statistics.median(latencies), 1),
                "p95 ms": round(percentile(latencies, 0.95), 1),
                "max ms": round(max(latencies), 1),
                "empty answers": sum(1 for _, body in done if not json.loads(body).get("result")),
            }
    finally:
        await client.stop()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2, help="warm bursts after the cold one")
    parser.add_argument("--pause-vectors", action="store_true")
    args = parser.parse_args()
    figures = asyncio.run(_burst(args.root.resolve(), args.requests, args.rounds, args.pause_vectors))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()

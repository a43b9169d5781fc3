"""The JSON-RPC stream under concurrent large responses: every frame whole.

A real ``codesift serve`` process and a raw client that keeps every byte the
server wrote; the reader is slow, so the pipe fills and the server's writes block
part-way, which is when two threads writing at once broke frames apart.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from .rawlsp import RawServer, parse_frames

pytestmark = pytest.mark.slow


def big_workspace(root: Path, files: int = 40, functions: int = 12) -> Path:
    """Files whose functions all share common words, so searches and greps answer big."""
    for f in range(files):
        body = []
        for n in range(functions):
            body.append(
                f"def compute_value_{f}_{n}(value, result):\n"
                f'    """Compute the value and the result of step {n} in module {f}."""\n'
                + "".join(f"    value = value + result * {k}  # value result\n" for k in range(8))
                + "    return value\n\n"
            )
        path = root / f"pkg{f % 4}" / f"mod_{f}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(body))
    return root


def test_concurrent_large_responses_reach_a_slow_reader_as_whole_frames(tmp_path: Path) -> None:
    root = big_workspace(tmp_path / "ws")
    server = RawServer(root, read_delay=0.002, chunk=4096)
    try:
        server.initialize(root)
        server.wait_indexed()
        ids = [
            server.request(
                "workspace/executeCommand",
                {
                    "command": "codesift.search",
                    "arguments": [{"query": f"compute value result {i}", "mode": "bm25", "limit": 50}],
                },
            )
            for i in range(8)
        ]
        ids += [
            server.request(
                "workspace/executeCommand",
                {"command": "codesift.grep", "arguments": [{"pattern": word}]},
            )
            for word in ("value", "result", "compute", "return")
        ]
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            got = {m.get("id") for m in server.messages() if "method" not in m}
            if set(ids) <= got:
                break
            time.sleep(0.05)
        frames = list(parse_frames(bytes(server.data)))  # raises on the first broken frame
        answers = {m["id"]: m for m in frames if m.get("id") in ids and "method" not in m}
        assert set(answers) == set(ids)
        assert all("result" in a for a in answers.values()), [a.get("error") for a in answers.values()]
        sizes = sorted(len(str(a["result"])) for a in answers.values())
        assert sizes[len(sizes) // 2] > 50_000  # large enough to fill the pipe many times
    finally:
        server.close()

"""A real ``codesift serve`` process driven by pytest-lsp over a generated workspace."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from ..conftest import write_workspace

SERVER = [sys.executable, "-m", "codesift.server.cli", "serve"]


async def start_client() -> LanguageClient:
    """A pytest-lsp client connected to a fresh server process; it accepts registrations."""
    client = await ClientServerConfig(server_command=SERVER).start()
    assert isinstance(client, LanguageClient)
    client.registrations = []  # type: ignore[attr-defined]

    @client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params: lsp.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    return client


async def initialize(
    client: LanguageClient, root: Path, options: object = None, capabilities: str = "visual-studio-code"
) -> lsp.InitializeResult:
    """initialize + initialized with one workspace folder."""
    return await client.initialize_session(
        lsp.InitializeParams(
            capabilities=client_capabilities(capabilities),
            root_uri=root.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            initialization_options=options,
        )
    )


def ended(client: LanguageClient) -> list[lsp.WorkDoneProgressEnd]:
    """Every progress end the client received."""
    return [
        v
        for reports in client.progress_reports.values()
        for v in reports
        if isinstance(v, lsp.WorkDoneProgressEnd)
    ]


async def wait_for(predicate: object, timeout: float = 60.0, what: str = "condition") -> None:
    """Poll ``predicate()`` (sync or async) until it is true."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = predicate()  # type: ignore[operator]
        if asyncio.iscoroutine(got):
            got = await got
        if got:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


async def indexed(client: LanguageClient, count: int = 1) -> None:
    """Wait until ``count`` index runs reported their end."""
    await wait_for(lambda: len(ended(client)) >= count, what="indexing to finish")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return write_workspace(tmp_path / "ws")


@pytest_asyncio.fixture
async def client(ws: Path) -> AsyncIterator[LanguageClient]:
    c = await start_client()
    c.init_result = await initialize(c, ws)  # type: ignore[attr-defined]
    yield c
    await c.shutdown_session()
    await c.stop()


def run_editor_script(
    argv: list[str], workspace: Path, env: dict[str, str] | None = None
) -> dict[str, object]:
    """Run a real editor on a test script in ``workspace`` and return the JSON object it
    prints last. The script finds the workspace in CODESIFT_WS and the server command
    (this interpreter's ``codesift serve``) as JSON in CODESIFT_CMD."""
    import json
    import os
    import subprocess

    run = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "CODESIFT_WS": str(workspace),
            "CODESIFT_CMD": json.dumps(SERVER),
            **(env or {}),
        },
        timeout=600,
        cwd=workspace,
    )
    assert run.returncode == 0, run.stderr + run.stdout
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert isinstance(out, dict), run.stdout
    return out

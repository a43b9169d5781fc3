"""Multi-root workspaces, configuration changes and progress cancel, in a real server process."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient, client_capabilities

from ..conftest import write_workspace
from .conftest import ended, indexed, start_client, wait_for

pytestmark = pytest.mark.slow


async def names(client: LanguageClient, query: str) -> list[str]:
    found = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=query))
    return [s.name for s in found or []]


async def command(client: LanguageClient, name: str, args: dict[str, object]) -> dict[str, object]:
    result = await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command=name, arguments=[args])
    )
    assert isinstance(result, dict)
    return result


@pytest.mark.asyncio
async def test_each_workspace_folder_is_a_project_and_folders_come_and_go(tmp_path: Path) -> None:
    a = write_workspace(tmp_path / "a")
    b = write_workspace(tmp_path / "b", {"b_only.py": "def zebra_only_in_b():\n    return 1\n"})
    c_root = write_workspace(tmp_path / "c", {"c_only.py": "def yak_only_in_c():\n    return 2\n"})
    c = await start_client()
    try:
        await c.initialize_session(
            lsp.InitializeParams(
                capabilities=client_capabilities("visual-studio-code"),
                root_uri=a.as_uri(),
                workspace_folders=[
                    lsp.WorkspaceFolder(uri=a.as_uri(), name="a"),
                    lsp.WorkspaceFolder(uri=b.as_uri(), name="b"),
                ],
            )
        )
        await indexed(c, count=2)
        assert "AuthService" in await names(c, "AuthService")
        assert "zebra_only_in_b" in await names(c, "zebra_only_in_b")
        c.workspace_did_change_workspace_folders(
            lsp.DidChangeWorkspaceFoldersParams(
                event=lsp.WorkspaceFoldersChangeEvent(
                    added=[lsp.WorkspaceFolder(uri=c_root.as_uri(), name="c")],
                    removed=[lsp.WorkspaceFolder(uri=b.as_uri(), name="b")],
                )
            )
        )
        await indexed(c, count=3)
        assert "yak_only_in_c" in await names(c, "yak_only_in_c")
        assert "zebra_only_in_b" not in await names(c, "zebra_only_in_b")
    finally:
        await c.shutdown_session()
        await c.stop()


@pytest.mark.asyncio
async def test_did_change_configuration_applies_new_settings(tmp_path: Path) -> None:
    ws = write_workspace(tmp_path / "ws")
    c = await start_client()
    try:
        await c.initialize_session(
            lsp.InitializeParams(
                capabilities=client_capabilities("neovim"),
                root_uri=ws.as_uri(),
                workspace_folders=[lsp.WorkspaceFolder(uri=ws.as_uri(), name="ws")],
            )
        )
        await indexed(c)
        before = await command(c, "codesift.search", {"query": "user password token config", "mode": "bm25"})
        assert isinstance(before["hits"], list) and len(before["hits"]) > 1
        c.workspace_did_change_configuration(
            lsp.DidChangeConfigurationParams(settings={"codesift": {"search": {"limit": 1}}})
        )

        async def limited() -> bool:
            after = await command(
                c, "codesift.search", {"query": "user password token config", "mode": "bm25"}
            )
            return isinstance(after["hits"], list) and len(after["hits"]) == 1

        await wait_for(limited, timeout=30, what="the new search.limit to apply")
    finally:
        await c.shutdown_session()
        await c.stop()


@pytest.mark.asyncio
async def test_progress_cancel_stops_indexing_and_says_so(tmp_path: Path) -> None:
    files = {
        f"pkg/m{i}.py": "\n\n".join(f"def f_{i}_{j}(x):\n    return x * {j} + {i}\n" for j in range(8))
        for i in range(150)
    }
    ws = write_workspace(tmp_path / "big", files)
    c = await start_client()
    try:
        await c.initialize_session(
            lsp.InitializeParams(
                capabilities=client_capabilities("visual-studio-code"),
                root_uri=ws.as_uri(),
                workspace_folders=[lsp.WorkspaceFolder(uri=ws.as_uri(), name="big")],
            )
        )
        await wait_for(lambda: bool(c.progress_reports), what="progress to begin")
        token = next(iter(c.progress_reports))
        c.window_work_done_progress_cancel(lsp.WorkDoneProgressCancelParams(token=token))
        await indexed(c)
        assert "cancelled" in (ended(c)[0].message or "")
    finally:
        await c.shutdown_session()
        await c.stop()

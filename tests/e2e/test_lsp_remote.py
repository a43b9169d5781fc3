"""The language server over a team index: a real server process indexes a checkout whose
``index.remote`` (an initialization option) names a published index, and answers from the union."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from codesift.indexer.publish import publish
from codesift.indexer.settings import load_settings

from ..conftest import write_workspace
from ..integration.test_remote import commit_all
from .conftest import indexed, initialize, start_client
from .test_lsp_server import run

pytestmark = pytest.mark.slow


@pytest.mark.asyncio
async def test_the_server_copies_from_the_remote_and_answers_from_the_union(tmp_path: Path) -> None:
    ci = write_workspace(tmp_path / "ci")
    head = commit_all(ci)
    target = tmp_path / "team-index"
    assert publish(ci, str(target), load_settings(ci)).published
    laptop = tmp_path / "laptop"
    shutil.copytree(ci, laptop, ignore=shutil.ignore_patterns(".git"))
    (laptop / "app/config.py").unlink()
    (laptop / "app/billing.py").write_text("def charge_invoice(invoice):\n    return invoice.total\n")

    c = await start_client()
    try:
        await initialize(c, laptop, options={"index": {"remote": str(target)}})
        await indexed(c)
        (reports,) = c.progress_reports.values()
        messages = [r.message or "" for r in reports if isinstance(r, lsp.WorkDoneProgressReport)]
        assert any("files copied" in m for m in messages)
        status = await run(c, "codesift.status", {})
        (project,) = status["projects"]  # type: ignore[misc]
        assert project["remote"]["commit"] == head and project["remote"]["overlayFiles"] == 1
        assert project["remote"]["hiddenFiles"] == 1 and project["filesIndexed"] == 5
        hits = (await run(c, "codesift.search", {"query": "charge an invoice"}))["hits"]
        assert hits[0]["path"] == "app/billing.py"  # type: ignore[index]
        hits = (await run(c, "codesift.search", {"query": "check a password against the store"}))["hits"]
        paths = [h["path"] for h in hits]  # type: ignore[attr-defined]
        assert paths[0] == "app/auth.py" and "app/config.py" not in paths
    finally:
        await c.shutdown_session()
        await c.stop()

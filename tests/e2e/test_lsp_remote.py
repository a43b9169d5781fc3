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
from ..integration.test_remote_s3 import Link, S3Server, link, s3, server  # noqa: F401 (fixtures)
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


@pytest.mark.asyncio
async def test_an_editor_opened_while_the_store_is_down_answers_alone_then_reindexes_from_it(
    tmp_path: Path,
    s3: S3Server,  # noqa: F811 (a fixture)
    link: Link,  # noqa: F811 (a fixture)
) -> None:
    ci = write_workspace(tmp_path / "ci")
    head = commit_all(ci)
    uri = f"s3://{s3.bucket()}/team"
    assert publish(ci, uri, load_settings(ci)).published
    laptop = tmp_path / "laptop"
    shutil.copytree(ci, laptop, ignore=shutil.ignore_patterns(".git"))

    link.set("down")  # the server process inherits AWS_ENDPOINT_URL: the link's address
    c = await start_client()
    try:
        await initialize(c, laptop, options={"index": {"remote": uri, "remoteTimeoutS": 2}})
        await indexed(c)
        status = await run(c, "codesift.status", {})
        (project,) = status["projects"]  # type: ignore[misc]
        assert project["remote"]["reachable"] is False and project["filesIndexed"] == 5
        assert (
            project["remote"]["state"]
            == "unreachable, answering from the local index alone (nothing copied yet)"
        )
        hits = (await run(c, "codesift.search", {"query": "check a password against the store"}))["hits"]
        assert hits[0]["path"] == "app/auth.py"  # type: ignore[index]

        link.set("up")
        await run(c, "codesift.reindex", {})
        await indexed(c, 2)
        status = await run(c, "codesift.status", {})
        (project,) = status["projects"]  # type: ignore[misc]
        assert project["remote"]["state"] == "reachable" and project["remote"]["commit"] == head
    finally:
        await c.shutdown_session()
        await c.stop()

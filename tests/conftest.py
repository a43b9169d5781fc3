"""Shared fixtures: isolated XDG dirs, generated workspaces."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    # onnxruntime and nvim write under XDG dirs; git must not read the user's config.
    base = tmp_path_factory.mktemp("xdg")
    # XDG_RUNTIME_DIR: where servers publish their CLI sockets (server/endpoint.py).
    for name in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR"):
        path = base / name.lower()
        path.mkdir(exist_ok=True)
        monkeypatch.setenv(name, str(path))
    # No CLI call in a test leaves a background server behind (server/background.py);
    # the tests of that server turn it on for themselves.
    monkeypatch.setenv("CODESIFT_BACKGROUND", "0")
    # No optimised copy of the model (~60 MB, indexer/onnx_cache.py) per test that loads
    # it; the tests of that copy turn it on for themselves.
    monkeypatch.setenv("CODESIFT_ONNX_CACHE", "0")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)


SAMPLE_FILES: dict[str, str] = {
    "app/auth.py": '''
        """Authentication helpers."""

        import hashlib


        class AuthService:
            """Checks users against the password store."""

            def __init__(self, store):
                self.store = store

            def validateCredentials(self, user, password):
                """Return True when the password matches the stored hash."""
                digest = hashlib.sha256(password.encode()).hexdigest()
                return self.store.get(user) == digest

            def login(self, user, password):
                if not self.validateCredentials(user, password):
                    raise PermissionError("bad credentials")
                return {"user": user}
        ''',
    "app/upload.py": '''
        import time


        def retry_upload(client, blob, attempts=3):
            """Retry failed uploads with exponential backoff."""
            for attempt in range(attempts):
                try:
                    return client.put(blob)
                except IOError:
                    time.sleep(2 ** attempt)
            raise RuntimeError("upload failed after retries")
        ''',
    "app/config.py": '''
        import json


        def parse_config(path):
            """Read the JSON configuration file and return a dict."""
            with open(path) as handle:
                return json.load(handle)


        DEFAULTS = {"timeout": 30}
        ''',
    "web/client.js": """
        export class ApiClient {
          constructor(baseUrl) {
            this.baseUrl = baseUrl;
          }

          async fetchUser(id) {
            const res = await fetch(`${this.baseUrl}/users/${id}`);
            return res.json();
          }
        }

        export function formatName(user) {
          return `${user.first} ${user.last}`;
        }
        """,
    "README.md": "# Sample\n\nA small generated workspace for codesift tests.\n",
}


def write_workspace(root: Path, files: dict[str, str] | None = None, *, git: bool = True) -> Path:
    """Write a small multi-language workspace under root (a git repo by default)."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in (files or SAMPLE_FILES).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    if git:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return write_workspace(tmp_path / "ws")


def require_tool(path: str | None, install_hint: str) -> str:
    """The tool an end-to-end test drives, or a skip saying how to install it.

    CI sets CODESIFT_E2E_REQUIRE=1 (``.ci/run`` installs every tool first): there
    a missing tool fails the test instead of skipping it.
    """
    if path:
        return path
    if os.environ.get("CODESIFT_E2E_REQUIRE") == "1":
        pytest.fail(f"required tool missing: {install_hint}")
    pytest.skip(f"tool missing: {install_hint}")


# Capabilities that let root read and search any file whatever its mode.
_DAC_CAPS = (1, 2)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH


def _bypasses_file_modes() -> bool:
    """True when this process reads a chmod 000 file anyway (root with its DAC caps)."""
    if os.geteuid() != 0:
        return False
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            eff = int(line.split()[1], 16)
            return any(eff >> bit & 1 for bit in _DAC_CAPS)
    return True


def ran_where_file_modes_hold(request: pytest.FixtureRequest, tmp_path: Path) -> bool:
    """For a test that needs chmod 000 to keep a file unreadable. Where modes already
    hold, returns False: the test goes on. As root (CI), the same test is run in a
    child pytest whose capability bounding set lacks CAP_DAC_OVERRIDE and
    CAP_DAC_READ_SEARCH (``setpriv``), this asserts that the child passed it, and
    returns True: the caller returns."""
    if not _bypasses_file_modes():
        return False
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("root reads chmod 000 files, and setpriv (util-linux) is not there to drop that")
    caps = "-dac_override,-dac_read_search"
    cmd = [setpriv, f"--inh-caps={caps}", f"--bounding-set={caps}", sys.executable, "-m", "pytest"]
    cmd += ["-q", "-p", "no:cacheprovider", "--basetemp", str(tmp_path / "unprivileged"), request.node.nodeid]
    proc = subprocess.run(
        cmd, cwd=request.config.rootpath, capture_output=True, text=True, timeout=300, check=False
    )
    out = proc.stdout + proc.stderr
    if proc.returncode != 0 and out.lstrip().startswith("setpriv:"):
        pytest.skip(f"root reads chmod 000 files, and dropping that was refused: {out.strip()}")
    assert proc.returncode == 0 and "1 passed" in proc.stdout, out
    return True


def resident_kib(pid: int, name: str) -> tuple[int, int]:
    """(mappings, resident KiB) of a process's mappings of files named ``name``."""
    count = total = 0
    inside = False
    for line in Path(f"/proc/{pid}/smaps").read_text(errors="replace").splitlines():
        head = line.split(maxsplit=5)
        if head and not head[0].endswith(":"):
            inside = len(head) == 6 and head[5].endswith("/" + name)
            count += inside
        elif inside and head and head[0] == "Rss:":
            total += int(head[1])
    return count, total

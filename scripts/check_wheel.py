"""Check that an installed wheel holds every module of indexer/ and server/.

python scripts/check_wheel.py VENV
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def expected_files() -> list[str]:
    out = []
    for folder, package in (("indexer", "codesift/indexer"), ("server", "codesift/server")):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in {".py", ".scm"} and "__pycache__" not in path.parts:
                out.append(f"{package}/{path.relative_to(ROOT / folder).as_posix()}")
    return out


def main() -> int:
    venv = Path(sys.argv[1])
    code = "import sysconfig, sys; print(sysconfig.get_paths()['purelib'])"
    purelib = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    missing = [f for f in expected_files() if not (Path(purelib) / f).is_file()]
    if missing:
        print("the wheel lacks:", *missing, sep="\n  ")
        return 1
    print(f"wheel holds all {len(expected_files())} engine and server files")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

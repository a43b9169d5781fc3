"""Check a built wheel, or an environment it was installed into.

python scripts/check_wheel.py --wheel dist/codesift-*.whl
    the wheel holds every module of indexer/ and server/, the default model
    (model.onnx and its weights model.onnx.data, tokenizer.json, codesift-model.json,
    SHA256SUMS) and the static
    model (embeddings.npy, tokenizer.json, codesift-model.json, SHA256SUMS) with
    matching sha256 digests, and the model's NOTICE and licence.
python scripts/check_wheel.py VENV [--smoke]
    the same files are installed in VENV; with --smoke (the wheel installed with its
    dependencies) VENV has no torch, and `codesift index` on a small generated
    workspace embeds every chunk, and `codesift search` answers with vectors; then
    the same with the static model.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODEL = "codesift/indexer/models/all-MiniLM-L6-v2-int8"
MODEL_FILES = ("model.onnx", "model.onnx.data", "tokenizer.json", "codesift-model.json", "SHA256SUMS")
STATIC = "codesift/indexer/models/all-MiniLM-L6-v2-static"
STATIC_FILES = ("embeddings.npy", "tokenizer.json", "codesift-model.json", "SHA256SUMS")
NOTICES = ("codesift/indexer/models/NOTICE", "codesift/indexer/models/LICENSE-Apache-2.0")


def expected_files() -> list[str]:
    out = []
    for folder, package in (("indexer", "codesift/indexer"), ("server", "codesift/server")):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in {".py", ".scm"} and "__pycache__" not in path.parts:
                out.append(f"{package}/{path.relative_to(ROOT / folder).as_posix()}")
    return [
        *out,
        *(f"{MODEL}/{name}" for name in MODEL_FILES),
        *(f"{STATIC}/{name}" for name in STATIC_FILES),
        *NOTICES,
    ]


def model_problems(read: Callable[[str], bytes]) -> list[str]:
    """What is wrong with the bundled models' digests (``read`` gives a file's bytes)."""
    problems = []
    for folder, files in ((MODEL, MODEL_FILES), (STATIC, STATIC_FILES)):
        sums = dict(
            reversed(line.split("  ", 1))
            for line in read(f"{folder}/SHA256SUMS").decode().splitlines()
            if line
        )
        for name in files[:-1]:
            if hashlib.sha256(read(f"{folder}/{name}")).hexdigest() != sums.get(name):
                problems.append(f"{folder}/{name}: sha256 differs from SHA256SUMS")
        meta = json.loads(read(f"{folder}/codesift-model.json"))
        if meta.get("sha256") != sums.get(files[0]):
            problems.append(f"{folder}/{files[0]}: sha256 differs from codesift-model.json")
        data = meta.get("data_file")
        if data is not None and (data not in files or meta.get("data_sha256") != sums.get(data)):
            problems.append(f"{folder}/{data}: sha256 differs from codesift-model.json")
    return problems


def check_wheel(wheel: Path) -> int:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        missing = [f for f in expected_files() if f not in names]
        if missing:
            print("the wheel lacks:", *missing, sep="\n  ")
            return 1
        problems = model_problems(zf.read)
    if problems:
        print(*problems, sep="\n")
        return 1
    size = wheel.stat().st_size / 1e6
    print(f"{wheel.name}: {size:.1f} MB, all {len(expected_files())} files, model digests match")
    return 0


def check_venv(venv: Path, smoke: bool) -> int:
    python = str(venv / "bin" / "python")
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = Path(
        subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    )
    missing = [f for f in expected_files() if not (purelib / f).is_file()]
    if missing:
        print("the wheel lacks:", *missing, sep="\n  ")
        return 1
    problems = model_problems(lambda name: (purelib / name).read_bytes())
    if problems:
        print(*problems, sep="\n")
        return 1
    print(f"wheel holds all {len(expected_files())} engine, server and model files")
    return smoke_test(venv) if smoke else 0


def smoke_test(venv: Path) -> int:
    """Index and search a small workspace with nothing but the installed wheel."""
    python = str(venv / "bin" / "python")
    if subprocess.run([python, "-c", "import torch"], capture_output=True).returncode == 0:
        print("torch is installed in the fresh environment: the wheel must not need it")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        (ws / "upload.py").write_text(
            "def retry_upload(client, blob, attempts=3):\n"
            '    """Retry failed uploads with exponential backoff."""\n'
            "    for attempt in range(attempts):\n"
            "        client.put(blob)\n"
        )
        env = {**os.environ, "XDG_CACHE_HOME": tmp, "XDG_DATA_HOME": tmp, "CODESIFT_MODEL_DIR": ""}
        codesift = str(venv / "bin" / "codesift")
        done = subprocess.run([codesift, "index", str(ws), "--json"], capture_output=True, text=True, env=env)
        if done.returncode != 0:
            print("codesift index failed:", done.stderr)
            return 1
        report = json.loads(done.stdout)
        if report["chunks_embedded"] < 1 or report["vectors_pending"] != 0:
            print("codesift index left vectors pending:", report)
            return 1
        query = [codesift, "search", "retry an upload with backoff", "--mode", "vector", "--json"]
        found = subprocess.run([*query, "--root", str(ws)], capture_output=True, text=True, env=env)
        hits = json.loads(found.stdout)["hits"] if found.returncode == 0 else []
        if not hits or hits[0]["path"] != "upload.py":
            print("codesift search found nothing by vectors:", found.stdout, found.stderr)
            return 1
        # The static model, from the wheel too: the switch rebuilds the index with its vectors.
        (ws / ".codesift.toml").write_text('[embed]\nmodel = "all-MiniLM-L6-v2-static"\n')
        done = subprocess.run([codesift, "index", str(ws), "--json"], capture_output=True, text=True, env=env)
        static = json.loads(done.stdout) if done.returncode == 0 else {}
        complete = static.get("vectors_pending") == 0 and static.get("chunks_embedded")
        if not static.get("rebuilt") or not complete:
            print("codesift index with the static model failed:", done.stdout, done.stderr)
            return 1
        found = subprocess.run([*query, "--root", str(ws)], capture_output=True, text=True, env=env)
        hits = json.loads(found.stdout)["hits"] if found.returncode == 0 else []
        if not hits or hits[0]["path"] != "upload.py":
            print("codesift search found nothing by static vectors:", found.stdout, found.stderr)
            return 1
    print(
        f"smoke test: indexed with {report['chunks_embedded']} vectors and searched them, then with "
        f"the static model ({static['chunks_embedded']} vectors), no torch"
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("venv", nargs="?", type=Path, help="an environment the wheel is installed in")
    parser.add_argument("--wheel", type=Path, help="a built wheel to inspect")
    parser.add_argument("--smoke", action="store_true", help="also index and search with the installed wheel")
    args = parser.parse_args()
    if args.wheel is not None:
        return check_wheel(args.wheel)
    if args.venv is None:
        parser.error("give VENV or --wheel WHEEL")
    return check_venv(args.venv, args.smoke)


if __name__ == "__main__":
    raise SystemExit(main())

"""The corpora the bench runs on: generated, the standard library on this machine,
and the Linux kernel from Debian's ``linux-source-6.1`` package."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sysconfig
import tarfile
from pathlib import Path

STDLIB = Path(sysconfig.get_paths()["stdlib"])
LINUX_TARBALL = Path("/usr/src/linux-source-6.1.tar.xz")
# Extracted once (≈ 1.5 GB, ~50 s) and kept: the tarball is read-only input.
CACHE = Path(os.environ.get("CODESIFT_BENCH_CACHE", Path.home() / ".cache" / "codesift-bench"))
# The part of the kernel the index tier covers (~100k chunks); grep runs over the whole tree.
LINUX_INDEXED = ("kernel", "mm", "fs", "lib", "init", "ipc", "block")


def small_workspace(root: Path, n: int = 150) -> Path:
    """A generated Python workspace: n modules of six small documented functions."""
    rng = random.Random(5)
    verbs = ["parse", "load", "save", "retry", "upload", "validate", "render", "fetch", "encode", "merge"]
    nouns = ["config", "user", "token", "session", "blob", "record", "header", "payload", "cache", "index"]
    for i in range(n):
        v, o = rng.choice(verbs), rng.choice(nouns)
        body = "\n".join(
            f'def {v}_{o}_{i}_{j}(value):\n    """{v.title()} the {o} number {j}."""\n'
            f"    result = [{j}, value]\n    return result\n"
            for j in range(6)
        )
        path = root / f"pkg{i % 10}" / f"mod_{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
    return root


def copy_stdlib(dest: Path) -> Path:
    """The standard library of this interpreter, without site-packages and caches."""
    shutil.copytree(
        STDLIB, dest, ignore=shutil.ignore_patterns("site-packages", "__pycache__"), symlinks=True
    )
    return dest


def replicate(root: Path, into: str) -> Path:
    """Copy ``root`` (minus its index) under ``root/into``: the same code at distinct paths."""
    target = root / into
    if target.is_dir():
        return target  # a kept work folder (--keep) already has it
    shutil.copytree(
        root, target, ignore=shutil.ignore_patterns(".codesift", into, "__pycache__"), symlinks=True
    )
    return target


def source_bytes(root: Path) -> int:
    """Bytes of the regular files under root, outside the index folder."""
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".codesift"]
        for name in filenames:
            p = os.path.join(dirpath, name)
            if os.path.isfile(p) and not os.path.islink(p):
                total += os.path.getsize(p)
    return total


def linux_tree() -> Path | None:
    """The extracted kernel source, extracting it on first use; None (and why) without the package."""
    out = CACHE / "linux-source-6.1"
    if (out / "Makefile").is_file():
        return out
    if not LINUX_TARBALL.is_file():
        print(f"linux tier skipped: {LINUX_TARBALL} is missing (apt-get install linux-source-6.1)")
        return None
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = CACHE / "linux-source-6.1.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    if shutil.which("tar"):  # GNU tar with xz is several times faster than tarfile
        subprocess.run(["tar", "xf", str(LINUX_TARBALL), "-C", str(tmp)], check=True)
    else:
        with tarfile.open(LINUX_TARBALL) as tf:
            tf.extractall(tmp, filter="data")
    (tmp / "linux-source-6.1").rename(out)
    shutil.rmtree(tmp, ignore_errors=True)
    return out


def linux_subset(tree: Path, dest: Path) -> Path:
    """Hard-link the indexed part of the kernel into ``dest`` (no copy of the bytes)."""
    for part in LINUX_INDEXED:
        if not (dest / part).is_dir():  # a kept work folder (--keep) already has it
            link_tree(tree / part, dest / part)
    return dest


def link_tree(src: Path, dest: Path) -> Path:
    """A copy of a folder made of hard links where the file system allows."""
    shutil.copytree(src, dest, copy_function=_link_or_copy, symlinks=True)
    return dest


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another file system
        shutil.copy2(src, dst)

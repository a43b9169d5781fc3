"""The reliability tier: repeat the runs that once broke, count what breaks now.

    python -m bench.soak [--runs 5]        (make soak)

Tiers, each run in real processes on generated workspaces:

* kill -9   — ``codesift index`` SIGKILLed at a random crash point, then run again:
  the repaired index must equal a clean rebuild (files, chunks, symbols).
* disk full — ENOSPC at every write point (``CODESIFT_FAIL_AT``): exit 2, a clear
  message, no traceback; searches then answer from the old rows or say what is
  missing; the next run repairs to a clean rebuild.
* bad input — a 30,000-character line, 10k-deep nesting in C and JS: indexed
  with every vector, exit 0.
* symlink race — files flipping between a regular file and a symlink to a file
  outside while indexing: no outside text stored.
* stream — 8 large searches and 4 greps at once to a slow reader: every frame whole.
* two writers — two ``codesift index`` runs of one workspace at once while files change,
  four rounds: each run exits 0 (one waits for the other's lock), searches between
  them answer, and the index then equals a clean rebuild.
* small tmpfs — the index on a real 4 MB tmpfs filled to within 0–400 KB (needs
  root to mount; skipped otherwise): exit 2, the old rows answer or the search
  says what is missing, and the next run with space repairs.

Counts: tried, failed (a run that errored or broke a promise), lost (rows missing
against a clean rebuild), wrong (rows that should not be there).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from codesift.indexer.settings import load_settings
from codesift.indexer.store import CHUNKS, FILES, SYMBOLS, Store
from codesift.indexer.sync import index_uri_for

CODESIFT = [sys.executable, "-m", "codesift.server.cli"]
KILL_POINTS = ["parse", "replace", "write", "write-files", "embed", "remove"]
FAIL_POINTS = ["journal", "add", "index", "cache", "vectors", "touch"]
SECRET = "SECRET_OUTSIDE"


@dataclass
class Tally:
    tried: int = 0
    failed: int = 0
    lost: int = 0
    wrong: int = 0


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("CODESIFT_")}
    # no background server left behind: one held the small tmpfs busy, so it could not
    # be unmounted after its tier (and every search here must read the index as it is)
    full["CODESIFT_BACKGROUND"] = "0"
    full.update(env or {})
    return subprocess.run([*CODESIFT, *args], capture_output=True, text=True, env=full, timeout=900)


def workspace(root: Path, files: int = 30) -> Path:
    for i in range(files):
        path = root / f"pkg{i % 3}" / f"mod_{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f'"""Module {i}."""\n\n\nclass Service{i}:\n    def handle_{i}(self, value):\n'
            f'        """Handle value {i}."""\n        return value + {i}\n\n\n'
            f"def helper_{i}(x):\n    return Service{i}().handle_{i}(x)\n"
        )
    return root


def snapshot(root: Path) -> tuple[set[tuple[str, str]], set[str], int]:
    """(files rows, chunk ids, symbol count) of an index."""
    store = Store(index_uri_for(root, load_settings(root)))
    files = store.table(FILES).to_arrow().select(["path", "content_hash"]).to_pylist()
    ids = set(store.table(CHUNKS).to_arrow().column("id").to_pylist())
    return {(f["path"], f["content_hash"]) for f in files}, ids, store.count(SYMBOLS)


def compare_with_rebuild(root: Path, tally: Tally) -> None:
    """Count rows lost or wrong in ``root``'s index against a clean rebuild of it."""
    have = snapshot(root)
    cli("index", str(root), "--no-embed", "--rebuild")
    want = snapshot(root)
    tally.lost += len(want[0] - have[0]) + len(want[1] - have[1]) + max(0, want[2] - have[2])
    tally.wrong += len(have[0] - want[0]) + len(have[1] - want[1]) + max(0, have[2] - want[2])


def edit_some(root: Path, rng: random.Random) -> None:
    files = sorted(p for p in root.rglob("*.py") if ".codesift" not in p.parts)
    for p in rng.sample(files, k=max(1, len(files) // 3)):
        p.write_text(p.read_text() + f"\n\ndef edited_{rng.randrange(10**6)}():\n    return 1\n")
    for p in rng.sample(files, k=2):
        p.unlink()


def kill_tier(base: Path, runs: int, rng: random.Random) -> Tally:
    tally = Tally()
    for n in range(runs):
        root = workspace(base / f"kill{n}")
        cli("index", str(root), "--no-embed")
        edit_some(root, rng)
        point = rng.choice(KILL_POINTS)
        got = cli("index", str(root), env={"CODESIFT_KILL_AT": f"{point}:{rng.randint(1, 3)}"})
        tally.tried += 1
        if got.returncode not in (0, -9):
            tally.failed += 1
        repair(root, tally)
    return tally


def disk_full_tier(base: Path, runs: int, rng: random.Random) -> Tally:
    tally = Tally()
    for n in range(runs):
        for point in FAIL_POINTS:
            root = workspace(base / f"full{n}-{point}")
            cli("index", str(root), "--no-embed")
            edit_some(root, rng)
            got = cli("index", str(root), env={"CODESIFT_FAIL_AT": point})
            tally.tried += 1
            clear = "No space left on device" in got.stderr and "Traceback" not in got.stderr
            if got.returncode not in (0, 2) or (got.returncode == 2 and not clear):
                tally.failed += 1  # 0: the point was not reached in this run (nothing to write there)
            search_answers(root, tally)
            repair(root, tally)
    return tally


def search_answers(root: Path, tally: Tally) -> None:
    """A search answers (hits or none), without a traceback."""
    search = cli("search", "helper", "--root", str(root), "--mode", "bm25", "--json")
    if search.returncode not in (0, 1) or "Traceback" in search.stderr:
        tally.failed += 1


def repair(root: Path, tally: Tally) -> None:
    """The next index run succeeds and leaves what a clean rebuild would."""
    if cli("index", str(root), "--no-embed").returncode != 0:
        tally.failed += 1
    compare_with_rebuild(root, tally)


def bad_input_tier(base: Path, runs: int, _rng: random.Random) -> Tally:
    tally = Tally()
    for n in range(runs):
        root = workspace(base / f"bad{n}", files=3)
        (root / "long.py").write_text('X = "' + "a" * 30_000 + '"\n')
        (root / "deep.c").write_text("void f() {" + "if (x) {" * 10_000 + "}" * 10_000 + "}\n")
        (root / "deep.js").write_text("if (x) {" * 10_000 + "\n")
        got = cli("index", str(root), "--json")
        tally.tried += 1
        if got.returncode != 0:
            tally.failed += 1
            continue
        report = json.loads(got.stdout)
        tally.lost += int(report.get("vectors_pending", 0))
    return tally


FLIPPER = """
import os, sys, itertools
root, outside, stop, files = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
names = [os.path.join(root, f"f{i:02}.py") for i in range(files)]
for n in itertools.count():
    if os.path.exists(stop):
        break
    for i, path in enumerate(names):
        tmp = path + ".tmp"
        if (n + i) % 2:
            os.symlink(outside, tmp)
        else:
            with open(tmp, "w") as f:
                f.write(f"def inside_{i}_{n}():\\n    return {n}\\n")
        os.replace(tmp, path)
"""


def race_tier(base: Path, runs: int, _rng: random.Random) -> Tally:
    from codesift.indexer.sync import index_workspace

    tally = Tally()
    root = base / "race"
    root.mkdir()
    (root / ".gitignore").write_text("*.tmp\n")
    outside = base / "outside.py"
    outside.write_text(f'def leaked():\n    return "{SECRET}"\n')
    for i in range(24):
        (root / f"f{i:02}.py").write_text(f"def inside_{i}():\n    return {i}\n")
    stop = base / "race-stop"
    flipper = subprocess.Popen([sys.executable, "-c", FLIPPER, str(root), str(outside), str(stop), "24"])
    settings = load_settings(root)
    try:
        for _ in range(runs * 4):
            tally.tried += 1
            try:
                index_workspace(root, settings, embed=False)
            except Exception:
                tally.failed += 1
                continue
            store = Store(index_uri_for(root, settings))
            tally.wrong += sum(SECRET in t for t in store.table(CHUNKS).to_arrow().column("text").to_pylist())
    finally:
        stop.touch()
        flipper.wait(timeout=30)
    return tally


def stream_tier(base: Path, runs: int, _rng: random.Random) -> Tally:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.e2e.rawlsp import FrameError, RawServer, parse_frames
    from tests.e2e.test_lsp_stream import big_workspace

    tally = Tally()
    root = big_workspace(base / "stream")
    for _ in range(runs):
        server = RawServer(root, read_delay=0.002, chunk=4096)
        tally.tried += 1
        try:
            server.initialize(root)
            server.wait_indexed()
            ids = [
                server.request(
                    "workspace/executeCommand",
                    {
                        "command": "codesift.search",
                        "arguments": [{"query": f"value {i}", "mode": "bm25", "limit": 50}],
                    },
                )
                for i in range(8)
            ]
            ids += [
                server.request(
                    "workspace/executeCommand", {"command": "codesift.grep", "arguments": [{"pattern": w}]}
                )
                for w in ("value", "result", "compute", "return")
            ]
            for msg_id in ids:
                server.response(msg_id, timeout=300)
            answers = [m for m in parse_frames(bytes(server.data)) if m.get("id") in ids]
            tally.lost += len(ids) - len(answers)
            tally.wrong += sum(1 for a in answers if "result" not in a)
        except (FrameError, AssertionError):
            tally.failed += 1
        finally:
            server.close()
    return tally


def tmpfs_tier(base: Path, runs: int, _rng: random.Random) -> Tally:
    """A real full disk: the index on a 4 MB tmpfs filled to within K KB (root only)."""
    tally = Tally()
    mnt = base / "tmpfs"
    mnt.mkdir()
    if subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], capture_output=True
    ).returncode:
        print("small tmpfs: cannot mount one here (needs root); skipped", file=sys.stderr)
        return tally
    try:
        for n in range(runs):
            for keep_kb in (0, 60, 150, 400):
                root = workspace(base / f"tmpfs{n}-{keep_kb}", files=120)
                (root / ".codesift.toml").write_text(f'[index]\nindex_dir = "{mnt}/idx-{n}-{keep_kb}"\n')
                cli("index", str(root), "--no-embed")
                before = cli("search", "helper", "--root", str(root), "--mode", "bm25", "--json")
                for p in root.rglob("*.py"):
                    p.write_text(p.read_text() + "\n\ndef added_later():\n    return 1\n")
                free = shutil.disk_usage(mnt).free // 1024
                filler = mnt / "filler"
                with open(filler, "wb") as f:
                    f.write(b"\0" * max(0, free - keep_kb) * 1024)
                got = cli("index", str(root), "--no-embed")
                tally.tried += 1
                clear = "No space left on device" in got.stderr and "Traceback" not in got.stderr
                if got.returncode not in (0, 2) or (got.returncode == 2 and not clear):
                    tally.failed += 1  # 0: the changes fitted in what was left
                after = cli("search", "helper", "--root", str(root), "--mode", "bm25", "--json")
                hits = (len(json.loads(before.stdout)["hits"]), len(json.loads(after.stdout)["hits"]))
                notes = json.loads(after.stdout)["report"]["notes"]
                if hits[1] < hits[0] and not any("incomplete" in n for n in notes):
                    tally.lost += hits[0] - hits[1]  # fewer answers and no word of it
                filler.unlink()
                repair(root, tally)
                shutil.rmtree(mnt / f"idx-{n}-{keep_kb}", ignore_errors=True)
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)
    return tally


def writers_tier(base: Path, runs: int, rng: random.Random) -> Tally:
    """Two writers of one index at once, while files change under them: every run waits
    for the other (the writer lock) and exits 0, searches between them answer, and the
    index after a last run equals a clean rebuild."""
    tally = Tally()
    for n in range(runs):
        root = workspace(base / f"writers{n}", files=60)
        cli("index", str(root), "--no-embed")
        for _ in range(4):
            env = {k: v for k, v in os.environ.items() if not k.startswith("CODESIFT_")}
            env["CODESIFT_BACKGROUND"] = "0"
            pair = [
                subprocess.Popen(
                    [*CODESIFT, "index", str(root), "--no-embed"],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    text=True,
                    env=env,
                )
                for _ in range(2)
            ]
            edit_some(root, rng)  # while both run
            for proc in pair:
                _, err = proc.communicate(timeout=900)
                tally.tried += 1
                if proc.returncode != 0 or "Traceback" in err:
                    tally.failed += 1
            search_answers(root, tally)
        repair(root, tally)
    return tally


TIERS: dict[str, Callable[[Path, int, random.Random], Tally]] = {
    "kill -9": kill_tier,
    "disk full": disk_full_tier,
    "bad input": bad_input_tier,
    "symlink race": race_tier,
    "stream": stream_tier,
    "two writers": writers_tier,
    "small tmpfs": tmpfs_tier,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per tier (the race: 4× this many)")
    parser.add_argument("--tier", action="append", choices=sorted(TIERS), help="only these tiers")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    print(f"{'tier':14} {'tried':>6} {'failed':>7} {'lost':>6} {'wrong':>6} {'seconds':>8}")
    bad = 0
    for name in args.tier or list(TIERS):
        with tempfile.TemporaryDirectory(prefix="codesift-soak-") as tmp:
            started = time.perf_counter()
            t = TIERS[name](Path(tmp), args.runs, rng)
            took = time.perf_counter() - started
        bad += t.failed + t.lost + t.wrong
        print(f"{name:14} {t.tried:>6} {t.failed:>7} {t.lost:>6} {t.wrong:>6} {took:>8.0f}", flush=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

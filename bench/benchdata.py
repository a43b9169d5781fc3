"""Where the quality tiers' outside data lives, and which part of it they may touch.

Nothing here is committed: the data folder (``--data DIR``, else the environment
variable ``CODESIFT_BENCH_DATA``, else ``/work/benchdata``) is filled once by
``python -m bench.fetchdata`` and only read afterwards.

    DIR/semble/repos.json           the pinned revisions (the allowed repositories only)
    DIR/semble/annotations/*.json   queries and relevant targets (the allowed repositories only)
    DIR/semble/results/*.json       semble's published figures (rows of the allowed repositories only)
    DIR/semble/SOURCE               the semble commit they were copied from
    DIR/repos/<name>/               the benchmark root of <name> at its pinned revision
    DIR/repos/<name>.rev            that revision (written last: its presence means "complete")
    DIR/indexes/<name>/             codesift's index of repos/<name> (built once, reused)
    DIR/swebench/                   SWE-bench instances and checkouts (see bench.swebench)
    DIR/logs/, DIR/STATUS.md        background index builds and their progress
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_DATA = Path("/work/benchdata")

# The semble benchmark's repositories this project may run and tune on. Every other
# repository of that benchmark is held out for an independent check: the harness
# refuses them (never fetched, indexed, run or reported).
SEMBLE_ALLOWED: tuple[str, ...] = (
    "pydantic",
    "httpx",
    "requests",
    "starlette",
    "click",
    "model2vec",
    "axios",
    "redux",
    "cobra",
    "chi",
    "commons-lang",
    "jackson-databind",
    "guzzle",
    "sinatra",
    "tokio",
    "serde",
    "zod",
    "vitest",
    "newtonsoft-json",
    "messagepack-csharp",
    "kotlinx-coroutines",
    "exposed",
    "circe",
    "http4s",
    "vapor",
    "plug",
    "ecto",
    "nlohmann-json",
    "abseil-cpp",
    "redis",
    "curl",
    "bats-core",
    "bash-it",
    "lazy.nvim",
    "mini.nvim",
    "pandoc",
    "xmonad",
    "zig-clap",
)

# SWE-bench repositories (owner/name as SWE-bench spells them) this project may use;
# seaborn, pylint, pytest, xarray, requests and flask are held out.
SWEBENCH_ALLOWED: tuple[str, ...] = (
    "django/django",
    "sympy/sympy",
    "sphinx-doc/sphinx",
    "astropy/astropy",
    "matplotlib/matplotlib",
    "scikit-learn/scikit-learn",
)


class HeldOutError(ValueError):
    """A repository outside the allow-list was asked for."""


def data_dir(arg: Path | None) -> Path:
    """The data folder: the flag, else $CODESIFT_BENCH_DATA, else /work/benchdata."""
    if arg is not None:
        return arg
    env = os.environ.get("CODESIFT_BENCH_DATA")
    return Path(env) if env else DEFAULT_DATA


def check_allowed(names: list[str], allowed: tuple[str, ...], what: str) -> list[str]:
    """``names`` unchanged when every one is allowed; HeldOutError naming the others."""
    bad = [n for n in names if n not in allowed]
    if bad:
        raise HeldOutError(
            f"{', '.join(bad)}: not in the {what} allow-list (held out for an independent check, "
            f"or unknown). Allowed: {', '.join(allowed)}"
        )
    return names


FILL_HINT = """\
The data folder {data} is missing {what}. Fill it once (nothing is downloaded at run time):

    python -m bench.fetchdata semble --data {data} --semble-git <git dir of MinishLab/semble> \\
        --mirror <folder of owner+name/repo git dirs>     # or --clone (git over the network)
    python -m bench.fetchdata --help                      # every option

On the project's machines: bring github:michalfedyna/semble (a complete copy of semble's
benchmarks/) and each allowed repository with the session's `fetch` tool; it puts them under
/work/.mirror/<owner>+<name>/repo, which is the default --mirror.
"""


def fill_hint(data: Path, what: str) -> str:
    return FILL_HINT.format(data=data, what=what)

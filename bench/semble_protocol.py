"""The semble benchmark's protocol, ported line for line from its published code.

Source: github:MinishLab/semble ``benchmarks/data.py`` and ``benchmarks/metrics.py``
(the copy read: github:michalfedyna/semble b8543c3). What it fixes:

- a task is one annotation: a query, ``relevant`` + ``secondary`` targets (all count
  as relevant, binary gain), a category (given, else inferred from the query);
- a target is a path, optionally with a line span; a result (path, start, end)
  covers it when either path is a suffix of the other and, with a span, the line
  ranges overlap. Chunk paths are relative to the repository's benchmark root;
- a target's rank is that of the first result covering it; ranks of different
  targets can coincide (one chunk covering two targets counts once);
- NDCG@k = DCG of the binary relevance vector over the top k ÷ ideal DCG of
  min(k, number of targets);
- per repository the mean over its queries; overall, per language and per
  category the mean over repositories (not over queries), as run_benchmark.py's
  summary does.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

CATEGORIES = ("architecture", "semantic", "symbol")


@dataclass(frozen=True, slots=True)
class Target:
    path: str
    start_line: int | None = None
    end_line: int | None = None

    @property
    def has_span(self) -> bool:
        return self.start_line is not None and self.end_line is not None


@dataclass(frozen=True, slots=True)
class RepoSpec:
    name: str
    language: str
    url: str
    revision: str
    benchmark_root: str | None = None


@dataclass(frozen=True, slots=True)
class Task:
    repo: str
    language: str
    query: str
    relevant: tuple[Target, ...]
    secondary: tuple[Target, ...]
    category: str

    @property
    def all_relevant(self) -> tuple[Target, ...]:
        return self.relevant + self.secondary


@dataclass(frozen=True, slots=True)
class Location:
    """One ranked result as the protocol sees it: a file and a 1-based line range."""

    path: str
    start_line: int
    end_line: int


def infer_category(query: str) -> str:
    if " " not in query.strip():
        return "symbol"
    lowered = query.lower()
    if lowered.startswith("how ") or lowered.startswith("how does") or lowered.startswith("how are"):
        return "architecture"
    return "semantic"


def _parse_target(raw: object) -> Target:
    if isinstance(raw, str):
        return Target(path=raw)
    if not isinstance(raw, dict):
        raise TypeError(f"expected mapping, got {type(raw).__name__}")
    start, end = raw.get("start_line"), raw.get("end_line")
    return Target(
        path=str(raw["path"]),
        start_line=int(start) if start is not None else None,
        end_line=int(end) if end is not None else None,
    )


def load_repo_specs(path: Path) -> dict[str, RepoSpec]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    return {item["name"]: RepoSpec(**item) for item in raw}


def load_tasks(annotations: Path, specs: dict[str, RepoSpec]) -> list[Task]:
    """Every task of the repositories in ``specs`` (annotation files in name order, as semble)."""
    tasks: list[Task] = []
    for f in sorted(annotations.glob("*.json")):
        if f.stem not in specs:
            continue
        for item in json.loads(f.read_text(encoding="utf-8")):
            repo = item.get("repo", f.stem)
            if repo not in specs:
                continue
            category = item.get("category")
            tasks.append(
                Task(
                    repo=repo,
                    language=specs[repo].language,
                    query=item["query"],
                    relevant=tuple(_parse_target(t) for t in item.get("relevant", [])),
                    secondary=tuple(_parse_target(t) for t in item.get("secondary", [])),
                    category=category if isinstance(category, str) else infer_category(item["query"]),
                )
            )
    return tasks


def path_matches(file_path: str, target_path: str) -> bool:
    f = file_path.replace("\\", "/")
    t = target_path.replace("\\", "/")
    return f == t or f.endswith(f"/{t}") or t.endswith(f"/{f}")


def target_matches_location(loc: Location, target: Target) -> bool:
    if not path_matches(loc.path, target.path):
        return False
    if not target.has_span:
        return True
    assert target.start_line is not None and target.end_line is not None
    return not (loc.end_line < target.start_line or loc.start_line > target.end_line)


def dcg(relevances: Sequence[int]) -> float:
    return sum(rel / math.log2(i + 2) for i, rel in enumerate(relevances))


def ndcg_at_k(relevant_ranks: Iterable[int], n_relevant: int, k: int) -> float:
    if n_relevant == 0:
        return 0.0
    relevances = [0] * k
    for rank in relevant_ranks:
        if 1 <= rank <= k:
            relevances[rank - 1] = 1
    ideal = dcg([1] * min(k, n_relevant))
    return dcg(relevances) / ideal if ideal > 0 else 0.0


def target_rank(results: Sequence[Location], target: Target) -> int | None:
    for i, loc in enumerate(results, 1):
        if target_matches_location(loc, target):
            return i
    return None


def file_rank(file_paths: Sequence[str], target_path: str) -> int | None:
    for i, fp in enumerate(file_paths, 1):
        if path_matches(fp, target_path):
            return i
    return None


def task_ranks(task: Task, results: Sequence[Location]) -> list[int]:
    """1-based ranks of the task's targets that the results cover (semble's ``relevant_ranks``)."""
    return [r for t in task.all_relevant if (r := target_rank(results, t)) is not None]


def task_ndcg10(task: Task, results: Sequence[Location]) -> float:
    return ndcg_at_k(task_ranks(task, results), len(task.all_relevant), 10)


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0

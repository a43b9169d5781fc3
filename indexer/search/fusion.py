"""Weighted Reciprocal Rank Fusion: ``score = Σ wᵢ / (k + rankᵢ)``, ranks from 1."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .results import Source


@dataclass(frozen=True, slots=True)
class Fused:
    key: str
    score: float  # normalised to [0, 1]
    sources: tuple[Source, ...]
    ranks: tuple[int, ...] = ()  # the key's rank (from 1) in each of ``sources``, same order


def rrf(rankings: Mapping[Source, Sequence[str]], weights: Mapping[Source, float], k: int) -> list[Fused]:
    """Fuse ranked lists of keys. A key found by several sources outranks one found by one
    (at equal ranks); an empty list contributes nothing, so the others' order stands.

    The score is divided by the best score possible with the sources that answered
    (rank 1 everywhere), so it lies in [0, 1].
    """
    scores: dict[str, float] = {}
    found: dict[str, list[Source]] = {}
    ranks: dict[str, list[int]] = {}
    first_seen: dict[str, int] = {}
    order = 0
    for source, keys in rankings.items():
        w = weights.get(source, 0.0)
        for rank, key in enumerate(keys, 1):
            scores[key] = scores.get(key, 0.0) + w / (k + rank)
            found.setdefault(key, []).append(source)
            ranks.setdefault(key, []).append(rank)
            if key not in first_seen:
                first_seen[key] = order
                order += 1
    best = sum(weights.get(s, 0.0) for s, keys in rankings.items() if keys) / (k + 1)
    if best <= 0:
        best = 1.0
    fused = [
        Fused(key, min(1.0, s / best), tuple(found[key]), tuple(ranks[key])) for key, s in scores.items()
    ]
    fused.sort(key=lambda f: (-f.score, first_seen[f.key]))
    return fused

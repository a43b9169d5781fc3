"""What an index run reports while it goes: progress ticks per phase and the run's
counters (files changed, chunks written and embedded, phase times)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

Phase = str  # "walk" | "remote" | "parse" | "embed" | "optimize" | "done"


@dataclass(frozen=True, slots=True)
class Progress:
    """One progress tick: ``done`` of ``total`` units of ``phase``."""

    phase: Phase
    done: int
    total: int
    chunks: int = 0
    message: str = ""


ProgressFn = Callable[[Progress], None]


def no_progress(_: Progress) -> None:
    return None


@dataclass
class Counters:
    changed: int = 0
    removed: int = 0
    skipped: int = 0
    failed: int = 0
    chunks_written: int = 0
    embedded: int = 0
    fast_embedded: int = 0  # chunks given a fast-tier (static) vector
    refused: int = 0  # chunks the embedding model refused: reported, left without a vector
    from_cache: int = 0
    phases: dict[str, float] = field(default_factory=dict)

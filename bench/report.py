"""The bench table: one row per figure, printed as it is measured, kept for latest.json."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

Row = dict[str, object]


def percentiles(samples: Sequence[float]) -> tuple[float, float]:
    """p50 and p95 of the samples (0, 0 when there are none)."""
    ordered = sorted(samples)
    if not ordered:
        return 0.0, 0.0
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


def timed(fn: Callable[[], object]) -> float:
    """Milliseconds one call of ``fn`` took."""
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def header() -> None:
    print(f"{'tier':<8} {'figure':<58} {'value':>12} {'unit':<9} {'target':<12}", flush=True)


@dataclass
class Table:
    """Figures in the order they were measured; each printed at once."""

    rows: list[Row] = field(default_factory=list)

    def add(
        self,
        tier: str,
        figure: str,
        value: float,
        unit: str = "",
        target: str = "",
        ok: bool | None = None,
    ) -> None:
        self.rows.append(
            {
                "tier": tier,
                "figure": figure,
                "value": round(value, 3),
                "unit": unit,
                "target": target,
                "pass": ok,
            }
        )
        mark = "" if ok is None else ("PASS" if ok else "MISS")
        print(f"{tier:<8} {figure:<58} {value:>12,.2f} {unit:<9} {target:<12} {mark}", flush=True)

    def below(self, tier: str, figure: str, value: float, unit: str, limit: float) -> None:
        """A figure with an upper target: passes when ``value < limit``."""
        self.add(tier, figure, value, unit, f"< {limit:g} {unit}".strip(), value < limit)

    def latency(
        self,
        tier: str,
        what: str,
        samples: Sequence[float],
        p50_limit: float = 0,
        p95_limit: float = 0,
        noun: str = "queries",
    ) -> None:
        """p50 and p95 rows of millisecond samples, with targets where given."""
        p50, p95 = percentiles(samples)
        n = len(samples)
        if p50_limit:
            self.below(tier, f"{what} p50 ({n} {noun})", p50, "ms", p50_limit)
        else:
            self.add(tier, f"{what} p50 ({n} {noun})", p50, "ms")
        if p95_limit:
            self.below(tier, f"{what} p95", p95, "ms", p95_limit)
        else:
            self.add(tier, f"{what} p95", p95, "ms")

    def missed(self) -> list[Row]:
        return [r for r in self.rows if r["pass"] is False]

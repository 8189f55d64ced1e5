#!/usr/bin/env python3
"""Pool several saved runs of parity_llama_bench.py: every paired round of every run, per test.

On a shared or noisy host one run's 4-5 rounds leave its ratio uncertain by several percent
(each round's ours / llama-bench ratio spreads +-10% there, both ways). Pooling the paired
per-round ratios of every run made with the same engine narrows that honestly: all runs are
read, none is left out, and the 95% interval says how well the pooled ratio is known.

    python benchmarks/parity_pool.py benchmarks/results/parity-llama-bench-2026-11-30*.txt
"""

from __future__ import annotations

import math
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from advisor.core.runs.stats import mean_interval

# model  size MB  test  llama-bench  advisor  ratio  [lo-hi]  per-round ratios...
ROW = re.compile(
    r"^(?P<model>\S+\.gguf)\s+\d+ MB\s+(?P<test>\S+)\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+"
    r"(?:[\d.]+-[\d.]+\s+)?(?P<rounds>[\d.\s]+)$"
)


def read_rounds(paths: list[str]) -> dict[tuple[str, str], list[float]]:
    """(model, test) -> the per-round ratios of every run, in file order."""
    out: dict[tuple[str, str], list[float]] = {}
    for path in paths:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            m = ROW.match(line.strip())
            if m:
                ratios = [float(x) for x in m.group("rounds").split()]
                out.setdefault((m.group("model"), m.group("test")), []).extend(ratios)
    return out


def summary(ratios: list[float]) -> tuple[float, float, float, float]:
    """Geometric mean, median and the 95% t-interval of the geometric mean."""
    logs = [math.log(r) for r in ratios]
    lo, hi = mean_interval(logs) or (math.nan, math.nan)
    geo = math.exp(statistics.fmean(logs))
    return geo, statistics.median(ratios), math.exp(lo), math.exp(hi)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    rounds = read_rounds(argv)
    if not rounds:
        print("no parity rows found in those files")
        return 2
    print(f"pooled: {len(argv)} runs ({', '.join(Path(p).name for p in argv)})\n")
    print(
        f"{'model':34} {'test':>6} {'rounds':>6} {'geo-mean':>9} {'median':>7} {'95% interval':>14}"
    )
    worst = 0.0
    for (model, test), ratios in rounds.items():
        geo, med, lo, hi = summary(ratios)
        worst = max(worst, abs(geo - 1), abs(med - 1))
        print(f"{model:34} {test:>6} {len(ratios):6d} {geo:9.3f} {med:7.3f} {lo:7.3f}-{hi:.3f}")
    print(f"\nlargest deviation from 1 (geo-mean or median): {worst:.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

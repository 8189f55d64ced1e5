"""Lead 3 and the per-backend cross-source coverage, over the halves `cross_source_coverage`
draws (bands_fit.source_halves).

usage (repository root):
    PYTHONPATH=. python benchmarks/results/issue37-leads-2026-12-04/crosssource.py
"""

from __future__ import annotations

import collections
import math
import statistics

from advisor.core.predict.fitting.bands_fit import source_halves
from advisor.core.predict.fitting.holdout import held_out
from advisor.core.predict.model.observations import load_observations

RESIDUALS = held_out(load_observations()[0])
HALVES = list(source_halves(RESIDUALS))
# lead 3: a device's published band widened to hold its own held-out misses in the built half
# (at least N rows; the largest, the median or the 86th-percentile miss)
VARIANTS = [None, (1, "max"), (2, "max"), (2, "med"), (3, "q")]


def own_misses(half) -> dict:
    own = collections.defaultdict(list)
    for h in half.built:
        own[(h.kind, h.basis, h.obs.device.id, h.obs.backend, h.obs.moe)].append(abs(h.log_error))
    return own


def widened_by_own(band, misses, variant):
    if variant is None or len(misses) < variant[0]:
        return band
    ordered = sorted(misses)
    x = {"max": ordered[-1], "med": statistics.median(ordered),
         "q": ordered[int(0.86 * len(ordered))]}[variant[1]]  # fmt: skip
    return min(band[0], math.exp(-x)), max(band[1], math.exp(x))


def coverage(variant) -> tuple[dict, dict, dict]:
    inside, dense, width = (collections.defaultdict(list) for _ in range(3))
    for half in HALVES:
        own = own_misses(half)
        for h in half.checked:
            band = half.band(h)
            if h.basis == "published":
                key = (h.kind, h.basis, h.obs.device.id, h.obs.backend, h.obs.moe)
                band = widened_by_own(band, own.get(key, []), variant)
            ok = band[0] <= math.exp(h.log_error) <= band[1]
            for key in ((h.kind, h.basis, h.obs.backend), (h.kind, h.basis, "*")):
                inside[key].append(ok)
                width[key].append(band[1] / band[0])
            if not h.obs.moe:
                dense[(h.kind, h.basis, h.obs.backend)].append(ok)
    return inside, dense, width


def share(oks: list) -> str:
    return f"{sum(oks) / len(oks):.1%}"


inside, dense, _ = coverage(None)
print("cross-source coverage per backend (rows per half, all rows, dense rows):")
for key in sorted(inside):
    print(" ", key, len(inside[key]) // len(HALVES), share(inside[key]),
          f"dense {share(dense[key])}" if dense.get(key) else "")  # fmt: skip
print("\nlead 3, published bands (coverage and median width):")
for variant in VARIANTS:
    inside, _, width = coverage(variant)
    shown = [k for k in sorted(inside) if k[1] == "published"
             and k[2] in ("*", "cuda", "vulkan", "rocm", "metal")]  # fmt: skip
    cells = [f"{k[0][:3]}/{k[2]} {share(inside[k])} w{statistics.median(width[k]):.2f}"
             for k in shown]  # fmt: skip
    print(" ", variant, "  ".join(cells))

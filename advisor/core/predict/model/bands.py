"""Bands from held-out errors: what a prediction's low and high ends rest on.

A band holds 86% of the held-out errors of its kind (decode, prefill), backend and basis
(`published`, `modelled`), counted in whole rows, the worst misses left out first. The base
bands come from dense models' rows. A mixture of experts misses more (its routing, its expert
kernels), so its band is the dense band widened, in quadrature, by the least extra width that
brings 86% of the held-out MoE rows inside theirs: a band that means what it says for both,
where one band for all rows covered 89-95% of dense rows and 62-79% of MoE rows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

Band = tuple[float, float]
Bands = dict[tuple[str, str, str], Band]

BAND_COVERAGE = 0.86  # of held-out errors inside a band (>= 80% asked, on small samples)
# where a backend has no published row at all: the pooled held-out spread, this much wider
SPEC_ONLY_WIDENING = 1.6
DEFAULT_BAND = (0.5, 1.6)  # before any data
MOE_DEFAULT_WIDENING = 0.10  # where the held-out MoE rows are too few to say


def union(a: Band, b: Band) -> Band:
    """The narrowest band holding both."""
    return min(a[0], b[0]), max(a[1], b[1])


def band_for(bands: Bands, kind: str, backend: str, basis: str) -> Band:
    """A dense model's band: its backend's, else the pool's for the basis, else spec-only."""
    spec_only = bands.get((kind, "*", "spec-only"), DEFAULT_BAND)
    if basis == "spec-only":
        return spec_only
    return bands.get((kind, backend, basis), bands.get((kind, "*", basis), spec_only))


def shown_band(
    bands: Bands, kind: str, backend: str, basis: str, moe: bool, moe_widening: float
) -> Band:
    """The band the app shows a model with: the dense band, widened for a mixture of experts
    (by its fitted figure, or the default where there was none)."""
    band = band_for(bands, kind, backend, basis)
    return widened(band, [moe_extra(moe_widening)]) if moe else band


def moe_extra(fitted: float) -> float:
    """A mixture of experts' extra log half-width: the fitted one, else the default."""
    return fitted or MOE_DEFAULT_WIDENING


def widened(band: Band, extra: Iterable[float]) -> Band:
    """A band widened, in quadrature on each side, by each extra log half-width."""
    more = sum(e * e for e in extra)
    if not more:
        return band
    lo, hi = -math.log(band[0]), math.log(band[1])
    return math.exp(-math.sqrt(lo * lo + more)), math.exp(math.sqrt(hi * hi + more))

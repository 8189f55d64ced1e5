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
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from advisor.core.predict.holdout import HeldOut

Band = tuple[float, float]
Bands = dict[tuple[str, str, str], Band]

BAND_COVERAGE = 0.86  # of held-out errors inside a band (>= 80% asked, on small samples)
MIN_BAND_ROWS = 8
MIN_BAND_DEVICES = 6  # a modelled band resting on fewer devices is the pooled one at least
# where a backend has no published row at all: the pooled held-out spread, this much wider
SPEC_ONLY_WIDENING = 1.6
DEFAULT_BAND = (0.5, 1.6)  # before any data
MOE_DEFAULT_WIDENING = 0.10  # where the held-out MoE rows are too few to say


def coverage_band(log_errors: Sequence[float]) -> Band:
    """The band that holds all but 14% of the held-out errors, counted in whole rows, the
    most extreme left out first: of 19 errors, 2 fall outside (interpolated quantiles put the
    ends between rows and left 4 of 19 outside: 79%, not the 86% meant); of 11, the one worst
    miss, not a row from each side (that would stretch the band to the worst miss)."""
    ordered = sorted(log_errors)
    first, last = 0, len(ordered) - 1
    for _ in range(int(len(ordered) * (1.0 - BAND_COVERAGE))):
        if abs(ordered[first]) > abs(ordered[last]):
            first += 1
        else:
            last -= 1
    lo, hi = ordered[first], ordered[last]
    return float(math.exp(min(lo, -0.02))), float(math.exp(max(hi, 0.02)))


def union(a: Band, b: Band) -> Band:
    """The narrowest band holding both."""
    return min(a[0], b[0]), max(a[1], b[1])


def _counted(h: HeldOut) -> bool:
    return h.obs.era != "old" and math.isfinite(h.log_error)


def bands_from(residuals: Iterable[HeldOut]) -> Bands:
    """(kind, backend, basis) -> (low, high) multipliers holding 86% of the held-out errors
    of dense models on current builds. A backend with too few rows of a basis adds, first,
    its own `modelled` errors to them (a `published` figure is no better known than a modelled
    one on the same backend: CPU prefill scatters far wider than the other backends' pool),
    else takes the pooled errors of that basis; its band is never narrower than its own few
    rows' (which may miss by more than the modelled ones). A `modelled` band resting on fewer
    than MIN_BAND_DEVICES devices is at least the pooled one (a device left out misses on all
    its rows at once). `spec-only` is the pooled `modelled` spread, wider."""
    groups: dict[tuple[str, str, str], list[float]] = {}
    devices: dict[tuple[str, str, str], set[str]] = {}
    for h in residuals:
        if not _counted(h) or h.obs.moe:
            continue
        for key in ((h.kind, h.obs.backend, h.basis), (h.kind, "*", h.basis)):
            groups.setdefault(key, []).append(h.log_error)
            devices.setdefault(key, set()).add(h.obs.device.id)
    bands: Bands = {}
    for key, errors in groups.items():
        kind, backend, basis = key
        band = None
        if len(errors) < MIN_BAND_ROWS and backend != "*":
            own = errors + (groups.get((kind, backend, "modelled"), []) if basis != "modelled"
                            else [])  # fmt: skip
            pooled = own if len(own) >= MIN_BAND_ROWS else groups.get((kind, "*", basis), errors)
            # never narrower than the few rows of its own: they are held-out errors too
            band = union(coverage_band(pooled), coverage_band(errors))
        elif basis == "modelled" and backend != "*" and len(devices[key]) < MIN_BAND_DEVICES:
            # a device left out misses on all its rows at once: the rows of a few devices
            # say how those devices scatter, not how the next one will
            band = union(coverage_band(groups[(kind, "*", basis)]), coverage_band(errors))
        bands[key] = band or coverage_band(errors)
    for kind in ("decode", "prefill"):
        lo, hi = bands.get((kind, "*", "modelled"), (0.6, 1.4))
        bands[(kind, "*", "spec-only")] = (lo**SPEC_ONLY_WIDENING, hi**SPEC_ONLY_WIDENING)
    return bands


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


WIDENING_STEP = 0.01


def moe_widening(residuals: Iterable[HeldOut], bands: Bands, kind: str) -> float:
    """The least extra log half-width (a multiple of 0.01, in quadrature) that brings 86% of
    the held-out MoE rows of `kind` inside their backend's dense band widened by it; 0 where
    there are too few MoE rows to say (the app then widens by its default)."""
    rows = [(band_for(bands, h.kind, h.obs.backend, h.basis), math.exp(h.log_error))
            for h in residuals if _counted(h) and h.obs.moe and h.kind == kind]  # fmt: skip
    if len(rows) < MIN_BAND_ROWS:
        return 0.0
    step = 0
    while True:
        w = step * WIDENING_STEP
        inside = 0
        for band, ratio in rows:
            lo, hi = widened(band, [w])
            inside += lo <= ratio <= hi
        if inside >= BAND_COVERAGE * len(rows) or w >= 3.0:
            return w
        step += 1

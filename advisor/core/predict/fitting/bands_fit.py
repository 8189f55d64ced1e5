"""Bands from held-out errors (`fitting.holdout`): the low and high multipliers a prediction's
band spans, per kind, backend and basis; what `model.bands` looks them up in."""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from advisor.core.predict.fitting.holdout import HeldOut
from advisor.core.predict.model.bands import (
    BAND_COVERAGE,
    SPEC_ONLY_WIDENING,
    Band,
    Bands,
    band_for,
    shown_band,
    union,
    widened,
)

# a band of fewer held-out rows than this borrows its backend's modelled rows or the pool's
MIN_BAND_ROWS = 8
MIN_BAND_DEVICES = 6  # a modelled band resting on fewer devices is the pooled one at least


def coverage_band(log_errors: Sequence[float]) -> Band:
    """The band that holds all but 14% of the held-out errors, counted in whole rows, the
    worst misses left out first (of 19 errors, the worst 2: interpolated quantiles left 4 of
    19 outside, 79%, not the 86% meant), and as wide below one as above (in log): the
    half-width is the largest remaining miss, of either sign. A few dozen rows say how far
    the model misses, not on which side the next source will: built from one half of the
    sources, the lopsided band held 74-82% of the other half's errors, this one 84-89%
    (`cross_source_coverage`, benchmarks/results/bands-symmetric-2026-12-04.txt)."""
    misses = sorted(abs(e) for e in log_errors)
    kept = misses[: len(misses) - int(len(misses) * (1.0 - BAND_COVERAGE))]
    half_width = max(kept[-1], 0.02)
    return float(math.exp(-half_width)), float(math.exp(half_width))


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


WIDENING_STEP = 0.01  # the MoE widening's search step, in log half-width


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


CROSS_SOURCE_SPLITS = 40  # random halves of the sources the cross-source check draws


@dataclass(frozen=True)
class SourceHalf:
    """One random half of the sources: the held-out rows it holds, the bands and MoE widenings
    built from them, and the other half's rows, which those bands are checked on."""

    built: list[HeldOut]
    bands: Bands
    widening: dict[str, float]
    checked: list[HeldOut]

    def band(self, h: HeldOut) -> Band:
        """The band shown for a checked row."""
        return shown_band(self.bands, h.kind, h.obs.backend, h.basis, h.obs.moe,
                          self.widening[h.kind])  # fmt: skip


def source_halves(
    residuals: Sequence[HeldOut], splits: int = CROSS_SOURCE_SPLITS
) -> Iterator[SourceHalf]:
    """`splits` random halves of the sources of the current-build held-out rows (seeded 0..)."""
    rows = [h for h in residuals if _counted(h)]
    sources = sorted({h.obs.source_url for h in rows})
    for seed in range(splits):
        half = set(random.Random(seed).sample(sources, len(sources) // 2))
        built = [h for h in rows if h.obs.source_url in half]
        bands = bands_from(built)
        widening = {kind: moe_widening(built, bands, kind) for kind in ("decode", "prefill")}
        checked = [h for h in rows if h.obs.source_url not in half]
        yield SourceHalf(built, bands, widening, checked)


def cross_source_coverage(
    residuals: Sequence[HeldOut], splits: int = CROSS_SOURCE_SPLITS
) -> dict[tuple[str, str], float]:
    """Do the bands hold for sources they were not built from? Bands (and MoE widenings)
    built from the held-out errors of a random half of the sources, the share of the other
    half's errors inside them, over `splits` halves: (kind, basis) -> share. A band holds
    BAND_COVERAGE of the errors it was built from; this says what it holds for the next
    source's."""
    inside: dict[tuple[str, str], list[bool]] = {}
    for half in source_halves(residuals, splits):
        for h in half.checked:
            lo, hi = half.band(h)
            inside.setdefault((h.kind, h.basis), []).append(lo <= math.exp(h.log_error) <= hi)
    return {key: sum(v) / len(v) for key, v in sorted(inside.items())}

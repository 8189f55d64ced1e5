"""Bands from held-out errors, worked by hand: whole rows left out, the worst misses first,
and a backend with few rows of a basis joined by its own modelled errors before the pool."""

from __future__ import annotations

import itertools
import math
from types import SimpleNamespace

import pytest

from advisor.core.predict.fitting.bands_fit import bands_from, moe_widening
from advisor.core.predict.fitting.bands_fit import coverage_band as _coverage_band
from advisor.core.predict.model.bands import MOE_DEFAULT_WIDENING, shown_band, widened


def test_of_19_errors_two_fall_outside_the_worst_two():
    errors = [math.log(1 + k / 100) for k in range(-9, 10)]  # -9% ... +9%, one per point
    errors[0], errors[-1] = math.log(0.5), math.log(1.8)  # the two worst misses
    lo, hi = _coverage_band(errors)
    inside = sum(lo <= math.exp(e) <= hi for e in errors)
    assert inside == 17  # 89%: interpolated 7%/93% quantiles left 15 of 19 inside (79%)
    assert lo == pytest.approx(0.92) and hi == pytest.approx(1 / 0.92)  # the -8% row sets it


def test_one_wild_miss_is_left_out_not_a_row_from_each_side():
    errors = [math.log(x) for x in (0.02, 0.8, 0.85, 0.9, 0.95, 1.0, 1.05, 1.1, 1.15, 1.2, 1.3)]
    lo, hi = _coverage_band(errors)  # 11 rows: one may fall outside, and it is the 0.02
    assert lo == pytest.approx(1 / 1.3) and hi == pytest.approx(1.3)


def test_a_band_reaches_as_far_on_both_sides():
    # every miss on the same side: the next source's may fall on the other
    lo, hi = _coverage_band([math.log(1.2)] * 10)
    assert lo == pytest.approx(1 / 1.2) and hi == pytest.approx(1.2)
    lo, hi = _coverage_band([math.log(1.001)] * 10)  # and never narrower than +-2%
    assert lo == pytest.approx(math.exp(-0.02)) and hi == pytest.approx(math.exp(0.02))


_DEVICES = itertools.count()


def _held(backend, basis, ratio, kind="prefill", device=None):
    """A held-out row; each on a device of its own unless one is named."""
    device = SimpleNamespace(id=device or f"device-{next(_DEVICES)}")
    obs = SimpleNamespace(era="current", backend=backend, moe=False, device=device)
    return SimpleNamespace(obs=obs, kind=kind, basis=basis, log_error=math.log(ratio))


def test_a_modelled_band_resting_on_few_devices_is_the_pooled_one_at_least():
    # 12 CPU rows from 4 devices, close to the fit; 24 CUDA rows from 24 devices, wider
    ratios = (0.95, 1.0, 1.05)
    cpu = [_held("cpu", "modelled", r, device=f"cpu-{d}") for d in range(4) for r in ratios]
    cuda = [_held("cuda", "modelled", 1 + k / 50) for k in range(-12, 12)]
    bands = bands_from(cpu + cuda)
    pooled = bands[("prefill", "*", "modelled")]
    assert bands[("prefill", "cpu", "modelled")] == pytest.approx(pooled)
    assert pooled[0] < 0.95 and pooled[1] > 1.05  # wider than the CPU rows' own 0.95-1.05
    # the same 12 rows from 12 devices have a band of their own
    own = [_held("cpu", "modelled", r) for _ in range(4) for r in ratios]
    assert bands_from(own + cuda)[("prefill", "cpu", "modelled")] == pytest.approx((0.95, 1 / 0.95))


def test_few_published_rows_join_the_backends_own_modelled_errors_before_the_pool():
    cpu_modelled = [_held("cpu", "modelled", r) for r in (0.4, 0.6, 0.8, 1.0, 1.3, 1.6, 2.0, 2.6)]
    cpu_published = [_held("cpu", "published", r) for r in (0.9, 2.2, 2.3)]
    cuda_published = [_held("cuda", "published", 1 + k / 100) for k in range(-10, 11)]
    bands = bands_from(cpu_modelled + cpu_published + cuda_published)
    # 3 CPU published rows with the 8 CPU modelled errors: 11, one left out (2.6, not 0.4),
    # and 0.4 sets the half-width on both sides
    assert bands[("prefill", "cpu", "published")] == pytest.approx((0.4, 2.5))
    # the published rows' own misses are inside their band; the modelled band is its own 8
    assert all(0.4 <= r <= 2.5 for r in (0.9, 2.2, 2.3))
    assert bands[("prefill", "cpu", "modelled")] == pytest.approx((0.4, 2.5))
    # 21 CUDA published rows have their own band: 2 of 21 left out
    assert bands[("prefill", "cuda", "published")] == pytest.approx((0.91, 1 / 0.91))


def test_without_enough_modelled_rows_of_its_own_a_backend_borrows_the_pool():
    close = [_held("rocm", "published", r) for r in (0.99, 1.01)]
    pool = [_held("cuda", "published", 1 + k / 100) for k in range(-10, 11)]
    bands = bands_from(close + pool)
    assert bands[("prefill", "rocm", "published")] == bands[("prefill", "*", "published")]


def test_a_borrowed_band_still_holds_the_few_rows_of_its_own():
    """CPU prefill's 6 published rows missed by more than the pool of its modelled ones: a
    band from the pool alone held 4 of them."""
    few = [_held("rocm", "published", r) for r in (0.7, 1.5)]
    pool = [_held("cuda", "published", 1 + k / 100) for k in range(-10, 11)]
    bands = bands_from(few + pool)
    lo, hi = bands[("prefill", "rocm", "published")]
    assert (lo, hi) == pytest.approx((1 / 1.5, 1.5))
    assert bands[("prefill", "*", "published")][1] < 1.5


def _moe(backend, basis, ratio, kind="decode"):
    obs = SimpleNamespace(era="current", backend=backend, moe=True)
    return SimpleNamespace(obs=obs, kind=kind, basis=basis, log_error=math.log(ratio))


def test_the_dense_band_leaves_mixtures_of_experts_out():
    dense = [_held("cuda", "published", 1 + k / 100, "decode") for k in range(-10, 11)]
    wild = [_moe("cuda", "published", r) for r in (0.3, 3.0)]
    bands = bands_from(dense + wild)
    assert bands[("decode", "cuda", "published")] == pytest.approx((0.91, 1 / 0.91))


def test_a_mixture_of_experts_widens_until_86_percent_of_its_rows_fit():
    dense = [_held("cuda", "published", 1 + k / 100, "decode") for k in range(-10, 11)]
    moe = [_moe("cuda", "published", r) for r in [1.0] * 8 + [1.5, 2.0]]
    bands = bands_from(dense + moe)
    # 9 of the 10 must fit: 1.5 inside sqrt(ln(1 / 0.91)^2 + w^2) >= ln(1.5) -> w >= 0.394
    w = moe_widening(dense + moe, bands, "decode")
    assert w == pytest.approx(0.40)
    lo, hi = widened((0.91, 1 / 0.91), [w])
    assert hi >= 1.5 > widened((0.91, 1 / 0.91), [0.39])[1] and hi < 2.0
    assert shown_band(bands, "decode", "cuda", "published", True, w) == pytest.approx((lo, hi))
    assert shown_band(bands, "decode", "cuda", "published", False, w) == pytest.approx(
        (0.91, 1 / 0.91)
    )


def test_too_few_moe_rows_say_nothing_and_the_default_widening_holds():
    dense = [_held("cuda", "published", 1 + k / 100, "decode") for k in range(-10, 11)]
    moe = [_moe("cuda", "published", 2.0) for _ in range(7)]
    bands = bands_from(dense + moe)
    assert moe_widening(dense + moe, bands, "decode") == 0.0
    shown = shown_band(bands, "decode", "cuda", "published", True, 0.0)
    assert shown == pytest.approx(widened((0.91, 1 / 0.91), [MOE_DEFAULT_WIDENING]))

"""Run statistics at their edges, every figure worked out here by hand (t quantiles from a
printed table: t(1) = 12.706, t(2) = 4.303, t(3) = 3.182)."""

from __future__ import annotations

import math

import pytest

from advisor.core.runs import stats
from advisor.core.runs.config import TestSpec
from advisor.core.runs.stats import (
    enough_repetitions,
    mean_interval,
    relative_half_width,
    summarise_samples,
    t95,
)


def test_two_samples_give_the_widest_interval():
    # 1 and 2: mean 1.5, sample sd 1/sqrt(2), half-width 12.706 x sd / sqrt(2) = 6.353
    assert mean_interval([1.0, 2.0]) == pytest.approx((1.5 - 6.353, 1.5 + 6.353), abs=1e-9)
    assert mean_interval([7.0]) is None
    assert mean_interval([]) is None


def test_four_samples_use_three_degrees_of_freedom():
    # 10, 12, 14, 16: mean 13, sample sd sqrt(20/3) = 2.582, half 3.182 x 2.582 / 2 = 4.108
    lo, hi = mean_interval([10.0, 12.0, 14.0, 16.0])
    half = 3.182 * math.sqrt(20 / 3) / 2
    assert (lo, hi) == pytest.approx((13 - half, 13 + half), rel=1e-9)


def test_relative_width_needs_two_samples_and_a_positive_mean():
    assert relative_half_width([5.0]) is None
    assert relative_half_width([]) is None
    assert relative_half_width([1.0, -1.0]) is None  # mean 0: no share of it
    assert relative_half_width([-1.0, -3.0]) is None
    # a slow test (under 1 t/s) still has a width: 0.4, 0.6 -> 12.706 x 0.1 / 0.5
    assert relative_half_width([0.4, 0.6]) == pytest.approx(12.706 * 0.1 / 0.5, rel=1e-9)
    # 99, 101: mean 100, sd sqrt(2), half 12.706 x sqrt(2) / sqrt(2) = 12.706 -> 12.7%
    assert relative_half_width([99.0, 101.0]) == pytest.approx(0.12706, rel=1e-9)


def test_t_past_the_table_is_close_to_normal_not_equal_to_it():
    assert t95(30) == 2.042
    assert 1.96 < t95(31) < 2.042  # t(31) = 2.0395
    assert t95(31) == pytest.approx(2.0395, abs=2e-4)
    with pytest.raises(ValueError):
        t95(0)


def test_the_stopping_rule_at_its_limits(monkeypatch):
    tight = [100.0, 100.1]  # half-width 12.706 x 0.05 = 0.635%
    assert enough_repetitions(tight)
    assert not enough_repetitions(tight, min_reps=3)  # the user asked for at least three
    wide = [100.0, 150.0]
    assert not enough_repetitions(wide)
    assert enough_repetitions(wide, max_reps=2)  # ... or at most two
    assert not enough_repetitions(wide * 2, max_reps=5)  # four wide samples: keep going
    # exactly at the target counts as tight enough
    width = relative_half_width(tight)
    monkeypatch.setattr(stats, "TARGET_HALF_WIDTH", width)
    assert enough_repetitions(tight)
    monkeypatch.setattr(stats, "TARGET_HALF_WIDTH", width * 0.999)
    assert not enough_repetitions(tight)


def test_summary_skips_empty_samples_and_clamps_the_interval_at_zero():
    spec = TestSpec("decode", 0, 64, 0, 4)  # 256 tokens per repetition
    result = summarise_samples(spec, [2.0, 0.0, 4.0], 0.03)
    assert result.samples == pytest.approx((128.0, 64.0))
    assert result.tokens_per_s == pytest.approx(96.0)
    sd = math.sqrt(2) * 32  # sample sd of 128 and 64
    assert result.stddev == pytest.approx(sd, rel=1e-9)
    assert result.ci95_low_tps == 0.0  # 96 - 12.706 x 32 < 0
    assert result.ci95_high_tps == pytest.approx(96 + 12.706 * 32, rel=1e-9)
    assert result.per_stream_tps == pytest.approx(24.0)
    assert result.other_cpu_load == 0.03
    assert result.samples_s == (2.0, 0.0, 4.0)

    pp = summarise_samples(TestSpec("prefill", 512, 0, 0, 1), [0.5, 0.5], None)
    assert pp.tokens_per_s == pytest.approx(1024.0)
    assert pp.per_stream_tps is None and pp.stddev == 0.0
    assert pp.ci95_low_tps == pytest.approx(1024.0) and pp.ci95_high_tps == pytest.approx(1024.0)

    one = summarise_samples(spec, [2.0], None)
    assert one.stddev == 0.0 and one.ci95_low_tps is None and one.ci95_high_tps is None
    none = summarise_samples(spec, [0.0], None)
    assert none.tokens_per_s == 0.0

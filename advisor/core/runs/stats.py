"""Statistics of a test's repetitions: llama-bench's mean and standard deviation of tokens/s,
a Student's t interval for the mean, and the rule that stops repeating once it is tight.

llama-bench reports the mean of the per-repetition rates (not total tokens / total time) and
their sample standard deviation (n - 1); this does the same, so the numbers compare one to one.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from advisor.core.runs.config import TestSpec
from advisor.core.runs.results import TestResult

# two-sided 95% quantiles of Student's t distribution, by degrees of freedom (1-30)
_T95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
Z95 = 1.960

# adaptive repetitions: stop once the 95% interval is within this share of the mean ...
TARGET_HALF_WIDTH = 0.02
# ... after at least MIN_REPS and at most MAX_REPS repetitions (unless the user asks for more)
MIN_REPS = 2
MAX_REPS = 5


def t95(df: int) -> float:
    """The two-sided 95% quantile of Student's t with `df` degrees of freedom: the table to
    30, past it the Cornish-Fisher expansion around the normal quantile (within 0.0002)."""
    if df < 1:
        raise ValueError("a t interval needs at least two samples")
    if df <= len(_T95):
        return _T95[df - 1]
    z = Z95
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def mean_interval(values: Sequence[float]) -> tuple[float, float] | None:
    """The 95% confidence interval of the mean of `values` (None for fewer than two)."""
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    half = t95(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return mean - half, mean + half


def relative_half_width(values: Sequence[float]) -> float | None:
    """Half the 95% interval as a share of the mean (None for fewer than two samples)."""
    interval = mean_interval(values)
    mean = statistics.fmean(values) if values else 0.0
    if interval is None or mean <= 0:
        return None
    return (interval[1] - interval[0]) / 2 / mean


def enough_repetitions(
    rates: Sequence[float], *, min_reps: int = MIN_REPS, max_reps: int = MAX_REPS
) -> bool:
    """Has a test repeated enough? At least `min_reps`, at most `max_reps`; in between, stop
    as soon as the 95% interval of the mean is within +-2% of it."""
    if len(rates) < min_reps:
        return False
    if len(rates) >= max_reps:
        return True
    width = relative_half_width(rates)
    return width is not None and width <= TARGET_HALF_WIDTH


def summarise_samples(
    spec: TestSpec, samples_s: Sequence[float], other_cpu_load: float | None
) -> TestResult:
    """Mean and sample standard deviation of tokens/s over repetitions, llama-bench style,
    with the 95% interval of the mean."""
    tps = [spec.tokens_per_rep / s for s in samples_s if s > 0]
    mean = statistics.fmean(tps) if tps else 0.0
    std = statistics.stdev(tps) if len(tps) > 1 else 0.0
    interval = mean_interval(tps)
    return TestResult(
        name=spec.name,
        kind=spec.kind,
        n_prompt=spec.n_prompt,
        n_gen=spec.n_gen,
        depth=spec.depth,
        batch=spec.batch,
        samples_s=tuple(samples_s),
        tokens_per_s=mean,
        stddev=std,
        samples=tuple(tps),
        per_stream_tps=mean / spec.batch if spec.kind == "decode" else None,
        other_cpu_load=other_cpu_load,
        ci95_low_tps=max(0.0, interval[0]) if interval else None,
        ci95_high_tps=interval[1] if interval else None,
    )

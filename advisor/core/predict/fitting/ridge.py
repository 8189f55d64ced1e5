"""Fitting the efficiency model's terms: penalised least squares over the features of
`model.efficiency`, robust to a few rows far from the rest, and the penalties chosen by
held-out error (each device left out in turn).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from advisor.core.predict.model.efficiency import Key, RidgeFit, features

ROBUST_ITERATIONS = 4  # reweightings of the robust fit: its weights settle within these
HUBER_LOG = 0.15  # errors beyond 15% count linearly, not squared
# ridge penalties per kind of term (in units of one row's squared log error)
DEFAULT_PENALTIES = {
    "backend": 1e-4, "class": 4.0, "device": 2.0, "quant": 4.0, "cov": 20.0, "source": 2.0,
    "year": 20.0,
}  # fmt: skip


def fit_ridge(
    keys: Sequence[Key],
    y: Sequence[float],
    penalties: dict[str, float] | None = None,
    weights: Sequence[float] | None = None,
) -> RidgeFit:
    """Penalised least squares of y (log shares) on the keys' features."""
    penalties = penalties or DEFAULT_PENALTIES
    rows = [features(k) for k in keys]
    names = sorted({n for r in rows for n in r})
    index = {n: i for i, n in enumerate(names)}
    x = np.zeros((len(rows), len(names)))
    kinds = {}
    for i, r in enumerate(rows):
        for n, (kind, v) in r.items():
            x[i, index[n]] = v
            kinds[n] = kind
    w0 = np.asarray(weights if weights is not None else np.ones(len(rows)), dtype=float)
    target = np.asarray(y, dtype=float)
    lam = np.diag([penalties[kinds[n]] for n in names])
    w = w0
    for _ in range(ROBUST_ITERATIONS + 1):
        xtw = x.T * w
        coef = np.linalg.solve(xtw @ x + lam, xtw @ target)
        # Huber weights: a row far from the fit (a slow fork, a mislabelled device) counts
        # as if its error were HUBER_LOG, not in full
        residual = np.abs(target - x @ coef)
        w = w0 * np.minimum(1.0, HUBER_LOG / np.maximum(residual, 1e-12))
    return RidgeFit({n: float(c) for n, c in zip(names, coef, strict=True)}, dict(penalties))


@dataclass(frozen=True)
class Row:
    """One observation for the fit: its key, its log share, which source and device it is."""

    key: Key
    y: float
    source: str
    weight: float = 1.0


def _fit_rows(rows: Sequence[Row], penalties: dict[str, float]) -> RidgeFit:
    return fit_ridge(
        [r.key for r in rows], [r.y for r in rows], penalties, [r.weight for r in rows]
    )


def holdout(
    rows: Sequence[Row], penalties: dict[str, float], by: Callable[[Row], str]
) -> list[tuple[Row, float]]:
    """Leave each group (`by`: device id, or device and source) out in turn; (row, log error
    measured - predicted) for every held-out row."""
    out: list[tuple[Row, float]] = []
    groups: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault(by(r), []).append(i)
    for members in groups.values():
        held = set(members)
        train = [r for i, r in enumerate(rows) if i not in held]
        if not train:
            continue
        model = _fit_rows(train, penalties)
        out += [(rows[i], rows[i].y - model.log_share(rows[i].key)) for i in members]
    return out


def by_device(r: Row) -> str:
    return r.key.device.id


def by_device_source(r: Row) -> str:
    return f"{r.key.device.id}|{r.source}"


def held_out_error(residuals: Iterable[tuple[Row, float]], current_only: bool = True) -> float:
    """The score penalties are chosen by: mean absolute log error, current builds."""
    errors = [abs(e) for r, e in residuals if not current_only or r.key.era == "current"]
    return float(np.mean(errors)) if errors else math.inf


def choose_penalties(
    rows: Sequence[Row], grid: dict[str, Sequence[float]], base: dict[str, float] | None = None
) -> dict[str, float]:
    """Coordinate search over the grid, one kind of penalty at a time, by held-out error."""
    best = dict(base or DEFAULT_PENALTIES)
    score = held_out_error(holdout(rows, best, by_device))
    for _ in range(2):
        for kind, values in grid.items():
            for v in values:
                trial = {**best, kind: v}
                s = held_out_error(holdout(rows, trial, by_device))
                if s < score - 1e-6:
                    best, score = trial, s
    return best

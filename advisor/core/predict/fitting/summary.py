"""Held-out errors summarised: per backend, per class and per build era, each basis apart.

One summary feeds the printed table (`benchmarks/calibration_holdout.py`), the shipped fit
(its `held_out` block) and the model card (docs/MODEL.md), so all three say the same.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from advisor.core.predict.fitting.holdout import HeldOut
from advisor.core.predict.model.bands import Bands, shown_band
from advisor.core.predict.model.efficiency import efficiency_class

NEW_BUILDS = "2025-06"  # "current builds" in the sense: mid-2025 llama.cpp and later


def build_era(h: HeldOut) -> str:
    """The build era a row was measured in: old (before mid-2024, the model's era term),
    2024-07 to 2025-05, 2025-06 on, or undated."""
    o = h.obs
    if o.era == "old":
        return "old"
    if not o.date:
        return "undated"
    return "2025-06 on" if o.date[:7] >= NEW_BUILDS else "2024-07 to 2025-05"


@dataclass(frozen=True)
class Line:
    """One group's held-out errors: how many rows, the median and 90th-percentile absolute
    error, the signed median (measured / predicted - 1: + where the model is low), the share
    inside the band the app shows and that band's median width (high / low)."""

    basis: str
    grouping: str  # backend | class | era | class-era | all
    group: str
    kind: str
    rows: int
    median: float
    p90: float
    signed: float
    in_band: float
    width: float

    def to_json(self) -> dict[str, Any]:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in asdict(self).items()}


GROUPINGS: dict[str, Callable[[HeldOut], str]] = {
    "backend": lambda h: h.obs.backend,
    "class": lambda h: efficiency_class(h.obs.device),
    "era": build_era,
    "class-era": lambda h: f"{efficiency_class(h.obs.device)} | {build_era(h)}",
    "all": lambda h: "all",
}


def summarise(
    residuals: Iterable[HeldOut], bands: Bands, widening: dict[str, float], old: bool = False
) -> list[Line]:
    """Every grouping of the held-out rows (current builds unless `old`), each basis apart."""
    rows = [h for h in residuals if old or h.obs.era != "old"]
    out: list[Line] = []
    for basis in ("modelled", "published"):
        for grouping, group_of in GROUPINGS.items():
            groups: dict[tuple[str, str], list[HeldOut]] = {}
            for h in rows:
                if h.basis == basis:
                    groups.setdefault((group_of(h), h.kind), []).append(h)
            for (group, kind), sel in sorted(groups.items()):
                out.append(_line(basis, grouping, group, kind, sel, bands, widening[kind]))
    return out


def _line(
    basis: str, grouping: str, group: str, kind: str, sel: Sequence[HeldOut], bands: Bands,
    widening: float,
) -> Line:  # fmt: skip
    errors = [abs(math.exp(h.log_error) - 1) for h in sel]
    inside, widths = 0, []
    for h in sel:
        lo, hi = shown_band(bands, kind, h.obs.backend, h.basis, h.obs.moe, widening)
        widths.append(hi / lo)
        inside += lo <= math.exp(h.log_error) <= hi
    return Line(
        basis, grouping, group, kind, len(sel), statistics.median(errors),
        float(np.quantile(errors, 0.9)),
        math.exp(statistics.median(h.log_error for h in sel)) - 1,
        inside / len(sel), statistics.median(widths),
    )  # fmt: skip


def line_from_json(d: dict[str, Any]) -> Line:
    return Line(**d)

"""A device's own published figures for the very file a prediction is for: its band holds them.

The speed model pulls a device's share toward its class (the ridge penalty), by as much as
held-out errors say it should on average. A device whose few rows sit far from its class then
got a band that left out what was measured on it with that very file: a Tesla P100 with
gpt-oss 20B, 66 and 69 t/s from two sources, was predicted 90 t/s, band 72-116, beside
'published: 69 t/s'. The prediction stays the model's (held out, it misses such a row by less
than another source's figure for it does: 11% against 16%, `calibration_holdout.py
--agreement`); the band stretches to hold the published figure (the geometric mean of the
sources', current builds), as llama-bench measures it: tg128 from an empty cache, pp512.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from advisor.core.catalogue.device import Device
from advisor.core.model.facts import ModelFacts
from advisor.core.predict.model.bands import Band, union

if TYPE_CHECKING:
    from advisor.core.predict.model.speed_model import SpeedModel


def _gmean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def published_ratios(
    model: SpeedModel,
    device: Device,
    backend: str,
    facts: ModelFacts,
    *,
    cache_type: str = "f16",
    tg_ratio: float = 1.0,
    pp_ratio: float = 1.0,
) -> tuple[float | None, float | None]:
    """(published / predicted) for decode and prefill where the shipped data holds this
    device, backend, model and quantisation on a current build; None where it does not. Each
    row is predicted at its own test point (tg128 from an empty cache, tg256 at depth 512,
    pp2048 ...), and the ratios of several rows are averaged geometrically."""
    rows = [o for o in model.observations if o.device.id == device.id and o.backend == backend
            and o.shape_id == facts.shape_id and o.quant == facts.file_type
            and o.era != "old"]  # fmt: skip
    tg: list[float] = []
    pp: list[float] = []
    rate = model.prefill_rate(device, backend, facts) if rows else None
    for o in rows:
        if o.tg_tps:
            step = model.step(device, backend, facts, streams=1, compute_rate=rate,
                              depth=o.decode_test.decode_depth, cache_type=cache_type,
                              tg_ratio=tg_ratio)  # fmt: skip
            tg.append(o.tg_tps * step.seconds)
        predicted_pp = model.prefill_tps(device, backend, facts, o.prefill_test) if o.pp_tps else 0
        if o.pp_tps and predicted_pp:
            pp.append(o.pp_tps / (predicted_pp * pp_ratio))
    return _gmean(tg), _gmean(pp)


def holding(band: Band, ratio: float | None) -> Band:
    """The band (low, high multipliers) stretched to hold a published / predicted ratio."""
    if ratio is None or not math.isfinite(ratio) or ratio <= 0:
        return band
    return union(band, (ratio, ratio))

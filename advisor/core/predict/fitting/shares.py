"""Fitting the speed model's shares (model.speed_model) on published rows: each row's share of
its ceiling once the fixed costs are taken off, and the ridge fit of those shares.

The fixed costs themselves (decode's per-layer cost, a CPU's arithmetic share, prefill's
per-layer cost) are not fitted here: a device term would absorb whatever they leave out, so
they are chosen by held-out error (`fitting.speed_fit.search_*`) and shipped as constants.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from advisor.core.predict.fitting.ridge import DEFAULT_PENALTIES, Row, fit_ridge
from advisor.core.predict.model.efficiency import Key
from advisor.core.predict.model.observations import Observation
from advisor.core.predict.model.speed_model import (
    DecodeFit,
    LayerCost,
    PrefillFit,
    decode_covariates,
    fixed_per_prompt_token,
    layer_costs,
    matvec_s,
    prefill_covariates,
    usable_peak,
)

# the penalties the held-out search chose (efficiency.choose_penalties over rows of each kind)
DECODE_PENALTIES = {**DEFAULT_PENALTIES}
# prefill's terms vary more between devices and builds than decode's: looser penalties
PREFILL_PENALTIES = {
    **DEFAULT_PENALTIES, "class": 2.0, "device": 1.0, "quant": 2.0, "cov": 4.0, "year": 4.0,
}  # fmt: skip
# decode's fixed cost per layer per token, per backend (model.speed_model.LayerCost: seconds
# on a 30-TFLOPS device, its exponent in the device's speed, its factor for a mixture of
# experts' layers), chosen by held-out decode error (speed_fit.search_decode_layer,
# `calibration_holdout.py --search-decode`): the fit's own error cannot choose it, since a
# device term absorbs whatever it leaves out. The CPU backend launches no kernels: none there.
T_LAYER_S = {
    "cuda": LayerCost(80e-6, 0.5, 2.0),
    "metal": LayerCost(170e-6),
    "rocm": LayerCost(130e-6, 0.5, 1.0),
    "sycl": LayerCost(220e-6, 0.0, 3.0),
    "vulkan": LayerCost(60e-6, 0.25, 1.0),
}
# the grids the decode layer-cost search tries: seconds from none to several kernel launches
# worth, exponents from none (the host sets the cost) to most of the device's speed, MoE
# factors from none to three times a dense layer
T_LAYER_GRID_US = (0, 10, 20, 30, 40, 60, 80, 100, 130, 170, 220, 300)
SPEED_EXPONENT_GRID = (0.0, 0.25, 0.5, 0.75)  # the decode search's speed exponents
MOE_FACTOR_GRID = (1.0, 1.5, 2.0, 2.5, 3.0)  # the decode search's MoE-layer factors
# llama.cpp's CPU backend dequantises and multiplies on the cores that stream the weights, and
# that arithmetic does not hide under the stream as a GPU's does: a CPU's decode step adds
# its FLOPs at this share of the usable peak (the int8 estimate where no figure is published),
# chosen by held-out error over DECODE_FLOP_SHARE_GRID (speed_fit.search_decode_flop_share,
# `calibration_holdout.py --search-decode`; None: no such term)
DECODE_FLOP_SHARE: dict[str, float] = {"cpu": 0.25}
# the CPU arithmetic share's search (None: no such term)
DECODE_FLOP_SHARE_GRID = (None, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.7, 1.0)
# prefill's fixed cost per layer per micro-batch, per backend (LayerCost: seconds on a
# 30-TFLOPS device, scaled to the device's FP32 speed to an exponent as decode's is, and its
# factor for a mixture of experts' layers, which launch a router and a small matrix product
# per expert used), chosen by held-out prefill error (speed_fit.search_prefill_layer;
# `calibration_holdout.py --search-prefill`); its grid stops at 1 ms, several times what a
# layer's launches cost, so that it stays a fixed cost and does not stand in for a model-size
# effect. The CPU backend launches no kernels: none there.
PREFILL_LAYER_S = {
    "cuda": LayerCost(0.7e-3, 0.5, 4.0),
    "metal": LayerCost(0.5e-3, 0.25),
    "rocm": LayerCost(1.0e-3, 0.25, 3.0),
    "sycl": LayerCost(0.2e-3, 0.0, 8.0),
    "vulkan": LayerCost(1.0e-3, 0.75, 3.0),
}
PREFILL_MOE_FACTOR_GRID = (1.0, 2.0, 3.0, 4.0, 6.0, 8.0)  # the prefill search's MoE factors
PREFILL_LAYER_GRID_MS = (0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0)  # and its seconds, to 1 ms
# how much a row counts, by the confidence its transcription was given: read at the source,
# agreed by two copies, one copy only
CONFIDENCE_WEIGHT = {"high": 1.0, "medium": 0.7, "low": 0.4}
# rows gathered after the reference set (curated and cross-checked) count half as much
ADDED_WEIGHT = 0.5
# a row from a build before mid-2024 counts this much: it says how the device stood against
# others then, less what today's llama.cpp does with it (speed_fit.search_old_weight, by
# held-out error over OLD_ROW_WEIGHT_GRID)
OLD_ROW_WEIGHT = 0.25
OLD_ROW_WEIGHT_GRID = (1.0, 0.5, 0.25)  # the old-row weight's search


def row_weight(o: Observation, old_weight: float | None = None) -> float:
    """How much a row counts: by the confidence its transcription was given, the reference
    set (curated and cross-checked) above rows gathered later, a current build above an old
    one."""
    old = OLD_ROW_WEIGHT if old_weight is None else old_weight
    return (CONFIDENCE_WEIGHT.get(o.confidence, 0.7)
            * (1.0 if o.reference_set else ADDED_WEIGHT)
            * (old if o.era == "old" else 1.0))  # fmt: skip


def decode_row(o: Observation, t_layer: LayerCost, flop_share: dict[str, float],
               old_weight: float | None = None) -> Row | None:  # fmt: skip
    if not o.tg_tps:
        return None
    seconds = (1.0 / o.tg_tps - t_layer.all_layers_s(o.device, o.facts)
               - matvec_s(o.device, o.backend, o.facts, flop_share))  # fmt: skip
    share = o.decode_bytes / (o.device.bandwidth_bytes_per_s * max(seconds, 0.3 / o.tg_tps))
    weight = row_weight(o, old_weight)
    key = Key(o.device, o.backend, o.quant_kind, o.moe, o.era,
                decode_covariates(o.device, o.date, o.moe), o.source_url)  # fmt: skip
    return Row(key, math.log(share), o.source_url, weight)


def prefill_row(o: Observation, layer_s: LayerCost, old_weight: float | None = None) -> Row | None:
    peak = usable_peak(o.device, o.backend, o.facts.is_quantized)
    if not o.pp_tps or not peak:
        return None
    fixed = fixed_per_prompt_token(layer_s, o.device, o.facts, o.prefill_test.prompt_batch)
    seconds = 1.0 / o.pp_tps - fixed
    share = o.prefill_flops_per_token / (peak * max(seconds, 0.3 / o.pp_tps))
    covariates = prefill_covariates(o.device, o.backend, o.facts, o.date)
    key = Key(o.device, o.backend, o.quant_kind, o.moe, o.era, covariates, o.source_url)
    return Row(key, math.log(share), o.source_url, row_weight(o, old_weight))


def fit_decode(
    obs: Sequence[Observation],
    penalties: dict[str, float] = DECODE_PENALTIES,
    t_layer: dict[str, LayerCost] | None = None,
    flop_share: dict[str, float] | None = None,
    old_weight: float | None = None,
) -> DecodeFit:
    """The decode shares, with the per-layer cost and the CPU's arithmetic share given or the
    shipped ones."""
    t_layer = dict(T_LAYER_S) if t_layer is None else layer_costs(t_layer)
    flop_share = dict(DECODE_FLOP_SHARE) if flop_share is None else flop_share
    none = LayerCost()
    rows = [
        r for o in obs
        if (r := decode_row(o, t_layer.get(o.backend, none), flop_share, old_weight))
    ]  # fmt: skip
    ridge = fit_ridge([r.key for r in rows], [r.y for r in rows], penalties,
                        [r.weight for r in rows])  # fmt: skip
    return DecodeFit(t_layer, ridge, flop_share)


def fit_prefill(
    obs: Sequence[Observation],
    penalties: dict[str, float] = PREFILL_PENALTIES,
    layer_s: dict[str, LayerCost] | None = None,
    old_weight: float | None = None,
) -> PrefillFit:
    layer_s = dict(PREFILL_LAYER_S) if layer_s is None else layer_costs(layer_s)
    none = LayerCost()
    rows = [r for o in obs if (r := prefill_row(o, layer_s.get(o.backend, none), old_weight))]
    return PrefillFit(dict(layer_s), fit_ridge([r.key for r in rows], [r.y for r in rows],
                                                 penalties, [r.weight for r in rows]))  # fmt: skip

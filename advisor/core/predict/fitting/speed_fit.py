"""Fitting the speed model: the shares of the depth and batch data, the full fit, and the
shipped fit (`resources/data/speed_model_fit.json`) the app loads instead of refitting.

The held-out search (t_layer, bands, transfers) takes ~15 s, so it is run once
(`benchmarks/calibration_holdout.py --write`) and shipped with the fingerprint of the data it
was run on; the app reads the fitted shares and checks the fingerprint.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from advisor.core.predict.fitting.bands_fit import bands_from, moe_widening
from advisor.core.predict.fitting.holdout import HeldOut, held_out
from advisor.core.predict.fitting.shares import (
    DECODE_FLOP_SHARE_GRID,
    MOE_FACTOR_GRID,
    OLD_ROW_WEIGHT_GRID,
    PREFILL_LAYER_GRID_MS,
    PREFILL_MOE_FACTOR_GRID,
    SPEED_EXPONENT_GRID,
    T_LAYER_GRID_US,
    fit_decode,
    fit_prefill,
)
from advisor.core.predict.model.observations import (
    BatchedPoint,
    DepthPair,
    Observation,
    load_batched,
    load_depth_pairs,
)
from advisor.core.predict.model.speed_model import (
    SMALL_BATCH_MAX,
    LayerCost,
    SpeedModel,
)
from advisor.core.predict.physics.ceilings import extra_stream_weight_bytes, step_weight_bytes

log = logging.getLogger(__name__)

CROSS_BACKEND_CAP = 0.13  # a measurement on another backend moves a prediction at most r^0.13


def _median_by_backend(values: dict[str, list[float]], cap: float) -> dict[str, float]:
    out = {b: float(min(cap, math.exp(np.median(np.log(v))))) for b, v in values.items() if v}
    pooled = [x for v in values.values() for x in v]
    if pooled:
        out["*"] = float(min(cap, math.exp(np.median(np.log(pooled)))))
    return out


def fit_attention_share(model: SpeedModel, pairs: Iterable[DepthPair]) -> dict[str, float]:
    """From decode measured shallow and deep in one run: the time the deep step adds beyond
    reading the extra KV cache, set against attention's extra FLOPs at prefill's rate."""
    pairs = list(pairs)
    # a quantised cache adds its own dequantisation cost: where a backend has f16-cache
    # ladders, those alone say what attention costs
    plain = {p.backend for p in pairs if p.kv_cache == "f16"}
    values: dict[str, list[float]] = {}
    for p in pairs:
        if p.backend in plain and p.kv_cache != "f16":
            continue
        f, params = p.facts, model.decode_params(p.device, p.backend, p.facts)
        overhead = params.fixed_s
        shallow_bytes = f.step_weights_bytes + p.kv_bytes(p.n_gen // 2)
        bandwidth = shallow_bytes / (1.0 / p.tps_shallow - overhead)  # as measured
        extra_kv = p.kv_bytes(p.depth + p.n_gen // 2) - p.kv_bytes(p.n_gen // 2)
        left = (1.0 / p.tps_deep - 1.0 / p.tps_shallow) - extra_kv / bandwidth
        rate = model.prefill_rate(p.device, p.backend, f)
        extra_flops = f.flops_per_token(p.depth + p.n_gen // 2) - f.flops_per_token(p.n_gen // 2)
        if rate and extra_flops > 0:
            share = extra_flops / (rate * left) if left > 0 else 10.0
            values.setdefault(p.backend, []).append(share)
    return _median_by_backend(values, cap=10.0)


def _series(p: BatchedPoint) -> tuple[str, ...]:
    return (p.device.id, p.backend, p.facts.shape_id or "", p.facts.file_type,
            str(p.n_gen), str(p.prompt_tokens))  # fmt: skip


def fit_small_batch_cost(model: SpeedModel, points: Iterable[BatchedPoint]) -> dict[str, float]:
    """From batched series of dense models: the time each extra stream of a small batch (2-8)
    adds beyond the bytes it reads, as a share of the weights it multiplies again. A mixture
    of experts' series says little about it: its dense part, the only part multiplied again,
    is a few percent of its step (its extra streams' expert reads are counted in full)."""
    points = list(points)
    singles = {_series(p): p for p in points if p.streams == 1}
    # a series where more streams ever got fewer tokens/s than one was run on a kernel
    # regression (RTX 3090, Vulkan, the master of 2024-12-29 that PR 10991 fixed): it says
    # nothing of today's cost, at any batch
    broken = {
        _series(p) for p in points
        if _series(p) in singles and p.aggregate_tps < singles[_series(p)].aggregate_tps
    }  # fmt: skip
    values: dict[str, list[float]] = {}
    for p in points:
        one = singles.get(_series(p))
        if one is None or not 1 < p.streams <= SMALL_BATCH_MAX or p.facts.is_moe:
            continue
        if _series(p) in broken:
            continue
        f = p.facts
        depth = p.prompt_tokens + p.n_gen // 2
        overhead = model.decode_params(p.device, p.backend, f).fixed_s
        kv = f.kv_cache_bytes(depth)
        w1, wb = step_weight_bytes(f, 1), step_weight_bytes(f, p.streams)
        seconds_per_byte = (1.0 / one.aggregate_tps - overhead) / (w1 + kv)
        memory = (wb + p.streams * kv) * seconds_per_byte + overhead
        extra = p.streams / p.aggregate_tps - memory
        multiplied, _ = extra_stream_weight_bytes(f, p.streams)
        values.setdefault(p.backend, []).append(max(extra, 1e-6) / (multiplied * seconds_per_byte))
    return _median_by_backend(values, cap=2.0)


def transfer_weights(residuals: Iterable[HeldOut]) -> dict[str, float]:
    """How much of one device's error another device shares, when both were measured the way
    a user's run and their next device would be: by the same hands (one source: one build,
    one set of settings), with the same model file. The regression slope of device B's
    held-out decode error on device A's over such pairs, on the same backend ('same') or on
    different ones ('cross', capped at CROSS_BACKEND_CAP)."""
    groups: dict[tuple[str, str, str], list[HeldOut]] = {}
    for h in residuals:
        if h.kind == "decode" and h.basis == "modelled" and h.obs.era != "old":
            groups.setdefault((h.obs.source_url, h.obs.shape_id, h.obs.quant), []).append(h)
    sums = {"same": [0.0, 0.0], "cross": [0.0, 0.0]}
    for rows in groups.values():
        for a in rows:
            for b in rows:
                if a.obs.device.id == b.obs.device.id:
                    continue
                s = sums["same" if a.obs.backend == b.obs.backend else "cross"]
                s[0] += a.log_error * b.log_error
                s[1] += a.log_error**2
    weights = {k: float(np.clip(xy / xx, 0.0, 1.0)) if xx else 0.0 for k, (xy, xx) in sums.items()}
    weights["cross"] = min(weights["cross"], CROSS_BACKEND_CAP)
    return weights


def _held_out_error(rows: Iterable[HeldOut]) -> float:
    """Mean absolute log error of held-out rows from current builds (what the searches
    minimise)."""
    errors = [abs(h.log_error) for h in rows if h.obs.era != "old"]
    return float(np.mean(errors)) if errors else math.inf


LAYER_SEARCH_ROUNDS = 2  # passes over every backend's terms


def _search_layer_costs(
    obs: Sequence[Observation],
    kind: str,
    grids: Mapping[str, Sequence[float]],
) -> dict[str, LayerCost]:
    """A per-backend LayerCost by held-out error (not the CPU's, which launches no kernels):
    one backend at a time, the others at their values so far (none to start), its seconds
    over their grid, then its speed exponent and MoE factor over every pair of theirs (the
    two trade against each other: a faster card's MoE layer); LAYER_SEARCH_ROUNDS passes
    over every backend, so that each backend's final choice is scored with the others' (a
    backend's cost moves the shared class terms of the fit); each trial scored on that
    backend's held-out rows of `kind` from current builds."""
    chosen = {b: LayerCost() for b in sorted({o.backend for o in obs if o.backend != "cpu"})}

    def score(b: str, cost: LayerCost) -> float:
        costs = {**chosen, b: cost}
        if kind == "decode":
            rows = held_out(obs, t_layer=costs, kinds=("decode",), backend=b)
        else:
            rows = held_out(obs, prefill_layer_s=costs, kinds=("prefill",), backend=b)
        return _held_out_error(rows)

    steps = [
        [{"seconds": s} for s in grids["seconds"]],
        [{"speed_exponent": x, "moe_factor": m}
         for x, m in itertools.product(grids["speed_exponent"], grids["moe_factor"])],
    ]  # fmt: skip
    for _ in range(LAYER_SEARCH_ROUNDS):
        for b in chosen:
            for step in steps:
                trials = [replace(chosen[b], **values) for values in step]
                chosen[b] = min(trials, key=lambda c: (score(b, c), c.to_json()))
    return chosen


def search_decode_layer(obs: Sequence[Observation]) -> dict[str, LayerCost]:
    """Decode's per-layer cost per backend by held-out error: seconds per layer per token
    over T_LAYER_GRID_US, the speed exponent, the MoE factor."""
    return _search_layer_costs(obs, "decode", {
        "seconds": [us * 1e-6 for us in T_LAYER_GRID_US],
        "speed_exponent": SPEED_EXPONENT_GRID,
        "moe_factor": MOE_FACTOR_GRID,
    })  # fmt: skip


def search_prefill_layer(obs: Sequence[Observation]) -> dict[str, LayerCost]:
    """Prefill's per-layer cost per backend by held-out error: seconds per layer per
    micro-batch over PREFILL_LAYER_GRID_MS (it stops at 1 ms, several times what a layer's
    launches cost, so that it stays a fixed cost and does not stand in for a model-size
    effect), the speed exponent (as decode's: a faster GPU runs a layer's small kernels
    sooner), and the MoE factor (a mixture of experts' layer launches its router and one
    small matrix product per expert used)."""
    return _search_layer_costs(obs, "prefill", {
        "seconds": [ms * 1e-3 for ms in PREFILL_LAYER_GRID_MS],
        "speed_exponent": SPEED_EXPONENT_GRID,
        "moe_factor": PREFILL_MOE_FACTOR_GRID,
    })  # fmt: skip


def search_old_weight(obs: Sequence[Observation]) -> float:
    """How much a row from an old build counts, by held-out error (decode and prefill rows of
    current builds), over OLD_ROW_WEIGHT_GRID."""
    scores = {w: _held_out_error(held_out(obs, old_weight=w)) for w in OLD_ROW_WEIGHT_GRID}
    return min(scores, key=lambda w: (scores[w], -w))


def search_decode_flop_share(obs: Sequence[Observation]) -> dict[str, float]:
    """The CPU's decode arithmetic share by held-out error (its decode rows), over
    DECODE_FLOP_SHARE_GRID (None: no such term)."""
    scores = {
        share: _held_out_error(held_out(obs, kinds=("decode",), backend="cpu",
                                        flop_share={} if share is None else {"cpu": share}))
        for share in DECODE_FLOP_SHARE_GRID
    }  # fmt: skip
    best = min(scores, key=lambda share: scores[share])
    return {} if best is None else {"cpu": best}


def fit_speed_model(obs: Sequence[Observation], with_bands: bool = True) -> SpeedModel:
    """The speed model on these rows: shares, fixed costs, depth and batch terms, and (with
    bands) the bands and transfer weights from every row held out."""
    return fit_with_residuals(obs, with_bands)[0]


def fit_with_residuals(
    obs: Sequence[Observation], with_bands: bool = True
) -> tuple[SpeedModel, list[HeldOut]]:
    """`fit_speed_model`, and the held-out rows its bands rest on (none without bands)."""
    decode = fit_decode(obs)
    prefill = fit_prefill(obs)
    base = SpeedModel(decode, prefill, tuple(obs))
    attention = fit_attention_share(base, load_depth_pairs())
    small_batch = fit_small_batch_cost(base, load_batched())
    if not with_bands:
        return SpeedModel(decode, prefill, tuple(obs), {}, {}, attention, small_batch), []
    residuals = held_out(obs, decode.t_layer, prefill.layer_s)
    bands = bands_from(residuals)
    model = SpeedModel(
        decode, prefill, tuple(obs), bands, transfer_weights(residuals), attention,
        small_batch, moe_widening(residuals, bands, "decode"),
        moe_widening(residuals, bands, "prefill"),
    )  # fmt: skip
    return model, residuals

"""Fitting the speed model: the shares of the depth and batch data, the full fit, and the
shipped fit (`resources/data/speed_model_fit.json`) the app loads instead of refitting.

The held-out search (t_layer, bands, transfers) takes ~15 s, so it is run once
(`benchmarks/calibration_holdout.py --write`) and shipped with the fingerprint of the data it
was run on; the app reads the fitted shares and checks the fingerprint.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from advisor.core.infra.paths import bundled
from advisor.core.predict import efficiency as E
from advisor.core.predict.bands import bands_from, moe_widening
from advisor.core.predict.holdout import HeldOut, held_out
from advisor.core.predict.observations import (
    BatchedPoint,
    DepthPair,
    Observation,
    load_batched,
    load_depth_pairs,
    load_observations,
)
from advisor.core.predict.speed_model import (
    CROSS_BACKEND_CAP,
    DECODE_FLOP_SHARE_GRID,
    PREFILL_LAYER_GRID_MS,
    SMALL_BATCH_MAX,
    T_LAYER_GRID_US,
    DecodeFit,
    PrefillFit,
    SpeedModel,
    extra_stream_bytes,
    fit_decode,
    fit_prefill,
    step_weights,
)

log = logging.getLogger(__name__)


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
        overhead = params.fixed_s(f)
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
        overhead = model.decode_params(p.device, p.backend, f).fixed_s(f)
        kv = f.kv_cache_bytes(depth)
        w1, wb = step_weights(f, 1), step_weights(f, p.streams)
        seconds_per_byte = (1.0 / one.aggregate_tps - overhead) / (w1 + kv)
        memory = (wb + p.streams * kv) * seconds_per_byte + overhead
        extra = p.streams / p.aggregate_tps - memory
        multiplied, _ = extra_stream_bytes(f, p.streams)
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


def _per_backend_search(
    obs: Sequence[Observation],
    grid: Sequence[float],
    unit: float,
    held: Callable[[dict[str, float], str], list[HeldOut]],
) -> dict[str, float]:
    """A per-backend constant (not the CPU's, which launches no kernels), one backend at a
    time (the others at their values so far, 0 to start): the grid value whose held-out rows
    of that backend, `held(trial, backend)`, miss least."""
    chosen = {b: 0.0 for b in sorted({o.backend for o in obs if o.backend != "cpu"})}
    for b in chosen:
        scores = {v: _held_out_error(held({**chosen, b: v * unit}, b)) for v in grid}
        chosen[b] = min(scores, key=lambda v: scores[v]) * unit
    return chosen


def search_decode_layer(obs: Sequence[Observation]) -> dict[str, float]:
    """Decode's per-layer cost per backend by held-out error, over T_LAYER_GRID_US."""
    return _per_backend_search(obs, T_LAYER_GRID_US, 1e-6, lambda trial, b: held_out(
        obs, t_layer=trial, kinds=("decode",), backend=b))  # fmt: skip


def search_prefill_layer(obs: Sequence[Observation]) -> dict[str, float]:
    """Prefill's per-layer cost per backend by held-out error, over PREFILL_LAYER_GRID_MS."""
    return _per_backend_search(obs, PREFILL_LAYER_GRID_MS, 1e-3, lambda trial, b: held_out(
        obs, prefill_layer_s=trial, kinds=("prefill",), backend=b))  # fmt: skip


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
    decode = fit_decode(obs)
    prefill = fit_prefill(obs)
    base = SpeedModel(decode, prefill, tuple(obs))
    attention = fit_attention_share(base, load_depth_pairs())
    small_batch = fit_small_batch_cost(base, load_batched())
    if not with_bands:
        return SpeedModel(decode, prefill, tuple(obs), {}, {}, attention, small_batch)
    residuals = held_out(obs, decode.t_layer)
    bands = bands_from(residuals)
    return SpeedModel(
        decode, prefill, tuple(obs), bands, transfer_weights(residuals), attention,
        small_batch, moe_widening(residuals, bands, "decode"),
        moe_widening(residuals, bands, "prefill"),
    )  # fmt: skip


# -------------------------------------------------------------------------------------------
# the shipped fit: the held-out search (t_layer, bands, transfers) takes ~15 s, so it is run
# once (benchmarks/calibration_holdout.py --write) and shipped with the fingerprint of the data
# it was run on; the app refits only the shares (milliseconds) and checks the fingerprint
# -------------------------------------------------------------------------------------------


def fit_file() -> Path:
    return bundled("resources") / "data" / "speed_model_fit.json"


def data_fingerprint() -> str:
    """SHA-256 of everything the fit reads: the published rows, the device mapping, the
    catalogue and the backend-path table."""
    data = bundled("resources") / "data"
    files = [*sorted(data.glob("llamacpp_*.csv")), data / "calibration_device_ids.json"]
    db = bundled("device_db")
    files += [*sorted((db / "devices").glob("*.json")), db / "backend_paths.json"]
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.name.encode())
        digest.update(f.read_bytes().replace(b"\r\n", b"\n"))
    return digest.hexdigest()


def fit_to_json(model: SpeedModel) -> dict[str, Any]:
    return {
        "description": "Held-out results of the speed model (benchmarks/calibration_holdout.py "
        "--write). Refit when the data changes: the app checks the fingerprint.",
        "data_fingerprint": data_fingerprint(),
        "t_layer_s": model.decode_fit.t_layer,
        "decode_flop_share": model.decode_fit.flop_share,
        "bands": [[*k, lo, hi] for k, (lo, hi) in sorted(model.bands.items())],
        "transfer": model.transfer,
        "attention_share": model.attention_share,
        "small_batch_cost": model.small_batch_cost,
        "moe_widening": model.moe_widening,
        "moe_widening_prefill": model.moe_widening_prefill,
        # the fitted shares themselves: the app reads them instead of refitting
        "decode_coef": model.decode_fit.ridge.coef,
        "prefill_layer_s": model.prefill_fit.layer_s,
        "prefill_coef": model.prefill_fit.ridge.coef,
    }


def model_from_fit(obs: Sequence[Observation], saved: dict[str, Any]) -> SpeedModel:
    decode = DecodeFit(
        {k: float(v) for k, v in saved["t_layer_s"].items()},
        E.RidgeFit({k: float(v) for k, v in saved["decode_coef"].items()}),
        {k: float(v) for k, v in saved["decode_flop_share"].items()},
    )
    return SpeedModel(
        decode,
        PrefillFit(
            {k: float(v) for k, v in saved["prefill_layer_s"].items()},
            E.RidgeFit({k: float(v) for k, v in saved["prefill_coef"].items()}),
        ),
        tuple(obs),
        {(k, b, basis): (lo, hi) for k, b, basis, lo, hi in saved["bands"]},
        dict(saved["transfer"]),
        dict(saved["attention_share"]),
        dict(saved["small_batch_cost"]),
        float(saved["moe_widening"]),
        float(saved["moe_widening_prefill"]),
    )


@cache
def default_model() -> SpeedModel:
    """The speed model on the shipped data (cached for the process): the shipped held-out
    results where they match the data, else a full fit (slow; logged)."""
    obs, _skipped = load_observations()
    try:
        saved = json.loads(fit_file().read_text(encoding="utf-8"))
        if saved.get("data_fingerprint") == data_fingerprint():
            return model_from_fit(obs, saved)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    log.warning("speed model: shipped fit missing or stale, refitting (about 15 s)")
    return fit_speed_model(obs)

"""The shipped fit (`resources/data/speed_model_fit.json`): the held-out searches and bands
take tens of seconds, so `benchmarks/calibration_holdout.py --write` runs them once and ships
the result with the fingerprint of the data it was fitted on. The app reads the fitted values
instead of refitting, and refits (logged, slow) only where the fingerprint does not match.

`load_speed_model` is the one place a front end gets the model from; everything below it takes
the model as an argument.
"""

from __future__ import annotations

import csv
import hashlib
import json
import logging
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from advisor.core.catalogue.device import Device
from advisor.core.infra.paths import bundled
from advisor.core.predict.fitting.speed_fit import fit_speed_model
from advisor.core.predict.model import efficiency as E
from advisor.core.predict.model.observations import (
    BatchedPoint,
    DepthPair,
    Observation,
    Skipped,
    data_files,
    load_batched,
    load_depth_pairs,
    load_observations,
)
from advisor.core.predict.model.speed_model import DecodeFit, LayerCost, PrefillFit, SpeedModel
from advisor.core.predict.physics.ceilings import usable_peak

log = logging.getLogger(__name__)


def fit_file() -> Path:
    return bundled("resources") / "data" / "speed_model_fit.json"


# The device fields the fit reads (model.efficiency's classes, the bandwidth, the per-layer
# cost's speed); `usable_peak` (the backend-path table applied to the record's peaks) is
# fingerprinted by its value. tests/core/test_fit_fingerprint.py fails when model/ or fitting/
# read a field not listed here. Everything else in a record (names, aliases, prices, power,
# notes, sources) never reaches the fit, so editing it needs no refit.
FIT_DEVICE_FIELDS = (
    "id", "vendor", "device_class", "arch", "memory_type", "memory_bandwidth_gbs",
    "memory_channels", "backends", "fp32_tflops",
)  # fmt: skip


def _device_inputs(device: Device, backend: str, quantized: bool) -> list[Any]:
    fields = [getattr(device, f) for f in FIT_DEVICE_FIELDS]
    return [*fields, usable_peak(device, backend, quantized)]


def fit_inputs(
    obs: Sequence[Observation],
    pairs: Sequence[DepthPair] | None = None,
    points: Sequence[BatchedPoint] | None = None,
) -> list[Any]:
    """Everything the fit reads, as plain values: each published row (its device's fit fields,
    its model's facts, its figures and conditions), and the depth and batched series."""
    pairs = load_depth_pairs() if pairs is None else pairs
    points = load_batched() if points is None else points
    facts_json: dict[int, Any] = {}  # rows share a few hundred facts objects: each once

    def facts(f: Any) -> Any:
        return facts_json.setdefault(id(f), f.to_json())

    out: list[Any] = []
    for o in obs:
        row = {k: v for k, v in o.__dict__.items() if k not in ("device", "facts")}
        out.append(["obs", _device_inputs(o.device, o.backend, o.facts.is_quantized),
                    facts(o.facts), row])  # fmt: skip
    for p in pairs:
        out.append(["depth", _device_inputs(p.device, p.backend, p.facts.is_quantized),
                    facts(p.facts), p.depth, p.n_gen, p.tps_deep, p.tps_shallow, p.kv_cache,
                    p.source_url])  # fmt: skip
    for b in points:
        out.append(["batched", _device_inputs(b.device, b.backend, b.facts.is_quantized),
                    facts(b.facts), b.streams, b.n_gen, b.prompt_tokens, b.aggregate_tps,
                    b.source_url])  # fmt: skip
    return out


def data_fingerprint(obs: Sequence[Observation] | None = None) -> str:
    """SHA-256 of what the fit reads (`fit_inputs`), not of the files it is read from: a
    price, a name or a note edited in the catalogue or the data leaves it unchanged."""
    if obs is None:
        obs, _skipped = load_observations()
    text = json.dumps(fit_inputs(obs), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def data_summary(obs: Sequence[Observation], skipped: Sequence[Skipped]) -> dict[str, Any]:
    """What the fit rests on, for the model card: rows, devices and sources used, the rows
    skipped by reason, and the figures set aside by hand (the data's `exclude` column)."""
    reasons: dict[str, int] = {}
    for s in skipped:
        reason = re.sub(r"'[^']*'", "...", s.reason)
        reasons[reason] = reasons.get(reason, 0) + 1
    excluded: dict[str, int] = {}
    for path, _reference in data_files():
        with open(path, encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                if (row.get("exclude") or "").strip():
                    why = f"{row['exclude']}: {row.get('exclude_reason', '')}"
                    excluded[why] = excluded.get(why, 0) + 1
    return {
        "rows": len(obs),
        "devices": len({o.device.id for o in obs}),
        "sources": len({o.source_url for o in obs}),
        "skipped": dict(sorted(reasons.items())),
        "excluded": dict(sorted(excluded.items())),
    }


def fit_to_json(model: SpeedModel) -> dict[str, Any]:
    return {
        "description": "Held-out results of the speed model (benchmarks/calibration_holdout.py "
        "--write). Refit when the data changes: the app checks the fingerprint.",
        "data_fingerprint": data_fingerprint(model.observations),
        "t_layer_s": {b: c.to_json() for b, c in model.decode_fit.t_layer.items()},
        "decode_flop_share": model.decode_fit.flop_share,
        "bands": [[*k, lo, hi] for k, (lo, hi) in sorted(model.bands.items())],
        "transfer": model.transfer,
        "attention_share": model.attention_share,
        "small_batch_cost": model.small_batch_cost,
        "moe_widening": model.moe_widening,
        "moe_widening_prefill": model.moe_widening_prefill,
        # the fitted shares themselves: the app reads them instead of refitting
        "decode_coef": model.decode_fit.ridge.coef,
        "prefill_layer_s": {b: c.to_json() for b, c in model.prefill_fit.layer_s.items()},
        "prefill_coef": model.prefill_fit.ridge.coef,
    }


def model_from_fit(obs: Sequence[Observation], saved: dict[str, Any]) -> SpeedModel:
    decode = DecodeFit(
        {k: LayerCost.from_json(v) for k, v in saved["t_layer_s"].items()},
        E.RidgeFit({k: float(v) for k, v in saved["decode_coef"].items()}),
        {k: float(v) for k, v in saved["decode_flop_share"].items()},
    )
    return SpeedModel(
        decode,
        PrefillFit(
            {k: LayerCost.from_json(v) for k, v in saved["prefill_layer_s"].items()},
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
def load_speed_model() -> SpeedModel:
    """The speed model on the shipped data (cached for the process): the shipped held-out
    results where they match the data, else a full fit (slow; logged)."""
    obs, _skipped = load_observations()
    try:
        saved = json.loads(fit_file().read_text(encoding="utf-8"))
        if saved.get("data_fingerprint") == data_fingerprint(obs):
            return model_from_fit(obs, saved)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    log.warning("speed model: shipped fit missing or stale, refitting (about 15 s)")
    return fit_speed_model(obs)

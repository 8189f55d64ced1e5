"""The ranges a saved run's values must fall in, checked whenever one is read back.

A run file is the user's (a hand edit, a file from another machine, a sync tool's damage), and
`serde.from_json` checks only types: a model with 2**62 layers or a cache type 'zz' passed it
and then failed deep inside a projection as a bug. Every number of a run is checked here to be
finite and of a size no real run has, the model's geometry against the limits a real GGUF
header is held to (`gguf_facts.LIMITS`), and the names the arithmetic looks up against the
names it knows. The first value out of range is a DataError naming it.
"""

from __future__ import annotations

import math
from dataclasses import fields, is_dataclass
from typing import Any

from advisor.core.infra.serde import DataError, shown_json
from advisor.core.model.facts import KV_CACHE_BYTES_PER_ELEMENT, ModelFacts
from advisor.core.model.gguf_facts import LIMITS

MAX_MAGNITUDE = 1e18  # bytes, FLOP/s, tokens or seconds: no real run's figure comes near
MAX_ITEMS = 100_000  # tests, notes, per-layer lists, tensor types
MAX_TEXT_CHARS = 100_000

# each geometry field of the model and the header key whose limits it shares
_GEOMETRY = {
    "n_layers": "block_count",
    "n_embd": "embedding_length",
    "n_heads": "attention.head_count",
    "n_kv_heads": "attention.head_count_kv",
    "head_dim": "attention.key_length",
    "value_head_dim": "attention.value_length",
    "n_ff": "feed_forward_length",
    "n_expert": "expert_count",
    "n_expert_used": "expert_used_count",
    "context_length": "context_length",
    "vocab_size": "vocab_size",
    "sliding_window": "attention.sliding_window",
}


def check_run(run: Any) -> None:
    """Raise DataError naming the first value of `run` (a RunResult) no real run has."""
    _check_values(run, "the run")
    _check_model(run.model)
    for part in (run.hardware, run.config):  # what a ceiling divides by, or takes the log of
        for f in fields(part):
            value = getattr(part, f.name)
            if f.name.endswith("_per_s") and value is not None and not value > 0:
                raise DataError(f"the run's {f.name} is {shown_json(value)}, not a speed")
    for key in ("cache_type_k", "cache_type_v"):
        value = getattr(run.config, key)
        if value not in KV_CACHE_BYTES_PER_ELEMENT:
            raise DataError(f"the run.config.{key} is {shown_json(value)}, not a cache type")


def _check_values(value: Any, where: str) -> None:
    """Every number finite and within MAX_MAGNITUDE, every text and list of a sane length."""
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int | float):
        if not math.isfinite(value) or not 0 <= value <= MAX_MAGNITUDE:
            raise DataError(f"{where} is {shown_json(value)}, outside what a run can hold")
        return
    if isinstance(value, str):
        if len(value) > MAX_TEXT_CHARS:
            raise DataError(f"{where} is a text of {len(value):,} characters")
        return
    if is_dataclass(value):
        for f in fields(value):
            _check_values(getattr(value, f.name), f"{where}.{f.name}")
        return
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list | tuple):
        items = [(str(i), v) for i, v in enumerate(value)]
    else:
        return
    if len(items) > MAX_ITEMS:
        raise DataError(f"{where} holds {len(items):,} items")
    for key, item in items:
        _check_values(item, f"{where}.{key}")


def _check_model(model: ModelFacts) -> None:
    for name, key in _GEOMETRY.items():
        value = getattr(model, name)
        low, high = LIMITS[key]
        if value is not None and not low <= value <= high:
            raise DataError(
                f"the run.model.{name} is {shown_json(value)}; real models have {low:,} to {high:,}"
            )
    if model.n_layers < 1 or model.n_heads < 1:
        raise DataError("the run.model has no layers or no attention heads")
    for name in ("n_params", "weights_bytes", "active_params", "active_weights_bytes"):
        if getattr(model, name) < 1:
            raise DataError(f"the run.model.{name} is {getattr(model, name)}, not a model's size")
    low, high = LIMITS["attention.head_count_kv"]
    for name in ("kv_heads_per_layer", "swa_layers", "blocks"):
        if len(getattr(model, name)) > LIMITS["block_count"][1]:
            raise DataError(f"the run.model.{name} lists more layers than a model has")
    if any(not low <= kv <= high for kv in model.kv_heads_per_layer):
        raise DataError("the run.model.kv_heads_per_layer holds a head count no model has")

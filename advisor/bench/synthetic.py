"""Synthetic models in the app's cache: a random-weight GGUF of a built-in shape, written once
and reused by every later benchmark of that shape."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from advisor.bench.llama_model import Cancelled
from advisor.bench.synth import remove_stale_partials, synthetic_file_name, write_synthetic_gguf
from advisor.core.infra.paths import AppPaths
from advisor.core.model.gguf_facts import facts_from_gguf
from advisor.core.model.gguf_file import InvalidModelError
from advisor.core.model.shapes import get_shape
from advisor.core.runs.config import parse_synthetic
from advisor.core.runs.events import Progress

SideChannel = Callable[[Progress], None]


def synthetic_model_path(paths: AppPaths, spec: str, layers: int | None) -> Path:
    """Where the cached synthetic model for 'SHAPE[:QUANT]' (and a layer count) lives."""
    shape_id, quant_label = parse_synthetic(spec)
    shape = get_shape(shape_id)  # validates the name
    return paths.synthetic_models / synthetic_file_name(shape.id, quant_label, layers)


def ensure_synthetic_model(
    paths: AppPaths,
    spec: str,
    layers: int | None,
    cancel: threading.Event,
    side_channel: SideChannel | None = None,
) -> Path:
    """The cached synthetic model for `spec`, written first if it is not there yet."""
    path = synthetic_model_path(paths, spec, layers)
    if path.exists():
        try:
            facts_from_gguf(path)
            return path
        except InvalidModelError:
            path.unlink(missing_ok=True)  # a damaged cache entry: write it again
    shape_id, quant_label = parse_synthetic(spec)
    paths.synthetic_models.mkdir(parents=True, exist_ok=True)
    remove_stale_partials(paths.synthetic_models)
    last = [0.0]

    def progress(done: int, total: int) -> None:
        if cancel.is_set():
            raise Cancelled()
        now = time.monotonic()
        if side_channel and (now - last[0] > 0.25 or done == total):
            last[0] = now
            side_channel(
                Progress(
                    "writing synthetic model",
                    done,
                    total,
                    message=f"Writing a random-weight {shape_id} ({quant_label}) "
                    f"to the cache: {done / 1e6:,.0f} of {total / 1e6:,.0f} MB",
                )
            )

    write_synthetic_gguf(path, shape_id, quant_label, n_layers=layers, progress=progress)
    return path

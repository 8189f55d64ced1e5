"""The model the user chose: a GGUF file (its header), or a built-in shape at a quantisation."""

from __future__ import annotations

from pathlib import Path

from advisor.core.infra.errors import InputError
from advisor.core.infra.validate import whole_number
from advisor.core.model.facts import ModelFacts, facts_from_shape
from advisor.core.model.gguf_facts import facts_from_gguf
from advisor.core.model.quant import file_type
from advisor.core.model.shapes import get_shape
from advisor.core.runs.config import parse_synthetic

DEFAULT_SHAPE_QUANT = "q4_k_m"
MAX_SYNTHETIC_LAYERS = 512  # more than any published model (Llama 3.1 405B has 126)


def facts_for_shape(
    shape_id: str, quant: str | None = None, layers: int | None = None
) -> ModelFacts:
    """Facts of a built-in shape at a quantisation (Q4_K_M unless given), optionally with
    fewer (or more) layers, checked first."""
    shape = get_shape(shape_id)
    if layers is not None:
        shape = shape.with_layers(whole_number("--layers", layers, 1, MAX_SYNTHETIC_LAYERS))
    return facts_from_shape(shape, file_type(quant or DEFAULT_SHAPE_QUANT).label)


def facts_for_choice(
    model_path: str | None = None, shape: str | None = None, quant: str | None = None
) -> ModelFacts:
    """The facts of the model the user chose: a file's header, or a shape."""
    if model_path and shape:
        raise InputError("Give either a model file or a built-in shape, not both.")
    if model_path:
        return facts_from_gguf(model_path)
    if shape:
        return facts_for_shape(shape, quant)
    raise InputError("Give a model: --model FILE.gguf, or --shape NAME --quant TYPE.")


def facts_for_synthetic(spec: str, layers: int | None = None) -> ModelFacts:
    """Facts of a synthetic model 'SHAPE[:QUANT]' (Q4_0 unless given), as it would be written."""
    shape_id, quant = parse_synthetic(spec)
    return facts_for_shape(shape_id, quant, layers)


def resolved_model_path(path: str) -> str:
    """A model file's absolute path, after its header has been checked."""
    facts_from_gguf(path)  # refuses a bad file here, before any child starts
    return str(Path(path).expanduser().resolve())

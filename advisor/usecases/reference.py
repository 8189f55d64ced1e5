"""The user's measurement, whichever way it comes: a saved run (from History, `bench --json`
or an export), or a device and speeds typed on the command line."""

from __future__ import annotations

from pathlib import Path

from advisor.core.catalogue.catalogue import Catalogue
from advisor.core.infra.errors import InputError
from advisor.core.infra.safe_json import read_json_file
from advisor.core.infra.serde import DataError
from advisor.core.infra.validate import number
from advisor.core.model.facts import ModelFacts
from advisor.core.predict.physics import ceilings
from advisor.core.predict.projecting.projection import unsupported_sentence
from advisor.core.predict.projecting.reference import Reference, device_for_run, reference_from_run
from advisor.core.runs.results import RunResult

MAX_RUN_FILE_BYTES = 32 * 1024 * 1024  # a run is a few kB; an export of hundreds, a few MB
MAX_TPS = 1e7  # no device decodes or reads prompts faster than this
MIN_TPS = 0.01  # one token in 100 s: slower is a typo, not a measurement
CEILING_SLACK = 1.10  # a measured decode up to 10% above the spec ceiling is accepted


def read_run_file(path: str) -> RunResult:
    """A saved run from a file: a regular file under the size cap, read by the one JSON
    reader (a byte-order mark accepted; nesting and huge numbers refused), every field
    checked."""
    p = Path(path).expanduser()
    shown = p.name[:80] or str(p)[:80]
    data = read_json_file(
        p,
        what=f"The run file {shown}",
        max_bytes=MAX_RUN_FILE_BYTES,
        advice="give a run saved by 'advisor bench --json' or exported from History",
    )
    if isinstance(data, list):  # an export of several runs: the first
        if not data:
            raise InputError(f"{shown} holds no runs.")
        data = data[0]
    try:
        return RunResult.from_json(data)
    except DataError as exc:
        raise InputError(f"{shown} is not a valid run: {exc}.") from None


def reference_for_run(run: RunResult, catalogue: Catalogue) -> Reference:
    """The reference a saved run gives, on the device it was measured on (one sentence
    when it gives none)."""
    found = device_for_run(run, catalogue)
    if found is None:
        raise InputError(
            "The run was measured on a device the catalogue does not know, and it does not "
            "say its bandwidth; use --from-device NAME --from-tg TPS instead."
        )
    reference = reference_from_run(run, *found)
    if reference is None:
        raise InputError(
            "The run ran part of the model on the CPU by choice (fewer GPU layers than the "
            "model has), so it says nothing about the GPU; measure with all layers on the GPU."
        )
    if not reference.tg_tps and not reference.pp_tps:
        raise InputError("The run holds no decode or prefill speed to project from.")
    return reference


def reference_from_speeds(
    catalogue: Catalogue,
    device_name: str,
    tg_tps: object,
    pp_tps: object = None,
    backend: str | None = None,
) -> Reference:
    """A reference typed by the user: a device, its measured decode (and prefill) tokens/s."""
    device = catalogue.resolve(device_name)
    if tg_tps is None:
        raise InputError("--from-device needs --from-tg (your measured decode tokens/s).")
    tg = number("--from-tg", tg_tps, MIN_TPS, MAX_TPS, unit="tokens/s", low_inclusive=True)
    pp = (
        None
        if pp_tps is None
        else number("--from-pp", pp_tps, MIN_TPS, MAX_TPS, unit="tokens/s", low_inclusive=True)
    )
    chosen = (backend or device.usual_backend).lower()
    if chosen not in device.backends:
        raise InputError(
            unsupported_sentence(device, chosen) + " Give --from-backend one of those."
        )
    return Reference(device, chosen, tg, pp)


def check_measured(reference: Reference, facts: ModelFacts) -> None:
    """Refuse a measured decode speed the device's memory cannot deliver: more than 10% above
    its bandwidth ceiling for this model (a typo, or a different model or device)."""
    if not reference.tg_tps:
        return
    measured_with = reference.facts or facts
    ceiling = ceilings.decode_ceiling_tps(
        reference.device.bandwidth_bytes_per_s,
        measured_with.active_weights_bytes,
        measured_with.kv_cache_bytes(reference.tg_depth + reference.n_gen // 2),
    )
    if reference.tg_tps > CEILING_SLACK * ceiling:
        raise InputError(
            f"{reference.tg_tps:,.4g} tokens/s is more than {reference.device.name}'s memory "
            f"bandwidth allows for {measured_with.name} ({ceiling:,.1f} tokens/s at "
            f"{reference.device.memory_bandwidth_gbs:,.0f} GB/s); check the figure, the model "
            "and the device."
        )

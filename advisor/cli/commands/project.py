"""`advisor project`: predict the model's speed on catalogued devices, optionally calibrated
with the user's own measurement."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from advisor.cli.output import Output, format_table
from advisor.core.catalogue.catalogue import Catalogue, load_catalogue
from advisor.core.catalogue.prices import Price
from advisor.core.hardware.profile import Host
from advisor.core.infra.errors import InputError
from advisor.core.infra.paths import app_paths
from advisor.core.infra.units import fmt_band, fmt_seconds, fmt_tps
from advisor.core.infra.validate import number, whole_number
from advisor.core.model.facts import ModelFacts
from advisor.core.predict.advising.verdict import Verdict
from advisor.core.predict.conditions.test_point import DEFAULT_UBATCH
from advisor.core.predict.conditions.workloads import Workload, custom_workload, get_workload
from advisor.core.predict.fitting.shipped import load_speed_model
from advisor.core.predict.physics.memory import memory_sentence, offers_memory
from advisor.core.predict.physics.placement import ALL_LAYERS, Placement, host_link_bytes_per_s
from advisor.core.predict.projecting.projection import Projection, Target, unsupported_sentence
from advisor.core.predict.projecting.projection_types import ProjectionError
from advisor.core.predict.projecting.reference import Reference
from advisor.core.runs.results import RunResult
from advisor.usecases.compare import focus_of, projection_table, verdicts_from_reference
from advisor.usecases.machine import cached_report, host_for
from advisor.usecases.models import facts_for_choice
from advisor.usecases.prices import price_json, price_text, saved_prices
from advisor.usecases.reference import (
    check_measured,
    read_run_file,
    reference_for_run,
    reference_from_speeds,
)
from advisor.usecases.workloads import resolve_workload

MAX_CARDS = 16
MAX_CONTEXT = 10_000_000
MAX_USERS = 4096
MAX_LAYERS = 1000  # more layers than any model has


def parse_target(text: str, catalogue: Catalogue) -> Target:
    """'RTX 4090' or '2x RTX 3090': a device and a card count."""
    m = re.match(r"^\s*(\d+)\s*[x×]\s*(.+)$", text)
    count, name = (int(m.group(1)), m.group(2)) if m else (1, text)
    if count < 1 or count > MAX_CARDS:
        raise InputError(f"'{text}': use 1 to {MAX_CARDS} cards (e.g. '2x RTX 3090').")
    return Target(catalogue.resolve(name), count=count)  # project() refuses 2x of a chip


def _once(targets: list[Target]) -> list[Target]:
    """The targets in the order given, each once ('RTX 4090' and 'rtx 4090' are one card)."""
    seen: set[tuple[str, int]] = set()
    out = []
    for t in targets:
        if (t.device.id, t.count) not in seen:
            seen.add((t.device.id, t.count))
            out.append(t)
    return out


def workload_from(args: argparse.Namespace) -> Workload:
    """The workload the options describe: a preset, or custom numbers, each checked."""
    prompt = None if args.prompt is None else whole_number("--prompt", args.prompt, 0, MAX_CONTEXT)
    answer = None if args.answer is None else whole_number("--answer", args.answer, 1, MAX_CONTEXT)
    if args.workload and args.workload != "custom":
        w = resolve_workload(args.workload, app_paths())
    elif args.workload == "custom" or prompt is not None or answer is not None:
        w = custom_workload(512 if prompt is None else prompt, 128 if answer is None else answer)
    elif args.depth is not None:
        w = custom_workload(512, 128)  # llama-bench's pp512 / tg128, at the given depth
    else:
        w = get_workload("chat")
    if args.depth is not None:
        w = replace(w, history_tokens=whole_number("--depth", args.depth, 0, MAX_CONTEXT))
    if args.concurrency is not None:
        w = replace(w, concurrency=whole_number("--concurrency", args.concurrency, 1, MAX_USERS))
    return w


def _reference(
    args: argparse.Namespace, catalogue: Catalogue, run: RunResult | None
) -> Reference | None:
    if args.result and args.from_device:
        raise InputError("Give either --result RUN.json or --from-device, not both.")
    if run is not None:
        return reference_for_run(run, catalogue)
    if args.from_device:
        return reference_from_speeds(
            catalogue, args.from_device, args.from_tg, args.from_pp, args.from_backend
        )
    if args.from_tg is not None or args.from_pp is not None:
        raise InputError("--from-tg and --from-pp need --from-device (the device you measured).")
    return None


def host_from(args: argparse.Namespace, run: RunResult | None, catalogue: Catalogue) -> Host:
    """The computer the targets go in: the run's, else this one, with the options over it."""

    def gbs(flag: str, value: str | None, high: float) -> float | None:
        return None if value is None else number(flag, value, 0.1, high, low_inclusive=True)

    channels = getattr(args, "ram_channels", None)
    return host_for(
        None if run is not None else cached_report(app_paths()),
        run=run,
        ram_gb=gbs("--ram-gb", args.ram_gb, 65536),
        ram_bandwidth_gbs=gbs("--ram-bandwidth-gbs", args.ram_bandwidth_gbs, 20000),
        ram_speed=getattr(args, "ram_speed", None),
        ram_channels=None if channels is None else whole_number("--ram-channels", channels, 1, 24),
        pcie_gbs=gbs("--pcie-gbs", getattr(args, "pcie_gbs", None), 2000),
        catalogue=catalogue,
    )


def placement_from(args: argparse.Namespace) -> Placement | None:
    """The placement the options ask for (--cpu-moe, --gpu-layers), or None."""
    cpu_moe, layers = getattr(args, "cpu_moe", None), getattr(args, "gpu_layers", None)
    if cpu_moe is None and layers is None:
        return None
    return Placement(
        ALL_LAYERS if layers is None else whole_number("--gpu-layers", layers, 0, MAX_LAYERS),
        0 if cpu_moe is None else whole_number("--cpu-moe", cpu_moe, 0, MAX_LAYERS),
    )


def run(args: argparse.Namespace) -> Output:
    catalogue = load_catalogue()
    facts = facts_for_choice(args.model, args.shape, args.quant)
    workload = workload_from(args)
    measured = read_run_file(args.result) if args.result else None
    reference = _reference(args, catalogue, measured)
    if reference is not None:
        check_measured(reference, facts)
    host = host_from(args, measured, catalogue)
    placement = placement_from(args)
    ubatch = getattr(args, "ubatch", None)
    ubatch = DEFAULT_UBATCH if ubatch is None else whole_number("--ubatch", ubatch, 1, 65536)
    targets = _once([parse_target(t, catalogue) for t in args.to]) if args.to else None
    if args.backend or args.memory_gb is not None:
        memory = (
            None
            if args.memory_gb is None
            else number("--memory-gb", args.memory_gb, 0.1, 4096, low_inclusive=True)
        )
        if memory is not None and targets is not None:
            for t in targets:
                if not offers_memory(t.device, memory):
                    raise InputError(memory_sentence(t.device, memory))
        elif memory is not None:  # the whole catalogue: the devices that come with that size
            targets = [Target(d) for d in catalogue if offers_memory(d, memory)]
            if not targets:
                raise InputError(f"No catalogued device comes with {memory:g} GB of memory.")
        backend = (args.backend or "").lower() or None
        targets = [
            replace(t, device=catalogue.for_backend(t.device, backend) if args.to else t.device,
                    backend=backend, memory_gb=memory)
            for t in (targets or [Target(d) for d in catalogue])
        ]  # fmt: skip
    targets = targets if targets is not None else [Target(d) for d in catalogue]
    targets = [replace(t, placement=placement, ubatch=ubatch) for t in targets]
    if args.to and args.backend:
        for t in targets:
            if t.backend and t.backend not in t.device.backends:
                raise ProjectionError(unsupported_sentence(t.device, t.backend))
    speed_model = load_speed_model()
    user_prices = saved_prices(app_paths())
    table = projection_table(
        facts, workload, catalogue=catalogue, host=host, reference=reference, targets=targets,
        speed_model=speed_model, user_prices=user_prices,
    )  # fmt: skip
    verdicts = (
        verdicts_from_reference(
            facts,
            targets,
            workload,
            host=host,
            reference=reference,
            speed_model=speed_model,
            user_prices=user_prices,
        )
        if reference is not None
        else []
    )
    data = {
        "model": facts.to_json(),
        "workload": workload.to_json(),
        "host": host_json(host),
        "reference": None if reference is None else _reference_json(reference),
        "targets": [
            {**p.to_json(), **price_json(table.price(i))} for i, p in enumerate(table.projections)
        ],
        "verdicts": [v.to_json() for v in verdicts],
    }
    named = {t.device.id for t in targets} if args.to else set()
    # a chip named by its CPU: its GPU is usually the faster way
    chips = [c for t in targets if t.device.id in named
             if (c := catalogue.chip_sentence(t.device, "add --to '{}'.", named))]  # fmt: skip
    return Output(
        data,
        lambda: text(facts, workload, reference, table.projections, verdicts, chips, table.prices),
    )


def host_json(host: Host) -> dict[str, Any]:
    """The host the projections assumed, and what each figure rests on."""
    return {
        "ram_bytes": host.ram_bytes,
        "ram_bandwidth_bytes_per_s": host.ram_bandwidth_bytes_per_s,
        "ram_bandwidth_basis": host.bandwidth_basis,
        "ram_description": host.ram_description,
        "link_bytes_per_s": host_link_bytes_per_s(host),
        "link_basis": host.link_basis,
        "cpu_id": host.cpu_id,
    }


def _reference_json(reference: Reference) -> dict[str, Any]:
    return {
        "device": reference.device.name,
        "backend": reference.backend,
        "tg_tps": reference.tg_tps,
        "pp_tps": reference.pp_tps,
    }


def text(
    facts: ModelFacts,
    workload: Workload,
    reference: Reference | None,
    projections: list[Projection],
    verdicts: list[Verdict],
    chips: Sequence[str] = (),
    prices: Sequence[Price | None] = (),
) -> str:
    # a synthetic model's name already says its quantisation
    quant = "" if facts.file_type in facts.name else f"{facts.file_type}, "
    lines = [
        f"{facts.name} ({quant}{facts.weights_bytes / 1e9:.2f} GB), workload "
        f"'{workload.label}': {workload.prompt_tokens:,} tokens in, {workload.answer_tokens:,} "
        f"out, {workload.history_tokens:,} of history, {workload.concurrency} at once"
    ]
    if reference:
        lines.append(
            f"Calibrated with your measurement on {reference.device.name} "
            f"({reference.backend}): {fmt_tps(reference.tg_tps)} decode"
            + (f", {fmt_tps(reference.pp_tps)} prefill" if reference.pp_tps else "")
        )
    rows = []
    unsupported = [p for p in projections if p.basis == "unsupported"]
    priced = dict(zip((id(p) for p in projections), prices, strict=False))
    projections = [p for p in projections if p.basis != "unsupported"]
    many = workload.concurrency > 1  # then each user's speed and all users' together
    for p in projections:
        price = price_text(priced.get(id(p)), "-")
        if p.beyond_context or p.fits == "no":
            decode = "beyond context" if p.beyond_context else "-"
            basis = p.basis if p.beyond_context else "-"
            rows.append(
                [p.device, p.backend, p.fits, decode] + ["-"] * (4 + 2 * many) + [price, basis]
            )
            continue
        band = fmt_band(p.decode_tps_low, p.decode_tps_high, "-") if p.decode_tps_low else ""
        row = [p.device, p.backend, p.fits, f"{p.decode_tps:.1f}" if p.decode_tps else "n/a", band]
        if many:
            row += [
                f"{p.per_user_tps:.1f}" if p.per_user_tps else "n/a",
                f"{p.aggregate_tps:,.0f}" if p.aggregate_tps else "n/a",
            ]
        row += [
            f"{p.prefill_tps:,.0f}" if p.prefill_tps else "n/a",
            fmt_band(p.prefill_tps_low, p.prefill_tps_high, "-") if p.prefill_tps_low else "",
            fmt_seconds(p.ttft_s),
            price,
            p.basis,
        ]
        rows.append(row)
    headers = ["device", "backend", "fits", "decode t/s", "band"]
    headers += [f"each of {workload.concurrency}", "all users"] if many else []
    headers += ["prefill t/s", "band", "first token", "price", "basis"]
    lines.append(format_table(headers, rows, right=tuple(range(3, len(headers) - 2))))
    if unsupported:
        lines.append(
            f"{len(unsupported)} devices do not run the {unsupported[0].backend} backend "
            "(not shown; in --json with basis 'unsupported')."
        )
    lines += [f"  {p.device}: {note}" for p in projections for note in p.notes]
    lines += [f"  {chip}" for chip in chips]
    for v in verdicts:
        lines.append(f"\n{v.sentence}")
        # what a person would notice, in seconds, for the workload asked about
        focus = next((g for g in v.gains if g.workload == focus_of(workload) and g.feel), None)
        if focus is not None:
            lines.append(focus.feel)
        if v.price_sentence:
            lines.append(f"{v.target}: {v.price_sentence}")
    return "\n".join(lines)

"""`advisor fits [--device NAME] [--min-tps N]`: which built-in models run on a device, how
fast, and with how much context."""

from __future__ import annotations

import argparse

from advisor.cli.output import Output, format_table
from advisor.core.catalogue.catalogue import load_catalogue
from advisor.core.hardware.profile import build_profile
from advisor.core.infra.errors import InputError
from advisor.core.infra.paths import app_paths
from advisor.core.infra.units import GB
from advisor.core.infra.validate import number
from advisor.core.predict.fitting.shipped import load_speed_model
from advisor.core.predict.projecting.projection import unsupported_sentence
from advisor.usecases.fits import FitRow, what_runs
from advisor.usecases.machine import cached_report, host_for

MAX_TPS = 1e6


def run(args: argparse.Namespace) -> Output:
    catalogue = load_catalogue()
    from advisor.cli.commands.project import workload_from

    workload = workload_from(args)
    min_tps = None if args.min_tps is None else number("--min-tps", args.min_tps, 0, MAX_TPS)
    report = cached_report(app_paths())
    host = host_for(report)
    if args.device:
        device = catalogue.resolve(args.device)
        name = device.name
    else:
        if report is None:
            raise InputError(
                "This machine has not been detected yet: run 'advisor detect' first, or give "
                "--device NAME."
            )
        profile = build_profile(report, catalogue)
        device, name = profile.device, profile.name
    backend = (args.backend or device.usual_backend).lower()
    if backend not in device.backends:
        raise InputError(unsupported_sentence(device, backend))
    rows = what_runs(
        device, workload, host=host, backend=backend, min_tps=min_tps,
        speed_model=load_speed_model(),
    )  # fmt: skip
    data = {
        "device": name,
        "device_id": device.id,
        "backend": backend,
        "memory_gb": max(device.memory_sizes_gb),
        "workload": workload.to_json(),
        "min_tps": min_tps,
        "models": [r.to_json() for r in rows],
    }
    chip = catalogue.chip_sentence(device, "try --device '{}'.") if args.device else ""
    return Output(
        data, lambda: text(name, workload.label, min_tps, rows, chip, workload.concurrency)
    )


def text(
    name: str,
    workload: str,
    min_tps: float | None,
    rows: list[FitRow],
    chip: str = "",
    users: int = 1,
) -> str:
    each = " each" if users > 1 else ""
    speed = f", decoding at least {min_tps:g} tokens/s{each}" if min_tps else ""
    lines = [f"What runs on {name} for '{workload}'{speed}, biggest first:"]
    if chip:
        lines.append(chip)
    if not rows:
        lines.append("Nothing: no built-in model fits with that speed.")
        return "\n".join(lines)
    table = [
        [
            r.name, r.quant, f"{r.weights_bytes / GB:.1f}",
            f"{r.decode_tps:.1f}" if r.decode_tps else "n/a",
            f"{r.prefill_tps:,.0f}" if r.prefill_tps else "n/a",
            f"{r.longest_context:,}", r.basis,
        ]
        for r in rows
    ]  # fmt: skip
    decode = f"t/s each of {users}" if users > 1 else "decode t/s"
    headers = ["model", "quant", "GB", decode, "prefill t/s", "longest context", "basis"]
    lines.append(format_table(headers, table, right=(2, 3, 4, 5)))
    return "\n".join(lines)

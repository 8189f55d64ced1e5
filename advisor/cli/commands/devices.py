"""`advisor devices [--search TEXT]`: the device catalogue."""

from __future__ import annotations

import argparse

from advisor.cli.output import Output, format_table
from advisor.core.catalogue.catalogue import UnknownDeviceError, load_catalogue
from advisor.core.catalogue.device import Device


def run(args: argparse.Namespace) -> Output:
    catalogue = load_catalogue()
    devices = catalogue.search(args.search) if args.search else list(catalogue)
    if args.search and not devices:
        raise UnknownDeviceError(
            f"No catalogued device matches '{args.search}'. Closest: "
            f"{', '.join(catalogue.closest(args.search))}."
        )
    return Output([d.to_json() for d in devices], lambda: text(devices))


def text(devices: list[Device]) -> str:
    rows = []
    for d in devices:
        tensor = f"{d.fp16_tensor_tflops:g}" if d.fp16_tensor_tflops else "-"
        fp32 = (
            f"{d.fp32_tflops:g}{'*' if d.fp32_tflops_is_estimate else ''}" if d.fp32_tflops else "-"
        )
        mem = "/".join(f"{m:g}" for m in d.memory_sizes_gb)
        price = f"${d.launch_price_usd:,.0f}" if d.launch_price_usd else "-"
        rows.append(
            [
                d.name,
                d.class_label,
                d.release_year,
                mem,
                d.memory_type,
                f"{d.memory_bandwidth_gbs:,.0f}",
                fp32,
                tensor,
                price,
                d.usual_backend,
            ]
        )
    headers = [
        "device", "class", "year", "memory GB", "type", "GB/s", "FP32 TF", "FP16 tensor TF",
        "launch", "backend",
    ]  # fmt: skip
    return (
        format_table(headers, rows, right=(2, 5, 6, 7, 8))
        + f"\n\n{len(devices)} devices. * = estimate (vendor publishes none). Sources: "
        "advisor devices --search NAME --json"
    )

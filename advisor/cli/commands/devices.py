"""`advisor devices [--search TEXT]`: the device catalogue."""

from __future__ import annotations

import argparse

from advisor.cli.output import Output, format_table
from advisor.core.catalogue.catalogue import UnknownDeviceError, load_catalogue
from advisor.core.catalogue.device import Device
from advisor.core.catalogue.prices import price_of
from advisor.core.infra.paths import app_paths
from advisor.usecases.prices import price_json, price_text, saved_prices


def run(args: argparse.Namespace) -> Output:
    catalogue = load_catalogue()
    devices = catalogue.search(args.search) if args.search else list(catalogue)
    if args.search and not devices:
        raise UnknownDeviceError(
            f"No catalogued device matches '{args.search}'. Closest: "
            f"{', '.join(catalogue.closest(args.search))}."
        )
    mine = saved_prices(app_paths())
    prices = [price_of(d, 1, mine) for d in devices]
    data = [{**d.to_json(), **price_json(p)} for d, p in zip(devices, prices, strict=True)]
    return Output(data, lambda: text(devices, prices))


def text(devices: list[Device], prices: list) -> str:
    rows = []
    for d, p in zip(devices, prices, strict=True):
        tensor = f"{d.fp16_tensor_tflops:g}" if d.fp16_tensor_tflops else "-"
        fp32 = (
            f"{d.fp32_tflops:g}{'*' if d.fp32_tflops_is_estimate else ''}" if d.fp32_tflops else "-"
        )
        mem = "/".join(f"{m:g}" for m in d.memory_sizes_gb)
        price = price_text(p, "-")
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
        "price", "backend",
    ]  # fmt: skip
    return (
        format_table(headers, rows, right=(2, 5, 6, 7))
        + f"\n\n{len(devices)} devices. * = estimate (vendor publishes none). Sources: "
        "advisor devices --search NAME --json"
    )

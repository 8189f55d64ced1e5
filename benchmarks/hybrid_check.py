"""Published hybrid results (a model placed over a card and system RAM) against the placement
physics: every usable row predicted with the shipped shares, the shares refitted on all rows,
and each source predicted by shares fitted without it (leave one source out).

    PYTHONPATH=. .venv/bin/python benchmarks/hybrid_check.py [--write]

--write stores the report in benchmarks/results/hybrid-check.md.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from advisor.core.predict.fitting.shipped import load_speed_model
from advisor.core.predict.projecting.hybrid_fit import (
    Predicted,
    fit_shares,
    leave_one_source_out,
    load_hybrid_rows,
    predict,
)

OUT = Path(__file__).resolve().parent / "results" / "hybrid-check.md"


def _median(errors: Sequence[float]) -> str:
    finite = [abs(e) for e in errors if math.isfinite(e)]
    if not finite:
        return "-"
    return f"{100 * (math.exp(statistics.median(finite)) - 1):.1f}%"


def _signed(errors: Sequence[float]) -> str:
    finite = [e for e in errors if math.isfinite(e)]
    return f"{100 * (math.exp(statistics.median(finite)) - 1):+.1f}%" if finite else "-"


def summary(title: str, preds: Sequence[Predicted]) -> list[str]:
    lines = [
        f"### {title}",
        "",
        "| rows | kind | n | median abs error | median signed |",
        "|---|---|---|---|---|",
    ]
    groups = {
        "all": lambda p: True,
        "host stated": lambda p: p.row.host.bandwidth_basis != "assumed",
        "host assumed": lambda p: p.row.host.bandwidth_basis == "assumed",
        "medium/high confidence": lambda p: p.row.confidence in ("medium", "high"),
    }
    for name, keep in groups.items():
        for kind in ("decode", "prefill"):
            errs = [p.log_error for p in preds if p.kind == kind and keep(p)]
            if errs:
                lines.append(
                    f"| {name} | {kind} | {len(errs)} | {_median(errs)} | {_signed(errs)} |"
                )
    return [*lines, ""]


def table(preds: Sequence[Predicted]) -> list[str]:
    lines = [
        "| row | device | model | placement | RAM | kind | measured | predicted | error | source |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p in preds:
        r = p.row
        cards = f"{r.cards}x " if r.cards > 1 else ""
        place = " ".join(r.placement.llama_args(r.facts))
        ram = f"{r.host.ram_bandwidth_bytes_per_s / 1e9:.0f} GB/s {r.host.bandwidth_basis}"
        pred = f"{p.predicted:.1f}" if p.predicted else "no fit"
        err = f"{100 * (math.exp(p.log_error) - 1):+.0f}%" if p.predicted else "-"
        lines.append(
            f"| {r.row} | {cards}{r.device.name} | {r.facts.name} {r.facts.file_type} | {place} "
            f"| {ram} | {p.kind} | {p.measured:g} | {pred} | {err} | {r.source_url} |"
        )
    return [*lines, ""]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.time()
    model = load_speed_model()
    rows, unused = load_hybrid_rows()
    shipped = predict(rows, model)
    fitted = fit_shares(rows, model)
    loso = leave_one_source_out(rows, model)
    sources = sorted({r.source_url for r in rows})
    out = [
        "# Hybrid placements: published results against the placement physics",
        "",
        f"{len(rows)} rows used from {len(sources)} sources "
        f"(resources/data/llamacpp_hybrid_added.csv, read by llamacpp_hybrid_reading.csv); "
        f"{len(unused)} rows not used. None of them is in the single-device speed fit.",
        "",
        f"Shipped shares: {model.hybrid}. Refitted on all rows: {fitted}.",
        "",
        *summary("With the shipped shares", shipped),
        *summary("Leave one source out (shares fitted without the source predicted)", loso),
        "## Every row (shipped shares)",
        "",
        *table(shipped),
        "## Leave one source out, every row",
        "",
        *table(loso),
        "## Rows not used",
        "",
        *[f"- row {i}: {why}" for i, why in unused],
        "",
        f"({time.time() - t0:.1f} s)",
    ]
    text = "\n".join(out)
    print(text)
    if args.write:
        OUT.write_text(text + "\n", encoding="utf-8")
        print(f"\nwrote {OUT}", file=sys.stderr)
    if fitted != model.hybrid:
        print(
            f"\nThe shipped shares {model.hybrid} are not the fit {fitted}: update "
            "advisor/core/predict/model/hybrid_shares.py.",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

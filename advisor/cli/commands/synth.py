"""`advisor synth OUT.gguf --shape NAME --quant TYPE`: a random-weight GGUF of a real shape."""

from __future__ import annotations

import argparse
import sys

from advisor.cli.output import Output
from advisor.core.infra.units import fmt_bytes
from advisor.core.infra.validate import whole_number


def run(args: argparse.Namespace) -> Output:
    from advisor.bench.synth import MAX_LAYERS, write_synthetic_gguf

    def progress(done: int, total: int) -> None:
        if sys.stderr.isatty():
            print(f"\rwriting {done / total:5.1%} of {fmt_bytes(total)}", end="", file=sys.stderr)

    layers = None if args.layers is None else whole_number("--layers", args.layers, 1, MAX_LAYERS)
    result = write_synthetic_gguf(
        args.out, args.shape, args.quant, n_layers=layers, progress=progress, overwrite=args.force
    )
    if sys.stderr.isatty():
        print(file=sys.stderr)
    data = {
        "path": str(result.path),
        "file_bytes": result.file_bytes,
        "shape": result.shape_id,
        "quant": result.quant,
        "n_layers": result.n_layers,
    }
    return Output(
        data,
        lambda: (
            f"wrote {result.path} ({fmt_bytes(result.file_bytes)}): {result.shape_id} "
            f"{result.quant}, {result.n_layers} layers, random weights"
        ),
    )

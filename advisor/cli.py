"""The command line: the same engine as the GUI, for scripting, CI and support.

Every command takes --json (stable keys, SI units) and otherwise prints a readable table.
A user mistake is one line on stderr and exit status 2; a failed run is exit status 1; never
a Python traceback for a mistake. This module only parses, calls and formats.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


class UserError(Exception):
    """A mistake in what the user asked for: one sentence, exit status 2."""


class RunFailed(Exception):
    """The work itself failed: one sentence, exit status 1."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, not a usage dump
        raise UserError(f"{message} (see '{self.prog} --help')")


# -------------------------------------------------------------------------------------------
# output helpers
# -------------------------------------------------------------------------------------------


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "to_json"):
        return obj.to_json()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    if hasattr(obj, "__fspath__"):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def _clean(obj: Any) -> Any:
    """NaN/inf are not JSON: write null instead."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def print_json(data: Any) -> None:
    text = json.dumps(data, default=_json_default, indent=2, ensure_ascii=False)
    print(json.dumps(_clean(json.loads(text)), indent=2, ensure_ascii=False))


def format_table(
    headers: Sequence[str], rows: Sequence[Sequence[Any]], right: Sequence[int] = ()
) -> str:
    """A plain-text table; columns listed in `right` are right-aligned (numbers)."""
    cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        parts = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), sep] + [line(r) for r in cells[1:]])


# -------------------------------------------------------------------------------------------
# commands
# -------------------------------------------------------------------------------------------


def cmd_inspect(args: argparse.Namespace) -> int:
    from advisor.core.model_facts import facts_from_gguf
    from advisor.core.units import GiB, fmt_bytes, fmt_params

    facts = facts_from_gguf(args.model)
    if args.json:
        print_json(facts.to_json())
        return EXIT_OK
    kv = {t: facts.kv_bytes_per_token(t) for t in ("f16", "q8_0", "q4_0")}
    rows = [
        ("name", facts.name),
        ("architecture", facts.architecture),
        ("file type", facts.file_type),
        ("parameters", f"{fmt_params(facts.n_params)} ({facts.n_params:,})"),
        ("weights", f"{fmt_bytes(facts.weights_bytes)} ({facts.weights_bytes / GiB:.2f} GiB)"),
    ]
    if facts.is_moe:
        rows += [
            ("experts", f"{facts.n_expert_used} of {facts.n_expert} used per token"),
            (
                "active per token",
                f"{fmt_params(facts.active_params)}, {fmt_bytes(facts.active_weights_bytes)}",
            ),
        ]
    rows += [
        ("layers", facts.n_layers),
        ("embedding length", facts.n_embd),
        ("attention heads", f"{facts.n_heads} (KV heads {facts.n_kv_heads})"),
        ("head dimension", f"{facts.head_dim} (value {facts.value_head_dim})"),
        ("feed-forward length", facts.n_ff),
        ("context length", f"{facts.context_length:,} tokens"),
        ("vocabulary", f"{facts.vocab_size:,} tokens"),
    ]
    if facts.sliding_window:
        rows.append(
            (
                "sliding window",
                f"{facts.sliding_window:,} tokens on {facts.n_swa_layers} of "
                f"{facts.n_layers} layers",
            )
        )
    rows += [
        (
            "KV cache per token",
            ", ".join(f"{fmt_bytes(v, binary=True)} ({t})" for t, v in kv.items()),
        ),
        (
            "KV cache at full context",
            f"{fmt_bytes(facts.kv_cache_bytes(facts.context_length))} (f16)",
        ),
        (
            "tensors by type",
            ", ".join(f"{t} {fmt_bytes(b)}" for t, b in facts.bytes_by_type.items()),
        ),
    ]
    print(format_table(("", ""), rows).split("\n", 2)[2])
    return EXIT_OK


def cmd_shapes(args: argparse.Namespace) -> int:
    from advisor.core.model_facts import facts_from_shape
    from advisor.core.quant import COMMON_QUANTS
    from advisor.core.shapes import all_shapes, shape_as_dict
    from advisor.core.units import GB, fmt_bytes

    shapes = all_shapes()
    if args.json:
        out = []
        for s in shapes:
            d = shape_as_dict(s)
            f16 = facts_from_shape(s, "f16")
            d["n_params"] = f16.n_params
            d["active_params"] = f16.active_params
            d["kv_bytes_per_token"] = f16.kv_bytes_per_token("f16")
            d["weights_bytes"] = {q: facts_from_shape(s, q).weights_bytes for q in COMMON_QUANTS}
            d["active_weights_bytes"] = {
                q: facts_from_shape(s, q).active_weights_bytes for q in COMMON_QUANTS
            }
            out.append(d)
        print_json(out)
        return EXIT_OK
    headers = ["shape", "arch", "params", "layers", "heads/kv", "ctx", "KV/token"] + [
        q.upper() for q in COMMON_QUANTS
    ]
    rows = []
    for s in shapes:
        f16 = facts_from_shape(s, "f16")
        params = f"{f16.n_params / 1e9:.2f}B"
        if s.is_moe:
            params += f" ({f16.active_params / 1e9:.1f}B act)"
        sizes = [f"{facts_from_shape(s, q).weights_bytes / GB:.2f}" for q in COMMON_QUANTS]
        rows.append(
            [
                s.id,
                s.architecture,
                params,
                s.n_layers,
                f"{s.n_heads}/{s.n_kv_heads}",
                f"{s.context_length // 1024}k",
                fmt_bytes(f16.kv_bytes_per_token(), binary=True),
                *sizes,
            ]
        )
    print(format_table(headers, rows, right=range(7, 7 + len(COMMON_QUANTS))))
    print("\nWeights in GB (10^9 bytes) per quantisation, with llama.cpp's per-tensor type mix.")
    return EXIT_OK


def cmd_devices(args: argparse.Namespace) -> int:
    from advisor.core.catalogue import load_catalogue

    catalogue = load_catalogue()
    devices = catalogue.search(args.search) if args.search else list(catalogue)
    if args.search and not devices:
        raise UserError(
            f"No catalogued device matches '{args.search}'. Closest: "
            f"{', '.join(catalogue.closest(args.search))}."
        )
    if args.json:
        print_json([d.to_json() for d in devices])
        return EXIT_OK
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
    print(
        format_table(
            [
                "device",
                "class",
                "year",
                "memory GB",
                "type",
                "GB/s",
                "FP32 TF",
                "FP16 tensor TF",
                "launch",
                "backend",
            ],
            rows,
            right=(2, 5, 6, 7, 8),
        )
    )
    print(
        f"\n{len(devices)} devices. * = estimate (vendor publishes none). Sources: "
        "advisor devices --search NAME --json"
    )
    return EXIT_OK


def cmd_synth(args: argparse.Namespace) -> int:
    from advisor.bench.synth import SynthError, write_synthetic_gguf
    from advisor.core.units import fmt_bytes

    def progress(done: int, total: int) -> None:
        if sys.stderr.isatty():
            print(f"\rwriting {done / total:5.1%} of {fmt_bytes(total)}", end="", file=sys.stderr)

    try:
        result = write_synthetic_gguf(
            args.out, args.shape, args.quant, n_layers=args.layers, progress=progress
        )
    except SynthError as exc:
        raise RunFailed(str(exc)) from exc
    if sys.stderr.isatty():
        print(file=sys.stderr)
    if args.json:
        print_json(
            {
                "path": str(result.path),
                "file_bytes": result.file_bytes,
                "shape": result.shape_id,
                "quant": result.quant,
                "n_layers": result.n_layers,
            }
        )
    else:
        print(
            f"wrote {result.path} ({fmt_bytes(result.file_bytes)}): {result.shape_id} "
            f"{result.quant}, {result.n_layers} layers, random weights"
        )
    return EXIT_OK


# -------------------------------------------------------------------------------------------
# parser and entry points
# -------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    from advisor import __version__

    p = _Parser(
        prog="advisor",
        description="LLM Hardware Advisor: what limits your LLM speed, "
        "and what an upgrade would buy. Without a command, opens the app.",
    )
    p.add_argument("--version", action="version", version=f"advisor {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    g = sub.add_parser("gui", help="open the app (optionally with a model chosen)")
    g.add_argument("model", nargs="?", help="a .gguf file to open")

    i = sub.add_parser("inspect", help="model facts from a GGUF header, without loading it")
    i.add_argument("model", help="path to a .gguf file")
    i.add_argument("--json", action="store_true", help="machine-readable output")
    i.set_defaults(func=cmd_inspect)

    s = sub.add_parser("shapes", help="built-in model shapes and their sizes per quantisation")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.set_defaults(func=cmd_shapes)

    d = sub.add_parser("devices", help="the device catalogue (GPUs, Apple chips, CPUs)")
    d.add_argument("--search", metavar="TEXT", help="only devices matching TEXT, best match first")
    d.add_argument("--json", action="store_true", help="machine-readable output")
    d.set_defaults(func=cmd_devices)

    y = sub.add_parser("synth", help="write a random-weight GGUF of a real model's shape")
    y.add_argument("out", help="the .gguf file to write")
    y.add_argument("--shape", required=True, help="a built-in shape (see 'advisor shapes')")
    y.add_argument("--quant", default="q4_0", help="quantisation, e.g. q4_0, q4_k_m, q8_0, f16")
    y.add_argument("--layers", type=int, help="fewer layers than the real model, for quick tests")
    y.add_argument("--json", action="store_true", help="machine-readable output")
    y.set_defaults(func=cmd_synth)
    return p


def _user_error_types() -> tuple[type[BaseException], ...]:
    from advisor.core.gguf_file import InvalidModelError
    from advisor.core.quant import UnknownQuantError
    from advisor.core.shapes import UnknownShapeError
    from advisor.core.workloads import UnknownWorkloadError

    return (
        UserError,
        InvalidModelError,
        UnknownShapeError,
        UnknownQuantError,
        UnknownWorkloadError,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `advisor` command."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(argv)
        if args.command in (None, "gui"):
            return gui_main(getattr(args, "model", None))
        func: Callable[[argparse.Namespace], int] = args.func
        return func(args)
    except _user_error_types() as exc:
        print(f"advisor: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except RunFailed as exc:
        print(f"advisor: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("advisor: cancelled.", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # a bug of ours: one line for the user, the traceback in the log
        import logging

        from advisor.core.logs import setup_logging
        from advisor.core.paths import app_paths

        paths = app_paths()
        setup_logging(paths, component="cli")
        logging.getLogger("advisor.cli").exception("unexpected error in %s", argv)
        print(
            f"advisor: unexpected error ({exc.__class__.__name__}: {exc}); details are in "
            f"{paths.log_file}",
            file=sys.stderr,
        )
        return EXIT_FAILED


def gui_main(model: str | None = None) -> int:
    """Open the desktop app."""
    from advisor.gui.app import run_app

    return run_app(model)

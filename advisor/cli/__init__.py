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
from pathlib import Path
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
    from advisor.core.infra.units import GiB, fmt_bytes, fmt_params
    from advisor.core.model.facts import facts_from_gguf

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
    from advisor.core.infra.units import GB, fmt_bytes
    from advisor.core.model.facts import facts_from_shape
    from advisor.core.model.quant import COMMON_QUANTS
    from advisor.core.model.shapes import all_shapes, shape_as_dict

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
    from advisor.core.catalogue.catalogue import load_catalogue

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
    from advisor.core.infra.units import fmt_bytes

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


def _parse_target(text: str):
    import re

    from advisor.core.catalogue.catalogue import load_catalogue
    from advisor.core.predict.projection import Target

    m = re.match(r"^\s*(\d+)\s*[x×]\s*(.+)$", text)
    count, name = (int(m.group(1)), m.group(2)) if m else (1, text)
    if count < 1 or count > 16:
        raise UserError(f"'{text}': use 1 to 16 cards (e.g. '2x RTX 3090').")
    return Target(load_catalogue().resolve(name), count=count)


def _model_facts(args: argparse.Namespace):
    from advisor.core.model.facts import facts_from_gguf, facts_from_shape
    from advisor.core.model.shapes import get_shape

    if args.model:
        return facts_from_gguf(args.model)
    if args.shape:
        return facts_from_shape(get_shape(args.shape), args.quant or "q4_k_m")
    raise UserError("Give a model: --model FILE.gguf, or --shape NAME --quant TYPE.")


def _workload(args: argparse.Namespace):
    from dataclasses import replace

    from advisor.core.predict.workloads import custom_workload, get_workload

    if args.workload and args.workload != "custom":
        w = get_workload(args.workload)
    elif args.workload == "custom" or args.prompt is not None or args.answer is not None:
        w = custom_workload(
            args.prompt if args.prompt is not None else 512,
            args.answer if args.answer is not None else 128,
        )
    elif args.depth is not None:
        w = custom_workload(512, 128)  # llama-bench's pp512 / tg128, at the given depth
    else:
        w = get_workload("chat")
    if args.depth is not None:
        w = replace(w, history_tokens=args.depth)
    if args.concurrency is not None:
        w = replace(w, concurrency=args.concurrency)
    return w


def _reference(args: argparse.Namespace, facts):
    from advisor.core.catalogue.catalogue import load_catalogue
    from advisor.core.predict.projection import Reference, reference_from_run

    if args.result:
        from advisor.core.runs.results import RunResult

        try:
            data = json.loads(Path(args.result).read_text(encoding="utf-8"))
            run = RunResult.from_json(data[0] if isinstance(data, list) else data)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UserError(f"Cannot read the run {args.result}: {exc}.") from None
        device_id = run.hardware.get("device_id")
        device = load_catalogue().by_id(device_id) if device_id else None
        if device is None:
            name = run.hardware.get("device_name") or run.config.device_name
            device = load_catalogue().try_resolve(name or "")
        if device is None:
            from advisor.core.hardware.machine import device_from_summary

            device = device_from_summary(run.hardware)
        if device is None:
            raise UserError(
                f"The run {args.result} was measured on a device the catalogue does "
                "not know; use --from-device NAME --from-tg TPS instead."
            )
        backend = (run.hardware.get("backend") or device.usual_backend).lower()
        reference = reference_from_run(run, device, backend)
        if reference is None:
            raise UserError(f"The run {args.result} does not say which model it measured.")
        return reference
    if args.from_device:
        if not args.from_tg:
            raise UserError("--from-device needs --from-tg (your measured decode tokens/s).")
        device = load_catalogue().resolve(args.from_device)
        backend = (args.from_backend or device.usual_backend).lower()
        return Reference(device, backend, args.from_tg, args.from_pp)
    return None


def _host(args: argparse.Namespace):
    import psutil

    from advisor.core.hardware.machine import DEFAULT_RAM_BANDWIDTH_BYTES_PER_S, load_cached_report
    from advisor.core.infra.paths import app_paths
    from advisor.core.predict.projection import Host

    report = load_cached_report(app_paths().hardware_cache)
    ram = float(psutil.virtual_memory().total)
    bandwidth = DEFAULT_RAM_BANDWIDTH_BYTES_PER_S
    if report is not None:
        ram = float(report.ram.total_bytes or ram)
        bandwidth = (
            report.ram.theoretical_bandwidth_bytes_per_s
            or report.ram.measured_bandwidth_bytes_per_s
            or bandwidth
        )
    if args.ram_gb:
        ram = args.ram_gb * 1024**3
    if args.ram_bandwidth_gbs:
        bandwidth = args.ram_bandwidth_gbs * 1e9
    return Host(ram, bandwidth)


def cmd_project(args: argparse.Namespace) -> int:
    from advisor.core.catalogue.catalogue import load_catalogue
    from advisor.core.infra.units import fmt_seconds
    from advisor.core.predict.projection import Target, project, upgrade_verdict

    facts = _model_facts(args)
    workload = _workload(args)
    reference = _reference(args, facts)
    host = _host(args)
    if args.to:
        targets = [_parse_target(t) for t in args.to]
    else:
        targets = [Target(d) for d in load_catalogue()]
    if args.backend:
        targets = [Target(t.device, t.count, args.backend.lower(), t.memory_gb) for t in targets]
    if args.memory_gb:
        targets = [Target(t.device, t.count, t.backend, args.memory_gb) for t in targets]
    projections = [project(facts, t, workload, host=host, reference=reference) for t in targets]
    verdicts = []
    if reference is not None:
        source = Target(reference.device, backend=reference.backend)
        for t in targets:
            if t.device.id != reference.device.id:
                verdicts.append(
                    upgrade_verdict(
                        facts,
                        source,
                        t,
                        host=host,
                        reference=reference,
                        focus=workload.id if workload.id != "custom" else "chat",
                    )
                )
    if args.json:
        print_json(
            {
                "model": facts.to_json(),
                "workload": workload.to_json(),
                "host": {
                    "ram_bytes": host.ram_bytes,
                    "ram_bandwidth_bytes_per_s": host.ram_bandwidth_bytes_per_s,
                },
                "reference": None
                if reference is None
                else {
                    "device": reference.device.name,
                    "backend": reference.backend,
                    "tg_tps": reference.tg_tps,
                    "pp_tps": reference.pp_tps,
                },
                "targets": [p.to_json() for p in projections],
                "verdicts": [v.to_json() for v in verdicts],
            }
        )
        return EXIT_OK
    print(
        f"{facts.name} ({facts.file_type}, {facts.weights_bytes / 1e9:.2f} GB), workload "
        f"'{workload.label}': {workload.prompt_tokens:,} tokens in, {workload.answer_tokens:,} "
        f"out, {workload.history_tokens:,} of history, {workload.concurrency} at once"
    )
    if reference:
        print(
            f"Calibrated with your measurement on {reference.device.name} "
            f"({reference.backend}): {reference.tg_tps} t/s decode"
            + (f", {reference.pp_tps} t/s prefill" if reference.pp_tps else "")
        )
    rows = []
    for p in projections:
        if p.fits == "no":
            rows.append([p.device, p.backend, "no", "-", "-", "-", "-", "-", "-"])
            continue
        band = f"{p.decode_tps_low:.0f}-{p.decode_tps_high:.0f}" if p.decode_tps_low else ""
        per_user = f"{p.per_user_tps:.1f}" if workload.concurrency > 1 else ""
        rows.append(
            [
                p.device,
                p.backend,
                p.fits,
                f"{p.decode_tps:.1f}",
                band,
                per_user,
                f"{p.prefill_tps:,.0f}" if p.prefill_tps else "n/a",
                fmt_seconds(p.ttft_s),
                p.basis,
            ]
        )
    print(
        format_table(
            [
                "device",
                "backend",
                "fits",
                "decode t/s",
                "band",
                "per user",
                "prefill t/s",
                "first token",
                "basis",
            ],
            rows,
            right=(3, 4, 5, 6, 7),
        )
    )
    for p in projections:
        for note in p.notes:
            print(f"  {p.device}: {note}")
    for v in verdicts:
        print(f"\n{v.sentence}")
    return EXIT_OK


def _int_list(text: str, what: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise UserError(f"{what} takes whole numbers separated by commas, not '{text}'.") from None
    if not values or any(v < 0 for v in values):
        raise UserError(f"{what} takes whole numbers of 0 or more, not '{text}'.")
    return values


def _bench_config(args: argparse.Namespace):
    from advisor.bench.runner import parse_synthetic
    from advisor.core.model.facts import facts_from_gguf
    from advisor.core.model.quant import file_type
    from advisor.core.model.shapes import get_shape
    from advisor.core.runs.results import BenchConfig

    if bool(args.model) == bool(args.synthetic):
        raise UserError("Give either a model file or --synthetic SHAPE[:QUANT], not both.")
    model_path = None
    if args.model:
        facts_from_gguf(args.model)  # refuses a bad file here, before any child starts
        model_path = str(Path(args.model).expanduser().resolve())
    if args.synthetic:
        shape, quant = parse_synthetic(args.synthetic)
        get_shape(shape)
        file_type(quant)
    if args.reps < 1:
        raise UserError("--reps must be at least 1.")
    batches = _int_list(args.batch, "--batch")
    if any(b < 1 for b in batches):
        raise UserError("--batch takes stream counts of 1 or more.")
    return BenchConfig(
        model_path=model_path,
        synthetic=args.synthetic,
        synthetic_layers=args.layers,
        n_prompt=_int_list(args.pp, "--pp"),
        n_gen=_int_list(args.tg, "--tg"),
        depths=_int_list(args.depth, "--depth"),
        batches=batches,
        reps=args.reps,
        threads=args.threads,
        gpu_layers=args.gpu_layers,
        n_batch=args.batch_size,
        n_ubatch=args.ubatch_size,
        flash_attn=args.flash_attn,
        cache_type_k=args.cache_type,
        cache_type_v=args.cache_type,
        warmup=not args.no_warmup,
        allow_oversize=args.allow_oversize,
    )


def _print_run_table(run) -> None:
    from advisor.core.infra.units import GB, GiB, fmt_bytes

    m = run.model
    print(
        f"{m.get('name')}: {m.get('architecture')} {m.get('file_type')}, "
        f"{(m.get('weights_bytes') or 0) / GiB:.2f} GiB, {(m.get('n_params') or 0) / 1e9:.2f} B "
        f"params; {run.hardware.get('device_name', 'this machine')}, backend "
        f"{','.join(run.llama.get('backends') or [])}, {run.llama.get('threads')} threads"
    )
    rows = []
    for t in run.tests:
        ceiling = t.decode_ceiling_tps if t.kind == "decode" else t.prefill_ceiling_tps
        moved = (
            f"{t.achieved_bandwidth_bytes_per_s / GB:.1f} GB/s"
            if t.achieved_bandwidth_bytes_per_s
            else f"{t.achieved_flops_per_s / 1e12:.2f} TFLOP/s"
            if t.achieved_flops_per_s
            else ""
        )
        rows.append(
            [
                t.name,
                f"{t.tokens_per_s:.2f} ± {t.stddev:.2f}",
                f"{t.per_stream_tps:.2f}" if t.batch > 1 else "",
                fmt_bytes(t.bytes_per_token) if t.kind == "decode" else "",
                moved,
                f"{ceiling:.1f}" if ceiling else "n/a",
                f"{t.efficiency:.0%}" if t.efficiency else "n/a",
            ]
        )
    print(
        format_table(
            ["test", "t/s", "per stream", "bytes/token", "achieved", "ceiling t/s", "of ceiling"],
            rows,
            right=(1, 2, 3, 4, 5, 6),
        )
    )
    spec = run.hardware.get("spec_bandwidth_bytes_per_s")
    meas = run.hardware.get("measured_bandwidth_bytes_per_s")
    print(
        f"Ceilings use {'the spec' if spec else 'the measured'} memory bandwidth "
        f"({(spec or meas or 0) / GB:.1f} GB/s"
        + (f"; measured {meas / GB:.1f} GB/s" if meas and spec else "")
        + ")."
    )
    for note in run.notes:
        print(f"Note: {note}")


def _bench_facts(config):
    """The facts of the model a benchmark config names (file header or shape)."""
    from advisor.bench.runner import parse_synthetic
    from advisor.core.model.facts import facts_from_gguf, facts_from_shape
    from advisor.core.model.shapes import get_shape

    if config.model_path:
        return facts_from_gguf(config.model_path)
    shape_id, quant = parse_synthetic(config.synthetic)
    shape = get_shape(shape_id)
    if config.synthetic_layers:
        shape = shape.with_layers(config.synthetic_layers)
    return facts_from_shape(shape, quant)


def cmd_bench(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from advisor.bench.controller import BenchJob
    from advisor.bench.machine_service import detect_machine, hardware_summary
    from advisor.core.infra.paths import app_paths
    from advisor.core.predict.projection import Target, project
    from advisor.core.predict.workloads import custom_workload
    from advisor.core.runs.history import History, HistoryError
    from advisor.core.runs.results import Failure, Progress, RunResult

    config = _bench_config(args)
    paths = app_paths().ensure()
    report, profile = detect_machine(paths, probe_bandwidth=True)
    facts = _bench_facts(config)
    peak, _ = profile.compute_peak(facts.is_quantized)
    guess = project(
        facts,
        Target(profile.device, backend=profile.backend),
        custom_workload(512, 128),
        host=profile.host,
    )
    config = replace(
        config,
        device_name=profile.name,
        bandwidth_spec_bytes_per_s=profile.spec_bandwidth_bytes_per_s,
        bandwidth_measured_bytes_per_s=profile.measured_bandwidth_bytes_per_s,
        peak_flops_per_s=peak,
        expected_prefill_tps=guess.prefill_tps,
        expected_decode_tps=guess.decode_tps,
    )
    job = BenchJob(config, hardware=hardware_summary(report, profile), watchdog_s=args.watchdog)
    live = sys.stderr.isatty() and not args.quiet
    final = None
    try:
        for event in job.events():
            if isinstance(event, Progress):
                if live:
                    speed = f"  {event.tokens_per_s:,.1f} t/s" if event.tokens_per_s else ""
                    eta = f"  ~{event.eta_s:.0f} s left" if event.eta_s else ""
                    line = f"{event.phase}: {event.message}{speed}{eta}"
                    print(f"\r{line[:110]:110}", end="", file=sys.stderr, flush=True)
                continue
            final = event
    except KeyboardInterrupt:
        job.cancel()
        for event in job.events():
            final = event
    if live:
        print("\r" + " " * 110 + "\r", end="", file=sys.stderr)
    if isinstance(final, Failure) or final is None:
        failure = final or Failure("The benchmark ended without a result.")
        if failure.details and args.verbose:
            print(failure.details, file=sys.stderr)
        if failure.cancelled:
            raise RunFailed(failure.message)
        if failure.user_error:
            raise UserError(failure.message)
        raise RunFailed(failure.message + ("" if args.verbose else " (--verbose for details)"))
    assert isinstance(final, RunResult)
    run = replace(final, label=args.label or "")
    if not args.no_save:
        try:
            History(paths.data / "runs").save(run)
        except HistoryError as exc:
            print(f"advisor: {exc}", file=sys.stderr)
    if args.json:
        print_json(run.to_json())
    else:
        _print_run_table(run)
    return EXIT_OK


def cmd_detect(args: argparse.Namespace) -> int:
    from advisor.bench.machine_service import detect_machine
    from advisor.core.infra.paths import app_paths
    from advisor.core.infra.units import GiB, fmt_bandwidth

    paths = app_paths().ensure()
    report, profile = detect_machine(paths, probe_bandwidth=not args.no_probe, use_cache=False)
    if args.json:
        print_json({**report.to_json(), "profile": profile.to_json()})
        return EXIT_OK
    cpu, ram = report.cpu, report.ram
    rows = [
        ("OS", f"{report.os} {report.os_version}"),
        (
            "CPU",
            f"{cpu.model or 'unknown'}: {cpu.physical_cores or '?'} cores, "
            f"{cpu.logical_cores or '?'} threads",
        ),
        ("CPU features", ", ".join(cpu.features) or "unknown"),
        (
            "RAM",
            f"{(ram.total_bytes or 0) / GiB:.1f} GiB total, "
            f"{(ram.available_bytes or 0) / GiB:.1f} GiB available",
        ),
        (
            "RAM type and speed",
            ", ".join(
                x for x in (ram.type, f"{ram.speed_mts} MT/s" if ram.speed_mts else None) if x
            )
            or "unknown (not readable without admin rights)",
        ),
        (
            "RAM bandwidth, theoretical",
            (
                fmt_bandwidth(ram.theoretical_bandwidth_bytes_per_s)
                + f" ({ram.theoretical_bandwidth_source or 'memory modules'})"
            )
            if ram.theoretical_bandwidth_bytes_per_s
            else (ram.theoretical_bandwidth_source or "unknown"),
        ),
        (
            "RAM bandwidth, measured",
            (
                fmt_bandwidth(ram.measured_bandwidth_bytes_per_s)
                + f" (read test, {ram.measured_probe_s:.1f} s)"
            )
            if ram.measured_bandwidth_bytes_per_s
            else "not measured (--no-probe)",
        ),
    ]
    for g in report.gpus:
        vram = f", {g.vram_total_bytes / GiB:.1f} GiB" if g.vram_total_bytes else ""
        cores = f", {g.gpu_cores}-core GPU" if g.gpu_cores else ""
        bw = f", {fmt_bandwidth(g.bandwidth_bytes_per_s)}" if g.bandwidth_bytes_per_s else ""
        rows.append(("GPU", f"{g.name}{vram}{cores}{bw}" + (" (virtual)" if g.is_virtual else "")))
    if not report.gpus:
        rows.append(("GPU", "none found"))
    b = report.backend
    rows.append(
        (
            "llama.cpp",
            (
                f"{', '.join(b.backends)}; GPU offload "
                f"{'yes' if b.gpu_offload else 'no'}; llama-cpp-python "
                f"{b.llama_cpp_python_version}"
            )
            if b and b.available
            else f"unavailable ({b.error if b else 'not checked'})",
        )
    )
    rows.append(("Runs your model", f"{profile.name} ({profile.backend})"))
    rows.append(
        (
            "  bandwidth",
            f"{fmt_bandwidth(profile.bandwidth_bytes_per_s)} ({profile.bandwidth_source})",
        )
    )
    peak, source = profile.compute_peak(True)
    rows.append(
        ("  compute", f"{(peak or 0) / 1e12:.2f} TFLOP/s ({source})" if peak else "unknown")
    )
    print(format_table(("", ""), rows).split("\n", 2)[2])
    unknown = [n for n in report.notes if n.status != "ok"]
    if unknown:
        print("\nNot available here:")
        for n in unknown:
            print(f"  {n.probe}: {n.detail}")
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

    t = sub.add_parser("detect", help="this machine's hardware, with a measured RAM bandwidth")
    t.add_argument("--no-probe", action="store_true", help="skip the memory bandwidth test")
    t.add_argument("--json", action="store_true", help="machine-readable output")
    t.set_defaults(func=cmd_detect)

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

    j = sub.add_parser("project", help="predict your model's speed on catalogued devices")
    src = j.add_argument_group("the model")
    src.add_argument("--model", help="a .gguf file (its header is read, not its weights)")
    src.add_argument("--shape", help="a built-in shape instead of a file (see 'advisor shapes')")
    src.add_argument("--quant", help="quantisation of the shape (default q4_k_m)")
    ref = j.add_argument_group("your measurement (optional)")
    ref.add_argument("--from-device", help="the device you measured on")
    ref.add_argument("--from-tg", type=float, help="your measured decode tokens/s (tg128)")
    ref.add_argument("--from-pp", type=float, help="your measured prefill tokens/s (pp512)")
    ref.add_argument("--from-backend", help="the backend you measured with")
    ref.add_argument("--result", help="a run saved by 'advisor bench --json' or exported")
    j.add_argument(
        "--to",
        action="append",
        metavar="NAME",
        help="a target device, e.g. 'RTX 4090' or '2x RTX 3090' (repeatable; "
        "default: every catalogued device)",
    )
    j.add_argument(
        "--backend", help="cpu, cuda, metal, rocm or vulkan (default: the device's usual)"
    )
    j.add_argument("--memory-gb", type=float, help="the memory option of the targets")
    wl = j.add_argument_group("the workload")
    wl.add_argument(
        "--workload", help="chat, summarise, long-chat, many-users, coding-agent, custom"
    )
    wl.add_argument("--depth", type=int, help="tokens of history already in the KV cache")
    wl.add_argument("--prompt", type=int, help="prompt tokens (custom workload)")
    wl.add_argument("--answer", type=int, help="answer tokens (custom workload)")
    wl.add_argument("--concurrency", type=int, help="users at once")
    hw = j.add_argument_group("the host (for layers that do not fit a card)")
    hw.add_argument("--ram-gb", type=float, help="system RAM (default: this machine's)")
    hw.add_argument("--ram-bandwidth-gbs", type=float, help="system RAM bandwidth in GB/s")
    j.add_argument("--json", action="store_true", help="machine-readable output")
    j.set_defaults(func=cmd_project)

    b = sub.add_parser("bench", help="measure a model like llama-bench, with ceilings")
    b.add_argument("model", nargs="?", help="a .gguf file")
    b.add_argument(
        "--synthetic",
        metavar="SHAPE[:QUANT]",
        help="a random-weight model of a built-in shape, e.g. llama-3.2-1b:q4_0",
    )
    b.add_argument("--layers", type=int, help="fewer layers for a synthetic model (quick runs)")
    b.add_argument("--pp", default="512", help="prompt sizes to prefill, e.g. 512 or 128,512")
    b.add_argument("--tg", default="128", help="tokens to generate, e.g. 128")
    b.add_argument("--reps", type=int, default=3, help="repetitions per test (default 3)")
    b.add_argument("--depth", default="0", help="context depths for decode, e.g. 0,4096")
    b.add_argument("--batch", default="1", help="concurrent streams for decode, e.g. 1,4,16")
    b.add_argument("--threads", type=int, help="CPU threads (default: performance cores)")
    b.add_argument("--gpu-layers", type=int, help="layers on the GPU (default: all, if any GPU)")
    b.add_argument("--batch-size", type=int, default=2048, help="llama.cpp n_batch")
    b.add_argument("--ubatch-size", type=int, default=512, help="llama.cpp n_ubatch")
    b.add_argument("--flash-attn", choices=("auto", "on", "off"), default="auto")
    b.add_argument(
        "--cache-type",
        choices=("f16", "q8_0", "q4_0"),
        default="f16",
        help="KV cache type (K and V)",
    )
    b.add_argument("--no-warmup", action="store_true")
    b.add_argument(
        "--allow-oversize",
        action="store_true",
        help="run even when the model looks too large for free memory",
    )
    b.add_argument("--no-save", action="store_true", help="do not add the run to the history")
    b.add_argument("--label", help="a label for the run in the history")
    b.add_argument(
        "--watchdog",
        type=float,
        default=300.0,
        help="seconds without progress before the run is stopped (default 300)",
    )
    b.add_argument("--quiet", action="store_true", help="no progress line")
    b.add_argument("--verbose", action="store_true", help="llama.cpp's log on failure")
    b.add_argument("--json", action="store_true", help="machine-readable output")
    b.set_defaults(func=cmd_bench)
    return p


def _user_error_types() -> tuple[type[BaseException], ...]:
    from advisor.core.catalogue.catalogue import UnknownDeviceError
    from advisor.core.model.gguf_file import InvalidModelError
    from advisor.core.model.quant import UnknownQuantError
    from advisor.core.model.shapes import UnknownShapeError
    from advisor.core.predict.workloads import UnknownWorkloadError

    return (
        UserError,
        InvalidModelError,
        UnknownShapeError,
        UnknownQuantError,
        UnknownWorkloadError,
        UnknownDeviceError,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `advisor` command."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--bench-child"]:  # the frozen app runs its own benchmark child process
        from advisor.bench.child import main as child_main

        return child_main(argv[1:])
    from advisor.startup import cpu_check_message

    problem = cpu_check_message()
    if problem:
        print(f"advisor: {problem}", file=sys.stderr)
        if not argv or argv[0] == "gui":
            _show_startup_problem(problem)
        return EXIT_FAILED
    if argv[:1] == ["--smoke-test"]:
        from advisor.smoke import main as smoke_main

        return smoke_main()
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

        from advisor.core.infra.logs import setup_logging
        from advisor.core.infra.paths import app_paths

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
    from advisor.core.infra.paths import app_paths
    from advisor.startup import route_output_to_log

    route_output_to_log(app_paths().log_file)
    from advisor.gui.app import run_app

    return run_app(model)


def _show_startup_problem(message: str) -> None:
    """A windowed app cannot print: show the one sentence in a message box."""
    try:
        from PySide6 import QtWidgets

        app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(["advisor"])
        QtWidgets.QMessageBox.critical(None, "LLM Hardware Advisor", message)
        del app
    except Exception:  # no display: the stderr line is all we can do
        pass

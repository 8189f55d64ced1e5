"""`advisor bench`: measure a model like llama-bench, each number against its ceiling."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from advisor.cli.output import Output, clear_progress, format_table, progress_line
from advisor.core.infra.errors import InputError, RunError, StorageError
from advisor.core.infra.paths import app_paths
from advisor.core.infra.units import GB, GiB, fmt_bytes
from advisor.core.infra.validate import number
from advisor.core.predict.fitting.shipped import load_speed_model
from advisor.core.runs.events import Failure, Progress
from advisor.core.runs.history import History
from advisor.core.runs.preflight import placement_refusal
from advisor.core.runs.results import RunResult, TestResult, run_hardware
from advisor.usecases.bench_config import BenchChoices, bench_config
from advisor.usecases.machine import detect_machine

MAX_WATCHDOG_S = 86_400.0


def choices_from(args: argparse.Namespace) -> BenchChoices:
    """The benchmark the options ask for (checked by the use case)."""
    return BenchChoices(
        model_path=args.model,
        synthetic=args.synthetic,
        synthetic_layers=args.layers,
        n_prompt=args.pp,
        n_gen=args.tg,
        depths=args.depth,
        batches=args.batch,
        reps=args.reps,
        threads=args.threads,
        gpu_layers=args.gpu_layers,
        cpu_moe=0 if args.cpu_moe is None else args.cpu_moe,
        n_batch=args.batch_size,
        n_ubatch=args.ubatch_size,
        flash_attn=args.flash_attn,
        cache_type=args.cache_type,
        warmup=not args.no_warmup,
        allow_oversize=args.allow_oversize,
        adaptive_reps=not args.fixed_reps,
        longest_context=args.longest_context,
    )


def run(args: argparse.Namespace) -> Output:
    from advisor.bench.controller import BenchJob

    choices = choices_from(args)
    watchdog = number("--watchdog", args.watchdog, 1, MAX_WATCHDOG_S, unit="seconds")
    # every option checked before detection or any child starts (experts in RAM for a
    # dense model too)
    config, facts = bench_config(choices)
    paths = app_paths().ensure()
    report, profile = detect_machine(paths, probe_bandwidth=True)
    config, _ = bench_config(choices, profile=profile, speed_model=load_speed_model())
    if refused := placement_refusal(config, facts, report.backend):  # no card to place on
        raise InputError(refused)
    job = BenchJob(config, hardware=run_hardware(report, profile), watchdog_s=watchdog)
    final = _pump(job, live=not args.quiet)
    if isinstance(final, Failure) or final is None:
        failure = final or Failure("The benchmark ended without a result.")
        if failure.details and args.verbose:
            print(failure.details, file=sys.stderr)
        if failure.user_error:
            raise InputError(failure.message)
        hint = "" if args.verbose or failure.cancelled else " (--verbose for details)"
        raise RunError(failure.message + hint)
    run_result = replace(final, label=args.label or "")
    error = None
    if not args.no_save:
        try:
            History(paths.data / "runs").save(run_result)
        except StorageError as exc:  # the numbers are shown, then the run fails with why
            error = exc
    return Output(run_result.to_json(), lambda: text(run_result), error=error)


def _pump(job: object, live: bool) -> RunResult | Failure | None:
    """Show progress on the terminal; return the one result or failure."""
    final: RunResult | Failure | None = None
    events = job.events  # type: ignore[attr-defined]
    try:
        for event in events():
            if isinstance(event, Progress):
                if live:
                    speed = f"  {event.tokens_per_s:,.1f} t/s" if event.tokens_per_s else ""
                    eta = f"  ~{event.eta_s:.0f} s left" if event.eta_s else ""
                    progress_line(f"{event.phase}: {event.message}{speed}{eta}")
                continue
            final = event
    except KeyboardInterrupt:
        job.cancel()  # type: ignore[attr-defined]
        for event in events():
            final = event if not isinstance(event, Progress) else final
    clear_progress()
    return final


def text(run: RunResult) -> str:
    m = run.model
    lines = [
        f"{m.name}: {m.architecture} {m.file_type}, {m.weights_bytes / GiB:.2f} GiB, "
        f"{m.n_params / 1e9:.2f} B params; {run.device_name}, backend "
        f"{','.join(run.llama.backends)}, {run.llama.threads} threads"
        + (f" ({run.llama.threads_rule})" if run.llama.threads_rule else "")
    ]
    rows = []
    for t in run.tests:
        ceiling = t.decode_ceiling_tps if t.kind == "decode" else t.prefill_ceiling_tps
        moved = (
            f"{t.achieved_bandwidth_bytes_per_s / GB:.1f} GB/s"
            if t.kind == "decode" and t.achieved_bandwidth_bytes_per_s
            else f"{t.achieved_flops_per_s / 1e12:.2f} TFLOP/s"
            if t.achieved_flops_per_s
            else ""
        )
        rows.append(
            [
                t.name,
                f"{t.tokens_per_s:.2f} ± {t.stddev:.2f}",
                f"{t.per_stream_tps:.2f}" if t.batch > 1 and t.per_stream_tps else "",
                fmt_bytes(t.bytes_per_token) if t.kind == "decode" else "",
                moved,
                f"{ceiling:.1f}" if ceiling else "n/a",
                f"{t.efficiency:.0%}" if t.efficiency else "n/a",
                str(len(t.samples)),
                _energy(t),
            ]
        )
    headers = [
        "test", "t/s", "per stream", "bytes/token", "achieved", "ceiling t/s", "of ceiling",
        "reps", "energy/token",
    ]  # fmt: skip
    lines.append(format_table(headers, rows, right=(1, 2, 3, 4, 5, 6, 7, 8)))
    sources = {t.energy_source for t in run.tests if t.energy_method}
    if sources:
        lines.append("Energy: " + "; ".join(sorted(sources)) + ".")
    spec = run.hardware.spec_bandwidth_bytes_per_s
    meas = run.hardware.measured_bandwidth_bytes_per_s
    lines.append(
        f"Ceilings use {'the spec' if spec else 'the measured'} memory bandwidth "
        f"({(spec or meas or 0) / GB:.1f} GB/s"
        + (f"; measured {meas / GB:.1f} GB/s" if meas and spec else "")
        + ")."
    )
    lines += [f"Note: {note}" for note in run.notes]
    return "\n".join(lines)


def _energy(t: TestResult) -> str:
    if t.joules_per_token is None or t.average_w is None:
        return ""
    estimate = "~" if t.energy_method == "estimate" else ""
    return f"{estimate}{t.joules_per_token:.3g} J @ {t.average_w:.0f} W"

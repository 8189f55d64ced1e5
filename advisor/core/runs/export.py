"""Export runs as CSV, JSON and Markdown, with the llama-bench command that reproduces them."""

from __future__ import annotations

import csv
import io
import json
import shlex
import time
from collections.abc import Sequence
from pathlib import Path

from advisor.core.infra.serde import json_safe
from advisor.core.infra.units import GB, GiB
from advisor.core.runs.config import BenchConfig
from advisor.core.runs.results import RunResult, TestResult

CSV_COLUMNS = (
    "run_id",
    "created_at",
    "model",
    "file_type",
    "weights_bytes",
    "device",
    "backend",
    "threads",
    "gpu_layers",
    "test",
    "kind",
    "n_prompt",
    "n_gen",
    "depth",
    "batch",
    "tokens_per_s",
    "stddev",
    "per_stream_tps",
    "bytes_per_token",
    "achieved_bandwidth_bytes_per_s",
    "decode_ceiling_tps",
    "efficiency",
    "achieved_flops_per_s",
    "prefill_ceiling_tps",
    "other_cpu_load",
    "busy",
    "noisy",
    # what produced the run (the same for every row of a run)
    "app_version",
    "llama_cpp_commit",
    "catalogue_date",
)


def _shared_flags(c: BenchConfig) -> list[str]:
    """The settings llama-bench and llama-batched-bench spell alike."""
    args: list[str] = []
    if c.threads:
        args += ["-t", str(c.threads)]
    if c.gpu_layers is not None:
        args += ["-ngl", str(c.gpu_layers)]
    if c.cpu_moe > 0:  # llama-bench's and common/arg.cpp's spelling of --n-cpu-moe
        args += ["-ncmoe", str(c.cpu_moe)]
    if c.n_batch != 2048:
        args += ["-b", str(c.n_batch)]
    if c.n_ubatch != 512:
        args += ["-ub", str(c.n_ubatch)]
    if c.cache_type_k != "f16":
        args += ["-ctk", c.cache_type_k]
    if c.cache_type_v != "f16":
        args += ["-ctv", c.cache_type_v]
    return args


def llama_bench_command(run: RunResult) -> str:
    """The llama-bench command line that measures the same tests with the same settings (and,
    for batched decode, the llama-batched-bench one)."""
    c = run.config
    model = c.model_path or "MODEL.gguf"
    args = ["llama-bench", "-m", model]
    pp = [str(p) for p in c.n_prompt if p]
    tg = [str(g) for g in c.n_gen if g]
    args += ["-p", ",".join(pp) if pp else "0", "-n", ",".join(tg) if tg else "0"]
    if any(d for d in c.depths):
        args += ["-d", ",".join(str(d) for d in c.depths)]
    args += ["-r", str(c.reps)]
    args += _shared_flags(c)
    if c.flash_attn != "auto":
        args += ["-fa", "1" if c.flash_attn == "on" else "0"]
    if not c.use_mmap:
        args += ["-mmp", "0"]
    command = shlex.join(args)
    if not c.repack:
        command += (
            "\n# this run kept the weights in llama.cpp's plain CPU buffer, not its repacked "
            "ones (their AMX kernels crash on some Xeons); llama-bench's -ot '.*=CPU' does the "
            "same"
        )
    batched = batched_bench_command(c)
    if batched:
        command += f"\n# batched decode (tgNxB): {batched}"
    return command


def batched_bench_command(c: BenchConfig) -> str | None:
    """llama-batched-bench with the app's batched semantics: one KV cache per stream (its
    default; no -kvu), a one-token prompt per stream, then n_gen decode steps; S_TG t/s is
    the app's tgNxB."""
    batches = [b for b in c.batches if b > 1]
    tg = [g for g in c.n_gen if g]
    if not batches or not tg:
        return None
    args = ["llama-batched-bench", "-m", c.model_path or "MODEL.gguf"]
    args += ["-c", str(max(batches) * (1 + tg[0])), "-npp", "1", "-ntg", str(tg[0])]
    args += ["-npl", ",".join(str(b) for b in batches)]
    args += _shared_flags(c)
    if c.flash_attn != "auto":
        args += ["-fa", "on" if c.flash_attn == "on" else "off"]
    return shlex.join(args)


def run_made_with(run: RunResult) -> str:
    """The words before a run's provenance: 'Run ID, made with'."""
    return f"Run {run.id}, made with"


def provenance(run: RunResult) -> list[tuple[str, str]]:
    """What produced a run, for a shared result to say: the app's version, the llama.cpp
    commit (and the llama-cpp-python that vendors it), and the catalogue's date. Runs saved
    before these were recorded say so."""
    missing = "not recorded"
    llama = run.llama
    return [
        ("LLM Hardware Advisor", run.app_version or missing),
        ("llama.cpp", llama.llama_cpp_commit or missing),
        ("llama-cpp-python", llama.llama_cpp_python_version or missing),
        ("catalogue of", run.catalogue_date or missing),
    ]


def _device(run: RunResult) -> str:
    return run.device_name


def _backend(run: RunResult) -> str:
    return ",".join(run.llama.backends)


def to_json_text(runs: Sequence[RunResult]) -> str:
    data = [json_safe(r.to_json()) for r in runs]
    return json.dumps(data[0] if len(data) == 1 else data, indent=2, ensure_ascii=False)


def to_csv_text(runs: Sequence[RunResult]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for run in runs:
        for t in run.tests:
            writer.writerow(
                [
                    run.id,
                    time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(run.created_at)),
                    run.model.name,
                    run.model.file_type,
                    run.model.weights_bytes,
                    _device(run),
                    _backend(run),
                    run.llama.threads,
                    run.llama.gpu_layers,
                    t.name,
                    t.kind,
                    t.n_prompt,
                    t.n_gen,
                    t.depth,
                    t.batch,
                    _num(t.tokens_per_s),
                    _num(t.stddev),
                    _num(t.per_stream_tps),
                    _num(t.bytes_per_token),
                    _num(t.achieved_bandwidth_bytes_per_s),
                    _num(t.decode_ceiling_tps),
                    _num(t.efficiency),
                    _num(t.achieved_flops_per_s),
                    _num(t.prefill_ceiling_tps),
                    _num(t.other_cpu_load),
                    run.busy,
                    run.noisy,
                    run.app_version,
                    run.llama.llama_cpp_commit or "",
                    run.catalogue_date,
                ]
            )
    return buf.getvalue()


def _num(v: float | None) -> str:
    return "" if v is None else f"{v:.6g}"


def _ceiling_cell(t: TestResult) -> str:
    if t.kind == "decode" and t.decode_ceiling_tps:
        return f"{t.decode_ceiling_tps:.1f}"
    if t.kind == "prefill" and t.prefill_ceiling_tps:
        return f"{t.prefill_ceiling_tps:.0f}"
    return "n/a"


def to_markdown(run: RunResult) -> str:
    """A llama-bench-like table with the ceiling columns, the notes and the command line."""
    m = run.model
    size = f"{m.weights_bytes / GiB:.2f} GiB"
    params = f"{m.n_params / 1e9:.2f} B"
    lines = [
        f"# {m.name} ({m.file_type}) on {_device(run)}",
        "",
        f"Run {run.id}, {time.strftime('%Y-%m-%d %H:%M', time.localtime(run.created_at))}; "
        f"llama-cpp-python {run.llama.llama_cpp_python_version or '?'}, backend "
        f"{_backend(run) or '?'}, {run.llama.threads} threads, "
        f"{run.config.reps} repetitions.",
        "",
        "Made with " + "; ".join(f"{label} {value}" for label, value in provenance(run)) + ".",
        "",
        "| model | size | params | backend | test | t/s | ceiling t/s | efficiency | GB/s moved |",
        "|---|---|---|---|---|---:|---:|---:|---:|",
    ]
    for t in run.tests:
        eff = f"{t.efficiency:.0%}" if t.efficiency else "n/a"
        bw = (
            f"{t.achieved_bandwidth_bytes_per_s / GB:.1f}"
            if t.achieved_bandwidth_bytes_per_s
            else ""
        )
        lines.append(
            f"| {m.architecture} {m.file_type} | {size} | {params} | {_backend(run)} "
            f"| {t.name} | {t.tokens_per_s:.2f} ± {t.stddev:.2f} | {_ceiling_cell(t)} "
            f"| {eff} | {bw} |"
        )
    if run.notes:
        lines += ["", *[f"> {n}" for n in run.notes]]
    lines += [
        "",
        "Reproduce with llama.cpp's own tool:",
        "",
        "```",
        llama_bench_command(run),
        "```",
        "",
    ]
    return "\n".join(lines)


def export_runs(runs: Sequence[RunResult], path: str | Path) -> Path:
    """Write runs in the format the file name's extension asks for (.csv, .json, .md)."""
    from advisor.core.infra.atomic import atomic_write_text

    p = Path(path)
    ext = p.suffix.lower()
    if ext == ".csv":
        text = to_csv_text(runs)
    elif ext == ".json":
        text = to_json_text(runs)
    elif ext in (".md", ".markdown"):
        text = "\n\n".join(to_markdown(r) for r in runs)
    else:
        raise ValueError(f"Cannot export to '{p.suffix}'; use .csv, .json or .md.")
    atomic_write_text(p, text)
    return p

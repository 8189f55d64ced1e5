"""`advisor workload import|list|size|delete`: your own traffic as a workload, and the cards
that serve it.

    advisor workload import FILE [--name NAME] [--format F] [--model MODEL.gguf] [--json]
    advisor workload list [--json]
    advisor workload size NAME --device "RTX 4090" [--shape S --quant Q | --model F]
                          [--ttft S] [--min-tps N] [--json]
    advisor workload delete NAME

Only statistics are kept, never the text of a conversation.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from advisor.cli.output import Output, format_pairs, format_table
from advisor.core.catalogue.catalogue import load_catalogue
from advisor.core.infra.errors import InputError
from advisor.core.infra.paths import app_paths
from advisor.core.infra.validate import number, whole_number
from advisor.core.predict.fitting.shipped import load_speed_model
from advisor.core.traffic import TrafficStats
from advisor.usecases.machine import cached_report, host_for
from advisor.usecases.models import facts_for_choice
from advisor.usecases.prices import price_json, price_text, saved_prices
from advisor.usecases.sizing import (
    DEFAULT_MIN_TPS,
    DEFAULT_TTFT_S,
    MAX_MIN_TPS,
    MAX_TTFT_S,
    Load,
    Sizing,
    SizingTarget,
    devices_that_serve,
    size_named,
)
from advisor.usecases.workloads import (
    as_workload,
    default_name,
    find_saved,
    import_workload,
    saved_workloads,
    set_aside_files,
    set_aside_sentence,
    tokens_basis,
    workload_store,
)


def run(args: argparse.Namespace) -> Output:
    action = args.workload_command
    if action == "import":
        return _import(args)
    if action == "list":
        return _list()
    if action == "size":
        return _size(args)
    if action == "delete":
        return _delete(args)
    raise InputError("Say what to do: advisor workload import|list|size|delete (see --help).")


def _progress_printer(quiet: bool):  # type: ignore[no-untyped-def]
    if quiet or not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        share = done / total if total else 1.0
        print(f"\rreading... {share:4.0%}", end="", file=sys.stderr, flush=True)

    return show


def _import(args: argparse.Namespace) -> Output:
    paths = app_paths().ensure()
    name = args.name or default_name(args.file)
    imported = import_workload(
        args.file, paths=paths, name=name, model=args.model, fmt=args.format,
        progress=_progress_printer(args.json),
    )  # fmt: skip
    if not args.json and sys.stderr.isatty():
        print("\r" + " " * 20 + "\r", end="", file=sys.stderr)
    saved = imported.saved
    assert saved is not None
    data: dict[str, Any] = {
        "name": saved.name,
        "file": str(args.file),
        "stats": imported.stats.to_json(),
        "workload": as_workload(saved).to_json(),
        "kept": "statistics only; no text of any conversation is stored",
    }
    return Output(data, lambda: _stats_text(saved.name, imported.stats))


def _stats_text(name: str, s: TrafficStats) -> str:
    def fig(v: float | None, unit: str = "") -> str:
        return "unknown" if v is None else f"{v:,.0f}{unit}"

    rows = [
        ("Saved as", f"'{name}' (use it with --workload '{name}')"),
        ("Format", s.format),
        (
            "Requests",
            f"{s.requests:,}"
            + (f" in {s.conversations:,} conversations" if s.conversations else ""),
        ),
        ("Tokens", tokens_basis(s)),
        (
            "New prompt tokens",
            f"median {fig(s.prompt_tokens_median)}, p90 {fig(s.prompt_tokens_p90)}",
        ),
        (
            "Answer tokens",
            f"median {fig(s.answer_tokens_median)}, p90 {fig(s.answer_tokens_p90)}",
        ),
        (
            "History per turn",
            f"median {fig(s.history_tokens_median)}, p90 {fig(s.history_tokens_p90)}",
        ),
        ("Requests per day", fig(s.requests_per_day)),
        (
            "At once",
            f"peak {fig(s.peak_concurrency)}, typical {fig(s.typical_concurrency)} "
            f"({s.concurrency_basis})",
        ),
        ("Idle", "unknown" if s.idle_share is None else f"{s.idle_share:.0%} of the time"),
        (
            "Prefix cache",
            "unknown"
            if s.prefix_cache_share is None
            else f"{s.prefix_cache_share:.0%} of prompt tokens re-sent history",
        ),
        ("Kept", "statistics only; no text of any conversation is stored"),
    ]
    notes = "\n".join(f"  - {n}" for n in s.notes)
    return format_pairs(rows) + ("\nNotes:\n" + notes if notes else "")


def _list() -> Output:
    paths = app_paths()
    items = saved_workloads(paths)  # a damaged file or record is set aside and told
    aside = set_aside_sentence(paths)
    data = {
        "workloads": [
            {**v.to_json(), "workload": as_workload(v).to_json()} for v in items.values()
        ],
        "set_aside": [str(p) for p in set_aside_files(paths)],
    }

    def text() -> str:
        if not items:
            return (aside + "\n" if aside else "") + (
                "No saved workloads; 'advisor workload import FILE' adds one."
            )
        rows = []
        for v in items.values():
            w = as_workload(v)
            rows.append((v.name, v.stats.format, f"{v.stats.requests:,}", w.prompt_tokens,
                         w.answer_tokens, w.history_tokens, w.concurrency,
                         w.requests_per_day))  # fmt: skip
        table = format_table(
            ("name", "from", "requests", "prompt", "answer", "history", "at once", "per day"),
            rows, right=(2, 3, 4, 5, 6, 7),
        )  # fmt: skip
        return table + (f"\n{aside}" if aside else "")

    return Output(data, text)


def _delete(args: argparse.Namespace) -> Output:
    paths = app_paths()
    if not workload_store(paths).delete(args.name):
        names = ", ".join(saved_workloads(paths)) or "none"
        aside = set_aside_sentence(paths)  # it may have gone aside with a damaged file
        raise InputError(
            f"There is no saved workload '{args.name}' (saved: {names})."
            + (f" {aside}" if aside else "")
        )
    return Output({"deleted": args.name}, lambda: f"Deleted the workload '{args.name}'.")


def _size(args: argparse.Namespace) -> Output:
    paths = app_paths()
    match = find_saved(args.name, paths)
    if match is not None:
        load = Load.from_stats(match.stats, match.name)
    else:
        from advisor.core.predict.conditions.workloads import get_workload

        load = Load.from_workload(get_workload(args.name))
    if args.peak is not None:
        peak = whole_number("--peak", args.peak, 1, 100_000)  # one person at once is a question
        load = Load(peak, load.prompt_p95, load.prompt_median, load.history_p95,
                    load.answer_median, load.source + f", sized for {peak} at once")  # fmt: skip
    target = SizingTarget(
        ttft_p95_s=number("--ttft", args.ttft, 0, MAX_TTFT_S) if args.ttft else DEFAULT_TTFT_S,
        min_decode_tps=number("--min-tps", args.min_tps, 0, MAX_MIN_TPS)
        if args.min_tps
        else DEFAULT_MIN_TPS,
    )
    catalogue = load_catalogue()
    facts = facts_for_choice(args.model, args.shape or (None if args.model else "llama-3.1-8b"),
                             args.quant)  # fmt: skip
    host = host_for(cached_report(paths))
    sizing: Sizing | None = None
    speed_model = load_speed_model()
    if args.device:
        sizing = size_named(facts, args.device, load, target, catalogue=catalogue, host=host,
                            choose="try --device '{}'.", speed_model=speed_model)  # fmt: skip
    servers = devices_that_serve(facts, load, target, catalogue=catalogue, host=host,
                                 speed_model=speed_model,
                                 user_prices=saved_prices(paths))  # fmt: skip
    data = {
        "model": facts.name,
        "load": load.__dict__,
        "target": target.__dict__,
        "sizing": sizing.to_json() if sizing else None,
        "devices_with_one_or_two_cards": [{**s.__dict__, **price_json(s.price)} for s in servers],
    }

    def text() -> str:
        out = []
        if sizing is not None:
            out.append(sizing.answer)
            out.append("")
        out.append(f"Devices that serve it with one or two cards or machines ({len(servers)}):")
        rows = [(s.device, s.how_many, f"{s.decode_per_user_tps:.1f}", f"{s.ttft_p95_s:.2f}",
                 s.basis, price_text(s.price, "-"))
                for s in servers[:25]]  # fmt: skip
        out.append(format_table(("device", "how many", "t/s each", "TTFT p95 s", "basis",
                                 "price"), rows, right=(1, 2, 3)))  # fmt: skip
        return "\n".join(out)

    return Output(data, text)

"""Workloads by name: the built-in presets and the ones imported from the user's own traffic.

One place answers "what does `--workload NAME` (or the workload box) mean": a preset
('chat', 'summarise', ...) or a workload saved by `advisor workload import` / the Workload
page. The CLI and the GUI both resolve names here, so the same name gives the same numbers.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from advisor.core.infra.lookup import closest, did_you_mean, normalise_key
from advisor.core.infra.paths import AppPaths
from advisor.core.predict.conditions.workloads import (
    PRESETS,
    UnknownWorkloadError,
    Workload,
    get_workload,
)
from advisor.core.traffic import (
    EstimatedCounter,
    SavedWorkload,
    TokenCounter,
    TrafficImportError,
    TrafficStats,
    WorkloadStore,
    import_traffic,
)
from advisor.core.traffic.records import FORMATS

WORKLOADS_FILE = "workloads.json"
DEFAULT_REQUESTS_PER_DAY = 50  # where the file has no timestamps (as the custom workload)


def workload_store(paths: AppPaths) -> WorkloadStore:
    """The saved workloads of this user (next to the run history)."""
    return WorkloadStore(paths.history_file.parent / WORKLOADS_FILE)


def as_workload(saved: SavedWorkload) -> Workload:
    """A saved workload as the Workload every projection takes."""
    n = saved.numbers
    s = saved.stats
    rpd = n.get("requests_per_day")
    return Workload(
        id=saved.name,
        label=saved.name,
        description=(
            f"Imported from a {s.format} file: {s.requests:,} requests, "
            f"tokens {s.tokens} ({s.counter})."
        ),
        prompt_tokens=max(1, int(n["prompt_tokens"] or 1)),
        answer_tokens=max(1, int(n["answer_tokens"] or 1)),
        history_tokens=int(n["history_tokens"] or 0),
        concurrency=max(1, int(n["concurrency"] or 1)),
        requests_per_day=int(rpd) if rpd else DEFAULT_REQUESTS_PER_DAY,
    )


def saved_workloads(paths: AppPaths) -> dict[str, SavedWorkload]:
    """The saved workloads by name (the good ones, when some were damaged and set aside:
    the front end is told in one sentence, through `notices`)."""
    return workload_store(paths).load()


def set_aside_files(paths: AppPaths) -> list[Path]:
    """Damaged saved-workload files and records set aside earlier (kept, never deleted)."""
    folder = workload_store(paths).path.parent
    try:
        return sorted(folder.glob("workloads.corrupt-*"))
    except OSError:
        return []


def set_aside_sentence(paths: AppPaths) -> str:
    """Where set-aside workloads are, in a sentence ('' when there are none)."""
    aside = set_aside_files(paths)
    if not aside:
        return ""
    what = "1 file" if len(aside) == 1 else f"{len(aside)} files"
    return (
        f"Workloads set aside as damaged are kept in {aside[0].parent} ({what} named "
        "workloads.corrupt-*)."
    )


def find_saved(name: str, paths: AppPaths) -> SavedWorkload | None:
    """The saved workload called `name` (case and spacing as `--workload` ignores them)."""
    key = normalise_key(name)
    return next((v for k, v in saved_workloads(paths).items() if normalise_key(k) == key), None)


def resolve_workload(name: str, paths: AppPaths | None) -> Workload:
    """A preset by id, or a saved workload by name (case-insensitively); one sentence if
    neither, with the closest names."""
    try:
        return get_workload(name)
    except UnknownWorkloadError:
        if paths is None:
            raise
    found = find_saved(name, paths)
    if found is not None:
        return as_workload(found)
    saved = saved_workloads(paths)
    key = normalise_key(name)
    choices = {**{k: k for k in PRESETS}, **{normalise_key(k): k for k in saved}}
    close = [choices[c] for c in closest(key, choices, n=2, cutoff=0.3)]
    hint = did_you_mean(close[0], close) if close else ""
    names = [*PRESETS, *saved]
    aside = set_aside_sentence(paths)
    raise UnknownWorkloadError(
        f"Unknown workload '{name}'.{hint} Choose one of: {', '.join(names)}, or custom"
        + ("" if saved else "; 'advisor workload import FILE' adds your own")
        + "."
        + (f" {aside}" if aside else "")
    )


@dataclass(frozen=True)
class Imported:
    """One import: the statistics, and the saved workload when it was given a name."""

    stats: TrafficStats
    saved: SavedWorkload | None
    workload: Workload | None


def count_with(model: str | os.PathLike[str] | None) -> TokenCounter:
    """The model's own tokenizer (in a child process) when a GGUF is given, else an
    estimate that says it is one."""
    if model is None:
        return EstimatedCounter()
    from advisor.bench.token_counter import ModelTokenCounter

    return ModelTokenCounter(model)


def import_workload(
    path: str | os.PathLike[str],
    *,
    paths: AppPaths,
    name: str | None = None,
    model: str | os.PathLike[str] | None = None,
    fmt: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
) -> Imported:
    """Read a traffic file, count its tokens, derive its statistics; save them as `name`.

    Only numbers are kept. A file that cannot be read, an unknown format or a tokenizer that
    fails raise TrafficImportError with one sentence; saved workloads are untouched then.
    """
    if fmt is not None and fmt not in FORMATS:
        raise TrafficImportError(
            f"Unknown format '{fmt}'; choose one of: {', '.join(FORMATS)} (or leave it out to "
            "detect it from the content)."
        )
    if name is not None:
        from advisor.core.traffic.store import validate_name

        name = validate_name(name)
        if _is_builtin(name):
            raise TrafficImportError(
                f"'{name}' is the name of a built-in workload; choose another name."
            )
    counter = count_with(model)
    try:
        if hasattr(counter, "start"):
            counter.start()
        stats = import_traffic(path, counter, progress=progress, cancel=cancel, fmt=fmt)
    finally:
        if hasattr(counter, "close"):
            counter.close()
    if name is None:
        return Imported(stats, None, None)
    saved = workload_store(paths).save(name, stats)  # what it set aside is told, once
    return Imported(stats, saved, as_workload(saved))


def tokens_basis(stats: TrafficStats) -> str:
    """What the token counts rest on, in words (the same on the CLI and the Workload page)."""
    if stats.tokens == "exact" and "estimate" in stats.counter:
        return "exact (the file's own usage figures)"
    if stats.tokens == "partly exact":
        return f"partly exact (usage figures where the file has them, else {stats.counter})"
    return f"{stats.tokens} ({stats.counter})"


def _is_builtin(name: str) -> bool:
    return normalise_key(name) in {normalise_key(k) for k in PRESETS} | {"custom"}


def default_name(path: str | os.PathLike[str]) -> str:
    """A workload name from a file name: 'server-2024-06.log' -> 'server-2024-06'. A file
    named like a built-in workload ('chat.json') gets '-imported' after it, and characters a
    name cannot hold (a newline, a terminal escape) are left out."""
    from advisor.core.traffic.store import MAX_NAME_CHARS

    stem = "".join(c for c in Path(path).name.split(".")[0] if c.isprintable()).strip()
    stem = stem[:MAX_NAME_CHARS].strip() or "imported"
    if _is_builtin(stem):
        stem = f"{stem[: MAX_NAME_CHARS - len('-imported')]}-imported"
    return stem


def stats_rows(s: TrafficStats) -> list[tuple[str, str]]:
    """An import's statistics as (label, value) rows a person reads."""

    def fig(v: float | None, unit: str = "") -> str:
        return "unknown" if v is None else f"{v:,.0f}{unit}"

    def spread(median: float | None, p90: float | None) -> str:
        return f"median {fig(median)}, 90th percentile {fig(p90)}"

    return [
        (
            "Requests",
            f"{s.requests:,}"
            + (f" in {s.conversations:,} conversations" if s.conversations else ""),
        ),
        ("New prompt tokens", spread(s.prompt_tokens_median, s.prompt_tokens_p90)),
        ("Answer tokens", spread(s.answer_tokens_median, s.answer_tokens_p90)),
        ("History re-sent per turn", spread(s.history_tokens_median, s.history_tokens_p90)),
        ("Requests per day", fig(s.requests_per_day)),
        (
            "People at once",
            f"peak {fig(s.peak_concurrency)}, typical {fig(s.typical_concurrency)}",
        ),
        ("Idle", "unknown" if s.idle_share is None else f"{s.idle_share:.0%} of the time"),
        ("Tokens counted", tokens_basis(s)),
    ]


def import_message(requests: int, name: str) -> str:
    """The status line after an import was saved."""
    return f"Imported {requests:,} requests as '{name}'."

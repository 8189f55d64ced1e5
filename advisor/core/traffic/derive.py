"""Workload statistics from counted turns, and the numbers the app's Workload takes.

Percentiles are numpy's default (linear interpolation between the two nearest ranks: the
p-th percentile of n sorted values sits at rank p/100 * (n - 1), counting from 0).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np

from advisor.core.traffic.errors import TrafficImportError
from advisor.core.traffic.records import CountedTurn

ASSUMED_DECODE_TPS = 20.0  # answer speed assumed where an export has no end times
SCHEMA = 1

BASIS_TIMES = "measured start and end times"
BASIS_ESTIMATED = f"start times, with ends estimated at {ASSUMED_DECODE_TPS:g} tokens/s"
BASIS_ORDER = "the order of slot launch and release lines (no timestamps)"
BASIS_NONE = "none (no times in the file)"


@dataclass(frozen=True)
class TrafficStats:
    """What a file of real traffic says about its workload; numbers only, never text."""

    format: str
    requests: int
    conversations: int | None  # None where the format has no conversations (server logs)
    prompt_tokens_median: float  # NEW tokens per request
    prompt_tokens_p90: float
    answer_tokens_median: float
    answer_tokens_p90: float
    history_tokens_median: float  # tokens re-sent from earlier turns, per request
    history_tokens_p90: float
    requests_per_day: float | None  # over the span of the timestamps
    span_s: float | None
    peak_concurrency: int | None
    typical_concurrency: float | None  # median over busy time
    busy_p90_concurrency: float | None  # p90 over busy time
    idle_share: float | None  # share of the span with no request running
    concurrency_basis: str
    prefix_cache_share: float | None  # share of prompt tokens a prefix cache would reuse
    malformed_skipped: int
    tokens: str  # "exact", "estimated" or "partly exact"
    counter: str
    notes: tuple[str, ...] = ()
    schema: int = SCHEMA
    # the 95th percentiles sizing uses (None in workloads saved before they were kept)
    prompt_tokens_p95: float | None = None
    history_tokens_p95: float | None = None

    def to_json(self) -> dict[str, Any]:
        """A dict of JSON types (notes as a list)."""
        out = asdict(self)
        out["notes"] = list(self.notes)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TrafficStats:
        """Back from `to_json`; unknown keys (from newer versions) are ignored."""
        known = {f.name for f in fields(cls)}
        kept = {k: v for k, v in data.items() if k in known}
        kept["notes"] = tuple(kept.get("notes", ()))
        return cls(**kept)


class _Accumulator:
    def __init__(self) -> None:
        self.prompt = array("q")
        self.answer = array("q")
        self.history = array("q")
        self.starts = array("d")
        self.ends = array("d")
        self.concurrent = array("q")
        self.conversations = 0
        self.exact = 0
        self.estimated_ends = 0

    def add(self, t: CountedTurn) -> None:
        self.prompt.append(t.prompt_tokens)
        self.answer.append(t.answer_tokens)
        self.history.append(t.history_tokens)
        self.exact += t.exact
        self.conversations += t.opens_conversation
        if t.concurrent_at_start is not None:
            self.concurrent.append(t.concurrent_at_start)
        if t.start_s is not None:
            end = t.end_s
            if end is None:
                end = t.start_s + t.answer_tokens / ASSUMED_DECODE_TPS
                self.estimated_ends += 1
            self.starts.append(t.start_s)
            self.ends.append(max(end, t.start_s))


def derive_stats(
    turns: Iterable[CountedTurn],
    fmt: str,
    counter_name: str,
    malformed: int = 0,
    notes: Sequence[str] = (),
) -> TrafficStats:
    """Statistics of a stream of counted turns (consumed once, in constant memory per turn)."""
    acc = _Accumulator()
    for turn in turns:
        acc.add(turn)
    n = len(acc.prompt)
    if n == 0:
        raise TrafficImportError(
            "The file holds no requests (no user turns or finished tasks); choose a file "
            "with traffic in it."
        )
    prompt, answer, history = (
        np.frombuffer(a, dtype=np.int64) for a in (acc.prompt, acc.answer, acc.history)
    )
    conc = _concurrency(acc)
    span, rpd = _rate(acc)
    sent = int(prompt.sum() + history.sum())
    tokens = "exact" if acc.exact == n else "estimated" if acc.exact == 0 else "partly exact"
    return TrafficStats(
        format=fmt,
        requests=n,
        conversations=acc.conversations or None,
        prompt_tokens_median=_q(prompt, 50),
        prompt_tokens_p90=_q(prompt, 90),
        answer_tokens_median=_q(answer, 50),
        answer_tokens_p90=_q(answer, 90),
        history_tokens_median=_q(history, 50),
        history_tokens_p90=_q(history, 90),
        requests_per_day=rpd,
        span_s=span,
        peak_concurrency=conc[0],
        typical_concurrency=conc[1],
        busy_p90_concurrency=conc[2],
        idle_share=conc[3],
        concurrency_basis=conc[4],
        prefix_cache_share=float(history.sum()) / sent if sent else None,
        malformed_skipped=malformed,
        tokens=tokens,
        counter=counter_name,
        notes=tuple(notes) + _own_notes(acc, conc[4], tokens),
        prompt_tokens_p95=_q(prompt, 95),
        history_tokens_p95=_q(history, 95),
    )


def _q(values: np.ndarray, pct: float) -> float:
    return round(float(np.percentile(values, pct)), 3)


def _rate(acc: _Accumulator) -> tuple[float | None, float | None]:
    if len(acc.starts) < 2:
        return None, None
    starts = np.frombuffer(acc.starts)
    span = float(np.frombuffer(acc.ends).max() - starts.min())
    if span <= 0:
        return None, None
    return round(span, 3), round(len(acc.starts) * 86400.0 / span, 3)


Concurrency = tuple[int | None, float | None, float | None, float | None, str]


def _concurrency(acc: _Accumulator) -> Concurrency:
    """(peak, median busy, p90 busy, idle share, basis) of the requests' overlap."""
    starts, ends = np.frombuffer(acc.starts), np.frombuffer(acc.ends)
    keep = ends > starts  # a request that takes no time overlaps nothing
    if keep.any():
        basis = BASIS_ESTIMATED if acc.estimated_ends else BASIS_TIMES
        return (*sweep(starts[keep], ends[keep]), basis)
    if len(acc.concurrent):
        levels = np.frombuffer(acc.concurrent, dtype=np.int64)
        return int(levels.max()), _q(levels, 50), _q(levels, 90), None, BASIS_ORDER
    return None, None, None, None, BASIS_NONE


def sweep(starts: np.ndarray, ends: np.ndarray) -> tuple[int, float, float, float]:
    """Sweep over start (+1) and end (-1) events: (peak, median busy, p90 busy, idle share).

    At equal times ends come first, so back-to-back requests do not overlap. The median and
    p90 are time-weighted over busy time (at least one request running); idle share is the
    time with none running over the span from the first start to the last end.
    """
    times = np.concatenate([starts, ends])
    deltas = np.concatenate([np.ones(len(starts), np.int64), -np.ones(len(ends), np.int64)])
    order = np.lexsort((deltas, times))
    times, levels = times[order], np.cumsum(deltas[order])
    durations = np.diff(times)
    levels = levels[:-1]
    span = float(times[-1] - times[0])
    busy = levels > 0
    busy_levels, busy_time = levels[busy], durations[busy]
    by_level = np.argsort(busy_levels, kind="stable")
    cum = np.cumsum(busy_time[by_level])
    total = float(cum[-1])

    def weighted(q: float) -> float:
        i = min(int(np.searchsorted(cum, q * total)), len(cum) - 1)
        return float(busy_levels[by_level][i])

    idle = float(durations[~busy].sum()) / span if span > 0 else 0.0
    return int(levels.max()), weighted(0.5), weighted(0.9), round(idle, 6)


def _own_notes(acc: _Accumulator, basis: str, tokens: str) -> tuple[str, ...]:
    out = []
    if tokens != "exact":
        out.append(
            "Token counts are estimates (about 4 bytes of text per token); a count with the "
            "model's own tokenizer gives exact figures."
        )
    if basis == BASIS_ESTIMATED:
        out.append(
            f"The file has no end times for {_requests(acc.estimated_ends)}, so each answer is "
            f"assumed to stream at {ASSUMED_DECODE_TPS:g} tokens/s; concurrency and idle time "
            "are estimates."
        )
    elif basis == BASIS_ORDER:
        out.append(
            "The log has no timestamps (llama-server --log-timestamps adds them), so "
            "concurrency comes from the order of slot lines and requests per day is unknown."
        )
    return tuple(out)


def _requests(n: int) -> str:
    return "1 request" if n == 1 else f"{n} requests"


def workload_numbers(stats: TrafficStats) -> dict[str, int | None]:
    """The five numbers of the app's Workload, for `custom_workload(**numbers)`.

    - prompt_tokens: the p90 of NEW prompt tokens. Time to first token grows with the prompt,
      and the long pastes are the waits people notice; sizing on the p90 means 9 requests in
      10 start answering at least as quickly as predicted, where the median would hide them.
    - answer_tokens: the median. Answer length does not change the speed (tokens/s), only how
      long an answer streams; the median is the typical wait.
    - history_tokens: the p90. History sets the depth of the KV cache: it must fit in memory
      and it slows each token. A machine sized for the median chat fails, rather than slows,
      on every long one.
    - concurrency: the p90 of concurrency over busy time, rounded up (1 without times). The
      peak is often a one-off burst that a short queue absorbs; the p90 is the load the
      server carries for all but a tenth of its busy time.
    - requests_per_day: requests over the span of the timestamps, or None without times (the
      caller then keeps its own figure).
    """
    conc = stats.busy_p90_concurrency
    rpd = stats.requests_per_day
    return {
        "prompt_tokens": round(stats.prompt_tokens_p90),
        "answer_tokens": round(stats.answer_tokens_median),
        "history_tokens": round(stats.history_tokens_p90),
        "concurrency": max(1, math.ceil(conc)) if conc is not None else 1,
        "requests_per_day": round(rpd) if rpd is not None else None,
    }

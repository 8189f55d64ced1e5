"""The longest context this machine can hold for this model, found by trying.

Estimates of the KV cache and llama.cpp's buffers miss by 20-30% once every kernel is loaded,
so this allocates for real: with the model loaded once, it creates contexts of growing size (a
binary search on the context length, the KV cache type as chosen), touches every byte of each
(so an over-committing OS cannot pretend), frees it, and keeps the largest that worked.

It never exhausts memory: it never tries more than the free memory it read before the model
loaded allows (the estimate, with the usual 10% margin), and it stops at its time budget with
the largest context found so far. Only the benchmark child imports this.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from advisor.bench.llama_model import BenchError, Cancelled, LlamaModel
from advisor.core.model.facts import ModelFacts
from advisor.core.model.memory import memory_need
from advisor.core.runs.config import BenchConfig
from advisor.core.runs.preflight import Available

STEP_TOKENS = 256  # contexts are tried in multiples of this


@dataclass(frozen=True)
class Longest:
    tokens: int  # the largest context that loaded (0: none did)
    tried: int  # contexts tried
    seconds: float
    capped_by: str  # "trained context" | "free memory" | "time budget" | "search"
    note: str


def memory_cap_tokens(facts: ModelFacts, config: BenchConfig, room: Available) -> int:
    """The largest context the free memory read at the start allows by the estimate."""
    top = facts.context_length or 131_072
    if room.bytes is None:
        return top
    usable = room.bytes * (1 - room.margin)
    lo, hi = 0, top
    while lo < hi:
        mid = (lo + hi + 1) // 2
        need = memory_need(facts, mid, 1, config.cache_type_k, config.n_ubatch).total_bytes
        lo, hi = (mid, hi) if need <= usable else (lo, mid - 1)
    return lo


def _loads(llama: LlamaModel, config: BenchConfig, n_ctx: int, threads: int) -> bool:
    """Create a context of n_ctx tokens, touch its KV cache, free it: did it work?"""
    try:
        ctx = llama.new_context(config, n_ctx, threads)
    except BenchError:
        return False
    try:
        C = llama.C
        C.llama_memory_clear(C.llama_get_memory(ctx), True)  # writes every byte of the cache
        return True
    finally:
        llama.C.llama_free(ctx)


def find_longest_context(
    llama: LlamaModel,
    config: BenchConfig,
    facts: ModelFacts,
    room: Available,
    threads: int,
    cancel: threading.Event,
    *,
    clock: Callable[[], float] = time.monotonic,
    loads: Callable[[int], bool] | None = None,
) -> Longest:
    """Binary search between 0 and min(trained context, memory cap) by trial allocation."""
    started = clock()
    budget = config.longest_context_budget_s
    trained = facts.context_length or 131_072
    cap = memory_cap_tokens(facts, config, room)
    top = min(trained, cap)
    capped_by = "trained context" if trained <= cap else "free memory"
    attempt = loads or (lambda n: _loads(llama, config, n, threads))
    good, bad, tried = 0, top + 1, 0
    candidate = top
    while good < bad - 1 and candidate > good:
        if cancel.is_set():
            raise Cancelled()
        if tried and clock() - started > budget:
            capped_by = "time budget"
            break
        tried += 1
        if attempt(candidate):
            good = candidate
        else:
            bad = candidate
            capped_by = "search"
        if bad - good <= STEP_TOKENS:
            break
        candidate = max(good + STEP_TOKENS, ((good + bad) // 2) // STEP_TOKENS * STEP_TOKENS)
        candidate = min(candidate, bad - 1)
    seconds = clock() - started
    return Longest(good, tried, seconds, capped_by, _note(good, trained, cap, capped_by, seconds))


def _note(tokens: int, trained: int, cap: int, capped_by: str, seconds: float) -> str:
    if tokens == 0:
        return "Longest context: not even a short context could be allocated beside the model."
    why = {
        "trained context": f"the model's full trained context ({trained:,} tokens) fits",
        "free memory": (
            f"limited by the free memory at the start (the search never goes past the "
            f"{cap:,} tokens it allows)"
        ),
        "time budget": f"the search stopped at its time budget after {seconds:.0f} s",
        "search": "a larger context failed to allocate",
    }[capped_by]
    return f"Longest context that loaded here: {tokens:,} tokens ({why})."

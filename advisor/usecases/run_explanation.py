"""What a run's numbers mean, in a hobbyist's words: one line per finding, each with a short
title, for the Benchmark page, the report card and the command line alike."""

from __future__ import annotations

from dataclasses import dataclass

from advisor.core.infra.units import GB
from advisor.core.runs.results import RunResult, TestResult

# a deep-context decode that keeps less than this share of what the larger KV cache alone
# would leave is slowed by attention's own arithmetic as well (CPUs, no flash attention)
ATTENTION_BOUND_SHARE = 0.8


@dataclass(frozen=True)
class Finding:
    """One line of the explanation: a title ('Writing', or '' for none) and its sentences."""

    title: str
    text: str


@dataclass(frozen=True)
class RunExplanation:
    findings: tuple[Finding, ...]

    def plain(self) -> str:
        return "\n".join(f"{f.title}: {f.text}" if f.title else f.text for f in self.findings)


def _first(run: RunResult, kind: str) -> TestResult | None:
    return next((t for t in run.tests if t.kind == kind and t.depth == 0 and t.batch == 1), None)


def explain_run(run: RunResult) -> RunExplanation:
    """The sentences that say what the numbers mean, in the order a person reads them."""
    tg, pp = _first(run, "decode"), _first(run, "prefill")
    findings = [
        f
        for f in (
            _writing(tg),
            _reading(pp),
            _deep(run, tg),
            _batched(run, tg),
            _energy(tg),
            _longest(run),
        )
        if f is not None
    ]
    return RunExplanation(tuple(findings))


def _writing(tg: TestResult | None) -> Finding | None:
    if not (tg and tg.bytes_per_token and tg.achieved_bandwidth_bytes_per_s):
        return None
    ceiling = (
        f", {tg.efficiency:.0%} of the {tg.decode_ceiling_tps:,.1f} tokens/s the memory "
        "bandwidth allows"
        if tg.efficiency and tg.decode_ceiling_tps
        else ""
    )
    return Finding(
        "Writing (decode)",
        f"{tg.tokens_per_s:,.1f} tokens/s. Each token reads "
        f"{tg.bytes_per_token / GB:,.2f} GB (all weights plus the KV cache), so memory moved at "
        f"{tg.achieved_bandwidth_bytes_per_s / GB:,.1f} GB/s{ceiling}. More bandwidth (GB/s) "
        "makes this faster; more compute does not.",
    )


def _reading(pp: TestResult | None) -> Finding | None:
    if not (pp and pp.achieved_flops_per_s):
        return None
    peak = pp.achieved_flops_per_s / pp.efficiency / 1e12 if pp.efficiency else 0.0
    ceiling = f", {pp.efficiency:.0%} of the {peak:,.2f} TFLOP/s compute peak" if peak else ""
    return Finding(
        "Reading (prefill)",
        f"{pp.tokens_per_s:,.0f} tokens/s, {pp.achieved_flops_per_s / 1e12:,.2f} "
        f"TFLOP/s{ceiling}. A {pp.n_prompt}-token prompt takes "
        f"{pp.n_prompt / pp.tokens_per_s:,.2f} s before the first word appears. More compute "
        "makes this faster.",
    )


def _deep(run: RunResult, tg: TestResult | None) -> Finding | None:
    deep = [t for t in run.tests if t.kind == "decode" and t.depth and t.batch == 1]
    if not (tg and deep):
        return None
    d = max(deep, key=lambda t: t.depth)
    measured = d.tokens_per_s / tg.tokens_per_s
    text = (
        f"After {d.depth:,} tokens of context, writing drops to {d.tokens_per_s:,.1f} tokens/s "
        f"({measured:.0%} of the empty-context speed)"
    )
    if d.decode_ceiling_tps and tg.decode_ceiling_tps:
        bandwidth_only = d.decode_ceiling_tps / tg.decode_ceiling_tps
        if measured < ATTENTION_BOUND_SHARE * bandwidth_only:
            text += (
                f". Reading the larger KV cache alone would explain a drop to "
                f"{bandwidth_only:.0%}; the rest is attention's own arithmetic over the long "
                "context, which weighs most on CPUs and without flash attention."
            )
        else:
            text += ": the KV cache is read for every token too, on top of the weights."
    else:
        text += ": the KV cache is read for every token too."
    return Finding("", text)


def _batched(run: RunResult, tg: TestResult | None) -> Finding | None:
    batched = [t for t in run.tests if t.kind == "decode" and t.depth == 0 and t.batch > 1]
    if not (tg and batched):
        return None
    b = max(batched, key=lambda t: t.batch)
    return Finding(
        "",
        f"With {b.batch} users at once, all of them together get {b.tokens_per_s:,.1f} tokens/s "
        f"({b.tokens_per_s / tg.tokens_per_s:.1f}x one user) and each gets "
        f"{(b.per_stream_tps or b.tokens_per_s / b.batch):,.1f}: the weights are read once for "
        "every user's next token, so serving several people costs little extra until compute "
        "runs out.",
    )


def _energy(tg: TestResult | None) -> Finding | None:
    if not (tg and tg.joules_per_token and tg.average_w):
        return None
    how = (
        "estimated from the TDP: power is not readable here"
        if tg.energy_method == "estimate"
        else f"measured: {tg.energy_source}"
    )
    return Finding(
        "Energy",
        f"about {tg.joules_per_token:,.2g} J per written token at {tg.average_w:,.0f} W ({how}).",
    )


def _longest(run: RunResult) -> Finding | None:
    if not run.longest_context_tokens:
        return None
    predicted = (
        f"; the estimate said {run.predicted_longest_context_tokens:,}"
        if run.predicted_longest_context_tokens
        else ""
    )
    return Finding(
        "Longest context",
        f"{run.longest_context_tokens:,} tokens loaded here{predicted}.",
    )

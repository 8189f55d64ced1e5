"""The Upgrade page's answer as one object: what it is about, whether the run behind it can be
trusted, the recommendation with its price, what a person would notice, and every ranked card.

The page, `advisor upgrade` and the report card all render this object; none of them words
anything of its own, so they say the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from advisor.core.infra.units import fmt_seconds
from advisor.core.model.facts import ModelFacts
from advisor.core.predict.advising.feel import READING_TPS
from advisor.core.predict.advising.verdict import Verdict
from advisor.core.predict.conditions.workloads import Workload
from advisor.core.runs.results import RunResult
from advisor.usecases.compare import why_no_gain
from advisor.usecases.prices import price_json, price_text
from advisor.usecases.run_trust import RunTrust
from advisor.usecases.upgrade import (
    Candidate,
    Ranking,
    best_within_budget,
    enough_for_less,
    for_less_sentence,
    placement_lines,
    why_no_pick,
)

NO_PRICE = "no price known: type one in its Price cell to weigh it against the others"


@dataclass(frozen=True)
class UpgradeAnswer:
    """Everything the answer says, as sentences and rows (no markup)."""

    model: str  # the model's label
    machine: str  # this machine's name
    measured: str  # 'measured on X: 3.2 tokens/s writing, 12 tokens/s reading' or 'predicted ...'
    unused: str  # a card in this machine the llama.cpp build does not use ('' none)
    trust: RunTrust
    headline: str  # 'Best within your budget: X ($1 (new, 2026-09))', or why there is no pick
    lines: tuple[str, ...]  # per workload: what a person would notice
    energy: str
    for_less: str
    basis: str
    workload: str  # the workload's label
    # where a card that runs the model over card and RAM keeps what, and the llama-server
    # command that runs it so ('' for a model on the card alone)
    placement: str
    command: str
    chosen: Candidate | None
    pick: Candidate | None
    ranking: Ranking | None

    @property
    def warning(self) -> str:
        return self.trust.warning

    @property
    def note(self) -> str:
        return self.trust.note

    @property
    def caption(self) -> str:
        return f"{self.model} on {self.machine}, {self.measured}."

    def body_lines(self) -> tuple[str, ...]:
        """What a person would notice, the month's electricity after the last of it."""
        last = " ".join(x for x in (*self.lines[-1:], self.energy) if x)
        return (*self.lines[:-1], last) if last else ()

    def verdict_lines(self) -> tuple[str, ...]:
        """The recommendation and what it means, one sentence or group per line."""
        rest = (*self.body_lines(), self.placement, self.command, self.for_less)
        return tuple(x for x in (self.headline, *rest) if x)

    def plain(self) -> str:
        """The answer as text (the command line)."""
        lines = [self.caption]
        lines += [x for x in (self.unused, self.warning, self.note) if x]
        return "\n".join([*lines, "", *self.verdict_lines(), self.basis])

    def to_json(self) -> dict[str, Any]:
        cards = self.ranking.candidates if self.ranking else ()
        return {
            "model": self.model,
            "machine": self.machine,
            "measured": self.measured,
            "workload": self.workload,
            "run": self.trust.to_json(),
            "warnings": [x for x in (self.warning, self.note, self.unused) if x],
            "verdict": list(self.verdict_lines()),
            "basis": self.basis,
            "pick": card_json(self.pick) if self.pick else None,
            "cards": [card_json(c) for c in cards],
        }


def card_json(c: Candidate) -> dict[str, Any]:
    """One ranked card for --json (SI units), with its price's kind, date and source."""
    p = c.projection
    return {
        "device": c.name,
        "device_id": c.target.device.id,
        "count": c.target.count,
        "memory_gb": p.memory_gb,
        "fits": p.fits,
        "request_s": p.request_s,
        "ttft_s": p.ttft_s,
        "decode_tps_per_user": p.per_user_tps,
        "speedup": c.speedup,
        "seconds_saved": c.seconds_saved,
        **price_json(c.price),
        "price_text": price_text(c.price, ""),
        "basis": p.basis,
        "within_budget": c.within_budget,
        "on_value_frontier": c.on_frontier,
        "watts": c.energy.watts if c.energy else None,
        "energy_cost_per_month": c.energy.cost_per_month if c.energy else None,
        "aside": c.aside,
        "notes": list(p.notes),
    }


def measured_words(run: RunResult | None, model: ModelFacts | None = None) -> str:
    """What the answer rests on: the run's figures (naming its model where it is not the one
    chosen: a run carried over; a synthetic run of a shape is that shape's), or that there is
    none yet."""
    if run is None:
        return "predicted (run a benchmark, step 3, to measure this machine)"
    tg = next((t for t in run.tests if t.kind == "decode" and t.batch == 1), None)
    pp = next((t for t in run.tests if t.kind == "prefill"), None)
    measured = ", ".join(
        x
        for x in (
            f"{tg.tokens_per_s:,.1f} tokens/s writing" if tg else "",
            f"{pp.tokens_per_s:,.0f} tokens/s reading" if pp else "",
        )
        if x
    )
    m = run.model
    other = model is not None and (m.n_params, m.file_type) != (model.n_params, model.file_type)
    carried = f" with {m.name}" if other else ""
    return f"measured{carried} on {run.device_name}: {measured}"


def unused_words(name: str | None) -> str:
    if not name:
        return ""
    return (
        f"You already have a {name}, which this llama.cpp build does not use (This machine says "
        "how to change that): its row, marked yours, is what it would do."
    )


def upgrade_answer(
    *,
    model: str,
    machine: str,
    trust: RunTrust,
    ranking: Ranking | None,
    workload: Workload,
    chosen: Candidate | None = None,
    verdict: Verdict | None = None,
    unused_name: str | None = None,
    model_facts: ModelFacts | None = None,
) -> UpgradeAnswer:
    """The answer for the chosen card (default: the pick, the fastest within budget that
    fits), with the verdict's sentences once it has been computed."""
    pick = best_within_budget(ranking) if ranking is not None else None
    chosen = chosen or pick
    base = dict(
        model=model, machine=machine, measured=measured_words(trust.used, model_facts),
        unused=unused_words(unused_name), trust=trust, workload=workload.label, pick=pick,
        ranking=ranking, chosen=chosen,
    )  # fmt: skip
    if chosen is None or ranking is None:
        why = why_no_pick(ranking) if ranking is not None else ""
        return UpgradeAnswer(
            **base, headline=why, lines=(), energy="", for_less="", basis="", placement="",
            command="",
        )  # fmt: skip
    lead = "Best within your budget" if chosen is pick else "Selected"
    headline = f"{lead}: {chosen.name} ({price_text(chosen.price, NO_PRICE)})"
    cheaper = enough_for_less(ranking, workload.streamed) if chosen is pick else None
    for_less = (
        for_less_sentence(cheaper, chosen, workload)
        if cheaper is not None and cheaper.price is not None and chosen.price is not None
        else ""
    )
    energy = ""
    if chosen.energy is not None and chosen.energy.cost_per_month is not None:
        energy = (
            f"Electricity for this workload: about ${chosen.energy.cost_per_month:,.2f} a "
            f"month ({chosen.energy.method})."
        )
    basis = (
        f"Basis: {chosen.projection.basis}. Reading speed is about {READING_TPS:.0f} tokens/s: "
        "faster writing than that is not felt in chat."
    )
    placement, command = placement_lines(chosen) or ("", "")
    return UpgradeAnswer(
        **base, headline=headline, lines=_gain_lines(chosen, ranking, workload, verdict),
        energy=energy, for_less=for_less, basis=basis, placement=placement, command=command,
    )  # fmt: skip


def _gain_lines(
    chosen: Candidate, ranking: Ranking, w: Workload, v: Verdict | None
) -> tuple[str, ...]:
    """What a person would notice: the verdict's sentence for the chosen workload, chat and a
    long document; before the verdict arrives, the time per answer."""
    if v is not None:
        focus = next((g for g in v.gains if g.workload == w.id), None)
        chat = next((g for g in v.gains if g.workload == "chat"), None)
        summarise = next((g for g in v.gains if g.workload == "summarise"), None)
        gains = dict.fromkeys(x for x in (focus, chat, summarise) if x is not None)
        return tuple(g.feel or f"{g.label}: {why_no_gain(g.missing)}." for g in gains)
    mine = ranking.mine
    if mine is not None and chosen.speedup:
        return (
            f"{w.label}: {fmt_seconds(chosen.projection.request_s)} per answer instead of "
            f"{fmt_seconds(mine.request_s)}.",
        )
    return ()


def run_model_label(run: RunResult) -> str:
    """The model's name as the app labels it: a file's with its quantisation, a synthetic
    shape's as it is (its name already says the quantisation)."""
    f = run.model
    return f.name if run.config.synthetic else f"{f.name} ({f.file_type})"

"""When more speed stops mattering: what a person at the prompt notices.

The speed-up factor is what a benchmark table shows; what a person feels is different. An
answer streamed faster than they read gains nothing they can use; a wait shorter than about a
second feels immediate; a long prompt read in 4 s instead of 41 s is the difference between
waiting and not. These constants turn the projections into that sentence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from advisor.core.infra.units import fmt_seconds

if TYPE_CHECKING:
    from advisor.core.predict.projecting.projection_types import Projection

# Silent reading runs at about 238 words a minute for non-fiction (Brysbaert, "How many words
# do we read per minute? A review and meta-analysis of reading rate", Journal of Memory and
# Language 109, 2019), i.e. 4 words/s; skimming reaches about twice that. At ~1.33 tokens per
# English word (OpenAI, "What are tokens and how to count them?": 1 token ~ 3/4 of a word)
# that is 5-11 tokens/s. Decode faster than READING_TPS outruns almost every reader.
READING_TPS = 10.0
# A delay under about a second keeps the user's flow of thought; 0.1 s feels instant
# (Nielsen, "Response Times: The 3 Important Limits", 1993, after Miller 1968 and Card 1991).
UNNOTICED_S = 1.0
INSTANT_S = 0.1  # the same study's limit for a response that feels instant
# a change smaller than this share of the wait is within what a person can tell apart
JUST_NOTICEABLE_SHARE = 0.2


def seconds(value: float) -> str:
    """'20 ms', '0.4 s', '12 s', '3 min 20 s', '1 h 05 min': a wait in words."""
    if value < 0.1:  # '0.0 s' would say no wait at all: the app's milliseconds
        return fmt_seconds(value)
    if value < 10:
        return f"{value:.1f} s"
    if value < 60:
        return f"{value:.0f} s"
    if value < 3600:
        minutes, rest = divmod(round(value), 60)
        return f"{minutes} min {rest:02d} s"
    hours, rest = divmod(round(value / 60), 60)
    return f"{hours} h {rest:02d} min"


def noticeable(before_s: float, after_s: float) -> bool:
    """Would a person notice the wait going from before_s to after_s?"""
    saved = before_s - after_s
    return saved >= UNNOTICED_S and saved >= JUST_NOTICEABLE_SHARE * before_s


@dataclass(frozen=True)
class Waits:
    """One workload's waits and speeds on two devices: `before` (what you have or would
    keep) and `after` (what you would buy)."""

    before_s: float
    after_s: float
    first_before_s: float = 0.0
    first_after_s: float = 0.0
    decode_before_tps: float = 0.0
    decode_after_tps: float = 0.0

    @classmethod
    def between(
        cls, before: Projection, after: Projection, decode_before_tps: float | None = None
    ) -> Waits:
        """From two projections of the same workload (`decode_before_tps`: a more cautious
        figure than the projection's own, e.g. its band's low end)."""
        return cls(
            before.request_s or 0.0,
            after.request_s or 0.0,
            before.ttft_s or 0.0,
            after.ttft_s or 0.0,
            (before.per_user_tps or 0.0) if decode_before_tps is None else decode_before_tps,
            after.per_user_tps or 0.0,
        )


def would_notice(streamed: bool, waits: Waits) -> bool:
    """Would a person notice going from `before` to `after`? The rule `feel_sentence` words:
    an answer read as it appears, already faster than reading, is felt only in its first
    word's wait; any other answer in its whole wait."""
    if streamed and waits.decode_before_tps >= READING_TPS:
        return noticeable(waits.first_before_s, waits.first_after_s)
    return noticeable(waits.before_s, waits.after_s)


def feel_sentence(label: str, *, streamed: bool, waits: Waits, target: str) -> str:
    """One sentence for one workload: what the person at the prompt would notice.

    `streamed`: the answer is read as it appears (chat), so decode beyond reading speed is not
    felt and the first token's wait is what counts; otherwise the whole request is waited for.
    """
    before_s, after_s = waits.before_s, waits.after_s
    first_before_s, first_after_s = waits.first_before_s, waits.first_after_s
    decode_before_tps, decode_after_tps = waits.decode_before_tps, waits.decode_after_tps
    whole = f"a whole answer takes {seconds(after_s)} instead of {seconds(before_s)}"
    if streamed and decode_before_tps >= READING_TPS:
        sooner = first_before_s - first_after_s
        first = (
            f", and the first word comes {seconds(sooner)} sooner"
            if noticeable(first_before_s, first_after_s)
            else ""
        )
        tail = "you will hardly notice" if not first else "you will notice the start"
        return (
            f"{label}: {tail}. You already get {decode_before_tps:,.0f} tokens/s, faster than "
            f"you read (about {READING_TPS:.0f}); on the {target} ({decode_after_tps:,.0f} "
            f"tokens/s) {whole}{first}, but you read along as it appears."
        )
    if streamed:
        return (
            f"{label}: you will notice. Today the answer comes slower than you read "
            f"({decode_before_tps:,.1f} tokens/s); on the {target} ({decode_after_tps:,.0f} "
            f"tokens/s) {whole}."
        )
    if not noticeable(before_s, after_s):
        if after_s > before_s * (1 + JUST_NOTICEABLE_SHARE):
            return (
                f"{label}: slower on the {target}: {seconds(after_s)} instead of "
                f"{seconds(before_s)}."
            )
        return f"{label}: about the same wait ({seconds(after_s)} instead of {seconds(before_s)})."
    return (
        f"{label}: it answers in {seconds(after_s)} instead of {seconds(before_s)}"
        + (
            f" (the first word after {seconds(first_after_s)} instead of {seconds(first_before_s)})"
            if noticeable(first_before_s, first_after_s) and first_before_s < 0.9 * before_s
            else ""
        )
        + "."
    )

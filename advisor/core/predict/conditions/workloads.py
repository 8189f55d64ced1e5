"""Workloads: the situations people run LLMs in, and what they cost in time.

The five presets are the five situations of the seed article (one user chatting, a long
document in, a long chat history, many users at once, a coding agent); `custom` takes any
numbers. A workload is prompt tokens, answer tokens, history already in the KV cache,
concurrent streams and requests per day.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from advisor.core.infra.errors import InputError
from advisor.core.infra.lookup import did_you_mean, normalise_key
from advisor.core.predict.conditions.test_point import TestPoint


@dataclass(frozen=True)
class Workload:
    """One way of using a model, in tokens."""

    id: str
    label: str
    description: str
    prompt_tokens: int
    answer_tokens: int
    history_tokens: int = 0
    concurrency: int = 1
    requests_per_day: int = 50
    # is the answer read as it appears (chat), or waited for as a whole (a summary, an agent's
    # edit)? Decoding faster than a person reads only counts in the second case
    streamed: bool = True

    def decode_depth_tokens(self) -> int:
        """Average KV-cache depth while the answer is written."""
        return self.history_tokens + self.prompt_tokens + self.answer_tokens // 2

    def prefill_depth_tokens(self) -> int:
        """Average KV-cache depth while the prompt is read."""
        return self.history_tokens + self.prompt_tokens // 2

    def prefill_test(self) -> TestPoint:
        """The prompt as a test point: its tokens, read after the history."""
        return TestPoint(prompt_tokens=self.prompt_tokens, depth=self.history_tokens)

    def decode_test(self) -> TestPoint:
        """The answer as a test point: its tokens, written after the history and the prompt,
        by every person at once."""
        return TestPoint(
            generated_tokens=self.answer_tokens,
            depth=self.history_tokens + self.prompt_tokens,
            streams=max(1, self.concurrency),
        )

    def context_tokens(self) -> int:
        """Context the KV cache must hold at the end of a request."""
        return self.history_tokens + self.prompt_tokens + self.answer_tokens

    def to_json(self) -> dict:
        return asdict(self)


PRESETS: dict[str, Workload] = {
    w.id: w
    for w in (
        Workload(
            "chat",
            "Chat",
            "One person chatting: short prompt, long answer.",
            prompt_tokens=300,
            answer_tokens=500,
            history_tokens=0,
            concurrency=1,
            requests_per_day=60,
        ),
        Workload(
            "summarise",
            "Summarise a document",
            "A long document in (about 20,000 tokens), a short summary out.",
            prompt_tokens=20_000,
            answer_tokens=200,
            history_tokens=0,
            concurrency=1,
            requests_per_day=20,
            streamed=False,
        ),
        Workload(
            "long-chat",
            "Long chat",
            "The same chat with 32,768 tokens of history.",
            prompt_tokens=300,
            answer_tokens=500,
            history_tokens=32_768,
            concurrency=1,
            requests_per_day=60,
        ),
        Workload(
            "many-users",
            "Many users",
            "32 people at once, each chatting.",
            prompt_tokens=300,
            answer_tokens=500,
            history_tokens=0,
            concurrency=32,
            requests_per_day=2_000,
        ),
        Workload(
            "coding-agent",
            "Coding agent",
            "An agent with a large context, many turns a day.",
            prompt_tokens=4_000,
            answer_tokens=400,
            history_tokens=12_000,
            concurrency=1,
            requests_per_day=300,
            streamed=False,
        ),
    )
}


class UnknownWorkloadError(InputError):
    """A workload name that is not a preset."""


def get_workload(name: str) -> Workload:
    """A preset workload by id ('chat', 'summarise', ...), case-insensitively."""
    key = normalise_key(name)
    key = {
        "summarize": "summarise",
        "longchat": "long-chat",
        "many": "many-users",
        "agent": "coding-agent",
        "coding": "coding-agent",
    }.get(key, key)
    if key in PRESETS:
        return PRESETS[key]
    hint = did_you_mean(key, PRESETS, n=2, cutoff=0.3)
    raise UnknownWorkloadError(
        f"Unknown workload '{name}'.{hint} Choose one of: {', '.join(PRESETS)}, or custom."
    )


def custom_workload(
    prompt_tokens: int,
    answer_tokens: int,
    history_tokens: int = 0,
    concurrency: int = 1,
    requests_per_day: int = 50,
) -> Workload:
    """A workload with the user's own numbers."""
    if min(prompt_tokens, answer_tokens, history_tokens) < 0 or concurrency < 1:
        raise ValueError("token counts must be >= 0 and concurrency >= 1")
    return Workload(
        "custom",
        "Custom",
        "Your own numbers.",
        prompt_tokens,
        answer_tokens,
        history_tokens,
        concurrency,
        requests_per_day,
    )

"""A test point: what one llama-bench test asks of the machine, in one type for published rows,
the user's runs and projections alike.

llama-bench's `pp512` is `TestPoint(prompt_tokens=512)`, `tg128` is
`TestPoint(generated_tokens=128)`, `tg256 @ d512` is `TestPoint(generated_tokens=256,
depth=512)`; a prompt is processed in micro-batches of `ubatch` tokens (llama.cpp's -ub, 512
by default) and decode runs `streams` sequences at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from advisor.core.infra.errors import InputError

DEFAULT_UBATCH = 512  # llama.cpp's n_ubatch (llama-bench -ub)


@dataclass(frozen=True)
class TestPoint:
    """Tokens in, tokens out, context already in the cache, streams, micro-batch size."""

    __test__ = False  # not a pytest test class, whatever its name

    prompt_tokens: int = 0
    generated_tokens: int = 0
    depth: int = 0
    streams: int = 1
    ubatch: int = DEFAULT_UBATCH

    def __post_init__(self) -> None:
        for name in ("prompt_tokens", "generated_tokens", "depth"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative")
        if self.streams < 1 or self.ubatch < 1:
            raise ValueError("streams and ubatch must be at least 1")

    @property
    def decode_depth(self) -> int:
        """Tokens of context a generated token sees on average: the depth and half of the
        tokens generated before it."""
        return self.depth + self.generated_tokens // 2

    @property
    def prefill_depth(self) -> int:
        """Tokens of context a prompt token sees on average."""
        return self.depth + self.prompt_tokens // 2

    @property
    def prompt_batch(self) -> int:
        """Tokens per micro-batch of the prompt: the per-layer cost of each batch is shared
        by this many tokens."""
        return max(1, min(self.prompt_tokens, self.ubatch)) if self.prompt_tokens else self.ubatch

    def batches_like_llama_bench(self) -> bool:
        """Does the prompt run in the micro-batches llama-bench's default -ub would give it?
        (A larger -ub multiplies bigger matrices at once, a smaller one smaller: the speed
        differs from what the default measures.)"""
        default = TestPoint(self.prompt_tokens, ubatch=DEFAULT_UBATCH)
        return self.prompt_batch == default.prompt_batch

    def label(self) -> str:
        """llama-bench's own name for the test: 'pp512', 'tg128', 'tg256 @ d512'."""
        parts = []
        if self.prompt_tokens:
            parts.append(f"pp{self.prompt_tokens}")
        if self.generated_tokens:
            parts.append(f"tg{self.generated_tokens}")
        text = "+".join(parts) or "none"
        return text + (f" @ d{self.depth}" if self.depth else "")


_TEST = re.compile(r"^\s*(pp|tg)\s*(\d+)(?:\s*@\s*d(\d+))?\s*$")


def parse_test(text: str, ubatch: int = DEFAULT_UBATCH) -> TestPoint:
    """A test point from llama-bench's test name ('pp512', 'tg128', 'tg256 @ d512')."""
    found = _TEST.match(text or "")
    if not found:
        raise InputError(f"'{text}' is not a llama-bench test name such as pp512 or tg128.")
    kind, tokens, depth = found.group(1), int(found.group(2)), int(found.group(3) or 0)
    if kind == "pp":
        return TestPoint(prompt_tokens=tokens, depth=depth, ubatch=ubatch)
    return TestPoint(generated_tokens=tokens, depth=depth, ubatch=ubatch)

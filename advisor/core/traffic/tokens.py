"""Token counting: pluggable, batched, and the only code that sees the text of a turn.

Readers produce `Turn`s holding texts; `count_turns` hands those texts to a `TokenCounter`
in batches (a tokenizer in a child process pays per call, not per text) and yields
`CountedTurn`s, which hold numbers only. History is counted from the earlier turns of the
same conversation, or taken from the server's own `usage` figures where they are present.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Protocol

from advisor.core.traffic.records import CountedTurn, Turn

BATCH_TEXTS = 256
# Conversations whose history is remembered; past this the least recently used is forgotten
# (a log's readers forget theirs at the same bound, so a forgotten chat comes back as a new
# one whose re-sent history is counted from its text).
MAX_OPEN_CONVERSATIONS = 200_000


class TokenCounter(Protocol):
    """Counts tokens of a batch of texts, one count per text, in order."""

    name: str
    exact: bool  # True for a real tokenizer, False for an estimate

    def count(self, texts: list[str]) -> list[int]:
        """Token counts of `texts`, in the same order."""
        ...


class EstimatedCounter:
    """An ESTIMATE of token counts: one token per 4 bytes of UTF-8 text, rounded up.

    For English prose and code, tokenizers of current models average about 4 characters per
    token, and an ASCII character is one byte. Text in other scripts takes 2-3 bytes a
    character in UTF-8 and also more tokens per character, so counting bytes keeps the
    estimate in the right range (a Chinese character counts 0.75 token). Expect +-25 % against
    a model's own tokenizer; a tokenizer-backed counter replaces this for exact counts.
    """

    name = "estimate: 4 bytes of UTF-8 per token"
    exact = False

    def count(self, texts: list[str]) -> list[int]:
        """Estimated token counts of `texts`."""
        out = []
        for text in texts:
            n = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
            out.append(math.ceil(n / 4))
        return out


# conversation id -> (what its next turn re-sends: history + prompt + answer of the last
# turn, whether that figure is exact), least recently used first
_Conversations = OrderedDict[str, tuple[int, bool]]


def count_turns(
    turns: Iterable[Turn], counter: TokenCounter, batch_texts: int = BATCH_TEXTS
) -> Iterator[CountedTurn]:
    """Count the texts of `turns` in batches of at most `batch_texts` and drop the text."""
    conversations: _Conversations = OrderedDict()
    pending: list[Turn] = []
    n_texts = 0
    for turn in turns:
        pending.append(turn)
        n_texts += len(turn.prompt_texts) + len(turn.answer_texts) + len(turn.earlier_texts)
        if n_texts >= batch_texts or len(pending) >= batch_texts:
            yield from _flush(pending, counter, batch_texts, conversations)
            pending, n_texts = [], 0
    yield from _flush(pending, counter, batch_texts, conversations)


def _texts_to_count(turn: Turn) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    prompt = turn.prompt_texts if turn.prompt_tokens is None else ()
    answer = turn.answer_texts
    if turn.answer_tokens is not None or turn.usage_completion_tokens is not None:
        answer = ()
    earlier = turn.earlier_texts if turn.history_tokens is None else ()
    return prompt, answer, earlier


def _flush(
    pending: list[Turn],
    counter: TokenCounter,
    batch_texts: int,
    conversations: _Conversations,
) -> Iterator[CountedTurn]:
    texts: list[str] = []
    spans: list[tuple[int, int, int, int]] = []
    for turn in pending:
        prompt, answer, earlier = _texts_to_count(turn)
        start = len(texts)
        texts.extend((*prompt, *answer, *earlier))
        spans.append((start, start + len(prompt), start + len(prompt) + len(answer), len(texts)))
    counts: list[int] = []
    for i in range(0, len(texts), batch_texts):
        chunk = texts[i : i + batch_texts]
        got = counter.count(chunk)
        if len(got) != len(chunk):
            raise RuntimeError(f"{counter.name} returned {len(got)} counts for {len(chunk)} texts")
        counts.extend(got)
    texts.clear()  # the text goes no further than the counter
    for turn, (a, b, c, d) in zip(pending, spans, strict=True):
        yield _resolve(
            turn, sum(counts[a:b]), sum(counts[b:c]), sum(counts[c:d]), counter, conversations
        )


def _resolve(
    turn: Turn,
    prompt_counted: int,
    answer_counted: int,
    earlier_counted: int,
    counter: TokenCounter,
    conversations: _Conversations,
) -> CountedTurn:
    conv = conversations.pop(turn.conversation_id, None) if turn.conversation_id else None
    prior, prior_exact = conv if conv is not None else (0, True)

    if turn.answer_tokens is not None:
        answer, answer_exact = turn.answer_tokens, turn.counts_exact
    elif turn.usage_completion_tokens is not None:
        answer, answer_exact = turn.usage_completion_tokens, True
    else:
        answer, answer_exact = answer_counted, counter.exact

    if turn.prompt_tokens is not None or turn.history_tokens is not None:
        prompt = turn.prompt_tokens if turn.prompt_tokens is not None else prompt_counted
        history = turn.history_tokens if turn.history_tokens is not None else prior
        exact = turn.counts_exact and answer_exact
    elif turn.usage_prompt_tokens is not None:
        prompt, history, exact = _from_usage(
            turn.usage_prompt_tokens, prior, prior_exact, turn, prompt_counted
        )
        exact = exact and answer_exact
    else:
        prompt = prompt_counted
        history = prior + earlier_counted
        exact = counter.exact and answer_exact and prior_exact

    if turn.conversation_id:
        conversations[turn.conversation_id] = (history + prompt + answer, exact)  # now newest
        if len(conversations) > MAX_OPEN_CONVERSATIONS:
            conversations.popitem(last=False)
    return CountedTurn(
        conversation_id=turn.conversation_id,
        turn_index=turn.turn_index,
        start_s=turn.start_s,
        end_s=turn.end_s,
        prompt_tokens=prompt,
        answer_tokens=answer,
        history_tokens=history,
        exact=exact,
        usage_prompt_tokens=turn.usage_prompt_tokens,
        usage_completion_tokens=turn.usage_completion_tokens,
        concurrent_at_start=turn.concurrent_at_start,
        opens_conversation=bool(turn.conversation_id) and conv is None,
    )


def _from_usage(
    usage_prompt: int,
    prior: int,
    prior_exact: bool,
    turn: Turn,
    prompt_counted: int,
) -> tuple[int, int, bool]:
    """Split the server's whole-prompt count into (new, history, exact).

    When the history is known exactly (from the server's counts of the earlier turns), the
    new part is the difference. Otherwise the new text is counted and the rest is history.
    """
    if prior_exact and not turn.earlier_texts and usage_prompt >= prior:
        return usage_prompt - prior, prior, True
    prompt = min(prompt_counted, usage_prompt)
    return prompt, usage_prompt - prompt, False

#!/usr/bin/env python3
"""Write a synthetic OpenAI-style JSON Lines traffic log (about 100 MB), seeded.

Multi-turn chats arrive at random (one every 40 s on average); each request re-sends the whole
conversation, as the stateless API does, so later turns make long lines. Half the lines are a
proxy's request/response pair with ISO times, half LiteLLM's StandardLoggingPayload with
startTime/endTime and usage. Lines are written in time order, holding only the chats that are
open at the moment in memory.

    python benchmarks/make_openai_jsonl.py out.jsonl [--size-mb 100] [--seed 7]
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import random
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

WORDS = (
    "the model server prompt token cache memory answer question python function error "
    "request user data file value list time speed test build layer context window batch "
    "thread queue result number string array config deploy network index query schema "
    "explain why how please could you write a short example with code and tests for this"
).split()
SYSTEM_PROMPTS = (
    "You are a helpful assistant.",
    "You are a senior software engineer. Answer with working code and a short explanation.",
    "You are a support agent for an internal wiki. Cite the page you used.",
)
START_S = 1_717_200_000.0  # 2024-06-01


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choices(WORDS, k=max(1, words))).capitalize() + "."


def _user_words(rng: random.Random) -> int:
    if rng.random() < 0.08:  # a pasted document or file
        return rng.randint(800, 3000)
    return int(rng.lognormvariate(math.log(40), 0.9))


def _tokens(messages: list[dict[str, str]]) -> int:
    return sum(len(m["content"]) // 4 + 4 for m in messages)


def _line(rng: random.Random, messages: list[dict[str, str]], answer: str, t0: float) -> str:
    out_tokens = len(answer) // 4
    t1 = t0 + 0.3 + _tokens(messages) / 2000 + out_tokens / 30  # prefill, then decode
    response: dict[str, Any] = {
        "id": f"chatcmpl-{rng.getrandbits(48):012x}",
        "object": "chat.completion",
        "created": int(t0),
        "model": "qwen2.5-7b-instruct",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": answer},
                     "finish_reason": "stop"}],
    }  # fmt: skip
    record: dict[str, Any]
    if rng.random() < 0.5:
        record = {
            "request": {"model": "qwen2.5-7b-instruct", "messages": messages, "stream": True},
            "response": response,
            "start_time": datetime.fromtimestamp(t0, timezone.utc).isoformat(),
            "end_time": datetime.fromtimestamp(t1, timezone.utc).isoformat(),
        }
    else:
        usage = {"prompt_tokens": _tokens(messages), "completion_tokens": out_tokens}
        usage["total_tokens"] = usage["prompt_tokens"] + out_tokens
        record = {
            "id": f"{rng.getrandbits(64):016x}",
            "call_type": "acompletion",
            "model": "qwen2.5-7b-instruct",
            "startTime": round(t0, 3),
            "endTime": round(t1, 3),
            "messages": messages,
            "response": {**response, "usage": usage},
            **usage,
        }
    return json.dumps(record) + "\n"


def write(path: Path, size_mb: float, seed: int) -> tuple[int, int]:
    """Write the log; returns (lines, conversations)."""
    rng = random.Random(seed)
    target = int(size_mb * 1e6)
    # (time of the next request, conversation number, messages so far, turns left)
    heap: list[tuple[float, int, list[dict[str, str]], int]] = []
    next_new, n_conv, lines, written = START_S, 0, 0, 0
    with path.open("w", encoding="utf-8") as fh:
        while written < target:
            if not heap or next_new <= heap[0][0]:
                n_conv += 1
                system = {"role": "system", "content": rng.choice(SYSTEM_PROMPTS)}
                turns = 1 + int(rng.expovariate(1 / 5))
                heapq.heappush(heap, (next_new, n_conv, [system], turns))
                next_new += rng.expovariate(1 / 40)  # a new chat every 40 s on average
                continue
            t0, conv, messages, left = heapq.heappop(heap)
            messages.append({"role": "user", "content": _text(rng, _user_words(rng))})
            answer = _text(rng, int(rng.lognormvariate(math.log(180), 0.6)))
            line = _line(rng, messages, answer, t0)
            fh.write(line)
            written += len(line.encode("utf-8"))
            lines += 1
            if left > 1:
                messages.append({"role": "assistant", "content": answer})
                think = rng.expovariate(1 / 90) + len(answer) / 120  # read, then type
                heapq.heappush(heap, (t0 + think, conv, messages, left - 1))
    return lines, n_conv


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("out", type=Path)
    ap.add_argument("--size-mb", type=float, default=100.0)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    lines, conversations = write(args.out, args.size_mb, args.seed)
    size = args.out.stat().st_size
    print(f"{args.out}: {size / 1e6:.1f} MB, {lines} requests, {conversations} chats started")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""OpenAI-compatible request/response logs as JSON Lines, one request per line.

Shapes read (the first that fits a line wins):
- OpenAI Batch output: {id, custom_id, response: {status_code, request_id, body}, error};
- OpenAI Batch input: {custom_id, method, url, body: <request>};
- LiteLLM StandardLoggingPayload: {messages, response, startTime, endTime, prompt_tokens,
  completion_tokens, ...};
- a proxy's pair: {request: <request or HTTP envelope>, response: <response or envelope>,
  plus times}; OpenPipe's reqPayload/respPayload/requestedAt/receivedAt as well;
- a bare request body {model, messages | prompt | input} or response {choices, usage}.

The API is stateless: each request re-sends the whole conversation. Requests are linked into
conversations by hashing the message list: a request whose history equals an earlier request's
messages plus its answer continues that conversation, so only its new messages are counted.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from advisor.core.infra.safe_json import loads
from advisor.core.traffic.records import Turn
from advisor.core.traffic.streaming import ReadContext, as_int, iter_lines, parse_time
from advisor.core.traffic.tokens import MAX_OPEN_CONVERSATIONS

START_KEYS = ("startTime", "start_time", "started_at", "requestedAt", "requested_at",
              "request_time", "timestamp", "created_at", "time")  # fmt: skip
END_KEYS = ("endTime", "end_time", "ended_at", "completed_at", "receivedAt", "received_at")
DURATION_MS_KEYS = ("duration_ms", "latency_ms", "elapsed_ms")
DURATION_S_KEYS = ("duration", "duration_s", "latency_s")


@dataclass(frozen=True)
class _Record:
    request: dict[str, Any] | None
    response: Any
    top: dict[str, Any]


def read_turns(fh: IO[bytes], ctx: ReadContext) -> Iterator[Turn]:
    """One turn per logged request; unreadable lines are counted and skipped."""
    chains = _Chains()
    failed = 0
    for line in iter_lines(fh, ctx):
        if not line.strip():
            continue
        try:
            obj = loads(line)  # the one reader: a nesting bomb or huge number is one bad line
        except ValueError:
            ctx.skip()
            continue
        record = _record(obj)
        if record is None:
            ctx.skip()
            continue
        if record.response is None and record.request is None:
            failed += 1
            continue
        turn = _turn(record, chains)
        if turn is None:
            ctx.skip()
            continue
        yield turn
    if failed:
        ctx.notes.append(
            "1 request that got an error instead of an answer was left out."
            if failed == 1
            else f"{failed} requests that got an error instead of an answer were left out."
        )


def _maybe_json(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return loads(value)
        except ValueError:
            return value
    return value


def _unwrap(value: Any) -> Any:
    """A body inside an HTTP envelope {status_code, body} or {method, url, body}."""
    value = _maybe_json(value)
    if isinstance(value, dict) and "body" in value and ("status_code" in value or "url" in value):
        status = value.get("status_code")
        if isinstance(status, int) and status >= 400:
            return None
        return _maybe_json(value["body"])
    return value


def _record(obj: Any) -> _Record | None:
    if not isinstance(obj, dict):
        return None
    if "custom_id" in obj and "response" in obj:  # Batch output
        return _Record(None, _unwrap(obj.get("response")), obj)
    if "custom_id" in obj and isinstance(obj.get("body"), dict):  # Batch input
        return _Record(obj["body"], None, obj)
    req = _unwrap(obj.get("request", obj.get("reqPayload")))
    resp = _unwrap(obj.get("response", obj.get("respPayload")))
    if req is None and any(k in obj for k in ("messages", "prompt", "input")):
        req = obj  # LiteLLM's payload, or a bare request body
    if resp is None and "choices" in obj:
        resp = obj  # a bare response
    if not isinstance(req, dict) and req is not None:
        return None
    if req is None and resp is None and not ("request" in obj or "response" in obj):
        return None
    return _Record(req, resp, obj)


def _turn(record: _Record, chains: _Chains) -> Turn | None:
    messages = _messages(record.request) if record.request is not None else []
    if messages is None:
        return None
    answer = _answer(record.response)
    usage = _usage(record.response, record.top)
    conv_id, index, new, earlier = chains.place(messages, answer)
    start, end = _times(record)
    return Turn(
        conversation_id=conv_id,
        turn_index=index,
        start_s=start,
        end_s=end,
        prompt_texts=tuple(t for _, t in new if t),
        answer_texts=(answer,) if answer else (),
        earlier_texts=tuple(t for _, t in earlier if t),
        usage_prompt_tokens=usage[0],
        usage_completion_tokens=usage[1],
    )


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text"))
            for p in content
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def _message_text(m: dict[str, Any]) -> str:
    """A message's text, with the tool calls it makes (the model writes those too)."""
    text = _content_text(m.get("content"))
    calls = m.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict):
            text += f"{fn.get('name', '')}{fn.get('arguments', '')}"
    return text


def _messages(request: dict[str, Any]) -> list[tuple[str, str]] | None:
    raw = request.get("messages", request.get("input"))
    if raw is None:
        raw = request.get("prompt")
    if isinstance(raw, str):
        return [("user", raw)]
    if not isinstance(raw, list):
        return None
    out: list[tuple[str, str]] = []
    for m in raw:
        if isinstance(m, str):
            out.append(("user", m))
        elif isinstance(m, dict):
            out.append((str(m.get("role", "user")), _message_text(m)))
    return out


def _answer(response: Any) -> str | None:
    if isinstance(response, str):
        return response
    if not isinstance(response, dict):
        return None
    choices = response.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        choice = choices[0]
        msg = choice.get("message")
        if isinstance(msg, dict):
            return _message_text(msg)
        return _content_text(choice.get("text"))
    output = response.get("output")  # the Responses API
    if isinstance(output, list):
        return "\n".join(_content_text(o.get("content")) for o in output if isinstance(o, dict))
    return None


def _usage(response: Any, top: dict[str, Any]) -> tuple[int | None, int | None]:
    usage: dict[str, Any] = top  # LiteLLM puts prompt_tokens at the top level
    for candidate in (
        response.get("usage") if isinstance(response, dict) else None,
        top.get("usage"),
    ):
        if isinstance(candidate, dict):
            usage = candidate
            break
    prompt = as_int(usage.get("prompt_tokens", usage.get("input_tokens")))
    completion = as_int(usage.get("completion_tokens", usage.get("output_tokens")))
    return prompt, completion


def _first_time(top: dict[str, Any], keys: tuple[str, ...]) -> float | None:
    for k in keys:
        if k in top and (t := parse_time(top[k])) is not None:
            return t
    return None


def _times(record: _Record) -> tuple[float | None, float | None]:
    top = record.top
    start = _first_time(top, START_KEYS)
    end = _first_time(top, END_KEYS)
    if start is None and isinstance(record.response, dict):
        start = parse_time(record.response.get("created"))
    if start is not None and end is None:
        for keys, scale in ((DURATION_MS_KEYS, 1e-3), (DURATION_S_KEYS, 1.0)):
            for k in keys:
                d = top.get(k)
                if isinstance(d, int | float) and not isinstance(d, bool) and d >= 0:
                    return start, start + d * scale
    if start is not None and end is not None and end < start:
        end = None
    return start, end


class _Chains:
    """Links stateless requests into conversations by hashing message lists.

    Python's 64-bit string hash (random per process, stable within one) chains the messages;
    a false match needs a collision between two of at most a few hundred thousand open chats.
    """

    def __init__(self) -> None:
        self._next: OrderedDict[int, tuple[str, int]] = OrderedDict()
        self._count = 0

    def place(
        self, messages: list[tuple[str, str]], answer: str | None
    ) -> tuple[str, int, list[tuple[str, str]], list[tuple[str, str]]]:
        """(conversation id, turn index, new messages, unseen history) of one request."""
        k = max((i + 1 for i, (role, _) in enumerate(messages) if role == "assistant"), default=0)
        h = key = 0
        for i, (role, text) in enumerate(messages):
            if i == k:
                key = h
            h = hash((h, role, text.strip()))
        if k == len(messages):
            key = h
        found = self._next.pop(key, None) if k > 0 else None
        if found is not None:
            conv_id, index = found
            earlier: list[tuple[str, str]] = []
        else:
            self._count += 1
            conv_id = f"c{self._count}"
            index = sum(1 for role, _ in messages[:k] if role == "user")
            earlier = messages[:k]
        if answer is not None:
            self._next[hash((h, "assistant", answer.strip()))] = (conv_id, index + 1)
            if len(self._next) > MAX_OPEN_CONVERSATIONS:
                self._next.popitem(last=False)  # forget the least recent chat
        return conv_id, index, messages[k:], earlier

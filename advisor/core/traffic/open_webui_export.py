"""Open WebUI chat export: a JSON list of chats, each {id, title, chat, created_at, ...}.

`chat.history.messages` maps message id -> {id, parentId, childrenIds, role, content,
timestamp (s), usage?}; `chat.history.currentId` is the leaf the person saw last. Older
exports keep a flat `chat.messages` list instead. Assistant messages may carry `usage`
(OpenAI-style prompt_tokens/completion_tokens, or Ollama's prompt_eval_count, eval_count and
total_duration in nanoseconds); older versions put Ollama's figures under `info`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

from advisor.core.traffic.conversation import Message, last_leaf, path_to, turns_from_messages
from advisor.core.traffic.records import Turn
from advisor.core.traffic.streaming import JsonStream, ReadContext, as_int, parse_time


def read_turns(fh: IO[bytes], ctx: ReadContext) -> Iterator[Turn]:
    """The turns of every chat, one chat in memory at a time."""
    stream = JsonStream(fh, ctx)
    items = stream.elements() if stream.first_char() == "[" else iter([stream.document()])
    for n, item in enumerate(items):
        turns = chat_turns(item, n)
        if turns is None:
            ctx.skip()
            continue
        yield from turns


def chat_turns(item: Any, n: int) -> list[Turn] | None:
    """The turns of one exported chat, or None if it is not one."""
    chat = item.get("chat") if isinstance(item, dict) else None
    if not isinstance(chat, dict):
        return None
    history = chat.get("history")
    history = history if isinstance(history, dict) else {}
    nodes = history.get("messages")
    if isinstance(nodes, dict) and nodes:
        leaf = history.get("currentId") or item.get("current_message_id")
        if not isinstance(leaf, str) or leaf not in nodes:
            leaf = last_leaf(nodes, "parentId", "childrenIds")
        raw = path_to(nodes, leaf, "parentId")
    elif isinstance(chat.get("messages"), list):
        raw = [m for m in chat["messages"] if isinstance(m, dict)]
    else:
        return None
    messages = [m for r in raw if (m := _message(r))]
    params = chat.get("params")
    system = params.get("system") if isinstance(params, dict) else None
    if isinstance(system, str) and system:
        messages.insert(0, Message("system", (system,)))  # sent before every request
    conv_id = str(item.get("id") or chat.get("id") or f"open-webui-{n}")
    first = parse_time(item.get("created_at")) or parse_time(chat.get("timestamp"))
    return turns_from_messages(conv_id, messages, first)


def _message(raw: dict[str, Any]) -> Message | None:
    role = raw.get("role")
    if not isinstance(role, str):
        return None
    usage = raw.get("usage") if isinstance(raw.get("usage"), dict) else raw.get("info")
    usage = usage if isinstance(usage, dict) else {}
    prompt = as_int(usage.get("prompt_tokens"))
    if prompt is None:
        prompt = as_int(usage.get("prompt_eval_count"))
    completion = as_int(usage.get("completion_tokens"))
    if completion is None:
        completion = as_int(usage.get("eval_count"))
    total_ns = as_int(usage.get("total_duration"), limit=10**15)  # nanoseconds: 11 days
    return Message(
        role=role,
        texts=_texts(raw.get("content")),
        time_s=parse_time(raw.get("timestamp")),
        duration_s=total_ns / 1e9 if total_ns else None,
        usage_prompt_tokens=prompt,
        usage_completion_tokens=completion,
    )


def _texts(content: Any) -> tuple[str, ...]:
    if isinstance(content, str):
        return (content,) if content else ()
    if isinstance(content, list):  # OpenAI-style parts
        return tuple(
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ()

"""LM Studio saved conversation: one `<id>.conversation.json` per chat.

The file is one JSON object {name, createdAt (ms), systemPrompt, messages, ...}. Each message
holds `versions` (regenerations) and `currentlySelected`; a version is either
{type: "singleStep", role, content: [{type: "text", text}]} or, for answers,
{type: "multiStep", role: "assistant", steps: [{type: "contentBlock", content: [...],
genInfo: {stats: {promptTokensCount, predictedTokensCount, totalTimeSec, ...}}}]}. Older
files (LM Studio 0.2) hold plain {role, content} messages. Messages carry no time of their
own: only the conversation's `createdAt` dates its first turn.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from advisor.core.traffic.conversation import Message, turns_from_messages
from advisor.core.traffic.records import Turn
from advisor.core.traffic.streaming import JsonStream, ReadContext, as_int, parse_time

MAX_SECONDS = 30 * 86400  # one answer never takes a month: a larger time is damage


def read_turns(fh: IO[bytes], ctx: ReadContext) -> Iterator[Turn]:
    """The turns of the conversation in the file."""
    doc = JsonStream(fh, ctx).document()
    name = Path(getattr(fh, "name", "conversation")).name.split(".")[0]
    turns = conversation_turns(doc, name)
    if turns is None:
        ctx.skip()
        return
    ctx.advance(ctx.total_bytes)
    yield from turns


def conversation_turns(doc: Any, conv_id: str) -> list[Turn] | None:
    """The turns of one LM Studio conversation object, or None if it is not one."""
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        return None
    messages: list[Message] = []
    system = _system_prompt(doc)
    if system:
        messages.append(Message("system", (system,)))
    for raw in doc["messages"]:
        msg = _message(raw)
        if msg is not None:
            messages.append(msg)
    return turns_from_messages(conv_id, messages, parse_time(doc.get("createdAt")))


def _system_prompt(doc: dict[str, Any]) -> str:
    if isinstance(doc.get("systemPrompt"), str):
        return str(doc["systemPrompt"])
    config = doc.get("perChatPredictionConfig")
    fields = config.get("fields") if isinstance(config, dict) else None
    for f in fields if isinstance(fields, list) else []:
        if isinstance(f, dict) and f.get("key") == "llm.prediction.systemPrompt":
            return str(f.get("value") or "")
    return ""


def _message(raw: Any) -> Message | None:
    if not isinstance(raw, dict):
        return None
    version: Any = raw
    versions = raw.get("versions")
    if isinstance(versions, list) and versions:
        pick = as_int(raw.get("currentlySelected")) or 0
        version = versions[pick] if pick < len(versions) else versions[-1]
    if not isinstance(version, dict) or not isinstance(version.get("role"), str):
        return None
    if version.get("type") != "multiStep":
        return Message(version["role"], _texts(version.get("content")))
    texts: list[str] = []
    prompt = completion = None
    duration = None
    steps = version.get("steps")
    for step in steps if isinstance(steps, list) else []:
        if not isinstance(step, dict) or step.get("type") != "contentBlock":
            continue
        texts.extend(_texts(step.get("content")))
        info = step.get("genInfo")
        stats = info.get("stats") if isinstance(info, dict) else None
        if isinstance(stats, dict):
            prompt = prompt if prompt is not None else as_int(stats.get("promptTokensCount"))
            got = as_int(stats.get("predictedTokensCount"))
            completion = (completion or 0) + got if got is not None else completion
            secs = stats.get("totalTimeSec")
            if isinstance(secs, int | float) and 0 <= secs <= MAX_SECONDS:
                duration = (duration or 0.0) + float(secs)
    return Message(version["role"], tuple(texts), None, duration, prompt, completion)


def _texts(content: Any) -> tuple[str, ...]:
    if isinstance(content, str):
        return (content,) if content else ()
    if not isinstance(content, list):
        return ()
    return tuple(
        c["text"]
        for c in content
        if isinstance(c, dict)
        and c.get("type", "text") == "text"
        and isinstance(c.get("text"), str)
    )

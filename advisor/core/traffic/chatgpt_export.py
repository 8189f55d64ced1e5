"""ChatGPT data export: conversations.json, a list of conversations with a `mapping` tree.

Each conversation has `mapping` (node id -> {message, parent, children}) and `current_node`,
the leaf of the thread the person saw last. Edited prompts and regenerated answers are side
branches; only the path from the root to `current_node` is what the model was sent.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

from advisor.core.traffic.conversation import Message, last_leaf, path_to, turns_from_messages
from advisor.core.traffic.records import Turn
from advisor.core.traffic.streaming import JsonStream, ReadContext, parse_time


def read_turns(fh: IO[bytes], ctx: ReadContext) -> Iterator[Turn]:
    """The turns of every conversation, one conversation in memory at a time."""
    stream = JsonStream(fh, ctx)
    items = stream.elements() if stream.first_char() == "[" else iter([stream.document()])
    for n, item in enumerate(items):
        turns = conversation_turns(item, n)
        if turns is None:
            ctx.skip()
            continue
        yield from turns


def conversation_turns(item: Any, n: int) -> list[Turn] | None:
    """The turns of one conversation object, or None if it is not one."""
    if not isinstance(item, dict) or not isinstance(item.get("mapping"), dict):
        return None
    mapping: dict[str, Any] = item["mapping"]
    leaf = item.get("current_node")
    if not isinstance(leaf, str) or leaf not in mapping:
        leaf = last_leaf(mapping, "parent", "children")
    messages = [m for node in path_to(mapping, leaf, "parent") if (m := _message(node))]
    conv_id = str(item.get("conversation_id") or item.get("id") or f"chatgpt-{n}")
    return turns_from_messages(conv_id, messages, parse_time(item.get("create_time")))


def _message(node: dict[str, Any]) -> Message | None:
    msg = node.get("message")
    if not isinstance(msg, dict):
        return None
    author = msg.get("author")
    role = author.get("role") if isinstance(author, dict) else None
    if not isinstance(role, str):
        return None
    content = msg.get("content")
    if isinstance(content, dict) and content.get("content_type") == "user_editable_context":
        role = "system"  # custom instructions: stored as a hidden user message, sent as system
    return Message(role=role, texts=_texts(content), time_s=parse_time(msg.get("create_time")))


def _texts(content: Any) -> tuple[str, ...]:
    """The text of a message's content; images and other assets carry no text."""
    if not isinstance(content, dict):
        return ()
    out: list[str] = []
    parts = content.get("parts")
    if isinstance(parts, list):
        for part in parts:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                out.append(part["text"])
    for key in ("text", "result", "user_profile", "user_instructions"):
        value = content.get(key)
        if isinstance(value, str):
            out.append(value)
    return tuple(t for t in out if t)

"""Turning one conversation's messages (any chat export) into turns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from advisor.core.traffic.records import Turn


@dataclass(frozen=True)
class Message:
    """One message of a saved conversation, as the exports have it."""

    role: str  # "system", "user", "assistant" or "tool"
    texts: tuple[str, ...]
    time_s: float | None = None
    duration_s: float | None = None  # how long the answer took, where the export says
    usage_prompt_tokens: int | None = None
    usage_completion_tokens: int | None = None


@dataclass
class _Open:
    start_s: float | None
    prompt: list[str] = field(default_factory=list)
    answer: list[str] = field(default_factory=list)
    duration_s: float | None = None
    usage_prompt: int | None = None
    usage_completion: int | None = None


def turns_from_messages(
    conversation_id: str, messages: list[Message], first_start_s: float | None = None
) -> list[Turn]:
    """One turn per user message: its prompt, and the answers that follow it.

    What comes before the first user message (a system prompt, custom instructions) is new
    text of the first turn; tool output is new text of the turn it appears in, since the
    model reads it. Every turn re-sends the turns before it, which `count_turns` adds up.
    """
    turns: list[Turn] = []
    prefix: list[str] = []
    cur: _Open | None = None
    for msg in messages:
        if msg.role == "user":
            if cur is not None:
                turns.append(_close(conversation_id, len(turns), cur))
            start = msg.time_s if msg.time_s is not None else (first_start_s if not turns else None)
            cur = _Open(start, prompt=[*prefix, *msg.texts])
            prefix = []
        elif cur is None:
            prefix.extend(msg.texts)  # system prompt or a greeting before the first question
        elif msg.role == "assistant":
            cur.answer.extend(msg.texts)
            if msg.duration_s is not None:
                cur.duration_s = (cur.duration_s or 0.0) + msg.duration_s
            if msg.usage_prompt_tokens is not None and cur.usage_prompt is None:
                cur.usage_prompt = msg.usage_prompt_tokens  # the first call saw the whole prompt
            if msg.usage_completion_tokens is not None:
                cur.usage_completion = (cur.usage_completion or 0) + msg.usage_completion_tokens
        else:
            cur.prompt.extend(msg.texts)
    if cur is not None:
        turns.append(_close(conversation_id, len(turns), cur))
    return turns


def _close(conversation_id: str, index: int, cur: _Open) -> Turn:
    end_s = None
    if cur.start_s is not None and cur.duration_s is not None:
        end_s = cur.start_s + cur.duration_s
    return Turn(
        conversation_id=conversation_id,
        turn_index=index,
        start_s=cur.start_s,
        end_s=end_s,
        prompt_texts=tuple(t for t in cur.prompt if t),
        answer_texts=tuple(t for t in cur.answer if t),
        usage_prompt_tokens=cur.usage_prompt,
        usage_completion_tokens=cur.usage_completion,
    )


def path_to(nodes: dict[str, Any], leaf: str | None, parent_key: str) -> list[dict[str, Any]]:
    """The nodes from the root to `leaf`, following `parent_key` links (cycles cut)."""
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    node_id = leaf
    while isinstance(node_id, str) and node_id in nodes and node_id not in seen:
        seen.add(node_id)
        node = nodes[node_id]
        if not isinstance(node, dict):
            break
        path.append(node)
        node_id = node.get(parent_key)
    path.reverse()
    return path


def last_leaf(nodes: dict[str, Any], parent_key: str, children_key: str) -> str | None:
    """Without a recorded current node: from a root, follow the newest child to a leaf."""
    roots = [k for k, n in nodes.items() if isinstance(n, dict) and not n.get(parent_key)]
    node_id = roots[0] if roots else None
    seen: set[str] = set()
    while node_id is not None and node_id not in seen:
        seen.add(node_id)
        node = nodes.get(node_id)
        children = node.get(children_key) if isinstance(node, dict) else None
        kids = (
            [c for c in children if isinstance(c, str) and c in nodes]
            if isinstance(children, list)
            else []
        )  # a child that is not an id (an object, a list) is no child
        if not kids:
            return node_id
        node_id = kids[-1]
    return node_id

"""What readers produce (a `Turn`, with text) and what survives counting (a `CountedTurn`)."""

from __future__ import annotations

from dataclasses import dataclass

LLAMA_SERVER_LOG = "llama-server-log"
OPENAI_JSONL = "openai-jsonl"
CHATGPT_EXPORT = "chatgpt-export"
OPEN_WEBUI_EXPORT = "open-webui-export"
LM_STUDIO_CONVERSATION = "lm-studio-conversation"
FORMATS = (
    LLAMA_SERVER_LOG,
    OPENAI_JSONL,
    CHATGPT_EXPORT,
    OPEN_WEBUI_EXPORT,
    LM_STUDIO_CONVERSATION,
)


@dataclass(frozen=True, slots=True)
class Turn:
    """One request as a reader found it: texts to count, or token counts the format gives.

    `prompt_texts` is what is NEW in this turn (the user's message; the system prompt on a
    conversation's first turn; tool output the model reads). `earlier_texts` is history the
    request re-sends that no earlier record of the file showed (e.g. a proxy log that starts
    in the middle of a conversation); history shown by earlier turns is counted from those
    turns, not re-counted. A `*_tokens` field, when set, replaces counting its texts.
    """

    conversation_id: str  # "" where the format has no conversations (server logs)
    turn_index: int
    start_s: float | None = None  # seconds since the epoch (server logs: since server start)
    end_s: float | None = None
    prompt_texts: tuple[str, ...] = ()
    answer_texts: tuple[str, ...] = ()
    earlier_texts: tuple[str, ...] = ()
    prompt_tokens: int | None = None
    answer_tokens: int | None = None
    history_tokens: int | None = None
    usage_prompt_tokens: int | None = None  # whole prompt as the server counted it
    usage_completion_tokens: int | None = None
    counts_exact: bool = False  # the *_tokens fields above come from the model's tokenizer
    concurrent_at_start: int | None = None  # requests running when this one began (logs)


@dataclass(frozen=True, slots=True)
class CountedTurn:
    """One request as numbers only: the text is gone once it has been counted."""

    conversation_id: str
    turn_index: int
    start_s: float | None
    end_s: float | None
    prompt_tokens: int  # new tokens of this turn
    answer_tokens: int
    history_tokens: int  # tokens re-sent from earlier turns (a prefix cache could reuse them)
    exact: bool  # True when every count came from a tokenizer or the server, not an estimate
    usage_prompt_tokens: int | None = None
    usage_completion_tokens: int | None = None
    concurrent_at_start: int | None = None
    opens_conversation: bool = False  # the first turn seen of its conversation

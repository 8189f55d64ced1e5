"""Which of the five formats a file is, from its content (never its name)."""

from __future__ import annotations

import os
import re
from typing import Any

from advisor.core.infra.safe_json import JsonRefused, decode_at
from advisor.core.traffic.errors import TrafficImportError
from advisor.core.traffic.records import (
    CHATGPT_EXPORT,
    LLAMA_SERVER_LOG,
    LM_STUDIO_CONVERSATION,
    OPEN_WEBUI_EXPORT,
    OPENAI_JSONL,
)
from advisor.core.traffic.streaming import TRUNCATED, check_regular_file, open_for_reading

HEAD_BYTES = 1 << 20
FIRST_ITEM_BYTES = 8 << 20

UNKNOWN = (
    "The file's format was not recognised: choose a llama-server log, an OpenAI-style JSON "
    "Lines log, a ChatGPT conversations.json, an Open WebUI chat export or an LM Studio "
    "conversation."
)
_LOG_MARKS = re.compile(
    r"slot\s+\S+:\s+id\s+\d+\s+\|\s+task\s+-?\d+\s+\||^\s*prompt eval time\s*=|"
    r"^(?:[\d.]+ )?(?:[IWED] )?srv\s+\S+: |main: server is listening|llama_model_loader: ",
    re.MULTILINE,
)
_OPENAI_KEYS = {"custom_id", "request", "response", "reqPayload", "choices", "messages",
                "prompt", "input", "usage", "body", "startTime"}  # fmt: skip


def detect_format(path: str | os.PathLike[str]) -> str:
    """One of the five format names, or a TrafficImportError with one sentence."""
    size = check_regular_file(path)
    with open_for_reading(path) as fh:
        head = fh.read(min(size, FIRST_ITEM_BYTES))
    _reject_binary(head[:HEAD_BYTES])
    text = head.decode("utf-8-sig", "replace")
    stripped = text.lstrip()
    if not stripped:
        raise TrafficImportError(
            "The file holds only blank space; export the traffic again, or choose another file."
        )
    complete = len(head) == size
    if stripped[0] == "[":
        return _detect_array(stripped, complete)
    if stripped[0] == "{":
        return _detect_object(stripped, complete)
    if _LOG_MARKS.search(text[:HEAD_BYTES]):
        return LLAMA_SERVER_LOG
    raise TrafficImportError(UNKNOWN)


def _reject_binary(head: bytes) -> None:
    if head.startswith(b"PK\x03\x04"):
        raise TrafficImportError(
            "The file is a ZIP archive; unzip it first and choose the conversations or log "
            "file inside."
        )
    if head.startswith(b"\x1f\x8b"):
        raise TrafficImportError("The file is gzip-compressed; decompress it first.")
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise TrafficImportError("The file is UTF-16 text; save it as UTF-8 and try again.")
    sample = head[:65536]
    if b"\x00" in sample:
        raise TrafficImportError(
            "The file is binary, not text; choose a chat export (JSON), a JSON Lines log or "
            "a llama-server log."
        )
    bad = sample.decode("utf-8", "replace").count("\ufffd")
    if sample and bad > len(sample) // 100 + 4:
        raise TrafficImportError(
            "The file is not UTF-8 text; choose a chat export (JSON), a JSON Lines log or a "
            "llama-server log."
        )


def classify(obj: Any, whole_file: bool) -> str | None:
    """The format one JSON object belongs to; `whole_file` when it is the file's only value."""
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("mapping"), dict):
        return CHATGPT_EXPORT
    if isinstance(obj.get("chat"), dict):
        return OPEN_WEBUI_EXPORT
    messages = obj.get("messages")
    if isinstance(messages, list):
        first = messages[0] if messages else None
        if isinstance(first, dict) and "versions" in first:
            return LM_STUDIO_CONVERSATION
        if whole_file and ("createdAt" in obj or "systemPrompt" in obj):
            return LM_STUDIO_CONVERSATION  # LM Studio 0.2: plain {role, content} messages
    if _OPENAI_KEYS & obj.keys():
        return OPENAI_JSONL
    return None


def _detect_array(text: str, complete: bool) -> str:
    body = text[1:].lstrip()
    if body.startswith("]"):
        raise TrafficImportError("The file holds an empty list: there is nothing to import.")
    try:
        first, _ = decode_at(body)
    except JsonRefused:
        return _guess_from_keys(body)  # a hostile first item: the reader skips it
    except ValueError:
        if complete:
            raise TrafficImportError(TRUNCATED) from None
        return _guess_from_keys(body)  # the first item is larger than the head
    found = classify(first, whole_file=False)
    if found in (CHATGPT_EXPORT, OPEN_WEBUI_EXPORT):
        return found
    raise TrafficImportError(UNKNOWN)


def _guess_from_keys(body: str) -> str:
    head = body[:HEAD_BYTES]
    if '"mapping"' in head:
        return CHATGPT_EXPORT
    if '"chat"' in head and ('"history"' in head or '"messages"' in head):
        return OPEN_WEBUI_EXPORT
    raise TrafficImportError(UNKNOWN)


def _detect_object(text: str, complete: bool) -> str:
    lines = [ln.rstrip() for ln in text.split("\n", 50)[:50] if ln.strip()]
    for i, line in enumerate(lines[:20]):
        if not line.startswith("{"):
            continue  # JSON Lines start every record at the left margin
        try:
            obj, end = decode_at(line)
        except ValueError:
            continue  # a broken (or hostile) first line of JSON Lines: try the next ones
        whole = complete and len(lines) == 1
        found = classify(obj, whole_file=whole)
        if found == OPENAI_JSONL or (found is not None and i == 0):
            return found  # JSON Lines, or a document written on one line
    try:
        obj, end = decode_at(text)
    except JsonRefused as exc:
        raise TrafficImportError(
            f"The file {exc.reason}, which no real export or log does; it may be damaged, so "
            "export it again."
        ) from None
    except ValueError as exc:
        if not complete:
            return _guess_document(text)  # larger than the head: judge by its keys
        pos = getattr(exc, "pos", 0)
        if pos >= len(text.rstrip()) or getattr(exc, "msg", "").startswith("Unterminated"):
            raise TrafficImportError(TRUNCATED) from None
        raise TrafficImportError(UNKNOWN) from None
    found = classify(obj, whole_file=complete and not text[end:].strip())
    if found == OPENAI_JSONL:
        raise TrafficImportError(
            "The file holds a request spread over several lines; JSON Lines logs need one "
            "request per line, so export the log as JSON Lines."
        )
    if found is None:
        raise TrafficImportError(UNKNOWN)
    return found


def _guess_document(text: str) -> str:
    head = text[:HEAD_BYTES]
    if '"versions"' in head and '"messages"' in head:
        return LM_STUDIO_CONVERSATION
    return _guess_from_keys(head)


def describe(fmt: str) -> str:
    """A person's name for a format."""
    return {
        LLAMA_SERVER_LOG: "llama-server log",
        OPENAI_JSONL: "OpenAI-style JSON Lines log",
        CHATGPT_EXPORT: "ChatGPT export",
        OPEN_WEBUI_EXPORT: "Open WebUI chat export",
        LM_STUDIO_CONVERSATION: "LM Studio conversation",
    }.get(fmt, fmt)

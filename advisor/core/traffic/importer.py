"""Import one file of traffic: detect its format, read it, count tokens, derive statistics."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import IO

from advisor.core.traffic import (
    chatgpt_export,
    llama_server_log,
    lm_studio,
    open_webui_export,
    openai_jsonl,
)
from advisor.core.traffic.derive import TrafficStats, derive_stats
from advisor.core.traffic.detect import describe, detect_format
from advisor.core.traffic.records import (
    CHATGPT_EXPORT,
    LLAMA_SERVER_LOG,
    LM_STUDIO_CONVERSATION,
    OPEN_WEBUI_EXPORT,
    OPENAI_JSONL,
    Turn,
)
from advisor.core.traffic.streaming import (
    Progress,
    ReadContext,
    check_regular_file,
    open_for_reading,
)
from advisor.core.traffic.tokens import EstimatedCounter, TokenCounter, count_turns

Reader = Callable[[IO[bytes], ReadContext], Iterator[Turn]]

READERS: dict[str, Reader] = {
    LLAMA_SERVER_LOG: llama_server_log.read_turns,
    OPENAI_JSONL: openai_jsonl.read_turns,
    CHATGPT_EXPORT: chatgpt_export.read_turns,
    OPEN_WEBUI_EXPORT: open_webui_export.read_turns,
    LM_STUDIO_CONVERSATION: lm_studio.read_turns,
}
_LINE_FORMATS = (LLAMA_SERVER_LOG, OPENAI_JSONL)


def import_traffic(
    path: str | os.PathLike[str],
    counter: TokenCounter | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    fmt: str | None = None,
) -> TrafficStats:
    """Statistics of the traffic in `path`; text is counted and dropped, never kept.

    `progress(done_bytes, total_bytes)` is called at most about 10 times a second;
    `cancel` is checked between records and raises Cancelled. A file that cannot be read
    raises TrafficImportError with one sentence; malformed lines or items are skipped and
    summed up in one note.
    """
    total = check_regular_file(path)
    fmt = fmt or detect_format(path)
    counter = counter or EstimatedCounter()
    ctx = ReadContext(total, progress, cancel)
    with open_for_reading(path) as fh:
        counted = count_turns(READERS[fmt](fh, ctx), counter)
        stats = derive_stats(counted, fmt, counter.name, 0, ())
        shrunk = shrink_sentence(fh, total)
    ctx.finish()
    notes = [shrunk] if shrunk else []
    notes += ctx.notes
    if ctx.malformed:
        notes.insert(0, malformed_sentence(ctx.malformed, fmt))
    return replace(stats, malformed_skipped=ctx.malformed, notes=(*notes, *stats.notes))


def shrink_sentence(fh: IO[bytes], started_bytes: int) -> str:
    """A note when the file got shorter while it was read (a log rotated or truncated by the
    program writing it): what was read may end early ('' when it did not shrink)."""
    try:
        now = os.fstat(fh.fileno()).st_size
    except (OSError, ValueError, AttributeError):
        return ""
    if now >= started_bytes:
        return ""
    return (
        f"The file shrank from {started_bytes:,} to {now:,} bytes while it was read (something "
        "was writing to it), so its last requests may be missing; import it again when "
        "nothing writes to it."
    )


def malformed_sentence(n: int, fmt: str) -> str:
    """The one summary sentence for `n` skipped lines or items of a `fmt` file."""
    what = "line" if fmt in _LINE_FORMATS else "item"
    if n == 1:
        return f"1 malformed {what} of this {describe(fmt)} could not be read and was skipped."
    return f"{n} malformed {what}s of this {describe(fmt)} could not be read and were skipped."

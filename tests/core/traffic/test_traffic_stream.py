"""Streaming: bounded buffers, batched counting, progress at most ~10 a second, cancel."""

from __future__ import annotations

import json
import threading
from dataclasses import fields

import pytest

from advisor.core.traffic import (
    Cancelled,
    CountedTurn,
    EstimatedCounter,
    TrafficImportError,
    Turn,
    count_turns,
    import_traffic,
    streaming,
)
from advisor.core.traffic.streaming import ReadContext


class RecordingCounter:
    """A counter that remembers its batches (a tokenizer child process would see these)."""

    name = "recording"
    exact = True

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def count(self, texts: list[str]) -> list[int]:
        self.batches.append(list(texts))
        return [len(t) for t in texts]


def _jsonl(path, n: int) -> None:
    with path.open("w") as fh:
        for i in range(n):
            req = {"messages": [{"role": "user", "content": f"question number {i}"}]}
            fh.write(json.dumps({"request": req, "response": f"answer {i}"}) + "\n")


def test_texts_reach_the_counter_in_batches_and_go_no_further():
    turns = [Turn(f"c{i}", 0, prompt_texts=(f"q{i}",), answer_texts=(f"a{i}",)) for i in range(300)]
    counter = RecordingCounter()
    counted = list(count_turns(turns, counter, batch_texts=256))
    assert max(len(b) for b in counter.batches) <= 256
    assert sum(len(b) for b in counter.batches) == 600  # every text counted exactly once
    # only numbers survive: no field of a counted turn holds text but the conversation id
    values = {f.name: getattr(counted[0], f.name) for f in fields(CountedTurn)}
    text_fields = {k for k, v in values.items() if isinstance(v, str)}
    assert text_fields == {"conversation_id"}
    assert counted[5] == CountedTurn("c5", 0, None, None, 2, 2, 0, True, opens_conversation=True)


def test_the_stats_keep_no_text(fixtures):
    stats = import_traffic(fixtures / "openai_requests.jsonl")
    dumped = json.dumps(stats.to_json())
    for phrase in ("capital of France", "haiku", "Paris", "You are a helpful"):
        assert phrase not in dumped


def test_estimated_counter_says_it_is_an_estimate():
    counter = EstimatedCounter()
    assert counter.exact is False and "estimate" in counter.name
    # ASCII: ceil(chars / 4); "日本語" is 9 bytes of UTF-8 -> ceil(9 / 4) = 3
    assert counter.count(["", "abcd", "abcde", "日本語"]) == [0, 1, 2, 3]


def test_cancel_stops_between_records(tmp_path):
    path = tmp_path / "requests.jsonl"
    _jsonl(path, 500)
    cancel = threading.Event()
    seen: list[int] = []

    def progress(done: int, total: int) -> None:
        seen.append(done)
        cancel.set()  # the person presses Cancel after the first report

    with pytest.raises(Cancelled):
        import_traffic(path, progress=progress, cancel=cancel)
    assert seen and seen[-1] < path.stat().st_size  # it stopped before the end


def test_progress_is_reported_at_most_ten_times_a_second():
    now = [0.0]

    def clock() -> float:
        now[0] += 0.01  # each record takes 10 ms
        return now[0]

    calls: list[tuple[int, int]] = []
    ctx = ReadContext(1000, lambda d, t: calls.append((d, t)), None, clock)
    for i in range(1000):  # 10 s of records
        ctx.advance(i)
    assert 90 <= len(calls) <= 101
    ctx.finish()
    assert calls[-1] == (1000, 1000)


def test_json_array_is_read_through_a_small_buffer(monkeypatch, fixtures):
    # With 64-byte reads every conversation spans many reads: the buffer must grow and
    # shrink around one item, and the figures must not change.
    whole = import_traffic(fixtures / "chatgpt_conversations.json")
    monkeypatch.setattr(streaming, "CHUNK_BYTES", 64)
    small = import_traffic(fixtures / "chatgpt_conversations.json")
    assert small == whole


def test_an_item_larger_than_the_limit_is_refused_in_one_sentence(monkeypatch, tmp_path):
    conv = {"mapping": {"r": {"message": None, "parent": None, "children": []}}, "x": "y" * 5000}
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([conv, conv]))
    monkeypatch.setattr(streaming, "CHUNK_BYTES", 256)
    monkeypatch.setattr(streaming, "MAX_ELEMENT_BYTES", 1024)
    with pytest.raises(TrafficImportError, match="larger than"):
        import_traffic(path, fmt="chatgpt-export")


def test_turns_without_text_are_not_held_back():
    # a server log gives token counts, no text: counting must still go 256 turns at a time,
    # or a long log would sit in memory until its end
    made = 0

    def turns():
        nonlocal made
        for i in range(1000):
            made += 1
            yield Turn("", i, prompt_tokens=1, answer_tokens=1, history_tokens=0)

    first = next(count_turns(turns(), EstimatedCounter()))
    assert first.prompt_tokens == 1 and made == 256

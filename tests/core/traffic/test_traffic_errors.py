"""Files that cannot be imported say so in one sentence; malformed lines are only counted."""

from __future__ import annotations

import pytest

from advisor.core.traffic import TrafficImportError, detect_format, import_traffic

from .helpers import one_sentence


def _error(path) -> str:
    with pytest.raises(TrafficImportError) as info:
        detect_format(path)
    message = str(info.value)
    assert one_sentence(message), message
    return message


def test_empty_file(tmp_path):
    path = tmp_path / "conversations.json"
    path.write_bytes(b"")
    assert "empty" in _error(path)


def test_blank_file(tmp_path):
    path = tmp_path / "log.txt"
    path.write_text("\n  \n\t\n")
    assert "blank" in _error(path)


def test_binary_file(tmp_path):
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF\x03\x00\x00\x00" + bytes(range(256)) * 4)
    assert "binary" in _error(path)


def test_zip_archive_says_to_unzip(tmp_path):
    path = tmp_path / "chatgpt-export.zip"
    path.write_bytes(b"PK\x03\x04" + b"\x00" * 64)
    assert "unzip" in _error(path)


def test_truncated_json_array(tmp_path, fixtures):
    whole = (fixtures / "chatgpt_conversations.json").read_bytes()
    path = tmp_path / "conversations.json"
    path.write_bytes(whole[:1500])  # cut inside the first conversation
    assert "truncated" in _error(path)


def test_truncation_after_the_first_item_fails_the_import_in_one_sentence(tmp_path, fixtures):
    whole = (fixtures / "chatgpt_conversations.json").read_bytes()
    cut = whole.index(b'"title": "Arithmetic"') + 200  # inside the second conversation
    path = tmp_path / "conversations.json"
    path.write_bytes(whole[:cut])
    assert detect_format(path) == "chatgpt-export"  # the first item is whole
    with pytest.raises(TrafficImportError) as info:
        import_traffic(path)
    assert "truncated" in str(info.value) and one_sentence(str(info.value))


def test_truncated_single_document(tmp_path, fixtures):
    whole = (fixtures / "1730000000000.conversation.json").read_bytes()
    path = tmp_path / "chat.conversation.json"
    path.write_bytes(whole[: len(whole) // 2])
    assert "truncated" in _error(path)


def test_unknown_text_format(tmp_path):
    path = tmp_path / "traffic.csv"
    path.write_text("time,prompt,answer\n2024-06-01,hello,hi\n")
    assert "not recognised" in _error(path)


def test_unknown_json_object(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text('{"theme": "dark", "font_size": 12}\n')
    assert "not recognised" in _error(path)


def test_empty_json_list(tmp_path):
    path = tmp_path / "conversations.json"
    path.write_text("[]\n")
    assert "empty list" in _error(path)


def test_folder_is_not_a_regular_file(tmp_path):
    assert "not a regular file" in _error(tmp_path)


def test_missing_file(tmp_path):
    assert "no file" in _error(tmp_path / "nowhere.jsonl")


def test_log_without_requests_says_so(tmp_path):
    path = tmp_path / "server.log"
    path.write_text("main: server is listening on http://127.0.0.1:8080 - starting the main loop\n")
    assert detect_format(path) == "llama-server-log"
    with pytest.raises(TrafficImportError) as info:
        import_traffic(path)
    assert "no requests" in str(info.value) and one_sentence(str(info.value))


def test_malformed_jsonl_lines_are_counted_in_one_note(tmp_path):
    good = '{"messages": [{"role": "user", "content": "abcd"}], "response": "efgh"}\n'
    path = tmp_path / "requests.jsonl"
    path.write_text(good + "{not json\n" + good + '"a string"\n' + "{}\n" + good)
    stats = import_traffic(path)
    # 3 good requests; "{not json", the bare string and the empty object are malformed
    assert (stats.requests, stats.malformed_skipped) == (3, 3)
    summary = [n for n in stats.notes if "malformed" in n]
    assert summary == [
        "3 malformed lines of this OpenAI-style JSON Lines log could not be read and were skipped."
    ]


def test_a_log_that_begins_mid_request_notes_it_without_calling_it_malformed(tmp_path, fixtures):
    lines = (fixtures / "llama_server_timestamps.log").read_text().splitlines(keepends=True)
    # drop everything up to task 2's launch: task 0 and task 2 are then cut off
    start = next(i for i, ln in enumerate(lines) if "task 2 | processing task" in ln) + 1
    path = tmp_path / "server.log"
    path.write_text("".join(lines[start:]))
    stats = import_traffic(path)
    # only task 4 is whole (new 100, answer 150); the "oops" line is still malformed
    assert (stats.requests, stats.malformed_skipped) == (1, 1)
    assert "2 requests cut off by the start or end of the log were left out." in stats.notes


def test_json_lines_whose_first_line_is_broken_are_still_recognised(tmp_path, fixtures):
    path = tmp_path / "requests.log"
    path.write_text('{"request": {"mess\n' + (fixtures / "openai_requests.jsonl").read_text())
    assert detect_format(path) == "openai-jsonl"
    assert import_traffic(path).malformed_skipped == 3  # the two of the fixture, and this one


def test_a_request_spread_over_lines_asks_for_json_lines(tmp_path):
    path = tmp_path / "request.json"
    path.write_text('{\n  "model": "m",\n  "messages": [{"role": "user", "content": "hi"}]\n}\n')
    message = _error(path)
    assert "one request per line" in message

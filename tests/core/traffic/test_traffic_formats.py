"""Each format's fixture gives the figures computed by hand below.

The default counter estimates ceil(bytes / 4) tokens per message (all fixture text is ASCII,
so bytes = characters). Percentiles interpolate linearly: the p-th percentile of n sorted
values sits at rank p/100 * (n - 1). Times are seconds.
"""

from __future__ import annotations

import json

import pytest

from advisor.core.traffic import detect_format, import_traffic, workload_numbers
from advisor.core.traffic.derive import BASIS_ESTIMATED, BASIS_ORDER, BASIS_TIMES


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("llama_server_timestamps.log", "llama-server-log"),
        ("llama_server_plain.log", "llama-server-log"),
        ("openai_requests.jsonl", "openai-jsonl"),
        ("chatgpt_conversations.json", "chatgpt-export"),
        ("open_webui_export.json", "open-webui-export"),
        ("1730000000000.conversation.json", "lm-studio-conversation"),
    ],
)
def test_each_fixture_is_recognised_by_its_content(fixtures, tmp_path, name, fmt):
    assert detect_format(fixtures / name) == fmt
    renamed = tmp_path / "traffic.txt"  # the name says nothing: only the content counts
    renamed.write_bytes((fixtures / name).read_bytes())
    assert detect_format(renamed) == fmt


def test_llama_server_log_with_timestamps(fixtures):
    s = import_traffic(fixtures / "llama_server_timestamps.log")
    # Tasks (start-end s since server start; prompt eval = new tokens; eval = answer;
    # history = task.n_tokens - prompt eval, the prefix the slot's cache kept):
    #   task 0: 60-66, new 120, answer 200, history 120-120 = 0
    #   task 2: 62-64, new 40,  answer 38,  history 40-40 = 0
    #   task 4: 126-130, new 100, answer 150, history 420-100 = 320
    assert (s.requests, s.conversations, s.format) == (3, None, "llama-server-log")
    # new [40,100,120]: median 100, p90 rank 1.8 = 100 + 0.8*20 = 116
    assert (s.prompt_tokens_median, s.prompt_tokens_p90) == (100, 116)
    # answers [38,150,200]: median 150, p90 = 150 + 0.8*50 = 190
    assert (s.answer_tokens_median, s.answer_tokens_p90) == (150, 190)
    # history [0,0,320]: median 0, p90 = 0 + 0.8*320 = 256
    assert (s.history_tokens_median, s.history_tokens_p90) == (0, 256)
    # span 60 -> 130 = 70 s; 3 requests * 86400 / 70 = 3702.857
    assert s.span_s == 70 and s.requests_per_day == pytest.approx(3702.857)
    # levels: 60-62 one, 62-64 two, 64-66 one, 66-126 none, 126-130 one.
    # busy 10 s: level 1 for 8 s, level 2 for 2 s -> median 1, p90 2, peak 2; idle 60/70
    assert (s.peak_concurrency, s.typical_concurrency, s.busy_p90_concurrency) == (2, 1, 2)
    assert s.idle_share == pytest.approx(60 / 70, abs=1e-6)
    assert s.concurrency_basis == BASIS_TIMES
    # prefix cache: 320 reused of 260 new + 320 re-sent = 580
    assert s.prefix_cache_share == pytest.approx(320 / 580)
    # the "prompt eval time =   oops ms / ?? tokens" line
    assert s.malformed_skipped == 1
    assert s.tokens == "exact"
    assert workload_numbers(s) == {
        "prompt_tokens": 116,
        "answer_tokens": 150,
        "history_tokens": 256,
        "concurrency": 2,
        "requests_per_day": 3703,
    }


def test_llama_server_log_without_timestamps_uses_slot_order(fixtures):
    s = import_traffic(fixtures / "llama_server_plain.log")
    # Old style: a "slot print_timing" line, then bare timing lines. Released in the order
    #   task 1: new 50, answer 10, history 50-50 = 0, running at launch: 2 (task 0 open)
    #   task 0: new 30, answer 70, history 30-30 = 0, running at launch: 1
    #   task 3: new 20, answer 40, history 80-20 = 60, running at launch: 2 (task 0 open)
    # The closing llama_perf_context_print line belongs to no request and is ignored.
    assert s.requests == 3 and s.malformed_skipped == 0
    # new [20,30,50]: median 30, p90 = 30 + 0.8*20 = 46
    assert (s.prompt_tokens_median, s.prompt_tokens_p90) == (30, 46)
    # answers [10,40,70]: median 40, p90 = 40 + 0.8*30 = 64
    assert (s.answer_tokens_median, s.answer_tokens_p90) == (40, 64)
    # history [0,0,60]: p90 = 0.8*60 = 48
    assert s.history_tokens_p90 == 48
    # running at launch [1,2,2]: peak 2, median 2; no times -> no rate, no idle share
    assert (s.peak_concurrency, s.typical_concurrency) == (2, 2)
    assert s.requests_per_day is None and s.idle_share is None
    assert s.concurrency_basis == BASIS_ORDER
    # 60 reused of 100 new + 60 re-sent
    assert s.prefix_cache_share == pytest.approx(60 / 160)
    assert workload_numbers(s)["requests_per_day"] is None


def test_openai_jsonl_links_requests_into_conversations(fixtures):
    s = import_traffic(fixtures / "openai_requests.jsonl")
    # Estimated texts: system "You are a helpful assistant." 28 chars -> 7;
    # "What is the capital of France?" 30 -> 8; "The capital of France is Paris." 31 -> 8;
    # "And what is its population?" 27 -> 7;
    # "About 2.1 million people live in Paris proper." 46 -> 12.
    #   A0 (proxy pair):  new 7+8 = 15, answer 8, history 0; 10:00:00-10:00:10
    #   B0 (LiteLLM):     usage 25/60 -> new 25, answer 60, history 0; +30 s to +36 s
    #   A1 (proxy pair):  re-sends A0 + its answer -> same conversation; new 7, answer 12,
    #                     history 15+8 = 23; +60 to +65
    #   B1 (LiteLLM):     usage 110/40; history = B0's 25+60 = 85 (exact), new 110-85 = 25;
    #                     +100 to +104
    #   C0 (Batch output): usage 30/12, no messages -> new 30, answer 12; created +200,
    #                      no end: 12 tokens / 20 tok/s = 0.6 s
    # A broken line and a "[1, 2, 3]" line are malformed; the failed batch line is noted.
    assert (s.requests, s.conversations) == (5, 3)
    # new [7,15,25,25,30]: median 25, p90 rank 3.6 = 25 + 0.6*5 = 28
    assert (s.prompt_tokens_median, s.prompt_tokens_p90) == (25, 28)
    # answers [8,12,12,40,60]: median 12, p90 = 40 + 0.6*20 = 52
    assert (s.answer_tokens_median, s.answer_tokens_p90) == (12, 52)
    # history [0,0,0,23,85]: median 0, p90 = 23 + 0.6*62 = 60.2
    assert (s.history_tokens_median, s.history_tokens_p90) == (0, pytest.approx(60.2))
    # re-sent 108 of 102 new + 108 = 210
    assert s.prefix_cache_share == pytest.approx(108 / 210)
    # span 0 -> 200.6 s: 5 * 86400 / 200.6 = 2153.539; no overlaps; busy 10+6+5+4+0.6 = 25.6
    assert s.requests_per_day == pytest.approx(2153.539)
    assert (s.peak_concurrency, s.typical_concurrency) == (1, 1)
    assert s.idle_share == pytest.approx(175 / 200.6, abs=1e-6)
    assert s.concurrency_basis == BASIS_ESTIMATED
    assert s.malformed_skipped == 2
    assert s.tokens == "partly exact"  # A0 and A1 estimated, the rest from usage
    assert any("error instead of an answer" in n for n in s.notes)
    assert workload_numbers(s) == {
        "prompt_tokens": 28,
        "answer_tokens": 12,
        "history_tokens": 60,
        "concurrency": 1,
        "requests_per_day": 2154,
    }


def test_chatgpt_export_follows_current_node_and_skips_side_branches(fixtures):
    s = import_traffic(fixtures / "chatgpt_conversations.json")
    # conv-1 (path root > hidden empty system > u1 > a1 > u2 > a2; u2-old/a2-old are an
    # edited branch and are left out):
    #   t0: "Explain recursion in one sentence." 34 -> 9;
    #       "Recursion is when a function calls itself." 42 -> 11; history 0
    #   t1: "Show an example in Python." 26 -> 7 (the image part has no text);
    #       "def fact(n): return n * fact(n - 1) if n else 1" 47 -> 12; history 9+11 = 20
    # conv-2 (no current_node: the last leaf is followed):
    #   t0: "Compute 2 + 2 with Python." 26 -> 7 plus the tool output "4" 1 -> 1 = 8;
    #       answer "print(2 + 2)" 12 -> 3 plus "2 + 2 = 4." 10 -> 3 = 6; history 0
    # The third item has no mapping: malformed.
    assert (s.requests, s.conversations, s.malformed_skipped) == (3, 2, 1)
    # new [7,8,9]: median 8, p90 = 8 + 0.8*1 = 8.8; answers [6,11,12]: 11 and 11.8
    assert (s.prompt_tokens_median, s.prompt_tokens_p90) == (8, pytest.approx(8.8))
    assert (s.answer_tokens_median, s.answer_tokens_p90) == (11, pytest.approx(11.8))
    # history [0,0,20]: p90 = 16; share 20 / (24 + 20)
    assert s.history_tokens_p90 == pytest.approx(16)
    assert s.prefix_cache_share == pytest.approx(20 / 44)
    # starts 0, 100, 86400; ends estimated at 20 tok/s: +0.55, +0.6, +0.3
    # span 86400.3 s -> 3 * 86400 / 86400.3 = 2.99999 per day
    assert s.requests_per_day == pytest.approx(3.0, abs=1e-3)
    assert s.concurrency_basis == BASIS_ESTIMATED and s.peak_concurrency == 1
    assert s.tokens == "estimated"
    assert workload_numbers(s) == {
        "prompt_tokens": 9,
        "answer_tokens": 11,
        "history_tokens": 16,
        "concurrency": 1,
        "requests_per_day": 3,
    }


def test_open_webui_export_uses_usage_where_present(fixtures):
    s = import_traffic(fixtures / "open_webui_export.json")
    # owui-1 (history tree to currentId m4; the regenerated m2b is a side branch):
    #   t0: usage prompt 12, completion 9 -> new 12, answer 9, history 0 (exact);
    #       start 1710000000, total_duration 1.5 s
    #   t1: info prompt_eval_count 40, eval_count 10; history = 12+9 = 21 (exact),
    #       new 40-21 = 19; start +60, total_duration 2 s
    # owui-2 (legacy flat messages, no usage):
    #   t0: "Translate 'cat' to French." 26 -> 7; "Chat." 5 -> 2; start +3600, end
    #       estimated 2 / 20 = 0.1 s later
    # owui-3 has no chat body: malformed.
    assert (s.requests, s.conversations, s.malformed_skipped) == (3, 2, 1)
    # new [7,12,19]: median 12, p90 = 12 + 0.8*7 = 17.6; answers [2,9,10]: 9 and 9.8
    assert (s.prompt_tokens_median, s.prompt_tokens_p90) == (12, pytest.approx(17.6))
    assert (s.answer_tokens_median, s.answer_tokens_p90) == (9, pytest.approx(9.8))
    # history [0,0,21]: p90 = 16.8; share 21 / (38 + 21)
    assert s.history_tokens_p90 == pytest.approx(16.8)
    assert s.prefix_cache_share == pytest.approx(21 / 59)
    # span 3600.1 s: 3 * 86400 / 3600.1 = 71.998; busy 1.5 + 2 + 0.1 = 3.6 s
    assert s.requests_per_day == pytest.approx(71.998, abs=1e-3)
    assert s.idle_share == pytest.approx((3600.1 - 3.6) / 3600.1, abs=1e-6)
    assert s.tokens == "partly exact"
    assert workload_numbers(s)["history_tokens"] == 17  # round(16.8)


def test_lm_studio_conversation_takes_the_selected_version(fixtures):
    s = import_traffic(fixtures / "1730000000000.conversation.json")
    # t0: system "You are a chef." + "Suggest a quick dinner." with the SELECTED answer
    #     (version 1) whose stats give promptTokensCount 30, predictedTokensCount 10
    #     -> new 30, answer 10, history 0 (exact); createdAt 1730000000 s, 0.6 s long
    # t1: "Make it vegan." 14 -> 4; "Use tofu instead of egg." 24 -> 6 (no stats);
    #     history = 30 + 10 = 40; no time (messages carry none)
    assert (s.requests, s.conversations) == (2, 1)
    # new [4,30]: median 17, p90 = 4 + 0.9*26 = 27.4; answers [6,10]: 8 and 9.6
    assert (s.prompt_tokens_median, s.prompt_tokens_p90) == (17, pytest.approx(27.4))
    assert (s.answer_tokens_median, s.answer_tokens_p90) == (8, pytest.approx(9.6))
    # history [0,40]: median 20, p90 36; share 40 / (34 + 40)
    assert (s.history_tokens_median, s.history_tokens_p90) == (20, 36)
    assert s.prefix_cache_share == pytest.approx(40 / 74)
    # one timed request: no rate; its own interval is all busy time
    assert s.requests_per_day is None
    assert (s.peak_concurrency, s.idle_share) == (1, 0.0)
    assert s.tokens == "partly exact"


def test_chatgpt_custom_instructions_are_system_text_not_a_turn(tmp_path):
    def node(nid, parent, role, content, children):
        msg = {"id": nid, "author": {"role": role}, "create_time": 1700000000.0, "content": content}
        return {"id": nid, "message": msg, "parent": parent, "children": children}

    mapping = {
        "root": {"id": "root", "message": None, "parent": None, "children": ["ctx"]},
        # custom instructions are stored as a hidden *user* message
        "ctx": node("ctx", "root", "user", {"content_type": "user_editable_context",
                    "user_profile": "", "user_instructions": "Answer briefly."}, ["u"]),
        "u": node("u", "ctx", "user", {"content_type": "text", "parts": ["Hi"]}, ["a"]),
        "a": node("a", "u", "assistant", {"content_type": "text", "parts": ["Hello."]}, []),
    }  # fmt: skip
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([{"mapping": mapping, "current_node": "a", "id": "x"}]))
    s = import_traffic(path)
    # one turn: "Answer briefly." 15 -> 4 plus "Hi" 2 -> 1 = 5 new; "Hello." 6 -> 2
    assert (s.requests, s.prompt_tokens_median, s.answer_tokens_median) == (1, 5, 2)

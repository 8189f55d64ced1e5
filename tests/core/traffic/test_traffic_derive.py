"""The overlap sweep and the Workload numbers, on figures worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from advisor.core.traffic import CountedTurn, TrafficStats, derive_stats, workload_numbers
from advisor.core.traffic.derive import sweep


def test_sweep_counts_overlap_and_idle_time():
    # [0,10] and [5,15] overlap for 5 s; [20,30] runs alone; nothing runs 15-20.
    # levels: 0-5 one, 5-10 two, 10-15 one, 15-20 none, 20-30 one.
    # busy 25 s: level 1 for 20 s, level 2 for 5 s -> median 1; p90 at 22.5 s -> 2
    peak, median, p90, idle = sweep(np.array([0.0, 5, 20]), np.array([10.0, 15, 30]))
    assert (peak, median, p90) == (2, 1.0, 2.0)
    assert idle == pytest.approx(5 / 30, abs=1e-6)


def test_back_to_back_requests_do_not_overlap():
    peak, median, _, idle = sweep(np.array([0.0, 10]), np.array([10.0, 20]))
    assert (peak, median, idle) == (1, 1.0, 0.0)


def _turn(start, end, prompt=10, answer=10, history=0, conv="c"):
    return CountedTurn(conv, 0, start, end, prompt, answer, history, False)


def test_four_streams_most_of_the_time():
    # four requests 0-100 and one 0-10: level 5 for 10 s, level 4 for 90 s
    # -> median 4, p90 at 90 s of 100 -> 4; peak 5
    turns = [_turn(0.0, 100.0, conv=f"c{i}") for i in range(4)] + [_turn(0.0, 10.0)]
    s = derive_stats(turns, "openai-jsonl", "test")
    assert (s.peak_concurrency, s.typical_concurrency, s.busy_p90_concurrency) == (5, 4, 4)
    assert workload_numbers(s)["concurrency"] == 4
    # 5 requests over 100 s -> 5 * 86400 / 100 = 4320 a day
    assert s.requests_per_day == pytest.approx(4320)


def test_workload_numbers_use_p90_prompt_median_answer_p90_history():
    # prompts 100..1000 step 100: p90 at rank 8.1 = 900 + 0.1*100 = 910
    # answers 10..100 step 10: median (50+60)/2 = 55; history 0..900: p90 = 810
    turns = [
        CountedTurn("c", i, None, None, 100 * (i + 1), 10 * (i + 1), 100 * i, True)
        for i in range(10)
    ]
    s = derive_stats(turns, "chatgpt-export", "test")
    assert workload_numbers(s) == {
        "prompt_tokens": 910,
        "answer_tokens": 55,
        "history_tokens": 810,
        "concurrency": 1,
        "requests_per_day": None,
    }


def test_stats_round_trip_through_json():
    s = derive_stats([_turn(0.0, 5.0), _turn(10.0, 12.0)], "openai-jsonl", "test")
    assert TrafficStats.from_json(s.to_json()) == s
    assert TrafficStats.from_json({**s.to_json(), "added_later": 1}) == s

"""The five preset workloads are the seed article's situations (../shared/reference/
seed-article.txt): a short prompt and long answer, 20,000 tokens in and 200 back, 32,768 tokens
of history, 32 people at once, an agent with a large context. Their depths are worked out here."""

from __future__ import annotations

import pytest

from advisor.core.infra.errors import InputError
from advisor.core.predict.conditions.workloads import PRESETS, custom_workload, get_workload

# id: (prompt, answer, history, users, requests/day, streamed); requests/day: the app's choice
PRESET_TABLE = {
    "chat": (300, 500, 0, 1, 60, True),
    "summarise": (20_000, 200, 0, 1, 20, False),  # the article's retrieval workload
    "long-chat": (300, 500, 32_768, 1, 60, True),  # the article's 32,768 tokens of history
    "many-users": (300, 500, 0, 32, 2_000, True),
    "coding-agent": (4_000, 400, 12_000, 1, 300, False),
}


@pytest.mark.parametrize("wid", list(PRESET_TABLE))
def test_each_preset_is_the_situation_it_names(wid):
    w = PRESETS[wid]
    prompt, answer, history, users, per_day, streamed = PRESET_TABLE[wid]
    got = (w.prompt_tokens, w.answer_tokens, w.history_tokens, w.concurrency)
    assert got == (prompt, answer, history, users)
    assert (w.requests_per_day, w.streamed) == (per_day, streamed)
    # while the answer is written the cache holds history + prompt + half the answer so far
    assert w.decode_depth_tokens() == history + prompt + answer // 2
    assert w.prefill_depth_tokens() == history + prompt // 2
    assert w.context_tokens() == history + prompt + answer


def test_the_long_chat_depths_by_hand():
    w = get_workload("long-chat")
    assert w.decode_depth_tokens() == 32_768 + 300 + 250 == 33_318
    assert w.prefill_depth_tokens() == 32_768 + 150
    assert w.context_tokens() == 33_568


@pytest.mark.parametrize(
    ("name", "wid"),
    [("Summarize", "summarise"), ("LONG CHAT", "long-chat"), ("longchat", "long-chat"),
     ("many", "many-users"), ("agent", "coding-agent"), ("coding", "coding-agent"),
     ("Chat", "chat")],
)  # fmt: skip
def test_names_people_type_find_the_preset(name, wid):
    assert get_workload(name).id == wid


def test_an_unknown_name_suggests_and_lists():
    with pytest.raises(InputError) as err:
        get_workload("sumarise")
    text = str(err.value)
    assert "Unknown workload 'sumarise'" in text and "summarise" in text
    assert "chat, summarise, long-chat, many-users, coding-agent, or custom" in text


def test_custom_numbers_and_their_limits():
    w = custom_workload(100, 50, 1000, 4, 10)
    assert (w.id, w.prompt_tokens, w.answer_tokens, w.history_tokens) == ("custom", 100, 50, 1000)
    assert (w.concurrency, w.requests_per_day, w.streamed) == (4, 10, True)
    assert custom_workload(0, 0).requests_per_day == 50 and custom_workload(0, 0).concurrency == 1
    for bad in ((-1, 1, 0, 1), (1, -1, 0, 1), (1, 1, -1, 1), (1, 1, 0, 0)):
        with pytest.raises(ValueError):
            custom_workload(*bad)
    assert w.to_json()["history_tokens"] == 1000


def test_a_workload_of_a_few_numbers_gets_one_user_and_50_requests():
    from advisor.core.predict.conditions.workloads import Workload

    w = Workload("w", "W", "", prompt_tokens=10, answer_tokens=20)
    assert (w.history_tokens, w.concurrency, w.requests_per_day, w.streamed) == (0, 1, 50, True)


def test_depths_are_whole_tokens_for_odd_answers():
    w = custom_workload(11, 501, 7)
    assert w.decode_depth_tokens() == 7 + 11 + 250 and isinstance(w.decode_depth_tokens(), int)
    assert w.prefill_depth_tokens() == 7 + 5 and isinstance(w.prefill_depth_tokens(), int)


def test_a_typo_gets_the_two_nearest_names():
    with pytest.raises(InputError, match=r"Unknown workload 'chatt'\. Did you mean chat or "
                                         r"long-chat\? Choose"):  # fmt: skip
        get_workload("chatt")

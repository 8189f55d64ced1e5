"""'For less': the cheapest card a person could not tell from the fastest, worked by hand.

The rule (`usecases.upgrade.enough_for_less`): among the candidates within budget that fit, the
cheapest one a person could not tell from the fastest (`feel.would_notice`). A wait is told
apart when it is a second and a fifth of the wait longer (`feel.noticeable`); an answer read
as it appears, written faster than a person reads, is felt only in its first word's wait.
"""

from __future__ import annotations

from types import SimpleNamespace

from advisor.core.catalogue.prices import Price
from advisor.usecases.upgrade import (
    Candidate,
    Ranking,
    best_within_budget,
    enough_for_less,
    why_no_pick,
)


def _c(
    name: str,
    request_s: float | None,
    usd: float | None,
    *,
    fits="yes",
    within=True,
    ttft_s=0.0,
    tps=1.0,
    low=1.0,
    beyond=False,
    notes=(),
):
    projection = SimpleNamespace(
        device=name, fits=fits, request_s=request_s, ttft_s=ttft_s, per_user_tps=tps,
        decode_tps=tps, decode_tps_low=tps * low, beyond_context=beyond, notes=notes,
        context_note=next((n for n in notes if "trained on" in n), "") if beyond else "",
    )  # fmt: skip
    price = Price(usd, "new") if usd is not None else None
    return Candidate(None, projection, price, None, None, None, None, within, False)  # type: ignore[arg-type]


def _ranking(*candidates) -> Ranking:
    return Ranking(None, None, tuple(candidates))


def test_the_cheapest_that_feels_the_same_is_named():
    # 0.7 s fastest; 1.6 s is 0.9 s longer (under a second): not noticed; 1.8 s is 1.1 s
    # longer and 61% of the wait: noticed
    ranking = _ranking(
        _c("fast", 0.7, 2000), _c("mid", 0.9, 750), _c("cheap", 1.6, 250), _c("cheapest", 1.8, 200)
    )
    assert best_within_budget(ranking).name == "fast"
    assert enough_for_less(ranking, False).name == "cheap"


def test_long_waits_allow_a_fifth_more():
    # 60 s fastest: 70 s is 10 s (17%) longer: not noticed; 75 s is 25% longer: noticed
    ranking = _ranking(_c("fast", 60, 2000), _c("a", 70, 900), _c("b", 75, 500))
    assert enough_for_less(ranking, False).name == "a"


def test_nothing_when_every_cheaper_card_is_noticeably_slower():
    ranking = _ranking(_c("fast", 3.6, 2000), _c("slower", 5.0, 750), _c("slowest", 30, 250))
    assert enough_for_less(ranking, False) is None


def test_only_candidates_within_budget_that_fit_and_have_a_price():
    ranking = _ranking(
        _c("fast", 0.7, 2000),
        _c("over budget", 0.8, 100, within=False),
        _c("partly fits", 0.8, 100, fits="partial"),
        _c("no price", 0.8, None),
        _c("ok", 0.8, 900),
    )
    assert enough_for_less(ranking, False).name == "ok"


def test_nothing_when_the_fastest_has_no_price_or_is_the_cheapest():
    assert enough_for_less(_ranking(_c("fast", 0.7, None), _c("b", 0.8, 500)), False) is None
    assert enough_for_less(_ranking(_c("fast", 0.7, 300), _c("b", 0.8, 500)), False) is None
    assert enough_for_less(_ranking(), False) is None


def test_a_streamed_answer_faster_than_reading_is_felt_in_its_first_word():
    # chat, 500 tokens: 2.4 s at 207 t/s or 3.6 s at 140 t/s are both read along as they
    # appear; the first word after 0.05 s or 0.4 s: not noticed. 40 t/s with the first word
    # after 1.5 s: noticed (1.45 s sooner). 8 t/s is slower than reading: its whole wait counts.
    ranking = _ranking(
        _c("fast", 2.4, 2000, ttft_s=0.05, tps=207),
        _c("4090-like", 3.6, 1550, ttft_s=0.4, tps=140),
        _c("late start", 12.5, 400, ttft_s=1.5, tps=40),
        _c("slow", 62.5, 150, ttft_s=0.9, tps=8),
    )
    assert enough_for_less(ranking, True).name == "4090-like"
    # the same cards for a document read only when it is done: every cheaper wait is felt
    assert enough_for_less(ranking, False) is None


def test_a_band_reaching_below_reading_speed_counts_its_whole_wait():
    # 12 t/s, but its band goes down to 9: not counted on to stay ahead of the reader, so the
    # whole answer's wait (41.7 s against 2.4 s) is what counts
    ranking = _ranking(
        _c("fast", 2.4, 2000, ttft_s=0.05, tps=207),
        _c("borderline", 41.7, 300, ttft_s=0.3, tps=12, low=0.75),
    )
    assert enough_for_less(ranking, True) is None


def test_why_there_is_no_recommendation():
    beyond = "33,568 tokens of context is beyond the 32,768 this model was trained on: ..."
    # the history is longer than the model was trained on: no card helps, whatever the budget
    ranking = _ranking(
        _c("a", None, 2000, beyond=True, notes=("x", beyond)), _c("b", None, 900, fits="no")
    )
    assert best_within_budget(ranking) is None
    assert why_no_pick(ranking) == f"No card helps here. {beyond}"
    # a card holds the model, but not within the budget
    ranking = _ranking(_c("a", 2.0, 2000, within=False), _c("b", None, 300, fits="partial"))
    assert best_within_budget(ranking) is None
    assert why_no_pick(ranking).startswith("Nothing that holds the model is within this budget")
    # no card holds it whole, whatever the budget
    ranking = _ranking(_c("a", 9.0, 2000, fits="partial"), _c("b", None, 300, fits="no"))
    assert why_no_pick(ranking).startswith("No candidate holds the whole model")


def test_the_for_less_sentence_never_says_a_wait_instead_of_the_same_wait():
    from advisor.core.predict.conditions.workloads import get_workload
    from advisor.usecases.upgrade import for_less_sentence

    chat = get_workload("chat")
    # both first words within a millisecond, both written faster than anyone reads
    cheaper = _c("cheap", 2.0, 500, ttft_s=0.0012, tps=90.0, low=0.9)
    best = _c("fast", 1.5, 2000, ttft_s=0.0009, tps=120.0, low=0.9)
    for c in (cheaper, best):
        c.projection.basis = "modelled"
    line = for_less_sentence(cheaper, best, chat)
    assert "after 1 ms on both" in line and "1 ms instead of 1 ms" not in line, line
    # apart, they are both named
    cheaper.projection.ttft_s = 0.4
    assert "after 400 ms instead of 1 ms" in for_less_sentence(cheaper, best, chat)

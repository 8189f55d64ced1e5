"""The published hybrid results (resources/data/llamacpp_hybrid_*.csv): every row is read or says
why not, none enters the single-device fit, and the shipped shares are the fit on them."""

from __future__ import annotations

import math
import statistics

import pytest

from advisor.core.predict.fitting.shipped import load_speed_model
from advisor.core.predict.model.hybrid_shares import HybridShares
from advisor.core.predict.projecting import hybrid_fit

MODEL = load_speed_model()


def test_every_gathered_row_is_read_or_says_why_not():
    rows, unused = hybrid_fit.load_hybrid_rows()
    added, _ = hybrid_fit.data_paths()
    gathered = len(added.read_text(encoding="utf-8").splitlines()) - 1
    assert len(rows) + len(unused) == gathered
    assert len(rows) >= 20 and len({r.source_url for r in rows}) >= 10
    assert all(reason.strip() for _, reason in unused)
    # a row that ran with experts in RAM or layers on the CPU: a real hybrid placement
    assert all(r.placement.cpu_moe or r.placement.gpu_layers < r.facts.n_layers for r in rows)


def test_no_hybrid_row_is_in_the_single_device_fit():
    # a page may publish full-offload results beside hybrid ones (those may be fitted); no
    # hybrid result itself is: no observation of the same source and device at its speed
    def key(source: str, device: str, tg: float | None, pp: float | None) -> set[tuple]:
        return {(source, device, "tg", tg), (source, device, "pp", pp)}

    hybrid = set().union(*(key(r.source_url, r.device.id, r.tg_tps, r.pp_tps)
                           for r in hybrid_fit.load_hybrid_rows()[0]))  # fmt: skip
    single = set().union(*(key(o.source_url, o.device.id, o.tg_tps, o.pp_tps)
                           for o in MODEL.observations))  # fmt: skip
    assert {k for k in hybrid & single if k[3] is not None} == set()


def test_hybrid_decode_is_within_the_issue_bound_on_the_published_rows():
    predicted = hybrid_fit.predict(hybrid_fit.load_hybrid_rows()[0], MODEL)
    decode = [abs(p.log_error) for p in predicted if p.kind == "decode" and p.predicted]
    prefill = [abs(p.log_error) for p in predicted if p.kind == "prefill" and p.predicted]
    assert len(decode) >= 15 and statistics.median(decode) <= math.log(1.12)
    assert len(prefill) >= 10 and statistics.median(prefill) <= math.log(1.25)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_shipped_shares_are_the_fit_on_the_published_rows():
    rows, _ = hybrid_fit.load_hybrid_rows()
    assert hybrid_fit.fit_shares(rows, MODEL) == HybridShares()

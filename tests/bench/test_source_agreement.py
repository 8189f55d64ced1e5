"""The held-out script's comparison of the model with the data itself: for a row another
source also measured (same device, backend, model and quant), the error of copying that
source's figure beside the model's own held-out error, worked by hand."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from advisor.core.predict.fitting.holdout import HeldOut
from tests.conftest import load_script


def _script():
    return load_script("benchmarks/calibration_holdout.py")


def _obs(source: str, tg: float | None, pp: float | None = None, era="current", device="d1",
         quant="Q4_0"):  # fmt: skip
    return SimpleNamespace(
        device=SimpleNamespace(id=device), backend="cuda", shape_id="llama-2-7b", quant=quant,
        tg_tps=tg, pp_tps=pp, era=era, source_url=source,
    )  # fmt: skip


def test_each_row_is_set_beside_the_other_sources_figure_and_the_model():
    a, b, c = _obs("A", 100.0), _obs("B", 125.0), _obs("C", 80.0, device="d2")
    old = _obs("OLD", 50.0, era="old")
    obs = [a, b, c, old]
    residuals = [
        HeldOut(a, "decode", 110.0, "published"),
        HeldOut(b, "decode", 110.0, "published"),
        HeldOut(a, "decode", 90.0, "modelled"),  # a device left out: not this comparison
        HeldOut(c, "decode", 70.0, "published"),  # nobody else measured d2
        HeldOut(old, "decode", 60.0, "published"),  # an old build
    ]
    copied, model = _script().source_agreement(obs, residuals)["decode"]
    assert copied == pytest.approx([1 - 100 / 125, 125 / 100 - 1])
    assert model == pytest.approx([1 - 100 / 110, 125 / 110 - 1])


def test_several_other_sources_count_by_their_geometric_mean_and_one_source_by_its_median():
    rows = [_obs("A", 100.0), _obs("B", 50.0), _obs("C", 200.0), _obs("C", 400.0),
            _obs("C", 100.0)]  # fmt: skip
    residuals = [HeldOut(rows[0], "decode", 100.0, "published")]
    copied, model = _script().source_agreement(rows, residuals)["decode"]
    # others: B 50, C median 200 -> geometric mean 100
    assert copied == pytest.approx([0.0]) and model == pytest.approx([0.0])


def test_prefill_is_compared_on_its_own_figures():
    a, b = _obs("A", 100.0, pp=1000.0), _obs("B", 100.0, pp=500.0)
    residuals = [HeldOut(a, "prefill", 800.0, "published")]
    out = _script().source_agreement([a, b], residuals)
    assert out["prefill"][0] == pytest.approx([1.0]) and out["prefill"][1] == pytest.approx([0.25])
    assert out["decode"] == ([], [])

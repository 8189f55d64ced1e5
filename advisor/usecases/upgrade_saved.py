"""`advisor upgrade`: the Upgrade page's answer for a saved run, computed in one go, so a
script sees what the page shows (the same projections, prices, ranking, verdict and words)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from advisor.core.catalogue.catalogue import Catalogue
from advisor.core.infra.errors import InputError
from advisor.core.predict.conditions.workloads import Workload
from advisor.core.predict.model.speed_model import SpeedModel
from advisor.core.runs.results import RunResult
from advisor.usecases.compare import verdict, verdict_source
from advisor.usecases.machine import host_for
from advisor.usecases.reference import reference_for_run
from advisor.usecases.run_trust import run_trust
from advisor.usecases.upgrade import (
    best_within_budget,
    measured_decode_watts,
    project_candidates,
    rank_candidates,
)
from advisor.usecases.upgrade_answer import UpgradeAnswer, run_model_label, upgrade_answer

NO_RUN = (
    "No run to answer from: measure one first ('advisor bench MODEL.gguf' or 'advisor bench "
    "--synthetic SHAPE'), or give --result RUN.json."
)


def answer_for_run(
    shown: RunResult | None,
    history: Sequence[RunResult],
    workload: Workload,
    *,
    catalogue: Catalogue,
    speed_model: SpeedModel,
    prices: Mapping[str, float],
    budget_usd: float | None,
    price_per_kwh: float | None,
    include_more: bool = False,
) -> UpgradeAnswer:
    """The answer for a run (a disturbed one replaced by a quiet run of the same model in the
    history, as on the page), compared with the device it was measured on."""
    if shown is None:
        raise InputError(NO_RUN)
    trust = run_trust(shown, history)
    run = trust.used
    assert run is not None
    reference = reference_for_run(run, catalogue)
    host = host_for(None, run=run, catalogue=catalogue)
    projected = project_candidates(
        run.model, workload, catalogue=catalogue, host=host, reference=reference,
        this_machine=None, speed_model=speed_model, include_pro=include_more,
        measured_watts=measured_decode_watts(run),
    )  # fmt: skip
    ranking = rank_candidates(
        projected, prices=prices, price_per_kwh=price_per_kwh, budget_usd=budget_usd
    )
    pick = best_within_budget(ranking)
    v = (
        verdict(
            run.model,
            verdict_source(reference, None),
            pick.target,
            workload,
            host=host,
            reference=reference,
            speed_model=speed_model,
            user_prices=prices,
        )
        if pick is not None
        else None
    )
    return upgrade_answer(
        model=run_model_label(run), machine=run.device_name, trust=trust, ranking=ranking,
        workload=workload, verdict=v,
    )  # fmt: skip

"""`advisor upgrade`: would another card pay off for your run's model and workload? The
Upgrade page's answer (advisor.usecases.upgrade_answer), printed."""

from __future__ import annotations

import argparse

from advisor.cli.output import Output, format_table
from advisor.core.catalogue.catalogue import load_catalogue
from advisor.core.infra.paths import app_paths
from advisor.core.infra.settings import read_settings
from advisor.core.infra.units import fmt_seconds
from advisor.core.infra.validate import number
from advisor.core.predict.fitting.shipped import load_speed_model
from advisor.core.runs.history import History
from advisor.usecases.prices import price_text
from advisor.usecases.reference import read_run_file
from advisor.usecases.upgrade_answer import UpgradeAnswer
from advisor.usecases.upgrade_saved import answer_for_run
from advisor.usecases.workloads import resolve_workload

MAX_BUDGET_USD = 1e7


def run(args: argparse.Namespace) -> Output:
    paths = app_paths()
    settings = read_settings(paths.settings_file)  # the page's prices, budget, electricity
    history = History(paths.data / "runs").load().runs
    shown = read_run_file(args.result) if args.result else (history[0] if history else None)
    budget = (
        number("--budget", args.budget, 1, MAX_BUDGET_USD, unit="dollars")
        if args.budget is not None
        else settings.budget_usd
    )
    workload = resolve_workload(args.workload or settings.workload, paths)
    answer = answer_for_run(
        shown, history, workload, catalogue=load_catalogue(), speed_model=load_speed_model(),
        prices=settings.prices_usd, budget_usd=budget,
        price_per_kwh=settings.electricity_per_kwh, include_more=args.more,
    )  # fmt: skip
    return Output(answer.to_json(), lambda: text(answer))


def text(answer: UpgradeAnswer) -> str:
    cards = answer.ranking.candidates if answer.ranking else ()
    rows = [
        [
            c.name + (" *" if c.on_frontier else ""),
            c.projection.fits,
            fmt_seconds(c.projection.request_s),
            fmt_seconds(c.projection.ttft_s),
            f"{c.projection.per_user_tps:,.1f}" if c.projection.per_user_tps else "-",
            f"{c.speedup:.1f}x" if c.speedup else "-",
            price_text(c.price, "no price") + ("" if c.within_budget else ", over budget"),
            c.projection.basis,
        ]
        for c in cards
    ]
    table = format_table(
        ["device", "fits", "per answer", "first token", "decode t/s", "speed-up", "price",
         "basis"],
        rows, right=(2, 3, 4, 5),
    )  # fmt: skip
    return (
        f"{answer.plain()}\n\n{table}\n\n* on the value frontier: no cheaper card is faster for "
        "this workload."
    )

"""What an upgrade costs and what it buys: energy and the value frontier. Pure arithmetic on
projections; prices come from advisor.core.catalogue.prices, the one answer to what a card
costs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from advisor.core.catalogue.device import Device
from advisor.core.predict.conditions.workloads import Workload
from advisor.core.predict.projecting.projection import Projection

DAYS_PER_MONTH = 30.4  # 365.25 days / 12: electricity a month
# a GPU decoding or prefilling draws close to its board power; idle time is not counted
LOAD_SHARE_OF_TDP = 0.85


@dataclass(frozen=True)
class Energy:
    watts: float
    method: str  # "measured" (this machine's run) | "TDP estimate"
    joules_per_token: float | None
    kwh_per_month: float
    cost_per_month: float | None  # in the user's currency per kWh; None without a price


def energy_of(
    p: Projection,
    device: Device,
    workload: Workload,
    price_per_kwh: float | None,
    measured_watts: float | None = None,
) -> Energy | None:
    """Power under load and what the workload's requests cost a month: the run's measured
    watts on the machine it measured, else LOAD_SHARE_OF_TDP of the board power (labelled an
    estimate); None without either, or without a request time."""
    if measured_watts:
        watts, method = measured_watts, "measured"
    elif device.tdp_w:
        watts, method = device.tdp_w * max(1, p.count) * LOAD_SHARE_OF_TDP, "TDP estimate"
    else:
        return None
    if not p.request_s:
        return None
    tokens_per_s = p.aggregate_tps or p.decode_tps
    joules_per_token = watts / tokens_per_s if tokens_per_s else None
    # the machine works for the requests' time; with several users at once they share it
    busy_s_per_day = p.request_s * workload.requests_per_day / max(1, workload.concurrency)
    kwh = watts * busy_s_per_day * DAYS_PER_MONTH / 3.6e6
    cost = kwh * price_per_kwh if price_per_kwh else None
    return Energy(watts, method, joules_per_token, kwh, cost)


def value_frontier(points: Sequence[tuple[float, float]]) -> set[int]:
    """Indices of (price, speed) points no cheaper-or-equal point matches or beats in speed:
    the devices worth their price. Ties in price keep only the fastest."""
    order = sorted(range(len(points)), key=lambda i: (points[i][0], -points[i][1]))
    best = float("-inf")
    frontier: set[int] = set()
    for i in order:
        if points[i][1] > best:
            frontier.add(i)
            best = points[i][1]
    return frontier

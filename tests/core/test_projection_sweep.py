"""Every catalogued device, a dense model and two mixtures of experts: the projections behave as
physics says they must. More users never get fewer tokens/s in all, nor more each, nor more in all
than the device prefills (no batch multiplies its tokens faster than a full one); a deeper
history never decodes faster; every figure sits inside its band. (A sweep like this found 765
falls in the all-users figure before 19dcee9 and a45877d.)"""

from __future__ import annotations

from dataclasses import replace

import pytest

from advisor.core.catalogue.catalogue import load_catalogue
from advisor.core.hardware.profile import Host
from advisor.core.infra.units import GiB
from advisor.core.model.facts import facts_from_shape
from advisor.core.model.shapes import get_shape
from advisor.core.predict.conditions.workloads import get_workload
from advisor.core.predict.fitting.shipped import load_speed_model
from advisor.core.predict.projecting.projection import Target, project
from advisor.core.predict.projecting.projection_types import ProjectionError

MODEL = load_speed_model()  # the shipped fit, as the app uses it

HOST = Host(ram_bytes=64 * GiB, ram_bandwidth_bytes_per_s=60e9)
SHAPES = (("llama-3.1-8b", "q4_k_m"), ("qwen3-30b-a3b", "q4_k_m"), ("gpt-oss-20b", "mxfp4"))
TOLERANCE = 1e-3  # rounding, not physics


@pytest.mark.slow
@pytest.mark.parametrize(("shape", "quant"), SHAPES)
def test_every_device_behaves(shape, quant):
    facts = facts_from_shape(get_shape(shape), quant)
    chat = get_workload("chat")
    wrong: list[str] = []
    projected = 0
    for device in load_catalogue():
        target = Target(device)
        before = None
        for users in (1, 2, 4, 8, 9, 16, 32):
            try:
                p = project(facts, target, replace(chat, concurrency=users), host=HOST, model=MODEL)
            except ProjectionError:
                break
            if p.fits == "no" or not p.aggregate_tps or not p.per_user_tps:
                break
            if before is not None and p.fits != before.fits:
                # the users' caches pushed part of the model to RAM (a hybrid placement): a
                # slower way to run, which may well serve fewer tokens in all
                break
            projected += 1
            bands = (
                (p.decode_tps_low, p.decode_tps, p.decode_tps_high),
                (p.prefill_tps_low, p.prefill_tps, p.prefill_tps_high),
            )
            for low, value, high in bands:
                if low and value and high and not low <= value <= high:
                    wrong.append(f"{device.name}, {users} users: {value} outside {low}-{high}")
            if p.prefill_tps and p.aggregate_tps > p.prefill_tps * (1 + TOLERANCE):
                wrong.append(f"{device.name}: {users} users outrun its own prefill")
            if before is not None:
                if p.aggregate_tps < before.aggregate_tps * (1 - TOLERANCE):
                    wrong.append(f"{device.name}: {users} users get fewer tokens/s in all")
                if p.per_user_tps > before.per_user_tps * (1 + TOLERANCE):
                    wrong.append(f"{device.name}: {users} users get more tokens/s each")
            before = p
        deeper = None
        for history in (0, 4_000, 16_000, 32_000):
            try:
                p = project(
                    facts, target, replace(chat, history_tokens=history), host=HOST, model=MODEL
                )
            except ProjectionError:
                break
            if p.fits == "no" or p.beyond_context or not p.decode_tps:
                break
            if deeper is not None and p.decode_tps > deeper * (1 + TOLERANCE):
                wrong.append(f"{device.name}: {history} tokens of history decode faster")
            deeper = p.decode_tps
    assert projected > 1000  # the sweep is not empty
    assert not wrong, "\n".join(wrong[:20])

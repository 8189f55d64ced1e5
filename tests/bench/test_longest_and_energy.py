"""The longest-context search and the energy fields, without llama.cpp (the search's trial
allocation is injected; the llama-marked tests run it for real)."""

from __future__ import annotations

import threading

import pytest

from advisor.bench.longest import find_longest_context, memory_cap_tokens
from advisor.bench.runner import _with_energy
from advisor.core.hardware.power import PowerReading
from advisor.core.infra.units import GiB
from advisor.core.model.facts import facts_from_shape
from advisor.core.model.memory import memory_need
from advisor.core.model.shapes import get_shape
from advisor.core.runs.config import BenchConfig, TestSpec
from advisor.core.runs.export import batched_bench_command, llama_bench_command
from advisor.core.runs.preflight import Available
from advisor.core.runs.stats import summarise_samples

FACTS = facts_from_shape(get_shape("llama-3.1-8b"), "Q4_K_M")


class Clock:
    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def _search(room_gib: float, real_limit: int, budget: float = 60.0, step: float = 0.01):
    tried: list[int] = []

    def loads(n: int) -> bool:
        tried.append(n)
        return n <= real_limit

    config = BenchConfig(longest_context_budget_s=budget)
    room = Available(int(room_gib * GiB), "VRAM", 1, 0.03)
    found = find_longest_context(
        None, config, FACTS, room, 4, threading.Event(), clock=Clock(step), loads=loads
    )  # type: ignore[arg-type]
    return found, tried, memory_cap_tokens(FACTS, config, room)


def test_the_search_finds_the_real_limit_and_never_tries_past_free_memory():
    found, tried, cap = _search(12, real_limit=40_000)
    assert max(tried) <= cap  # never more than the free memory read at the start allows
    assert 40_000 - 256 <= found.tokens <= 40_000
    assert found.capped_by == "search" and "Longest context that loaded here" in found.note


def test_the_full_trained_context_when_memory_allows_it():
    found, tried, _ = _search(48, real_limit=10**9)
    assert found.tokens == FACTS.context_length == 131_072 and tried == [131_072]
    assert "full trained context" in found.note


def test_the_memory_cap_bounds_the_search():
    found, tried, cap = _search(6, real_limit=10**9)
    need = memory_need(FACTS, cap, 1).total_bytes
    assert need <= 6 * GiB * 0.97 < memory_need(FACTS, cap + 64, 1).total_bytes
    assert found.tokens == cap and max(tried) == cap and found.capped_by == "free memory"


def test_the_time_budget_stops_the_search():
    found, tried, _ = _search(12, real_limit=40_000, budget=5.0, step=2.0)
    assert found.capped_by == "time budget" and len(tried) <= 3


def test_cancel_stops_the_search():
    from advisor.bench.llama_model import Cancelled

    cancel = threading.Event()
    cancel.set()
    room = Available(12 * GiB, "VRAM")
    with pytest.raises(Cancelled):
        find_longest_context(None, BenchConfig(), FACTS, room, 4, cancel, loads=lambda n: True)  # type: ignore[arg-type]


def _result():
    spec = TestSpec("decode", 0, 128, 0, 1)
    return summarise_samples(spec, [2.0, 2.0], None)  # 64 t/s, 4 s in all


def test_measured_energy_per_token():
    reading = PowerReading(1200.0, 4.0, 300.0, "NVML energy counter (GPU 0)", "measured")
    r = _with_energy(_result(), reading, 4.0, tdp_w=450)
    assert r.average_w == 300 and r.energy_method == "measured"
    assert r.joules_per_token == pytest.approx(1200 / 256)  # 256 tokens in 4 s
    assert r.energy_source.startswith("NVML")


def test_tdp_estimate_where_nothing_is_readable_and_nothing_without_a_tdp():
    r = _with_energy(_result(), None, 4.0, tdp_w=450)
    assert r.energy_method == "estimate" and r.average_w == 450
    assert r.joules_per_token == pytest.approx(450 * 4 / 256)
    assert "catalogue TDP" in r.energy_source
    assert _with_energy(_result(), None, 4.0, tdp_w=None).energy_method == ""


def test_the_batched_command_states_split_kv_and_its_context():
    config = BenchConfig(model_path="m.gguf", batches=(1, 4, 16), n_gen=(128,), threads=8)
    command = batched_bench_command(config)
    assert command is not None
    assert "-kvu" not in command  # one KV cache per stream, batched-bench's default
    assert "-c 2064 -npp 1 -ntg 128 -npl 4,16" in command and "-t 8" in command
    assert "llama-batched-bench" in llama_bench_command_for(config)
    assert batched_bench_command(BenchConfig(model_path="m.gguf")) is None


def llama_bench_command_for(config: BenchConfig) -> str:
    from advisor.core.runs.results import RunResult

    run = RunResult("x", 1.0, config, FACTS, ())
    return llama_bench_command(run)

"""Figures computed by hand in the test (not read back from the code): the explanation of a
decode, the batched ceiling, run statistics, the GGUF checks a damaged file must fail, and the
edges of fits / partial / no, Apple's usable share and the OS reserve.

Each test kills one of the small bugs the test-quality issue planted (benchmarks/planted_bugs.py
re-plants them): the arithmetic is written out here so the code cannot agree with itself.
"""

from __future__ import annotations

import math
import struct

import pytest

from advisor.core.catalogue.catalogue import load_catalogue
from advisor.core.hardware.profile import Host
from advisor.core.infra.units import GiB
from advisor.core.model.facts import facts_from_shape
from advisor.core.model.gguf_file import InvalidModelError, read_gguf_header
from advisor.core.model.shapes import get_shape
from advisor.core.predict.advising.explain import explain_test
from advisor.core.predict.physics.memory import fit_on
from advisor.core.runs.config import TestSpec
from advisor.core.runs.stats import summarise_samples
from tests.conftest import write_sparse

# llama-2-7b: 32 layers, 32 KV heads of 128 -> K and V, f16: 2 x 32 x 32 x 128 x 2 bytes
LLAMA2_KV_PER_TOKEN = 2 * 32 * 32 * 128 * 2  # 524,288 bytes: large, so its share shows


@pytest.fixture(scope="module")
def llama2():
    return facts_from_shape(get_shape("llama-2-7b"), "q4_0")


def _decode(n_gen: int, batch: int, seconds: list[float]):
    spec = TestSpec("decode", 0, n_gen, 0, batch)
    return summarise_samples(spec, seconds, None)


def test_kv_per_token_by_hand(llama2):
    assert llama2.kv_bytes_per_token() == LLAMA2_KV_PER_TOKEN


def test_a_decode_reads_the_weights_and_the_growing_cache(llama2):
    # tg128 from an empty cache: the cache holds 0..127 tokens, 64 on average
    test = explain_test(_decode(128, 1, [4.0, 4.0]), llama2, 100e9, None, None)
    expected = llama2.active_weights_bytes + 64 * LLAMA2_KV_PER_TOKEN
    assert test.bytes_per_token == pytest.approx(expected, rel=1e-9)
    assert test.decode_ceiling_tps == pytest.approx(100e9 / expected, rel=1e-9)


def test_four_streams_read_the_weights_once_and_four_caches(llama2):
    # 4 streams x 128 tokens: one step reads the weights once and 4 caches of 64 tokens
    test = explain_test(_decode(128, 4, [8.0, 8.0]), llama2, 100e9, None, None)
    step = llama2.active_weights_bytes + 4 * 64 * LLAMA2_KV_PER_TOKEN
    assert test.decode_ceiling_tps == pytest.approx(4 * 100e9 / step, rel=1e-9)
    assert test.bytes_per_token == pytest.approx(step / 4, rel=1e-9)


def test_run_statistics_by_hand():
    # 128 tokens in 1 s, 2 s and 4 s: 128, 64 and 32 tokens/s
    t = summarise_samples(TestSpec("decode", 0, 128, 0, 1), [1.0, 2.0, 4.0], None)
    assert t.tokens_per_s == pytest.approx(224 / 3)  # the mean of the rates, not 384 t / 7 s
    # sample standard deviation (n - 1) of the rates: sqrt((53.33^2 + 10.67^2 + 42.67^2) / 2)
    by_hand = math.sqrt(((128 - 224 / 3) ** 2 + (64 - 224 / 3) ** 2 + (32 - 224 / 3) ** 2) / 2)
    assert by_hand == pytest.approx(48.881, abs=1e-3)
    assert t.stddev == pytest.approx(by_hand, rel=1e-9)


# --- GGUF checks a damaged file must fail -------------------------------------------------


def _tensor_info_at(data: bytes, name: str) -> int:
    """Offset of the tensor info record of `name` (just after its name) in a GGUF header."""
    key = struct.pack("<Q", len(name)) + name.encode()
    return data.index(key) + len(key)


@pytest.fixture(scope="module")
def tiny_file(make_synth):
    return make_synth("qwen2.5-0.5b", "q4_0", 2)


def _header_bytes(path):
    """The file up to its tensor data: what every check below patches (the data is not read)."""
    with path.open("rb") as f:
        return bytearray(f.read(read_gguf_header(path).data_offset))


def _second_tensor(path):
    header = read_gguf_header(path)
    ordered = sorted(header.tensors, key=lambda t: t.offset)
    return ordered[1], header


def test_an_unaligned_tensor_is_refused(tiny_file, tmp_path):
    data = _header_bytes(tiny_file)
    t, _ = _second_tensor(tiny_file)
    at = _tensor_info_at(bytes(data), t.name)
    n_dims = struct.unpack_from("<I", data, at)[0]
    where = at + 4 + 8 * n_dims + 4  # after the dims and the type: the offset
    struct.pack_into("<Q", data, where, t.offset + 1)  # 1 byte past a 32-byte boundary
    bad = write_sparse(tmp_path / "offset-plus-one.gguf", bytes(data), tiny_file.stat().st_size)
    with pytest.raises(InvalidModelError, match="unaligned"):
        read_gguf_header(bad)


def test_a_row_that_is_not_whole_blocks_is_refused(tiny_file, tmp_path):
    data = _header_bytes(tiny_file)
    header = read_gguf_header(tiny_file)
    q4 = next(t for t in header.tensors if t.ggml_type == 2 and t.shape[0] % 32 == 0)  # Q4_0
    at = _tensor_info_at(bytes(data), q4.name)
    struct.pack_into("<Q", data, at + 4, q4.shape[0] - 16)  # half a 32-value block short
    bad = write_sparse(tmp_path / "short-row.gguf", bytes(data), tiny_file.stat().st_size)
    with pytest.raises(InvalidModelError, match="block of 32"):
        read_gguf_header(bad)


# --- fits / partial / no at their edges ---------------------------------------------------


@pytest.fixture(scope="module")
def cat():
    return load_catalogue()


HOST = Host(ram_bytes=32 * GiB, ram_bandwidth_bytes_per_s=60e9)


def test_a_card_fits_up_to_its_memory_less_the_driver_reserve_and_not_beyond(cat):
    rtx = cat.by_id("nvidia-geforce-rtx-4090")
    usable = (24 - 1) * GiB  # 24 GiB less 1 GiB for the driver and compute buffers
    assert fit_on(rtx, 1, usable, 24, HOST).fits == "yes"
    over = fit_on(rtx, 1, usable * 1.05, 24, HOST)  # 5% over is not "yes"
    assert over.fits == "partial" and over.share_on_device == pytest.approx(1 / 1.05)


def test_what_spills_needs_ram_beyond_the_os_reserve(cat):
    rtx = cat.by_id("nvidia-geforce-rtx-4090")
    # room: 23 GiB on the card + (32 - 4) GiB of RAM the OS leaves = 51 GiB
    assert fit_on(rtx, 1, 50.5 * GiB, 24, HOST).fits == "partial"
    assert fit_on(rtx, 1, 52 * GiB, 24, HOST).fits == "no"  # fits 55 GiB without the reserve
    assert fit_on(rtx, 1, 60 * GiB, 24, HOST).fits == "no"


def test_apple_gpu_share_two_thirds_below_36_gb(cat):
    m1 = cat.by_id("apple-m1-7c")
    # Metal's working set on a 16 GB Mac: about 2/3 of it, 10.72 GiB; 3/4 would be 12 GiB
    assert fit_on(m1, 1, 10.6 * GiB, 16, HOST).fits == "yes"
    assert fit_on(m1, 1, 11.5 * GiB, 16, HOST).fits != "yes"


@pytest.mark.parametrize(("version", "reads"), [(2, True), (3, True), (1, False), (4, False)])
def test_gguf_versions_2_and_3_read_others_refused(tiny_file, tmp_path, version, reads):
    data = _header_bytes(tiny_file)
    struct.pack_into("<I", data, 4, version)  # right after the magic
    path = write_sparse(tmp_path / f"v{version}.gguf", bytes(data), tiny_file.stat().st_size)
    if reads:
        assert read_gguf_header(path).version == version
    else:
        with pytest.raises(InvalidModelError, match=f"version {version}, which is not supported"):
            read_gguf_header(path)


def test_overlapping_tensors_are_refused(tiny_file, tmp_path):
    data = _header_bytes(tiny_file)
    ordered = sorted(read_gguf_header(tiny_file).tensors, key=lambda t: t.offset)
    first, second = ordered[0], ordered[1]
    assert first.n_bytes > 64
    at = _tensor_info_at(bytes(data), second.name)
    n_dims = struct.unpack_from("<I", data, at)[0]
    where = at + 4 + 8 * n_dims + 4
    struct.pack_into("<Q", data, where, first.offset + 32)  # aligned, but inside the first
    path = write_sparse(tmp_path / "overlap.gguf", bytes(data), tiny_file.stat().st_size)
    with pytest.raises(InvalidModelError, match="overlaps"):
        read_gguf_header(path)


@pytest.mark.parametrize(
    ("head", "hint"),
    [(b"<!DOCTYPE html>", "text or web page"), (b'{"error": 1}', "text or web page"),
     (b"PK\x03\x04", "zip archive"), (b"ggjt\x01\x00", "old GGML file")],
)  # fmt: skip
def test_what_a_wrong_file_looks_like_is_said(tmp_path, head, hint):
    path = tmp_path / "download.gguf"
    path.write_bytes(head + b"\x00" * 64)
    with pytest.raises(InvalidModelError, match=hint):
        read_gguf_header(path)


# --- statistics: the t table against a second formula, the interval and the stopping rule ------


def _t_quantile_975(df: int) -> float:
    """Student's t 97.5% quantile by bisection on the CDF, the CDF by Simpson's rule on the pdf
    (math.lgamma): a formula independent of the table in stats.py."""

    def pdf(x: float) -> float:
        c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
        return c * (1 + x * x / df) ** (-(df + 1) / 2)

    def upper_tail_mass(t: float, n: int = 600) -> float:  # P(0 <= X <= t)
        h = t / n
        s = pdf(0) + pdf(t) + sum((4 if i % 2 else 2) * pdf(i * h) for i in range(1, n))
        return s * h / 3

    lo, hi = 0.0, 20.0
    for _ in range(40):  # 20 / 2**40: far below the table's 3 decimals
        mid = (lo + hi) / 2
        if upper_tail_mass(mid) < 0.475:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


@pytest.mark.parametrize("df", [*range(1, 41), 60, 100, 1000])
def test_the_t_table_agrees_with_the_t_distribution(df):
    from advisor.core.runs.stats import t95

    assert t95(df) == pytest.approx(_t_quantile_975(df), abs=6e-4)


def test_the_95_interval_and_the_stopping_rule_by_hand():
    from advisor.core.runs.stats import enough_repetitions, mean_interval, relative_half_width

    lo, hi = mean_interval([128.0, 64.0, 32.0])
    half = 4.303 * 48.8808 / math.sqrt(3)  # t(2) x sample sd / sqrt(n)
    assert (lo + hi) / 2 == pytest.approx(224 / 3, rel=1e-9)
    assert (hi - lo) / 2 == pytest.approx(half, rel=1e-4)
    # 100, 101, 99: sd 1, half-width 4.303 / sqrt(3) = 2.48 -> 2.48% of the mean: keep going
    assert relative_half_width([100.0, 101.0, 99.0]) == pytest.approx(0.024844, rel=1e-3)
    assert not enough_repetitions([100.0, 101.0, 99.0])
    # 100, 100.5, 99.5: half-width 1.24% -> stop
    assert enough_repetitions([100.0, 100.5, 99.5])
    assert not enough_repetitions([100.0])  # at least two
    assert enough_repetitions([100.0, 150.0, 50.0, 120.0, 80.0])  # at most five


def test_achieved_bandwidth_and_efficiency_by_hand(llama2):
    # 128 tokens in 4 s: 32 tokens/s; each reads the weights and 64 tokens of cache
    test = explain_test(_decode(128, 1, [4.0, 4.0]), llama2, 100e9, None, None)
    per_token = llama2.active_weights_bytes + 64 * LLAMA2_KV_PER_TOKEN
    assert test.achieved_bandwidth_bytes_per_s == pytest.approx(32 * per_token, rel=1e-9)
    assert test.efficiency == pytest.approx(32 / (100e9 / per_token), rel=1e-9)


def test_noisy_and_busy_start_just_past_their_thresholds():
    from dataclasses import replace

    from advisor.core.predict.advising.explain import run_notes

    base = _decode(128, 1, [4.0, 4.0])  # 32 t/s, no spread
    at_5 = replace(base, stddev=0.05 * 32, other_cpu_load=0.10)  # exactly at both thresholds
    past = replace(base, stddev=0.051 * 32, other_cpu_load=0.11)
    assert run_notes([at_5])[:2] == (False, False)
    busy, noisy, notes = run_notes([past])
    assert busy and noisy and len(notes) == 2
    assert "11%" in notes[0] and base.name in notes[1]

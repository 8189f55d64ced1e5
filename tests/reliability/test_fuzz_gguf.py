"""Hostile GGUF headers: every mutated or truncated file ends in a model or a clear
InvalidModelError, never a crash, a hang or another exception, within a time bound."""

from __future__ import annotations

import os
import struct
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor.core.model.facts import ModelFacts
from advisor.core.model.gguf_facts import facts_from_gguf
from advisor.core.model.gguf_file import InvalidModelError
from advisor.core.model.shapes import ModelShape

EXAMPLES = int(os.environ.get("ADVISOR_FUZZ_EXAMPLES", "10000"))
PER_INPUT_LIMIT_S = 1.0

# a real llama-architecture model, shrunk so its header dominates the file
TINY = ModelShape(
    id="fuzz-llama",
    display_name="Fuzz Llama",
    family="test",
    architecture="llama",
    n_layers=2,
    n_embd=64,
    n_heads=4,
    n_kv_heads=2,
    head_dim=16,
    value_head_dim=16,
    n_ff=128,
    vocab_size=300,
    context_length=2048,
    tied_embeddings=False,
)


@pytest.fixture(scope="module")
def seed_bytes(tmp_path_factory) -> bytes:
    from advisor.bench.synth import write_synthetic_gguf

    path = tmp_path_factory.mktemp("fuzz") / "seed.gguf"
    write_synthetic_gguf(path, TINY, "q8_0")
    data = path.read_bytes()
    assert isinstance(facts_from_gguf(path), ModelFacts)  # the seed itself is valid
    return data


@st.composite
def mutations(draw, data: bytes):
    """A truncation, byte flips, a hostile count/length, or an insertion into the header."""
    header_end = min(len(data), 16_384)
    kind = draw(st.sampled_from(["truncate", "flip", "count", "insert", "combo"]))
    out = bytearray(data)
    if kind in ("truncate", "combo"):
        out = out[: draw(st.integers(0, len(out)))]
    if kind in ("flip", "combo") and out:
        for _ in range(draw(st.integers(1, 8))):
            i = draw(st.integers(0, min(len(out), header_end) - 1))
            out[i] = draw(st.integers(0, 255))
    if kind == "count" and len(out) > 16:
        i = draw(st.integers(0, min(len(out), header_end) - 8))
        value = draw(
            st.sampled_from(
                [0, 1, 2**31 - 1, 2**32 - 1, 2**63 - 1, 2**64 - 1, len(data), len(data) * 10]
            )
        )
        out[i : i + 8] = struct.pack("<Q", value)
    if kind == "insert":
        i = draw(st.integers(0, min(len(out), header_end)))
        out[i:i] = draw(st.binary(min_size=1, max_size=64))
    return bytes(out)


@pytest.mark.slow
def test_fuzzed_headers_end_in_a_model_or_a_clear_error(seed_bytes, tmp_path):
    target = tmp_path / "fuzzed.gguf"
    outcomes = {"model": 0, "error": 0}
    slowest = [0.0]

    def parse(data: bytes) -> float:
        target.write_bytes(data)
        start = time.perf_counter()
        try:
            facts = facts_from_gguf(target)
        except InvalidModelError as exc:
            message = str(exc)
            assert message and "\n" not in message and len(message) < 400
            outcomes["error"] += 1
        else:
            assert isinstance(facts, ModelFacts)
            assert facts.weights_bytes <= len(data)
            outcomes["model"] += 1
        return time.perf_counter() - start

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        print_blob=False,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(mutations(seed_bytes))
    def check(data: bytes) -> None:
        elapsed = parse(data)
        if elapsed >= PER_INPUT_LIMIT_S:  # a hang repeats; a busy machine's hiccup does not
            elapsed = min(elapsed, *(parse(data) for _ in range(3)))
        slowest[0] = max(slowest[0], elapsed)
        assert elapsed < PER_INPUT_LIMIT_S

    check()
    total = outcomes["model"] + outcomes["error"]
    print(
        f"\n[fuzz] {total} mutated headers: {outcomes['error']} clear errors, "
        f"{outcomes['model']} still valid models; slowest {slowest[0] * 1000:.1f} ms"
    )
    assert total >= EXAMPLES * 0.99
    assert outcomes["error"] > total / 4  # the mutations really do break files


def test_hostile_counts_never_allocate(tmp_path):
    """Counts that claim billions of entries fail at once, not after allocating."""
    for n_tensors, n_kv in ((2**63, 0), (0, 2**63), (10**12, 10**12)):
        path = tmp_path / "claims.gguf"
        path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, n_tensors, n_kv) + b"\0" * 64)
        start = time.perf_counter()
        with pytest.raises(InvalidModelError, match="more than the file can hold"):
            facts_from_gguf(path)
        assert time.perf_counter() - start < 0.1


def test_huge_string_length_is_refused(tmp_path):
    path = tmp_path / "string.gguf"
    # one KV whose key claims 2^40 bytes
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 2**40) + b"k" * 32)
    with pytest.raises(InvalidModelError):
        facts_from_gguf(path)


def test_big_endian_and_old_versions_are_named(tmp_path):
    path = Path(tmp_path) / "be.gguf"
    path.write_bytes(b"GGUF" + struct.pack(">IQQ", 3, 0, 0))
    with pytest.raises(InvalidModelError, match="big-endian"):
        facts_from_gguf(path)
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 1, 0, 0))
    with pytest.raises(InvalidModelError, match="version 1"):
        facts_from_gguf(path)

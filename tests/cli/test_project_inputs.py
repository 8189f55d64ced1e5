"""`advisor project` with every kind of number a person (or a fuzzer) might type: finite,
positive values give finite, positive figures under the target's ceilings; anything else is
one sentence and exit 2."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import advisor_cli

BASE = ("project", "--shape", "mistral-nemo-12b", "--quant", "q4_k_m", "--json")
M4 = ("--from-device", "Apple M4 Pro 20-core GPU")
TO = ("--to", "RTX 4090", "--to", "RTX 4070")


def _one_line_exit_2(out) -> None:
    assert out.returncode == 2, (out.returncode, out.stdout[-300:], out.stderr)
    assert out.stderr.strip() and out.stderr.strip().count("\n") == 0, out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize(
    "extra",
    [
        (*M4, "--from-tg", "-5"),
        (*M4, "--from-tg", "inf"),
        (*M4, "--from-tg", "nan"),
        (*M4, "--from-tg", "1e9"),
        (*M4, "--from-tg", "0"),
        (*M4, "--from-tg", "20", "--from-pp", "-1"),
        ("--memory-gb", "-8"),
        ("--ram-bandwidth-gbs", "-1"),
        ("--ram-gb", "nan"),
        ("--concurrency", "0"),
        ("--depth", "-100"),
        ("--prompt", "-1"),
        ("--answer", "0"),
    ],
)
def test_bad_numbers_are_one_line_and_exit_2(tmp_path, extra):
    _one_line_exit_2(advisor_cli(*BASE, *TO, *extra, home=tmp_path))


def test_a_measured_speed_above_the_ceiling_is_refused_with_the_ceiling(tmp_path):
    out = advisor_cli(*BASE, *TO, *M4, "--from-tg", "45", home=tmp_path)
    _one_line_exit_2(out)
    assert "36.5 tokens/s at 273 GB/s" in out.stderr
    # up to 10% above the ceiling is a measurement (the spec sheet may be conservative)
    assert advisor_cli(*BASE, *TO, *M4, "--from-tg", "40", home=tmp_path).returncode == 0


@pytest.mark.parametrize(
    ("device", "backend"), [("Apple M4 Max 40-core GPU", "cuda"), ("RTX 4090", "metal")]
)
def test_unsupported_pairs_exit_2_naming_the_backends(tmp_path, device, backend):
    out = advisor_cli(*BASE, "--to", device, "--backend", backend, home=tmp_path)
    _one_line_exit_2(out)
    assert "it runs" in out.stderr
    out = advisor_cli(*BASE, *TO, "--from-device", device, "--from-backend", backend,
                      "--from-tg", "10", home=tmp_path)  # fmt: skip
    _one_line_exit_2(out)


def _text(value: float) -> str:
    return repr(value) if isinstance(value, float) else str(value)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    tg=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10, 100)),
    pp=st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)),
    users=st.integers(-2, 300),
    depth=st.integers(-10, 200_000),
    ram=st.one_of(st.none(), st.floats(min_value=-1, max_value=1e6)),
)
def test_project_property(tmp_path, tg, pp, users, depth, ram):
    args = [*BASE, *TO, *M4, "--from-tg", _text(tg), "--concurrency", str(users)]
    args += ["--depth", str(depth)]
    if pp is not None:
        args += ["--from-pp", _text(pp)]
    if ram is not None:
        args += ["--ram-bandwidth-gbs", _text(ram)]
    out = advisor_cli(*args, home=tmp_path)
    if out.returncode != 0:
        _one_line_exit_2(out)
        return
    # it ran: every input was finite and positive where it must be
    assert math.isfinite(float(tg)) and 0 < float(tg) <= 1.1 * 36.5
    assert users >= 1 and depth >= 0
    data = json.loads(out.stdout)
    for t in data["targets"]:
        if t["fits"] == "no" or t["beyond_context"]:
            assert t["decode_tps"] is None
            continue
        for key in ("decode_tps", "prefill_tps", "aggregate_tps", "per_user_tps", "ttft_s"):
            assert t[key] is not None and math.isfinite(t[key]) and t[key] > 0, (key, t)
        assert t["decode_tps"] <= t["decode_ceiling_tps"] * (1 + 1e-9)
        assert t["prefill_tps"] <= t["prefill_ceiling_tps"] * (1 + 1e-9)
        assert t["decode_tps_low"] <= t["decode_tps"] <= t["decode_tps_high"]

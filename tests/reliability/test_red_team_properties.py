"""Property-based hostile input (hypothesis): any text for a `bench` or `synth` option, and any
damage to a saved run file, ends in a checked value or one sentence, never another exception.
Nothing here runs llama.cpp or writes a model: the validators are the subject."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor.core.infra.errors import AdvisorError
from tests.conftest import _in_process

# CI tries the most values; the fast lane a third of them (ADVISOR_PROPERTY_SCALE overrides)
SCALE = float(os.environ.get("ADVISOR_PROPERTY_SCALE", "1" if os.environ.get("CI") else "0.34"))

NUMERIC_BENCH = ("--pp", "--tg", "--reps", "--depth", "--batch", "--threads", "--gpu-layers",
                 "--batch-size", "--ubatch-size", "--layers", "--watchdog")  # fmt: skip
texts = st.one_of(
    st.text(max_size=12),
    st.integers(-(2**70), 2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["0", "-0", "1e400", "0x10", "1,5", "1,000", " 7 ", "٣", "1_0", ""]),
)


class Started(Exception):
    """The value was accepted: the run would start (it never does here)."""


@pytest.fixture
def no_run(monkeypatch):
    from advisor.bench import controller

    def start(self):
        raise Started

    monkeypatch.setattr(controller.BenchJob, "start", start)
    monkeypatch.setattr(controller, "run_child_json", lambda *a, **k: {"available": False})


@settings(max_examples=int(150 * SCALE), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(option=st.sampled_from(NUMERIC_BENCH), value=texts)
def test_any_bench_option_value_is_checked_or_one_sentence(option, value, no_run, tmp_path):
    args = ["bench", "--synthetic", "llama-3.2-1b:q4_0", option, value]
    done = _in_process(args, tmp_path)
    if done.returncode == 1 and "Started" in done.stderr:
        return  # accepted: a checked value reached the benchmark
    assert done.returncode == 2, (option, value, done.stderr)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr


@settings(max_examples=int(80 * SCALE), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(value=texts)
def test_any_synth_layers_value_is_checked_before_writing(value, tmp_path):
    out = tmp_path / "m.gguf"
    done = _in_process(["synth", str(out), "--shape", "llama-3.2-1b", "--layers", value,
                        "--quant", "q9_9"], tmp_path)  # fmt: skip
    # an unknown quant is refused too, so nothing is ever written here: only the layer value's
    # own refusal or the quant's may speak, in one sentence
    assert done.returncode == 2, (value, done.stderr)
    assert not out.exists()
    assert len([x for x in done.stderr.splitlines() if x.strip()]) == 1


RECORDED_RUN = Path(__file__).resolve().parents[1] / "gui" / "data" / "run-qwen05b-q4_0-xeon.json"


def _valid_run() -> dict:
    return json.loads(RECORDED_RUN.read_text(encoding="utf-8"))


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8)),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


@settings(max_examples=int(150 * SCALE), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(data=st.data())
def test_a_damaged_run_file_is_a_run_or_one_sentence(data, tmp_path):
    from advisor.usecases.reference import read_run_file

    run = _valid_run()
    paths = [(k,) for k in run] + [
        ("tests", i, k) for i, t in enumerate(run.get("tests", [])) for k in t
    ]
    where = data.draw(st.sampled_from(paths))
    value = data.draw(json_values)
    target = run
    for step in where[:-1]:
        target = target[step]
    if data.draw(st.booleans()):
        target[where[-1]] = value
    else:
        del target[where[-1]]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run), encoding="utf-8")
    try:
        read_run_file(str(path))
    except AdvisorError as exc:
        assert str(exc) and "\n" not in str(exc)

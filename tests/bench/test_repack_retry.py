"""A crash inside llama.cpp's repacked CPU kernels is retried once with them off.

llama.cpp's AMX kernels segfault at the first decode on some Intel Xeons (llama.cpp issue
20824; this project's 2-core Sapphire Rapids VM is one): every benchmark there died with
SIGSEGV. The child is faked here (it crashes the way llama.cpp does, or answers with what it
was asked), so the controller's rule is checked on any machine. The AMX kernels themselves,
which a run now avoids before it starts, are the last test, where the build has them.
"""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from advisor.bench.controller import RETRY_MESSAGE, BenchJob, crashed_in_kernels
from advisor.core.runs.config import BenchConfig
from advisor.core.runs.events import Failure, Progress, RunResult

# a child that segfaults while the request asks for repacked weights, else reports what it
# was asked (as a failure event: the controller passes it on unchanged)
FAKE_CHILD = textwrap.dedent(
    """
    import json, os, signal, sys
    request = json.loads(sys.stdin.readline())
    repack = request["config"]["repack"]
    with open(sys.argv[1], "a") as log:
        log.write(json.dumps(repack) + "\\n")
    if repack and sys.argv[2] == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    print(json.dumps({"event": "error", "message": f"asked repack={repack}"}), flush=True)
    """
)


def _run(tmp_path, mode: str, config: BenchConfig) -> tuple[list, list[bool]]:
    script = tmp_path / "child.py"
    script.write_text(FAKE_CHILD, encoding="utf-8")
    log = tmp_path / "asked.log"
    job = BenchJob(config, command=[sys.executable, str(script), str(log), mode])
    events = list(job.events())
    asked = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    return events, asked


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_crash_with_repacked_weights_is_retried_without_them(tmp_path):
    events, asked = _run(tmp_path, "crash", BenchConfig(model_path="m.gguf"))
    assert asked == [True, False]  # once as asked, once with plain kernels
    assert any(isinstance(e, Progress) and e.message == RETRY_MESSAGE for e in events)
    final = events[-1]
    assert isinstance(final, Failure) and final.message == "asked repack=False"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_no_retry_without_a_crash_or_when_repack_was_already_off(tmp_path):
    events, asked = _run(tmp_path, "fine", BenchConfig(model_path="m.gguf"))
    assert asked == [True] and events[-1].message == "asked repack=True"
    off = tmp_path / "off"
    off.mkdir()
    events, asked = _run(off, "crash", BenchConfig(model_path="m.gguf", repack=False))
    assert asked == [False]  # nothing left to turn off: the crash is not retried
    assert not any(isinstance(e, Progress) and e.message == RETRY_MESSAGE for e in events)


def test_what_counts_as_a_crash_in_the_kernels():
    assert crashed_in_kernels(-11) and crashed_in_kernels(-4) and crashed_in_kernels(-7)
    assert not crashed_in_kernels(-9)  # SIGKILL: out of memory or killed, not a kernel bug
    assert not crashed_in_kernels(0) and not crashed_in_kernels(None)


def _has_amx() -> bool:
    """Asked of a child, as the app asks: the test process never loads llama.cpp itself
    (test_bench.py checks that it does not)."""
    from advisor.bench.controller import run_child_json
    from advisor.core.hardware.model import BackendInfo

    info = run_child_json("backend")
    return BackendInfo(available=True, system_info=info.get("system_info") or "").has_amx


@pytest.mark.llama
@pytest.mark.skipif(not _has_amx(), reason="needs a llama.cpp build with AMX (an Intel Xeon)")
def test_a_run_on_an_amx_build_uses_the_plain_kernels_and_says_so(tiny_model):
    """Where this llama.cpp has AMX kernels the run does not try them (they segfault at the
    first decode on some Xeons, this project's CI VM among them, and a crash would end a test
    run that measures in-process): it measures, and says which kernels it used."""
    job = BenchJob(BenchConfig(model_path=str(tiny_model), n_prompt=(16,), n_gen=(4,), reps=2))
    final = list(job.events())[-1]
    assert isinstance(final, RunResult), final
    assert final.config.repack is False
    assert any("not its AMX ones" in n and "20824" in n for n in final.notes)

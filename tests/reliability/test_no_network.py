"""Offline by design: detecting, inspecting, benchmarking and advising open no network socket.

Every Python process (the CLI and the benchmark child) runs with an audit hook that records
and refuses any network socket or name lookup; where strace exists, it also watches the
system calls of native code (llama.cpp) for AF_INET/AF_INET6 sockets."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

GUARD = Path(__file__).parent / "netguard"


def _guarded(args: list[str], tmp_path: Path, strace: bool = False) -> tuple[int, str, str]:
    log = tmp_path / "net.log"
    env = {
        **os.environ,
        "PYTHONPATH": str(GUARD),
        "ADVISOR_NETGUARD_LOG": str(log),
        "ADVISOR_HOME": str(tmp_path / "home"),
    }
    cmd = [sys.executable, "-m", "advisor", *args]
    trace = tmp_path / "strace.log"
    if strace:
        cmd = ["strace", "-f", "-qq", "-e", "trace=socket,connect", "-o", str(trace), *cmd]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    attempts = log.read_text() if log.exists() else ""
    if strace and trace.exists():
        attempts += "".join(
            line for line in trace.read_text().splitlines(keepends=True) if "AF_INET" in line
        )
    return out.returncode, attempts, out.stderr


def test_the_guard_catches_a_connection(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(GUARD), "ADVISOR_NETGUARD_LOG": str(tmp_path / "l")}
    code = "import socket; socket.create_connection(('127.0.0.1', 9), timeout=1)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, timeout=60)
    assert out.returncode != 0
    assert "socket" in (tmp_path / "l").read_text()


@pytest.mark.llama
@pytest.mark.slow
def test_detect_inspect_bench_project_open_no_socket(tiny_model, tmp_path):
    use_strace = shutil.which("strace") is not None
    for args in (
        ["detect", "--json"],
        ["inspect", str(tiny_model), "--json"],
        ["bench", str(tiny_model), "--pp", "16", "--tg", "4", "--reps", "1", "--json"],
        ["project", "--shape", "llama-3-8b", "--quant", "q4_k_m", "--json"],
        ["devices", "--json"],
        ["shapes", "--json"],
    ):
        code, attempts, stderr = _guarded(args, tmp_path, strace=use_strace)
        assert code == 0, (args, stderr)
        assert attempts == "", (args, attempts)

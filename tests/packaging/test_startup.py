"""The frozen app's start-up checks: the CPU instruction check and output routing."""

from __future__ import annotations

import io
import json
import sys

from advisor import startup


def test_missing_instructions_named():
    assert startup.missing_instructions(["AVX2", "FMA"], {"AVX", "AVX2", "FMA3"}) == []
    assert startup.missing_instructions(["AVX2", "FMA"], {"AVX", "SSE4_2"}) == ["AVX2", "FMA"]
    assert startup.missing_instructions(["NEON"], {"ASIMD"}) == []


def test_cpu_check_message_in_a_frozen_app(tmp_path, monkeypatch):
    (tmp_path / startup.BUILD_INFO).write_text(json.dumps({"requires_cpu": ["AVX2", "FMA"]}))
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    monkeypatch.setattr(startup, "cpu_features", lambda: {"SSE4_2", "AVX"})
    message = startup.cpu_check_message()
    assert message and "needs a CPU with AVX2 and FMA" in message and "lacks AVX2, FMA" in message
    monkeypatch.setattr(startup, "cpu_features", lambda: {"AVX2", "FMA3"})
    assert startup.cpu_check_message() is None


def test_native_build_names_what_this_cpu_lacks(tmp_path, monkeypatch):
    # a bundle built with pip's default GGML_NATIVE=ON uses the build machine's AVX-512
    info = {"native_build": True, "requires_cpu": ["AVX", "AVX2", "FMA3", "AVX512F"]}
    (tmp_path / startup.BUILD_INFO).write_text(json.dumps(info))
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    monkeypatch.setattr(startup, "cpu_features", lambda: {"AVX", "AVX2", "FMA3"})
    message = startup.cpu_check_message()
    assert message and "compiled for the processor" in message and "lacks AVX512F" in message
    assert "\n" not in message


def test_source_install_skips_the_check(monkeypatch):
    monkeypatch.delattr(sys, "frozen", raising=False)
    assert startup.bundle_dir() is None
    assert startup.cpu_check_message() is None
    assert startup.cpu_features()  # numpy sees this CPU's features


def test_windowed_app_output_goes_to_the_log(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "stdout", None)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    log = tmp_path / "logs" / "advisor.log"
    startup.route_output_to_log(log)
    print("hello from a windowed app")
    sys.stdout.flush()
    assert "hello from a windowed app" in log.read_text()
